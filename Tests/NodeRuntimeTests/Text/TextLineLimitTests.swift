import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Text cut by the layout's own limits (not the caller's `maximumNumberOfLines`) ends in the truncation
/// token and says so, once.
@MainActor
final class TextLineLimitTests: XCTestCase {
    /// The ink (non-transparent pixels) inside `rect` of `bitmap`.
    private func ink(in bitmap: Bitmap, _ rect: Rect) -> Int {
        var count = 0
        for y in max(0, Int(rect.minY))..<min(bitmap.height, Int(rect.maxY.rounded(.up))) {
            for x in max(0, Int(rect.minX))..<min(bitmap.width, Int(rect.maxX.rounded(.up))) where bitmap.pixel(x: x, y: y) >> 24 != 0 {
                count += 1
            }
        }
        return count
    }

    /// A megabyte in one line (no newline), with and without spaces, shown by a text node with no line
    /// limit: the layout stops at `maximumLineCount` lines, the last ends in "…", drawn, and the cut is
    /// reported once.
    func testAMegabyteLineEndsInAnEllipsisAtTheLineCapAndIsReported() async throws {
        for (name, string) in [("words", TextFixtures.megabyteOfWords), ("letters", String(repeating: "x", count: 1_048_576))] {
            let node = TextNode(attributedText: AttributedText(string, attributes: TextFixtures.plain()))
            node.debugName = "megabyte-\(name)"
            let size = node.calculateSizeThatFits(Size(width: 300, height: .infinity))
            let layout = node.textLayout(forWidth: 300)
            XCTAssertEqual(layout.lineCount, TextLayout.maximumLineCount, name)
            XCTAssertTrue(layout.isTruncated)
            let last = try XCTUnwrap(layout.lines.last)
            XCTAssertTrue(last.isTruncated)
            let token = try XCTUnwrap(last.fragments.last, name)
            XCTAssertEqual(token.text, "…", name)
            XCTAssertEqual(layout.diagnostics.map(\.kind), [.lineLimit])
            XCTAssertEqual(layout.diagnostics.first?.message,
                           "text longer than 1000 lines (TextLayout.maximumLineCount) is cut there; the last line ends in the truncation token")

            // The ellipsis is drawn at the end of the last line.
            node.frame = Rect(origin: .zero, size: size)
            var context = try BitmapContext(size: size)
            TextNode.draw(node.drawParameters(), in: &context, info: DrawInfo(bounds: context.bounds, scale: 1))
            let bitmap = context.makeBitmap()
            let lineX = layout.lineRects(inWidth: size.width)[layout.lineCount - 1].minX
            let tokenRect = Rect(x: lineX + token.x, y: last.top, width: token.width, height: last.height)
            XCTAssertGreaterThan(ink(in: bitmap, tokenRect), 0, "\(name): the ellipsis has ink")

            // Measured again (and at another width), the node keeps one report.
            _ = node.calculateSizeThatFits(Size(width: 280, height: .infinity))
            XCTAssertEqual(node.diagnostics.map(\.kind), [.lineLimit], name)
        }
    }

    /// Taller than the tallest bitmap (at 2x, 1,000 lines of 18 points would be 36,000 pixels): cut at
    /// the last line that fits, with the token, and reported.
    func testTextTallerThanABitmapIsCutWithTheTokenAndReported() async throws {
        let text = AttributedText((0..<1_200).map { "line \($0)" }.joined(separator: "\n"), attributes: TextFixtures.plain())
        let layout = TextLayout.measure(text, width: 300, scale: 2, cache: nil)
        XCTAssertLessThan(layout.lineCount, TextLayout.maximumLineCount)
        XCTAssertLessThanOrEqual(layout.size.height * 2, Double(Bitmap.maximumSide))
        XCTAssertEqual(layout.lines.last?.fragments.last?.text, "…")
        XCTAssertEqual(layout.diagnostics.map(\.kind), [.lineLimit])
    }

    /// The caller's own limit is no problem: no diagnostic.
    func testTheCallersLineLimitIsNotReported() async {
        let text = AttributedText(TextFixtures.megabyteOfWords, attributes: TextFixtures.plain())
        let two = TextLayout.measure(text, width: 300, options: TextLayoutOptions(maximumNumberOfLines: 2), cache: nil)
        XCTAssertTrue(two.isTruncated)
        XCTAssertEqual(two.diagnostics, [])
        let exact = TextLayout.measure(text, width: 300, options: TextLayoutOptions(maximumNumberOfLines: TextLayout.maximumLineCount),
                                       cache: nil)
        XCTAssertEqual(exact.lineCount, TextLayout.maximumLineCount)
        XCTAssertEqual(exact.diagnostics, [], "the caller asked for exactly the cap")
    }
}
