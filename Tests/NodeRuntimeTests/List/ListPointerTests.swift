import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A list row holding a text with one link, `link-<identity>`, inset by 10 points.
private final class LinkRowNode: Node, @unchecked Sendable {
    let text: TextNode

    init(identity: Int, opened: EventLog) {
        var attributed = AttributedText("Row \(identity): read ", attributes: TextFixtures.plain())
        var link = TextFixtures.plain(color: TextFixtures.accent)
        link.link = "link-\(identity)"
        attributed.append("the guide", attributes: link)
        attributed.append(" today.", attributes: TextFixtures.plain())
        text = TextNode(attributedText: attributed)
        super.init()
        text.linkTapHandler = { opened.record($0) }
        addSubnode(text)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        text.inset(EdgeInsets(all: 10))
    }
}

/// A node that scrolls with the wheel and records what reached it.
private final class WheelRecordingNode: Node, WheelScrollable, @unchecked Sendable {
    var received: [(dx: Double, dy: Double)] = []
    func scrollWheel(dx: Double, dy: Double) -> Bool {
        received.append((dx, dy))
        return true
    }
}

/// Touches, the wheel, hover and the cursor over a list whose rows hold links: the rows are not the
/// list's subnodes, so all of it goes through the row's event parent.
@MainActor
final class ListPointerTests: XCTestCase {
    private let opened = EventLog()

    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// 60 link rows in a 300 × 200 list.
    private func makeLinkList() -> ListHarness {
        let source = TestListSource(count: 60, height: 40)
        let opened = opened
        source.makeNode = { identity, _ in LinkRowNode(identity: identity, opened: opened) }
        var harness = ListHarness(width: 300, height: 200, source: source)
        harness.settle()
        return harness
    }

    private func row(_ harness: ListHarness, _ row: Int) throws -> LinkRowNode {
        try XCTUnwrap(harness.list.nodeForRow(row) as? LinkRowNode, "row \(row) has its node")
    }

    /// The middle of row `row`'s link, in window points.
    private func linkPoint(_ harness: ListHarness, row index: Int) throws -> Point {
        let node = try row(harness, index)
        let rect = try XCTUnwrap(node.text.textLayout.rects(forLink: "link-\(index)", inWidth: node.text.bounds.width).first)
        let top = harness.list.frameOfRow(index).minY - harness.list.contentOffset
        let point = Point(x: node.text.frame.minX + rect.midX, y: top + node.text.frame.minY + rect.midY)
        XCTAssertEqual(node.text.textHit(at: node.text.convertFromRoot(point))?.target, .link("link-\(index)"),
                       "the point is on the link")
        return point
    }

    // MARK: Arbitration

    func testAClickOnARowsLinkOpensItAndDoesNotSelectTheRow() async throws {
        var harness = makeLinkList()
        var selected: [Int] = []
        harness.list.onSelectRow = { selected.append($0) }
        let point = try linkPoint(harness, row: 1)
        // Within the slop: a wobble of 4 points is still a click.
        harness.frame([.pointerDown(point, button: 1)])
        harness.frame([.pointerMoved(Point(x: point.x + 3, y: point.y - 2))])
        harness.frame([.pointerUp(point, button: 1)])
        XCTAssertEqual(opened.names, ["link-1"])
        XCTAssertEqual(selected, [], "the link's click is not a selection")
        XCTAssertEqual(harness.list.contentOffset, 0)

        // Beside the row's content (its inset), a click selects the row.
        let inset = Point(x: 3, y: harness.list.frameOfRow(2).midY)
        harness.frame([.pointerDown(inset, button: 1)])
        harness.frame([.pointerUp(inset, button: 1)])
        XCTAssertEqual(selected, [2])
        XCTAssertEqual(opened.names, ["link-1"])
    }

    func testADragThatStartsOnALinkScrollsTheListAndTheLinkDoesNotOpen() async throws {
        var harness = makeLinkList()
        let point = try linkPoint(harness, row: 2)
        harness.frame([.pointerDown(point, button: 1)])
        harness.frame([.pointerMoved(Point(x: point.x, y: point.y - 8))])
        XCTAssertEqual(harness.list.contentOffset, 0, "8 points is within the pan's slop: nothing scrolls")
        harness.frame([.pointerMoved(Point(x: point.x, y: point.y - 20))])
        harness.frame([.pointerMoved(Point(x: point.x, y: point.y - 80))])
        // The pan began 20 points up; the list follows every point after that.
        XCTAssertEqual(harness.list.contentOffset, 60, accuracy: 1e-9)
        XCTAssertTrue(harness.list.isScrolling)
        // Held still past the velocity window, so the release does not fling.
        for _ in 0..<8 { harness.frame([.pointerMoved(Point(x: point.x, y: point.y - 80))]) }
        harness.frame([.pointerUp(Point(x: point.x, y: point.y - 80), button: 1)])
        for _ in 0..<5 { harness.frame() }
        XCTAssertEqual(harness.list.contentOffset, 60, accuracy: 1e-9)
        XCTAssertEqual(opened.names, [], "the drag cancelled the link's touch")

        // Down on a link, away past the slop and back onto it: released over the link it went down
        // on, but the list had taken the touch.
        let again = try linkPoint(harness, row: 3)
        harness.frame([.pointerDown(again, button: 1)])
        harness.frame([.pointerMoved(Point(x: again.x, y: again.y + 15))])
        harness.frame([.pointerMoved(Point(x: again.x, y: again.y + 45))])
        XCTAssertEqual(harness.list.contentOffset, 30, accuracy: 1e-9, "dragged down 30 points after the pan began")
        for _ in 0..<8 { harness.frame([.pointerMoved(again)]) }
        harness.frame([.pointerUp(again, button: 1)])
        XCTAssertEqual(opened.names, [])
        XCTAssertEqual(harness.list.contentOffset, 75, accuracy: 1e-9)
    }

    func testAClickOnALinkWhileTheListGlidesStopsTheListAndOpensNothing() async throws {
        var harness = makeLinkList()
        var selected: [Int] = []
        harness.list.onSelectRow = { selected.append($0) }
        // A fling: 40 points a frame, released while moving.
        let start = Point(x: 5, y: 180)
        harness.frame([.pointerDown(start, button: 1)])
        for step in 1...4 { harness.frame([.pointerMoved(Point(x: 5, y: 180 - Double(step) * 40))]) }
        harness.frame([.pointerUp(Point(x: 5, y: 20), button: 1)])
        harness.frame()
        XCTAssertTrue(harness.list.isScrolling, "flinging")
        let visible = try XCTUnwrap(harness.list.visibleRows)
        let index = visible.lowerBound + 1
        let point = try linkPoint(harness, row: index)
        harness.frame([.pointerDown(point, button: 1)])
        let stoppedAt = harness.list.contentOffset
        XCTAssertFalse(harness.list.isScrolling, "the touch stopped the fling")
        harness.frame([.pointerUp(point, button: 1)])
        for _ in 0..<3 { harness.frame() }
        XCTAssertEqual(harness.list.contentOffset, stoppedAt)
        XCTAssertEqual(opened.names, [], "the touch that stopped the list is not the link's")
        XCTAssertEqual(selected, [], "nor a selection")

        // At rest, the same link opens.
        let now = try linkPoint(harness, row: index)
        harness.frame([.pointerDown(now, button: 1)])
        harness.frame([.pointerUp(now, button: 1)])
        XCTAssertEqual(opened.names, ["link-\(index)"])
    }

    func testARightClickOnALinkOpensNothingAndSelectsNothing() async throws {
        var harness = makeLinkList()
        var selected: [Int] = []
        harness.list.onSelectRow = { selected.append($0) }
        let point = try linkPoint(harness, row: 1)
        harness.frame([.pointerDown(point, button: 3)])
        harness.frame([.pointerUp(point, button: 3)])
        let beside = Point(x: 3, y: harness.list.frameOfRow(2).midY)
        harness.frame([.pointerDown(beside, button: 3)])
        harness.frame([.pointerUp(beside, button: 3)])
        harness.frame([.pointerDown(beside, button: 2)])
        harness.frame([.pointerUp(beside, button: 2)])
        XCTAssertEqual(opened.names, [])
        XCTAssertEqual(selected, [])
        // A right-button drag does not scroll either.
        harness.frame([.pointerDown(beside, button: 3)])
        harness.frame([.pointerMoved(Point(x: 3, y: beside.y - 60))])
        harness.frame([.pointerUp(Point(x: 3, y: beside.y - 60), button: 3)])
        XCTAssertEqual(harness.list.contentOffset, 0)
    }

    // MARK: The wheel

    func testTheWheelOverALinkScrollsTheNearestScrollableAncestor() async throws {
        let (host, _) = makeHost(width: 300, height: 240)
        var time = 0.0
        let outer = WheelRecordingNode()
        outer.isUserInteractionEnabled = true
        outer.frame = Rect(x: 0, y: 0, width: 300, height: 240)
        let list = ListNode()
        list.frame = Rect(x: 0, y: 20, width: 300, height: 200)
        let source = TestListSource(count: 60, height: 40)
        let opened = opened
        source.makeNode = { identity, _ in LinkRowNode(identity: identity, opened: opened) }
        list.dataSource = source
        outer.addSubnode(list)
        host.setRootNode(outer)
        host.addFrameParticipant(list)
        settle(host, time: &time)
        func frame(_ events: [InputEvent]) {
            time += 1.0 / 60
            host.runFrame(time: time, events: events)
        }

        let node = try XCTUnwrap(list.nodeForRow(1) as? LinkRowNode)
        let rect = try XCTUnwrap(node.text.textLayout.rects(forLink: "link-1", inWidth: node.text.bounds.width).first)
        let point = Point(x: node.text.frame.minX + rect.midX,
                          y: 20 + list.frameOfRow(1).minY + node.text.frame.minY + rect.midY)
        XCTAssertTrue(list.hitTest(list.convertFromRoot(point)) === node.text, "the link's text is under the pointer")
        frame([.pointerMoved(point), .wheel(dx: 0, dy: -1)])
        XCTAssertEqual(list.contentOffset, 48, "one notch is one wheel step")
        XCTAssertTrue(outer.received.isEmpty, "the list, nearer, took it")

        // Sideways motion the list does not use goes on to the scroller around it.
        frame([.wheel(dx: 2, dy: 0)])
        XCTAssertEqual(outer.received.count, 1)
        XCTAssertEqual(outer.received.first?.dx, 2)
        XCTAssertEqual(list.contentOffset, 48)
        // Above the list only the outer node is under the pointer.
        frame([.pointerMoved(Point(x: 100, y: 10)), .wheel(dx: 0, dy: -1)])
        XCTAssertEqual(outer.received.count, 2)
        XCTAssertEqual(list.contentOffset, 48)
        host.setRootNode(nil)
    }

    /// Three notches a frame apart build 2,880 points a second; after the last one the list stands
    /// for `wheelInertiaDelay`, then glides and slows at `wheelDecelerationRate` to where the closed
    /// form says, and stops.
    func testTheWheelKeepsTheListMovingAfterItsLastEventThenStops() async {
        var harness = ListHarness(source: TestListSource(count: 200, height: 20))
        harness.settle()
        let list = harness.list
        harness.frame([.pointerMoved(Point(x: 50, y: 50)), .wheel(dx: 0, dy: -1)])
        harness.frame([.wheel(dx: 0, dy: -1)])
        harness.frame([.wheel(dx: 0, dy: -1)])
        XCTAssertEqual(list.contentOffset, 144, "each notch moves the list at once")
        harness.frame()
        harness.frame()
        XCTAssertEqual(list.contentOffset, 144, "still within the delay after the last event")
        XCTAssertTrue(list.isScrolling)
        var offsets: [Double] = []
        var frames = 0
        while list.isScrolling && frames < 600 {
            harness.frame()
            offsets.append(list.contentOffset)
            frames += 1
        }
        XCTAssertFalse(list.isScrolling, "the glide ends")
        XCTAssertGreaterThan(offsets.first ?? 0, 144, "moving in the first frame after the delay")
        XCTAssertTrue(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 }, "always onwards")
        let steps = zip(offsets, offsets.dropFirst()).map { $1 - $0 }
        // (The last step also takes in the under-half-point remainder the glide snaps to.)
        let glideSteps = steps.dropLast()
        XCTAssertTrue(zip(glideSteps, glideSteps.dropFirst()).allSatisfy { $1 <= $0 + 1e-9 }, "slowing down")
        var physics = ScrollPhysics()
        physics.decelerationRate = physics.wheelDecelerationRate
        let velocity = 96.0 / (2.0 / 60)
        XCTAssertEqual(list.contentOffset, physics.flingRestingPosition(origin: 144, velocity: velocity), accuracy: 1e-6)
        XCTAssertGreaterThan(list.contentOffset, 144 + 400)
        for _ in 0..<5 { harness.frame() }
        XCTAssertEqual(list.contentOffset, physics.flingRestingPosition(origin: 144, velocity: velocity), accuracy: 1e-6,
                       "at rest")

        // A lone notch leaves no glide; nor does a turn the other way.
        let resting = list.contentOffset
        harness.frame([.wheel(dx: 0, dy: -1)])
        for _ in 0..<10 { harness.frame() }
        XCTAssertEqual(list.contentOffset, resting + 48, accuracy: 1e-9)
        XCTAssertFalse(list.isScrolling)
        harness.frame([.wheel(dx: 0, dy: -1)])
        harness.frame([.wheel(dx: 0, dy: 1)])
        for _ in 0..<10 { harness.frame() }
        XCTAssertEqual(list.contentOffset, resting + 48, accuracy: 1e-9)
        XCTAssertFalse(list.isScrolling)
    }

    /// A touchpad's small precise steps: the glide carries on in their direction and stops at the
    /// edge it reaches, springing back from any overshoot.
    func testTouchpadStepsGlideToTheEdgeAndSettleThere() async {
        var harness = ListHarness(source: TestListSource(count: 100, height: 20))
        harness.settle()
        harness.list.setContentOffset(1700, animated: false)
        harness.frame([.pointerMoved(Point(x: 50, y: 50))])
        for _ in 0..<6 { harness.frame([.wheel(dx: 0, dy: -0.4)]) }
        XCTAssertEqual(harness.list.contentOffset, 1700 + 6 * 0.4 * 48, accuracy: 1e-9)
        var frames = 0
        while harness.list.isScrolling && frames < 600 {
            harness.frame()
            frames += 1
        }
        XCTAssertEqual(harness.list.contentOffset, 1900, "the end")
    }

    // MARK: Hover and the cursor

    func testHoverFollowsTheRowToTheListAndTheCursorShowsTheLink() async throws {
        var harness = makeLinkList()
        let row = try row(harness, 1)
        let link = try linkPoint(harness, row: 1)
        harness.frame([.pointerMoved(link)])
        XCTAssertTrue(harness.host.hoveredNode === row.text)
        XCTAssertEqual(harness.host.cursor, .hand)
        // The plain words before the link.
        let plain = Point(x: row.text.frame.minX + 4, y: link.y)
        XCTAssertNil(row.text.textHit(at: row.text.convertFromRoot(plain)))
        harness.frame([.pointerMoved(plain)])
        XCTAssertEqual(harness.host.cursor, .iBeam)
        // Beside the text, over the list itself.
        harness.frame([.pointerMoved(Point(x: 3, y: link.y))])
        XCTAssertTrue(harness.host.hoveredNode === harness.list)
        XCTAssertEqual(harness.host.cursor, .arrow)
        XCTAssertEqual(harness.backend.cursorChanges, [.hand, .iBeam, .arrow])

        // The wheel moves the rows under a still pointer: the next frame hovers what is there now.
        harness.frame([.pointerMoved(link)])
        XCTAssertEqual(harness.host.cursor, .hand)
        harness.frame([.wheel(dx: 0, dy: -1)])
        harness.frame()
        XCTAssertFalse(harness.host.hoveredNode === row.text, "row 1 moved away from the pointer")
        XCTAssertEqual(harness.backend.cursorChanges.prefix(4), [.hand, .iBeam, .arrow, .hand])
    }
}
