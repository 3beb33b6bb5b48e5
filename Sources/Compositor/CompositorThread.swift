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

    /// An input event as the compositor thread read it: when (in the frame time of `now`), and its
    /// place in the order of all events it read (from 1).
    /// - Thread: any (a value)
    public struct TimedEvent: Sendable {
        public let event: InputEvent
        public let time: Double
        public let sequence: Int
    }

    /// A frame the compositor thread presented.
    /// - Thread: any (a value)
    public struct PresentedFrame: Sendable {
        /// The frame's time (animations were drawn at it).
        public let time: Double
        /// What was drawn.
        public let snapshot: LayerSnapshot?
        public let statistics: FrameStatistics
        /// Wheel motion drawn ahead of the UI thread, by layer serial (see `ScrollBinding`).
        public let wheelOffsets: [Int: Double]
    }

    private struct State {
        var snapshot: LayerSnapshot?
        /// The last input sequence the UI thread had taken in when it made `snapshot`.
        var consumedInput = 0
        var inbox: [TimedEvent] = []
        var commands: [@Sendable (Compositor, SDLRenderBackend) -> Void] = []
        var info: Info?
        var failure: String?
        var stopping = false
        var lastStatistics = FrameStatistics()
        var presentCount = 0
        var recentFrames: [FrameTiming] = []
        var firstPresent: UInt64?
        var snapshotsCommitted = 0
    }

    private let state = Guarded(State())
    /// Ends the compositor thread's event wait: a commit, a command, a stop.
    private let wake = UIWakeup()
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// The frame-time origin shared with the UI thread's clock, in `MonotonicClock` nanoseconds.
    public let timeOrigin: UInt64
    /// Called on the compositor thread after each frame it presents (benchmarks read the offsets).
    private let frameObserver: Guarded<(@Sendable (PresentedFrame) -> Void)?>

    /// Starts the thread, which opens the window and its renderer as `backend` says (its event wake
    /// is the thread's own) and makes a compositor with `compositor`; returns once they exist.
    /// - Parameters:
    ///   - timeOrigin: the `MonotonicClock` nanoseconds of frame time 0 (the UI thread's clock's), so
    ///     animations are drawn at the times the UI thread gave them.
    ///   - frameObserver: called on the compositor thread after each presented frame.
    /// - Throws: the backend's error when the window or renderer cannot be made.
    public init(backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration = .init(),
                timeOrigin: UInt64 = MonotonicClock.nanoseconds(),
                frameObserver: (@Sendable (PresentedFrame) -> Void)? = nil) throws {
        self.timeOrigin = timeOrigin
        self.frameObserver = Guarded(frameObserver)
        var backendConfiguration = backend
        backendConfiguration.eventWake = wake
        let configuration = backendConfiguration
        let compositorConfiguration = compositor
        let thread = Thread { [self] in
            // The window, renderer and compositor live and die inside `open`: gone (destroyed on this
            // thread) before `finished` lets a waiting `stop()` return, so no other thread touches
            // SDL's video while they are torn down.
            open(configuration, compositorConfiguration)
            finished.signal()
        }
        thread.name = "tessera.compositor"
        thread.qualityOfService = .userInteractive
        thread.start()
        started.wait()
        if let failure = state.withLock({ $0.failure }) { throw SDLBackendError(message: failure) }
    }

    deinit {
        stop()
    }

    /// The frame time now: seconds since `timeOrigin`.
    public var now: Double { Double(MonotonicClock.nanoseconds() &- timeOrigin) / 1e9 }

    /// The window and renderer as last published.
    public var info: Info {
        state.withLock { $0.info }!
    }

    /// Sets what is called on the compositor thread after each frame it presents (nil: nothing).
    public func setFrameObserver(_ observer: (@Sendable (PresentedFrame) -> Void)?) {
        frameObserver.withLock { $0 = observer }
    }

    /// Statistics of the compositor thread's last presented frame.
    public var lastFrameStatistics: FrameStatistics { state.withLock { $0.lastStatistics } }
    /// Frames the compositor thread presented.
    public var presentCount: Int { state.withLock { $0.presentCount } }

    /// One frame the compositor thread presented: when (frame time) and how long it took to draw and
    /// present (milliseconds, uploads included).
    /// - Thread: any (a value)
    public struct FrameTiming: Sendable {
        public let time: Double
        public let milliseconds: Double
    }

    /// The last frames presented (at most `keptFrames`), oldest first: the compositor's own frame
    /// times, apart from the UI thread's.
    public var recentFrames: [FrameTiming] { state.withLock { $0.recentFrames } }
    /// How many presented frames `recentFrames` keeps.
    public static let keptFrames = 120
    /// When it presented its first frame, in `MonotonicClock` nanoseconds; nil before.
    public var firstPresentNanoseconds: UInt64? { state.withLock { $0.firstPresent } }

    // MARK: The UI thread's side

    /// Hands over the tree to draw from now on (the newest commit wins), made after the UI thread
    /// had taken in the events up to `inputSequence`.
    public func commit(_ snapshot: LayerSnapshot?, inputSequence: Int) {
        let changed = state.withLock { state -> Bool in
            state.consumedInput = max(state.consumedInput, inputSequence)
            guard state.snapshot !== snapshot else { return false }
            state.snapshot = snapshot
            state.snapshotsCommitted += 1
            return true
        }
        if changed { wake.wake() }
    }

    /// The input read since the last call, oldest first.
    public func takeEvents() -> [TimedEvent] {
        state.withLock { state in
            defer { state.inbox.removeAll() }
            return state.inbox
        }
    }

    /// Runs `command` on the compositor thread, before its next frame.
    public func perform(_ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Void) {
        state.withLock { $0.commands.append(command) }
        wake.wake()
    }

    /// Runs `command` on the compositor thread and waits for its result, at most `timeout` seconds
    /// (nil when it did not come in time, or the thread has stopped). For what needs an answer: the
    /// clipboard's text, a screenshot.
    public func performAndWait<Result: Sendable>(timeout: Double = 2,
                                                _ command: @escaping @Sendable (Compositor, SDLRenderBackend) -> Result) -> Result? {
        let answer = Guarded<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.commands.append { compositor, backend in
                let result = command(compositor, backend)
                answer.withLock { $0 = result }
                done.signal()
            }
            return true
        }
        guard accepted else { return nil }
        wake.wake()
        guard done.wait(timeout: .now() + max(0, timeout)) == .success else { return nil }
        return answer.withLock { $0 }
    }

    /// Stops the thread (its window closes) and waits for it to be gone, at most 10 s. Harmless twice.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake.wake()
        _ = finished.wait(timeout: .now() + 10)
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
        publishInfo(backend, compositor)
        started.signal()
        run(backend: backend, compositor: compositor)
        withExtendedLifetime((compositor, backend)) {}
    }

    private func publishInfo(_ backend: SDLRenderBackend, _ compositor: Compositor) {
        let info = Info(rendererName: backend.rendererName, videoDriverName: backend.videoDriverName,
                        graphicsDeviceName: backend.graphicsDeviceName, outputPixelSize: backend.outputPixelSize,
                        scale: backend.scale, maximumTextureSize: backend.maximumTextureSize,
                        uploadAlphaLayout: backend.uploadAlphaLayout, refreshRate: backend.refreshRate,
                        retainsFrames: backend.retainsFrames, windowPlacement: backend.windowPlacement)
        state.withLock { $0.info = info }
    }

    private func run(backend: SDLRenderBackend, compositor: Compositor) {
        let interval = 1 / max(24, min(240, backend.refreshRate ?? 60))
        var nextFrame = 0.0
        var sequence = 0
        var scrolls = WheelScrolls()
        while true {
            wake.reset()
            let (commands, snapshot, consumed, stopping) = state.withLock { state in
                defer { state.commands.removeAll() }
                return (state.commands, state.snapshot, state.consumedInput, state.stopping)
            }
            for command in commands { command(compositor, backend) }
            if stopping { break }
            scrolls.commit(snapshot, consumedInput: consumed)

            var events = compositor.pollEvents()
            var now = self.now
            if !events.isEmpty { forward(&events, at: now, sequence: &sequence, scrolls: &scrolls, backend: backend, compositor: compositor) }

            let shown = scrolls.apply(to: snapshot)
            if compositor.needsRender(snapshot: shown, at: now) && now >= nextFrame - 0.0005 {
                let statistics = compositor.renderIfChanged(snapshot: shown, at: now)
                // The next frame is a frame away, drawn or not: a motion too small to show this
                // time is looked at again then, not in a loop.
                nextFrame = max(nextFrame + interval, now + interval / 2)
                if statistics.presented {
                    state.withLock {
                        $0.lastStatistics = statistics
                        $0.presentCount += 1
                        if $0.firstPresent == nil { $0.firstPresent = MonotonicClock.nanoseconds() }
                        if $0.recentFrames.count >= Self.keptFrames { $0.recentFrames.removeFirst() }
                        $0.recentFrames.append(FrameTiming(time: now, milliseconds: statistics.drawMilliseconds
                                                           + statistics.presentMilliseconds))
                    }
                    if let observer = frameObserver.withLock({ $0 }) {
                        observer(PresentedFrame(time: now, snapshot: shown, statistics: statistics,
                                                wheelOffsets: scrolls.offsets))
                    }
                }
            }
            now = self.now
            // At rest: wait for an event, a commit or a command (or a quarter of a second, a bound
            // that no lost wake-up can turn into a frozen window). Moving: until the next frame is due.
            let moving = shown?.isAnimating(at: now) == true || compositor.needsRender(snapshot: shown, at: now)
            let timeout = moving ? max(0, nextFrame - now) : Self.restingWait
            events = compositor.waitForEvents(timeout: timeout)
            if !events.isEmpty {
                forward(&events, at: self.now, sequence: &sequence, scrolls: &scrolls, backend: backend, compositor: compositor)
            }
        }
    }

    /// Hands input to the UI thread (and wakes it); the wheel also moves a bound scroll at once.
    private func forward(_ events: inout [InputEvent], at time: Double, sequence: inout Int,
                         scrolls: inout WheelScrolls, backend: SDLRenderBackend, compositor: Compositor) {
        var timed: [TimedEvent] = []
        var windowChanged = false
        for event in events {
            // A motion to where the pointer already was changes nothing (SDL reports a warp twice).
            if case let .pointerMoved(point) = event, point == scrolls.pointer { continue }
            sequence += 1
            switch event {
            case let .pointerMoved(point), let .pointerDown(point, _, _), let .pointerUp(point, _):
                scrolls.pointer = point
            case .pointerLeftWindow:
                scrolls.pointer = nil
            case let .wheel(dx, dy):
                let snapshot = state.withLock { $0.snapshot }
                scrolls.wheel(dx: dx, dy: dy, sequence: sequence, in: snapshot, at: time)
            case .resized, .contentsScaleChanged:
                windowChanged = true
            default:
                break
            }
            timed.append(TimedEvent(event: event, time: time, sequence: sequence))
        }
        events.removeAll()
        if windowChanged { publishInfo(backend, compositor) }
        state.withLock { $0.inbox.append(contentsOf: timed) }
        UIWakeup.shared.wake()
    }
}

/// A scroll the compositor can move by the wheel without the UI thread: a list's content layer says
/// how (`Layer.scrollBinding`), and the compositor thread moves its y at the wheel's event, ahead of
/// the UI thread, which takes the same event in its next frame and moves the list the same distance
/// from the same place (its motion run to the event's time). Until the UI thread's snapshot says it
/// has taken the event in, the compositor draws the layer where the wheel put it.
/// - Thread: any (a value)
public struct ScrollBinding: Sendable, Hashable {
    /// The scrolling layer's window rectangle at the time of the snapshot (its viewport, in points):
    /// the wheel moves it while the pointer is inside.
    public var viewport: Rect
    /// The content offset where the layer's y is 0; the layer's y is `-(offset - origin)`.
    public var origin: Double
    /// The smallest and largest offsets the wheel may reach.
    public var lower: Double
    public var upper: Double
    /// Points per wheel step.
    public var wheelStep: Double
    /// The layer scrolls along x (a horizontal list): the wheel's horizontal motion moves it, or its
    /// vertical motion where there is none, as the list itself takes them; its x is `-(offset - origin)`.
    public var isHorizontal: Bool
    public init(viewport: Rect, origin: Double = 0, lower: Double, upper: Double, wheelStep: Double,
                isHorizontal: Bool = false) {
        self.isHorizontal = isHorizontal
        self.viewport = viewport
        self.origin = origin
        self.lower = lower
        self.upper = max(lower, upper)
        self.wheelStep = wheelStep
    }
}

/// The compositor thread's wheel motion ahead of the UI thread, per bound scroll layer.
struct WheelScrolls {
    struct Ahead {
        /// The offset the wheel moved the layer to.
        var offset: Double
        /// The sequence of the last wheel event in it.
        var sequence: Int
    }

    var pointer: Point?
    private var ahead: [Int: Ahead] = [:] {
        didSet { aheadGeneration += 1 }
    }
    private var aheadGeneration = 0
    /// The last snapshot `apply` was given, the motion it applied and its result: the same inputs
    /// give the same object, so a compositor at rest sees nothing new to draw.
    private var applied: (input: LayerSnapshot?, generation: Int, output: LayerSnapshot?)?

    /// The offsets drawn ahead, by layer serial.
    var offsets: [Int: Double] { ahead.mapValues(\.offset) }

    /// Forgets motion the UI thread has taken in.
    mutating func commit(_ snapshot: LayerSnapshot?, consumedInput: Int) {
        guard !ahead.isEmpty, ahead.values.contains(where: { $0.sequence <= consumedInput }) else { return }
        ahead = ahead.filter { $0.value.sequence > consumedInput }
    }

    /// Moves the bound scroll under the pointer by one wheel event.
    mutating func wheel(dx: Double, dy: Double, sequence: Int, in snapshot: LayerSnapshot?, at time: Double) {
        guard let pointer, let snapshot,
              let (layer, binding) = Self.boundLayer(at: pointer, in: snapshot) else { return }
        // Along the binding's axis, as the list takes the wheel: a horizontal scroll's own motion is
        // dx (positive to the right, towards the end), else dy.
        let amount = binding.isHorizontal && dx.isFinite && dx != 0 ? -dx : dy
        guard amount.isFinite, amount != 0 else { return }
        let presented = layer.presentedFrame(at: time)
        let current = ahead[layer.id]?.offset
            ?? binding.origin - (binding.isHorizontal ? presented.minX : presented.minY)
        // As the list does: from where it is, held within its bounds, one step per notch.
        func clamped(_ value: Double) -> Double { min(max(value, binding.lower), binding.upper) }
        ahead[layer.id] = Ahead(offset: clamped(clamped(current) - amount * binding.wheelStep), sequence: sequence)
    }

    /// `snapshot` with the layers the wheel moved ahead placed where it put them.
    mutating func apply(to snapshot: LayerSnapshot?) -> LayerSnapshot? {
        guard let snapshot, !ahead.isEmpty else { return snapshot }
        if let applied, applied.input === snapshot, applied.generation == aheadGeneration { return applied.output }
        let output = Self.replacing(snapshot, ahead)
        applied = (snapshot, aheadGeneration, output)
        return output
    }

    private static func replacing(_ layer: LayerSnapshot, _ ahead: [Int: Ahead]) -> LayerSnapshot {
        if let moved = ahead[layer.id], let binding = layer.scrollBinding {
            return layer.moved(to: binding.origin - moved.offset, horizontally: binding.isHorizontal)
        }
        guard layer.hasScrollBinding else { return layer }
        let sublayers = layer.sublayers.map { replacing($0, ahead) }
        if zip(sublayers, layer.sublayers).allSatisfy({ $0 === $1 }) { return layer }
        return layer.with(sublayers: sublayers)
    }

    /// The topmost layer with a binding whose viewport holds `point`.
    static func boundLayer(at point: Point, in snapshot: LayerSnapshot) -> (LayerSnapshot, ScrollBinding)? {
        guard snapshot.hasScrollBinding else { return nil }
        for sublayer in snapshot.sublayers.reversed() where !sublayer.isHidden {
            if let found = boundLayer(at: point, in: sublayer) { return found }
        }
        if let binding = snapshot.scrollBinding, binding.viewport.contains(point) { return (snapshot, binding) }
        return nil
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
