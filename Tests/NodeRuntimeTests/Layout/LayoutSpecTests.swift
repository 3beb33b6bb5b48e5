import Compositor
import XCTest
@testable import NodeRuntime

/// The specs other than stacks, and the style properties they read: exact frames.
@MainActor
final class LayoutSpecTests: XCTestCase {
    nonisolated(unsafe) private var box = Box(40, 20, "box")

    override func setUp() {
        box = Box(40, 20, "box")
    }

    // MARK: Inset

    func testInsetAddsSpaceAroundTheChild() async {
        let layout = layOut(box.inset(EdgeInsets(top: 5, left: 10, bottom: 15, right: 20)))
        assertLayout(layout, size: size(70, 40), frames: [rect(10, 5, 40, 20)])
    }

    func testInsetGivesTheChildTheRangeLessTheInsets() async {
        let layout = layOut(box.inset(EdgeInsets(top: 5, left: 10, bottom: 15, right: 20)), exactly(100, 100))
        assertLayout(layout, size: size(100, 100), frames: [rect(10, 5, 70, 80)])
    }

    func testNegativeInsetsLetTheChildPassTheEdges() async {
        let layout = layOut(box.inset(-5), exactly(50, 50))
        assertLayout(layout, size: size(50, 50), frames: [rect(-5, -5, 60, 60)])
    }

    func testInsetsLargerThanTheRangeLeaveTheChildNoRoom() async {
        let layout = layOut(box.inset(15), exactly(20, 20))
        assertLayout(layout, size: size(20, 20), frames: [rect(15, 15, 0, 0)])
    }

    // MARK: Overlay and background

    func testOverlayCoversTheChildAndComesAfterIt() async {
        let cover = Box(5, 5, "cover")
        let layout = layOut(box.overlay(cover))
        assertLayout(layout, size: size(40, 20), frames: [rect(0, 0, 40, 20), rect(0, 0, 40, 20)])
        XCTAssertTrue(layout.children[0].node === box && layout.children[1].node === cover)
    }

    func testBackgroundSitsUnderTheChild() async {
        let fill = Box(500, 500, "fill")
        let layout = layOut(box.inset(4).background(fill))
        assertLayout(layout, size: size(48, 28), frames: [rect(0, 0, 48, 28), rect(4, 4, 40, 20)])
        XCTAssertTrue(layout.children[0].node === fill && layout.children[1].node === box)
    }

    func testOverlayOfASpecIsLaidOutInsideTheChildSize() async {
        let badge = Box(10, 10, "badge")
        let layout = layOut(box.overlay(badge.relative(horizontal: .end, vertical: .start)))
        assertLayout(layout, size: size(40, 20), frames: [rect(0, 0, 40, 20), rect(30, 0, 10, 10)])
    }

    // MARK: Center and relative

    func testCenterOnBothAxes() async {
        assertLayout(layOut(box.centered(), exactly(100, 100)), size: size(100, 100), frames: [rect(30, 40, 40, 20)])
    }

    func testCenterOnXOnly() async {
        assertLayout(layOut(box.centered(.x), exactly(100, 100)), size: size(100, 100), frames: [rect(30, 0, 40, 20)])
    }

    func testCenterOnYOnly() async {
        assertLayout(layOut(box.centered(.y), exactly(100, 100)), size: size(100, 100), frames: [rect(0, 40, 40, 20)])
    }

    func testCenterWithMinimumSizingHugsTheChild() async {
        assertLayout(layOut(box.centered(sizing: .minimumSize), upTo(100, 100)), size: size(40, 20),
                     frames: [rect(0, 0, 40, 20)])
    }

    func testCenterWithMinimumWidthHugsOnlyTheWidth() async {
        assertLayout(layOut(box.centered(sizing: .minimumWidth), upTo(100, 100)), size: size(40, 100),
                     frames: [rect(0, 40, 40, 20)])
    }

    func testCenterInAnUnboundedRangeTakesTheChildSize() async {
        assertLayout(layOut(box.centered()), size: size(40, 20), frames: [rect(0, 0, 40, 20)])
    }

    func testCenterMeasuresTheChildFromZero() async {
        // The child is not forced to the range's minimum: it keeps its size and is centred.
        assertLayout(layOut(box.centered(), SizeRange(min: size(80, 80), max: size(80, 80))), size: size(80, 80),
                     frames: [rect(20, 30, 40, 20)])
    }

    func testRelativeEndEnd() async {
        assertLayout(layOut(box.relative(horizontal: .end, vertical: .end), exactly(100, 100)), size: size(100, 100),
                     frames: [rect(60, 80, 40, 20)])
    }

    func testRelativeStartCenter() async {
        assertLayout(layOut(box.relative(horizontal: .start, vertical: .center), exactly(100, 100)),
                     size: size(100, 100), frames: [rect(0, 40, 40, 20)])
    }

    func testRelativeCenterEndWithBuilder() async {
        let spec = RelativeSpec(horizontal: .center, vertical: .end) { box }
        assertLayout(layOut(spec, exactly(100, 100)), size: size(100, 100), frames: [rect(30, 80, 40, 20)])
    }

    // MARK: Ratio

    func testRatioFromTheMaximumWidth() async {
        assertLayout(layOut(box.ratio(0.5), upTo(200, .infinity)), size: size(200, 100), frames: [rect(0, 0, 200, 100)])
    }

    func testRatioPicksTheSideThatKeepsTheShape() async {
        // 100 wide would need 200 tall; 100 tall allows 50 wide at the right shape.
        assertLayout(layOut(box.ratio(2), upTo(100, 100)), size: size(50, 100), frames: [rect(0, 0, 50, 100)])
    }

    func testRatioWithoutBoundsUsesTheChildWidth() async {
        assertLayout(layOut(box.ratio(1)), size: size(40, 40), frames: [rect(0, 0, 40, 40)])
    }

    func testRatioGivesWayToTheMinimum() async {
        let range = SizeRange(min: size(80, 80), max: size(100, .infinity))
        assertLayout(layOut(box.ratio(0.5), range), size: size(100, 80), frames: [rect(0, 0, 100, 80)])
    }

    func testSquareAvatarInAStack() async {
        let avatar = Box(10, 10, "avatar")
        let layout = layOut(HStack(alignItems: .start) { avatar.ratio(1).width(30); box }, upTo(200, 100))
        assertLayout(layout, size: size(70, 30), frames: [rect(0, 0, 30, 30), rect(30, 0, 40, 20)])
    }

    // MARK: Absolute

    private func absoluteChildren() -> (Box, Box, [any LayoutElement]) {
        let a = Box(40, 20, "a"), b = Box(5, 5, "b")
        return (a, b, [a.position(Point(x: 10, y: 20)), b.position(Point(x: 50, y: 5)).size(size(30, 30))])
    }

    func testAbsoluteTakesItsMaximumByDefault() async {
        let (_, _, children) = absoluteChildren()
        assertLayout(layOut(AbsoluteSpec(children: children), upTo(200, 100)), size: size(200, 100),
                     frames: [rect(10, 20, 40, 20), rect(50, 5, 30, 30)])
    }

    func testAbsoluteSizeToFitTakesTheChildrensBounds() async {
        let (_, _, children) = absoluteChildren()
        assertLayout(layOut(AbsoluteSpec(sizing: .sizeToFit, children: children), upTo(200, 100)), size: size(80, 40),
                     frames: [rect(10, 20, 40, 20), rect(50, 5, 30, 30)])
    }

    func testAbsoluteInAnUnboundedRangeTakesTheChildrensBounds() async {
        let (_, _, children) = absoluteChildren()
        assertLayout(layOut(AbsoluteSpec(children: children)), size: size(80, 40),
                     frames: [rect(10, 20, 40, 20), rect(50, 5, 30, 30)])
    }

    func testAbsoluteChildGetsTheRoomLeftAfterItsPosition() async {
        let layout = layOut(AbsoluteSpec { box.position(Point(x: 180, y: 0)) }, upTo(200, 100))
        assertLayout(layout, size: size(200, 100), frames: [rect(180, 0, 20, 20)])
    }

    func testAbsolutePositionFromTheNodeStyle() async {
        box.style.layoutPosition = Point(x: 7, y: 9)
        assertLayout(layOut(AbsoluteSpec(sizing: .sizeToFit) { box }), size: size(47, 29), frames: [rect(7, 9, 40, 20)])
    }

    // MARK: Wrapper

    func testWrapperWithOneChildPassesTheRangeThrough() async {
        assertLayout(layOut(WrapperSpec { box }, exactly(60, 60)), size: size(60, 60), frames: [rect(0, 0, 60, 60)])
    }

    func testWrapperTakesTheLargestChild() async {
        let tall = Box(10, 50, "tall")
        assertLayout(layOut(WrapperSpec { box; tall }), size: size(40, 50), frames: [rect(0, 0, 40, 20), rect(0, 0, 10, 50)])
    }

    // MARK: Corner

    private let avatar = Box(50, 50, "avatar")
    private let badge = Box(20, 20, "badge")

    func testCornerPinsTheBadgeCentreOnTheCorner() async {
        assertLayout(layOut(avatar.corner(badge, at: .topRight)), size: size(50, 50),
                     frames: [rect(0, 0, 50, 50), rect(40, -10, 20, 20)])
    }

    func testCornerThatWrapsGrowsToHoldTheBadge() async {
        assertLayout(layOut(avatar.corner(badge, at: .topRight, wrapsCorner: true)), size: size(60, 60),
                     frames: [rect(0, 10, 50, 50), rect(40, 0, 20, 20)])
    }

    func testCornerWithOffset() async {
        assertLayout(layOut(avatar.corner(badge, at: .bottomLeft, offset: Point(x: 5, y: -5))), size: size(50, 50),
                     frames: [rect(0, 0, 50, 50), rect(-5, 35, 20, 20)])
    }

    func testCornerThatWrapsWithOffset() async {
        assertLayout(layOut(avatar.corner(badge, at: .bottomLeft, offset: Point(x: 5, y: -5), wrapsCorner: true)),
                     size: size(55, 55), frames: [rect(5, 0, 50, 50), rect(0, 35, 20, 20)])
    }

    func testCornerThatWrapsShrinksTheChildToFit() async {
        let stretchy = Box(100, 100, "stretchy")
        assertLayout(layOut(stretchy.corner(badge, at: .bottomRight, wrapsCorner: true), exactly(80, 80)),
                     size: size(80, 80), frames: [rect(0, 0, 70, 70), rect(60, 60, 20, 20)])
    }

    // MARK: Style

    func testWidthAndHeightInPoints() async {
        let layout = layOut(HStack(alignItems: .start) { box.size(size(50, 10)) }, upTo(200, 100))
        assertLayout(layout, size: size(50, 10), frames: [rect(0, 0, 50, 10)])
    }

    func testMaximumSizeCapsTheChild() async {
        let layout = layOut(VStack { box.maxWidth(30).maxHeight(12) }, exactly(100, 100))
        // Stretch asks for 100 wide, the maximum keeps 30.
        assertLayout(layout, size: size(100, 100), frames: [rect(0, 0, 30, 12)])
    }

    func testMinimumSizeRaisesTheChild() async {
        let layout = layOut(HStack(alignItems: .start) { box.minWidth(45).minHeight(.fraction(0.5)) }, upTo(200, 100))
        assertLayout(layout, size: size(45, 50), frames: [rect(0, 0, 45, 50)])
    }

    func testParentRangeWinsOverTheStyle() async {
        assertLayout(layOut(WrapperSpec { box.width(300) }, upTo(100, 100)), size: size(100, 20),
                     frames: [rect(0, 0, 100, 20)])
    }

    func testPreferredSizeOfAPlainNode() async {
        let plain = Node()
        plain.preferredSize = size(30, 30)
        XCTAssertEqual(plain.style.width, .points(30))
        assertLayout(layOut(HStack(alignItems: .start) { plain }, upTo(200, 100)), size: size(30, 30),
                     frames: [rect(0, 0, 30, 30)])
        XCTAssertEqual(plain.layoutThatFits(.unconstrained).size, size(30, 30))
    }

    func testStoredNodeStyleActsLikeTheModifiers() async {
        let other = Box(60, 30, "other")
        box.style.flexGrow = 1
        box.style.alignSelf = .center
        let layout = layOut(HStack(alignItems: .start) { box; other }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 15, 140, 20), rect(140, 0, 60, 30)])
    }

    func testSpecStyleInAStack() async {
        let inner = HStack { box }.width(.fraction(0.25))
        // The inner stack is 50 wide; its child keeps its own 40.
        assertLayout(layOut(VStack(alignItems: .start) { inner }, exactly(200, 100)), size: size(200, 100),
                     frames: [rect(0, 0, 40, 20)])
    }

    func testFractionOfTheRootNode() async {
        let node = SpecNode { _ in nil }
        node.style.width = .fraction(0.5)
        XCTAssertEqual(node.layoutThatFits(upTo(300, 10)).size, size(150, 0))
    }
}
