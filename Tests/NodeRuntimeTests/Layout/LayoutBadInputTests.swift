import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Bad input gets a defined result and a diagnostic that names it; nothing traps or hangs.
@MainActor
final class LayoutBadInputTests: XCTestCase {
    private func kinds(_ layout: Layout) -> [LayoutDiagnostic.Kind] { layout.diagnostics.map(\.kind) }

    private func assertFinite(_ layout: Layout, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(layout.size.width.isFinite && layout.size.height.isFinite, "size \(layout.size)", file: file, line: line)
        for child in layout.children {
            XCTAssertTrue(child.frame.isFinite, "frame \(child.frame)", file: file, line: line)
            assertFinite(child.layout, file: file, line: line)
        }
    }

    // MARK: Ranges

    func testNaNAndNegativeRangesAreRepaired() async {
        let node = Box(40, 20, "box")
        let layout = node.layoutThatFits(SizeRange(min: size(.nan, -5), max: size(-10, .nan)))
        XCTAssertEqual(layout.size, size(0, 0))
        XCTAssertEqual(kinds(layout), [.invalidRange])
        XCTAssertTrue(layout.diagnostics[0].description.contains("Box 'box'"))
    }

    func testAMinimumAboveTheMaximumIsLowered() async {
        let layout = Box(40, 20).layoutThatFits(SizeRange(min: size(100, 100), max: size(50, 50)))
        XCTAssertEqual(layout.size, size(50, 50))
        XCTAssertEqual(kinds(layout), [.invalidRange])
    }

    func testARangeEditedPastItsChecksIsRepaired() async {
        var range = upTo(100, 100)
        range.min.width = .infinity
        range.max.height = -1
        let layout = Box(40, 20).layoutThatFits(range)
        XCTAssertEqual(layout.size, size(40, 0))
        XCTAssertEqual(kinds(layout), [.invalidRange])
    }

    func testANaNFrameStillLaysOut() async {
        let a = Box(10, 10)
        let root = SpecNode { _ in HStack { a } }
        root.frame = Rect(x: 0, y: 0, width: .nan, height: -3)
        root.layoutIfNeeded()
        XCTAssertEqual(a.frame, rect(0, 0, 10, 0))
    }

    // MARK: Style

    func testNaNAndNegativeStyleSizesAreIgnored() async {
        let a = Box(40, 20, "a")
        let layout = layOut(HStack(alignItems: .start) { a.width(.points(.nan)).height(-5).minWidth(.fraction(-1)) })
        XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20)])
        XCTAssertEqual(kinds(layout), [.invalidDimension, .invalidDimension, .invalidDimension])
    }

    func testAStyleMinimumAboveItsMaximumWins() async {
        let a = Box(40, 20, "a")
        let layout = layOut(HStack(alignItems: .start) { a.minWidth(60).maxWidth(30) }, upTo(200, 100))
        XCTAssertEqual(frames(layout), [rect(0, 0, 60, 20)])
        XCTAssertEqual(kinds(layout), [.minimumExceedsMaximum])
    }

    func testAFractionOfAnUnboundedParentIsAuto() async {
        let a = Box(40, 20, "a")
        let layout = layOut(VStack(alignItems: .start) { a.height(.fraction(0.5)) }, upTo(100, .infinity))
        XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20)])
        XCTAssertEqual(kinds(layout), [.unboundedFraction])
    }

    func testBadFlexFactorsCountAsZero() async {
        let a = Box(40, 20, "a"), b = Box(60, 30, "b")
        let layout = layOut(HStack(alignItems: .start) { a.flexGrow(-1); b.flexGrow(.nan).flexShrink(.infinity) },
                            exactly(80, 30))
        XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20), rect(40, 0, 60, 30)])
        XCTAssertEqual(Set(kinds(layout)), [.invalidParameter])
        XCTAssertEqual(layout.diagnostics.count, 3)
    }

    // MARK: Leaf sizes

    final class BadLeaf: Node, @unchecked Sendable {
        let answer: Size
        init(_ answer: Size) {
            self.answer = answer
            super.init()
        }
        override func calculateSizeThatFits(_ constrainedSize: Size) -> Size { answer }
    }

    func testALeafSizeThatIsNotASizeBecomesTheMinimum() async {
        for answer in [size(.nan, 10), size(.infinity, -4), size(-1, .nan)] {
            let layout = BadLeaf(answer).layoutThatFits(SizeRange(min: size(3, 4), max: size(100, 100)))
            XCTAssertEqual(layout.size.width, answer.width.isFinite && answer.width >= 0 ? answer.width : 3)
            XCTAssertEqual(layout.size.height, answer.height.isFinite && answer.height >= 0 ? answer.height : 4)
            XCTAssertEqual(kinds(layout), [.invalidSize])
        }
    }

    func testABadLeafInsideAStackLeavesTheOthersInPlace() async {
        let bad = BadLeaf(size(.infinity, .nan)), good = Box(10, 10)
        let layout = layOut(HStack(alignItems: .start) { bad; good })
        assertFinite(layout)
        XCTAssertEqual(frames(layout), [rect(0, 0, 0, 0), rect(0, 0, 10, 10)])
    }

    // MARK: Spec parameters

    func testNaNSpacingIsZero() async {
        let a = Box(40, 20), b = Box(60, 30)
        let layout = layOut(HStack(spacing: .nan, alignItems: .start, lineSpacing: .infinity) { a; b })
        XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20), rect(40, 0, 60, 30)])
        XCTAssertEqual(kinds(layout), [.invalidParameter, .invalidParameter])
    }

    func testABadRatioIsIgnored() async {
        for ratio in [-1.0, 0, .nan, .infinity] {
            let layout = layOut(Box(40, 20).ratio(ratio), upTo(100, 100))
            XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20)])
            XCTAssertEqual(kinds(layout), [.invalidParameter])
        }
    }

    func testInfiniteInsetsAreZero() async {
        let layout = layOut(Box(40, 20).inset(EdgeInsets(top: .infinity, left: .nan, bottom: 2, right: 2)))
        XCTAssertEqual(layout.size, size(42, 22))
        XCTAssertEqual(frames(layout), [rect(0, 0, 40, 20)])
        XCTAssertEqual(kinds(layout), [.invalidParameter, .invalidParameter])
    }

    func testBadPositionsAndOffsetsAreZero() async {
        let a = Box(10, 10), badge = Box(4, 4)
        let absolute = layOut(AbsoluteSpec(sizing: .sizeToFit) { a.position(Point(x: .nan, y: 3)) })
        XCTAssertEqual(frames(absolute), [rect(0, 3, 10, 10)])
        XCTAssertEqual(kinds(absolute), [.invalidParameter])
        let corner = layOut(Box(10, 10).corner(badge, at: .topLeft, offset: Point(x: .infinity, y: 0)))
        XCTAssertEqual(corner.frame(of: badge), rect(-2, -2, 4, 4))
        XCTAssertEqual(kinds(corner), [.invalidParameter])
    }

    // MARK: Nodes named wrongly

    func testANodeNamedTwiceIsPlacedOnceAtItsFirstPlace() async {
        let a = Box(40, 20, "a"), b = Box(60, 30, "b")
        let layout = layOut(HStack(alignItems: .start) { a; b; a })
        XCTAssertEqual(layout.children.count, 2)
        XCTAssertEqual(layout.frame(of: a), rect(0, 0, 40, 20))
        XCTAssertEqual(layout.size, size(140, 30), "the second occurrence's space stays empty")
        XCTAssertEqual(kinds(layout), [.duplicateNode])
    }

    func testASpecThatNamesItsOwnNodeEnds() async {
        let itself = Locked<SpecNode?>(nil)
        let a = Box(10, 10)
        let node = SpecNode("loop") { _ in HStack { a; itself.withLock { $0 } } }
        itself.withLock { $0 = node }
        defer { itself.withLock { $0 = nil } }
        let layout = node.layoutThatFits(upTo(100, 100))
        XCTAssertEqual(layout.children.count, 1)
        XCTAssertTrue(kinds(layout).contains(.cycle))
        node.frame = rect(0, 0, 100, 100)
        node.layoutIfNeeded()
        XCTAssertTrue(node.subnodes.elementsEqual([a], by: ===))
    }

    func testTwoSpecsThatNameEachOtherEnd() async {
        let box = Locked<[SpecNode]>([])
        let first = SpecNode("first") { _ in VStack { box.withLock { $0[1] } } }
        let second = SpecNode("second") { _ in VStack { box.withLock { $0[0] } } }
        box.withLock { $0 = [first, second] }
        let layout = first.layoutThatFits(upTo(100, 100))
        XCTAssertTrue(kinds(layout).contains(.cycle))
        assertFinite(layout)
        box.withLock { $0 = [] }
    }

    func testAManagedSpecThatNamesAnAncestorLeavesTheTreeAcyclic() async {
        let root = Node()
        let child = SpecNode("child") { _ in HStack { root } }
        root.addSubnode(child)
        let layout = child.layoutThatFits(upTo(100, 100))
        XCTAssertEqual(layout.children.count, 0)
        XCTAssertEqual(kinds(layout), [.cycle])
        child.frame = rect(0, 0, 100, 100)
        child.layoutIfNeeded()
        XCTAssertTrue(child.subnodes.isEmpty)
        XCTAssertTrue(root.subnodes.elementsEqual([child], by: ===))
    }

    func testANodeThatIsNotASubnodeIsReportedAndNotMoved() async {
        let stranger = Box(10, 10, "stranger")
        stranger.frame = rect(1, 2, 3, 4)
        let owner = SpecNode("owner", manages: false) { _ in HStack { stranger } }
        let layout = owner.layoutThatFits(upTo(100, 100))
        XCTAssertEqual(kinds(layout), [.notASubnode])
        owner.frame = rect(0, 0, 100, 100)
        owner.layoutIfNeeded()
        XCTAssertEqual(stranger.frame, rect(1, 2, 3, 4))
    }

    func testADiagnosticSaysWhatWasDone() async {
        let a = Box(10, 10, "label")
        let layout = layOut(HStack { a.minWidth(20).maxWidth(5) })
        XCTAssertEqual(layout.diagnostics.first?.description,
                       "Box 'label': minWidth 20.0 exceeds maxWidth 5.0; the minimum wins [minimumExceedsMaximum]")
    }
}
