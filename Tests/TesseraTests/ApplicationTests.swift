import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A coloured row for the lists below. - Thread: any
private final class SwatchNode: Node, NodeDrawing, @unchecked Sendable {
    let color: Color
    init(_ color: Color, height: Double) {
        self.color = color
        super.init()
        preferredSize = Size(width: 0, height: height)
    }
    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        Size(width: constrainedSize.width, height: preferredSize?.height ?? 0)
    }
    func drawParameters() -> Color { color }
    static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: color)
    }
}

/// Holds back the making of rows while closed (their blocks wait on the workers). - Thread: any
private final class RowGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = true
    func close() { condition.lock(); isOpen = false; condition.unlock() }
    func open() { condition.lock(); isOpen = true; condition.broadcast(); condition.unlock() }
    func pass() {
        condition.lock()
        // Bounded: a test that forgets to open it fails instead of hanging.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !isOpen && condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// Rows of alternating colours, each `height` points. - Thread: main
@MainActor
private final class SwatchSource: ListDataSource {
    let colors: [Color]
    let height: Double
    var gate: RowGate?
    init(colors: [Color], height: Double) { self.colors = colors; self.height = height }
    func numberOfRows(in list: ListNode) -> Int { colors.count }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let color = colors[row], height = height, gate = gate
        return {
            gate?.pass()
            return SwatchNode(color, height: height)
        }
    }
}

/// A node that never stops moving: `settle` cannot finish while it is on screen.
private final class RestlessNode: Node, FrameParticipant, @unchecked Sendable {
    func frameWillStartDisplays(at time: Double) {}
    func frameWillComposite(_ record: inout FrameRecord) {}
    var isSettled: Bool { false }
}

/// An app as a type that quits itself on Ctrl+Q, through the application `didStart` gave it.
private struct QuittingApp: App {
    nonisolated(unsafe) static var started: Application?
    var configuration: Application.Configuration {
        var configuration = Application.Configuration.headless(size: Size(width: 40, height: 30))
        configuration.frames = 50
        configuration.accessibility = false
        return configuration
    }
    func makeRootController() -> NodeController { NodeController(node: Node()) }
    func didStart(_ application: Application) {
        QuittingApp.started = application
        application.host.keyHandler = { key, modifiers in
            guard key == .character("q"), modifiers == .control else { return false }
            Application.current?.quit()
            return true
        }
        // Ctrl+Q on the window's queue, read by the first frame.
        (application.compositor.window as? SDLWindow)?.pushEvent(.input(.keyDown(.character("q"), modifiers: .control)))
    }
}

/// The application entry point, headless: the one call that makes the host and runs frames, lists
/// that take part in frames by themselves, settling, capturing, quitting, and main-actor jobs.
@MainActor
final class ApplicationTests: XCTestCase {
    private let red = Color(rgb: 0xD03030), blue = Color(rgb: 0x3050D0), background = Color(rgb: 0x202020)

    private func listApp(rows: Int = 40) throws -> (Application, ListNode, SwatchSource) {
        let source = SwatchSource(colors: (0..<rows).map { $0.isMultiple(of: 2) ? red : blue }, height: 50)
        let list = ListNode()
        list.dataSource = source
        var configuration = Application.Configuration.headless(size: Size(width: 200, height: 300))
        configuration.backgroundColor = background
        return (try Application(configuration: configuration, rootNode: list), list, source)
    }

    /// Making an application starts reading the fonts in the background before its first layout.
    func testTheApplicationPreparesTheFontsBeforeItsFirstLayout() async throws {
        let app = try Application(configuration: .headless(size: Size(width: 200, height: 100)), rootController: nil)
        XCTAssertTrue(FontRegistry.shared.hasStartedPreparing)
        _ = app
    }

    func testAListShowsItsRowsWithoutBeingRegistered() async throws {
        let (app, list, source) = try listApp()
        try app.settle()
        XCTAssertTrue(app.host.frameParticipants.contains { $0 === list }, "the list joined the host's frames by itself")
        let screen = try app.capture()
        // Rows 0–5 fill the 300-point screen, alternating red and blue, 50 points each.
        for row in 0..<6 {
            let pixel = screen.pixel(x: 100, y: row * 50 + 25)
            XCTAssertEqual(Color(premultipliedARGB: pixel), source.colors[row], "row \(row)")
        }
        withExtendedLifetime(source) {}
    }

    func testAListLeavesTheFramesWhenItLeavesTheScreen() async throws {
        let (app, list, source) = try listApp()
        try app.settle()
        app.host.setRootNode(Node())
        app.frame()
        XCTAssertFalse(app.host.frameParticipants.contains { $0 === list })
        withExtendedLifetime(source) {}
    }

    func testAFlingMovesTheListAndSettlingWaitsForItToStop() async throws {
        let (app, list, source) = try listApp()
        try app.settle()
        list.fling(velocity: 2000)
        XCTAssertTrue(list.isScrolling)
        let frames = try app.settle()
        XCTAssertFalse(list.isScrolling)
        XCTAssertGreaterThan(frames, 10, "the fling ran over many frames")
        XCTAssertGreaterThan(list.contentOffset, 100)
        // What is on screen is the rows at the offset the fling reached.
        let screen = try app.capture()
        let top = Int(list.contentOffset.rounded())
        for y in stride(from: 10, to: 300, by: 50) {
            let row = (top + y) / 50
            XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 100, y: y)), source.colors[row], "at y \(y), row \(row)")
        }
    }

    func testSettlingThrowsAndSaysWhatIsStillMoving() async throws {
        let node = RestlessNode()
        let app = try Application(configuration: .headless(size: Size(width: 100, height: 100)), rootNode: node)
        XCTAssertThrowsError(try app.settle(timeout: 0.2)) { error in
            let timeout = error as? SettleTimeout
            XCTAssertNotNil(timeout)
            XCTAssertEqual(timeout?.pending.movingParticipants, 1)
            XCTAssertTrue("\(error)".contains("1 lists moving"), "\(error)")
        }
    }

    func testCaptureShowsTheRootOverTheBackground() async throws {
        let root = Node()
        let square = Node()
        square.backgroundColor = red
        square.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        root.addSubnode(square)
        var configuration = Application.Configuration.headless(size: Size(width: 60, height: 40))
        configuration.backgroundColor = background
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        let screen = try app.capture()
        XCTAssertEqual(screen.width, 60)
        XCTAssertEqual(screen.height, 40)
        XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 20, y: 20)), red)
        XCTAssertEqual(Color(premultipliedARGB: screen.pixel(x: 50, y: 30)), background)
    }

    func testMainActorTasksRunBetweenFrames() throws {
        let app = try Application(configuration: .headless(size: Size(width: 50, height: 50)), rootNode: Node())
        let ran = Locked(false)
        Task { @MainActor in ran.withLock { $0 = true } }
        XCTAssertFalse(ran.withLock { $0 })
        app.frame()
        XCTAssertTrue(ran.withLock { $0 }, "the frame gave the main actor's queue a turn")
    }

    func testQuitEndsTheLoop() async throws {
        var configuration = Application.Configuration.headless(size: Size(width: 50, height: 50))
        configuration.frames = 1000
        let app = try Application(configuration: configuration, rootNode: Node())
        app.onFrame = { [unowned app] _ in if app.frameCount == 3 { app.quit() } }
        try app.run()
        XCTAssertEqual(app.frameCount, 3)
        XCTAssertTrue(app.isQuitting)
    }

    /// An app reaches its running application: `Application.current`, and an `App`'s `didStart`.
    func testAnAppReachesItsRunningApplication() async throws {
        let first = try Application(configuration: .headless(size: Size(width: 40, height: 30)), rootNode: Node())
        XCTAssertTrue(Application.current === first)
        let second = try Application(configuration: .headless(size: Size(width: 40, height: 30)), rootNode: Node())
        XCTAssertTrue(Application.current === second, "the newest one")
        second.close()
        XCTAssertNil(Application.current, "closed")
        first.close()

        QuittingApp.started = nil
        QuittingApp.main()
        let started = try XCTUnwrap(QuittingApp.started, "didStart was called")
        XCTAssertTrue(started.isQuitting, "the app quit from its own key handler")
        XCTAssertEqual(started.frameCount, 1, "after the frame that took the key, not at the frame limit")
    }

    /// A reload keeps the row the user looks at where it is, though every row is measured again
    /// from estimates far from their heights; `.contentOffset` keeps the points instead.
    func testAReloadKeepsTheFirstVisibleRowInPlace() async throws {
        let (app, list, source) = try listApp(rows: 200)
        defer { app.host.setRootController(nil); withExtendedLifetime(source) {} }
        list.estimatedRowHeight = 10
        list.reloadData()
        try app.settle()
        list.scroll(to: 120, at: .top, animated: false)
        try app.settle()
        list.setContentOffset(list.contentOffset + 17, animated: false)
        try app.settle()
        let before = try XCTUnwrap(list.visibleRows)
        let screenY = list.geometry.offset(ofRow: before.lowerBound) - list.contentOffset
        XCTAssertEqual(before.lowerBound, 120)
        list.reloadData()
        try app.settle()
        XCTAssertEqual(list.visibleRows?.lowerBound, 120, "the same first row")
        XCTAssertEqual(list.geometry.offset(ofRow: 120) - list.contentOffset, screenY, accuracy: 0.5, "in the same place")

        let points = list.contentOffset
        list.reloadData(anchor: .contentOffset)
        XCTAssertEqual(list.contentOffset, min(points, list.maximumOffset), "the offset in points, kept (clamped)")
        try app.settle()
    }

    /// The End key brings the last row to the bottom of the list and the list rests there, though the
    /// rows it passes and reaches are measured shorter than their estimates on the way (a list once
    /// came to rest 35 points past its end).
    func testTheEndKeyRestsAtTheEndThoughRowsMeasureShorterOnTheWay() async throws {
        for (estimate, threaded) in [(120.0, false), (20.0, false), (120.0, true), (20.0, true)] {
            let source = SwatchSource(colors: (0..<400).map { $0.isMultiple(of: 2) ? red : blue }, height: 50)
            let gate = RowGate()
            source.gate = gate
            let list = ListNode()
            list.dataSource = source
            var configuration = Application.Configuration.headless(size: Size(width: 200, height: 300))
            configuration.compositorThread = threaded
            configuration.accessibility = false
            let app = try Application(configuration: configuration, rootNode: list)
            defer { app.host.setRootController(nil); app.close(); withExtendedLifetime(source) {} }
            list.estimatedRowHeight = estimate
            list.reloadData()
            try app.settle()
            // The rows near the end are made (and measured) only once the slide there has arrived.
            gate.close()
            XCTAssertTrue(list.handleKey(.end))
            for _ in 0..<60 { app.frame() }
            gate.open()
            try app.settle()
            XCTAssertEqual(list.contentOffset, list.maximumOffset, accuracy: 0.5, "estimate \(estimate), threaded \(threaded): at the end")
            XCTAssertEqual(list.visibleRows?.upperBound, 399)
            XCTAssertEqual(list.geometry.offset(ofRow: 399) + 50 - list.contentOffset, 300, accuracy: 0.5,
                           "estimate \(estimate): the last row's bottom at the list's bottom")
        }
    }

    func testRunWritesTheSettledScreenWhenAskedTo() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-app-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let root = Node()
        root.backgroundColor = blue
        var configuration = Application.Configuration.headless(size: Size(width: 30, height: 20))
        configuration.screenshot = path
        try Application(configuration: configuration, rootNode: root).run()
        let written = try Bitmap(contentsOfFile: path)
        XCTAssertEqual(written.width, 30)
        XCTAssertEqual(Color(premultipliedARGB: written.pixel(x: 15, y: 10)), blue)
    }

    func testTheEnvironmentConfiguresARun() async {
        let base = Application.Configuration(title: "t")
        let configured = base.applyingEnvironment(["TESSERA_HEADLESS": "1", "TESSERA_FRAMES": "12",
                                                   "TESSERA_SCREENSHOT": "/tmp/x.png", "TESSERA_SCALE": "2"])
        XCTAssertEqual(configured.headless, true)
        XCTAssertEqual(configured.frames, 12)
        XCTAssertEqual(configured.screenshot, "/tmp/x.png")
        XCTAssertEqual(configured.scale, 2)
        let ignored = base.applyingEnvironment(["TESSERA_FRAMES": "many", "TESSERA_SCALE": "nan", "TESSERA_HEADLESS": "0"])
        XCTAssertNil(ignored.frames)
        XCTAssertNil(ignored.scale)
        XCTAssertEqual(ignored.headless, false)
        XCTAssertEqual(base.applyingEnvironment(["TESSERA_RENDERER": "software"]).renderer, .software)
        XCTAssertEqual(base.applyingEnvironment(["TESSERA_RENDERER": "opengl"]).renderer, .opengl)
        XCTAssertEqual(base.applyingEnvironment(["TESSERA_RENDERER": "vulkan"]).renderer, base.renderer, "unknown: ignored")
    }
}
