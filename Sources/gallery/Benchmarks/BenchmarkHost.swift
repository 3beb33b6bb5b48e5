import Tessera

/// What a benchmark runs its nodes in: a window (or SDL's dummy video driver) through the renderer
/// `BenchmarkOutput` names, a compositor on it, and a `NodeHost`, driven frame by frame on a virtual
/// 60 Hz clock. `tearDown()` leaves the runtime with nothing of the benchmark's in flight.
/// - Thread: main
@MainActor
final class BenchmarkHost {
    let backend: SDLRenderBackend
    let compositor: Compositor
    let host: NodeHost
    /// The frame participants `show(_:participants:)` added, which `tearDown()` removes. (main thread only)
    private var participants: [FrameParticipant] = []
    /// The virtual clock: the time of the last frame run, in seconds. (main thread only)
    private(set) var time = 0.0

    var runtime: Runtime { host.runtime }
    var scheduler: DisplayScheduler { host.runtime.scheduler }

    /// Opens a window of `size` points titled `title` at `scale` pixels per point as `output` says
    /// (`--headless`, `--renderer`), and a host on it whose frames start from `clearColor`.
    convenience init(output: BenchmarkOutput, title: String, size: Size, scale: Double = 1,
                     clearColor: Color = Color(rgb: 0x000000)) throws {
        self.init(backend: try output.makeBackend(title: title, size: size, scale: scale), clearColor: clearColor)
    }

    /// A host on `backend`, which benchmarks that run several passes in one window share.
    init(backend: SDLRenderBackend, clearColor: Color = Color(rgb: 0x000000)) {
        self.backend = backend
        compositor = Compositor(backend: backend, scale: backend.scale, configuration: .init(clearColor: clearColor))
        host = NodeHost(compositor: compositor)
    }

    /// Shows `root`; each of `participants` (a list) runs every frame until `tearDown()`.
    func show(_ root: Node, participants: [FrameParticipant] = []) {
        host.setRootNode(root)
        for participant in participants { host.addFrameParticipant(participant) }
        self.participants += participants
    }

    /// Reads the window's events and drops them: a real window must be read every frame to stay
    /// responsive, and benchmarks send their own events.
    func drainWindowEvents() {
        _ = compositor.pollEvents()
    }

    /// Advances the clock by a frame and runs one frame of the host with `events`, without reading
    /// the window's events first (for a benchmark that times its frames from a point of its own).
    @discardableResult
    func runFrame(events: [InputEvent] = []) -> FrameRecord {
        time += 1.0 / 60
        return host.runFrame(time: time, events: events)
    }

    /// Drains the window's events, then runs the next frame with `events`.
    @discardableResult
    func frame(events: [InputEvent] = []) -> FrameRecord {
        drainWindowEvents()
        return runFrame(events: events)
    }

    /// Runs `count` frames, each followed by waiting until the display workers are idle, so that what
    /// the frames started has been drawn and the next frame commits it.
    func settle(frames count: Int) {
        for _ in 0..<count {
            frame()
            scheduler.waitUntilIdle()
        }
    }

    /// Removes the root and the frame participants, waits for the workers, and applies what they
    /// finished, so the next benchmark (or pass) starts from a quiet runtime.
    func tearDown() {
        for participant in participants { host.removeFrameParticipant(participant) }
        participants = []
        host.setRootNode(nil)
        scheduler.waitUntilIdle()
        runtime.mainQueue.drain()
        runtime.applyPendingCommits()
    }
}
