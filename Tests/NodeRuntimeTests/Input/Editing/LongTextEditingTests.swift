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
}
