import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime

extension Application {
    /// One window of an application: its own node host (tree, focus, overlays), root controller,
    /// title, size and scale, drawn by its own compositor. The application's event loop runs a frame
    /// for every window that needs one and routes each window's events to its own host.
    ///
    /// The first window is the one `Application.init` opens (`Application.mainWindow`, whose host is
    /// `Application.host`); `Application.openWindow(configuration:rootController:)` opens more while
    /// the app runs. With a compositor thread every window is drawn on the process's one compositor
    /// thread, which owns them all (SDL's video belongs to one thread); headless (the dummy driver,
    /// drawn on the UI thread) several windows work too, so tests can use them.
    ///
    /// The window's close button (`InputEvent.closeRequested`) closes that window alone; closing the
    /// last one ends `run()` unless `Configuration.quitsWhenLastWindowCloses` says otherwise. A
    /// dialog window opened `modalFor` another (`Application.openWindow(configuration:rootController:modalFor:)`)
    /// holds that window's input until it closes (`modalWindows`, `isBlockedByModalWindow`).
    ///
    /// Screen readers see every open window: the application's `AtspiPublisher` publishes each
    /// window's host as a frame of its own under the application, in `windows` order, named by the
    /// window's title, with its own place on the screen and its own focus; a screen reader's action
    /// on an element runs in the window that shows it.
    ///
    /// Some of what a host watches is the process's (the layers' change counts, the runtime's main
    /// queue and commits): a change in one window can cost another a frame that finds nothing to
    /// draw, never a present.
    /// - Thread: main, every member.
    @MainActor
    public final class Window {
        /// What a window opens with; the renderer, background colour, vsync and whether it is drawn
        /// on the compositor thread are the application's (`Application.Configuration`).
        /// - Thread: any (a value)
        public struct Configuration: Sendable {
            /// The window's title.
            public var title: String
            /// The window's size in points.
            public var size: Size
            /// Output pixels per point, forced; nil takes the window's (each window has its own).
            public var scale: Double?
            /// Whether the user can resize the window.
            public var resizable: Bool

            public init(title: String = "Tessera", size: Size = Size(width: 800, height: 600), scale: Double? = nil,
                        resizable: Bool = true) {
                self.title = title
                self.size = size
                self.scale = scale
                self.resizable = resizable
            }
        }

        /// The host running this window's node tree.
        public let host: NodeHost
        /// The SDL window (or dummy output) and its renderer, when they belong to the UI thread; nil
        /// when the compositor thread owns them (`compositorThread`).
        public let backend: SDLRenderBackend?
        /// This window's front on the compositor thread, when frames are drawn there.
        public let compositorThread: CompositorThread?
        /// The renderer's and video driver's names, the window's scale and the display's refresh rate.
        public let renderer: RendererDescription
        /// Whether this window's presents wait for the display's refresh (see `open`).
        let presentsInStepWithDisplay: Bool
        /// The application the window belongs to (nil once it is gone).
        public private(set) weak var application: Application?
        /// Called after every frame the loop runs for this window, with its record.
        public var onFrame: ((FrameRecord) -> Void)?
        /// Called once when the window has closed (its button, `close()`, the application closing).
        public var onClose: (() -> Void)?
        /// The window this one is modal for (`Application.openWindow(configuration:rootController:modalFor:)`),
        /// while both are open.
        public private(set) weak var modalParent: Window?
        /// The modal windows open over this one, the newest last: while there is one, this window takes
        /// no pointer, keys, text or close request (see `isBlockedByModalWindow`).
        public private(set) var modalWindows: [Window] = []
        /// The frames run for this window so far.
        public private(set) var frameCount = 0
        /// False once the window has closed.
        public private(set) var isOpen = true
        /// True from the start of `close()`: its modal windows are closing, and no new one may open
        /// over it (one that an `onClose` of theirs opens would outlive it).
        private(set) var isClosing = false
        /// The window's title.
        public private(set) var title: String
        /// The last frame saw work under way off the UI thread that may end without a result to commit
        /// (see `Application.runEventLoop`); set by every frame the application runs of it.
        var workWasPending = false

        /// The compositor drawing the window's layers.
        public var compositor: Compositor { host.compositor }
        /// The window's root controller (`host.rootController`).
        public var rootController: NodeController? { host.rootController }
        /// The window's size in points.
        public var size: Size { host.viewportSize }
        /// The window's pixels per point: its nodes measure and draw at it.
        public var scale: Double { host.contentsScale }
        /// True while a modal window is open over this one: the user's input to this window is
        /// dropped as it is read (a press or its close button bring the modal window forward instead);
        /// what the window system says of the window (resizes, focus) still comes. As it begins, the
        /// touch held in the window is cancelled and its menus and tooltips end; a screen reader's
        /// actions on its elements do nothing (`NodeHost.isInputBlocked`).
        public var isBlockedByModalWindow: Bool { !modalWindows.isEmpty }
        /// Which window this is among the process's (SDL's id).
        public var windowID: WindowID? { compositor.window?.windowID }
        /// True while the window has the keyboard focus.
        public var isFocused: Bool { compositor.window?.windowPlacement.state.isActive ?? false }

        init(host: NodeHost, backend: SDLRenderBackend?, compositorThread: CompositorThread?, renderer: RendererDescription,
             presentsInStepWithDisplay: Bool, title: String, application: Application?) {
            self.host = host
            self.backend = backend
            self.compositorThread = compositorThread
            self.renderer = renderer
            self.presentsInStepWithDisplay = presentsInStepWithDisplay
            self.title = title
            self.application = application
        }

        /// Opens a window as `configuration` says, drawn as the application's `settings` say: on the
        /// compositor thread (frame time 0 at `origin`, the application clock's) or on this thread.
        /// `vsync`: its presents wait for the display's refresh. One thread presents every window, so
        /// at most one window of an application waits so: waiting for each window's refresh in turn
        /// would divide every window's frame rate by the number of windows; the loop paces the others.
        /// - Throws: `Failure` when the window or its renderer cannot be made.
        /// `modalFor`: the window system's window this one is a dialog of (`SDLWindow.Configuration.modalFor`).
        static func open(_ configuration: Configuration, settings: Application.Configuration, headless: Bool,
                         threaded: Bool, vsync: Bool, origin: UInt64, modalFor: WindowID? = nil) throws -> Window {
            var backendConfiguration = SDLRenderBackend.Configuration(
                title: configuration.title, size: configuration.size, scale: configuration.scale, headless: headless,
                resizable: configuration.resizable, renderDriver: settings.renderer, vsync: vsync)
            backendConfiguration.modalFor = modalFor
            let compositorConfiguration = Compositor.Configuration(clearColor: settings.backgroundColor)
            if threaded {
                let thread: CompositorThread
                do {
                    thread = try CompositorThread(backend: backendConfiguration, compositor: compositorConfiguration,
                                                  timeOrigin: origin)
                } catch {
                    throw Failure("cannot open the window: \(error)")
                }
                let info = thread.info
                var renderer = RendererDescription(rendererName: info.rendererName, videoDriverName: info.videoDriverName,
                                                   graphicsDeviceName: info.graphicsDeviceName, scale: info.scale,
                                                   refreshRate: info.refreshRate, compositorThread: true)
                renderer.desktopScale = info.desktopScale
                let host = NodeHost(compositor: Compositor(thread: thread, configuration: compositorConfiguration))
                if settings.showsPopupWindows(videoDriver: info.videoDriverName) {
                    host.overlaySurfaceProvider = PopupWindowProvider(parent: thread, backend: backendConfiguration,
                                                                      compositor: compositorConfiguration, timeOrigin: origin)
                } else if !headless {
                    let driver = info.videoDriverName
                    TesseraLog.app.info("menus and tooltips are drawn inside the window on \(driver) (popup windows: X11 only)")
                }
                return Window(host: host, backend: nil, compositorThread: thread, renderer: renderer,
                              presentsInStepWithDisplay: vsync, title: configuration.title, application: nil)
            }
            let made: SDLRenderBackend
            do {
                made = try SDLRenderBackend(backendConfiguration)
            } catch {
                throw Failure("cannot open the window: \(error)")
            }
            let window = made.window
            var renderer = RendererDescription(rendererName: made.rendererName, videoDriverName: window.videoDriverName,
                                               graphicsDeviceName: made.graphicsDeviceName, scale: window.scale,
                                               refreshRate: window.refreshRate, compositorThread: false)
            renderer.desktopScale = window.desktopScale
            let host = NodeHost(compositor: Compositor(backend: made, scale: window.scale, configuration: compositorConfiguration))
            return Window(host: host, backend: made, compositorThread: nil, renderer: renderer,
                          presentsInStepWithDisplay: vsync, title: configuration.title, application: nil)
        }

        /// Joins `application` (set once, as the application takes the window in).
        func attach(to application: Application) { self.application = application }

        /// Makes `modal` a modal window of this one (the newest): this window's input is blocked.
        func addModalWindow(_ modal: Window) {
            modal.modalParent = self
            modalWindows.append(modal)
            blockInput(by: modal.windowID)
        }

        /// A modal window of this one closed: the newest left blocks the input, or none does.
        func modalWindowDidClose(_ modal: Window) {
            modalWindows.removeAll { $0 === modal }
            blockInput(by: modalWindows.last?.windowID)
        }

        /// Tells the host whether its input is blocked, and the platform window (on the thread that
        /// owns it) which modal window its input waits for.
        private func blockInput(by modal: WindowID?) {
            guard isOpen else { return }
            host.isInputBlocked = !modalWindows.isEmpty
            if let backend {
                backend.window.inputBlockedBy = modal
            } else {
                compositorThread?.perform { _, backend in backend.window.inputBlockedBy = modal }
            }
        }

        /// Sets the window's title.
        public func setTitle(_ title: String) {
            self.title = title
            application?.windowTitleDidChange(self, to: title)
            if let backend {
                backend.window.title = title
            } else {
                compositorThread?.perform { _, backend in backend.window.title = title }
            }
        }

        /// Closes the window: its overlays end (`.hostReset`; their popup windows close), its root
        /// controller leaves (its disappearance runs), a compositor thread's
        /// window closes there (the others on it go on), an inline one is hidden and destroyed when
        /// the window is let go. The application forgets it; its loop ends once no window is left
        /// (`Configuration.quitsWhenLastWindowCloses`). Harmless twice.
        public func close() {
            guard isOpen, !isClosing else { return }
            isClosing = true
            // Its modal windows first, the newest first: none outlives the window it is a dialog of.
            for modal in modalWindows.reversed() { modal.close() }
            isOpen = false
            // Its menus and tooltips first: their popup windows are the host's, and none outlives it.
            host.windowWillClose()
            host.setRootController(nil)
            host.setRootNode(nil)
            compositorThread?.stop()
            backend?.window.hide()
            let application = self.application
            modalParent?.modalWindowDidClose(self)
            modalParent = nil
            application?.windowDidClose(self)
            let onClose = self.onClose
            self.onClose = nil
            onClose?()
            // Decided once `onClose` ran: a window it opened keeps the app running.
            application?.quitIfNoWindowIsLeft()
        }

        /// Runs one frame of this window now with `events` (nil: what its platform has queued), as the
        /// application's loop does. Under a modal window, the user's input among `events` is dropped,
        /// as it is when read from the platform.
        @discardableResult
        public func frame(events: [InputEvent]? = nil) -> FrameRecord {
            if let application { return application.frame(self, events: events) }
            let record = runFrame(events: events ?? compositor.pollEvents(), at: host.time + 1 / 60)
            onFrame?(record)
            return record
        }

        /// Runs frames of this window until its screen shows the final state of its tree (see
        /// `NodeHost.settle`); with a compositor thread, until that thread has shown the last frame
        /// committed too (`CompositorThread.waitUntilShown`), running frames again when that thread
        /// read a change of scale after the last one (it draws nothing until a frame answers it).
        /// - Throws: `SettleTimeout` naming what was still pending when `timeout` seconds ran out.
        @discardableResult
        public func settle(timeout: Double = 10) throws -> Int {
            let start = MonotonicClock.nanoseconds()
            let limit = timeout.isFinite ? max(0, timeout) : 10
            func left() -> Double { max(0, limit - Double(MonotonicClock.nanoseconds() &- start) / 1e9) }
            var frames = 0
            while true {
                frames += try host.settle(timeout: frames == 0 ? timeout : left()) {
                    if let application, !application.isHeadless { application.waitForNextFrame() }
                    frame(events: nil)
                }
                guard let compositorThread else { return frames }
                if compositorThread.waitUntilShown(timeout: left()) || !compositorThread.isRunning { return frames }
                // The thread read a change of scale after the last frame and draws nothing until a
                // frame answers it: frames again.
                if compositorThread.awaitsAnswer && left() > 0 { continue }
                var pending = host.pendingWork
                pending.framesNotShown = 1
                throw SettleTimeout(frames: frames, timeout: limit, pending: pending)
            }
        }

        /// The window's screen as it is now, composited and read back.
        /// - Throws: `Failure` when the renderer cannot read its pixels back.
        public func capture() throws -> Bitmap {
            guard let bitmap = compositor.capture(host.rootLayer) else {
                throw Failure("the renderer could not read the frame back")
            }
            return bitmap
        }

        /// Runs the host's frame with `events` at `time` (the caller then calls `onFrame`).
        func runFrame(events: [InputEvent], at time: Double) -> FrameRecord {
            // A compositor thread says when it read each event: the wheel moves a list from where its
            // motion was then, as the compositor thread did.
            let times = compositor.lastEventTimes
            let updates = compositor.lastScrollUpdates
            let record = host.runFrame(time: time, events: events, eventTimes: times.count == events.count ? times : nil,
                                       scrollUpdates: updates.count == events.count ? updates : nil)
            frameCount += 1
            return record
        }
    }
}
