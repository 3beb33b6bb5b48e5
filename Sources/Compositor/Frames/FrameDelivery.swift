/// How a compositor's frames reach the screen and its events reach the app: the one part of the frame
/// path that differs between a compositor that draws its frames itself (`InlineDelivery`) and one
/// that hands them to a `CompositorThread` (`ThreadedDelivery`). `Compositor` runs the same path for
/// both (`render`, `renderIfChanged`, `capture`, `pollEvents`, `waitForEvents`) and asks its delivery
/// for these steps.
/// - Thread: the compositor's (its `owner`)
protocol FrameDelivery: AnyObject {
    /// The window the frames show in.
    var window: PlatformWindow? { get }
    /// The compositor thread that draws the frames, whose published facts (statistics, output size,
    /// upload layout) stand for the renderer's; nil when the compositor draws them itself.
    var drawnElsewhere: CompositorThread? { get }
    /// The input read since the last call, after waiting up to `timeout` seconds when `waiting` (nil:
    /// no limit) and there was none; the compositor's `lastEventTimes` and `lastScrollUpdates` follow it.
    func events(_ compositor: Compositor, waiting: Double??) -> [InputEvent]
    /// True when `root` at `time` may look different from what was last drawn or handed over.
    @MainActor func needsFrame(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bool
    /// Shows `root` at `time`: drawn (`ifChanged`: only what changed) or handed over.
    @MainActor func frame(_ compositor: Compositor, _ root: Layer?, at time: Double?, ifChanged: Bool) -> FrameStatistics
    /// A frame that changed nothing still acknowledges the input taken in before it.
    func acknowledgeInput(_ compositor: Compositor)
    /// Draws `root` at `time` and reads the pixels back.
    @MainActor func capture(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bitmap?
    /// The compositor's scale changed.
    func scaleChanged(_ compositor: Compositor)
    /// The compositor's configuration changed.
    func configurationChanged(_ compositor: Compositor)
    /// The renderer lost its textures (or a test says so).
    func rendererReset(_ compositor: Compositor)
    /// The window is out of sight: its textures go (`Compositor.releaseTextures`).
    func releaseTextures(_ compositor: Compositor)
    /// The next frame is drawn whole, though nothing changed (`Compositor.setNeedsWholeFrame`).
    func requestWholeFrame(_ compositor: Compositor)
}

/// Frames drawn by the compositor itself on its renderer, events read from its window.
/// - Thread: the compositor's
final class InlineDelivery: FrameDelivery {
    let window: PlatformWindow?
    var drawnElsewhere: CompositorThread? { nil }

    init(window: PlatformWindow?) { self.window = window }

    func events(_ compositor: Compositor, waiting: Double??) -> [InputEvent] {
        guard let window else { return [] }
        if let timeout = waiting { return compositor.handle(window.waitForEvents(timeout: timeout)) }
        return compositor.handle(window.pollEvents())
    }

    @MainActor
    func needsFrame(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bool {
        Layer.changeCount != compositor.drawnChangeCount || Layer.snapshotChangeCount != compositor.drawnSnapshotChangeCount
            || compositor.needsRender(snapshot: compositor.drawnSnapshot, at: time)
            || root?.serial != compositor.drawnRootSerial
    }

    @MainActor
    func frame(_ compositor: Compositor, _ root: Layer?, at time: Double?, ifChanged: Bool) -> FrameStatistics {
        ifChanged ? compositor.renderIfChanged(snapshot: root?.snapshot(), at: time)
                  : compositor.render(snapshot: root?.snapshot(), at: time)
    }

    func acknowledgeInput(_ compositor: Compositor) {}

    @MainActor
    func capture(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bitmap? {
        compositor.capture(snapshot: root?.snapshot(), at: time)
    }

    func scaleChanged(_ compositor: Compositor) {}
    func configurationChanged(_ compositor: Compositor) {}

    func rendererReset(_ compositor: Compositor) { compositor.dropTextures() }
    func releaseTextures(_ compositor: Compositor) { compositor.dropTextures(countingReset: false) }
    func requestWholeFrame(_ compositor: Compositor) { compositor.requestWholeFrame() }
}

/// Frames handed to a compositor thread as snapshots, with the input taken in so far; events are the
/// ones that thread read, timed, with the scrolls it moved for them.
/// - Thread: the compositor's (the UI thread)
final class ThreadedDelivery: FrameDelivery {
    let thread: CompositorThread
    let window: PlatformWindow?
    var drawnElsewhere: CompositorThread? { thread }
    /// The last input sequence taken in from the thread.
    private var takenInput = 0
    /// The last input sequence handed back to the thread with a snapshot.
    private var handedInput = 0
    /// `Layer.snapshotChangeCount` at the last snapshot handed over.
    private var handedSnapshotChangeCount = -1

    init(thread: CompositorThread) {
        self.thread = thread
        self.window = RemoteWindow(thread: thread)
    }

    func events(_ compositor: Compositor, waiting: Double??) -> [InputEvent] {
        let events = take(compositor)
        guard events.isEmpty, let timeout = waiting else { return events }
        // The thread wakes the UI thread when it hands input over.
        _ = UIWakeup.shared.wait(timeout: timeout)
        return take(compositor)
    }

    private func take(_ compositor: Compositor) -> [InputEvent] {
        let timed = thread.takeEvents()
        compositor.lastEventTimes = timed.map(\.time)
        compositor.lastScrollUpdates = timed.map(\.scrollUpdate)
        if let last = timed.last { takenInput = last.sequence }
        return timed.map(\.event)
    }

    /// A compositor thread is handed every change a snapshot carries, those that do not show
    /// included (a scroll's binding, an input role): it routes input by them.
    @MainActor
    func needsFrame(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bool {
        Layer.snapshotChangeCount != handedSnapshotChangeCount || root?.serial != compositor.drawnRootSerial
    }

    /// Commits `root`'s snapshot to the thread, with the input taken in so far.
    @MainActor
    func frame(_ compositor: Compositor, _ root: Layer?, at time: Double?, ifChanged: Bool) -> FrameStatistics {
        _ = handOver(compositor, root)
        var statistics = FrameStatistics()
        statistics.presented = false
        statistics.handedToThread = true
        statistics.frameIndex = compositor.frameIndex
        return statistics
    }

    @MainActor
    private func handOver(_ compositor: Compositor, _ root: Layer?) -> LayerSnapshot? {
        let snapshot = root?.snapshot()
        thread.commit(snapshot, inputSequence: takenInput)
        handedInput = takenInput
        compositor.drawnSnapshot = snapshot
        compositor.drawnRootSerial = root?.serial
        handedSnapshotChangeCount = Layer.snapshotChangeCount
        return snapshot
    }

    func acknowledgeInput(_ compositor: Compositor) {
        guard takenInput > handedInput else { return }
        thread.commit(compositor.drawnSnapshot, inputSequence: takenInput)
        handedInput = takenInput
    }

    /// Committed first, so the thread's next frames show it too; drawn there and read back.
    @MainActor
    func capture(_ compositor: Compositor, _ root: Layer?, at time: Double?) -> Bitmap? {
        let snapshot = handOver(compositor, root)
        let thread = self.thread
        return thread.performAndWait { drawer, _ in drawer.capture(snapshot: snapshot, at: time ?? thread.now) } ?? nil
    }

    func scaleChanged(_ compositor: Compositor) {
        let scale = compositor.scale
        thread.perform { drawer, _ in drawer.scale = scale }
    }

    func configurationChanged(_ compositor: Compositor) {
        let configuration = compositor.configuration
        thread.perform { drawer, _ in drawer.configuration = configuration }
    }

    func rendererReset(_ compositor: Compositor) {
        thread.perform { drawer, _ in drawer.handleRendererReset() }
    }

    func releaseTextures(_ compositor: Compositor) { thread.releaseTextures() }
    func requestWholeFrame(_ compositor: Compositor) { thread.perform { drawer, _ in drawer.setNeedsWholeFrame() } }
}
