import FoundationEssentials
import Glibc
import Dispatch

/// The process's compositor thread: one thread for every window a `CompositorThread` fronts, because
/// SDL's video (windows, their events, their renderers) belongs to one thread. It starts with the
/// first window and ends once the last one has closed; a window opened after that starts it again.
///
/// One loop serves every window. A turn runs each window's commands, takes its newest commit, reads
/// its events (each `SDLWindow` reads its own from SDL's one queue, see `SDLEventRouting`), draws and
/// presents what changed, then waits once for all of them: for an event of any window, a commit, a
/// command or a stop (they share one `UIWakeup`, reset before the turn looks for work, so nothing
/// given after the look is slept through), or until the soonest frame any window's motion needs.
/// A window at rest costs nothing in the turn: no draw, no present.
/// - Thread: any (every member); the windows' backends and compositors only on the thread itself.
final class CompositorThreadLoop: Sendable {
    /// The longest the thread waits at rest before it looks again.
    static let restingWait = 0.25

    private struct Opening {
        let core: CompositorThreadCore
        let backend: SDLRenderBackend.Configuration
        let compositor: Compositor.Configuration
    }

    private struct Shared {
        /// Windows asked for and not yet opened by the thread.
        var openings: [Opening] = []
        /// Windows promised to the thread (`reserve()`) and not yet asked for: it stays for them.
        var reservations = 0
        /// Windows the thread holds open.
        var openCount = 0
        /// The thread decided to end: no window is open, asked for or promised.
        var ending = false
    }

    /// The thread running now; nil before the first window and after the last one closed.
    /// (Taken before a loop's `shared` where both are.)
    private static let current = Guarded<CompositorThreadLoop?>(nil)

    /// Ends the thread's one wait, for every window on it: a commit, a command, a window to open or close.
    let wake = UIWakeup()
    private let shared = Guarded(Shared())
    /// The thread, once it runs (a `stop()` made on it cannot wait for it).
    private let runningThread = Guarded<pthread_t?>(nil)
    /// Signalled when the thread has ended.
    private let ended = DispatchSemaphore(value: 0)

    private init() {}

    /// The running compositor thread, started if there is none, kept for one more window: `open` it.
    static func reserve() -> CompositorThreadLoop {
        current.withLock { current in
            if let loop = current {
                let kept = loop.shared.withLock { shared -> Bool in
                    guard !shared.ending else { return false }
                    shared.reservations += 1
                    return true
                }
                if kept { return loop }
            }
            let loop = CompositorThreadLoop()
            loop.shared.withLock { $0.reservations = 1 }
            current = loop
            loop.start()
            return loop
        }
    }

    /// Asks the thread to open `core`'s window (a reservation taken with `reserve()`); `core` hears
    /// back through `didOpen` or `didFail`.
    func open(_ core: CompositorThreadCore, backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration) {
        shared.withLock {
            $0.reservations -= 1
            $0.openings.append(Opening(core: core, backend: backend, compositor: compositor))
        }
        wake.wake()
    }

    /// True when the caller runs on this compositor thread.
    var isCurrentThread: Bool {
        guard let running = runningThread.withLock({ $0 }) else { return false }
        return pthread_equal(running, pthread_self()) != 0
    }

    /// True when the caller runs on the compositor thread running now.
    static var isCurrentThreadNow: Bool { current.withLock { $0 }?.isCurrentThread ?? false }

    /// Waits (at most `timeout` seconds) for the compositor thread, if one runs, to end: at exit, once
    /// every window was closed. Returns at once on the thread itself.
    static func waitForEnd(timeout: Double) {
        guard let loop = current.withLock({ $0 }), !loop.isCurrentThread else { return }
        if loop.ended.wait(timeout: .now() + timeout) == .success { loop.ended.signal() }
    }

    /// Whether a compositor thread runs now (tests: it ends with the last window).
    static var isRunning: Bool { current.withLock { $0 != nil } }

    private func start() {
        PlatformThread.detach(name: "tessera.compositor") { [self] in
            runningThread.withLock { $0 = pthread_self() }
            run()
            ended.signal()
        }
    }

    /// Ends the thread when no window is open, asked for or promised; false when one came meanwhile.
    private func endIfIdle() -> Bool {
        Self.current.withLock { current in
            let idle = shared.withLock { shared -> Bool in
                guard shared.openCount == 0, shared.openings.isEmpty, shared.reservations == 0 else { return false }
                shared.ending = true
                return true
            }
            if idle && current === self { current = nil }
            return idle
        }
    }

    // MARK: The thread's side

    /// The thread's loop: until the last window has closed.
    private func run() {
        var windows: [LoopWindow] = []
        while true {
            // Reset before looking for work: a commit, command, stop or window asked for from here on
            // ends the wait below.
            wake.reset()
            openWindows(into: &windows)
            for window in windows { window.takeWork() }
            if windows.contains(where: \.stopping) { close(&windows) }
            if windows.isEmpty {
                if endIfIdle() { return }
                // A window is asked for or promised: wait for it.
                _ = wake.wait(timeout: Self.restingWait)
                continue
            }
            for window in windows { window.readEvents() }
            for window in windows { window.drawIfNeeded() }
            if windows.contains(where: \.wakeAfterFrame) {
                for window in windows { window.wakeAfterFrame = false }
                UIWakeup.shared.wake()
            }
            wait(windows)
        }
    }

    /// Opens the windows asked for, in order; each one's `init` returns (or throws) as it is done.
    private func openWindows(into windows: inout [LoopWindow]) {
        let openings = shared.withLock { shared -> [Opening] in
            defer { shared.openings.removeAll() }
            return shared.openings
        }
        guard !openings.isEmpty else { return }
        for opening in openings {
            do {
                let backend = try SDLRenderBackend(opening.backend)
                windows.append(LoopWindow(core: opening.core, backend: backend, compositor: opening.compositor))
            } catch {
                opening.core.didFail("\(error)")
            }
        }
        shared.withLock { $0.openCount = windows.count }
    }

    /// Lets the windows asked to close go: their renderers and windows are destroyed here, on the
    /// thread that made them, before their fronts' `stop()` returns. The others are not touched.
    private func close(_ windows: inout [LoopWindow]) {
        var closing = windows.filter(\.stopping)
        windows.removeAll(where: \.stopping)
        shared.withLock { $0.openCount = windows.count }
        let cores = closing.map(\.core)
        closing.removeAll()
        for core in cores { core.didClose() }
    }

    /// One wait for every window: until an event of any of them, a wake, or the soonest frame due.
    private func wait(_ windows: [LoopWindow]) {
        // Each window's frame times are its own (its front's `timeOrigin`); the wait's length is not.
        let moving = windows.compactMap { $0.timeUntilNextFrame() }
        // Events another window read for one of these wait for it: no sleep before they are read.
        let pending = windows.contains { $0.backend.window.hasPendingEvents }
        let timeout = pending ? 0 : moving.min() ?? Self.restingWait
        let committedBeforeWait = windows.map(\.committedNow)
        let waitStart = MonotonicClock.nanoseconds()
        // Any window's wait reads SDL's one queue; what it reads for another is put aside for that one,
        // which reads it at the next turn.
        let first = windows[0]
        var events = first.compositor.waitForEvents(timeout: timeout)
        let waited = Double(MonotonicClock.nanoseconds() &- waitStart) / 1e9
        if moving.isEmpty && !pending && events.isEmpty && waited >= Self.restingWait * 0.9 {
            for (window, before) in zip(windows, committedBeforeWait) where before != window.committedAtLook {
                // A commit came in before the wait began and the wait still ran its whole time.
                window.core.write { $0.lateWakeups += 1 }
            }
        }
        if !events.isEmpty { first.forward(&events, at: first.core.now) }
    }
}
