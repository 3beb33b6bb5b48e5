import Compositor
import CTessera
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime
import TesseraPortal

/// A running Tessera app: the window (or the headless target), its renderer, the compositor, the
/// node host and the frame loop, made by one call.
///
/// ```swift
/// Application.run(.init(title: "Feed")) { FeedController() }
/// ```
///
/// The loop runs on the UI thread (the main actor) until the last window closes or `quit()` is
/// called. Each frame it polls the platform's events, runs the host's frame (input, commits, layout,
/// ranges, draws, compositing) and the main actor's queued jobs, so `Task { @MainActor in … }` and
/// `DispatchQueue.main.async` work inside an app as they do elsewhere. Lists and other frame
/// participants in the tree take part by themselves.
///
/// `init` opens the main window; `openWindow(configuration:rootController:)` opens more, each an
/// `Application.Window` with its own host, run by the same loop (`windows`). The members that name
/// no window (`host`, `compositor`, `frame`, `settle`, `capture`…) are the main window's.
///
/// Headless (no display, or `headless: true`), the same app runs on SDL's dummy video driver and a
/// virtual clock: `run()` settles the screen, writes the screenshot when one is configured, and
/// returns. App tests make an `Application` headless and call `settle(timeout:)` and `capture()`.
///
/// - Thread: main, every member.
@MainActor
public final class Application {
    /// What to open and how to run.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// The window's title.
        public var title: String
        /// The window's size in points.
        public var size: Size
        /// Output pixels per point, forced; nil takes the window's.
        public var scale: Double?
        /// True: SDL's dummy video driver, no window. Nil: headless exactly when there is no display
        /// (`DISPLAY` and `WAYLAND_DISPLAY` unset).
        public var headless: Bool?
        /// Whether the user can resize the window.
        public var resizable: Bool
        /// The SDL renderer to ask for.
        public var renderer: RenderDriver
        /// The colour behind every node.
        public var backgroundColor: Color
        /// Stop `run()` after this many frames; nil runs until quit. With a window, where an app at rest
        /// runs no frames, it also stops once that many frame intervals of time have passed.
        public var frames: Int?
        /// After the last frame, settle and write the screen to this PNG file.
        public var screenshot: String?
        /// Present in step with the display's refresh where the renderer offers it.
        public var vsync: Bool
        /// Composite on a thread of its own (`CompositorThread`), which owns the window, its events
        /// and its renderer, so that scrolling and animations go on while the UI thread is busy. Nil
        /// (the default): with a window, yes; headless, no (headless frames run on their own time
        /// line, drawn on the UI thread, which tests rely on).
        public var compositorThread: Bool?
        /// Show menus, context menus, tooltips and popovers in popup windows of their own, which may
        /// reach past the window's edge (`PopupWindowProvider`). Nil (the default): yes for a window
        /// drawn on the compositor thread under X11, unless `TESSERA_POPUP_WINDOWS=0`; elsewhere, and
        /// for dialogs always, they are drawn inside the window.
        public var popupWindows: Bool?
        /// Serve the app to screen readers (AT-SPI2 over D-Bus, `AtspiBridge`); on by default. The
        /// environment turns it off too: `TESSERA_NO_ACCESSIBILITY=1`, or GTK's `NO_AT_BRIDGE=1`.
        public var accessibility: Bool
        /// Follow the desktop's appearance (dark, contrast, accent, text scale, reduced motion) from the
        /// XDG settings portal, live (`SettingsPortal`). Nil (the default): with a window, yes;
        /// headless, no (headless apps and tests keep `Runtime.appearance` as they set it). Either way
        /// `TESSERA_APPEARANCE` in `settingsEnvironment` overrides what it names
        /// (`AppearanceOverride`).
        public var followsSystemAppearance: Bool?
        /// Where the desktop's settings are read: the session bus's address, `GTK_THEME` and
        /// `TESSERA_APPEARANCE`. Nil: the process's environment.
        public var settingsEnvironment: [String: String]?
        /// The longest the app waits at start for the portal's first answer, in seconds, so that its
        /// first frame already has the desktop's colours; an answer that comes later applies then.
        public var appearanceWaitTimeout: Double
        /// Open a link tapped in a `TextNode` that has no `linkTapHandler` in the desktop's browser
        /// (http, https and mailto only; see `DesktopPortal.openLink`). Nil (the default): with a
        /// window, yes; headless, no.
        public var opensLinks: Bool?
        /// The desktop portals' time-outs, link schemes and environment (`Application.desktopPortal`);
        /// nil: the defaults, with `settingsEnvironment` as the environment.
        public var portalConfiguration: DesktopPortal.Configuration?
        /// End `run()` once the app's last window has closed (true by default). False keeps the loop
        /// running with no window, for an app that opens one again later (`openWindow`); `quit()`
        /// still ends it.
        public var quitsWhenLastWindowCloses: Bool

        public init(title: String = "Tessera", size: Size = Size(width: 800, height: 600), scale: Double? = nil,
                    headless: Bool? = nil, resizable: Bool = true, renderer: RenderDriver = .auto,
                    backgroundColor: Color = .white, frames: Int? = nil, screenshot: String? = nil,
                    vsync: Bool = true) {
            self.title = title
            self.size = size
            self.scale = scale
            self.headless = headless
            self.resizable = resizable
            self.renderer = renderer
            self.backgroundColor = backgroundColor
            self.frames = frames
            self.screenshot = screenshot
            self.vsync = vsync
            self.compositorThread = nil
            self.popupWindows = nil
            self.accessibility = true
            self.followsSystemAppearance = nil
            self.settingsEnvironment = nil
            self.appearanceWaitTimeout = 0.5
            self.opensLinks = nil
            self.portalConfiguration = nil
            self.quitsWhenLastWindowCloses = true
        }

        /// A headless configuration for tests: the dummy driver, 1 pixel per point unless given.
        public static func headless(size: Size = Size(width: 800, height: 600), scale: Double = 1) -> Configuration {
            Configuration(size: size, scale: scale, headless: true, resizable: false)
        }

        /// The configuration with what the environment sets: `TESSERA_HEADLESS=1` runs headless,
        /// `TESSERA_FRAMES=N` stops after N frames, `TESSERA_SCREENSHOT=FILE.png` writes the settled
        /// screen there at the end, `TESSERA_SCALE=2` forces the scale, `TESSERA_RENDERER=software`
        /// (`opengl`, `opengles2`, `auto`) chooses the renderer. Values that do not parse are
        /// reported and ignored. `Application.run` applies it, so any app can be run headless and
        /// photographed without code of its own.
        public func applyingEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Configuration {
            var result = self
            if let value = environment["TESSERA_HEADLESS"], !value.isEmpty { result.headless = value != "0" }
            if let value = environment["TESSERA_FRAMES"], !value.isEmpty {
                if let frames = Int(value), frames > 0 { result.frames = frames } else {
                    TesseraLog.app.warning("TESSERA_FRAMES=\(value) is not a positive whole number; ignored")
                }
            }
            if let value = environment["TESSERA_SCREENSHOT"], !value.isEmpty { result.screenshot = value }
            if let value = environment["TESSERA_RENDERER"], !value.isEmpty {
                if let driver = RenderDriver(rawValue: value) { result.renderer = driver } else {
                    TesseraLog.app.warning("TESSERA_RENDERER=\(value) is not one of \(RenderDriver.allCases.map(\.rawValue).joined(separator: ", ")); ignored")
                }
            }
            if let value = environment["TESSERA_SCALE"], !value.isEmpty {
                if let scale = Double(value), scale.isFinite, scale > 0, scale <= 8 { result.scale = scale } else {
                    TesseraLog.app.warning("TESSERA_SCALE=\(value) is not a scale in (0, 8]; ignored")
                }
            }
            return result
        }

        /// True when the process has a display to open a window on.
        public static var displayIsAvailable: Bool {
            let environment = ProcessInfo.processInfo.environment
            return environment["DISPLAY"].map { !$0.isEmpty } == true
                || environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } == true
        }
    }

    /// An application could not start or finish.
    /// - Thread: any (a value)
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What the app was made with.
    public let configuration: Configuration
    /// The window `init` opened: the members below that name no window (`host`, `compositor`,
    /// `backend`, `compositorThread`, `renderer`, `frame`, `settle`, `capture`) are its.
    public let mainWindow: Window
    /// The open windows, the main one first while it is open, then in the order they opened.
    public private(set) var windows: [Window] = []
    /// The main window's host, running its node tree.
    public var host: NodeHost { mainWindow.host }
    /// The main window's SDL window (or dummy output) and its renderer, when they belong to the UI
    /// thread; nil when a compositor thread owns them (`compositorThread`).
    public var backend: SDLRenderBackend? { mainWindow.backend }
    /// The main window's front on the compositor thread, when frames are drawn on one
    /// (`Configuration.compositorThread`).
    public var compositorThread: CompositorThread? { mainWindow.compositorThread }
    /// The main window's renderer and video driver, its scale and its display's refresh rate.
    public var renderer: RendererDescription { mainWindow.renderer }
    /// True when running on SDL's dummy video driver, without a window.
    public let isHeadless: Bool
    /// Whether windows are drawn on the compositor thread (decided once, for every window).
    let drawsOnCompositorThread: Bool
    /// The compositor drawing the main window's layers.
    public var compositor: Compositor { host.compositor }
    /// Called after every frame the loop runs for the main window, with its record (each window has
    /// its own `Window.onFrame`).
    public var onFrame: ((FrameRecord) -> Void)?
    /// Called when the desktop says the system is short of memory (the memory monitor portal's
    /// `LowMemoryWarning`, heard with the appearance when `followsSystemAppearance`), after every
    /// window let go of what it can rebuild (`NodeHost.releaseMemory(for:)`): the place for the app to
    /// let go of its own caches. `lowMemoryWarning(_:)` does the same for a warning from elsewhere.
    public var onLowMemory: ((MemoryWarningLevel) -> Void)?
    /// The frames run so far, in every window.
    public private(set) var frameCount = 0
    /// True once `quit()` was called, the platform asked to quit, or the last window was closed.
    public private(set) var isQuitting = false

    /// Paces the windows' frames; headless frames step their time instead (`Application+EventLoop`).
    let clock: RealFrameClock
    /// The clock's time at the event loop's last frame (headless: how far to move the host's time).
    var lastLoopFrame: Double?
    /// `frameCount` and the clock's time when the event loop last asked for an `AllocatorTrim`.
    var framesAtLastTrim = 0
    var lastAllocatorTrim: Double?
    /// Publishes the host's accessibility tree to screen readers; nil when accessibility is off.
    private let accessibility: AtspiPublisher?
    /// Follows the desktop's appearance; nil when the app does not (`followsSystemAppearance`).
    public let settingsPortal: SettingsPortal?
    /// Opens links, asks for files and posts notifications through the desktop's portals
    /// (`Application+Portals`); connects at its first request.
    public let desktopPortal: DesktopPortal

    /// The screen reader bridge (its `status` says whether a screen reader can reach the app); nil
    /// when `Configuration.accessibility` or the environment turned it off.
    public var accessibilityBridge: AtspiBridge? { accessibility?.bridge }

    /// Opens the window (or the headless output) and shows `rootController` (nil: nothing yet; set one
    /// with `host.setRootController(_:)`).
    /// - Throws: `Failure` when SDL cannot start or the renderer asked for is not available.
    public init(configuration: Configuration = Configuration(), rootController: NodeController?) throws {
        // The fonts are read on a thread of their own while the window opens, before the first layout
        // (a synchronous one, here on the UI thread) needs them.
        FontRegistry.shared.prepare()
        let headless = configuration.headless ?? !Configuration.displayIsAvailable
        if configuration.headless == nil && headless {
            TesseraLog.app.info("no display found (DISPLAY is unset): running headless on SDL's dummy video driver")
        }
        self.configuration = configuration
        isHeadless = headless
        // The desktop's settings are read on the portal's thread while the window opens.
        let settingsEnvironment = configuration.settingsEnvironment ?? ProcessInfo.processInfo.environment
        let appearanceOverride = AppearanceOverride.fromEnvironment(settingsEnvironment) ?? AppearanceOverride()
        if configuration.followsSystemAppearance ?? !headless {
            let runtime = Runtime.shared
            settingsPortal = SettingsPortal(
                configuration: SettingsPortal.Configuration(environment: settingsEnvironment),
                post: { work in runtime.mainQueue.enqueue(work) },
                apply: { appearance in runtime.setAppearance(appearanceOverride.applied(to: appearance)) },
                lowMemory: { level in Application.current?.lowMemoryWarning(level) })
            settingsPortal?.start()
            // Until the portal answers: what the environment says.
            runtime.setAppearance(appearanceOverride.applied(to: PortalSettings().appearance(environment: settingsEnvironment)))
        } else {
            settingsPortal = nil
            if !appearanceOverride.isEmpty {
                Runtime.shared.setAppearance(appearanceOverride.applied(to: Runtime.shared.appearance))
            }
        }
        desktopPortal = Self.makeDesktopPortal(configuration, environment: settingsEnvironment)
        // A compositor thread opens the window and its renderer; frame time 0 is shared with this clock.
        let origin = MonotonicClock.nanoseconds()
        drawsOnCompositorThread = configuration.compositorThread ?? !headless
        mainWindow = try Window.open(
            Window.Configuration(title: configuration.title, size: configuration.size, scale: configuration.scale,
                                 resizable: configuration.resizable),
            settings: configuration, headless: headless, threaded: drawsOnCompositorThread, vsync: configuration.vsync,
            origin: origin)
        // Frames paced by the display's refresh where SDL knows it.
        clock = RealFrameClock(framesPerSecond: mainWindow.renderer.refreshRate ?? 60, origin: origin)
        let host = mainWindow.host
        // The scale of nodes outside any window: the main window's. Each window's nodes take their
        // own host's (`Node.contentsScale`), so a window of another density leaves it alone.
        Runtime.shared.contentsScale = host.compositor.scale
        if let settingsPortal, let read = settingsPortal.waitForFirstReading(timeout: configuration.appearanceWaitTimeout) {
            // Applied now rather than through the main queue: the first frame has it.
            Runtime.shared.setAppearance(appearanceOverride.applied(to: read))
        }
        if configuration.accessibility && !AtspiBridge.isDisabled() {
            // The bridge connects on its own thread; the first tree is published once it has.
            accessibility = AtspiPublisher(host: host, title: configuration.title,
                                           windowPlacement: host.compositor.window?.windowPlacement)
            accessibility?.start()
        } else {
            accessibility = nil
        }
        windows = [mainWindow]
        mainWindow.attach(to: self)
        if let rootController { host.setRootController(rootController) }
        Application.current = self
        installPortalFallbacks()
    }

    /// Opens another window showing `rootController` (nil: nothing yet; set one on its host), drawn
    /// as the main one is (on the compositor thread, or on this thread headless). The event loop runs
    /// its frames from the next turn; its close button closes it alone.
    ///
    /// `modalFor`: a dialog window of that open window of this application. It opens centred over
    /// it, kept above it by the window manager (transient for it and marked modal on X11), and takes
    /// the keyboard focus; while it is open the window under it takes no pointer, keys, text or close
    /// request (a press there, or its close button, brings the dialog forward: `Window.isBlockedByModalWindow`).
    /// Closing the dialog gives the input back (and the keyboard focus, if the dialog held it);
    /// closing the window under it closes the dialog first. Several can stack; the newest is in front.
    /// - Throws: `Failure` when the window or its renderer cannot be made, or `modalFor` is not an open
    ///   window of this application (one that is closing is not: a dialog an `onClose` opens over it
    ///   would outlive it).
    @discardableResult
    public func openWindow(configuration windowConfiguration: Window.Configuration = Window.Configuration(),
                           rootController: NodeController?, modalFor parent: Window? = nil) throws -> Window {
        if let parent, !(parent.isOpen && !parent.isClosing && windows.contains { $0 === parent }) {
            throw Failure("cannot open a modal window for \"\(parent.title)\": it is not an open window of this application")
        }
        let vsync = configuration.vsync && !windows.contains { $0.presentsInStepWithDisplay }
        let window = try Window.open(windowConfiguration, settings: configuration, headless: isHeadless,
                                     threaded: drawsOnCompositorThread, vsync: vsync, origin: clock.origin,
                                     modalFor: parent?.windowID)
        window.attach(to: self)
        windows.append(window)
        parent?.addModalWindow(window)
        if let rootController { window.host.setRootController(rootController) }
        // Screen readers see it as a frame of its own, after the others.
        accessibility?.addWindow(host: window.host, title: windowConfiguration.title,
                                 windowPlacement: window.host.compositor.window?.windowPlacement)
        return window
    }

    /// A window closed (`Window.close()`): the loop forgets it.
    func windowDidClose(_ window: Window) {
        windows.removeAll { $0 === window }
        accessibility?.removeWindow(host: window.host)
    }

    /// A window's title changed (`Window.setTitle`): screen readers read the new one.
    func windowTitleDidChange(_ window: Window, to title: String) {
        accessibility?.setTitle(title, of: window.host)
    }

    /// Ends the loop when no window is left (`quitsWhenLastWindowCloses`): asked once a window's close
    /// is done, its `onClose` included, which may have opened another.
    func quitIfNoWindowIsLeft() {
        if windows.isEmpty && configuration.quitsWhenLastWindowCloses { isQuitting = true }
    }

    /// The application running in this process: the newest one made and not closed (nil before the
    /// first and once it closes). An `App`, a controller or a key handler reaches the window, the
    /// configuration and `quit()` through it: `Application.current?.quit()`.
    public private(set) static weak var current: Application?

    /// Opens the window (or the headless output) and shows `rootNode` filling it.
    public convenience init(configuration: Configuration = Configuration(), rootNode: Node) throws {
        try self.init(configuration: configuration, rootController: NodeController(node: rootNode))
    }

    /// Runs the app until its last window closes, `quit()` is called or `configuration.frames` have
    /// run; then, with `configuration.screenshot`, settles and writes the main window's screen. With
    /// a window it runs the event loop (`runEventLoop`): frames while there is something to do, a
    /// wait for events when there is not. Headless with a frame count, it runs that many frames back
    /// to back on its own time line (a frame of every open window each); headless without one, it
    /// settles every window and stops (there is no window to close).
    /// - Throws: `SettleTimeout` or a file error from the screenshot.
    public func run() throws {
        if isHeadless {
            if let frameLimit = configuration.frames {
                while !isQuitting && frameCount < frameLimit && !windows.isEmpty {
                    for window in windows where window.isOpen { frame(window, events: nil) }
                }
            } else {
                try settle()
            }
        } else {
            runEventLoop()
        }
        if let screenshot = configuration.screenshot {
            try settle()
            let url = try writeScreenshot(to: screenshot)
            TesseraLog.app.info("screenshot written to \(url.path)")
        }
    }

    /// Waits for the display's next frame (a window's `settle`).
    func waitForNextFrame() { clock.waitForNextFrame() }

    /// Ends `run()` after the current frame.
    public func quit() { isQuitting = true }

    /// Moves the pointer to `point` (main window points) as if the user had: for benchmarks and tests
    /// that need it inside the window.
    public func warpPointer(to point: Point) {
        compositor.window?.warpPointer(to: point)
    }

    /// Closes the app now: every window closes (`Window.close()`: overlays and their popup windows
    /// end, root controllers leave, `onClose` runs), the main one last, its compositor thread's window
    /// with it, and the loop quits. Harmless twice. An app that makes another `Application` in the same
    /// process closes the first one before: SDL's events are the process's, read by the thread that
    /// owns the windows.
    public func close() {
        isQuitting = true
        if Application.current === self { Application.current = nil }
        // An in-app file chooser still open ends its request: the app that showed it is going.
        presentedFileChooser?.finish(.failure(.stopped))
        accessibility?.stop()
        settingsPortal?.stop()
        desktopPortal.stop()
        for window in windows where window !== mainWindow { window.close() }
        // Last, as any window: its overlays (and their popup windows) end, its root controller leaves,
        // its compositor thread's window closes and its `onClose` runs.
        mainWindow.close()
        compositorThread?.stop()
    }

    isolated deinit {
        // The app leaves screen readers' desktop; the thread holds the windows: they close with the application.
        presentedFileChooser?.finish(.failure(.stopped))
        accessibility?.stop()
        settingsPortal?.stop()
        desktopPortal.stop()
        for window in windows { window.compositorThread?.stop() }
        compositorThread?.stop()
    }

    /// Runs one frame of the main window now with `events` (nil: whatever the platform has queued):
    /// at the clock's time with a window; headless, one frame interval after the host's last frame
    /// (so frames a test ran on the host directly keep one time line with these).
    @discardableResult
    public func frame(events: [InputEvent]? = nil) -> FrameRecord {
        frame(mainWindow, events: events)
    }

    /// Runs one frame of `window`, as `frame(events:)` does for the main one.
    @discardableResult
    func frame(_ window: Window, events: [InputEvent]?) -> FrameRecord {
        // Read from the platform, the user's input under a modal window was dropped as it was read
        // (and a compositor thread may have acted on what it forwarded before: kept); given, it goes here.
        let events = window.isBlockedByModalWindow ? events?.filter { !$0.isUserInput } : events
        return frame(window, events: events,
                     at: isHeadless && !drawsOnCompositorThread ? window.host.time + clock.frameInterval : clock.now)
    }

    /// One frame of `window`. A `.quit` from the platform ends the loop, unless it comes with a close
    /// request (SDL's echo of the last window's close: the close decides, see `Window.close()`); a
    /// close request closes the window after the frame.
    @discardableResult
    func frame(_ window: Window, events: [InputEvent]?, at time: Double) -> FrameRecord {
        let events = events ?? window.compositor.pollEvents()
        let closeRequested = events.contains(.closeRequested)
        // The quit SDL sends with the last window's close request is that close's: the window's close
        // decides (`quitIfNoWindowIsLeft`), after its `onClose`, which may open another window.
        if events.contains(.quit) && !closeRequested { isQuitting = true }
        let record = window.runFrame(events: events, at: time)
        // Whichever frame runs (the loop's, settling's, the app's own), it tells whether work off this
        // thread is still under way: the loop's quiet frame is owed only while it is.
        window.workWasPending = !window.host.pendingWork.excludingNetwork.isEmpty
        accessibility?.frameDidRun(record, hadEvents: !events.isEmpty, host: window.host)
        frameCount += 1
        Self.runMainActorJobs()
        window.onFrame?(record)
        if window === mainWindow { onFrame?(record) }
        if closeRequested { window.close() }
        return record
    }

    /// Runs frames until the screen shows the final state of the tree (see `NodeHost.settle`), for
    /// the main window and then every other open one. The frames take in input already read (with a
    /// compositor thread, what it read and may have acted on already).
    /// - Throws: `SettleTimeout` naming what was still pending when `timeout` seconds ran out.
    @discardableResult
    public func settle(timeout: Double = 10) throws -> Int {
        var frames = try mainWindow.settle(timeout: timeout)
        for window in windows where window !== mainWindow { frames += try window.settle(timeout: timeout) }
        return frames
    }

    /// The main window's screen as it is now, composited and read back.
    /// - Throws: `Failure` when the renderer cannot read its pixels back.
    public func capture() throws -> Bitmap {
        try mainWindow.capture()
    }

    /// Writes the screen as it is now to a PNG file, making its folder.
    /// - Returns: the file written.
    @discardableResult
    public func writeScreenshot(to path: String) throws -> URL {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try capture().writePNG(to: url.path)
        return url
    }

    /// Makes an app from `configuration` (with the environment's settings applied) and the controller
    /// `makeRoot` returns, and runs it. A failure to start or to finish is printed to standard error
    /// and ends the process with status 1.
    public static func run(_ configuration: Configuration = Configuration(),
                           _ makeRoot: () -> NodeController) {
        FontRegistry.shared.prepare()
        do {
            let app = try Application(configuration: configuration.applyingEnvironment(), rootController: makeRoot())
            try app.run()
        } catch {
            writeToStandardError("\(configuration.title): \(error)\n")
            exit(1)
        }
    }

    /// Runs what was queued for the main actor (tasks, `DispatchQueue.main` blocks): an SDL loop
    /// does not otherwise give them a turn. In an app that links Foundation this is one pass of the
    /// main run loop (its timers and sources run too); otherwise the main queue is drained directly.
    static func runMainActorJobs() {
        tessera_run_main_queue(1)
    }
}

/// An app as a type: `@main struct Feed: App { … }`. Its `main()` makes an `Application` with the
/// app's configuration and first controller and runs it.
/// - Thread: main
@MainActor
public protocol App {
    init()
    /// The window and run settings; the default is `Application.Configuration()`.
    var configuration: Application.Configuration { get }
    /// The first screen.
    func makeRootController() -> NodeController
    /// Called once the window is open and the first screen shown, before the first frame: the place
    /// to keep the application (to `quit()` from a shortcut, say) or set its `keyHandler`. The
    /// default does nothing; `Application.current` reaches it too.
    func didStart(_ application: Application)
}

extension App {
    public var configuration: Application.Configuration { Application.Configuration() }

    public func didStart(_ application: Application) {}

    /// Runs the app as `Application.run` does, calling `didStart` before the first frame.
    public static func main() {
        FontRegistry.shared.prepare()
        let app = Self()
        let configuration = app.configuration
        do {
            let application = try Application(configuration: configuration.applyingEnvironment(),
                                               rootController: app.makeRootController())
            app.didStart(application)
            try application.run()
        } catch {
            writeToStandardError("\(configuration.title): \(error)\n")
            exit(1)
        }
    }
}

/// What an application runs on: the renderer and video driver SDL gave it, the window's scale, the
/// display's refresh rate, and whether a compositor thread draws its frames.
/// - Thread: any (a value)
public struct RendererDescription: Sendable {
    public let rendererName: String
    public let videoDriverName: String
    public let graphicsDeviceName: String?
    public let scale: Double
    /// Where `scale` came from when the desktop set it (X11's `GDK_SCALE` or `Xft.dpi`), else nil.
    public var desktopScale: DesktopScale? = nil
    public let refreshRate: Double?
    public let compositorThread: Bool
}
