import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// A node that logs its touches (with their buttons and click counts) and hover callbacks, and may
/// ask for a cursor.
private final class PointerLogNode: Node, @unchecked Sendable {
    let name: String
    let log: EventLog
    var touches: [Touch] = []

    init(_ name: String, log: EventLog, frame: Rect, interactive: Bool = true) {
        self.name = name
        self.log = log
        super.init()
        self.frame = frame
        isUserInteractionEnabled = interactive
    }

    override func touchesBegan(_ touch: Touch) { touches.append(touch) }
    override func touchesEnded(_ touch: Touch) { touches.append(touch) }
    override func touchesCancelled(_ touch: Touch) { touches.append(touch) }
    override func pointerEntered() { log.record("+\(name)") }
    override func pointerExited() { log.record("-\(name)") }
}

/// Mouse buttons, click counts, hover and the cursor, through the host on a virtual clock.
@MainActor
final class PointerInputTests: XCTestCase {
    nonisolated(unsafe) private var host: NodeHost!
    nonisolated(unsafe) private var backend: RecordingRenderBackend!
    private var time = 0.0

    override func setUp() {
        super.setUp()
        let made = MainActor.assumeIsolated { UncheckedBox(makeHost(width: 400, height: 300)) }
        (host, backend) = made.value
    }

    override func tearDown() {
        let host = self.host!
        MainActor.assumeIsolated {
            host.setRootNode(nil)
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func frame(_ events: [InputEvent] = []) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    private func click(_ point: Point, button: Int = 1, clicks: Int = 1) {
        frame([.pointerDown(point, button: button, clicks: clicks)])
        frame([.pointerUp(point, button: button)])
    }

    // MARK: Buttons and clicks

    func testOnlyThePrimaryButtonTapsUnlessTheRecognizerAsks() async {
        let log = EventLog()
        let root = PointerLogNode("root", log: log, frame: .zero, interactive: false)
        let button = PointerLogNode("button", log: log, frame: Rect(x: 10, y: 10, width: 100, height: 40))
        root.addSubnode(button)
        host.setRootNode(root)
        var taps: [Int] = []
        let tap = TapGestureRecognizer { taps.append(($0 as! TapGestureRecognizer).clickCount) }
        let contextTap = TapGestureRecognizer { _ in taps.append(-1) }
        contextTap.allowedButtons = [.secondary]
        button.addGestureRecognizer(tap)
        button.addGestureRecognizer(contextTap)
        frame()

        let point = Point(x: 50, y: 30)
        click(point, button: 3)
        XCTAssertEqual(taps, [-1], "a right click reaches only the recognizer that asked for it")
        click(point, button: 2)
        XCTAssertEqual(taps, [-1], "a middle click is no tap")
        click(point, button: 1)
        XCTAssertEqual(taps, [-1, 1])
        // The node itself sees every button, and each touch carries its own.
        XCTAssertEqual(button.touches.map(\.button), [.secondary, .secondary, .middle, .middle, .primary, .primary])
        XCTAssertEqual(button.touches.map(\.phase), [.began, .ended, .began, .ended, .began, .ended])
    }

    func testAnotherButtonWhileOneIsDownBelongsToTheTouchThatIsDown() async {
        let log = EventLog()
        let node = PointerLogNode("node", log: log, frame: Rect(x: 0, y: 0, width: 200, height: 200))
        host.setRootNode(node)
        var taps = 0
        node.addGestureRecognizer(TapGestureRecognizer { _ in taps += 1 })
        frame()
        let point = Point(x: 50, y: 50)
        frame([.pointerDown(point, button: 1)])
        frame([.pointerDown(point, button: 3)])
        frame([.pointerUp(point, button: 3)])
        XCTAssertEqual(node.touches.map(\.phase), [.began], "the right button neither restarts nor ends the touch")
        frame([.pointerUp(point, button: 1)])
        XCTAssertEqual(node.touches.map(\.phase), [.began, .ended])
        XCTAssertEqual(taps, 1)
    }

    func testTheClickCountReachesTouchesAndADoubleClickRecognizer() async {
        let log = EventLog()
        let node = PointerLogNode("node", log: log, frame: Rect(x: 0, y: 0, width: 200, height: 200))
        host.setRootNode(node)
        var singles: [Int] = []
        var doubles: [Int] = []
        let single = TapGestureRecognizer { singles.append(($0 as! TapGestureRecognizer).clickCount) }
        let double = TapGestureRecognizer { doubles.append(($0 as! TapGestureRecognizer).clickCount) }
        double.numberOfClicksRequired = 2
        node.addGestureRecognizer(double)
        node.addGestureRecognizer(single)
        frame()

        let point = Point(x: 50, y: 50)
        click(point, clicks: 1)
        XCTAssertEqual(doubles, [], "one click is not a double-click")
        XCTAssertEqual(singles, [1])
        click(point, clicks: 2)
        XCTAssertEqual(doubles, [2], "the second press of a double-click")
        // With no failure requirement between them the single-click recognizer sees every press too,
        // as a UIKit tap recognizer does.
        XCTAssertEqual(singles, [1, 2])
        click(point, clicks: 3)
        XCTAssertEqual(doubles, [2, 3])
        XCTAssertEqual(node.touches.map(\.clickCount), [1, 1, 2, 2, 3, 3], "every event of a touch carries its press's count")
    }

    // MARK: Hover

    func testHoverEntersOutermostFirstAndExitsInnermostFirst() async {
        let log = EventLog()
        let root = PointerLogNode("root", log: log, frame: .zero, interactive: false)
        let panel = PointerLogNode("panel", log: log, frame: Rect(x: 0, y: 0, width: 200, height: 100), interactive: false)
        let button = PointerLogNode("button", log: log, frame: Rect(x: 10, y: 10, width: 50, height: 30))
        let other = PointerLogNode("other", log: log, frame: Rect(x: 250, y: 10, width: 50, height: 30))
        panel.addSubnode(button)
        root.addSubnode(panel)
        root.addSubnode(other)
        host.setRootNode(root)
        frame()

        frame([.pointerMoved(Point(x: 20, y: 20))])
        XCTAssertEqual(log.names, ["+root", "+panel", "+button"])
        XCTAssertTrue(host.hoveredNode === button)
        frame([.pointerMoved(Point(x: 30, y: 25))])
        XCTAssertEqual(log.names.count, 3, "moving within the button changes nothing")
        frame([.pointerMoved(Point(x: 260, y: 20))])
        XCTAssertEqual(log.names.suffix(3), ["-button", "-panel", "+other"], "the root stays hovered")
        // The panel alone is not interactive: over it, nothing is hovered.
        frame([.pointerMoved(Point(x: 150, y: 80))])
        XCTAssertEqual(log.names.suffix(2), ["-other", "-root"])
        XCTAssertNil(host.hoveredNode)

        // While a button is down the chain stays; on release it catches up.
        frame([.pointerMoved(Point(x: 20, y: 20))])
        let beforePress = log.names.count
        frame([.pointerDown(Point(x: 20, y: 20), button: 1)])
        frame([.pointerMoved(Point(x: 260, y: 20))])
        XCTAssertEqual(log.names.count, beforePress, "no hover changes while dragging")
        frame([.pointerUp(Point(x: 260, y: 20), button: 1)])
        XCTAssertEqual(log.names.suffix(3), ["-button", "-panel", "+other"])

        frame([.pointerLeftWindow])
        XCTAssertEqual(log.names.suffix(2), ["-other", "-root"])
        XCTAssertNil(host.hoveredNode)
    }

    // MARK: The cursor

    func testTheCursorComesFromTheHoveredChainAndIsSetOnlyWhenItChanges() async throws {
        TextFixtures.useRepositoryFonts()
        Runtime.shared.contentsScale = 1
        let log = EventLog()
        let root = PointerLogNode("root", log: log, frame: .zero, interactive: false)
        let canvas = PointerLogNode("canvas", log: log, frame: Rect(x: 200, y: 0, width: 200, height: 300))
        canvas.cursor = .crosshair
        var text = AttributedText("Plain words then ", attributes: TextFixtures.plain())
        var link = TextFixtures.plain(color: TextFixtures.accent)
        link.link = "https://example.com"
        text.append("a link", attributes: link)
        let label = TextNode(attributedText: text)
        label.frame = Rect(origin: Point(x: 10, y: 10), size: label.calculateSizeThatFits(Size(width: 180, height: .infinity)))
        root.addSubnode(label)
        root.addSubnode(canvas)
        host.setRootNode(root)
        frame()
        XCTAssertEqual(host.cursor, .arrow)

        let linkRect = try XCTUnwrap(label.textLayout.rects(forLink: "https://example.com", inWidth: label.bounds.width).first)
        let overLink = Point(x: 10 + linkRect.midX, y: 10 + linkRect.midY)
        frame([.pointerMoved(overLink)])
        XCTAssertEqual(host.cursor, .hand)
        frame([.pointerMoved(Point(x: overLink.x + 1, y: overLink.y))])
        let overText = Point(x: 14, y: 10 + linkRect.midY)
        XCTAssertNil(label.textHit(at: Point(x: 4, y: linkRect.midY)), "the first words are plain")
        frame([.pointerMoved(overText)])
        XCTAssertEqual(host.cursor, .iBeam)
        frame([.pointerMoved(Point(x: overText.x + 2, y: overText.y))])
        frame([.pointerMoved(Point(x: 300, y: 150))])
        XCTAssertEqual(host.cursor, .crosshair)
        frame([.pointerMoved(Point(x: 100, y: 250))])
        XCTAssertEqual(host.cursor, .arrow, "nothing hovered")
        frame()
        XCTAssertEqual(backend.cursorChanges, [.hand, .iBeam, .crosshair, .arrow],
                       "one call per change of shape, none for moves that keep it")
    }

    /// Hovering a text whose layout is being measured again (its text just changed) measures nothing
    /// on the UI thread: until the new layout arrives the text has no link to show a hand for, and the
    /// cursor is right at the first frame after it does.
    func testHoverNeverMeasuresATextWhoseLayoutIsPending() async throws {
        TextFixtures.useRepositoryFonts()
        Runtime.shared.contentsScale = 1
        func text(linkFirst: Bool) -> AttributedText {
            var link = TextFixtures.plain(color: TextFixtures.accent)
            link.link = "https://example.com"
            var text = AttributedText(linkFirst ? "" : "Plain words then ", attributes: TextFixtures.plain())
            text.append("a link", attributes: link)
            text.append(linkFirst ? " then plain words" : "", attributes: TextFixtures.plain())
            return text
        }
        let label = TextNode(attributedText: text(linkFirst: true))
        let root = SpecNode("root") { _ in label.inset(EdgeInsets(top: 10, left: 10, bottom: 10, right: 10)) }
        XCTAssertTrue(host.measuresLayoutInBackground)
        host.setRootNode(root)
        func settleLayout() {
            for _ in 0..<3 {
                Node.backgroundLayoutQueue.sync(flags: .barrier) {}
                host.runtime.scheduler.waitUntilIdle()
                frame()
            }
        }
        settleLayout()
        let before = try XCTUnwrap(label.textLayout.rects(forLink: "https://example.com").first)
        frame([.pointerMoved(Point(x: 10 + before.midX, y: 10 + before.midY))])
        XCTAssertEqual(host.cursor, .hand)

        // The link moves to the end of the line; the pointer goes where it will be.
        label.attributedText = text(linkFirst: false)
        let reference = TextLayout.measure(text(linkFirst: false), width: label.bounds.width)
        let after = try XCTUnwrap(reference.rects(forLink: "https://example.com", inWidth: label.bounds.width).first)
        let counts = TextWorkCounters.current
        frame([.pointerMoved(Point(x: 10 + after.midX, y: 10 + after.midY))])
        XCTAssertEqual(TextWorkCounters.since(counts).layoutsMeasured, 0, "hover measured no text on the UI thread")
        XCTAssertNotEqual(host.cursor, .hand, "no link is known while the layout is pending")
        settleLayout()
        XCTAssertEqual(host.cursor, .hand, "the new layout puts the link under the pointer")
    }
}

/// Carries the host and backend made on the main actor out of `assumeIsolated` (the same thread).
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
