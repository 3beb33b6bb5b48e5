import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Inline items (custom emoji, stickers, chips) with a picture are drawn on the baseline in the same
/// bitmap as the text.
@MainActor
final class InlineItemTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
        }
    }

    func testAnAttachmentsPictureIsDrawnInItsBoxOnTheBaseline() async throws {
        let red = try Bitmap(width: 8, height: 8, filledWith: Color(red: 255, green: 0, blue: 0))
        var text = AttributedText("Look ", attributes: TextFixtures.plain(16))
        text.append(TextAttachment(identifier: "sticker", size: Size(width: 24, height: 24), image: red),
                    attributes: TextFixtures.plain(16))
        text.append(" here", attributes: TextFixtures.plain(16))
        let layout = TextLayout.measure(text, width: 300, cache: nil)
        let rect = try XCTUnwrap(layout.attachmentRects().first?.rect)
        XCTAssertEqual(rect.maxY, layout.lines[0].baseline, accuracy: 1e-9)
        var context = try BitmapContext(pixelWidth: 300, pixelHeight: Int(layout.size.height.rounded(.up)) + 2, scale: 1)
        context.fill(context.bounds, color: .white)
        TextRenderer.draw(layout, in: &context)
        let bitmap = context.makeBitmap()
        XCTAssertEqual(bitmap.pixel(x: Int(rect.midX), y: Int(rect.midY)), 0xFFFF_0000, "the picture fills its box")
        XCTAssertNotEqual(bitmap.pixel(x: Int(rect.minX) - 3, y: Int(rect.midY)), 0xFFFF_0000, "nothing drawn outside it")
        // Without a picture the box stays empty for the app.
        var empty = AttributedText("Look ", attributes: TextFixtures.plain(16))
        empty.append(TextAttachment(identifier: "sticker", size: Size(width: 24, height: 24)), attributes: TextFixtures.plain(16))
        let emptyLayout = TextLayout.measure(empty, width: 300, cache: nil)
        var emptyContext = try BitmapContext(pixelWidth: 300, pixelHeight: Int(emptyLayout.size.height.rounded(.up)) + 2, scale: 1)
        emptyContext.fill(emptyContext.bounds, color: .white)
        TextRenderer.draw(emptyLayout, in: &emptyContext)
        let box = try XCTUnwrap(emptyLayout.attachmentRects().first?.rect)
        XCTAssertEqual(emptyContext.makeBitmap().pixel(x: Int(box.midX), y: Int(box.midY)), 0xFFFF_FFFF)
        // Two attachments differing only in their picture are different text (a redraw follows).
        let blue = try Bitmap(width: 8, height: 8, filledWith: Color(red: 0, green: 0, blue: 255))
        XCTAssertNotEqual(TextAttachment(identifier: "s", size: Size(width: 1, height: 1), image: red),
                          TextAttachment(identifier: "s", size: Size(width: 1, height: 1), image: blue))
    }
}
