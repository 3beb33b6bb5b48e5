import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Text nodes drawn on display workers and composited by the software renderer, compared with goldens
/// (record with TESSERA_RECORD_GOLDENS=1, then look at every picture before keeping it).
@MainActor
final class TextGoldenTests: XCTestCase {
    private let renderer = TextGoldenRenderer()

    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
        }
    }

    private func assertGolden(_ name: String, width: Double = 280, scale: Double = 1, file: StaticString = #filePath,
                              line: UInt = #line, _ makeNodes: () -> [Node]) throws {
        let picture = try renderer.render(makeNodes, width: width, scale: scale)
        GoldenImage.assertMatches(picture, named: name, in: "NodeRuntimeTests", file: file, line: line)
    }

    private func node(_ text: AttributedText, _ configure: (TextNode) -> Void = { _ in }) -> TextNode {
        let node = TextNode(attributedText: text)
        configure(node)
        return node
    }

    // MARK: - Wrapping and alignment

    func testWrappingAcrossRunsOfDifferentFonts() async throws {
        try assertGolden("text-wrapping") {
            var text = AttributedText("Words wrap at spaces even when ", attributes: TextFixtures.plain())
            text.append("bold", attributes: TextFixtures.plain(bold: true))
            text.append("face", attributes: TextFixtures.plain(19, color: TextFixtures.accent))
            text.append(" runs join a word, and ", attributes: TextFixtures.plain())
            text.append("monospaced code", attributes: TextAttributes(font: .monospaced(size: 14), color: Color(rgb: 0xB0306A)))
            text.append(" sits beside it. A word too long for a line, Pneumonoultramicroscopicsilicovolcanoconiosis, breaks inside.",
                        attributes: TextFixtures.plain())
            return [node(text) { $0.lineSpacing = 2 }]
        }
    }

    func testAlignments() async throws {
        for (name, alignment) in [("left", TextAlignment.left), ("center", .center), ("right", .right)] {
            try assertGolden("text-align-\(name)") {
                [node(AttributedText(TextFixtures.lorem, attributes: TextFixtures.plain())) { $0.alignment = alignment }]
            }
        }
        // Natural: left for the English paragraph, right for the Hebrew one.
        try assertGolden("text-align-natural") {
            [node(AttributedText(TextFixtures.lorem, attributes: TextFixtures.plain())),
             node(AttributedText(TextFixtures.hebrew, attributes: TextFixtures.plain()))]
        }
    }

    // MARK: - Truncation

    func testTruncationModes() async throws {
        for (name, mode) in [("end", TruncationMode.end), ("middle", .middle), ("start", .start)] {
            try assertGolden("text-truncation-\(name)") {
                [node(AttributedText(TextFixtures.lorem + " " + TextFixtures.lorem, attributes: TextFixtures.plain())) {
                    $0.maximumNumberOfLines = 2
                    $0.truncationMode = mode
                }, node(AttributedText("Single line: " + TextFixtures.lorem, attributes: TextFixtures.plain())) {
                    $0.maximumNumberOfLines = 1
                    $0.truncationMode = mode
                }]
            }
        }
    }

    func testCustomTruncationToken() async throws {
        try assertGolden("text-truncation-token") {
            var token = AttributedText(" … ", attributes: TextFixtures.plain())
            token.append("Show more", attributes: TextFixtures.plain(bold: true, color: TextFixtures.accent))
            return [node(AttributedText(TextFixtures.lorem + " " + TextFixtures.lorem, attributes: TextFixtures.plain())) {
                $0.maximumNumberOfLines = 2
                $0.truncationToken = token
            }]
        }
    }

    // MARK: - Decorations and spoilers

    func testUnderline() async throws {
        try assertGolden("text-underline") {
            var text = AttributedText("Read the ", attributes: TextFixtures.plain())
            var link = TextFixtures.plain(color: TextFixtures.accent)
            link.isUnderlined = true
            link.link = "https://example.com/guide"
            text.append("underlined link that wraps onto the next line", attributes: link)
            text.append(", then plain text again.", attributes: TextFixtures.plain())
            return [node(text)]
        }
    }

    func testStrikethroughAndBackground() async throws {
        try assertGolden("text-strikethrough") {
            var text = AttributedText("Price: ", attributes: TextFixtures.plain())
            var struck = TextFixtures.plain(color: Color(rgb: 0x8A94A6))
            struck.isStruckThrough = true
            text.append("$120.00", attributes: struck)
            text.append(" ", attributes: TextFixtures.plain())
            var highlighted = TextFixtures.plain(bold: true)
            highlighted.backgroundColor = Color(rgb: 0xFFE08A)
            text.append("$89.99 today", attributes: highlighted)
            text.append(", while ", attributes: TextFixtures.plain())
            text.append("this whole phrase is struck through across a line break", attributes: struck)
            return [node(text)]
        }
    }

    private func spoilerText() -> AttributedText {
        var text = AttributedText("The butler did it: ", attributes: TextFixtures.plain())
        var spoiler = TextFixtures.plain()
        spoiler.isSpoiler = true
        text.append("it was the gardener all along", attributes: spoiler)
        text.append(", and the ", attributes: TextFixtures.plain())
        text.append("key", attributes: spoiler)
        text.append(" was in the vase.", attributes: TextFixtures.plain())
        return text
    }

    func testSpoilerVeiledAndRevealed() async throws {
        try assertGolden("text-spoiler-veiled") { [node(spoilerText())] }
        try assertGolden("text-spoiler-revealed") { [node(spoilerText()) { $0.revealSpoiler(0) }] }
    }

    // MARK: - Right to left

    func testArabicParagraph() async throws {
        try assertGolden("text-arabic") {
            [node(AttributedText(TextFixtures.arabic, attributes: TextFixtures.plain(16)))]
        }
    }

    func testHebrewParagraph() async throws {
        try assertGolden("text-hebrew") {
            [node(AttributedText(TextFixtures.hebrew, attributes: TextFixtures.plain(16)))]
        }
    }

    func testMixedLine() async throws {
        try assertGolden("text-mixed") {
            var rtl = AttributedText("הפגישה עם Anna ב-10:30 בקפה (Central)", attributes: TextFixtures.plain())
            rtl.append("!", attributes: TextFixtures.plain())
            return [node(AttributedText(TextFixtures.mixed, attributes: TextFixtures.plain())),
                    node(rtl),
                    node(AttributedText("Arabic in English: مرحبا بكم and back, 42 items.", attributes: TextFixtures.plain()))]
        }
    }

    // MARK: - Blocks

    func testBlockQuote() async throws {
        try assertGolden("text-blockquote") {
            var text = AttributedText("Alice wrote:\n", attributes: TextFixtures.plain())
            var quoted = TextFixtures.plain(14)
            quoted.block = TextBlock(.quote, title: "Alice Cooper")
            text.append("Quotes get a bar, a tinted background and a title above the quoted text.", attributes: quoted)
            text.append("\nAnd a collapsed one:\n", attributes: TextFixtures.plain())
            var collapsed = TextFixtures.plain(14)
            collapsed.block = TextBlock(.quote, tint: Color(rgb: 0x36A852), isCollapsed: true, collapsedLineLimit: 2, identifier: 1)
            text.append(TextFixtures.lorem + " " + TextFixtures.lorem, attributes: collapsed)
            // A right-to-left quote puts its bar on the right.
            var hebrew = TextFixtures.plain(14)
            hebrew.block = TextBlock(.quote, title: "דני", identifier: 2)
            return [node(text), node(AttributedText("ציטוט בעברית: הפס בצד ימין.", attributes: hebrew))]
        }
    }

    func testCodeBlock() async throws {
        try assertGolden("text-codeblock") {
            var text = AttributedText("Run this:\n", attributes: TextFixtures.plain())
            var code = TextFixtures.plain(13)
            code.block = TextBlock(.code, title: "swift")
            text.append("let node = TextNode(\"Hello\")\nnode.maximumNumberOfLines = 2\nprint(node.lineCount)", attributes: code)
            text.append("\nthen look at the result.", attributes: TextFixtures.plain())
            return [node(text)]
        }
    }

    // MARK: - Scale

    func testWrappingAtTwiceTheScale() async throws {
        try assertGolden("text-wrapping@2x", width: 200, scale: 2) {
            var text = AttributedText("Crisp at 2×: ", attributes: TextFixtures.plain(bold: true))
            text.append("glyphs are rendered at the pixel size, not scaled up. עברית too.", attributes: TextFixtures.plain())
            return [node(text)]
        }
    }
}
