import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization

/// The runtime's own main queue: work posted from any thread, run on the UI thread (as the main actor)
/// when the frame loop drains it, once a frame, at a fixed point of the frame (before commits).
/// - Thread: `enqueue` from any thread; `drain` on the UI thread.
public final class MainQueue: Sendable {
    private let pending = Locked<[@MainActor @Sendable () -> Void]>([])

    public init() {}

    /// Posts `work` to run on the UI thread at the next drain.
    public func enqueue(_ work: @escaping @MainActor @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        // An app at rest is waiting for events: this is one.
        UIWakeup.shared.wake()
    }

    /// Number of items waiting.
    public var count: Int { pending.withLock { $0.count } }

    /// Runs everything posted so far, in order. Work posted while draining runs at the next drain, so a
    /// drain always ends. Returns how many items ran.
    @MainActor @discardableResult
    public func drain() -> Int {
        UIThread.precondition("MainQueue.drain")
        let work = pending.withLock { queue -> [@MainActor @Sendable () -> Void] in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
        return work.count
    }

    /// Runs `work` at once when the caller is the UI thread, else posts it to the next drain.
    public func performOrEnqueue(_ work: @escaping @MainActor @Sendable () -> Void) {
        if UIThread.isCurrent {
            MainActor.assumeIsolated { work() }
        } else {
            enqueue(work)
        }
    }
}
