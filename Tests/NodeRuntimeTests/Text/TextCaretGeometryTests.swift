import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Caret rectangles, hit offsets and selection rectangles come from the positions the layout kept
/// when it shaped its lines: answering them shapes nothing.
@MainActor
final class TextCaretGeometryTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    /// Latin, Hebrew, digits, an emoji sequence, combining marks and a second emoji, wrapped.
    private let sample = TextFixtures.lorem + " " + TextFixtures.mixed + " 👨‍👩‍👧 café nai\u{308}ve e\u{301}t\u{E9} 😀 "
        + TextFixtures.hebrew

    private func layout(width: Double = 220) -> TextLayout {
        var options = TextLayoutOptions()
        options.recordsCaretPositions = true
        return TextLayout.measure(AttributedText(sample, attributes: TextFixtures.plain()), width: width, options: options,
                                  cache: nil)
    }

    /// Every grapheme boundary of `text`, as UTF-16 offsets.
    private func boundaries(_ text: String) -> [Int] {
        var offsets = [0], offset = 0
        for character in text {
            offset += character.utf16.count
            offsets.append(offset)
        }
        return offsets
    }

    func testCaretHitAndSelectionGeometryShapeNothing() async {
        let layout = layout()
        XCTAssertGreaterThan(layout.lineCount, 4)
        let offsets = boundaries(sample)
        let before = TextWorkCounters.current
        var carets: [Int: Rect] = [:]
        for offset in offsets { carets[offset] = layout.caretRect(forOffset: offset) }
        var hits: [(Point, Int)] = []
        for line in layout.lineRects(inWidth: layout.size.width) {
            for x in stride(from: line.minX - 5, through: line.maxX + 5, by: 3) {
                let point = Point(x: x, y: line.midY)
                hits.append((point, layout.offset(closestTo: point)))
            }
        }
        var selections: [[Rect]] = []
        for start in stride(from: 0, to: offsets.count - 1, by: 7) {
            selections.append(layout.selectionRects(for: offsets[start]..<offsets[min(offsets.count - 1, start + 40)]))
        }
        let lineIndices = offsets.map { layout.lineIndex(forOffset: $0) }
        let work = TextWorkCounters.since(before)
        XCTAssertEqual(work.shapingCalls, 0, "caret, hit and selection geometry come from stored positions")
        XCTAssertEqual(work.layoutsMeasured, 0)

        // The offsets found are the nearest caret positions on the line under the point (in lines of
        // one direction: where directions meet, a position has two places and its caret shows one).
        for (point, offset) in hits {
            let found = try? XCTUnwrap(carets[offset], "offset \(offset) is a grapheme boundary")
            guard let found else { continue }
            XCTAssertEqual(found.midY, point.y, accuracy: found.height / 2, "on the line under the point")
            let line = layout.lines[layout.lineIndex(forOffset: offset)]
            guard line.fragments.allSatisfy({ !$0.isRightToLeft }) else { continue }
            let best = offsets.filter { carets[$0]!.minY == found.minY }.map { abs(carets[$0]!.minX - point.x) }.min()!
            XCTAssertEqual(abs(found.minX - point.x), best, accuracy: 0.01, "the nearest caret to \(point)")
        }
        // Carets advance through left-to-right lines, on the line the offset is on.
        for (index, offset) in offsets.enumerated().dropFirst() where offset <= TextFixtures.lorem.utf16.count {
            guard lineIndices[index] == lineIndices[index - 1] else { continue }
            XCTAssertGreaterThanOrEqual(carets[offset]!.minX, carets[offsets[index - 1]]!.minX, "offset \(offset)")
        }
        // A selection of whole lines covers them.
        XCTAssertFalse(selections.contains { $0.isEmpty })
        let first = layout.offsetRange(ofLine: 0)
        let rects = layout.selectionRects(for: first)
        XCTAssertEqual(rects.count, 1)
        XCTAssertEqual(rects.first?.width ?? 0, layout.lines[0].width, accuracy: 1)
    }

    /// In a left-to-right line of Latin text the caret sits where the pen stands after the text before
    /// it: at the start of each word (after a space, which has no ink to overhang the pen) that is the
    /// width SDL_ttf measures for the text before it, to within a pixel (the line is shaped whole, with
    /// its kerning). Inside a word the caret stays at the pen's position, left of any ink that overhangs it.
    func testCaretsInLatinTextMatchTheWidthOfTheTextBeforeThem() async {
        let text = TextFixtures.lorem
        var options = TextLayoutOptions()
        options.recordsCaretPositions = true
        let layout = TextLayout.measure(AttributedText(text, attributes: TextFixtures.plain()), width: 2_000,
                                        options: options, cache: nil)
        XCTAssertEqual(layout.lineCount, 1)
        let measurer = TextMeasurer(runs: [TextFixtures.plain()], registry: .shared, scale: 1)
        let units = Array(text.utf16)
        var checked = 0
        for offset in boundaries(text) where offset > 0 && units[offset - 1] == 0x20 {
            checked += 1
            let prefix = text.utf16.prefix(offset)
            let expected = Double(measurer.width(of: Substring(String(prefix)!), run: 0, rightToLeft: false, script: .latin))
            XCTAssertEqual(layout.caretRect(forOffset: offset).minX, expected, accuracy: 1.01, "offset \(offset)")
        }
        XCTAssertEqual(checked, 16)
        XCTAssertEqual(layout.caretRect(forOffset: units.count).minX, layout.lines[0].width, "the last caret ends the line")
    }
}
