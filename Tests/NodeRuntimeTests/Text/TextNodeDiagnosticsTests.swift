import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Font sizes and line spacing a text node cannot use as given: measured with the documented fallback
/// and reported once per node, naming what was set and what is used.
@MainActor
final class TextNodeDiagnosticsTests: XCTestCase {
    private func text(_ string: String, size: Double) -> AttributedText {
        AttributedText(string, attributes: TextFixtures.plain(size))
    }

    func testAFontSizeThatIsNotASizeIsReportedWithTheSizeUsed() async {
        let cases: [(Double, Double)] = [(.nan, 1), (-3, 1), (0, 1), (0.5, 1), (.infinity, 1), (900, 500)]
        for (size, used) in cases {
            let node = TextNode()
            node.debugName = "size-\(size)"
            node.attributedText = text("Hello", size: size)
            XCTAssertEqual(node.diagnostics.map(\.kind), [.invalidProperty], "\(size)")
            XCTAssertEqual(node.diagnostics.first?.subject, "TextNode 'size-\(size)'")
            XCTAssertEqual(node.diagnostics.first?.message,
                           "font size \(size) (in \"Hello\") is not a size from 1.0 to 500.0; measured at \(used)")
            // The fallback: measured exactly as the size used.
            let fallback = TextNode(attributedText: text("Hello", size: used))
            XCTAssertEqual(node.calculateSizeThatFits(Size(width: 2000, height: .infinity)),
                           fallback.calculateSizeThatFits(Size(width: 2000, height: .infinity)), "\(size)")
        }
    }

    func testTheFirstBadSizeIsReportedOncePerNode() async {
        let node = TextNode()
        var mixed = text("fine ", size: 15)
        mixed.append(text("tiny", size: 0.1))
        node.attributedText = mixed
        node.attributedText = text("huge", size: 10_000)
        XCTAssertEqual(node.diagnostics.count, 1)
        XCTAssertEqual(node.diagnostics.first?.message,
                       "font size 0.1 (in \"tiny\") is not a size from 1.0 to 500.0; measured at 1.0")
    }

    func testLineSpacingAndTokenSizesAreReported() async {
        let node = TextNode(attributedText: text("two\nlines", size: 15))
        node.lineSpacing = .nan
        node.lineSpacing = -2
        XCTAssertEqual(node.diagnostics.map(\.message), ["line spacing set to nan; measured as 0.0"])
        let tokenNode = TextNode(attributedText: text("cut", size: 15))
        tokenNode.truncationToken = text(" more", size: -1)
        XCTAssertEqual(tokenNode.diagnostics.map(\.message),
                       ["font size -1.0 (in \" more\") is not a size from 1.0 to 500.0; measured at 1.0"])
    }

    func testUsableValuesReportNothing() async {
        let node = TextNode(attributedText: text("edges", size: 1))
        node.attributedText = text("edges", size: 500)
        node.lineSpacing = 1_000
        node.lineSpacing = 0
        XCTAssertEqual(node.diagnostics, [])
    }
}
