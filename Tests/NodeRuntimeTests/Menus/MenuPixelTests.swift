import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A menu's pixels, light and dark, against goldens: plain, checked, radio, disabled items, a
/// separator, shortcuts, an icon, a submenu's arrow and the highlighted row; and the highlight and the
/// edge checked as numbers.
@MainActor
final class MenuPixelTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private func sampleMenu() throws -> Menu {
        let icon = try Bitmap(width: 16, height: 16, filledWith: Color(rgb: 0xE0533D))
        return Menu("Sample") {
            MenuItem("New Window", icon: .bitmap(icon), shortcut: KeyboardShortcut("Ctrl+Shift+N")) {}
            MenuItem("Open…", shortcut: KeyboardShortcut("Ctrl+O")) {}
            MenuItem.separator
            MenuItem("Word Wrap", checked: true) {}
            MenuItem("Line Numbers", checked: false) {}
            MenuItem("Small", selected: false) {}
            MenuItem("Large", selected: true) {}
            MenuItem.separator
            MenuItem("Print", shortcut: KeyboardShortcut("Ctrl+P")) {}.disabled()
            Menu("Recent") { MenuItem("notes.txt") {} }
        }
    }

    /// Shows the sample menu at (10, 10) on a 300×280 window, highlights its second item with the
    /// keyboard, settles and captures.
    private func render(scale: Double = 1) throws -> (Bitmap, MenuNode, MenuHarness) {
        let harness = try MenuHarness(size: Size(width: 300, height: 280), scale: scale)
        let overlay = harness.host.showMenu(try sampleMenu(), at: Point(x: 10, y: 10))
        harness.keys(.down, .down)
        try harness.settle()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        XCTAssertEqual(menu.highlightedIndex, 1)
        return (try XCTUnwrap(OffscreenRender.capture(harness.host)), menu, harness)
    }

    private func pixel(_ bitmap: Bitmap, _ point: Point) -> Color {
        Color(premultipliedARGB: bitmap.pixel(x: Int(point.x), y: Int(point.y)))
    }

    private func checkColours(_ bitmap: Bitmap, _ menu: MenuNode, scheme: Appearance.ColorScheme) {
        let colors = scheme == .dark ? ThemeColors.standardDark : ThemeColors.standardLight
        let frame = menu.frame
        let highlighted = menu.rows[1].frame.offsetBy(dx: frame.minX, dy: frame.minY)
        XCTAssertEqual(pixel(bitmap, Point(x: highlighted.minX + 4, y: highlighted.midY)), colors[.accent], "the highlighted row")
        let plain = menu.rows[4].frame.offsetBy(dx: frame.minX, dy: frame.minY)
        XCTAssertEqual(pixel(bitmap, Point(x: plain.maxX - 3, y: plain.midY)), colors[.background], "a plain row")
        XCTAssertEqual(pixel(bitmap, Point(x: frame.minX, y: frame.midY)), colors[.separator], "the 1-pixel edge")
        let separator = menu.rows[2].frame.offsetBy(dx: frame.minX, dy: frame.minY)
        XCTAssertEqual(pixel(bitmap, Point(x: separator.midX, y: separator.minY + 4)), colors[.separator], "the separator's line")
        XCTAssertEqual(pixel(bitmap, Point(x: frame.minX + 1, y: frame.minY + 1)), colors[.secondaryBackground],
                       "the rounded corner shows the screen behind")
    }

    func testLight() async throws {
        let (bitmap, menu, harness) = try render()
        defer { harness.tearDown() }
        XCTAssertEqual(menu.frame.origin, Point(x: 10, y: 10), "where it was shown: it fits")
        let height: Double = 4 + 8 * 28 + 2 * 9 + 4
        XCTAssertEqual(menu.frame.height, height, "28-point rows, 9-point separators, 4 points of padding")
        checkColours(bitmap, menu, scheme: .light)
        GoldenImage.assertMatches(bitmap, named: "menu-light", in: "NodeRuntimeTests")
    }

    func testDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let (bitmap, menu, harness) = try render()
        defer { harness.tearDown() }
        checkColours(bitmap, menu, scheme: .dark)
        GoldenImage.assertMatches(bitmap, named: "menu-dark", in: "NodeRuntimeTests")
    }

    func testLightAtTwicePixelsPerPoint() async throws {
        let (bitmap, menu, harness) = try render(scale: 2)
        defer { harness.tearDown() }
        XCTAssertEqual(bitmap.width, 600)
        let frame = menu.frame
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: Int(frame.minX * 2), y: Int(frame.midY * 2))),
                       ThemeColors.standardLight[.separator], "the edge is one pixel, not one point")
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: Int(frame.minX * 2) + 1, y: Int(frame.midY * 2))),
                       ThemeColors.standardLight[.background])
        GoldenImage.assertMatches(bitmap, named: "menu-light@2x", in: "NodeRuntimeTests")
    }

    func testAMenuBarWithAMenuOpen() async throws {
        let bar = MenuBarNode(menus: [
            Menu("File") { MenuItem("New", shortcut: KeyboardShortcut("Ctrl+N")) {}; MenuItem("Quit") {} },
            Menu("Edit") { MenuItem("Undo") {} },
            Menu("Help") { MenuItem("About") {} },
        ])
        let harness = try MenuHarness(size: Size(width: 300, height: 140), bar: bar)
        defer { harness.tearDown() }
        harness.key(.character("e"), .alt)
        try harness.settle()
        XCTAssertEqual(bar.openIndex, 1)
        GoldenImage.assertMatches(OffscreenRender.capture(harness.host), named: "menu-bar-light", in: "NodeRuntimeTests")
    }

    func testAnOpenMenuFollowsTheAppearanceWhenItChanges() async throws {
        let (light, menu, harness) = try render()
        defer { harness.tearDown() }
        checkColours(light, menu, scheme: .light)
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        try harness.settle()
        checkColours(try XCTUnwrap(OffscreenRender.capture(harness.host)), menu, scheme: .dark)
    }

    func testASubmenuOpenBesideItsHighlightedItem() async throws {
        let harness = try MenuHarness(size: Size(width: 440, height: 280))
        defer { harness.tearDown() }
        harness.host.showMenu(try sampleMenu(), at: Point(x: 10, y: 10))
        harness.keys(.end, .right)
        try harness.settle()
        XCTAssertEqual(harness.menus.count, 2)
        XCTAssertEqual(harness.menus[1].frame.minX, harness.menus[0].frame.maxX, "beside its menu, not over it")
        GoldenImage.assertMatches(OffscreenRender.capture(harness.host), named: "menu-submenu-light", in: "NodeRuntimeTests")
    }
}
