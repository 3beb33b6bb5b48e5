import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A menu taller than its window scrolls: cut to the window, the keys keep the highlighted row in
/// view clear of the arrows, the wheel and the arrows move the rows, and the arrows show only where
/// there is more. A menu that fits does not scroll and passes the wheel on.
@MainActor
final class MenuScrollTests: XCTestCase {
    private var harness: MenuHarness!
    private var log: MenuActionLog!

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
        harness = try MenuHarness(size: Size(width: 300, height: 240))
        log = MenuActionLog()
    }

    override func tearDown() async throws {
        harness?.tearDown()
        harness = nil
    }

    /// Forty items, "Item 0" … "Item 39": 1,128 points of rows.
    private func longMenu() -> Menu {
        Menu("Long") { (0..<40).map { log.item("Item \($0)") } }
    }

    private func open() throws -> MenuNode {
        let overlay = harness.host.showMenu(longMenu(), at: Point(x: 10, y: 10))
        try harness.settle()
        return try XCTUnwrap(overlay.content as? MenuNode)
    }

    /// The row's frame in the menu, checked to show whole between the arrows shown.
    private func assertShowsWhole(_ menu: MenuNode, row index: Int, _ message: String) {
        let row = menu.rows[index].frame
        let top = menu.upArrow.isHidden ? 0 : menu.upArrow.frame.maxY
        let bottom = menu.downArrow.isHidden ? menu.bounds.height : menu.downArrow.frame.minY
        XCTAssertGreaterThanOrEqual(row.minY, top - 0.001, "\(message): row \(index) at \(row), arrows end at \(top)")
        XCTAssertLessThanOrEqual(row.maxY, bottom + 0.001, "\(message): row \(index) at \(row), arrows start at \(bottom)")
    }

    func testTheKeysKeepTheHighlightedRowInViewAndTheArrowsShowWhereThereIsMore() async throws {
        let menu = try open()
        XCTAssertLessThanOrEqual(menu.frame.maxY, 240, "cut to the window: \(menu.frame)")
        XCTAssertGreaterThan(menu.maximumScrollOffset, 800)
        XCTAssertEqual(menu.scrollOffset, 0)
        XCTAssertTrue(menu.upArrow.isHidden, "nothing above at the top")
        XCTAssertFalse(menu.downArrow.isHidden, "more below")

        for step in 0..<40 {
            harness.key(.down)
            XCTAssertEqual(menu.highlightedIndex, step)
            try harness.settle()
            assertShowsWhole(menu, row: step, "Down")
        }
        XCTAssertEqual(menu.scrollOffset, menu.maximumScrollOffset, accuracy: 0.001, "the last row: scrolled to the end")
        XCTAssertFalse(menu.upArrow.isHidden)
        XCTAssertTrue(menu.downArrow.isHidden, "nothing below at the end")

        harness.key(.home)
        try harness.settle()
        XCTAssertEqual(menu.scrollOffset, 0, "Home: back to the top")
        harness.key(.end)
        try harness.settle()
        assertShowsWhole(menu, row: 39, "End")
        // Type-ahead to a row far above.
        harness.key(.character("i"), after: 2)
        harness.key(.character("t"))
        harness.key(.character("e"))
        harness.key(.character("m"))
        harness.key(.character(" "))
        harness.key(.character("7"))
        try harness.settle()
        XCTAssertEqual(menu.highlightedIndex, 7)
        assertShowsWhole(menu, row: 7, "type-ahead")

        // The row chosen by Enter is the one shown highlighted.
        harness.key(.enter)
        XCTAssertEqual(log.chosen, ["Item 7"])
    }

    func testTheWheelAndTheArrowsScrollTheRowsAndThePixelsFollow() async throws {
        let menu = try open()
        let inside = Point(x: menu.frame.midX, y: menu.frame.midY)
        harness.frame([.pointerMoved(inside)])
        harness.frame([.wheel(dx: 0, dy: -1)])
        try harness.settle()
        XCTAssertEqual(menu.scrollOffset, MenuScrollArrowNode.wheelStep, "a notch towards the user scrolls three rows down")
        harness.frame([.wheel(dx: 0, dy: 50)])
        try harness.settle()
        XCTAssertEqual(menu.scrollOffset, 0, "kept at the top")
        harness.frame([.wheel(dx: 0, dy: -500)])
        try harness.settle()
        XCTAssertEqual(menu.scrollOffset, menu.maximumScrollOffset, "kept at the end")

        // The up arrow, pressed, scrolls back three rows.
        let up = Point(x: menu.frame.midX, y: menu.frame.minY + menu.upArrow.frame.midY)
        harness.click(up)
        try harness.settle()
        XCTAssertEqual(menu.scrollOffset, menu.maximumScrollOffset - 3 * MenuItemNode.rowHeight, accuracy: 0.001)
        XCTAssertEqual(log.chosen, [], "the arrow chose nothing")

        // On screen: the row under the middle of the menu is the one the offset puts there, and the
        // arrows are drawn over the rows (the menu's background with a chevron, no row text).
        harness.key(.end)
        try harness.settle()
        let bitmap = try XCTUnwrap(OffscreenRender.capture(harness.host))
        let colors = ThemeColors.standardLight
        let last = menu.rows[39].frame.offsetBy(dx: menu.frame.minX, dy: menu.frame.minY)
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: Int(last.minX + 4), y: Int(last.midY))), colors[.accent],
                       "the highlighted last row is drawn at the menu's bottom")
        let arrow = menu.upArrow.frame.offsetBy(dx: menu.frame.minX, dy: menu.frame.minY)
        var glyph = 0, background = 0
        for y in Int(arrow.minY + 1)..<Int(arrow.maxY) {
            for x in Int(arrow.minX + 10)..<Int(arrow.maxX - 10) {
                let color = Color(premultipliedARGB: bitmap.pixel(x: x, y: y))
                if color == colors[.background] { background += 1 } else { glyph += 1 }
            }
        }
        XCTAssertGreaterThan(glyph, 6, "the chevron is drawn")
        XCTAssertLessThan(glyph, 60, "and nothing else: the rows under the arrow are covered")
        try? bitmap.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("menu-scrolled.png").path)
    }

    func testAMenuThatFitsDoesNotScroll() async throws {
        let overlay = harness.host.showMenu(Menu("Short") { log.item("One"); log.item("Two") }, at: Point(x: 10, y: 10))
        try harness.settle()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        XCTAssertEqual(menu.maximumScrollOffset, 0)
        XCTAssertFalse(menu.scrollWheel(dx: 0, dy: -1), "the wheel goes on")
        menu.scroll(to: 100)
        XCTAssertEqual(menu.scrollOffset, 0)
        XCTAssertTrue(menu.upArrow.isHidden && menu.downArrow.isHidden)
        menu.scroll(to: .nan)
        XCTAssertEqual(menu.scrollOffset, 0)
    }
}
