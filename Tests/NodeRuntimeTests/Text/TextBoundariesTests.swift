import Foundation
import XCTest
@testable import NodeRuntime

/// Grapheme and word boundaries found from a stretch around a position are those of the whole text:
/// checked at every position of texts made to put emoji sequences, flags, combining marks, Hangul,
/// CJK, Thai and right-to-left text across the edge of small stretches; and the units read per step
/// stay bounded in a long text.
final class TextBoundariesTests: XCTestCase {
    private static let samples: [String] = [
        "Hi 👨‍👩‍👧 there friend",
        "a👨‍👩‍👧‍👦b👩‍❤️‍💋‍👨c 👍🏽👍🏿 1️⃣ #️⃣ ❤️ ok",
        "e" + String(repeating: "\u{301}", count: 40) + "x y" + String(repeating: "\u{308}\u{323}", count: 12) + " z",
        "🇫🇷🇩🇪🇯🇵🇺🇸🇬🇧🇮🇹🇪🇸 flags 🇨🇦🇧🇷 a🇫🇷",
        "\u{1100}\u{1161}\u{11A8}\u{1100}\u{1161} 한국어 텍스트입니다 \u{AC00}\u{11A8}",
        "我们今天去公园散步，然后吃饭。日本語のテキストもあります。カタカナ",
        "ภาษาไทยไม่มีช่องว่างระหว่างคำ และนี่คือประโยค",
        "שָׁלוֹם עוֹלָם! مَرْحَبًا بِكُمْ في التطبيق 2024, then English.",
        "नमस्ते क्षत्रिय द्वारा स्त्री",
        "line one\r\nline two\n\nthird\u{2028}fourth\r\rend",
        "well-known e.g. U.S.A. 3.14 can't don’t co-op",
        "\u{0600}1 \u{0601}23 prepend",
        "tab\there  two  spaces   three",
    ]

    /// Every grapheme boundary, as Swift's characters of the whole text give them.
    private func graphemeBoundaries(_ text: String) -> [Int] {
        var offsets = [0], offset = 0
        for character in text {
            offset += character.utf16.count
            offsets.append(offset)
        }
        return offsets
    }

    func testGraphemeStepsFromAStretchMatchTheWholeText() {
        for text in Self.samples {
            let boundaries = graphemeBoundaries(text)
            let set = Set(boundaries)
            let length = text.utf16.count
            let finder = TextBoundaries(text)
            for window in [1, 2, 3, 5, 8, 16, 64] {
                for offset in 0...length {
                    let after = boundaries.first { $0 > offset } ?? length
                    let before = boundaries.last { $0 < offset } ?? 0
                    let snapped = boundaries.last { $0 <= offset } ?? 0
                    XCTAssertEqual(finder.graphemeBoundary(after: offset, window: window), after,
                                   "after \(offset), window \(window) in \(text.debugDescription)")
                    XCTAssertEqual(finder.graphemeBoundary(before: offset, window: window), before,
                                   "before \(offset), window \(window) in \(text.debugDescription)")
                    XCTAssertEqual(finder.graphemeBoundary(atOrBefore: offset, window: window), snapped,
                                   "at or before \(offset) (a boundary: \(set.contains(offset))), window \(window) in \(text.debugDescription)")
                }
            }
        }
    }

    func testWordStepsFromAStretchMatchTheWholeText() {
        for text in Self.samples {
            let length = text.utf16.count
            let segments = UnicodeText.wordSegments(in: text)
            let words = segments.filter(\.isWord)
            let finder = TextBoundaries(text)
            for window in [8, 12, 20, 128] {
                for offset in 0...length {
                    let end = words.first { $0.range.upperBound > offset }?.range.upperBound ?? length
                    let start = words.last { $0.range.lowerBound < offset }?.range.lowerBound ?? 0
                    let around = segments.first { $0.range.contains(offset) }?.range ?? segments.last?.range ?? offset..<offset
                    XCTAssertEqual(finder.wordEnd(after: offset, window: window), end,
                                   "word end after \(offset), window \(window) in \(text.debugDescription)")
                    XCTAssertEqual(finder.wordStart(before: offset, window: window), start,
                                   "word start before \(offset), window \(window) in \(text.debugDescription)")
                    XCTAssertEqual(finder.segment(around: offset, window: window), around,
                                   "segment around \(offset), window \(window) in \(text.debugDescription)")
                }
            }
        }
    }

    /// A step reads a bounded stretch of a 100,000-character text, wherever the caret is and
    /// whatever the script; the stretch does not grow with the text.
    func testAStepReadsABoundedStretchOfALongText() {
        // Text with spaces, and text without (where a word step settles after `maximumWordStretch`
        // units on each side and reads the stretch between).
        let texts: [(String, Int)] = [
            (String(String(repeating: "lorem ipsum dolor sit amet ", count: 3_704).prefix(100_000)), 1_024),
            (String(repeating: "שָׁלוֹם עוֹלָם 👨‍👩‍👧 ", count: 5_000), 1_024),
            (String(repeating: "e\u{301}🇫🇷x", count: 12_000), 4 * TextBoundaries.maximumWordStretch + 64),
        ]
        for (text, bound) in texts {
            let finder = TextBoundaries(text)
            let length = finder.length
            var most = 0
            for offset in stride(from: 0, through: length, by: max(1, length / 97)) {
                for step in 0..<6 {
                    let before = TextWorkCounters.current
                    switch step {
                    case 0: _ = finder.graphemeBoundary(after: offset)
                    case 1: _ = finder.graphemeBoundary(before: offset)
                    case 2: _ = finder.graphemeBoundary(atOrBefore: offset)
                    case 3: _ = finder.wordEnd(after: offset)
                    case 4: _ = finder.wordStart(before: offset)
                    default: _ = finder.segment(around: offset)
                    }
                    most = max(most, TextWorkCounters.since(before).unitsExamined)
                }
            }
            XCTAssertLessThanOrEqual(most, bound, "units read by one step in a text of \(length) units")
            XCTAssertGreaterThan(most, 0)
        }
    }
}
