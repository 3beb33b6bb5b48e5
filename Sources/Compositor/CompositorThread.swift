import Foundation

/// A compositor on a thread of its own: the thread owns SDL's window, its events and its renderer,
/// and draws the layer snapshots the UI thread commits, with their animations at the time of each
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

    /// The thread's state and loop, held by the thread itself; this object only fronts it, so an app
    /// that lets it go stops the thread (`deinit`).
    private let core: CompositorThreadCore

    /// Starts the thread, which opens the window and its renderer as `backend` says (its event wake
    /// is the thread's own) and makes a compositor with `compositor`; returns once they exist.
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

    /// Let go, the thread stops: its window and renderer close on it before this returns.
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
    /// Frames the compositor thread presented.
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
    /// True until the thread has stopped (`stop()`, or let go).
    public var isRunning: Bool { !core.read { $0.finished } }

    // MARK: The UI thread's side

    /// Hands over the tree to draw from now on (the newest commit wins), made after the UI thread
    /// had taken in the events up to `inputSequence`. Committing the same snapshot again with a newer
    /// `inputSequence` acknowledges input that changed nothing on screen.
    public func commit(_ snapshot: LayerSnapshot?, inputSequence: Int) {
        core.commit(snapshot, inputSequence: inputSequence)
    }

    /// The input read since the last call, oldest first.
    public func takeEvents() -> [TimedEvent] {
        core.write { state in
            defer { state.inbox.removeAll() }
            return state.inbox
        }
    }

    /// Runs `command` on the compositor thread, before its next frame.
    public func perform(_ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Void) {
        core.perform(command)
    }

    /// Runs `command` on the compositor thread and waits for its result, at most `timeout` seconds
    /// (nil when it did not come in time, or the thread has stopped). For what needs an answer: the
    /// clipboard's text, a screenshot.
    public func performAndWait<Result: Sendable>(timeout: Double = 2,
                                                _ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Result) -> Result? {
        core.performAndWait(timeout: timeout, command)
    }

    /// Stops the thread (its window closes) and waits for it to be gone, at most 10 s. Harmless twice.
    public func stop() {
        core.stop()
    }

    /// The longest the thread waits at rest before it looks again.
    static let restingWait = CompositorThreadCore.restingWait
}

/// The compositor thread's state and loop. The thread holds it (not the `CompositorThread` in front
/// of it), so the front can be let go, which stops the thread. Every live one is stopped before the
/// process exits, so no frame is being presented while `exit` tears the libraries down.
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
        var lateWakeups = 0
        var shown: LayerSnapshot?
    }

    private let state = Guarded(State())
    /// The compositor thread, once it runs (a `stop()` made on it cannot wait for it).
    private let runningThread = Guarded<pthread_t?>(nil)
    /// Ends the compositor thread's event wait: a commit, a command, a stop.
    private let wake = UIWakeup()
    private let started = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    let timeOrigin: UInt64
    /// Called on the compositor thread after each frame it presents (benchmarks read the offsets).
    let frameObserver: Guarded<(@Sendable (CompositorThread.PresentedFrame) -> Void)?>

    init(backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration, timeOrigin: UInt64,
         frameObserver: (@Sendable (CompositorThread.PresentedFrame) -> Void)?) throws {
        self.timeOrigin = timeOrigin
        self.frameObserver = Guarded(frameObserver)
        var backendConfiguration = backend
        backendConfiguration.eventWake = wake
        let configuration = backendConfiguration
        let compositorConfiguration = compositor
        Self.installExitHandler()
        let thread = Thread { [self] in
            runningThread.withLock { $0 = pthread_self() }
            // The window, renderer and compositor live and die inside `open`: gone (destroyed on this
            // thread) before `done` lets a waiting `stop()` return, so no other thread touches SDL's
            // video while they are torn down.
            open(configuration, compositorConfiguration)
            state.withLock { $0.finished = true }
            _ = Self.live.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
            done.signal()
        }
        thread.name = "tessera.compositor"
        thread.qualityOfService = .userInteractive
        Self.live.withLock { $0[ObjectIdentifier(self)] = WeakCore(core: self) }
        thread.start()
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
        if changed { wake.wake() }
    }

    func perform(_ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Void) {
        state.withLock { $0.commands.append(command) }
        wake.wake()
    }

    func performAndWait<Result: Sendable>(timeout: Double,
                                          _ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Result) -> Result? {
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
        wake.wake()
        guard answered.wait(timeout: .now() + max(0, timeout)) == .success else { return nil }
        return answer.withLock { $0 }
    }

    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { wake.wake() }
        guard !state.withLock({ $0.finished }) else { return }
        // Asked on the compositor thread itself (a command, a frame observer, the last reference let go
        // there): it stops when that returns to its loop; waiting here would wait for itself.
        if let running = runningThread.withLock({ $0 }), pthread_equal(running, pthread_self()) != 0 { return }
        if done.wait(timeout: .now() + 10) == .success { done.signal() }
    }

    // MARK: Every live thread, stopped before exit

    private struct WeakCore {
        weak var core: CompositorThreadCore?
    }

    private static let live = Guarded<[ObjectIdentifier: WeakCore]>([:])
    private static let exitHandler = Guarded(false)

    /// Stops every compositor thread still running when the process exits (`exit`, the end of
    /// `main`): their frames end before the libraries they draw with are torn down.
    private static func installExitHandler() {
        let install = exitHandler.withLock { installed -> Bool in
            defer { installed = true }
            return !installed
        }
        if install { atexit { CompositorThreadCore.stopAll() } }
    }

    /// Compositor threads running now.
    static var liveCount: Int { live.withLock { $0.values.filter { $0.core != nil }.count } }

    static func stopAll() {
        let cores = live.withLock { $0.values.compactMap(\.core) }
        for core in cores { core.stop() }
    }

    // MARK: The compositor thread's side

    /// The longest the thread waits at rest before it looks again.
    static let restingWait = 0.25

    /// The thread's life: makes the backend and compositor, runs the loop, then lets them go.
    private func open(_ configuration: SDLRenderBackend.Configuration, _ compositorConfiguration: Compositor.Configuration) {
        let backend: SDLRenderBackend
        do {
            backend = try SDLRenderBackend(configuration)
        } catch {
            state.withLock { $0.failure = "\(error)" }
            started.signal()
            return
        }
        let compositor = Compositor(backend: backend, scale: backend.scale, configuration: compositorConfiguration)
        // Text input a press turned on ends once the UI thread answered the events read since (below).
        backend.window.endsProvisionalTextInputAtNextRead = false
        publishInfo(backend, compositor)
        started.signal()
        run(backend: backend, compositor: compositor)
        withExtendedLifetime((compositor, backend)) {}
    }

    private func publishInfo(_ backend: SDLRenderBackend, _ compositor: Compositor) {
        let window = backend.window
        let info = CompositorThread.Info(
            windowID: window.windowID,
            rendererName: backend.rendererName, videoDriverName: window.videoDriverName,
            graphicsDeviceName: backend.graphicsDeviceName, outputPixelSize: backend.outputPixelSize,
            scale: window.scale, maximumTextureSize: backend.maximumTextureSize,
            uploadAlphaLayout: backend.uploadAlphaLayout, refreshRate: window.refreshRate,
            retainsFrames: backend.retainsFrames, windowPlacement: window.windowPlacement)
        state.withLock { $0.info = info }
    }

    /// What the loop keeps from one turn to the next.
    private struct Loop {
        var sequence = 0
        var scrolls = CompositorScrolls()
        /// The last snapshot committed and the input taken in with it, as the loop last read them.
        var snapshot: LayerSnapshot?
        var consumedInput = 0
        /// When the next frame may be drawn while something moves (the display's pace).
        var nextFrame = 0.0
        /// Input handed over whose UI-thread wake waits for the frame that answers it.
        var wakeAfterFrame = false
        /// The last input handed over while a press or a Tab had turned text input on for a field
        /// that may take focus: once the UI thread answered it without starting text input, it goes off.
        var provisionalTextInputUntil = 0
    }

    private func run(backend: SDLRenderBackend, compositor: Compositor) {
        let interval = 1 / max(24, min(240, backend.window.refreshRate ?? 60))
        var loop = Loop()
        while true {
            // Reset before looking for work: a commit, command or stop from here on ends the wait.
            wake.reset()
            let (commands, snapshot, consumed, stopping, committed) = state.withLock { state in
                defer { state.commands.removeAll() }
                return (state.commands, state.snapshot, state.consumedInput, state.stopping, state.snapshotsCommitted)
            }
            for command in commands { command(compositor, backend) }
            if stopping { break }
            if snapshot !== loop.snapshot || consumed != loop.consumedInput {
                loop.scrolls.commit(snapshot, consumedInput: consumed)
                loop.snapshot = snapshot
                loop.consumedInput = consumed
            }
            // The UI thread's commands (a field starting text input) ran above, before its answer is read.
            if backend.window.provisionalTextInput && consumed >= loop.provisionalTextInputUntil {
                backend.window.endProvisionalTextInput()
            }

            var events = compositor.pollEvents()
            if !events.isEmpty { forward(&events, at: self.now, loop: &loop, backend: backend, compositor: compositor) }

            var now = self.now
            let shown = loop.scrolls.apply(to: snapshot, at: now)
            // Something moving is drawn at the display's pace; a change at rest (input answered, a
            // draw committed) is drawn at once.
            let moving = shown?.isAnimating(at: now) == true
            if compositor.needsRender(snapshot: shown, at: now) && (!moving || now >= loop.nextFrame - 0.0005) {
                let statistics = compositor.renderIfChanged(snapshot: shown, at: now)
                state.withLock { $0.shown = shown }
                // The next frame is a frame away, drawn or not: a motion too small to show this
                // time is looked at again then, not in a loop.
                loop.nextFrame = max(loop.nextFrame + interval, now + interval / 2)
                if statistics.presented { didPresent(statistics, shown: shown, at: now, loop: loop) }
            }
            if loop.wakeAfterFrame {
                loop.wakeAfterFrame = false
                UIWakeup.shared.wake()
            }
            now = self.now
            // At rest: wait for an event, a commit or a command (or a quarter of a second, a bound
            // that no lost wake-up can turn into a frozen window). Moving: until the next frame is due.
            let stillMoving = shown?.isAnimating(at: now) == true || compositor.needsRender(snapshot: shown, at: now)
            let timeout = stillMoving ? max(0, loop.nextFrame - now) : Self.restingWait
            let committedBeforeWait = state.withLock { $0.snapshotsCommitted }
            let waitStart = self.now
            events = compositor.waitForEvents(timeout: timeout)
            if !stillMoving && events.isEmpty && committedBeforeWait != committed
                && self.now - waitStart >= Self.restingWait * 0.9 {
                // A commit came in before the wait began and the wait still ran its whole time.
                state.withLock { $0.lateWakeups += 1 }
            }
            if !events.isEmpty { forward(&events, at: self.now, loop: &loop, backend: backend, compositor: compositor) }
        }
    }

    private func didPresent(_ statistics: FrameStatistics, shown: LayerSnapshot?, at now: Double, loop: Loop) {
        state.withLock {
            $0.lastStatistics = statistics
            $0.presentCount += 1
            if $0.firstPresent == nil { $0.firstPresent = MonotonicClock.nanoseconds() }
            if $0.recentFrames.count >= CompositorThread.keptFrames { $0.recentFrames.removeFirst() }
            $0.recentFrames.append(CompositorThread.FrameTiming(time: now, milliseconds: statistics.drawMilliseconds
                                                                + statistics.presentMilliseconds))
        }
        if let observer = frameObserver.withLock({ $0 }) {
            observer(CompositorThread.PresentedFrame(time: now, snapshot: shown, statistics: statistics,
                                                     wheelOffsets: loop.scrolls.offsets(at: now),
                                                     consumedInput: loop.consumedInput))
        }
    }

    /// Hands input to the UI thread (and wakes it). The wheel moves a bound scroll at once, and a
    /// press stops a moving one on screen, where the UI thread would send them (see `ScrollBinding`).
    private func forward(_ events: inout [InputEvent], at time: Double, loop: inout Loop,
                         backend: SDLRenderBackend, compositor: Compositor) {
        var timed: [CompositorThread.TimedEvent] = []
        var windowChanged = false
        // Whether every event is answered here (a wheel that moved a scroll, a motion): then the UI
        // thread, which has nothing to show for them, is woken after the frame that shows them, not
        // while it is drawn (on a machine with few cores, it would compete with that frame).
        var answeredHere = true
        for event in events {
            // A motion to where the pointer already was changes nothing (SDL reports a warp twice).
            if case let .pointerMoved(point) = event, point == loop.scrolls.pointer { continue }
            loop.sequence += 1
            var update: ScrollUpdate?
            switch event {
            case let .pointerMoved(point), let .pointerUp(point, _):
                loop.scrolls.pointer = point
            case let .pointerDown(point, _, _):
                loop.scrolls.pointer = point
                let shown = loop.scrolls.apply(to: loop.snapshot, at: time)
                _ = loop.scrolls.press(sequence: loop.sequence, at: time, shown: shown)
            case .pointerLeftWindow:
                loop.scrolls.pointer = nil
            case let .wheel(dx, dy):
                let shown = loop.scrolls.apply(to: loop.snapshot, at: time)
                update = loop.scrolls.wheel(dx: dx, dy: dy, sequence: loop.sequence, at: time, shown: shown)
            case .resized, .contentsScaleChanged:
                windowChanged = true
            default:
                break
            }
            switch event {
            case .wheel: if update == nil { answeredHere = false }
            case .pointerMoved: break
            default: answeredHere = false
            }
            timed.append(CompositorThread.TimedEvent(event: event, time: time, sequence: loop.sequence, scrollUpdate: update))
        }
        events.removeAll()
        if backend.window.provisionalTextInput { loop.provisionalTextInputUntil = loop.sequence }
        if windowChanged { publishInfo(backend, compositor) }
        state.withLock { $0.inbox.append(contentsOf: timed) }
        if answeredHere {
            loop.wakeAfterFrame = true
        } else {
            UIWakeup.shared.wake()
        }
    }
}

/// A value behind a lock (`NSLock`, which ThreadSanitizer understands), taken only for short,
/// non-blocking accesses that call out to nothing.
/// - Thread: any
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
