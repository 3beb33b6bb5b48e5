import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Line breaking, line counts and rects, truncation, bidi order and caching, measured (not drawn).
@MainActor
final class TextLayoutTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    private func measure(_ text: AttributedText, width: Double, options: TextLayoutOptions = TextLayoutOptions(),
                         scale: Double = 1) -> TextLayout {
        TextLayout.measure(text, width: width, options: options, scale: scale, cache: nil)
    }

    private func plain(_ string: String, size: Double = 15) -> AttributedText {
        AttributedText(string, attributes: TextFixtures.plain(size))
    }

    /// The visible text of each line, fragments in visual order.
    private func lineTexts(_ layout: TextLayout) -> [String] {
        layout.lines.map { $0.fragments.map(\.text).joined() }
    }

    // MARK: - Lines

    func testWrapsAtSpacesAndReportsLineRects() async {
        let layout = measure(plain(TextFixtures.lorem), width: 200, options: TextLayoutOptions(lineSpacing: 3))
        XCTAssertGreaterThan(layout.lineCount, 2)
        XCTAssertFalse(layout.isTruncated)
        let rects = layout.lineRects()
        XCTAssertEqual(rects.count, layout.lineCount)
        for (index, rect) in rects.enumerated() {
            XCTAssertGreaterThan(rect.width, 0)
            XCTAssertLessThanOrEqual(rect.maxX, 200)
            XCTAssertEqual(rect.minX, 0, "left-to-right text starts at the left edge")
            XCTAssertEqual(rect.height, rects[0].height, "one font: equal line heights")
            if index > 0 { XCTAssertEqual(rect.minY, rects[index - 1].maxY + 3, accuracy: 1e-9, "line spacing") }
        }
        XCTAssertEqual(layout.size.height, rects.last!.maxY, accuracy: 1e-9)
        XCTAssertLessThanOrEqual(layout.size.width, 200)
        // Every line but the last ends at a word: joined back, the lines give the text.
        XCTAssertEqual(lineTexts(layout).joined(separator: " "), TextFixtures.lorem)
    }

    /// At a fractional scale a text's measured width (whole pixels over the scale) is not a whole
    /// number of points; laid out again at that width it must fit on the lines it was measured on
    /// (a width read back a hair short in pixels wrapped a menu's "Edit" at 1.5×).
    func testTextLaidOutAtItsOwnMeasuredWidthKeepsItsLinesAtEveryScale() async {
        let words = ["Edit", "View", "Help", "File", "Settings", "Chats", "Thread", "Photos", "Text", "OK",
                     "Cancel", "Открыть", "王小明", "مرحبا", "Über Tessera"]
        for scale in [1, 1.25, 1.5, 1.75, 2, 2.5, 3] {
            for size in [11.0, 13, 14, 15, 17] {
                for word in words {
                    let text = plain(word, size: size)
                    let measured = measure(text, width: .infinity, scale: scale)
                    XCTAssertEqual(measured.lineCount, 1)
                    let again = measure(text, width: measured.size.width, scale: scale)
                    XCTAssertEqual(again.lineCount, 1, "\(word) at \(size) pt, scale \(scale): width \(measured.size.width)")
                    XCTAssertFalse(again.isTruncated, "\(word) at \(size) pt, scale \(scale)")
                }
            }
        }
    }

    func testBreaksInsideAWordOnlyWhenTheWordAloneIsTooWide() async {
        let long = String(repeating: "x", count: 80)
        let layout = measure(plain("short \(long) end"), width: 150)
        let texts = lineTexts(layout)
        XCTAssertEqual(texts.first, "short", "the long word starts on its own line rather than after 'short'")
        XCTAssertGreaterThan(texts.count, 3)
        XCTAssertEqual(texts.dropFirst().joined().replacingOccurrences(of: " ", with: ""), long + "end")
        for rect in layout.lineRects() { XCTAssertLessThanOrEqual(rect.width, 150) }
    }

    /// Lines break where UAX #14 allows, not only at spaces: a long URL breaks after its slashes and
    /// never inside a path component; a hyphenated word breaks after the hyphen; "a !" keeps the mark.
    func testLinesBreakAtUnicodeBreakOpportunities() async {
        let url = "https://example.com/messages/2026/november/very-long-path-component/photo.jpg"
        let layout = measure(plain("see \(url)"), width: 160)
        let texts = lineTexts(layout)
        XCTAssertGreaterThan(texts.count, 2)
        XCTAssertEqual(texts.joined(), "see " + url.replacingOccurrences(of: "see ", with: ""), "nothing lost")
        let allowed = Set(UnicodeText.lineBreakOffsets(in: "see \(url)"))
        var offset = 0
        for line in texts.dropLast() {
            offset += line.unicodeScalars.count
            // A line ends at an opportunity (a trailing space is dropped from the line's text).
            XCTAssertTrue(allowed.contains(offset) || allowed.contains(offset + 1), "line \(line) ends at \(offset)")
            if allowed.contains(offset + 1) { offset += 1 }
        }
        XCTAssertTrue(texts.dropLast().contains { $0.hasSuffix("/") }, "some lines end after a slash: \(texts)")
        let hyphen = measure(plain("self-contained-well-known"), width: 110)
        XCTAssertTrue(lineTexts(hyphen).first?.hasSuffix("-") == true, "\(lineTexts(hyphen))")
        XCTAssertEqual(lineTexts(hyphen).joined(), "self-contained-well-known")
    }

    func testAWordSplitAcrossFontsIsOneWord() async {
        // "un" + "breakable" in two fonts is one word: it moves to the next line whole.
        var text = plain("aaaa bbbb cccc dd ")
        text.append("un", attributes: TextFixtures.plain(bold: true))
        text.append("breakable", attributes: TextFixtures.plain(18))
        let oneLine = measure(text, width: .infinity)
        XCTAssertEqual(oneLine.lineCount, 1)
        let twoLines = measure(text, width: oneLine.size.width - 5)
        XCTAssertEqual(lineTexts(twoLines), ["aaaa bbbb cccc dd", "unbreakable"])
        XCTAssertEqual(twoLines.lines[1].fragments.count, 2, "one fragment per font")
    }

    func testParagraphsAndEmptyLines() async {
        let layout = measure(plain("first\n\nthird\r\nfourth\u{2029}fifth"), width: 300)
        XCTAssertEqual(lineTexts(layout), ["first", "", "third", "fourth", "fifth"])
        XCTAssertGreaterThan(layout.lines[1].height, 0, "an empty paragraph still takes a line")
    }

    func testAlignmentPlacesLinesInTheBox() async {
        let text = plain("centred words")
        for (alignment, expected) in [(TextAlignment.left, 0.0), (.center, 0.5), (.right, 1.0), (.natural, 0.0)] {
            let layout = measure(text, width: 300, options: TextLayoutOptions(alignment: alignment))
            let rect = layout.lineRects(inWidth: 300)[0]
            XCTAssertEqual(rect.minX, (300 - rect.width) * expected, accuracy: 0.5, "\(alignment)")
        }
        let hebrew = measure(plain(TextFixtures.hebrew), width: 300)
        for rect in hebrew.lineRects(inWidth: 300) {
            XCTAssertEqual(rect.maxX, 300, accuracy: 0.5, "natural alignment of a right-to-left paragraph is right")
        }
    }

    // MARK: - Truncation

    func testMaximumNumberOfLinesTruncatesTheLastLine() async {
        for mode in [TruncationMode.end, .middle, .start] {
            let options = TextLayoutOptions(maximumNumberOfLines: 2, truncationMode: mode)
            let layout = measure(plain(TextFixtures.lorem + " " + TextFixtures.lorem), width: 200, options: options)
            XCTAssertEqual(layout.lineCount, 2, "\(mode)")
            XCTAssertTrue(layout.isTruncated)
            XCTAssertTrue(layout.lines[1].isTruncated)
            XCTAssertFalse(layout.lines[0].isTruncated)
            let last = lineTexts(layout)[1]
            XCTAssertTrue(last.contains("…"), "\(mode): \(last)")
            XCTAssertLessThanOrEqual(layout.lines[1].width, 200)
            switch mode {
            case .end: XCTAssertTrue(last.hasSuffix("…"))
            case .start: XCTAssertTrue(last.hasPrefix("…")); XCTAssertTrue(last.hasSuffix("windowsill."))
            case .middle: XCTAssertTrue(last.hasSuffix("windowsill.")); XCTAssertFalse(last.hasPrefix("…"))
            }
        }
    }

    func testTextThatFitsIsNotTruncated() async {
        let layout = measure(plain("two\nlines"), width: 200, options: TextLayoutOptions(maximumNumberOfLines: 2))
        XCTAssertFalse(layout.isTruncated)
        XCTAssertEqual(lineTexts(layout), ["two", "lines"])
        let cut = measure(plain("two\nlines\nthree"), width: 200, options: TextLayoutOptions(maximumNumberOfLines: 2))
        XCTAssertTrue(cut.isTruncated)
        XCTAssertEqual(lineTexts(cut), ["two", "lines…"], "a paragraph end still gets the token when more follows")
    }

    func testMiddleTruncationNeverRepeatsText() async {
        let layout = measure(plain("Hi\nthere"), width: 300, options: TextLayoutOptions(maximumNumberOfLines: 1, truncationMode: .middle))
        XCTAssertEqual(lineTexts(layout), ["Hi…there"])
    }

    func testCustomTruncationToken() async {
        var token = AttributedText(" … ", attributes: TextFixtures.plain())
        token.append("more", attributes: TextFixtures.plain(bold: true))
        let options = TextLayoutOptions(maximumNumberOfLines: 1, truncationToken: token)
        let layout = measure(plain(TextFixtures.lorem), width: 200, options: options)
        XCTAssertTrue(lineTexts(layout)[0].hasSuffix(" … more"), lineTexts(layout)[0])
        XCTAssertLessThanOrEqual(layout.lines[0].width, 200)
    }

    func testCollapsedBlockShowsItsLimit() async {
        var text = plain("before\n")
        var quoted = TextFixtures.plain()
        quoted.block = TextBlock(.quote, title: "Quote", isCollapsed: true, collapsedLineLimit: 2)
        text.append(TextFixtures.lorem + " " + TextFixtures.lorem, attributes: quoted)
        text.append("\nafter", attributes: TextFixtures.plain())
        let layout = measure(text, width: 220)
        XCTAssertEqual(layout.blocks.count, 1)
        XCTAssertTrue(layout.blocks[0].hidesLines)
        XCTAssertEqual(layout.lines.filter { $0.blockIndex == 0 }.count, 2)
        XCTAssertEqual(lineTexts(layout).first, "before")
        XCTAssertEqual(lineTexts(layout).last, "after", "text after a collapsed block is still laid out")
        let block = layout.blocks[0].rect(inWidth: 220)
        for line in layout.lines where line.blockIndex == 0 {
            XCTAssertGreaterThan(line.top, block.minY)
            XCTAssertLessThan(line.top + line.height, block.maxY)
        }
        XCTAssertTrue(layout.isTruncated)
    }

    func testCodeBlockUsesTheMonospacedFont() async {
        var code = TextFixtures.plain(14)
        code.block = TextBlock(.code)
        let narrow = measure(AttributedText("iiiiiiii", attributes: code), width: 300)
        let wide = measure(AttributedText("MMMMMMMM", attributes: code), width: 300)
        XCTAssertEqual(narrow.lines[0].width, wide.lines[0].width, "monospaced: every glyph as wide")
    }

    // MARK: - Right to left

    func testHebrewLineIsInRightToLeftOrder() async {
        let layout = measure(plain("שלום world עולם"), width: 400)
        XCTAssertTrue(layout.lines[0].isRightToLeft)
        // Visual order, left to right: עולם, world, שלום (each right-to-left piece shaped as such).
        let fragments = layout.lines[0].fragments
        let words = fragments.map { $0.text.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        XCTAssertEqual(words, ["עולם", "world", "שלום"])
        XCTAssertTrue(fragments.first!.isRightToLeft)
    }

    func testMixedLineKeepsNumbersAndLatinInReadingOrder() async {
        let layout = measure(plain("Meet דני at 10:30"), width: 400)
        XCTAssertFalse(layout.lines[0].isRightToLeft)
        XCTAssertEqual(lineTexts(layout), ["Meet דני at 10:30"])
        let rtl = measure(plain("הפגישה ב-10:30 עם Anna"), width: 400)
        let words = rtl.lines[0].fragments.map { $0.text.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        // Right to left: הפגישה, ב-, 10:30, עם, Anna  →  seen left to right: Anna, עם, 10:30, -ב..., הפגישה
        XCTAssertEqual(words.first, "Anna")
        XCTAssertEqual(words.last, "הפגישה ב-")
        XCTAssertTrue(words.contains("10:30"), "the time stays one left-to-right number: \(words)")
    }

    func testBidiLevelsAndReordering() async {
        func segments(_ classes: [BidiClass]) -> [TextSegment] {
            // A character of each class: the levels come from the text (ICU), not from the labels.
            let sample: [BidiClass: Substring] = [.leftToRight: "a", .rightToLeft: "ש", .number: "1", .whitespace: " ", .neutral: "!"]
            return classes.map { TextSegment(run: 0, text: sample[$0]!, kind: $0 == .whitespace ? .space : .word,
                                             bidi: $0, script: .common, width: 1) }
        }
        // L R R L in a left-to-right paragraph: the right-to-left pair is reversed.
        let levels = Bidi.levels(of: segments([.leftToRight, .whitespace, .rightToLeft, .whitespace, .rightToLeft,
                                               .whitespace, .leftToRight]), paragraphIsRightToLeft: false)
        XCTAssertEqual(levels, [0, 0, 1, 1, 1, 0, 0])
        XCTAssertEqual(Bidi.visualOrder(levels: levels), [0, 1, 4, 3, 2, 5, 6])
        // A number in right-to-left text keeps its own order.
        let numberLevels = Bidi.levels(of: segments([.rightToLeft, .whitespace, .number]), paragraphIsRightToLeft: true)
        XCTAssertEqual(numberLevels, [1, 1, 2])
        XCTAssertEqual(Bidi.visualOrder(levels: [0, 2, 2]), [0, 1, 2], "levels 0 and 2 only: reversed twice")
        func isRightToLeft(_ text: Substring) -> Bool {
            ParagraphAnalysis.isRightToLeft([TextPiece(run: 0, text: text)], isAttachmentRun: { _ in false })
        }
        XCTAssertTrue(isRightToLeft("123 שלום abc"))
        XCTAssertFalse(isRightToLeft("123 — !"), "no strong character: left to right")
        XCTAssertFalse(isRightToLeft("\u{2067}שלום\u{2069} abc"), "P2 skips what an isolate holds")
        // Explicit isolates, which the engine's own algorithm ignored: a right-to-left isolate inside
        // left-to-right text is reversed on its own, the words around it keep their places.
        let isolate: [TextSegment] = ["a ", "\u{2067}", "b", " ", "c", "\u{2069}", " d"].map {
            TextSegment(run: 0, text: $0[...], kind: .word, bidi: .neutral, script: .common, width: 1)
        }
        let isolateLevels = Bidi.levels(of: isolate, paragraphIsRightToLeft: false)
        XCTAssertEqual(isolateLevels[2], 2, "Latin inside a right-to-left isolate sits at level 2")
        XCTAssertEqual(isolateLevels[0], 0)
        XCTAssertEqual(isolateLevels[6], 0)
    }

    func testNeutralsAtALineEndTakeTheirLevelFromTheWholeParagraph() async {
        // "!" sits between two Hebrew words: right to left in the paragraph, though the line breaks
        // right after it (resolved over the first line alone it would sit at the line's end, left to
        // right, and be drawn on the wrong side of its word).
        let firstLine = measure(plain("abc שלום!"), width: 1000).lines[0].width
        let layout = measure(plain("abc שלום! שלום def"), width: firstLine + 4)
        XCTAssertEqual(layout.lineCount, 2)
        XCTAssertFalse(layout.lines[0].isRightToLeft)
        let bang = layout.lines[0].fragments.first { $0.text.contains("!") }
        XCTAssertEqual(bang?.isRightToLeft, true, "\(layout.lines[0].fragments.map { ($0.text, $0.isRightToLeft) })")
        // The same text on one line agrees.
        let wide = measure(plain("abc שלום! שלום def"), width: 1000)
        XCTAssertEqual(wide.lines[0].fragments.first { $0.text.contains("!") }?.isRightToLeft, true)
    }

    func testSegmentsOfAParagraphCarryTheirResolvedLevels() async {
        // A neutral stretch whose characters resolve to different levels is cut where the level
        // changes: in "ש (a) ש" inside a right-to-left paragraph, the brackets pair around a Latin
        // letter (N0) and take the paragraph's direction, while "a" is at level 2.
        let pieces = [TextPiece(run: 0, text: "ש (a) ש")]
        let analysis = ParagraphAnalysis(pieces: pieces, isAttachmentRun: { _ in false }, resolvingLevels: true)
        XCTAssertTrue(analysis.isRightToLeft)
        var stream = SegmentStream(analysis: analysis, isAttachmentRun: { _ in false })
        var segments: [(String, UInt8?)] = []
        while let segment = stream.next() { segments.append((String(segment.text), segment.level)) }
        XCTAssertEqual(segments.map(\.0).joined(), "ש (a) ש")
        XCTAssertEqual(segments.first { $0.0 == "a" }?.1, 2)
        XCTAssertEqual(segments.first { $0.0.contains("(") }?.1, 1)
        XCTAssertTrue(segments.allSatisfy { $0.1 != nil })
    }

    // MARK: - Attachments

    func testAttachmentReservesItsBox() async {
        var text = plain("Look ")
        text.append(TextAttachment(identifier: "sticker", size: Size(width: 24, height: 24)), attributes: TextFixtures.plain())
        text.append(" here", attributes: TextFixtures.plain())
        let layout = measure(text, width: 300)
        XCTAssertEqual(layout.lineCount, 1)
        let placements = layout.attachmentRects()
        XCTAssertEqual(placements.count, 1)
        let rect = placements[0].rect
        XCTAssertEqual(placements[0].identifier, "sticker")
        XCTAssertEqual(rect.size, Size(width: 24, height: 24))
        XCTAssertEqual(rect.maxY, layout.lines[0].baseline, accuracy: 1e-9, "the box sits on the baseline")
        XCTAssertGreaterThanOrEqual(rect.minY, layout.lines[0].top)
        let plainWidth = measure(plain("Look  here"), width: 300).lines[0].width
        XCTAssertEqual(layout.lines[0].width, plainWidth + 24, accuracy: 2)
    }

    // MARK: - Caching

    func testCacheReturnsTheSameLayoutForTheSameInputs() async {
        let cache = TextLayoutCache(capacity: 8)
        let text = plain(TextFixtures.lorem)
        let first = TextLayout.measure(text, width: 200, cache: cache)
        let second = TextLayout.measure(text, width: 200, cache: cache)
        XCTAssertTrue(first === second)
        XCTAssertEqual(cache.statistics.hits, 1)
        XCTAssertEqual(cache.statistics.misses, 1)
        let narrower = TextLayout.measure(text, width: 150, cache: cache)
        XCTAssertFalse(narrower === first, "another width is another layout")
        let otherOptions = TextLayout.measure(text, width: 200, options: TextLayoutOptions(maximumNumberOfLines: 1), cache: cache)
        XCTAssertFalse(otherOptions === first)
        let otherAttributes = TextLayout.measure(AttributedText(TextFixtures.lorem, attributes: TextFixtures.plain(bold: true)),
                                                 width: 200, cache: cache)
        XCTAssertFalse(otherAttributes === first)
        XCTAssertEqual(cache.statistics.count, 4)
    }

    func testCacheStaysWithinItsCapacity() async {
        let cache = TextLayoutCache(capacity: 8)
        for width in 1...40 { _ = TextLayout.measure(plain("abc"), width: Double(width * 10), cache: cache) }
        XCTAssertLessThanOrEqual(cache.statistics.count, 8)
    }

    func testNodeDrawsTheLayoutItMeasured() async {
        let node = TextNode(attributedText: plain(TextFixtures.lorem))
        let size = node.calculateSizeThatFits(Size(width: 220, height: .infinity))
        let measured = node.textLayout
        node.frame = Rect(origin: .zero, size: size)
        let parameters = node.drawParameters()
        XCTAssertTrue(parameters.layout === measured, "the draw reuses the measured layout")
        XCTAssertEqual(node.lineCount, measured.lineCount)
        XCTAssertEqual(node.lineRects, measured.lineRects(inWidth: size.width))
        node.attributedText = plain("changed")
        XCTAssertNil(node.drawParameters().layout, "new text: the old layout is not drawn")
    }

    // MARK: - Threads

    /// Measuring and drawing on several threads at once, each with its own fonts, gives what one
    /// thread gives. Under the thread sanitizer this is the check that fonts are not shared.
    func testMeasuringAndDrawingFromSeveralThreadsAtOnce() async throws {
        let texts = [TextFixtures.lorem, TextFixtures.hebrew, TextFixtures.arabic, TextFixtures.mixed]
        let widths = [120.0, 180.0, 240.0]
        @Sendable func work(_ index: Int) -> (lines: Int, height: Double, pixels: [UInt32]) {
            let text = AttributedText(texts[index % texts.count], attributes: TextFixtures.plain(13 + Double(index % 3)))
            let layout = TextLayout.measure(text, width: widths[index % widths.count], cache: nil)
            guard var context = try? BitmapContext(size: layout.size, scale: 1) else { return (layout.lineCount, 0, []) }
            TextRenderer.draw(layout, in: &context)
            return (layout.lineCount, layout.size.height, context.makeBitmap().pixels)
        }
        let count = 24
        let serial = (0..<count).map(work)
        let results = Locked([(lines: Int, height: Double, pixels: [UInt32])?](repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let result = work(index)
            results.withLock { $0[index] = result }
        }
        let parallel = results.withLock { $0 }
        for index in 0..<count {
            let result = try XCTUnwrap(parallel[index])
            XCTAssertEqual(result.lines, serial[index].lines)
            XCTAssertEqual(result.height, serial[index].height)
            XCTAssertEqual(result.pixels, serial[index].pixels, "text \(index) draws the same on any thread")
            XCTAssertTrue(result.pixels.contains { $0 != 0 }, "something was drawn")
        }
    }

    func testSharedCacheFromSeveralThreadsGivesOneLayoutPerKey() async {
        let cache = TextLayoutCache()
        let text = plain(TextFixtures.lorem)
        let layouts = Locked([ObjectIdentifier]())
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let layout = TextLayout.measure(text, width: 200, cache: cache)
            layouts.withLock { $0.append(ObjectIdentifier(layout)) }
        }
        let first = TextLayout.measure(text, width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.count, 1)
        // Threads that raced may have returned their own copy, but the cache keeps one from then on.
        XCTAssertTrue(layouts.withLock { $0 }.contains(ObjectIdentifier(first)))
    }

    /// The layout cache keeps within its byte budget, oldest out first, however many texts pass through.
    func testLayoutCacheIsBoundedInBytes() async {
        let cache = TextLayoutCache(capacity: 10_000, budgetBytes: 64 << 10)
        let long = String(repeating: "Bounded caches keep memory flat. ", count: 20)
        for i in 0..<300 {
            _ = TextLayout.measure(AttributedText("\(i) " + long), width: 200, cache: cache)
            XCTAssertLessThanOrEqual(cache.statistics.bytes, 64 << 10)
        }
        XCTAssertGreaterThan(cache.statistics.count, 1)
        XCTAssertLessThan(cache.statistics.count, 300, "older layouts were dropped for the budget, not the count")
        let last = TextLayout.measure(AttributedText("299 " + long), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.hits, 1, "the newest is still there")
        XCTAssertFalse(last.lines.isEmpty)
    }
}
