import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Popovers: a card with the theme's background and edge beside its anchor, in light and dark.
@MainActor
final class PopoverTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(Appearance())
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(Appearance())
    }

    private static func rgb(_ argb: UInt32) -> UInt32 { argb & 0xFFFFFF }
    private static func value(_ colour: Color) -> UInt32 { UInt32(colour.red) << 16 | UInt32(colour.green) << 8 | UInt32(colour.blue) }

    func testAPopoverIsACardBesideItsAnchorInTheThemesColours() async throws {
        for dark in [false, true] {
            Runtime.shared.setAppearance(Appearance(colorScheme: dark ? .dark : .light))
            let host = try OffscreenRender.makeHost(size: Size(width: 300, height: 200)).0
            host.measuresLayoutInBackground = false
            let root = Node()
            root.backgroundColor = Color(rgb: 0x808080)
            host.setRootNode(root)
            let content = Node()
            content.style.preferredSize = Size(width: 80, height: 40)
            content.backgroundColor = Color(rgb: 0xFF0000)
            // An anchor near the bottom: the popover goes above it.
            let overlay = host.presentPopover(content, from: Rect(x: 100, y: 170, width: 40, height: 20))
            var time = 0.0
            settle(host, time: &time)
            let card = overlay.contentFrame
            XCTAssertEqual(card.size, Size(width: 102, height: 62), "content, insets and the edge")
            XCTAssertEqual(card.maxY, 166, "above the anchor, with the gap")
            XCTAssertEqual(card.midX, 120, accuracy: 0.5, "centred on the anchor")
            let image = try XCTUnwrap(OffscreenRender.capture(host))
            let folder = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("overlays")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try image.writePNG(to: folder.appendingPathComponent("popover-\(dark ? "dark" : "light").png").path)
            let colours = dark ? ThemeColors.standardDark : ThemeColors.standardLight
            let edge = try XCTUnwrap(colours[.separator]), background = try XCTUnwrap(colours[.background])
            XCTAssertEqual(Self.rgb(image.pixel(x: Int(card.midX), y: Int(card.minY))), Self.value(edge), "the top edge")
            XCTAssertEqual(Self.rgb(image.pixel(x: Int(card.minX) + 5, y: Int(card.midY))), Self.value(background), "the card")
            XCTAssertEqual(Self.rgb(image.pixel(x: Int(card.midX), y: Int(card.midY))), 0xFF0000, "the content")
            XCTAssertEqual(Self.rgb(image.pixel(x: Int(card.minX) - 3, y: Int(card.midY))), 0x808080, "the root around it")
            host.setRootNode(nil)
        }
    }
}
