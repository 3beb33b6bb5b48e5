import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The caret among spaces that end a line (outside the line's width, which ends at its last visible
/// character): past each one, by its advance, as typing a space moves it; at a wrap, no further than
/// the box's edge.
@MainActor
final class TrailingSpaceCaretTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    private func layout(_ text: String, width: Double = 10_000) -> TextLayout {
        TextLayout.measure(AttributedText(text, attributes: TextFixtures.plain()), width: width, options: TextLayoutOptions(), cache: nil)
    }

    private func caretX(_ text: String, at offset: Int? = nil) -> Double {
        layout(text).caretRect(forOffset: offset ?? text.utf16.count, inWidth: 10_000).minX
    }

    func testEachTrailingSpaceMovesTheCaretByASpacesAdvance() async {
        let word = caretX("Hi"), one = caretX("Hi "), two = caretX("Hi  ")
        let space = caretX("Hi x") - caretX("x") - word  // the space inside the text
        XCTAssertGreaterThan(space, 1)
        // Widths are whole pixels per piece measured: within one pixel.
        XCTAssertEqual(one - word, space, accuracy: 1, "a trailing space as wide as one inside the text")
        XCTAssertEqual(two - one, one - word, accuracy: 1, "each one by the same advance")
        // Before a newline too: the caret after "Hi " on the first line.
        XCTAssertEqual(caretX("Hi \nthere", at: 3), one, accuracy: 0.01)
        // The width the layout reports still ends at the last visible character.
        XCTAssertEqual(layout("Hi  ").size.width, layout("Hi").size.width, accuracy: 0.01)
    }

    func testAtAWrapTheSpacesHangNoFurtherThanTheBoxsEdge() async {
        let text = "Lorem ipsum dolor sit amet" + String(repeating: " ", count: 40) + "consectetur"
        let box = 120.0
        let wrapped = layout(text, width: box)
        XCTAssertGreaterThan(wrapped.lineCount, 1)
        let firstLineEnd = wrapped.offsetRange(ofLine: 0).upperBound
        // A position among the hanging spaces of the first line (the wrap position itself belongs to the next).
        let caret = wrapped.caretRect(forOffset: firstLineEnd - 1, inWidth: box)
        XCTAssertEqual(wrapped.lineIndex(forOffset: firstLineEnd - 1), 0)
        XCTAssertLessThanOrEqual(caret.minX, box, "in the box")
        XCTAssertGreaterThanOrEqual(caret.minX, wrapped.lineRects(inWidth: box)[0].maxX - 0.01, "at or past the line's last character")
    }
}
