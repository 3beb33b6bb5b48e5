import Foundation
import XCTest
@testable import AccessibilityBridge

/// Words, sentences and lines of a text by offset, in Unicode scalars, as AT-SPI's Text interface
/// asks for them.
@MainActor
final class AtspiTextSegmentsTests: XCTestCase {
    private func text(_ segments: AtspiTextSegments, _ range: Range<Int>) -> String { segments.text(range) }

    func testEmptyTextHasOnlyEmptyPieces() async throws {
        let empty = AtspiTextSegments("")
        for boundary in [Atspi.TextBoundary.character, .wordStart, .wordEnd, .sentenceStart, .lineStart, .lineEnd] {
            XCTAssertEqual(empty.segment(boundary, at: 0), 0..<0, "\(boundary)")
            XCTAssertEqual(empty.segment(boundary, at: 5, shift: 1), 0..<0, "\(boundary) after")
        }
        XCTAssertEqual(empty.piece(.word, at: 0), 0..<0)
        XCTAssertEqual(empty.piece(.line, at: 3), 0..<0)
    }

    func testWordsKeepApostrophesAndCountScalars() async throws {
        let segments = AtspiTextSegments("Don't stop — 👋 café's ok")
        XCTAssertEqual(segments.wordRanges.map { text(segments, $0) }, ["Don't", "stop", "café's", "ok"])
        XCTAssertEqual(segments.piece(.word, at: 2), 0..<5)
        XCTAssertEqual(text(segments, segments.segment(.wordStart, at: 7)), "stop — 👋 ", "a word and what follows it")
        // The emoji is one scalar: "café's" starts at 15.
        XCTAssertEqual(segments.wordRanges[2], 15..<21)
    }

    func testSentencesEndAtTheirPunctuationAndWhiteSpace() async throws {
        let segments = AtspiTextSegments("Wait... Really?! Yes. 3.5 is a number")
        XCTAssertEqual(segments.sentenceRanges.map { text(segments, $0) }, ["Wait... ", "Really?! ", "Yes. ", "3.5 is a number"])
        XCTAssertEqual(text(segments, segments.piece(.sentence, at: 9)), "Really?!")
        XCTAssertEqual(text(segments, segments.segment(.sentenceEnd, at: 10)), " Really?!")
        XCTAssertEqual(text(segments, segments.segment(.sentenceStart, at: 0, shift: -1)), "", "nothing before the first")
    }

    func testLinesSplitAtEveryKindOfBreak() async throws {
        let segments = AtspiTextSegments("one\ntwo\u{2028}three\n")
        XCTAssertEqual(segments.lineBreaks, [3, 7, 13])
        XCTAssertEqual(text(segments, segments.piece(.line, at: 5)), "two")
        XCTAssertEqual(text(segments, segments.piece(.line, at: 9)), "three")
        XCTAssertEqual(segments.piece(.line, at: 14), 14..<14, "the empty line after the last break")
        XCTAssertEqual(text(segments, segments.segment(.lineStart, at: 0)), "one\n")
        XCTAssertEqual(text(segments, segments.segment(.lineStart, at: 0, shift: 1)), "two\u{2028}")
        XCTAssertEqual(text(segments, segments.segment(.lineEnd, at: 5)), "\ntwo")
        XCTAssertEqual(text(segments, segments.segment(.lineStart, at: 14)), "three\n", "at the end: the last line")
    }
}
