import Compositor
import XCTest
@testable import NodeRuntime

/// Where popups go beside their anchors: the side asked for, flipped and slid at the bounds' edges.
final class PopupPositionerTests: XCTestCase {
    private let window = Rect(x: 0, y: 0, width: 400, height: 300)
    private let menu = Size(width: 120, height: 100)

    func testAPopupThatFitsGoesOnItsSideAlignedWithTheAnchor() {
        let below = PopupPositioner(anchor: Rect(x: 50, y: 40, width: 80, height: 20), side: .below, gap: 2)
        XCTAssertEqual(below.frame(for: menu, within: window), Rect(x: 50, y: 62, width: 120, height: 100))
        let trailing = PopupPositioner(anchor: Rect(x: 50, y: 40, width: 80, height: 20), side: .trailing)
        XCTAssertEqual(trailing.frame(for: menu, within: window), Rect(x: 130, y: 40, width: 120, height: 100))
        let centred = PopupPositioner(anchor: Rect(x: 100, y: 40, width: 80, height: 20), side: .above, alignment: .center)
        XCTAssertEqual(centred.frame(for: Size(width: 40, height: 30), within: window), Rect(x: 120, y: 10, width: 40, height: 30))
    }

    func testNearTheBottomEdgeItFlipsAbove() {
        // A context menu at the pointer near the bottom right corner.
        let atPointer = PopupPositioner(anchor: Rect(x: 380, y: 280, width: 0, height: 0), side: .below)
        let frame = atPointer.frame(for: menu, within: window)
        XCTAssertEqual(frame.maxY, 280, "flipped above the pointer")
        XCTAssertEqual(frame.maxX, 380, "aligned to end at the pointer instead of leaving the window")
        XCTAssertTrue(window.contains(frame.origin) && frame.maxX <= window.maxX && frame.maxY <= window.maxY)
    }

    func testASubmenuNearTheRightEdgeOpensToTheLeft() {
        let item = Rect(x: 300, y: 50, width: 90, height: 28)
        let submenu = PopupPositioner(anchor: item, side: .trailing).frame(for: menu, within: window)
        XCTAssertEqual(submenu.maxX, 300, "flipped to the item's left")
        XCTAssertEqual(submenu.minY, 50)
    }

    func testWhenNeitherSideFitsItTakesTheRoomierAndSlidesInside() {
        let anchor = Rect(x: 10, y: 120, width: 50, height: 20)
        let tall = Size(width: 100, height: 200)
        let frame = PopupPositioner(anchor: anchor, side: .below).frame(for: tall, within: window)
        // 160 below, 120 above: below, slid up so it ends at the window's bottom.
        XCTAssertEqual(frame, Rect(x: 10, y: 100, width: 100, height: 200))
        let withoutSliding = PopupPositioner(anchor: anchor, side: .below, slides: false).frame(for: tall, within: window)
        XCTAssertEqual(withoutSliding.minY, 140, "without sliding it stays against the anchor")
        let withoutFlipping = PopupPositioner(anchor: Rect(x: 10, y: 250, width: 50, height: 20), side: .below, flips: false)
            .frame(for: menu, within: window)
        XCTAssertEqual(withoutFlipping.maxY, 300, "without flipping it slides up over the anchor")
    }

    func testAPopupLargerThanTheBoundsIsCutToThem() {
        let frame = PopupPositioner(anchor: Rect(x: 200, y: 150, width: 0, height: 0))
            .frame(for: Size(width: 900, height: 700), within: window)
        XCTAssertEqual(frame, window)
    }

    func testNonFiniteGeometryGivesAFrameInsideTheBounds() {
        let anchor = Rect(x: .nan, y: .infinity, width: -5, height: .nan)
        for side in [PopupPositioner.Side.below, .above, .leading, .trailing] {
            let frame = PopupPositioner(anchor: anchor, side: side, gap: .nan)
                .frame(for: Size(width: .nan, height: .infinity), within: window)
            XCTAssertTrue(frame.minX.isFinite && frame.minY.isFinite && frame.width.isFinite && frame.height.isFinite, "\(side): \(frame)")
            XCTAssertGreaterThanOrEqual(frame.minX, 0)
            XCTAssertLessThanOrEqual(frame.maxY, 300)
        }
    }
}
