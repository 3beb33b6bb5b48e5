import Compositor
import CSDL
import Foundation
@testable import NodeRuntime
import XCTest
@testable import Tessera

/// Rows of text, each drawn into a bitmap of its own.
private final class AuditRows: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 300 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { TextNode("Audit row \(row): text drawn into a bitmap of its own",
                   attributes: TextAttributes(font: .system(size: 15))) }
    }
}

/// A list under a swatch whose colour changes while the window is minimized.
private final class ListAndSwatch: Node {
    let list = ListNode()
    let swatch = Node()
    let rows = AuditRows()

    override init() {
        super.init()
        list.frame = Rect(x: 0, y: 40, width: 320, height: 200)
        swatch.frame = Rect(x: 0, y: 0, width: 320, height: 40)
        swatch.backgroundColor = Color(rgb: 0x3366CC)
        addSubnode(list)
        addSubnode(swatch)
    }
}

/// Audit of a window taken out of sight (minimized) and back: what changes while it is out of sight,
/// several windows, the compositor's hand-offs.
@MainActor
final class WindowVisibilityAuditTests: XCTestCase {
    private func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            RunLoop.current.run(until: Date().addingTimeInterval(0.002))
        }
        return true
    }

    private func drawnAheadBytes(_ list: ListNode) -> Int {
        list.rowNodes.filter { $0.interfaceState.contains(.display) && !$0.interfaceState.contains(.visible) }
            .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
    }

    /// The bytes of texture the renderer holds, read where the renderer is (on the compositor thread
    /// after the frame it may be drawing, for a threaded app).
    private func rendererTextureBytes(_ app: Application) -> Int {
        guard let thread = app.mainWindow.compositorThread else { return app.compositor.liveTextureBytes }
        return thread.performAndWait(timeout: 5) { compositor, _ in compositor.liveTextureBytes } ?? -1
    }

    /// Runs frames until the tree settles; with `changed`, until the compositor thread has also taken
    /// the new commit in (what it shows is another snapshot).
    private func settle(_ app: Application, changed: Bool) throws {
        let shownBefore = app.mainWindow.compositorThread?.shownSnapshot
        try app.settle()
        if changed, let thread = app.mainWindow.compositorThread {
            XCTAssertTrue(waitUntil { app.frame(); return thread.shownSnapshot !== shownBefore },
                          "the compositor thread took the change in")
        }
    }

    /// A change while the window is minimized (a caret's blink, an animation, data arriving) draws
    /// nothing: the textures let go of stay gone until the window is restored; restored, it shows the
    /// change, drawn whole.
    func testAChangeWhileMinimizedUploadsNoTexturesAndTheRestoredWindowShowsIt() async throws {
        try checkChangeWhileMinimized(threaded: false)
    }

    /// The same with a compositor thread.
    func testOnACompositorThreadAChangeWhileMinimizedUploadsNoTextures() async throws {
        try checkChangeWhileMinimized(threaded: true)
    }

    private func checkChangeWhileMinimized(threaded: Bool) throws {
        let root = ListAndSwatch()
        root.list.dataSource = root.rows
        root.list.idleRangeDelay = nil
        var configuration = Application.Configuration.headless(size: Size(width: 320, height: 240))
        configuration.compositorThread = threaded
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        root.list.setContentOffset(1200, animated: false)
        try app.settle()
        XCTAssertTrue(waitUntil { app.frame(); return rendererTextureBytes(app) > 0 })

        app.frame(events: [.windowVisibilityChanged(false)])
        try settle(app, changed: false)
        XCTAssertEqual(rendererTextureBytes(app), 0, "minimized: the renderer's textures went")
        XCTAssertEqual(app.compositor.liveTextureBytes, 0)

        // Changes while minimized: a colour, and the list scrolled by the program.
        root.swatch.backgroundColor = Color(rgb: 0xCC3300)
        root.list.setContentOffset(1500, animated: false)
        try settle(app, changed: true)
        XCTAssertEqual(rendererTextureBytes(app), 0, "nothing is drawn (nor uploaded) for a minimized window")
        XCTAssertEqual(app.compositor.liveTextureBytes, 0, "the statistics say so")
        let aheadMinimized = drawnAheadBytes(root.list)

        app.frame(events: [.windowVisibilityChanged(true)])
        try settle(app, changed: false)
        XCTAssertTrue(waitUntil { app.frame(); return rendererTextureBytes(app) > 0 }, "restored: drawn again")
        let screen = try app.capture()
        XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 160, y: 20)), Color(rgb: 0xCC3300),
                       "restored, the window shows what changed while it was minimized")
        XCTAssertEqual(root.list.rangeMode, .full)
        XCTAssertGreaterThan(drawnAheadBytes(root.list), aheadMinimized, "restored, the list draws ahead of the scroll again (not stuck in its minimum range)")
    }
}

extension WindowVisibilityAuditTests {
    /// CPU seconds this process has used, user and system.
    private func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// An animation running in a minimized window on a compositor thread: nothing is drawn, and the
    /// thread does not look again and again either (it waits at rest). The process's CPU time over
    /// half a second of the UI thread idle is the measure (a thread looking without end takes it all).
    func testOnACompositorThreadAnAnimationWhileMinimizedKeepsTheThreadAtRest() async throws {
        let square = Node()
        square.backgroundColor = Color(rgb: 0x22AA44)
        square.frame = Rect(x: 0, y: 0, width: 120, height: 80)
        let root = Node()
        root.addSubnode(square)
        var configuration = Application.Configuration.headless(size: Size(width: 120, height: 80))
        configuration.compositorThread = true
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        let thread = try XCTUnwrap(app.mainWindow.compositorThread)
        app.frame(events: [.windowVisibilityChanged(false)])
        try app.settle()
        let shownBefore = thread.shownSnapshot
        let layer = try XCTUnwrap(square.layerIfLoaded)
        layer.animations = [.interpolating(.opacity, from: 0.2, to: 1, start: thread.now, duration: 120, curve: .linear)]
        XCTAssertTrue(waitUntil { app.frame(); return thread.shownSnapshot !== shownBefore }, "the thread took the animation in")
        let presentsBefore = thread.presentCount
        let cpuBefore = processCPUSeconds()
        usleep(500_000)  // the UI thread idle: what the compositor thread takes meanwhile is measured
        let cpu = processCPUSeconds() - cpuBefore
        XCTAssertEqual(thread.presentCount, presentsBefore, "nothing presented while minimized")
        XCTAssertLessThan(cpu, 0.2, "the compositor thread rests while its only window is minimized")
        XCTAssertEqual(rendererTextureBytes(app), 0)

        app.frame(events: [.windowVisibilityChanged(true)])
        XCTAssertTrue(waitUntil { app.frame(); return thread.presentCount > presentsBefore + 2 },
                      "restored, the animation is drawn at the display's pace again")
    }
}

/// A seeded generator (SplitMix64), so that a failing sequence replays.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension WindowVisibilityAuditTests {
    /// Minimizes, restores, changes, scrolls and renderer resets in seeded orders: minimized and
    /// settled, the renderer holds no texture; in sight and settled, the screen shows the last change.
    func testSeededMinimizeRestoreAndChangesKeepTheScreenAndTexturesRight() async throws {
        for seed in [UInt64(1), 7, 42] {
            try replay(seed: seed, threaded: false)
        }
    }

    func testSeededMinimizeRestoreAndChangesOnACompositorThread() async throws {
        for seed in [UInt64(3), 11] {
            try replay(seed: seed, threaded: true)
        }
    }

    private func replay(seed: UInt64, threaded: Bool) throws {
        var random = SplitMix(state: seed)
        let root = ListAndSwatch()
        root.list.dataSource = root.rows
        root.list.idleRangeDelay = nil
        var configuration = Application.Configuration.headless(size: Size(width: 320, height: 240))
        configuration.compositorThread = threaded
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        var visible = true
        var color: UInt32 = 0x3366CC
        for step in 0..<30 {
            let what = "seed \(seed) step \(step)"
            var changed = false
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                app.frame(events: [.windowVisibilityChanged(false)])
                visible = false
            case 1:
                app.frame(events: [.windowVisibilityChanged(true)])
                visible = true
            case 2:
                // Out and back in one batch.
                app.frame(events: [.windowVisibilityChanged(false), .windowVisibilityChanged(true)])
                visible = true
            case 3:
                color = UInt32.random(in: 0..<0x100_0000, using: &random) | 0x80_0000
                root.swatch.backgroundColor = Color(rgb: color)
                changed = true
            case 4:
                root.list.setContentOffset(Double(Int.random(in: 0..<4000, using: &random)), animated: false)
            default:
                app.compositor.handleRendererReset()
            }
            try settle(app, changed: changed)
            if visible {
                XCTAssertTrue(waitUntil { app.frame(); return rendererTextureBytes(app) > 0 }, "in sight: drawn, \(what)")
                let screen = try app.capture()
                XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 160, y: 20)), Color(rgb: color), what)
            } else {
                XCTAssertEqual(rendererTextureBytes(app), 0, "minimized: no texture, \(what)")
                XCTAssertEqual(app.compositor.liveTextureBytes, 0, "minimized: the statistics say none, \(what)")
            }
        }
    }
}

/// Hostile `/proc` text: a mapping that ends before it starts, figures too large to be bytes. None of
/// them stops the process; none is taken as a figure.
final class MemoryReportHostileProcAuditTests: XCTestCase {
    func testAMappingEndingBeforeItStartsIsNotOne() {
        // The first mapping ends before it starts, right where the next one starts (a stack's guard
        // page and its stack, as a reader would take them).
        let smaps = """
        7f0000001000-7f0000000800 ---p 00000000 00:00 0
        Rss:                   4 kB
        7f0000000800-7f0000002000 rw-p 00000000 00:00 0
        Rss:                   8 kB
        """
        var memory = ProcessMemory()
        memory.take(mappings: ProcessMemory.parse(smaps))
        XCTAssertEqual(memory.stackBytes, 0, "no guard page made up from a mapping that is not one")
    }

    func testFiguresTooLargeForBytesAreNotTaken() {
        let huge = "\(Int.max / 512)"
        let smaps = """
        7f3000000000-7f3000a00000 r--p 00000000 fe:00 21 /usr/share/fonts/a.ttf
        Rss:                 \(huge) kB
        7f3000a00000-7f3000b00000 r--p 00000000 fe:00 22 /usr/share/fonts/b.ttf
        Rss:                 \(Int.max / 2048) kB
        7f3000b00000-7f3000c00000 r--p 00000000 fe:00 23 /usr/share/fonts/c.ttf
        Rss:                 \(Int.max / 2048) kB
        7f3000c00000-7f3000d00000 r--p 00000000 fe:00 24 /usr/share/fonts/d.ttf
        Rss:                 \(Int.max / 2048) kB
        """
        var memory = ProcessMemory()
        memory.take(mappings: ProcessMemory.parse(smaps))
        XCTAssertGreaterThanOrEqual(memory.fontBytes, 0)
        var status = ProcessMemory()
        status.take(status: "VmRSS:\t\(huge) kB\nRssAnon:\t-5 kB\nRssFile:\t12 kB\nThreads:\t3\n")
        XCTAssertEqual(status.rssBytes, 0, "a figure too large for bytes is not taken")
        XCTAssertEqual(status.anonymousBytes, 0, "nor a negative one")
        XCTAssertEqual(status.fileBytes, 12 * 1024)
        XCTAssertEqual(status.threads, 3)
    }

    /// An app's own figures, however large, stop nothing either.
    @MainActor
    func testAnAppsHugeFiguresAreSummedWithoutOverflow() async {
        let report = MemoryReport.measure(windows: [], appData: ["a": .max, "b": .max, "textures": .max])
        XCTAssertEqual(report.bytesByOwner["a"], .max)
        XCTAssertEqual(report.bytesByOwner["textures"], .max, "an app's key that is also an owner's: summed, saturated")
        XCTAssertEqual(report.bytesByOwner["heapOther"], 0)
        XCTAssertEqual(report.bytesByOwner["allocatorFree"], 0)
    }
}

/// Several windows: the process's caches empty when no window is in sight, and a window closed is
/// none in sight, though the app keeps its `Window`.
@MainActor
final class SeveralWindowsVisibilityAuditTests: XCTestCase {
    func testAClosedWindowKeptByTheAppDoesNotKeepTheCachesFromEmptying() async throws {
        let text = TextNode(String(repeating: "Cached layout of a window. ", count: 8),
                            attributes: TextAttributes(font: .system(size: 15)))
        text.frame = Rect(x: 0, y: 0, width: 300, height: 200)
        let root = Node()
        root.addSubnode(text)
        let app = try Application(configuration: .headless(size: Size(width: 300, height: 200)), rootNode: root)
        let side = try app.openWindow(configuration: .init(title: "side", size: Size(width: 80, height: 60), scale: 1),
                                      rootController: NodeController(node: Node()))
        try app.settle()
        side.close()
        try app.settle()
        // Hosts of other tests still alive are taken out of sight for this test, and back after.
        let others = NodeHost.liveHosts.compactMap(\.host)
            .filter { $0 !== app.host && $0 !== side.host && $0.isWindowVisible }
        for host in others { host.isWindowVisible = false }
        defer { for host in others { host.isWindowVisible = true } }
        XCTAssertGreaterThan(TextLayoutCache.shared.statistics.bytes, 0)

        app.frame(events: [.windowVisibilityChanged(false)])
        try app.settle()
        XCTAssertEqual(TextLayoutCache.shared.statistics.bytes, 0,
                       "the last window open minimized: no window is in sight (the closed one is none)")
        withExtendedLifetime(side) {}
    }
}

/// A popup window's minimize and restore are its menu's: no visibility change of its own.
@MainActor
final class PopupVisibilityAuditTests: XCTestCase {
    func testAPopupWindowsMinimizeAndRestoreSayNothing() async throws {
        var configuration = SDLWindow.Configuration(size: Size(width: 40, height: 30), headless: true)
        configuration.popup = .menu
        configuration.position = Point(x: 10, y: 10)
        let popup = try SDLWindow(configuration)
        popup.pushEvent(.input(.windowVisibilityChanged(false)))
        popup.pushEvent(.input(.windowVisibilityChanged(true)))
        let events = popup.pollEvents().filter {
            if case .input(.windowVisibilityChanged) = $0 { return true }
            return false
        }
        XCTAssertTrue(events.isEmpty, "\(events)")
    }
}

/// A minimized window comes back with no restore of its own (maximized straight from the taskbar, or
/// exposed: the window system wants it drawn): it is back in sight, since nothing is drawn for a window
/// out of sight.
@MainActor
final class BackInSightAuditTests: XCTestCase {
    func testAWindowMaximizedOrExposedStraightFromMinimizedIsBackInSight() async throws {
        for back in [SDL_WINDOWEVENT_MAXIMIZED, SDL_WINDOWEVENT_EXPOSED] {
            let window = try SDLWindow(.init(size: Size(width: 40, height: 30), headless: true))
            window.pushEvent(.input(.windowVisibilityChanged(false)))
            var event = SDL_Event()
            event.type = SDL_WINDOWEVENT.rawValue
            event.window.event = UInt8(back.rawValue)
            event.window.windowID = window.windowID.rawValue
            SDL_PushEvent(&event)
            let events = window.pollEvents().compactMap { event -> Bool? in
                if case let .input(.windowVisibilityChanged(visible)) = event { return visible }
                return nil
            }
            XCTAssertEqual(events, [false, true], "\(back)")
            // The restore after it: said no more.
            window.pushEvent(.input(.windowVisibilityChanged(true)))
            XCTAssertFalse(window.pollEvents().contains(.input(.windowVisibilityChanged(true))))
        }
    }
}

extension SeveralWindowsVisibilityAuditTests {
    /// A minimize in the same batch as the window's close, and a restore after it closed: the
    /// release goes before the close (on the compositor thread too), the restore draws nothing, and
    /// the main window goes on drawing.
    func testAMinimizeWithTheCloseAndARestoreAfterItAreHarmless() async throws {
        for threaded in [false, true] {
            var configuration = Application.Configuration.headless(size: Size(width: 120, height: 80))
            configuration.compositorThread = threaded
            let square = Node()
            square.backgroundColor = Color(rgb: 0x22AA44)
            square.frame = Rect(x: 0, y: 0, width: 120, height: 80)
            let root = Node()
            root.addSubnode(square)
            let app = try Application(configuration: configuration, rootNode: root)
            let side = try app.openWindow(configuration: .init(title: "side", size: Size(width: 80, height: 60), scale: 1),
                                          rootController: NodeController(node: TextNode("side")))
            try app.settle()
            app.frame(side, events: [.windowVisibilityChanged(false), .closeRequested])
            XCTAssertFalse(side.isOpen)
            side.frame(events: [.windowVisibilityChanged(true)])
            XCTAssertFalse(side.host.isWindowVisible, "a closed window stays out of sight")
            square.backgroundColor = Color(rgb: 0xAA2244)
            try app.settle()
            let screen = try app.capture()
            XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 60, y: 40)), Color(rgb: 0xAA2244), "threaded \(threaded)")
        }
    }
}

/// The desktop's scale from hostile X resources: said without stopping the process.
final class DesktopScaleHostileAuditTests: XCTestCase {
    func testAHugeXftDPIIsSaid() {
        for text in ["Xft.dpi: 1e20", "Xft.dpi:\t1e300", "Xft*dpi: 9223372036854775808"] {
            let scale = DesktopScale.resolve(environment: [:], resources: text)
            XCTAssertEqual(scale?.scale, 8, text)
            XCTAssertFalse(scale?.description.isEmpty ?? true, text)
        }
    }
}
