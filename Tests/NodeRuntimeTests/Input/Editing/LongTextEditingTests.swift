import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A field holding a long text: what a key costs the UI thread follows what is on screen, not the
/// length of the text, and the caret, the selection and scrolling stay right everywhere in it.
@MainActor
final class LongTextEditingTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// ← → and Ctrl+← → in the middle of a 100,000-character text read a bounded stretch around the
    /// caret.
    func testACaretStepExaminesABoundedStretchOfALongText() async {
        let harness = FieldHarness(text: longParagraph(100_000)) { $0.maximumVisibleLines = 6 }
        defer { harness.tearDown() }
        let field = harness.field
        harness.click()
        field.selectedRange = 50_000..<50_000
        harness.send([])
        let keys: [(Key, KeyModifiers)] = [(.left, []), (.left, []), (.right, []), (.left, .control), (.left, .control),
                                           (.right, .control), (.right, []), (.right, .shift), (.left, [.control, .shift])]
        for (key, modifiers) in keys {
            let before = TextWorkCounters.current
            harness.key(key, modifiers)
            let examined = TextWorkCounters.since(before).unitsExamined
            XCTAssertLessThanOrEqual(examined, 1_024, "\(key) \(modifiers) read \(examined) units of the text")
        }
        XCTAssertTrue((49_950...50_050).contains(field.selectedRange.lowerBound), "the steps moved the caret near where they began")
    }

    /// A keystroke in the middle of a 100,000-character text lays out and draws the lines around the
    /// caret, not the text: the UI thread lays out (here, with layout on the UI thread) a few lines'
    /// worth, and the text's bitmap is a few lines tall.
    func testAKeystrokeInALongTextLaysOutAndDrawsOnlyTheLinesAroundTheCaret() async throws {
        let harness = FieldHarness(text: longParagraph(100_000), backgroundLayout: false) { $0.maximumVisibleLines = 6 }
        defer { harness.tearDown() }
        let field = harness.field
        harness.click()
        field.selectedRange = 50_000..<50_000
        harness.send([])
        let lineHeight = field.caretFrame.height
        XCTAssertGreaterThan(lineHeight, 10)
        XCTAssertEqual(field.bounds.height, 6 * lineHeight, accuracy: 1, "six lines show")
        for letter in ["a", "b", "c"] {
            let before = TextWorkCounters.current
            harness.type(letter)
            let work = TextWorkCounters.since(before)
            XCTAssertLessThan(work.unitsLaidOut, 5_000, "a keystroke laid out \(work.unitsLaidOut) units")
            XCTAssertLessThanOrEqual(field.textNode.frame.height, 16 * lineHeight,
                                     "the text's bitmap covers the lines around the view, not the text")
            let contents = try XCTUnwrap(field.textNode.layerIfLoaded?.contents)
            XCTAssertLessThanOrEqual(Double(contents.height), 16 * lineHeight + 2)
        }
        XCTAssertEqual(field.selectedRange, 50_003..<50_003)
        XCTAssertTrue(field.text.hasPrefix(longParagraph(50_000) + "abc"))
        // The caret is on screen, in the field.
        XCTAssertGreaterThanOrEqual(field.caretFrame.minY, -0.5)
        XCTAssertLessThanOrEqual(field.caretFrame.maxY, field.bounds.height + 0.5)
    }

    /// The caret reaches the end of a long text, and typing there shows the new character on the last
    /// line, in view.
    func testTheCaretReachesTheEndOfALongText() async throws {
        let text = longParagraph(60_000)
        let harness = FieldHarness(text: text) { $0.maximumVisibleLines = 6 }
        defer { harness.tearDown() }
        let field = harness.field
        harness.click()
        harness.key(.end, .control)
        XCTAssertEqual(field.selectedRange, 60_000..<60_000)
        harness.type("!")
        let layout = try XCTUnwrap(field.shownTextLayout)
        let last = layout.lines[layout.lines.count - 1]
        XCTAssertEqual(layout.offsetRange(ofLine: layout.lines.count - 1).upperBound, 60_001, "the last line is laid out")
        XCTAssertGreaterThan(last.top, 1_000 * last.height, "lines past the thousandth are there")
        XCTAssertEqual(field.caretFrame.maxY, field.bounds.height, accuracy: 1.5, "the caret is at the bottom of the view")
        XCTAssertGreaterThan(field.caretFrame.minX, 5)
    }

    /// The whole layout of `text` as the field's lines are (for checking the lines it lays out alone).
    private func wholeLayout(_ text: String, width: Double) -> TextLayout {
        var options = TextLayoutOptions()
        options.recordsCaretPositions = true
        return TextLayout.measure(AttributedText(text, attributes: TextAttributes(font: .system(size: 15))), width: width,
                                  options: options, cache: nil)
    }

    /// The caret as the whole layout places it, in the field's coordinates.
    private func expectedCaret(_ field: EditableTextNode, in whole: TextLayout) -> Rect {
        let caret = whole.caretRect(forOffset: field.selectedRange.upperBound, inWidth: field.bounds.width)
        return Rect(x: min(max(0, caret.minX - 1), field.bounds.width - 2), y: caret.minY - field.scrollOffset, width: 2,
                    height: caret.height)
    }

    /// Far down a long text the field draws the whole layout's lines (the same pixels), keeps the caret
    /// where the whole layout puts it and in view while it moves up past the lines laid out, draws a
    /// selection on every line of it in view, and a click lands where the whole layout says.
    func testCaretSelectionScrollingAndLinesFarDownMatchTheWholeLayout() async throws {
        let text = (0..<30).map { "Paragraph \($0): " + longParagraph(600) }.joined(separator: "\n")
        let harness = FieldHarness(text: text) { $0.maximumVisibleLines = 6 }
        defer { harness.tearDown() }
        let field = harness.field
        harness.click()
        harness.key(.end, .control)
        let whole = wholeLayout(text, width: field.bounds.width)
        XCTAssertGreaterThan(whole.lineCount, 300)
        XCTAssertEqual(field.selectedRange, text.utf16.count..<text.utf16.count)
        for step in 0..<30 {
            harness.key(.up)
            let caret = field.caretFrame
            XCTAssertGreaterThanOrEqual(caret.minY, -0.5, "step \(step): the caret is in view")
            XCTAssertLessThanOrEqual(caret.maxY, field.bounds.height + 0.5, "step \(step)")
            let expected = expectedCaret(field, in: whole)
            XCTAssertEqual(caret.minX, expected.minX, accuracy: 0.5, "step \(step)")
            XCTAssertEqual(caret.minY, expected.minY, accuracy: 0.5, "step \(step)")
            XCTAssertFalse(field.caretNode.isHidden, "step \(step)")
        }
        XCTAssertEqual(whole.lineIndex(forOffset: field.selectedRange.upperBound), whole.lineCount - 31)

        // The lines drawn are the whole layout's lines there, pixel for pixel.
        let shown = try XCTUnwrap(field.shownLines)
        let contents = try XCTUnwrap(field.textNode.layerIfLoaded?.contents)
        var context = try BitmapContext(pixelWidth: contents.width, pixelHeight: contents.height, scale: 1)
        TextRenderer.draw(whole, in: &context, at: Point(x: 0, y: -shown.index.top(ofLine: shown.windowLines.lowerBound)),
                          boxWidth: field.bounds.width)
        let expectedPixels = context.makeBitmap()
        var differing = 0
        for y in 0..<contents.height {
            for x in 0..<contents.width where contents.pixel(x: x, y: y) != expectedPixels.pixel(x: x, y: y) { differing += 1 }
        }
        XCTAssertEqual(differing, 0, "the field draws the lines the whole layout has there")
        var inked = 0
        for y in 0..<contents.height {
            for x in 0..<contents.width where contents.pixel(x: x, y: y) >> 24 > 0x80 { inked += 1 }
        }
        XCTAssertGreaterThan(inked, 1_000, "and they have ink")

        // A selection grown down past the lines laid out covers each of its lines in view.
        for _ in 0..<10 { harness.key(.down, .shift) }
        let range = field.selectedRange
        let top = field.scrollOffset
        let expectedRects = whole.selectionRects(for: range, inWidth: field.bounds.width)
            .map { $0.offsetBy(dx: 0, dy: -top) }
            .filter { $0.maxY > 0.5 && $0.minY < field.bounds.height - 0.5 }
        let drawn = field.selectionNodes.filter { !$0.isHidden }.map(\.frame)
            .filter { $0.maxY > 0.5 && $0.minY < field.bounds.height - 0.5 }
        XCTAssertEqual(drawn.count, expectedRects.count)
        for (rect, expected) in zip(drawn.sorted { $0.minY < $1.minY }, expectedRects.sorted { $0.minY < $1.minY }) {
            XCTAssertEqual(rect.minX, expected.minX, accuracy: 0.5)
            XCTAssertEqual(rect.width, expected.width, accuracy: 0.5)
            XCTAssertEqual(rect.minY, expected.minY, accuracy: 0.5)
        }

        // A click in the middle of the view lands where the whole layout says (Shift is up again).
        harness.send([.keyUp(.down, modifiers: [])])
        let point = Point(x: field.bounds.width / 3, y: field.bounds.height / 2)
        harness.click(at: point)
        let offset = whole.offset(closestTo: Point(x: point.x, y: point.y + field.scrollOffset), inWidth: field.bounds.width)
        XCTAssertEqual(field.selectedRange, offset..<offset)
    }

    /// Typing at the start of a long paragraph moves words down its lines (breaking stops some lines
    /// past the edit); the caret at the end of the text, and the lines there, are still those of the
    /// whole layout of the new text.
    func testLinesFarBelowAnEditAreRightWhenShown() async throws {
        let text = longParagraph(30_000)
        let harness = FieldHarness(text: text) { $0.maximumVisibleLines = 6 }
        defer { harness.tearDown() }
        let field = harness.field
        harness.click()
        harness.key(.home, .control)
        for word in ["Typed ", "at ", "the ", "start "] { harness.type(word) }
        harness.key(.end, .control)
        let edited = "Typed at the start " + text
        XCTAssertEqual(field.text, edited)
        let whole = wholeLayout(edited, width: field.bounds.width)
        let expected = expectedCaret(field, in: whole)
        XCTAssertEqual(field.caretFrame.minX, expected.minX, accuracy: 0.5)
        XCTAssertEqual(field.caretFrame.minY, expected.minY, accuracy: 0.5)
        XCTAssertEqual(field.caretFrame.maxY, field.bounds.height, accuracy: 1.5, "the last line shows at the bottom")
        let shown = try XCTUnwrap(field.shownLines)
        XCTAssertEqual(shown.index.verified(through: .max).lineStarts, whole.lines.compactMap { $0.textRange?.lowerBound })
    }
}
