import Tessera
import Foundation

/// What the app was asked to show.
struct GalleryOptions {
    enum Screen: String, CaseIterable { case chats, thread, photos, text, settings }
    var screen: Screen = .chats
    var rows = 1000
    /// Pixels per point forced with `--scale`; nil follows the window's display.
    var scale: Double?
    var frames: Int?
    var screenshot: String?
    var synchronous = false
    var headless = false
    var size = Size(width: 960, height: 720)
    var showsOverlay = false
    /// The SDL renderer to ask for (`--renderer`).
    var renderDriver = RenderDriver.auto
    /// Composite on a thread of its own (`--compositor-thread`); nil: in a window yes, headless no.
    var compositorThread: Bool?
    /// Follow the desktop's appearance (`--follow-appearance`); nil: in a window yes, headless no.
    var followsAppearance: Bool?
    /// Serve the assets over HTTP on 127.0.0.1 and load the chat avatars and the threads' older
    /// messages from there (`--serve-assets`).
    var servesAssets = false
    /// An asset server to load the chat avatars and the threads' older messages from
    /// (`--assets-url`), instead of the files.
    var assetsURL: URL?
    /// Certificate authorities trusted for HTTPS besides the system's (`--trust-certificate`), as PEM.
    var trustedCertificates: [String] = []
    /// Seconds until the other side answers a message sent (`--reply-after`); nil: no answers.
    var replyDelay: Double?
    /// The chat list's row whose chat opens in a window of its own at start (`--open-chat-window`).
    var chatWindowRow: Int?
    /// Say where the input method's caret is and what the focused field holds (`--report-text-input`).
    var reportsTextInput = false
    /// Say each frame presented (its drawable size, drawn whole or a region, layers drawn) and the
    /// window's scale as it changes (`--report-presents`).
    var reportsPresents = false
    /// Append a memory report by owner to this file at each SIGUSR1 (`--memory-log`).
    var memoryLog: String?
}

/// The gallery: four screens in tabs (chats with a navigation stack into threads, a thread, photos,
/// text), the perf overlay on F2, Ctrl+Q to quit, run by an `Application`.
/// - Thread: main
@MainActor
final class GalleryApp {
    let options: GalleryOptions
    let data: ChatData
    let application: Application
    let tabs: TabController
    let tabBar: TabBarNode
    let chats: ChatsController
    let chatsNavigation: NavigationController
    let settings: SettingsController
    let photos: PhotosController
    let overlay = PerfOverlayNode()
    /// The asset server, when `options.servesAssets`; it serves until the app goes away.
    let assetServer: AssetServer?
    /// Where the server answers and the loaders that fetch from it, when `options.servesAssets`.
    let servedAssets: ServedAssets?
    let history = FrameHistory()
    private(set) var overlayShown = false
    /// The display workers' time per frame, for the overlay's workers lane.
    private var workerTime = WorkerTimeMeter()
    /// The viewport and scale the overlay was last placed for.
    private var overlayViewport = Size.zero
    /// Frames in a row that left nothing to do, until the first screen is reported ready.
    private var settledFrames = 0
    private var reportedReady = false
    /// The menus, dialogs and tooltips last said to be shown (`reportSurfaces`).
    private var reportedSurfaces: [Overlay] = []
    /// While true the overlay keeps its picture: it redraws with every frame, so nothing could settle.
    private var overlayFrozen = false
    /// Milliseconds from the process's start to the first frame a gallery in it presented.
    static var firstPresentMilliseconds: Double?
    /// The first frame presented was reported (time to first present, from the process's start).
    private var reportedFirstPresent = false

    var host: NodeHost { application.host }

    /// Builds the app into `application` (tests pass a headless one).
    init(options: GalleryOptions, data: ChatData, application: Application) throws {
        // Every screen asks the theme for its colours by name.
        Runtime.shared.setTheme(Palette.theme)
        reportedAppearanceGeneration = Runtime.shared.appearanceGeneration
        self.options = options
        self.data = data
        self.application = application
        if options.servesAssets {
            let server = try AssetServer(folder: data.assets, data: data)
            assetServer = server
            servedAssets = ServedAssets(baseURL: server.baseURL, trustedCertificates: options.trustedCertificates)
            Self.report("gallery: serving assets at \(server.baseURL.absoluteString)")
        } else if let url = options.assetsURL {
            assetServer = nil
            let base = url.absoluteString.hasSuffix("/") ? url : url.appendingPathComponent("")
            servedAssets = ServedAssets(baseURL: base, trustedCertificates: options.trustedCertificates)
            Self.report("gallery: loading assets from \(base.absoluteString)")
        } else {
            assetServer = nil
            servedAssets = nil
        }
        Runtime.shared.forcesSynchronousDisplay = options.synchronous
        // The starting point: the first frame's worker time is only what ends during it.
        _ = workerTime.millisecondsSinceLastReading(Runtime.shared.scheduler.statistics)

        chats = ChatsController(data: data, rows: options.rows)
        chats.rowConfiguration.servedAssets = servedAssets
        chatsNavigation = NavigationController(rootController: chats)
        let firstThread = ThreadController(chat: data.chats.first { $0.messages.count > 12 } ?? data.chats[0], data: data)
        firstThread.servedHistory = servedAssets.map { ServedHistory(assets: $0) }
        photos = try PhotosController(data: data)
        let text = TextShowcaseController(data: data)
        settings = SettingsController(stickerPath: data.photoPath("stickers/sun.gif"))
        // The kit's tab bar: "1  Chats" on the tab, "Chats" to a screen reader, "Show Chats (1)" as the
        // tooltip (the digit is the tab controller's key), the gallery's own hairline over it.
        tabBar = TabBarNode(items: ["Chats", "Thread", "Photos", "Text", "Settings"].enumerated().map { index, title in
            TabBarNode.Item(title: title, shortcut: "\(index + 1)", displayTitle: "\(index + 1)  \(title)")
        }, title: "Screens")
        tabBar.hairlineColor = Palette.tabBarLine
        tabs = TabController(controllers: [chatsNavigation, firstThread, photos, text, settings], tabBar: tabBar, tabBarHeight: 48,
                             selectedIndex: GalleryOptions.Screen.allCases.firstIndex(of: options.screen) ?? 0)
        tabBar.selectedIndex = tabs.selectedIndex
        tabBar.onSelect = { [weak self] index in self?.tabs.select(index) }
        tabs.selectionDidChange = { [weak self] index in
            self?.tabBar.selectedIndex = index
            self?.refreshMenus()
        }
        chats.openChat = { [weak self] chat in
            guard let self else { return }
            self.chatsNavigation.push(self.makeThread(chat), animated: true)
        }
        host.keyHandler = { [weak self] key, modifiers in
            guard let self else { return false }
            if key == .function(2) { self.toggleOverlay(); return true }
            if key == .enter && modifiers == .control, let chat = self.chats.chat(holding: self.host.focusedNode) {
                self.openChatWindow(chat)
                return true
            }
            if key == .function(8) { Self.blockUIThread(for: Self.demonstratedStall); return true }
            if key == .character("q") && modifiers.contains(.control) { self.application.quit(); return true }
            return false
        }
        application.onFrame = { [weak self] record in self?.didRunFrame(record) }
        if options.reportsPresents {
            reportedScale = host.contentsScale
            // A compositor thread presents on its own: said from there, as each frame goes out.
            application.compositorThread?.setFrameObserver { frame in Self.reportPresent(frame.statistics) }
        }
        ThreadController.defaultReplyDelay = options.replyDelay
        // A click on a message's notification (or its button) comes back here.
        application.desktopPortal.setNotificationActionHandler { action in
            Self.report("gallery: notification \(action.notificationID) action \(action.action)")
        }
        host.menuBar = makeMenuBar()
        host.setRootController(tabs)
        if options.showsOverlay { toggleOverlay() }
        if let row = options.chatWindowRow { openChatWindow(data.chat(forRow: max(0, min(row, options.rows - 1)))) }
    }

    /// A thread screen for `chat`, loading its older messages from the asset server when there is one.
    private func makeThread(_ chat: ChatData.Chat) -> ThreadController {
        let thread = ThreadController(chat: chat, data: data)
        thread.servedHistory = servedAssets.map { ServedHistory(assets: $0) }
        return thread
    }

    /// The chat windows open now, in the order they opened.
    private(set) var chatWindows: [Application.Window] = []
    /// The About window, modal for the main one, while it is open (Help › About the Gallery).
    var aboutWindow: Application.Window?

    /// Opens `chat` in a window of its own (Ctrl+Enter on a chat, `--open-chat-window`; Ctrl+W in it
    /// closes it), and says so on standard output (a test driving the gallery waits for that line).
    func openChatWindow(_ chat: ChatData.Chat) {
        do {
            let window = try application.openWindow(
                configuration: .init(title: chat.title, size: Size(width: 480, height: 640), scale: options.scale),
                rootController: makeThread(chat))
            chatWindows.append(window)
            // Ctrl+W closes the chat window (the window manager's close button does too).
            window.host.keyHandler = { [weak window] key, modifiers in
                guard key == .character("w") && modifiers == .control, let window else { return false }
                window.close()
                return true
            }
            window.onClose = { [weak self, weak window] in
                self?.chatWindows.removeAll { $0 === window }
                Self.report("gallery: chat window closed: \(chat.title)")
            }
            Self.report("gallery: chat window opened: \(chat.title)")
        } catch {
            Self.report("gallery: cannot open a window for \(chat.title): \(error)")
        }
    }

    deinit {
        assetServer?.stop()
    }

    /// Makes the window (or the headless output) and the app, ready to run.
    static func make(options: GalleryOptions, assets: URL) throws -> GalleryApp {
        // The 3.4 MB dataset is read and decoded on another thread while the window and its renderer
        // are made (each takes tens of milliseconds); the first screen needs both.
        let loaded = Locked<Result<ChatData, any Error>?>(nil)
        let loading = DispatchGroup()
        loading.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            let result = Result { try ChatData(assets: assets) }
            loaded.withLock { $0 = result }
            loading.leave()
        }
        var configuration = Application.Configuration(title: "Tessera gallery", size: options.size,
                                                      scale: options.scale, headless: options.headless,
                                                      renderer: options.renderDriver,
                                                      backgroundColor: Color(rgb: 0x12161B), frames: options.frames)
        configuration.compositorThread = options.compositorThread
        configuration.followsSystemAppearance = options.followsAppearance
        let application = try Application(configuration: configuration, rootController: nil)
        loading.wait()
        let data = try loaded.withLock { $0! }.get()
        let renderer = application.renderer
        // Tests read this line to tell a real window (x11, opengl) from the dummy driver's.
        report("gallery: renderer \(renderer.rendererName), video driver \(renderer.videoDriverName), " +
               "\(Int(options.size.width))×\(Int(options.size.height)) points at " +
               String(format: "%gx", renderer.scale)
               + (options.scale != nil ? " (forced)" : renderer.desktopScale.map { " (the desktop's: \($0))" } ?? " (the window's)")
               + (renderer.compositorThread ? ", compositor thread" : ""))
        report("gallery: appearance \(Runtime.shared.appearance)"
               + (application.settingsPortal.map { " (settings portal: \($0.status))" } ?? " (not following the desktop)"))
        return try GalleryApp(options: options, data: data, application: application)
    }

    /// Shows or hides the perf overlay, and says so on standard output (a test driving a real window
    /// waits for that line).
    func toggleOverlay() {
        setOverlayShown(!overlayShown)
        Self.report("gallery: perf overlay \(overlayShown ? "shown" : "hidden")")
        refreshMenus()
    }

    /// How long F8 blocks the UI thread.
    static let demonstratedStall = 3.0

    /// F8: blocks the UI thread in a busy loop for `seconds`, as slow app code would, saying so
    /// before and after. With a compositor thread the window goes on scrolling (wheel, fling) and
    /// animating meanwhile; without one it freezes. A window test drives it from outside: the first
    /// line gives the block's end on the system's monotonic clock (`CLOCK_MONOTONIC`, in seconds),
    /// which another process on the machine reads alike.
    static func blockUIThread(for seconds: Double) {
        let end = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        report(String(format: "gallery: blocking the UI thread for %.1f s (until %.6f s, monotonic)",
                      seconds, Double(end) / 1e9))
        var spins = 0
        while MonotonicClock.nanoseconds() < end { spins &+= 1 }
        report("gallery: UI thread unblocked after \(spins > 0 ? "the stall" : "nothing")")
    }

    /// Prints a status line and flushes it, so that a reader at the other end of a pipe sees it while
    /// the gallery runs.
    static func report(_ line: String) {
        print(line)
        fflush(nil)
    }

    private func setOverlayShown(_ shown: Bool) {
        overlayShown = shown
        if shown {
            overlayViewport = host.viewportSize
            overlay.contentsScale = host.contentsScale
            overlay.frame = PerfOverlayNode.frame(in: host.viewportSize)
            overlay.enterInterfaceState(.onScreen) {
                host.rootLayer.addSublayer(overlay.layer)
                overlay.layoutIfNeeded()
            }
        } else {
            overlay.setInterfaceState([])
            overlay.layerIfLoaded?.removeFromSuperlayer()
        }
    }

    /// One frame at `time` with `events`, as the application's loop runs it (tests step time by hand).
    @discardableResult
    func frame(time: Double, events: [InputEvent]) -> FrameRecord {
        let record = host.runFrame(time: time, events: events)
        didRunFrame(record)
        return record
    }

    /// After each frame: the frame history, the overlay (placed again when the window changed size or
    /// scale), and the line saying the first screen is ready once three frames in a row had nothing
    /// left to do, or one settled frame left nothing for another (a test driving a real window waits
    /// for that line before it clicks).
    /// `Runtime.appearanceGeneration` at the last appearance reported. (main thread only)
    private var reportedAppearanceGeneration = Runtime.shared.appearanceGeneration

    /// Says on standard output when a menu, a dialog or a tooltip opens or ends (with its role and
    /// label), for a test driving the gallery from outside.
    private func reportSurfaces() {
        // Held, not named by address: a surface that ended and a new one could share an address.
        let shown = host.overlays
        guard shown.count != reportedSurfaces.count || zip(shown, reportedSurfaces).contains(where: { $0 !== $1 }) else { return }
        // The surface's element: the content, or the first element inside it (a dialog's card on its dim).
        func element(_ node: Node) -> AccessibilityDescription? {
            let description = node.accessibilityDescription()
            if description.isElement && description.role != .none { return description }
            for subnode in node.subnodes { if let found = element(subnode) { return found } }
            return nil
        }
        for overlay in shown where !reportedSurfaces.contains(where: { $0 === overlay }) {
            let description = element(overlay.content) ?? overlay.content.accessibilityDescription()
            let frame = overlay.contentFrame
            Self.report("gallery: surface shown: \(description.role.rawValue) \"\(description.label)\" at "
                        + "\(Int(frame.minX)),\(Int(frame.minY)) \(Int(frame.width))×\(Int(frame.height))")
        }
        if reportedSurfaces.contains(where: { old in !shown.contains { $0 === old } }) {
            Self.report("gallery: surfaces now \(host.overlays.count)")
        }
        reportedSurfaces = shown
    }

    /// The window's scale last said (`--report-presents`). (main thread only)
    private var reportedScale = 0.0

    /// Says a frame presented (`--report-presents`): "gallery: presented W×H at Sx whole|region X,Y W×H,
    /// N layers", its drawable size, the scale it was drawn at, whether it was drawn whole or only a
    /// region of it again (and the region handed to the window, where that was less), and the layers
    /// it drew. Any thread: a compositor thread says its own frames.
    nonisolated static func reportPresent(_ statistics: FrameStatistics) {
        // Textures lost since the frame before (a renderer made anew): said on a line of its own.
        if statistics.rendererResets > 0 { print("gallery: renderer reset before the next frame (\(statistics.rendererResets))") }
        let drawn = statistics.redrawnRegion.map { "region \($0.x),\($0.y) \($0.width)×\($0.height)" } ?? "whole"
        let sent = statistics.presentedRegion.map { ", sent \($0.x),\($0.y) \($0.width)×\($0.height)" } ?? ""
        print("gallery: presented \(statistics.outputPixelWidth)×\(statistics.outputPixelHeight) at "
              + String(format: "%gx", statistics.scale) + " \(drawn)\(sent), \(statistics.layersDrawn) layers")
        fflush(nil)
    }

    /// What `reportTextInput` last said. (main thread only)
    private var reportedTextInput: [String: String] = [:]

    /// Says on standard output, as each changes: where the input method's caret is (the rectangle
    /// given to the platform, in window points), and the thread screen's composer: where it is (window
    /// points) and whether it has the focus, its text and its composition; for a test driving an input
    /// method from outside.
    private func reportTextInput() {
        func format(_ rect: Rect) -> String {
            String(format: "%.1f,%.1f %.1f×%.1f", rect.minX, rect.minY, rect.width, rect.height)
        }
        var lines: [String: String] = [:]
        lines["caret"] = host.textInputCaret.map { "text input caret at \(format($0))" } ?? "text input off"
        if let thread = tabs.selectedController as? ThreadController, thread.composer.interfaceState.contains(.visible) {
            let field = thread.composer
            let origin = field.convertFromRoot(.zero)
            lines["composer"] = "composer at \(format(Rect(x: -origin.x, y: -origin.y, width: field.bounds.width, height: field.bounds.height)))"
                + (host.focusedNode === field ? ", focused" : "")
            lines["text"] = "composer text \"\(field.text)\""
            lines["composition"] = field.markedText.map { "composition \"\($0)\"" } ?? "no composition"
        }
        for key in ["composer", "text", "composition", "caret"] {
            guard let line = lines[key], reportedTextInput[key] != line else { continue }
            reportedTextInput[key] = line
            Self.report("gallery: \(line)")
        }
    }

    private func didRunFrame(_ record: FrameRecord) {
        history.append(record, workerMilliseconds: workerTime.millisecondsSinceLastReading(Runtime.shared.scheduler.statistics),
                       wallTime: Double(MonotonicClock.nanoseconds()) / 1e9)
        // The overlay is not in the root's tree: it takes the window's scale and size by hand.
        Runtime.shared.contentsScale = host.contentsScale
        if overlayShown && !overlayFrozen { updateOverlay(record) }
        // The desktop's appearance changed (the settings portal): said once per change, for a test
        // driving the gallery from outside.
        let appearanceGeneration = Runtime.shared.appearanceGeneration
        if appearanceGeneration != reportedAppearanceGeneration {
            reportedAppearanceGeneration = appearanceGeneration
            Self.report("gallery: appearance \(Runtime.shared.appearance)")
        }
        reportSurfaces()
        if options.reportsTextInput { reportTextInput() }
        if options.reportsPresents {
            if host.contentsScale != reportedScale {
                reportedScale = host.contentsScale
                Self.report(String(format: "gallery: scale %gx", host.contentsScale))
            }
            if application.compositorThread == nil && record.compositor.presented { Self.reportPresent(record.compositor) }
        }
        // A compositor thread presents on its own: its first present, however long ago it was.
        let threadPresented = application.compositorThread?.firstPresentNanoseconds
        if !reportedFirstPresent && (record.compositor.presented || threadPresented != nil) {
            reportedFirstPresent = true
            let ago = threadPresented.map { Double(MonotonicClock.nanoseconds() &- $0) / 1e6 } ?? 0
            if let milliseconds = LaunchClock.millisecondsSinceLaunch().map({ max(0, $0 - ago) }) {
                if Self.firstPresentMilliseconds == nil { Self.firstPresentMilliseconds = milliseconds }
                Self.report(String(format: "gallery: first frame presented %.0f ms after launch", milliseconds))
            }
        }
        if !reportedReady {
            settledFrames = host.isSettled ? settledFrames + 1 : 0
            // At rest the loop runs no more frames: settled with nothing left to do is ready too.
            if settledFrames >= 3 || (host.isSettled && !host.needsFrame) {
                reportedReady = true
                let launch = LaunchClock.millisecondsSinceLaunch().map { String(format: ", %.0f ms after launch", $0) } ?? ""
                Self.report("gallery: screen ready after \(history.frameCount) frames\(launch)")
            }
        }
    }

    /// Shows the figures of `record` and the frames before it in the overlay (placed again when the
    /// window changed size or scale).
    private func updateOverlay(_ record: FrameRecord, force: Bool = false) {
        var force = force
        if overlayViewport != host.viewportSize || overlay.contentsScale != host.contentsScale {
            setOverlayShown(false)
            setOverlayShown(true)
            force = true
        }
        overlay.update(history: history, record: record, checkerboardPercent: record.checkerboardPercent,
                       time: record.time, compositorThread: application.compositorThread, force: force)
        overlay.layoutIfNeeded()
    }

    /// Runs frames until everything is measured, decoded, drawn and committed and nothing moves, and
    /// nothing asked of the asset server is still on its way. The overlay holds still meanwhile, then
    /// shows the frames settling ran and settles once more for that last draw.
    func settle() throws {
        overlayFrozen = true
        defer { overlayFrozen = false }
        try application.settle()
        try settleServedAssets()
        if overlayShown {
            updateOverlay(host.lastFrame, force: true)
            try application.settle()
        }
    }

    /// The frame loop (the application's): until the window closes or Ctrl+Q, or for `frames` frames,
    /// then the screenshot if one was asked for.
    func run() throws {
        var memoryLog: MemoryLog?
        if let path = options.memoryLog {
            let datasetBytes = data.estimatedBytes
            let application = application
            memoryLog = MemoryLog(file: URL(fileURLWithPath: path)) {
                MemoryReport.measure(windows: application.windows, appData: ["chatDataset": datasetBytes])
            }
            try memoryLog?.start()
        }
        try application.run()
        withExtendedLifetime(memoryLog) {}
        if let screenshot = options.screenshot {
            // What the last events started (a row measured, a draw, an insert animation) finishes
            // first, so the picture does not depend on how busy the machine was.
            try writeScreenshot(to: screenshot)
        }
        if let list = visibleList {
            // After the screenshot, so a test can render the same offset and compare.
            Self.report("gallery: list on screen at offset \(list.contentOffset)")
        }
        if !history.samples.isEmpty {
            let main = history.percentiles(\.totalMilliseconds)
            let interference = history.percentiles(\.interferenceMilliseconds)
            print(String(format: "gallery: %d frames; main thread p50 %.2f ms, p99 %.2f ms; %d over budget; "
                         + "interference p50 %.2f ms, p99 %.2f ms",
                         history.frameCount, main.median, main.percentile(0.99), history.framesOverBudget,
                         interference.median, interference.percentile(0.99)))
        }
    }

    /// The list of the screen shown: the selected tab's, or the top of its navigation stack's.
    var visibleList: ListNode? {
        let selected = tabs.selectedController
        let shown = (selected as? NavigationController)?.topController ?? selected
        return (shown as? ListScreenController)?.list
    }

    /// Settles, then writes the composited frame as a PNG.
    func writeScreenshot(to path: String) throws {
        try settle()
        let url = try application.writeScreenshot(to: path)
        print("gallery: screenshot written to \(url.path)")
    }
}
