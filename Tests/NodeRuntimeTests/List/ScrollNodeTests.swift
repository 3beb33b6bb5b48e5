import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Stripes of distinct colours, each `side` points along the axis, laid out in a stack.
private final class StripesNode: Node, @unchecked Sendable {
    let stripes: [Node]
    let horizontal: Bool

    static func color(_ index: Int) -> Color {
        Color(red: UInt8(index * 47 % 256), green: UInt8(255 - index * 29 % 256), blue: UInt8(index * 83 % 256))
    }

    init(count: Int, side: Double, across: Double, horizontal: Bool = false) {
        self.horizontal = horizontal
        stripes = (0..<count).map { index in
            let stripe = Node()
            stripe.backgroundColor = Self.color(index)
            stripe.preferredSize = horizontal ? Size(width: side, height: across) : Size(width: across, height: side)
            return stripe
        }
        super.init()
        stripes.forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        horizontal ? HStack(spacing: 0) { stripes } as any LayoutSpec : VStack(spacing: 0) { stripes }
    }
}

/// A scroll node over stripes: the wheel, a drag with rubber banding, a fling, the horizontal axis,
/// the indicators, and the pixels that show each.
@MainActor
final class ScrollNodeTests: XCTestCase {
    private var time = 0.0

    private func argb(_ color: Color) -> UInt32 {
        0xFF00_0000 | UInt32(color.red) << 16 | UInt32(color.green) << 8 | UInt32(color.blue)
    }

    private func makeScroll(horizontal: Bool = false) throws -> (NodeHost, ScrollNode) {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 300), configuration: .init(clearColor: Color(rgb: 0)))
        let content = horizontal ? StripesNode(count: 20, side: 50, across: 300, horizontal: true)
                                 : StripesNode(count: 20, side: 50, across: 200)
        let scroll = ScrollNode(content: content)
        scroll.axes = horizontal ? .horizontal : .vertical
        host.setRootNode(scroll)
        settle(host, time: &time)
        return (host, scroll)
    }

    /// Runs frames until nothing moves (the indicators gone too).
    private func rest(_ host: NodeHost) throws {
        try host.settle(timeout: 10)
        time = host.time
    }

    private func frame(_ host: NodeHost, _ events: [InputEvent] = []) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    func testTheContentIsMeasuredUnboundedAlongTheAxis() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        XCTAssertEqual(scroll.contentSize, Size(width: 200, height: 1_000))
        XCTAssertEqual(scroll.contentOffset, .zero)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 100, y: 25), argb(StripesNode.color(0)))
        XCTAssertEqual(pixels.pixel(x: 100, y: 275), argb(StripesNode.color(5)))
    }

    func testTheWheelScrollsAndTheScreenFollows() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        frame(host, [.pointerMoved(Point(x: 100, y: 150)), .wheel(dx: 0, dy: -1)])
        XCTAssertEqual(scroll.contentOffset.y, 48)
        frame(host)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        // Content y 48 + 10 = 58 is the second stripe's; 48 + 1 = 49 still the first's.
        XCTAssertEqual(pixels.pixel(x: 100, y: 10), argb(StripesNode.color(1)))
        XCTAssertEqual(pixels.pixel(x: 100, y: 1), argb(StripesNode.color(0)))
        // Upwards past the start it stops at 0.
        for _ in 0..<3 { frame(host, [.wheel(dx: 0, dy: 1)]) }
        XCTAssertEqual(scroll.contentOffset.y, 0)
        // The bottom: 1,000 − 300.
        for _ in 0..<30 { frame(host, [.wheel(dx: 0, dy: -1)]) }
        XCTAssertEqual(scroll.contentOffset.y, 700)
    }

    func testTheIndicatorShowsWhileMovingAndGoesAfter() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        frame(host, [.pointerMoved(Point(x: 100, y: 150)), .wheel(dx: 0, dy: -1)])
        frame(host)
        let moving = try XCTUnwrap(OffscreenRender.capture(host))
        // The bar: 3 points wide, 2 from the right edge; its length 300 × 300 / 1,000 = 90.
        let bar = moving.pixel(x: 196, y: 40)
        XCTAssertNotEqual(bar, argb(StripesNode.color(1)), "the indicator covers the content at the right edge")
        XCTAssertEqual(moving.pixel(x: 190, y: 40), argb(StripesNode.color(1)), "only there")
        XCTAssertFalse(scroll.isSettled)
        try rest(host)
        let resting = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(resting.pixel(x: 196, y: 40), argb(StripesNode.color(1)), "gone once the content rests")
    }

    func testADragMovesTheContentAndBandsPastTheStart() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        frame(host, [.pointerDown(Point(x: 100, y: 200), button: 1, clicks: 1)])
        for step in 1...10 { frame(host, [.pointerMoved(Point(x: 100, y: 200 - Double(step) * 10))]) }
        let dragged = scroll.contentOffset.y
        XCTAssertGreaterThanOrEqual(dragged, 79, "the content follows the pointer up (past the pan's slop)")
        XCTAssertLessThanOrEqual(dragged, 100)
        // Down, past the start: the content bands (it moves less than the pointer) ...
        for step in 1...20 { frame(host, [.pointerMoved(Point(x: 100, y: 100 + Double(step) * 10))]) }
        XCTAssertLessThan(scroll.contentOffset.y, 0)
        XCTAssertGreaterThan(scroll.contentOffset.y, -100)
        // ... and springs back once released.
        frame(host, [.pointerUp(Point(x: 100, y: 300), button: 1)])
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.y, 0, accuracy: 0.5)
        XCTAssertFalse(scroll.isScrolling)
    }

    func testAFlingDeceleratesAndRestsWithinTheContent() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        scroll.fling(velocity: Point(x: 0, y: 1_000))
        var offsets: [Double] = []
        for _ in 0..<600 where scroll.isScrolling {
            frame(host)
            offsets.append(scroll.contentOffset.y)
        }
        XCTAssertFalse(scroll.isScrolling, "it stops")
        XCTAssertEqual(offsets, offsets.sorted(), "only forwards")
        XCTAssertGreaterThan(scroll.contentOffset.y, 100)
        XCTAssertLessThan(scroll.contentOffset.y, 700)
        // Handed to the compositor as data while it moved; none left at rest.
        let content = try XCTUnwrap(scroll.contentNode.layerIfLoaded)
        try rest(host)
        XCTAssertTrue(content.animations.isEmpty)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        let stripe = Int((scroll.contentOffset.y + 150) / 50)
        let inStripe = (scroll.contentOffset.y + 150).truncatingRemainder(dividingBy: 50)
        if inStripe > 2 && inStripe < 48 {
            XCTAssertEqual(pixels.pixel(x: 100, y: 150), argb(StripesNode.color(stripe)))
        }
    }

    func testNonsenseOffsetsAndSpeedsAreReportedAndChangeNothing() async throws {
        let (host, scroll) = try makeScroll()
        defer { host.setRootNode(nil) }
        scroll.setContentOffset(Point(x: 0, y: 120), animated: false)
        scroll.setContentOffset(Point(x: .nan, y: .infinity), animated: false)
        scroll.fling(velocity: Point(x: 0, y: .nan))
        XCTAssertEqual(scroll.contentOffset, Point(x: 0, y: 120))
        XCTAssertFalse(scroll.isScrolling)
        let messages = scroll.diagnostics.map(\.message)
        XCTAssertTrue(messages.contains { $0.contains("setContentOffset") }, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("fling(velocity:") }, "\(messages)")
    }

    func testTheHorizontalAxisTakesTheWheel() async throws {
        let (host, scroll) = try makeScroll(horizontal: true)
        defer { host.setRootNode(nil) }
        XCTAssertEqual(scroll.contentSize, Size(width: 1_000, height: 300))
        frame(host, [.pointerMoved(Point(x: 100, y: 150)), .wheel(dx: 0, dy: -1)])
        XCTAssertEqual(scroll.contentOffset, Point(x: 48, y: 0))
        frame(host, [.wheel(dx: 1, dy: 0)])
        XCTAssertEqual(scroll.contentOffset, Point(x: 96, y: 0))
        frame(host)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 10, y: 150), argb(StripesNode.color(2)), "content x 106 is the third stripe")
    }

    /// Drags to the left by `distance` in steps of 10 points, holds still, and releases.
    private func dragLeft(_ host: NodeHost, by distance: Double) {
        frame(host, [.pointerDown(Point(x: 150, y: 150), button: 1, clicks: 1)])
        var x = 150.0
        while x > 150 - distance {
            x -= 10
            frame(host, [.pointerMoved(Point(x: x, y: 150))])
        }
        for _ in 0..<12 { frame(host, [.pointerMoved(Point(x: x, y: 150))]) }
        frame(host, [.pointerUp(Point(x: x, y: 150), button: 1)])
    }

    func testAPagerComesToRestOnPagesAndTurnsThemByDragWheelAndKeys() async throws {
        let (host, scroll) = try makeScroll(horizontal: true)
        defer { host.setRootNode(nil) }
        scroll.isPagingEnabled = true
        XCTAssertEqual(scroll.pageCount, 5, "1,000 points of content in pages of 200")
        // A short drag (50 points past the slop) springs back to the page it left.
        dragLeft(host, by: 60)
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.x, 0)
        // A drag past half a page turns it.
        dragLeft(host, by: 130)
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.x, 200)
        XCTAssertEqual(scroll.currentPage, 1)
        // A quick flick turns it too, however short.
        frame(host, [.pointerDown(Point(x: 150, y: 150), button: 1, clicks: 1)])
        for step in 1...3 { frame(host, [.pointerMoved(Point(x: 150 - Double(step) * 12, y: 150))]) }
        frame(host, [.pointerUp(Point(x: 114, y: 150), button: 1)])
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.x, 400, "a flick of 26 points turned one page")
        // A wheel notch, then the keys.
        frame(host, [.pointerMoved(Point(x: 100, y: 150)), .wheel(dx: 0, dy: -1)])
        try rest(host)
        XCTAssertEqual(scroll.currentPage, 3)
        XCTAssertTrue(scroll.handleKey(.left))
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.x, 400)
        XCTAssertTrue(scroll.handleKey(.end))
        try rest(host)
        XCTAssertEqual(scroll.contentOffset.x, 800)
        XCTAssertFalse(scroll.handleKey(.right), "no page after the last")
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 10, y: 150), argb(StripesNode.color(16)), "the last page, exactly on its edge")
        XCTAssertEqual(pixels.pixel(x: 190, y: 150), argb(StripesNode.color(19)))
    }


    func testFocusingAControlBelowTheFoldScrollsItIntoView() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 300), configuration: .init(clearColor: Color(rgb: 0)))
        let buttons = (0..<12).map { ButtonNode(title: "Button \($0)", attributes: TextAttributes(font: .system(size: 14))) }
        let content = ButtonColumnNode(buttons: buttons)
        let scroll = ScrollNode(content: content)
        host.setRootNode(scroll)
        TextFixtures.useRepositoryFonts()
        try rest(host)
        let last = try XCTUnwrap(buttons.last)
        func top(of node: Node) -> Double { -node.convertFromRoot(.zero).y }
        XCTAssertGreaterThan(top(of: last), 300, "the last button starts below the viewport")
        host.focus(last)
        XCTAssertTrue(host.focusedNode === last)
        try rest(host)
        XCTAssertGreaterThan(scroll.contentOffset.y, 0)
        XCTAssertLessThanOrEqual(top(of: last) + last.frame.height, 300, "it shows whole")
        XCTAssertGreaterThanOrEqual(top(of: last), 0)
        // Back to the first: up again.
        host.focus(buttons[0])
        try rest(host)
        XCTAssertEqual(top(of: buttons[0]), 8, "it shows with the 8-point margin above it")
        host.setRootNode(nil)
    }

}

/// Buttons in a column, 40 points apart.
private final class ButtonColumnNode: Node, @unchecked Sendable {
    let buttons: [ButtonNode]
    init(buttons: [ButtonNode]) {
        self.buttons = buttons
        super.init()
        buttons.forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 20, alignItems: .start) { buttons }.inset(EdgeInsets(all: 10))
    }
}
