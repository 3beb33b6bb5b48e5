import Compositor
import XCTest
@testable import NodeRuntime

/// Stacks: exact frames for each direction, justification, alignment, flex rule, baseline and wrap mode.
@MainActor
final class LayoutStackTests: XCTestCase {
    nonisolated(unsafe) private var a = Box(40, 20, "a")
    nonisolated(unsafe) private var b = Box(60, 30, "b")

    override func setUp() {
        a = Box(40, 20, "a")
        b = Box(60, 30, "b")
    }

    // MARK: Direction and alignment

    func testHorizontalStretchesChildrenToTheTallest() async {
        let layout = layOut(HStack { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 0, 40, 30), rect(40, 0, 60, 30)])
    }

    func testHorizontalAlignStart() async {
        let layout = layOut(HStack(alignItems: .start) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 0, 40, 20), rect(40, 0, 60, 30)])
    }

    func testHorizontalAlignEnd() async {
        let layout = layOut(HStack(alignItems: .end) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 10, 40, 20), rect(40, 0, 60, 30)])
    }

    func testHorizontalAlignCenter() async {
        let layout = layOut(HStack(alignItems: .center) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 5, 40, 20), rect(40, 0, 60, 30)])
    }

    func testAlignSelfOverridesAlignItems() async {
        let c = Box(10, 10, "c")
        let layout = layOut(HStack(alignItems: .start) { a.alignSelf(.end); b; c.alignSelf(.center) }, upTo(200, 100))
        assertLayout(layout, size: size(110, 30),
                     frames: [rect(0, 10, 40, 20), rect(40, 0, 60, 30), rect(100, 10, 10, 10)])
    }

    func testStretchLeavesAChildWithAFixedCrossSize() async {
        let layout = layOut(HStack { a.height(10); b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 0, 40, 10), rect(40, 0, 60, 30)])
    }

    func testVerticalStretchesToTheWidest() async {
        let layout = layOut(VStack { a; b }, upTo(200, .infinity))
        assertLayout(layout, size: size(60, 50), frames: [rect(0, 0, 60, 20), rect(0, 20, 60, 30)])
    }

    func testVerticalStretchesToTheMinimumWidth() async {
        let layout = layOut(VStack { a; b }, SizeRange(min: size(200, 0), max: size(200, .infinity)))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 200, 20), rect(0, 20, 200, 30)])
    }

    func testVerticalAlignEndAndCenter() async {
        let layout = layOut(VStack(alignItems: .end) { a; b.alignSelf(.center) }, exactly(100, 50))
        assertLayout(layout, size: size(100, 50), frames: [rect(60, 0, 40, 20), rect(20, 20, 60, 30)])
    }

    func testVerticalStackTreatsBaselineAlignmentAsStart() async {
        let layout = layOut(VStack(alignItems: .baselineFirst) { a; b }, exactly(100, 50))
        assertLayout(layout, size: size(100, 50), frames: [rect(0, 0, 40, 20), rect(0, 20, 60, 30)])
    }

    // MARK: Spacing and justification

    func testSpacing() async {
        let layout = layOut(HStack(spacing: 10, alignItems: .start) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(110, 30), frames: [rect(0, 0, 40, 20), rect(50, 0, 60, 30)])
    }

    func testNegativeSpacingOverlaps() async {
        let layout = layOut(HStack(spacing: -10, alignItems: .start) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(90, 30), frames: [rect(0, 0, 40, 20), rect(30, 0, 60, 30)])
    }

    func testSpacingBeforeAndAfter() async {
        let layout = layOut(HStack(spacing: 10, alignItems: .start) { a.spacingBefore(4).spacingAfter(5); b.spacingBefore(7) },
                            upTo(200, 100))
        assertLayout(layout, size: size(126, 30), frames: [rect(4, 0, 40, 20), rect(66, 0, 60, 30)])
    }

    func testJustifyCenter() async {
        let layout = layOut(HStack(justifyContent: .center, alignItems: .start) { a; b }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(50, 0, 40, 20), rect(90, 0, 60, 30)])
    }

    func testJustifyEnd() async {
        let layout = layOut(HStack(justifyContent: .end, alignItems: .start) { a; b }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(100, 0, 40, 20), rect(140, 0, 60, 30)])
    }

    func testJustifySpaceBetween() async {
        let layout = layOut(HStack(justifyContent: .spaceBetween, alignItems: .start) { a; b }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 40, 20), rect(140, 0, 60, 30)])
    }

    func testJustifySpaceBetweenWithOneChildStartsAtTheStart() async {
        let layout = layOut(HStack(justifyContent: .spaceBetween, alignItems: .start) { a }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 40, 20)])
    }

    func testJustifySpaceAround() async {
        let layout = layOut(HStack(justifyContent: .spaceAround, alignItems: .start) { a; b }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(25, 0, 40, 20), rect(115, 0, 60, 30)])
    }

    func testJustifyCenterOverflowsBothEnds() async {
        let layout = layOut(HStack(justifyContent: .center, alignItems: .start) { a; b }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(-10, 0, 40, 20), rect(30, 0, 60, 30)])
    }

    func testVerticalJustifyEnd() async {
        let layout = layOut(VStack(justifyContent: .end, alignItems: .start) { a; b }, exactly(100, 100))
        assertLayout(layout, size: size(100, 100), frames: [rect(0, 50, 40, 20), rect(0, 70, 60, 30)])
    }

    // MARK: Reversed

    func testReversedHorizontal() async {
        let layout = layOut(HStack(alignItems: .start, reversed: true) { a; b }, upTo(200, 100))
        assertLayout(layout, size: size(100, 30), frames: [rect(60, 0, 40, 20), rect(0, 0, 60, 30)])
    }

    func testReversedVerticalPacksAtTheBottom() async {
        let layout = layOut(VStack(alignItems: .start, reversed: true) { a; b },
                            SizeRange(min: size(0, 100), max: size(200, 100)))
        assertLayout(layout, size: size(60, 100), frames: [rect(0, 80, 40, 20), rect(0, 50, 60, 30)])
    }

    func testReversedWithSpacingAndJustifyEnd() async {
        let layout = layOut(HStack(spacing: 10, justifyContent: .end, alignItems: .start, reversed: true) { a; b },
                            exactly(200, 30))
        // Mirrored "end": packed at the left, first child rightmost.
        assertLayout(layout, size: size(200, 30), frames: [rect(70, 0, 40, 20), rect(0, 0, 60, 30)])
    }

    // MARK: Flex

    func testFlexGrowSharesTheFreeSpaceByFactor() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexGrow(1); b.flexGrow(3) }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 65, 20), rect(65, 0, 135, 30)])
    }

    func testFlexGrowStopsAtMaximumAndGivesTheRestAway() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexGrow(1).maxWidth(50); b.flexGrow(1) }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 50, 20), rect(50, 0, 150, 30)])
    }

    func testFlexGrowNeedsAMinimumToGrowInto() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexGrow(1); b }, upTo(200, 50))
        assertLayout(layout, size: size(100, 30), frames: [rect(0, 0, 40, 20), rect(40, 0, 60, 30)])
    }

    func testSpacerPushesTheLastChildToTheEnd() async {
        let layout = layOut(HStack(alignItems: .start) { a; Spacer(); b }, exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 40, 20), rect(140, 0, 60, 30)])
    }

    func testFlexShrinkByFactorTimesSize() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexShrink(1); b.flexShrink(1) }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(0, 0, 32, 20), rect(32, 0, 48, 30)])
    }

    func testOnlyShrinkableChildrenShrink() async {
        let layout = layOut(HStack(alignItems: .start) { a; b.flexShrink(1) }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(0, 0, 40, 20), rect(40, 0, 40, 30)])
    }

    func testShrinkStopsAtMinimumAndTakesTheRestElsewhere() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexShrink(1).minWidth(38); b.flexShrink(1) }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(0, 0, 38, 20), rect(38, 0, 42, 30)])
    }

    func testOverflowWithoutShrinkPassesTheStackEdge() async {
        let layout = layOut(HStack(alignItems: .start) { a; b }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(0, 0, 40, 20), rect(40, 0, 60, 30)])
    }

    func testMinimumForcesOverflowEvenWhenShrinkable() async {
        let layout = layOut(HStack(alignItems: .start) { a.minWidth(100).flexShrink(1); b.flexShrink(1) }, upTo(80, 50))
        assertLayout(layout, size: size(80, 30), frames: [rect(0, 0, 100, 20), rect(100, 0, 0, 30)])
    }

    func testFlexBasisReplacesTheMeasuredLength() async {
        let layout = layOut(HStack(alignItems: .start) { a.flexBasis(100).flexGrow(1); b.flexBasis(.fraction(0.25)) },
                            exactly(200, 50))
        assertLayout(layout, size: size(200, 50), frames: [rect(0, 0, 150, 20), rect(150, 0, 50, 30)])
    }

    func testVerticalFlexGrow() async {
        let layout = layOut(VStack(alignItems: .start) { a; b.flexGrow(1) }, exactly(100, 100))
        assertLayout(layout, size: size(100, 100), frames: [rect(0, 0, 40, 20), rect(0, 20, 60, 80)])
    }

    // MARK: Text that would overflow

    func testTextShrinksAndWrapsByDefault() async {
        let text = FakeText(60, "text")  // 300 × 10 on one line
        let layout = layOut(HStack(alignItems: .start) { a; text }, upTo(200, .infinity))
        // 160 points hold 32 glyphs a line: two lines.
        assertLayout(layout, size: size(200, 20), frames: [rect(0, 0, 40, 20), rect(40, 0, 160, 20)])
        XCTAssertEqual(FakeText(1).style.flexShrink, 1, "the class's default style")
        XCTAssertEqual(Node().style.flexShrink, 0)
    }

    func testShrunkTextGrowsTheStackTaller() async {
        let text = FakeText(70, "text")
        let layout = layOut(HStack(spacing: 8) { a; text }, upTo(200, .infinity))
        // 152 points hold 30 glyphs a line: three lines, 30 tall; the box stretches to them.
        assertLayout(layout, size: size(200, 30), frames: [rect(0, 0, 40, 30), rect(48, 0, 152, 30)])
    }

    func testShortTextKeepsItsWidth() async {
        let text = FakeText(10, "text")
        let layout = layOut(HStack(alignItems: .start) { a; text }, upTo(200, .infinity))
        assertLayout(layout, size: size(90, 20), frames: [rect(0, 0, 40, 20), rect(40, 0, 50, 10)])
    }

    func testTextThatMustNotShrinkOverflows() async {
        let text = FakeText(60, "text")
        let layout = layOut(HStack(alignItems: .start) { a; text.flexShrink(0) }, upTo(200, .infinity))
        assertLayout(layout, size: size(200, 20), frames: [rect(0, 0, 40, 20), rect(40, 0, 300, 10)])
    }

    // MARK: Baselines

    func testFirstBaselineAlignment() async {
        let small = FakeText(4, characterWidth: 5, lineHeight: 10, ascender: 8, "small")
        let large = FakeText(2, characterWidth: 10, lineHeight: 20, ascender: 16, "large")
        let picture = Box(30, 12, "picture")  // no baseline: its bottom edge sits on the line
        let layout = layOut(HStack(alignItems: .baselineFirst) { small; large; picture }, upTo(200, 100))
        assertLayout(layout, size: size(70, 20),
                     frames: [rect(0, 8, 20, 10), rect(20, 0, 20, 20), rect(40, 4, 30, 12)])
        XCTAssertEqual(layout.firstBaseline, 16)
    }

    func testLastBaselineAlignment() async {
        let twoLines = FakeText(8, characterWidth: 5, lineHeight: 10, ascender: 8, "two lines").width(20)
        let large = FakeText(2, characterWidth: 10, lineHeight: 20, ascender: 16, "large")
        let layout = layOut(HStack(alignItems: .baselineLast) { twoLines; large }, upTo(200, 100))
        // Last baselines 18 and 16 meet at 18; the large one's 4-point descent sets the bottom.
        assertLayout(layout, size: size(40, 22), frames: [rect(0, 0, 20, 20), rect(20, 2, 20, 20)])
        XCTAssertEqual(layout.lastBaseline, 18)
    }

    func testStyleAscenderAndDescenderOverrideTheChild() async {
        let layout = layOut(HStack(alignItems: .baselineFirst) { a.ascender(15); b.ascender(5) }, upTo(200, 100))
        // Baselines at 15 and 5 meet at 15: b moves down 10.
        assertLayout(layout, size: size(100, 40), frames: [rect(0, 0, 40, 20), rect(40, 10, 60, 30)])
        let last = layOut(HStack(alignItems: .baselineLast) { a.descender(5); b.descender(20) }, upTo(200, 100))
        // Last baselines at 15 and 10 meet at 15: b moves down 5.
        assertLayout(last, size: size(100, 35), frames: [rect(0, 0, 40, 20), rect(40, 5, 60, 30)])
    }

    func testVerticalStackBaselinesComeFromItsFirstAndLastText() async {
        let title = FakeText(4, lineHeight: 10, ascender: 8, "title")
        let body = FakeText(4, lineHeight: 12, ascender: 9, "body")
        let layout = layOut(VStack(spacing: 2) { title; body }, upTo(200, 100))
        XCTAssertEqual(layout.firstBaseline, 8)
        XCTAssertEqual(layout.lastBaseline, 12 + 9)
    }

    // MARK: Wrapping

    private func fourBoxes() -> [Box] { (0..<4).map { Box(60, 20, "w\($0)") } }

    func testWrapStartsANewLineWhenTheNextChildDoesNotFit() async {
        let boxes = fourBoxes()
        let layout = layOut(HStack(spacing: 10, alignItems: .start, wraps: true, lineSpacing: 5) { boxes }, upTo(200, 100))
        assertLayout(layout, size: size(200, 45),
                     frames: [rect(0, 0, 60, 20), rect(70, 0, 60, 20), rect(140, 0, 60, 20), rect(0, 25, 60, 20)])
    }

    func testWrapJustifiesEachLine() async {
        let boxes = fourBoxes()
        let layout = layOut(HStack(spacing: 10, justifyContent: .center, alignItems: .start, wraps: true, lineSpacing: 5) {
            boxes
        }, upTo(200, 100))
        assertLayout(layout, size: size(200, 45),
                     frames: [rect(0, 0, 60, 20), rect(70, 0, 60, 20), rect(140, 0, 60, 20), rect(70, 25, 60, 20)])
    }

    private func wrapped(_ alignContent: StackSpec.AlignContent, alignItems: StackAlignment = .start) -> Layout {
        layOut(HStack(spacing: 10, alignItems: alignItems, wraps: true, lineSpacing: 5, alignContent: alignContent) {
            fourBoxes()
        }, exactly(200, 100))
    }

    func testAlignContentCenter() async {
        assertLayout(wrapped(.center), size: size(200, 100),
                     frames: [rect(0, 27.5, 60, 20), rect(70, 27.5, 60, 20), rect(140, 27.5, 60, 20), rect(0, 52.5, 60, 20)])
    }

    func testAlignContentEnd() async {
        assertLayout(wrapped(.end), size: size(200, 100),
                     frames: [rect(0, 55, 60, 20), rect(70, 55, 60, 20), rect(140, 55, 60, 20), rect(0, 80, 60, 20)])
    }

    func testAlignContentSpaceBetween() async {
        assertLayout(wrapped(.spaceBetween), size: size(200, 100),
                     frames: [rect(0, 0, 60, 20), rect(70, 0, 60, 20), rect(140, 0, 60, 20), rect(0, 80, 60, 20)])
    }

    func testAlignContentSpaceAround() async {
        // 55 points left: 13.75 around each of the two lines.
        assertLayout(wrapped(.spaceAround), size: size(200, 100),
                     frames: [rect(0, 13.75, 60, 20), rect(70, 13.75, 60, 20), rect(140, 13.75, 60, 20),
                              rect(0, 66.25, 60, 20)])
    }

    func testAlignContentStretchMakesLinesThickerAndStretchesTheirChildren() async {
        assertLayout(wrapped(.stretch, alignItems: .stretch), size: size(200, 100),
                     frames: [rect(0, 0, 60, 47.5), rect(70, 0, 60, 47.5), rect(140, 0, 60, 47.5), rect(0, 52.5, 60, 47.5)])
    }

    func testVerticalWrapMakesColumns() async {
        let boxes = fourBoxes()
        let layout = layOut(VStack(spacing: 10, alignItems: .start, wraps: true, lineSpacing: 4) { boxes }, upTo(200, 50))
        assertLayout(layout, size: size(124, 50),
                     frames: [rect(0, 0, 60, 20), rect(0, 30, 60, 20), rect(64, 0, 60, 20), rect(64, 30, 60, 20)])
    }

    func testAChildWiderThanTheStackGetsALineOfItsOwn() async {
        let wide = Box(300, 10, "wide")
        let layout = layOut(HStack(alignItems: .start, wraps: true) { a; wide; b }, upTo(200, 100))
        assertLayout(layout, size: size(200, 60), frames: [rect(0, 0, 40, 20), rect(0, 20, 300, 10), rect(0, 30, 60, 30)])
    }

    // MARK: Zero space, nesting, fractions

    func testZeroSpaceWithoutShrinkOverflows() async {
        let layout = layOut(HStack { a; b }, exactly(0, 0))
        assertLayout(layout, size: size(0, 0), frames: [rect(0, 0, 40, 0), rect(40, 0, 60, 0)])
    }

    func testZeroSpaceWithShrinkCollapsesChildren() async {
        let layout = layOut(HStack { a.flexShrink(1); b.flexShrink(1) }, exactly(0, 0))
        assertLayout(layout, size: size(0, 0), frames: [rect(0, 0, 0, 0), rect(0, 0, 0, 0)])
    }

    func testEmptyStackTakesTheMinimum() async {
        let layout = layOut(HStack {}, SizeRange(min: size(10, 5), max: size(100, 100)))
        assertLayout(layout, size: size(10, 5), frames: [])
    }

    func testNestedStacksComposeOffsets() async {
        let c = Box(30, 10, "c")
        let layout = layOut(VStack(spacing: 4, alignItems: .start) {
            HStack(spacing: 2, alignItems: .start) { a; b }
            c
        }.inset(3), upTo(300, 300))
        assertLayout(layout, size: size(108, 50), frames: [rect(3, 3, 40, 20), rect(45, 3, 60, 30), rect(3, 37, 30, 10)])
    }

    func testFractionsOfTheStack() async {
        let layout = layOut(VStack(alignItems: .start) { a.width(.fraction(0.5)).height(.fraction(0.25)); b },
                            exactly(200, 100))
        assertLayout(layout, size: size(200, 100), frames: [rect(0, 0, 100, 25), rect(0, 25, 60, 30)])
    }
}
