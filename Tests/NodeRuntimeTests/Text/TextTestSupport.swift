import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Fonts and attributes the text tests share. Every text test calls `TextFixtures.useRepositoryFonts()`
/// first, so that the fonts come from this repository's `Sources/CTessera/Fonts` whatever
/// the current directory.
enum TextFixtures {
    static func useRepositoryFonts() {
        FontRegistry.shared.fontsFolder = GoldenImage.bundledFontsFolder
    }

    static let ink = Color(rgb: 0x1C2430)
    static let accent = Color(rgb: 0x2D6CDF)

    static func plain(_ size: Double = 15, bold: Bool = false, color: Color = ink) -> TextAttributes {
        TextAttributes(font: .system(size: size, bold: bold), color: color)
    }

    static let lorem = "The quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill."
    static let hebrew = "שלום עולם! זהו משפט בעברית שנכתב מימין לשמאל, עם מספר 2024 באמצע."
    static let arabic = "مرحبا بكم في تطبيق الدردشة. هذه فقرة عربية قصيرة تكتب من اليمين إلى اليسار."
    static let mixed = "Meeting with דני at 10:30 in מרכז העיר, then coffee."

    /// A megabyte of words, with no newline.
    static let megabyteOfWords: String = String(repeating: "lorem ipsum dolor sit amet ", count: 1_048_576 / 27 + 1)
}

/// Renders text nodes stacked in a window just tall enough for them, through `OffscreenRender`.
@MainActor
final class TextGoldenRenderer {
    static let background = Color(rgb: 0xFFFFFF)
    private var time = 0.0

    /// Stacks `nodes` top to bottom in a window `width` points wide, each as wide as the window less a
    /// margin and as tall as its text, and returns the composited picture.
    func render(_ makeNodes: () -> [Node], width: Double = 280, scale: Double = 1) throws -> Bitmap? {
        // Measuring uses the runtime's contents scale; the host would set it too late for sizing.
        let previousScale = Runtime.shared.contentsScale
        Runtime.shared.contentsScale = scale
        defer { Runtime.shared.contentsScale = previousScale }
        let nodes = makeNodes()
        let margin = 10.0
        var y = margin
        var frames: [Rect] = []
        for node in nodes {
            let height = (node as? TextNode)?.calculateSizeThatFits(Size(width: width - 2 * margin, height: .infinity)).height
                ?? node.frame.height
            frames.append(Rect(x: margin, y: y, width: width - 2 * margin, height: height))
            y += height + margin
        }
        let root = Node()
        root.backgroundColor = Self.background
        for (node, frame) in zip(nodes, frames) {
            node.frame = frame
            root.addSubnode(node)
        }
        return try OffscreenRender.render(root, size: Size(width: width, height: y), scale: scale,
                                          clearColor: Self.background, time: &time)
    }
}
