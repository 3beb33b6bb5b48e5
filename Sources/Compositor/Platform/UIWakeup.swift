import FoundationEssentials
import Glibc
import Dispatch

/// Ends the UI thread's wait for events from any thread: work was posted for it (a main-queue item, a
/// finished draw, a request for a draw or a layout).
///
/// An app at rest blocks in its event wait (`Compositor.waitForEvents(timeout:)`) instead of running
/// frames; whatever gives the UI thread something to do calls `wake()`. Wakes coalesce: between two
/// `reset()`s only the first one reaches the platform (an SDL event pushed, or the headless wait
/// signalled), so a burst of results costs one wake-up.
///
/// The order that makes it safe: the UI thread calls `reset()`, then looks for work, then waits; a
/// thread gives it work, then calls `wake()`. Work given after the look wakes the wait; work given
/// before it is seen by the look.
/// - Thread: any
public final class UIWakeup: @unchecked Sendable {
    /// The process's one wake-up: one UI thread, one event wait.
    public static let shared = UIWakeup()

    private let condition = PlatformCondition()
    /// A wake arrived since the last `reset()`. (guarded by condition)
    private var woken = false
    /// What reaches the platform's event wait (an SDL backend pushes an event). (guarded by condition)
    private var platformWake: (@Sendable () -> Void)?
    /// Wakes since the process started. (guarded by condition)
    private var count = 0

    /// A wake of its own, for another thread's event wait (a `CompositorThread`'s).
    public init() {}

    /// Wakes the UI thread's wait (once until the next `reset()`).
    public func wake() {
        condition.lock()
        let first = !woken
        woken = true
        count += 1
        let platform = platformWake
        condition.broadcast()
        condition.unlock()
        if first { platform?() }
    }

    /// Called by the UI thread before it looks for work: wakes from here on end its next wait.
    public func reset() {
        condition.lock()
        woken = false
        condition.unlock()
    }

    /// True when a wake arrived since the last `reset()`. An event wait checks it before it blocks: the
    /// platform event a wake pushed may already have been drained by a poll after the reset (the
    /// thread looked for input before waiting), and that wake must still end the wait.
    public var isWoken: Bool {
        condition.lock()
        defer { condition.unlock() }
        return woken
    }

    /// Waits until a wake (since the last `reset()`) or `timeout` seconds (nil: no limit); true when
    /// woken. For a platform without events of its own to wait on (SDL's dummy video driver).
    public func wait(timeout: Double?) -> Bool {
        let deadline = timeout.map { PlatformCondition.Deadline(after: max(0, $0)) }
        condition.lock()
        defer { condition.unlock() }
        while !woken {
            if let deadline {
                if !condition.wait(until: deadline) { return woken }
            } else {
                condition.wait()
            }
        }
        return true
    }

    /// Sets what a wake does to the platform's event wait (an SDL backend pushes an event of its own).
    public func setPlatformWake(_ wake: (@Sendable () -> Void)?) {
        condition.lock()
        platformWake = wake
        condition.unlock()
    }

    /// Wakes since the process started.
    public var wakeCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }
}
