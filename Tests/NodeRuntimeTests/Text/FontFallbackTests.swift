import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Characters the text's own font (DejaVu) lacks are drawn by a font fontconfig finds: colour emoji
/// from Noto Color Emoji scaled to the text size, CJK from WenQuanYi Micro Hei (both installed by
/// `make test`). Checked on the pixels drawn.
@MainActor
final class FontFallbackTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
        }
    }

    private func draw(_ string: String, size: Double = 20, width: Double = 400) throws -> (TextLayout, Bitmap) {
        let layout = TextLayout.measure(AttributedText(string, attributes: TextFixtures.plain(size)), width: width, cache: nil)
        var context = try BitmapContext(pixelWidth: Int(width), pixelHeight: Int(layout.size.height.rounded(.up)) + 4, scale: 1)
        context.fill(context.bounds, color: .white)
        TextRenderer.draw(layout, in: &context)
        return (layout, context.makeBitmap())
    }

    /// Pixels whose channels differ by more than 60: colour, not grey ink on white.
    private func colourfulPixels(_ bitmap: Bitmap, in columns: Range<Int>? = nil) -> Int {
        var count = 0
        for y in 0..<bitmap.height {
            for x in columns ?? 0..<bitmap.width where x < bitmap.width {
                let p = bitmap.pixel(x: x, y: y)
                let r = Int((p >> 16) & 0xFF), g = Int((p >> 8) & 0xFF), b = Int(p & 0xFF)
                if max(r, g, b) - min(r, g, b) > 60 { count += 1 }
            }
        }
        return count
    }

    private func fragments(_ layout: TextLayout) -> [TextFragment] { layout.lines.flatMap(\.fragments) }

    func testEmojiAreDrawnInColourAtTheTextSize() async throws {
        let (layout, bitmap) = try draw("Hi 😀 ok")
        let emoji = try XCTUnwrap(fragments(layout).first { $0.text.contains("😀") })
        XCTAssertTrue(emoji.face?.file.path.contains("NotoColorEmoji") == true, "\(String(describing: emoji.face?.file.path))")
        XCTAssertEqual(emoji.width, 20 * 1.17 * 136 / 128, accuracy: 4, "scaled to the text size, not the 128 px strike")
        XCTAssertGreaterThan(colourfulPixels(bitmap, in: Int(emoji.x)..<Int(emoji.x + emoji.width)), 100, "a colour glyph")
        let (_, plain) = try draw("Hi ok")
        XCTAssertEqual(colourfulPixels(plain), 0, "black text on white has no colour")
    }

    func testSequencesFlagsAndKeycapsStayOneFallbackStretch() async throws {
        let (layout, bitmap) = try draw("👩‍👩‍👧 👍🏽 🇫🇷 1️⃣")
        let emojiFragments = fragments(layout).filter { $0.face != nil }
        XCTAssertFalse(emojiFragments.isEmpty)
        XCTAssertTrue(emojiFragments.allSatisfy { $0.face?.file.path.contains("NotoColorEmoji") == true })
        XCTAssertTrue(fragments(layout).contains { $0.text.contains("1\u{FE0F}\u{20E3}") && $0.face != nil },
                      "a keycap starts with an ASCII digit and is still an emoji")
        // A family of three drawn as one glyph: about one emoji wide, not three.
        let (family, _) = try draw("👩‍👩‍👧")
        let familyWidth = fragments(family).reduce(0) { $0 + $1.width }
        XCTAssertLessThan(familyWidth, 2 * 20 * 1.17, "a ZWJ sequence is one glyph")
        XCTAssertGreaterThan(colourfulPixels(bitmap), 400)
    }

    func testCJKUsesAFontThatHasIt() async throws {
        let (layout, bitmap) = try draw("中文 and 日本語")
        let cjk = fragments(layout).filter { $0.text.contains("中") || $0.text.contains("日") }
        XCTAssertFalse(cjk.isEmpty)
        XCTAssertTrue(cjk.allSatisfy { $0.face?.file.path.contains("wqy") == true }, "\(cjk.map { $0.face?.file.path ?? "own" })")
        // Drawn glyphs differ from DejaVu's missing-glyph boxes: the two ideographs are not identical.
        let (one, first) = try draw("中")
        let (_, second) = try draw("文")
        XCTAssertNotEqual(first.pixels, second.pixels)
        XCTAssertGreaterThan(fragments(one).first?.width ?? 0, 15)
        XCTAssertGreaterThan(bitmap.pixels.filter { ($0 & 0xFF) < 128 }.count, 100, "ink drawn")
    }

    /// Devanagari is shaped as Devanagari (HarfBuzz forms the conjunct and places the vowel sign), from
    /// Lohit Devanagari; Thai from Loma, and Thai lines break between words though it has no spaces.
    func testDevanagariIsShapedAndThaiBreaksBetweenWords() async throws {
        let (layout, _) = try draw("नमस्ते दुनिया")
        let hindi = fragments(layout).filter { $0.face != nil }
        XCTAssertFalse(hindi.isEmpty)
        XCTAssertTrue(hindi.allSatisfy { $0.face?.file.path.contains("Lohit") == true && $0.script == .devanagari },
                      "\(hindi.map { ($0.face?.file.path ?? "own", $0.script) })")
        // "स्ते" is one conjunct with its vowel sign: shaped as Devanagari it is narrower than its
        // four characters drawn one by one.
        let (whole, _) = try draw("स्ते")
        let pieces = try ["स", "्", "त", "े"].map { try draw($0).0 }
        let separate = pieces.reduce(0.0) { $0 + $1.size.width }
        XCTAssertLessThan(whole.size.width, separate, "the conjunct is shaped, not laid side by side")

        let thai = "ฉันจะไปตลาดพรุ่งนี้ตอนเช้าเพื่อซื้อผลไม้และผักสดสำหรับครอบครัว"
        let (narrow, bitmap) = try draw(thai, width: 150)
        XCTAssertTrue(fragments(narrow).allSatisfy { $0.face?.file.path.contains("Loma") == true })
        XCTAssertGreaterThan(narrow.lineCount, 2)
        let allowed = Set(UnicodeText.lineBreakOffsets(in: thai))
        var offset = 0
        for line in narrow.lines.dropLast() {
            offset += line.fragments.map(\.text).joined().unicodeScalars.count
            XCTAssertTrue(allowed.contains(offset), "a Thai line ends between words (at \(offset))")
        }
        XCTAssertGreaterThan(bitmap.pixels.filter { ($0 & 0xFF) < 128 }.count, 100, "ink drawn")
    }

    func testCharactersNoFontHasKeepTheOwnFontAndChoicesAreCached() async throws {
        let before = FontFallback.shared.queryCount
        let (layout, _) = try draw("a\u{10FFFD}b")  // a private-use code point no font has
        XCTAssertTrue(fragments(layout).allSatisfy { $0.face == nil })
        let asked = FontFallback.shared.queryCount - before
        _ = try draw("a\u{10FFFD}b c\u{10FFFD}")
        XCTAssertEqual(FontFallback.shared.queryCount - before, asked, "the answer, even 'none', is remembered")
    }

    /// One golden of every script the gallery shows and of emoji, drawn through fallback where needed.
    func testScriptsAndEmojiGolden() async throws {
        let samples = [
            "Latin: Meet me at 6:30, bring the photos",
            "Кириллица: встретимся в половине седьмого",
            "עברית: נפגש בתחנה בשש וחצי",
            "العربية: نلتقي في المحطة في السادسة",
            "中文：我们六点半在车站见面",
            "日本語：明日の午後に会いましょう",
            "हिन्दी: कल सुबह स्टेशन पर मिलते हैं",
            "ไทย: พบกันที่สถานีพรุ่งนี้เช้า",
            "Emoji: 😀🎉📸👍🏽🍕 ❤️ 🇫🇷 👩‍👩‍👧 1️⃣",
        ]
        var context = try BitmapContext(pixelWidth: 420, pixelHeight: 30 * samples.count + 8, scale: 1)
        context.fill(context.bounds, color: .white)
        for (row, sample) in samples.enumerated() {
            let layout = TextLayout.measure(AttributedText(sample, attributes: TextFixtures.plain(16)), width: 410, cache: nil)
            TextRenderer.draw(layout, in: &context, at: Point(x: 5, y: Double(4 + row * 30)))
        }
        GoldenImage.assertMatches(context.makeBitmap(), named: "text-scripts-and-emoji", in: "NodeRuntimeTests", tolerance: 8)
    }
}
