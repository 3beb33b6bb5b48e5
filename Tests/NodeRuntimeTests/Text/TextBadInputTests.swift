import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Everything a user or a server can throw at text: nothing crashes, hangs or silently loses text.
@MainActor
final class TextBadInputTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    private func draw(_ layout: TextLayout) -> Bitmap? {
        guard var context = try? BitmapContext(size: layout.size, scale: layout.scale) else { return nil }
        TextRenderer.draw(layout, in: &context)
        return context.makeBitmap()
    }

    func testEmptyText() async throws {
        let layout = TextLayout.measure(AttributedText(), width: 200, cache: nil)
        XCTAssertEqual(layout.size, .zero)
        XCTAssertEqual(layout.lineCount, 0)
        XCTAssertFalse(layout.isTruncated)
        XCTAssertNil(layout.hitTest(.zero))
        let node = TextNode("")
        XCTAssertEqual(node.calculateSizeThatFits(Size(width: 200, height: 100)), .zero)
        XCTAssertEqual(node.lineCount, 0)
        // Drawing an empty node's parameters into a small context draws nothing and does not trap.
        var context = try BitmapContext(size: Size(width: 10, height: 10))
        TextNode.draw(node.drawParameters(), in: &context, info: DrawInfo(bounds: context.bounds, scale: 1))
        XCTAssertTrue(context.makeBitmap().pixels.allSatisfy { $0 == 0 })
    }

    func testZeroNegativeNaNAndInfiniteWidths() async {
        let text = AttributedText(TextFixtures.lorem, attributes: TextFixtures.plain())
        for width in [0.0, -50, .nan, -.infinity, 0.4] {
            let layout = TextLayout.measure(text, width: width, cache: nil)
            XCTAssertEqual(layout.size, .zero, "\(width)")
            XCTAssertEqual(layout.lineCount, 0, "\(width)")
            XCTAssertTrue(layout.isTruncated, "\(width): the text did not fit at all")
        }
        let unconstrained = TextLayout.measure(text, width: .infinity, cache: nil)
        XCTAssertEqual(unconstrained.lineCount, 1)
        XCTAssertFalse(unconstrained.isTruncated)
        // A width narrower than any character still advances: one character a line.
        let narrow = TextLayout.measure(AttributedText("abc", attributes: TextFixtures.plain()), width: 1, cache: nil)
        XCTAssertEqual(narrow.lineCount, 3)
        // NaN keys must not pile up in the cache: NaN is measured as 0 and found again.
        let cache = TextLayoutCache()
        let first = TextLayout.measure(text, width: .nan, cache: cache)
        XCTAssertTrue(TextLayout.measure(text, width: .nan, cache: cache) === first)
        let node = TextNode(attributedText: text)
        XCTAssertEqual(node.calculateSizeThatFits(Size(width: .nan, height: .nan)), .zero)
        XCTAssertEqual(node.calculateSizeThatFits(Size(width: -1, height: 10)), .zero)
    }

    func testBadFontSizesSpacingAndAttachments() async throws {
        var text = AttributedText("nan ", attributes: TextAttributes(font: TextFont(size: .nan)))
        text.append("huge ", attributes: TextAttributes(font: TextFont(size: 1e12)))
        text.append("negative", attributes: TextAttributes(font: TextFont(size: -4)))
        text.append(TextAttachment(identifier: "x", size: Size(width: .nan, height: -5), baselineOffset: .infinity))
        let options = TextLayoutOptions(lineSpacing: .nan, maximumNumberOfLines: -3)
        let layout = TextLayout.measure(text, width: 300, options: options, cache: nil)
        XCTAssertGreaterThan(layout.lineCount, 0)
        XCTAssertTrue(layout.size.width.isFinite && layout.size.height.isFinite)
        XCTAssertLessThanOrEqual(layout.size.height, Double(Bitmap.maximumSide))
        XCTAssertEqual(layout.attachmentRects().first?.rect.size, Size.zero)
        _ = draw(layout)
    }

    func testInvalidUTF8IsReplacedNotDropped() async throws {
        // "Hi", two invalid bytes, "!", a truncated three-byte sequence at the end.
        let bytes: [UInt8] = [0x48, 0x69, 0xFF, 0xFE, 0x21, 0xE2, 0x82]
        let text = AttributedText(utf8: bytes, attributes: TextFixtures.plain())
        XCTAssertEqual(text.string, "Hi\u{FFFD}\u{FFFD}!\u{FFFD}")
        let replaced = TextLayout.measure(text, width: 300, cache: nil)
        let clean = TextLayout.measure(AttributedText("Hi!", attributes: TextFixtures.plain()), width: 300, cache: nil)
        XCTAssertGreaterThan(replaced.size.width, clean.size.width + 10, "each U+FFFD takes room")
        XCTAssertEqual(replaced.lines[0].fragments.map(\.text).joined(), "Hi\u{FFFD}\u{FFFD}!\u{FFFD}")
        // NUL would end a C string early: it becomes U+FFFD too, and tabs become spaces.
        let withNul = AttributedText("a\u{0}b\tc", attributes: TextFixtures.plain())
        XCTAssertEqual(withNul.string, "a\u{FFFD}b    c")
        let bitmap = try XCTUnwrap(draw(TextLayout.measure(text, width: 300, cache: nil)))
        XCTAssertTrue(bitmap.pixels.contains { $0 != 0 })
    }

    func testAMegabyteOfTextIsCappedAndStaysCheap() async {
        let text = AttributedText(TextFixtures.megabyteOfWords, attributes: TextFixtures.plain())
        XCTAssertGreaterThanOrEqual(text.string.utf8.count, 1_048_576)
        let twoLines = TextLayout.measure(text, width: 300, options: TextLayoutOptions(maximumNumberOfLines: 2), cache: nil)
        XCTAssertEqual(twoLines.lineCount, 2)
        XCTAssertTrue(twoLines.isTruncated)
        for mode in [TruncationMode.middle, .start] {
            let cut = TextLayout.measure(text, width: 300, options: TextLayoutOptions(maximumNumberOfLines: 1, truncationMode: mode),
                                         cache: nil)
            XCTAssertTrue(cut.lines[0].fragments.map(\.text).joined().contains("…"))
        }
        // No limit given: the layout stops at its own cap instead of laying out ~40,000 lines.
        let all = TextLayout.measure(text, width: 300, cache: nil)
        XCTAssertLessThanOrEqual(all.lineCount, TextLayout.maximumLineCount)
        XCTAssertTrue(all.isTruncated)
        XCTAssertLessThanOrEqual(all.size.height, Double(Bitmap.maximumSide))
        XCTAssertTrue(all.lines.last!.isTruncated)
    }

    func testAMegabyteWithoutSpacesOrWithOnlyNewlines() async {
        let word = AttributedText(String(repeating: "x", count: 1_048_576), attributes: TextFixtures.plain())
        let words = TextLayout.measure(word, width: 200, options: TextLayoutOptions(maximumNumberOfLines: 3), cache: nil)
        XCTAssertEqual(words.lineCount, 3)
        XCTAssertTrue(words.isTruncated)
        let newlines = AttributedText(String(repeating: "\n", count: 1_048_576), attributes: TextFixtures.plain())
        let empty = TextLayout.measure(newlines, width: 200, cache: nil)
        XCTAssertLessThanOrEqual(empty.lineCount, TextLayout.maximumLineCount)
        XCTAssertTrue(empty.isTruncated)
    }

    func testAMegabyteTextNodeDraws() async throws {
        let node = TextNode(attributedText: AttributedText(TextFixtures.megabyteOfWords, attributes: TextFixtures.plain()))
        node.maximumNumberOfLines = 4
        let size = node.calculateSizeThatFits(Size(width: 260, height: .infinity))
        XCTAssertEqual(node.lineCount, 4)
        node.frame = Rect(origin: .zero, size: size)
        var context = try BitmapContext(size: size)
        TextNode.draw(node.drawParameters(), in: &context, info: DrawInfo(bounds: context.bounds, scale: 1))
        XCTAssertTrue(context.makeBitmap().pixels.contains { $0 != 0 })
    }

    func testUnknownFamilyFallsBackToTheDefault() async {
        let unknown = TextLayout.measure(AttributedText("fallback", attributes: TextAttributes(font: TextFont(family: "No Such Family"))),
                                         width: 300, cache: nil)
        let sans = TextLayout.measure(AttributedText("fallback", attributes: TextAttributes(font: TextFont())), width: 300, cache: nil)
        XCTAssertEqual(unknown.size, sans.size)
    }
}
