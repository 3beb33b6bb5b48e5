public import Compositor
public import NodeRuntime

/// Node trees rendered offscreen as the app shows them: a `NodeHost` over SDL's software renderer on
/// the dummy video driver, frames run until the display workers are idle and their results committed,
/// then the composited picture read back as a `Bitmap`. The pixel tests of every test target render
/// through here, so their goldens all come from one path.
/// - Thread: main (hosts, frames and captures belong to the UI thread)
@MainActor
public enum OffscreenRender {
    /// A host on a headless SDL software renderer `size` points large.
    ///
    /// - Parameters:
    ///   - title: the window's title (no effect on pixels).
    ///   - size: the window's size in points.
    ///   - scale: pixels per point, forced on the backend and used by the compositor; nil lets the
    ///     backend choose (the dummy driver's 1) and composites at 1.
    ///   - configuration: the compositor's configuration; tests set its clear colour.
    /// - Returns: the host and its backend (an app under test takes both).
    public static func makeHost(title: String = "test", size: Size, scale: Double? = 1,
                                configuration: Compositor.Configuration = .init()) throws -> (NodeHost, SDLRenderBackend) {
        let backend = try SDLRenderBackend(.init(title: title, size: size, scale: scale))
        let compositor = Compositor(backend: backend, scale: scale ?? 1, configuration: configuration)
        return (NodeHost(compositor: compositor), backend)
    }

    /// What `host` shows now: its root layer composited into a bitmap.
    public static func capture(_ host: NodeHost) -> Bitmap? {
        host.compositor.capture(host.rootLayer)
    }

    /// Shows `root` on a new host, settles it, captures the picture and takes the root off again.
    ///
    /// - Parameters:
    ///   - root: the tree to show; its frame is the host's to set.
    ///   - size, scale, clearColor: the window (see `makeHost`).
    ///   - time: the frame clock, carried across renders of one test and advanced here.
    ///   - finalFrameAfter: when set, one more frame this many seconds after settling (lets
    ///     cross-fades finish before the capture).
    /// - Returns: the picture, or nil when the renderer could not read its pixels back.
    public static func render(_ root: Node, size: Size, scale: Double = 1, clearColor: Color, time: inout Double,
                              finalFrameAfter: Double? = nil) throws -> Bitmap? {
        let (host, _) = try makeHost(size: size, scale: scale, configuration: .init(clearColor: clearColor))
        host.setRootNode(root)
        settle(host, time: &time)
        if let finalFrameAfter {
            time += finalFrameAfter
            host.runFrame(time: time, events: [])
        }
        let pixels = capture(host)
        host.setRootNode(nil)
        return pixels
    }
}

/// Runs frames a sixtieth of a second apart until the shared scheduler is idle and every result it
/// produced is committed: four frames each followed by a wait for the workers, then one more frame.
/// - Thread: main
@MainActor
public func settle(_ host: NodeHost, time: inout Double) {
    for _ in 0..<4 {
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
        host.runtime.scheduler.waitUntilIdle()
    }
    time += 1.0 / 60
    host.runFrame(time: time, events: [])
}
