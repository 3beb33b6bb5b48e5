import Compositor
import Foundation
import TestSupport
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// The line index of a long text: its lines are those `TextLayout` makes, a window of them laid out
/// alone is laid out as in the whole layout, and after an edit the index updated from the old one is
/// the index made anew.
@MainActor
final class TextLineIndexTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    private var options: TextLayoutOptions {
        var options = TextLayoutOptions()
        options.recordsCaretPositions = true
        return options
    }

    private let samples: [String] = [
        TextFixtures.lorem + " " + TextFixtures.lorem + "\n\n" + TextFixtures.mixed + "\n" + TextFixtures.hebrew + " "
            + TextFixtures.arabic + "\nend with a newline\n",
        String(repeating: "word 👨‍👩‍👧 e\u{301}t\u{E9} 中文 ", count: 40),
        "short",
        "\n\nthree empty lines before\r\nand CR LF",
    ]

    private func index(_ text: String, width: Double) -> TextLineIndex {
        TextLineIndex.make(AttributedText(text, attributes: TextFixtures.plain()), width: width, options: options, scale: 1,
                           fonts: .shared)
    }

    func testTheLinesAreThoseOfTheWholeLayout() async {
        for sample in samples {
            for width in [120.0, 260.0] {
                let text = AttributedText(sample, attributes: TextFixtures.plain())
                let whole = TextLayout.measure(text, width: width, options: options, cache: nil)
                let index = index(sample, width: width)
                XCTAssertEqual(index.lineStarts, whole.lines.compactMap { $0.textRange?.lowerBound },
                               "width \(width): \(sample.prefix(30).debugDescription)")
                XCTAssertEqual(index.isRightToLeft, whole.lines.map(\.isRightToLeft))
                XCTAssertEqual(index.height, whole.size.height, accuracy: 0.01)
                // Any window of lines is laid out as those lines are in the whole layout.
                let count = index.lineCount
                for window in [0..<min(3, count), (count / 2)..<min(count, count / 2 + 4), max(0, count - 2)..<count] {
                    let part = index.layout(lines: window)
                    XCTAssertEqual(part.lines.count, window.count)
                    for (line, expected) in zip(part.lines, whole.lines[window]) {
                        XCTAssertEqual(line.top, expected.top, accuracy: 0.01)
                        XCTAssertEqual(line.width, expected.width, accuracy: 0.01)
                        XCTAssertEqual(line.textRange, expected.textRange)
                        XCTAssertEqual(line.fragments.map(\.x), expected.fragments.map(\.x))
                        XCTAssertEqual(line.fragments.map(\.text), expected.fragments.map(\.text))
                    }
                    if let first = window.first {
                        let offset = index.lineStarts[first]
                        XCTAssertEqual(part.caretRect(forOffset: offset), whole.caretRect(forOffset: offset))
                    }
                }
            }
        }
    }

    /// Edits anywhere (typing, deleting, pasting lines, right-to-left text at a paragraph's start):
    /// the index updated from the old one equals the index made from the new text.
    func testAnUpdatedIndexEqualsOneMadeAnew() async {
        var random = SeededRandom(seed: 0x7E55E1A)
        let insertions = ["a", " ", "word ", "\n", "שלום ", "👍", "e\u{301}", "long paste of several words\nand a line\n"]
        var text = String(repeating: "lorem ipsum dolor sit amet ", count: 60) + "\n" + TextFixtures.hebrew
        var index = index(text, width: 200)
        for step in 0..<60 {
            let characters = Array(text)
            // A position between characters.
            let characterIndex = Int(random.next() % UInt64(characters.count + 1))
            let at = String(characters[..<characterIndex]).utf16.count
            var edited = text
            let utf16 = edited.utf16
            let position = utf16.index(utf16.startIndex, offsetBy: at)
            if random.next() % 3 == 0, characterIndex < characters.count {
                let end = edited.index(position, offsetBy: min(characters.count - characterIndex, Int(random.next() % 12) + 1))
                edited.removeSubrange(position..<end)
            } else {
                edited.insert(contentsOf: insertions[Int(random.next() % UInt64(insertions.count))], at: position)
            }
            let updated = index.updated(to: AttributedText(edited, attributes: TextFixtures.plain()))
            let anew = self.index(edited, width: 200)
            // Exact up to the first gap; with the gaps closed, the same as made anew.
            let exact = updated.exactLineCount
            XCTAssertEqual(Array(updated.lineStarts[..<exact]), Array(anew.lineStarts.prefix(exact)), "step \(step)")
            XCTAssertEqual(Array(updated.isRightToLeft[..<exact]), Array(anew.isRightToLeft.prefix(exact)), "step \(step)")
            let closed = updated.verified(through: .max)
            XCTAssertEqual(closed.gaps, [])
            XCTAssertEqual(closed.lineStarts, anew.lineStarts, "step \(step)")
            XCTAssertEqual(closed.startsParagraph, anew.startsParagraph, "step \(step)")
            XCTAssertEqual(closed.isRightToLeft, anew.isRightToLeft, "step \(step)")
            // The line holding a position far down is exact once asked for.
            let far = updated.verified(containing: edited.utf16.count - 1)
            XCTAssertEqual(far.lineStarts[far.line(containing: edited.utf16.count - 1)],
                           anew.lineStarts[anew.line(containing: edited.utf16.count - 1)], "step \(step)")
            text = edited
            // Half the time the next edit meets the gaps this one left.
            index = step % 2 == 0 ? updated : closed
        }
    }

    /// An edit in the middle of a long paragraph breaks a few lines again, not the paragraph.
    func testAnEditBreaksAFewLinesAgain() async {
        let text = longParagraphText(40_000)
        let index = index(text, width: 300)
        XCTAssertGreaterThan(index.lineCount, 500)
        var edited = text
        edited.insert(contentsOf: "typed ", at: edited.index(edited.startIndex, offsetBy: 20_000))
        let before = TextWorkCounters.current
        let updated = index.updated(to: AttributedText(edited, attributes: TextFixtures.plain()))
        let work = TextWorkCounters.since(before)
        XCTAssertLessThan(work.unitsLaidOut, 2_000, "lines broken again: \(work.unitsLaidOut) units")
        XCTAssertEqual(updated.verified(through: .max).lineStarts, self.index(edited, width: 300).lineStarts)
    }

    private func longParagraphText(_ length: Int) -> String {
        String(String(repeating: "lorem ipsum dolor sit amet ", count: length / 27 + 1).prefix(length))
    }
}
