import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Tooltips: shown after the pointer rests on a node for the delay, below the pointer; gone when it
/// leaves or input arrives; the next one at once while browsing; read by screen readers.
@MainActor
final class ToolTipTests: XCTestCase {
    nonisolated(unsafe) private var host: NodeHost!
    private var time = 10.0
    private var archive: Node!
    private var pin: Node!

    override func setUp() async throws {
        Runtime.shared.setAppearance(Appearance())
        Runtime.shared.setTheme(.standard)
        host = try OffscreenRender.makeHost(size: Size(width: 400, height: 300)).0
        host.measuresLayoutInBackground = false
        let root = Node()
        root.backgroundColor = .white
        archive = Node()
        archive.isUserInteractionEnabled = true
        archive.frame = Rect(x: 20, y: 20, width: 100, height: 40)
        archive.toolTip = "Archive the chat"
        pin = Node()
        pin.isUserInteractionEnabled = true
        pin.frame = Rect(x: 140, y: 20, width: 100, height: 40)
        pin.toolTip = "Pin"
        root.addSubnode(archive)
        root.addSubnode(pin)
        host.setRootNode(root)
        frame()
    }

    override func tearDown() async throws {
        host.setRootNode(nil)
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
    }

    private func frame(_ events: [InputEvent] = [], after seconds: Double = 1.0 / 60) {
        time += seconds
        host.runFrame(time: time, events: events)
    }

    func testItShowsAfterTheDelayBelowThePointerAndGoesWhenThePointerLeaves() async throws {
        frame([.pointerMoved(Point(x: 50, y: 40))])
        let rested = time
        XCTAssertNil(host.shownToolTip)
        let due = try XCTUnwrap(host.nextTimerTime(after: time), "the event loop is told when to wake for it")
        XCTAssertEqual(due, rested + host.toolTipDelay, accuracy: 1e-9)
        frame(after: host.toolTipDelay - 0.1)
        XCTAssertNil(host.shownToolTip, "not before the delay")
        frame(after: 0.1)
        let shown = try XCTUnwrap(host.shownToolTip)
        XCTAssertEqual(shown.kind, .tooltip)
        XCTAssertGreaterThan(shown.contentFrame.minY, 40, "below the pointer")
        XCTAssertEqual(shown.contentFrame.minX, 50, accuracy: 0.5)
        XCTAssertNil(host.nextTimerTime(after: time), "nothing more to wake for")

        // A tooltip takes no input: a press at its place reaches what is under it.
        let tree = host.accessibilityTree(title: "t")
        XCTAssertEqual(tree.root.children.last?.role, .toolTip)
        XCTAssertEqual(tree.root.children.last?.label, "Archive the chat")

        frame([.pointerMoved(Point(x: 300, y: 200))])
        XCTAssertNil(host.shownToolTip, "gone when the pointer leaves its node")
        XCTAssertTrue(host.overlays.isEmpty)
    }

    func testInputHidesItUntilThePointerLeavesTheNode() async throws {
        frame([.pointerMoved(Point(x: 50, y: 40))])
        frame(after: host.toolTipDelay)
        XCTAssertNotNil(host.shownToolTip)
        frame([.keyDown(.character("a"), modifiers: [])])
        XCTAssertNil(host.shownToolTip)
        frame([.pointerMoved(Point(x: 55, y: 42))])
        frame(after: host.toolTipDelay * 2)
        XCTAssertNil(host.shownToolTip, "not again while the pointer stays on the node")
        frame([.pointerMoved(Point(x: 300, y: 200))])
        frame([.pointerMoved(Point(x: 50, y: 40))])
        frame(after: host.toolTipDelay)
        XCTAssertNotNil(host.shownToolTip, "back once the pointer came back")
        frame([.pointerDown(Point(x: 50, y: 40), button: 1)])
        XCTAssertNil(host.shownToolTip, "a press hides it")
        frame([.pointerUp(Point(x: 50, y: 40), button: 1)])
    }

    func testMovingToAnotherNodeWithATooltipShowsItAtOnce() async throws {
        frame([.pointerMoved(Point(x: 50, y: 40))])
        frame(after: host.toolTipDelay)
        XCTAssertEqual((host.shownToolTip?.content as? ToolTipNode)?.textNode.attributedText.string, "Archive the chat")
        frame([.pointerMoved(Point(x: 150, y: 40))])
        frame()
        XCTAssertEqual((host.shownToolTip?.content as? ToolTipNode)?.textNode.attributedText.string, "Pin")
    }

    func testScreenReadersReadTheTooltipAsTheDescription() async {
        XCTAssertEqual(archive.accessibilityDescription().hint, "Archive the chat")
        archive.accessibilityHint = "Moves it to the archive"
        XCTAssertEqual(archive.accessibilityDescription().hint, "Moves it to the archive", "a hint of the app's own wins")
        archive.toolTip = ""
        XCTAssertNil(archive.toolTip, "an empty tooltip is none")
    }

    func testTheBubbleIsDrawnInTheThemesLabelColourWithItsText() async throws {
        frame([.pointerMoved(Point(x: 50, y: 40))])
        frame(after: host.toolTipDelay)
        var clock = time
        settle(host, time: &clock)
        time = clock
        let shown = try XCTUnwrap(host.shownToolTip)
        let image = try XCTUnwrap(OffscreenRender.capture(host))
        let folder = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("overlays")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try image.writePNG(to: folder.appendingPathComponent("tooltip.png").path)
        let bubble = shown.contentFrame
        var dark = 0, light = 0
        for y in stride(from: Int(bubble.minY) + 2, to: Int(bubble.maxY) - 2, by: 1) {
            for x in stride(from: Int(bubble.minX) + 2, to: Int(bubble.maxX) - 2, by: 1) {
                let (red, green, blue) = Self.rgb(image.pixel(x: x, y: y))
                if red < 60 && green < 60 && blue < 60 { dark += 1 }
                if red > 180 && green > 180 && blue > 180 { light += 1 }
            }
        }
        let area = Int(bubble.width - 4) * Int(bubble.height - 4)
        XCTAssertGreaterThan(dark, area / 2, "the bubble is filled with the label colour")
        XCTAssertGreaterThan(light, 20, "its text is drawn in the background colour")
        let outside = Self.rgb(image.pixel(x: Int(bubble.maxX) + 10, y: Int(bubble.maxY) + 10))
        XCTAssertGreaterThan(outside.0, 240, "the root shows around it")
    }

    private static func rgb(_ argb: UInt32) -> (Int, Int, Int) {
        (Int(argb >> 16 & 0xFF), Int(argb >> 8 & 0xFF), Int(argb & 0xFF))
    }
}
