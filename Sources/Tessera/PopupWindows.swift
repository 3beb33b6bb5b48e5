import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime

/// Shows a window's popups and tooltips in popup windows of their own (`OverlaySurfaceProvider`), so
/// that a menu opened near the window's edge reaches past it: undecorated, override-redirect windows
/// on X11 (`SDLWindow.Configuration.popup`), opened on the compositor thread beside the window they
/// belong to, placed against the usable part of its display.
///
/// Only a window drawn on the compositor thread under X11 gets one (`Application.Window.open`):
/// headless, the overlays are drawn in the window; under Wayland SDL 2 cannot place a window, so they
/// are too. No popup window takes a grab, so none is left behind: a press outside the app's windows
/// reaches another app, and the popup ends when the window loses the focus, as in the window.
/// `TESSERA_POPUP_WINDOWS=0` or `Application.Configuration.popupWindows = false` keeps them in the
/// window.
/// - Thread: main, every member.
@MainActor
final class PopupWindowProvider: OverlaySurfaceProvider {
    /// The window the popups belong to (weak: its `Application.Window` owns it).
    private weak var parent: CompositorThread?
    /// What every popup window opens with: the parent's renderer and scale.
    private let backend: SDLRenderBackend.Configuration
    private let compositor: Compositor.Configuration
    private let timeOrigin: UInt64

    init(parent: CompositorThread, backend: SDLRenderBackend.Configuration, compositor: Compositor.Configuration,
         timeOrigin: UInt64) {
        self.parent = parent
        var backend = backend
        backend.resizable = false
        // One window of the thread presents in step with the display (see `Application.Window.open`).
        backend.vsync = false
        self.backend = backend
        self.compositor = compositor
        self.timeOrigin = timeOrigin
    }

    /// Where the parent window is and its display's usable bounds, as its thread last read them.
    private var placement: WindowPlacement.State? {
        guard let parent, parent.isRunning else { return nil }
        return parent.info.windowPlacement.state
    }

    var screenBounds: Rect? { placement?.usableScreenBoundsInPoints }

    func makeSurface(kind: Overlay.Kind, frame: Rect) -> OverlaySurface? {
        guard let placement else { return nil }
        var configuration = backend
        configuration.title = kind == .tooltip ? "tooltip" : "popup"
        configuration.size = frame.size
        configuration.window.popup = kind == .tooltip ? .tooltip : .menu
        configuration.window.position = PopupWindowSurface.screenOrigin(of: frame, in: placement)
        do {
            let thread = try CompositorThread(backend: configuration, compositor: compositor, timeOrigin: timeOrigin)
            return PopupWindowSurface(thread: thread, compositor: Compositor(thread: thread, configuration: compositor),
                                      placement: { [weak self] in self?.placement }, frame: frame)
        } catch {
            TesseraLog.app.warning("a popup window could not be opened (\(error)): the popup is drawn in its window")
            return nil
        }
    }
}

/// One popup window on the compositor thread: drawn by its own compositor, moved and sized there,
/// closed there when its overlay ends.
/// - Thread: main, every member.
@MainActor
final class PopupWindowSurface: OverlaySurface {
    let compositor: Compositor
    private let thread: CompositorThread
    /// The parent window's placement now (it may have moved since the popup opened).
    private let placement: () -> WindowPlacement.State?

    init(thread: CompositorThread, compositor: Compositor, placement: @escaping () -> WindowPlacement.State?, frame: Rect) {
        self.thread = thread
        self.compositor = compositor
        self.placement = placement
    }

    /// Where `frame` (the parent window's points) starts on the screen, in the window system's units.
    static func screenOrigin(of frame: Rect, in placement: WindowPlacement.State) -> Point {
        Point(x: placement.origin.x + frame.minX * placement.unitsPerPoint,
              y: placement.origin.y + frame.minY * placement.unitsPerPoint)
    }

    func setFrame(_ frame: Rect) {
        guard let placement = placement() else { return }
        let origin = Self.screenOrigin(of: frame, in: placement)
        let size = Size(width: frame.width * placement.unitsPerPoint, height: frame.height * placement.unitsPerPoint)
        thread.perform { _, backend in backend.window.setFrame(origin: origin, size: size) }
    }

    var hasPendingEvents: Bool { thread.hasPendingEvents }

    func takeEvents() -> [InputEvent] { compositor.pollEvents() }

    func close() { thread.stop() }
}

extension Application.Configuration {
    /// Whether a window drawn on the compositor thread under `videoDriver` shows its popups in windows
    /// of their own (see `popupWindows`). - Thread: any
    func showsPopupWindows(videoDriver: String,
                           environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let popupWindows { return popupWindows && videoDriver == "x11" }
        if environment["TESSERA_POPUP_WINDOWS"] == "0" { return false }
        return videoDriver == "x11"
    }
}
