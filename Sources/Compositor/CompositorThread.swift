import FoundationEssentials
import Glibc
import Dispatch

/// A window drawn by a compositor on a thread of its own: the thread owns SDL's window, its events and
/// its renderer, and draws the layer snapshots the UI thread commits, with their animations at the time of each
/// frame it presents. A UI thread that stalls (a slow handler, a long layout) stops committing, but
/// what moves by itself on screen (a fling, a bounce, the glide after the wheel, fades and slides
/// handed over as `LayerAnimation`s) goes on moving, frame after frame, and the wheel moves a list
/// at once (see `ScrollBinding`).
///
/// Why this thread and not the main one: SDL's render API is single-threaded, and its events belong
/// to the thread that made the window, so the window, its events and its renderer stay together on
/// one thread, the compositor's; Swift's main actor is the process's main thread, which stays the UI
/// thread, where nodes, layout and the app's code run. SDL allows video on a thread other than the
/// main one on Linux (X11, Wayland and the dummy driver).
///
/// Each `CompositorThread` fronts one window. Every window of the process lives on the same thread
/// (SDL's video belongs to one thread): the process's compositor thread, started with the first
/// window and ended once the last one has closed, whose one loop serves them all
/// (`CompositorThreadLoop`). A window's snapshot, input, commands, published facts, statistics and
/// scrolls are its own; closing one (`stop()`, or letting its front go) leaves the others drawing.
///
/// The UI thread talks to it through values only: `commit(_:inputSequence:)` hands over a snapshot
/// (the newest wins), `takeEvents()` collects the input it read, `perform(_:)` and
/// `performAndWait(timeout:_:)` run a command on it (text input, the clipboard, the cursor, a
/// screenshot). `Compositor(thread:)` wraps this for a `NodeHost`, so the host runs the same frames
/// with either compositor.
/// - Thread: any (every member)
public final class CompositorThread: Sendable {
    /// What the UI thread reads about the window and renderer, published by the compositor thread.
    /// - Thread: any (a value)
    public struct Info: Sendable {
        /// The window's id among the application's windows.
        public var windowID: WindowID
        public var rendererName: String
        public var videoDriverName: String
        public var graphicsDeviceName: String?
        public var outputPixelSize: (width: Int, height: Int)
        /// The window's pixels per point.
        public var scale: Double
        /// The desktop's scale the window was opened at (`SDLWindow.desktopScale`), if any.
        public var desktopScale: DesktopScale? = nil
        public var maximumTextureSize: Int
        public var uploadAlphaLayout: Bitmap.AlphaLayout
        /// The display's refresh rate, where SDL knows it.
        public var refreshRate: Double?
        public var retainsFrames: Bool
        /// Where the window is on the screen and whether it has the keyboard focus, kept up to date
        /// by the compositor thread as it reads the window's events.
        public var windowPlacement: WindowPlacement
    }

    /// An input event as the compositor thread read it: when (in the frame time of `now`), its place
    /// in the order of all events it read (from 1), and the scroll it moved itself, if any.
    /// - Thread: any (a value)
    public struct TimedEvent: Sendable {
        public let event: InputEvent
        public let time: Double
        public let sequence: Int
        /// The scroll the compositor thread moved for this event (a wheel over a bound scroll): the
        /// UI thread takes its motion over instead of applying the event itself.
        public let scrollUpdate: ScrollUpdate?
        public init(event: InputEvent, time: Double, sequence: Int, scrollUpdate: ScrollUpdate? = nil) {
            self.event = event
            self.time = time
            self.sequence = sequence
            self.scrollUpdate = scrollUpdate
        }
    }

    /// A frame the compositor thread presented.
    /// - Thread: any (a value)
    public struct PresentedFrame: Sendable {
        /// The frame's time (animations were drawn at it).
        public let time: Double
        /// What was drawn (the scrolls the thread drives in place).
        public let snapshot: LayerSnapshot?
        public let statistics: FrameStatistics
        /// The offsets of the scrolls the compositor thread drove itself in this frame (the wheel,
        /// its glide, a press that stopped a motion), by layer serial: those the UI thread had not
        /// taken in yet (see `ScrollBinding`).
        public let wheelOffsets: [Int: Double]
        /// The newest input the UI thread had taken in when it made `snapshot`.
        public let consumedInput: Int
    }

    /// One frame the compositor thread presented: when (frame time) and how long it took to draw and
    /// present (milliseconds, uploads included).
    /// - Thread: any (a value)
    public struct FrameTiming: Sendable {
        public let time: Double
        public let milliseconds: Double
    }

    /// The window's state on the thread, held by the thread's loop while the window is open; this
    /// object only fronts it, so an app that lets it go closes the window (`deinit`).
    private let core: CompositorThreadCore

    /// Opens a window on the process's compositor thread (started if none runs) as `backend` says
    /// (its event wake is the thread's own) and makes its compositor with `compositor`; returns once
    /// they exist.
    /// - Parameters:
    ///   - backend: the window and renderer to open (`eventWake` is replaced by the thread's own).
    ///   - compositor: the compositor's tunables.
    ///   - timeOrigin: the `MonotonicClock` nanoseconds of frame time 0 (the UI thread's clock's), so
    ///     animations are drawn at the times the UI thread gave them.
    ///   - frameObserver: called on the compositor thread after each presented frame.
    /// - Throws: the backend's error when the window or renderer cannot be made.
    public init(backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration = .init(),
                timeOrigin: UInt64 = MonotonicClock.nanoseconds(),
                frameObserver: (@Sendable (PresentedFrame) -> Void)? = nil) throws {
        core = try CompositorThreadCore(backend: backend, compositor: compositor, timeOrigin: timeOrigin,
                                        frameObserver: frameObserver)
    }

    /// Let go, the window closes: its window and renderer are destroyed on the thread before this
    /// returns (the thread ends if it was the last).
    deinit {
        core.stop()
    }

    /// The frame-time origin shared with the UI thread's clock, in `MonotonicClock` nanoseconds.
    public var timeOrigin: UInt64 { core.timeOrigin }

    /// The frame time now: seconds since `timeOrigin`.
    public var now: Double { core.now }

    /// The window and renderer as last published.
    public var info: Info { core.info }

    /// Sets what is called on the compositor thread after each frame it presents (nil: nothing).
    public func setFrameObserver(_ observer: (@Sendable (PresentedFrame) -> Void)?) {
        core.frameObserver.withLock { $0 = observer }
    }

    /// Statistics of the compositor thread's last presented frame.
    public var lastFrameStatistics: FrameStatistics { core.read { $0.lastStatistics } }
    /// Frames the compositor thread presented in this window.
    public var presentCount: Int { core.read { $0.presentCount } }
    /// The last frames presented (at most `keptFrames`), oldest first: the compositor's own frame
    /// times, apart from the UI thread's.
    public var recentFrames: [FrameTiming] { core.read { $0.recentFrames } }
    /// How many presented frames `recentFrames` keeps.
    public static let keptFrames = 120
    /// When it presented its first frame, in `MonotonicClock` nanoseconds; nil before.
    public var firstPresentNanoseconds: UInt64? { core.read { $0.firstPresent } }
    /// Waits at rest that ran their whole time-out although a commit had come in before they began:
    /// wake-ups lost between the thread's look at its work and its wait. Zero is the promise.
    public var lateWakeups: Int { core.read { $0.lateWakeups } }
    /// What the screen shows now: the snapshot the thread drew last (presented, or found to show
    /// nothing new), the scrolls it drives in place; nil before its first frame.
    public var shownSnapshot: LayerSnapshot? { core.read { $0.shown } }
    /// Waits until the thread has shown the UI thread's latest commit — drawn and presented it, or
    /// found it the same as what is on screen — at most `timeout` seconds; false when that did not
    /// happen in time, the window has closed (a window closing meanwhile is waited for), or the thread
    /// waits for the UI thread's answer to a change of scale (`awaitsAnswer`: at once). A snapshot
    /// still animating counts as shown once its first frame is. `Application.Window.settle` waits for
    /// it, so a settled window's screen shows its latest state. Not on the compositor thread itself
    /// (a command or a frame observer): it would wait for its own turn.
    /// - Thread: any, but the compositor thread
    public func waitUntilShown(timeout: Double = 2) -> Bool {
        Contract.require(!CompositorThreadLoop.isCurrentThreadNow,
                         "CompositorThread.waitUntilShown must not run on the compositor thread (a command, a frame observer)")
        let target = core.read { $0.snapshotsCommitted }
        let deadline = MonotonicClock.nanoseconds() &+ UInt64(max(0, min(timeout, 3600)) * 1e9)
        // Each answer comes at the start of one of the thread's turns, the turn before it having drawn.
        // A change of scale not yet answered holds the thread's frames until the UI thread's commit:
        // waiting for them here would wait for this thread's own next frame.
        while core.read({ $0.commitsShown < target && !$0.finished && $0.consumedInput >= $0.scaleChangeAwaited }) {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline, performAndWait(timeout: Double(deadline &- now) / 1e9, { _, _ in true }) != nil else {
                // Closing (stopped on the compositor thread, a command or a frame observer): the wait
                // ends when it has closed, so that `isRunning` says so.
                if core.read({ $0.stopping }) {
                    core.waitUntilClosed(timeout: Double(deadline &- min(deadline, MonotonicClock.nanoseconds())) / 1e9)
                }
                return core.read { $0.commitsShown >= target }
            }
        }
        return core.read { $0.commitsShown >= target }
    }

    /// True while the thread draws nothing until the UI thread answers input it read (a change of the
    /// window's scale, answered by a commit that took it in): a frame of the UI thread's is owed.
    /// - Thread: any
    public var awaitsAnswer: Bool { core.read { $0.consumedInput < $0.scaleChangeAwaited } }

    /// True until the window has closed (`stop()`, or let go).
    public var isRunning: Bool { !core.read { $0.finished } }

    // MARK: The UI thread's side

    /// Hands over the tree to draw from now on (the newest commit wins), made after the UI thread
    /// had taken in the events up to `inputSequence`. Committing the same snapshot again with a newer
    /// `inputSequence` acknowledges input that changed nothing on screen.
    public func commit(_ snapshot: LayerSnapshot?, inputSequence: Int) {
        core.commit(snapshot, inputSequence: inputSequence)
    }

    /// True when input the thread read waits for `takeEvents()`.
    public var hasPendingEvents: Bool { core.read { !$0.inbox.isEmpty } }

    /// The input read since the last call, oldest first.
    public func takeEvents() -> [TimedEvent] {
        core.write { state in
            defer { state.inbox.removeAll() }
            return state.inbox
        }
    }

    /// Lets go of the window's textures on the compositor thread (`Compositor.releaseTextures`); the
    /// statistics say so at once (no frame is drawn for it).
    func releaseTextures() {
        core.perform { [core] drawer, _ in
            drawer.releaseTextures()
            core.write { state in
                state.lastStatistics.liveTextures = 0
                state.lastStatistics.liveTextureBytes = 0
                state.lastStatistics.cornerPieceBytes = 0
            }
        }
    }

    /// Runs `command` on the compositor thread, before its next frame.
    public func perform(_ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Void) {
        core.perform(command)
    }

    /// Runs `command` on the compositor thread and waits for its result, at most `timeout` seconds
    /// (nil when it did not come in time, or the window has closed). For what needs an answer: the
    /// clipboard's text, a screenshot. Asked on the compositor thread itself (a command or a frame
    /// observer, of this window or another), it runs `command` at once, ahead of commands queued
    /// before it.
    public func performAndWait<Result: Sendable>(timeout: Double = 2,
                                                _ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Result) -> Result? {
        core.performAndWait(timeout: timeout, command)
    }

    /// Closes the window (its renderer goes with it; the other windows on the thread go on, and the
    /// thread ends after the last) and waits for it to be gone, at most 10 s. Harmless twice.
    public func stop() {
        core.stop()
    }

    /// The longest the thread waits at rest before it looks again.
    static let restingWait = CompositorThreadLoop.restingWait
}

/// One window's side of the compositor thread: what the UI thread and the thread exchange for it
/// (the snapshot, the input read, the commands, the published facts and statistics). The thread's
/// loop (`CompositorThreadLoop`) holds it while the window is open, so its front can be let go, which
/// closes the window. Every live one is stopped before the process exits, so no frame is being
/// presented while `exit` tears the libraries down.
/// - Thread: any (every member)
final class CompositorThreadCore: Sendable {
    struct State {
        var snapshot: LayerSnapshot?
        /// The last input sequence the UI thread had taken in when it made `snapshot`.
        var consumedInput = 0
        var inbox: [CompositorThread.TimedEvent] = []
        var commands: [@Sendable (Compositor, SDLRenderBackend) -> Void] = []
        var info: CompositorThread.Info?
        var failure: String?
        var stopping = false
        var finished = false
        var lastStatistics = FrameStatistics()
        var presentCount = 0
        var recentFrames: [CompositorThread.FrameTiming] = []
        var firstPresent: UInt64?
        var snapshotsCommitted = 0
        /// Commits (counted as `snapshotsCommitted`) the thread has drawn, or found nothing new in.
        var commitsShown = 0
        /// The input sequence of the last change of scale the thread read: it draws nothing until
        /// `consumedInput` reaches it.
        var scaleChangeAwaited = 0
        var lateWakeups = 0
        var shown: LayerSnapshot?
    }

    private let state = Guarded(State())
    /// The thread this window lives on (shared with the process's other windows).
    let loop: CompositorThreadLoop
    /// The window is open (or failed to open): `init` may return.
    private let started = DispatchSemaphore(value: 0)
    /// The window and its renderer are gone: `stop()` may return.
    private let done = DispatchSemaphore(value: 0)
    let timeOrigin: UInt64
    /// Called on the compositor thread after each frame it presents (benchmarks read the offsets).
    let frameObserver: Guarded<(@Sendable (CompositorThread.PresentedFrame) -> Void)?>
    /// The window as the loop serves it, while it is open (weak: the loop holds it). Read on the
    /// compositor thread only, by a `performAndWait` asked there. (guarded by its lock)
    private let openWindow = Guarded(OpenWindow())

    private struct OpenWindow {
        weak var window: LoopWindow?
    }

    init(backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration, timeOrigin: UInt64,
         frameObserver: (@Sendable (CompositorThread.PresentedFrame) -> Void)?) throws {
        // The thread opens windows between the turns of its loop: asked from inside one, it would wait
        // for itself.
        Contract.require(!CompositorThreadLoop.isCurrentThreadNow,
                         "CompositorThread.init must not run on the compositor thread (a command, a frame observer)")
        // The process's compositor thread (started for the first window) stays for this one.
        loop = CompositorThreadLoop.reserve()
        self.timeOrigin = timeOrigin
        self.frameObserver = Guarded(frameObserver)
        Self.installExitHandler()
        Self.live.withLock { $0[ObjectIdentifier(self)] = WeakCore(core: self) }
        var backendConfiguration = backend
        // Every window on the thread ends the thread's one wait.
        backendConfiguration.eventWake = loop.wake
        loop.open(self, backend: backendConfiguration, compositor: compositor)
        started.wait()
        if let failure = state.withLock({ $0.failure }) { throw SDLBackendError(message: failure) }
    }

    func read<Value>(_ body: (State) -> Value) -> Value { state.withLock { body($0) } }
    func write<Value>(_ body: (inout State) -> Value) -> Value { state.withLock { body(&$0) } }

    var now: Double { Double(MonotonicClock.nanoseconds() &- timeOrigin) / 1e9 }

    var info: CompositorThread.Info { state.withLock { $0.info }! }

    func commit(_ snapshot: LayerSnapshot?, inputSequence: Int) {
        let changed = state.withLock { state -> Bool in
            // Input taken in gives back the scrolls the thread drove for it: it looks again.
            let acknowledged = inputSequence > state.consumedInput
            state.consumedInput = max(state.consumedInput, inputSequence)
            guard state.snapshot !== snapshot else { return acknowledged }
            state.snapshot = snapshot
            state.snapshotsCommitted += 1
            return true
        }
        if changed { loop.wake.wake() }
    }

    func perform(_ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Void) {
        state.withLock { $0.commands.append(command) }
        loop.wake.wake()
    }

    func performAndWait<Result: Sendable>(timeout: Double,
                                          _ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Result) -> Result? {
        // Asked on the compositor thread itself (a command or a frame observer of a window): it runs
        // now, ahead of the window's commands queued before it; queued, it would wait for the turn
        // that this one holds up, every window frozen, until `timeout`.
        if loop.isCurrentThread {
            guard !state.withLock({ $0.stopping }), let window = openWindow.withLock({ $0.window }) else { return nil }
            return command(window.compositor, window.backend)
        }
        let answer = Guarded<Result?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.commands.append { compositor, backend in
                let result = command(compositor, backend)
                answer.withLock { $0 = result }
                answered.signal()
            }
            return true
        }
        guard accepted else { return nil }
        loop.wake.wake()
        guard answered.wait(timeout: .now() + max(0, timeout)) == .success else { return nil }
        return answer.withLock { $0 }
    }

    /// Waits (at most `timeout` seconds) for a window asked to close to have closed; at once on the
    /// compositor thread itself.
    func waitUntilClosed(timeout: Double) {
        guard !loop.isCurrentThread, !state.withLock({ $0.finished }) else { return }
        if done.wait(timeout: .now() + max(0, timeout)) == .success { done.signal() }
    }

    /// Closes the window: the loop lets its renderer and window go at its next turn; the other
    /// windows on the thread go on. Waits for it (at most 10 s) unless asked on the thread itself.
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { loop.wake.wake() }
        guard !state.withLock({ $0.finished }) else { return }
        // Asked on the compositor thread itself (a command, a frame observer, the last reference let go
        // there): the window closes when that returns to the loop; waiting here would wait for itself.
        if loop.isCurrentThread { return }
        if done.wait(timeout: .now() + 10) == .success { done.signal() }
    }

    // MARK: The loop's side (the compositor thread)

    /// The window opened (its facts published): `init` returns.
    func didOpen(_ window: LoopWindow) {
        openWindow.withLock { $0.window = window }
        started.signal()
    }

    /// The window could not be opened: `init` throws `failure`.
    func didFail(_ failure: String) {
        state.withLock {
            $0.failure = failure
            $0.stopping = true
            $0.finished = true
        }
        _ = Self.live.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        started.signal()
        done.signal()
    }

    /// The window and its renderer are gone (destroyed on the compositor thread).
    func didClose() {
        openWindow.withLock { $0.window = nil }
        state.withLock {
            $0.stopping = true
            $0.finished = true
        }
        _ = Self.live.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        done.signal()
    }

    // MARK: Every live window, stopped before exit

    private struct WeakCore {
        weak var core: CompositorThreadCore?
    }

    private static let live = Guarded<[ObjectIdentifier: WeakCore]>([:])
    private static let exitHandler = Guarded(false)

    /// Stops every compositor thread's window still open when the process exits (`exit`, the end of
    /// `main`): their frames end before the libraries they draw with are torn down.
    private static func installExitHandler() {
        let install = exitHandler.withLock { installed -> Bool in
            defer { installed = true }
            return !installed
        }
        if install { atexit { CompositorThreadCore.stopAll() } }
    }

    /// Windows open on a compositor thread now.
    static var liveCount: Int { live.withLock { $0.values.filter { $0.core != nil }.count } }

    /// Closes every window on a compositor thread, then waits for the thread to end.
    static func stopAll() {
        let cores = live.withLock { $0.values.compactMap(\.core) }
        for core in cores { core.stop() }
        CompositorThreadLoop.waitForEnd(timeout: 10)
    }
}
/// A value behind a lock (`NSLock`, which ThreadSanitizer understands), taken only for short,
/// non-blocking accesses that call out to nothing.
/// - Thread: any
final class Guarded<Value>: @unchecked Sendable {
    private let lock = PlatformLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
