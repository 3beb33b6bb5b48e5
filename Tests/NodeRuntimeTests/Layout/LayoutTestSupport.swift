import Compositor
import Foundation
import Synchronization
import XCTest
@testable import NodeRuntime

/// A leaf with a fixed natural size that counts its measurements.
final class Box: Node, @unchecked Sendable {
    let natural: Size
    private let measurements = Atomic<Int>(0)

    init(_ width: Double, _ height: Double, _ name: String? = nil) {
        natural = Size(width: width, height: height)
        super.init()
        debugName = name
    }

    /// How many times `calculateSizeThatFits` ran (cache misses).
    var measureCount: Int { measurements.load(ordering: .relaxed) }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        measurements.add(1, ordering: .relaxed)
        return natural
    }
}

/// A stand-in for a text node: `characters` glyphs of `characterWidth`, wrapped onto as many lines of
/// `lineHeight` as the width allows (at least one glyph a line), like a label that wraps. Like the real
/// text node it shrinks in a crowded stack by default and knows its baselines.
final class FakeText: Node, LayoutStyleDefaults, @unchecked Sendable {
    struct Metrics: Sendable {
        var characters: Int
        var characterWidth = 5.0
        var lineHeight = 10.0
        var maximumLines = 0
    }
    let metrics: Metrics

    class var defaultLayoutStyle: LayoutStyle {
        var style = LayoutStyle()
        style.flexShrink = 1
        return style
    }

    init(_ characters: Int, characterWidth: Double = 5, lineHeight: Double = 10, ascender: Double = 8,
         maximumLines: Int = 0, _ name: String? = nil) {
        metrics = Metrics(characters: characters, characterWidth: characterWidth, lineHeight: lineHeight,
                          maximumLines: maximumLines)
        super.init()
        debugName = name
        style.ascender = ascender
        style.descender = lineHeight - ascender
    }

    /// Lines and the glyphs on each line, for a width.
    static func lines(_ m: Metrics, width: Double) -> [Int] {
        guard m.characters > 0 else { return [] }
        let fitting = width / m.characterWidth
        let perLine = fitting.isFinite ? max(1, Int(min(fitting, 1e9).rounded(.down))) : m.characters
        var lines: [Int] = []
        var left = m.characters
        while left > 0 && (m.maximumLines == 0 || lines.count < m.maximumLines) {
            lines.append(min(perLine, left))
            left -= perLine
        }
        return lines
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let lines = Self.lines(metrics, width: constrainedSize.width)
        return Size(width: Double(lines.max() ?? 0) * metrics.characterWidth,
                    height: Double(lines.count) * metrics.lineHeight)
    }
}

/// A node whose layout spec is a closure; it manages its subnodes from the spec.
final class SpecNode: Node, @unchecked Sendable {
    let makeSpec: @Sendable (SizeRange) -> (any LayoutSpec)?
    private let measurements = Atomic<Int>(0)

    init(_ name: String? = nil, manages: Bool = true, _ makeSpec: @escaping @Sendable (SizeRange) -> (any LayoutSpec)?) {
        self.makeSpec = makeSpec
        super.init()
        debugName = name
        automaticallyManagesSubnodes = manages
    }

    var specCount: Int { measurements.load(ordering: .relaxed) }
    /// Runs in `layout()`, on the UI thread.
    var onLayout: (() -> Void)?

    override func layout() { onLayout?() }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        measurements.add(1, ordering: .relaxed)
        return makeSpec(constrainedSize)
    }
}

/// Measures `spec` as the spec of a fresh node for `range`.
func layOut(_ spec: any LayoutSpec, _ range: SizeRange) -> Layout {
    SpecNode { _ in spec }.layoutThatFits(range)
}

/// Measures `spec` for up to `width` × `height` (infinite by default) from zero.
func layOut(_ spec: any LayoutSpec, width: Double = .infinity, height: Double = .infinity) -> Layout {
    layOut(spec, SizeRange(min: .zero, max: Size(width: width, height: height)))
}

func exactly(_ width: Double, _ height: Double) -> SizeRange { .exactly(Size(width: width, height: height)) }
func upTo(_ width: Double, _ height: Double) -> SizeRange {
    SizeRange(min: .zero, max: Size(width: width, height: height))
}

func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> Rect {
    Rect(x: x, y: y, width: width, height: height)
}

/// The frames a layout gives its children, in order.
func frames(_ layout: Layout) -> [Rect] { layout.children.map(\.frame) }

/// Asserts a layout's size and its children's frames.
func assertLayout(_ layout: Layout, size: Size, frames expected: [Rect], file: StaticString = #filePath,
                  line: UInt = #line) {
    XCTAssertEqual(layout.size, size, "size", file: file, line: line)
    XCTAssertEqual(frames(layout), expected, "frames", file: file, line: line)
    XCTAssertEqual(layout.diagnostics, [], "no diagnostics expected", file: file, line: line)
}

func size(_ width: Double, _ height: Double) -> Size { Size(width: width, height: height) }
