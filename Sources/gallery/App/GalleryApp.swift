import Compositor
import Foundation
import NodeRuntime

/// What the app was asked to show.
struct GalleryOptions {
    enum Screen: String, CaseIterable { case chats, thread, photos, text }
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
}

/// The gallery: four screens in tabs (chats with a navigation stack into threads, a thread, photos,
/// text), the perf overlay on F2, Ctrl+Q to quit, driven by a frame loop on the UI thread.
/// - Thread: main
final class GalleryApp {
    let options: GalleryOptions
    let data: ChatData
    let host: NodeHost
    let backend: SDLRenderBackend?
    let tabs: TabController
    let tabBar: TabBarNode
    let chats: ChatsController
    let chatsNavigation: NavigationController
    let overlay = PerfOverlayNode()
    let history = FrameHistory()
    private(set) var overlayShown = false
    /// Set by Ctrl+Q: the frame loop stops after the current frame.
    private(set) var quitRequested = false
    private var time = 0.0
    /// The display workers' time per frame, for the overlay's workers lane.
    private var workerTime = WorkerTimeMeter()

    /// Builds the app over `host` (tests pass one over a headless backend).
    init(options: GalleryOptions, data: ChatData, host: NodeHost, backend: SDLRenderBackend? = nil) throws {
        self.options = options
        self.data = data
        self.host = host
        self.backend = backend
        Runtime.shared.contentsScale = host.compositor.scale
        Runtime.shared.forcesSynchronousDisplay = options.synchronous
        // The starting point: the first frame's worker time is only what ends during it.
        _ = workerTime.millisecondsSinceLastReading(Runtime.shared.scheduler.statistics)

        chats = ChatsController(data: data, rows: options.rows)
        chatsNavigation = NavigationController(rootController: chats)
        let firstThread = ThreadController(chat: data.chats.first { $0.messages.count > 12 } ?? data.chats[0], data: data)
        let photos = try PhotosController(data: data)
        let text = TextShowcaseController(data: data)
        tabBar = TabBarNode(titles: ["Chats", "Thread", "Photos", "Text"])
        tabs = TabController(controllers: [chatsNavigation, firstThread, photos, text], tabBar: tabBar, tabBarHeight: 48,
                             selectedIndex: GalleryOptions.Screen.allCases.firstIndex(of: options.screen) ?? 0)
        tabBar.select(tabs.selectedIndex)
        tabBar.onSelect = { [weak self] index in self?.tabs.select(index) }
        tabs.selectionDidChange = { [weak self] index in self?.tabBar.select(index) }
        chats.openChat = { [weak self] chat in
            guard let self else { return }
            let thread = ThreadController(chat: chat, data: self.data)
            self.host.addFrameParticipant(thread.list)
            self.chatsNavigation.push(thread, animated: true)
        }
        for screen in [chats, firstThread, photos, text] as [ListScreenController] { host.addFrameParticipant(screen.list) }
        host.keyHandler = { [weak self] key, modifiers in
            guard let self else { return false }
            if key == .function(2) { self.toggleOverlay(); return true }
            if key == .character("q") && modifiers.contains(.control) { self.quitRequested = true; return true }
            return false
        }
        host.setRootController(tabs)
        if options.showsOverlay { toggleOverlay() }
    }

    /// Makes the window (or the headless output) and the app, ready to run.
    static func make(options: GalleryOptions, assets: URL) throws -> GalleryApp {
        let data = try ChatData(assets: assets)
        let backend = try SDLRenderBackend(.init(title: "Tessera gallery", size: options.size, scale: options.scale,
                                                 headless: options.headless, resizable: true,
                                                 renderDriver: options.renderDriver))
        let compositor = Compositor(backend: backend, scale: backend.scale,
                                    configuration: .init(clearColor: Color(rgb: 0x12161B)))
        // Tests read this line to tell a real window (x11, opengl) from the dummy driver's.
        report("gallery: renderer \(backend.rendererName), video driver \(backend.videoDriverName), " +
               "\(Int(options.size.width))×\(Int(options.size.height)) points at " +
               String(format: "%gx", backend.scale) + (options.scale == nil ? " (the window's)" : " (forced)"))
        return try GalleryApp(options: options, data: data, host: NodeHost(compositor: compositor), backend: backend)
    }

    /// Shows or hides the perf overlay, and says so on standard output (a test driving a real window
    /// waits for that line).
    func toggleOverlay() {
        setOverlayShown(!overlayShown)
        Self.report("gallery: perf overlay \(overlayShown ? "shown" : "hidden")")
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

    /// One frame at the frame clock's `time` with `events`.
    @discardableResult
    func frame(time: Double, events: [InputEvent]) -> FrameRecord {
        self.time = time
        if events.contains(where: { if case .resized = $0 { return true } else { return false } }) {
            host.viewportDidChange()
            if overlayShown { setOverlayShown(false); setOverlayShown(true) }
        }
        for case let .contentsScaleChanged(scale) in events {
            // The overlay is not in the root's tree: it takes the window's scale from the default.
            Runtime.shared.contentsScale = scale
            overlay.contentsScale = scale
        }
        let record = host.runFrame(time: time, events: events)
        history.append(record, workerMilliseconds: workerTime.millisecondsSinceLastReading(Runtime.shared.scheduler.statistics),
                       wallTime: Double(MonotonicClock.nanoseconds()) / 1e9)
        if overlayShown {
            overlay.update(history: history, record: record, checkerboardPercent: record.checkerboardPercent, time: time)
            overlay.layoutIfNeeded()
        }
        return record
    }

    /// Runs frames until nothing is left to measure, draw, decode or commit and the list shown is at
    /// rest (bounded), so a headless screenshot shows finished contents.
    func settle(maximumFrames: Int = 120) {
        var quiet = 0
        for _ in 0..<maximumFrames {
            Runtime.shared.scheduler.waitUntilIdle()
            time += 1.0 / 60
            let record = frame(time: time, events: [])
            quiet = isQuiet(after: record) ? quiet + 1 : 0
            if quiet >= 3 { return }
        }
    }

    /// True when the frame of `record` left nothing to do: no draw started or committed, nothing queued
    /// or running on the workers, no animation, and the list shown not moving.
    private func isQuiet(after record: FrameRecord) -> Bool {
        record.displaysStarted == 0 && record.commitsApplied == 0 && record.mainQueueItems == 0
            && Runtime.shared.pendingCommitCount == 0 && Runtime.shared.scheduler.queueDepth == 0
            && Runtime.shared.scheduler.runningCount == 0 && Runtime.shared.animator.count == 0
            && !(visibleList?.isScrolling ?? false)
    }

    /// The frame loop: real 60 Hz pacing with a display, a virtual clock headless. Stops on quit (the
    /// window closing or Ctrl+Q), or after `frames` frames, where it writes the screenshot if one was
    /// asked for. It reports the first screen ready once three frames in a row had nothing left to do
    /// (a test driving a real window waits for that line before it clicks).
    func run() throws {
        let clock: FrameClock = options.headless ? VirtualFrameClock() : RealFrameClock()
        var count = 0
        var quietFrames = 0
        var reportedReady = false
        while true {
            let events = host.compositor.pollEvents()
            if events.contains(.quit) { break }
            let record = frame(time: clock.now, events: events)
            if quitRequested { break }
            count += 1
            if !reportedReady {
                quietFrames = isQuiet(after: record) ? quietFrames + 1 : 0
                if quietFrames >= 3 {
                    reportedReady = true
                    Self.report("gallery: screen ready after \(count) frames")
                }
            }
            if let frames = options.frames, count >= frames { break }
            clock.waitForNextFrame()
        }
        if let screenshot = options.screenshot {
            // What the last events started (a row measured, a draw, an insert animation) finishes
            // first, so the picture does not depend on how busy the machine was.
            settle()
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
        settle()
        let url = try host.compositor.writeScreenshot(of: host.rootLayer, to: path)
        print("gallery: screenshot written to \(url.path)")
    }
}
