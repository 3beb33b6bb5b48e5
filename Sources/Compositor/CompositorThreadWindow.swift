import FoundationEssentials
import Glibc
import Dispatch

/// One window as the compositor thread's loop serves it: its renderer and compositor, and what the
/// loop keeps for it from one turn to the next (the scrolls it drives, its pace, the input it read).
/// Made, used and let go on the compositor thread only; its `core` is what it shares with the UI thread.
/// - Thread: the compositor thread (every member)
final class LoopWindow {
    let core: CompositorThreadCore
    let backend: SDLRenderBackend
    let compositor: Compositor
    /// The time between two frames of something moving: the display's refresh.
    private let interval: Double
    private var sequence = 0
    private var scrolls = CompositorScrolls()
    /// The last snapshot committed and the input taken in with it, as the loop last read them.
    private var snapshot: LayerSnapshot?
    private var consumedInput = 0
    /// What this turn shows: the snapshot with the scrolls the thread drives applied.
    private var shown: LayerSnapshot?
    /// When the next frame may be drawn while something moves (the display's pace).
    private var nextFrame = 0.0
    /// Input handed over whose UI-thread wake waits for the frame that answers it.
    var wakeAfterFrame = false
    /// The last input handed over while a press or a key had turned text input on for a field
    /// that may take focus: once the UI thread answered it without starting text input, it goes off.
    private var provisionalTextInputUntil = 0
    /// The input sequence of the last change of the window's scale handed over, until the UI thread
    /// has answered it (its snapshot laid out and drawn at the new scale): no frame is drawn meanwhile.
    private var scaleChangeUnanswered: Int?
    /// The UI thread asked to close the window (read at the turn's look for work).
    private(set) var stopping = false
    /// Snapshots committed as of the turn's look for work.
    private(set) var committedAtLook = 0

    init(core: CompositorThreadCore, backend: SDLRenderBackend, compositor configuration: Compositor.Configuration) {
        self.core = core
        self.backend = backend
        compositor = Compositor(backend: backend, scale: backend.scale, configuration: configuration)
        interval = 1 / max(24, min(240, backend.window.refreshRate ?? 60))
        // Text input a press turned on ends once the UI thread answered the events read since.
        backend.window.endsProvisionalTextInputAtNextRead = false
        publishInfo()
        core.didOpen(self)
    }

    /// Snapshots committed now.
    var committedNow: Int { core.read { $0.snapshotsCommitted } }

    /// The window's facts for the UI thread, published again when they change (a resize, a new scale).
    private func publishInfo() {
        let window = backend.window
        var info = CompositorThread.Info(
            windowID: window.windowID,
            rendererName: backend.rendererName, videoDriverName: window.videoDriverName,
            graphicsDeviceName: backend.graphicsDeviceName, outputPixelSize: backend.outputPixelSize,
            scale: window.scale, maximumTextureSize: backend.maximumTextureSize,
            uploadAlphaLayout: backend.uploadAlphaLayout, refreshRate: window.refreshRate,
            retainsFrames: backend.retainsFrames, windowPlacement: window.windowPlacement)
        info.desktopScale = window.desktopScale
        core.write { $0.info = info }
    }

    /// Runs the UI thread's commands and takes its newest commit; notes a stop.
    func takeWork() {
        let (commands, snapshot, consumed, stopping, committed) = core.write { state in
            defer { state.commands.removeAll() }
            return (state.commands, state.snapshot, state.consumedInput, state.stopping, state.snapshotsCommitted)
        }
        for command in commands { command(compositor, backend) }
        committedAtLook = committed
        self.stopping = stopping
        if stopping { return }
        if snapshot !== self.snapshot || consumed != consumedInput {
            scrolls.commit(snapshot, consumedInput: consumed)
            self.snapshot = snapshot
            consumedInput = consumed
        }
        // The UI thread's commands (a field starting text input) ran above, before its answer is read.
        if backend.window.provisionalTextInput && consumed >= provisionalTextInputUntil {
            backend.window.endProvisionalTextInput()
        }
    }

    /// Reads the window's events and hands them over.
    func readEvents() {
        var events = compositor.pollEvents()
        if !events.isEmpty { forward(&events, at: core.now) }
    }

    /// Draws and presents the window's frame when it changed (at the display's pace while something
    /// moves; at once for a change at rest: input answered, a draw committed).
    func drawIfNeeded() {
        // The window's scale changed (it moved to an output of another scale): its drawable is at the
        // new scale, the snapshot still at the old one, which drawn now would fill a quarter of the
        // drawable (or four times it, cut). Nothing is drawn until the UI thread answered the change:
        // the window system shows the last frame meanwhile, scaled.
        if awaitsScaleAnswer { return }
        let now = core.now
        shown = scrolls.apply(to: snapshot, at: now)
        let moving = shown?.isAnimating(at: now) == true
        let needed = compositor.needsRender(snapshot: shown, at: now)
        guard needed && (!moving || now >= nextFrame - 0.0005) else {
            // Nothing new to draw: what was committed by the look is on screen.
            if !needed { core.write { [committedAtLook] in $0.commitsShown = max($0.commitsShown, committedAtLook) } }
            return
        }
        let statistics = compositor.renderIfChanged(snapshot: shown, at: now)
        let drawn = shown
        core.write { [committedAtLook] in
            $0.shown = drawn
            $0.commitsShown = max($0.commitsShown, committedAtLook)
        }
        // The next frame is a frame away, drawn or not: a motion too small to show this time is
        // looked at again then, not in a loop.
        nextFrame = max(nextFrame + interval, now + interval / 2)
        if statistics.presented { didPresent(statistics, at: now) }
    }

    /// True while a change of the window's scale waits for the UI thread's answer (a commit that
    /// consumed the input it came with); false once it came.
    private var awaitsScaleAnswer: Bool {
        guard let sequence = scaleChangeUnanswered else { return false }
        if consumedInput < sequence { return true }
        scaleChangeUnanswered = nil
        return false
    }

    /// Seconds until this window's next frame is due while something in it moves; nil at rest.
    func timeUntilNextFrame() -> Double? {
        // Out of sight (minimized), nothing moves on screen: at rest until a commit or a command.
        if compositor.outOfSight { return nil }
        // A new scale not yet answered: at rest until the UI thread's commit.
        if awaitsScaleAnswer { return nil }
        let now = core.now
        let stillMoving = shown?.isAnimating(at: now) == true || compositor.needsRender(snapshot: shown, at: now)
        return stillMoving ? max(0, nextFrame - now) : nil
    }

    private func didPresent(_ statistics: FrameStatistics, at now: Double) {
        core.write {
            $0.lastStatistics = statistics
            $0.presentCount += 1
            if $0.firstPresent == nil { $0.firstPresent = MonotonicClock.nanoseconds() }
            if $0.recentFrames.count >= CompositorThread.keptFrames { $0.recentFrames.removeFirst() }
            $0.recentFrames.append(CompositorThread.FrameTiming(time: now, milliseconds: statistics.drawMilliseconds
                                                                + statistics.presentMilliseconds))
        }
        if let observer = core.frameObserver.withLock({ $0 }) {
            observer(CompositorThread.PresentedFrame(time: now, snapshot: shown, statistics: statistics,
                                                     wheelOffsets: scrolls.offsets(at: now),
                                                     consumedInput: consumedInput))
        }
    }

    /// Hands input to the UI thread (and wakes it). The wheel moves a bound scroll at once, and a
    /// press stops a moving one on screen, where the UI thread would send them (see `ScrollBinding`).
    func forward(_ events: inout [InputEvent], at time: Double) {
        var timed: [CompositorThread.TimedEvent] = []
        var windowChanged = false
        // Whether every event is answered here (a wheel that moved a scroll, a motion): then the UI
        // thread, which has nothing to show for them, is woken after the frame that shows them, not
        // while it is drawn (on a machine with few cores, it would compete with that frame).
        var answeredHere = true
        for event in events {
            // A motion to where the pointer already was changes nothing (SDL reports a warp twice).
            if case let .pointerMoved(point) = event, point == scrolls.pointer { continue }
            sequence += 1
            var update: ScrollUpdate?
            switch event {
            case let .pointerMoved(point), let .pointerUp(point, _):
                scrolls.pointer = point
            case let .pointerDown(point, _, _):
                scrolls.pointer = point
                let shown = scrolls.apply(to: snapshot, at: time)
                _ = scrolls.press(sequence: sequence, at: time, shown: shown)
            case .pointerLeftWindow:
                scrolls.pointer = nil
            case let .wheel(dx, dy):
                let shown = scrolls.apply(to: snapshot, at: time)
                update = scrolls.wheel(dx: dx, dy: dy, sequence: sequence, at: time, shown: shown)
            case .contentsScaleChanged:
                windowChanged = true
                scaleChangeUnanswered = sequence
            case .resized:
                windowChanged = true
            default:
                break
            }
            switch event {
            case .wheel: if update == nil { answeredHere = false }
            case .pointerMoved: break
            default: answeredHere = false
            }
            timed.append(CompositorThread.TimedEvent(event: event, time: time, sequence: sequence, scrollUpdate: update))
        }
        events.removeAll()
        if backend.window.provisionalTextInput { provisionalTextInputUntil = sequence }
        if windowChanged { publishInfo() }
        core.write { [scaleChangeUnanswered] in
            $0.inbox.append(contentsOf: timed)
            if let sequence = scaleChangeUnanswered { $0.scaleChangeAwaited = max($0.scaleChangeAwaited, sequence) }
        }
        if answeredHere {
            wakeAfterFrame = true
        } else {
            UIWakeup.shared.wake()
        }
    }
}
