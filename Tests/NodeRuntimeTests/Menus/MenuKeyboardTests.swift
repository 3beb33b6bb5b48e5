import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// A menu from the keyboard: Up and Down wrap and skip what cannot be chosen, Home and End,
/// type-ahead, Enter and Space choose once and close the chain, Escape closes one level with the
/// focus going back, Right and Left open and close submenus.
@MainActor
final class MenuKeyboardTests: XCTestCase {
    private var harness: MenuHarness!
    private var log: MenuActionLog!

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        harness = try MenuHarness()
        log = MenuActionLog()
    }

    override func tearDown() async throws {
        harness?.tearDown()
        harness = nil
    }

    /// Open, Copy, a separator, Cut (disabled), Paste, More ▸ (Alpha, Beta), Close.
    private func editMenu() -> Menu {
        Menu("Edit") {
            log.item("Open")
            log.item("Copy")
            MenuItem.separator
            log.item("Cut").disabled()
            log.item("Paste")
            Menu("More") {
                log.item("Alpha")
                log.item("Beta")
            }
            log.item("Close")
        }
    }

    /// Focuses the button, then opens the edit menu below it.
    @discardableResult
    private func open() -> MenuNode {
        harness.focusButton()
        let overlay = harness.host.showMenu(editMenu(), positioner: PopupPositioner(anchor: harness.buttonFrame))
        harness.frame()
        XCTAssertTrue(harness.host.focusedNode === overlay.content, "the menu takes the focus")
        return overlay.content as! MenuNode
    }

    func testUpAndDownWrapAndSkipSeparatorsAndDisabledItems() async throws {
        let menu = open()
        XCTAssertNil(menu.highlightedIndex, "a menu opened by code starts with nothing highlighted")
        var seen: [Int?] = []
        for _ in 0..<6 {
            harness.key(.down)
            seen.append(menu.highlightedIndex)
        }
        XCTAssertEqual(seen, [0, 1, 4, 5, 6, 0], "the separator (2) and the disabled Cut (3) are skipped; Down wraps")
        harness.key(.up)
        XCTAssertEqual(menu.highlightedIndex, 6, "Up wraps back to the last item")
        harness.key(.up)
        harness.key(.up)
        XCTAssertEqual(menu.highlightedIndex, 4)
        harness.key(.up)
        XCTAssertEqual(menu.highlightedIndex, 1, "Up skips the disabled item and the separator too")
        harness.key(.end)
        XCTAssertEqual(menu.highlightedIndex, 6)
        harness.key(.home)
        XCTAssertEqual(menu.highlightedIndex, 0)
        XCTAssertEqual(log.chosen, [], "moving chooses nothing")
    }

    func testTypeAheadFindsTheNextTitleWithThePrefixAndForgetsItAfterAPause() async throws {
        let menu = open()
        harness.key(.character("c"), after: 0.1)
        XCTAssertEqual(menu.highlightedIndex, 1, "c: Copy")
        harness.key(.character("c"), after: 0.1)
        XCTAssertEqual(menu.highlightedIndex, 6, "c again: the next item starting with c (Cut is disabled): Close")
        harness.key(.character("c"), after: 0.1)
        XCTAssertEqual(menu.highlightedIndex, 1, "and round to Copy")
        harness.key(.character("l"), after: 0.1)
        XCTAssertEqual(menu.highlightedIndex, 6, "cl: Close")
        harness.key(.character("p"), after: 0.5)
        XCTAssertEqual(menu.highlightedIndex, 6, "clp matches nothing: the highlight stays")
        harness.key(.character("p"), after: 1.5)
        XCTAssertEqual(menu.highlightedIndex, 4, "after a pause, p starts a new search: Paste")
        harness.key(.character("m"), after: 0.1)
        XCTAssertEqual(menu.highlightedIndex, 4, "pm matches nothing")
        harness.key(.character("m"), after: 1.2)
        XCTAssertEqual(menu.highlightedIndex, 5, "m after a pause: More")
        XCTAssertEqual(harness.menus.count, 1, "type-ahead opens no submenu")
    }

    func testEnterChoosesOnceAndClosesTheWholeChainFocusGoesBack() async throws {
        let menu = open()
        harness.key(.character("m"))
        harness.key(.right)
        XCTAssertEqual(harness.menus.count, 2, "Right opened More")
        let submenu = try XCTUnwrap(harness.menus.last)
        XCTAssertEqual(submenu.highlightedIndex, 0, "Right highlights the submenu's first item")
        XCTAssertTrue(harness.host.focusedNode === submenu)
        harness.key(.down)
        harness.key(.enter)
        XCTAssertEqual(log.chosen, ["Beta"], "the action ran once")
        XCTAssertTrue(harness.menus.isEmpty, "the menu and its submenu closed")
        XCTAssertTrue(harness.host.overlays.isEmpty)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button, "the focus is back on the button")
        XCTAssertNil(menu.presentation, "the presentation went with the menu")
        harness.key(.enter)
        XCTAssertEqual(log.chosen, ["Beta"], "Enter after the menu closed goes to the button, not the item")
        XCTAssertEqual(harness.buttonPresses, 1)
    }

    func testSpaceChoosesTheHighlightedItem() async throws {
        open()
        harness.keys(.down, .down, .space)
        XCTAssertEqual(log.chosen, ["Copy"])
        XCTAssertTrue(harness.menus.isEmpty)
    }

    func testEscapeClosesOneLevelAndTheFocusGoesBackAtEachStep() async throws {
        let menu = open()
        harness.keys(.end, .up, .right)
        XCTAssertEqual(harness.menus.count, 2)
        XCTAssertTrue(menu.rows[5].isExpanded)
        harness.key(.escape)
        XCTAssertEqual(harness.menus.count, 1, "Escape closed the submenu only")
        XCTAssertTrue(harness.host.focusedNode === menu, "the focus is back on the menu")
        XCTAssertFalse(menu.rows[5].isExpanded)
        XCTAssertEqual(menu.highlightedIndex, 5, "its item stays highlighted")
        harness.key(.escape)
        XCTAssertTrue(harness.menus.isEmpty)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button, "the focus is back where it was")
        XCTAssertEqual(log.chosen, [])
    }

    func testRightOpensASubmenuBesideItsItemAndLeftClosesIt() async throws {
        let menu = open()
        harness.key(.character("m"))
        harness.key(.right)
        let submenu = try XCTUnwrap(harness.menus.last)
        XCTAssertEqual(submenu.level, 1)
        XCTAssertGreaterThanOrEqual(submenu.frame.minX, menu.frame.maxX, "on the trailing side of the menu")
        let itemY = menu.frame.minY + menu.rows[5].frame.minY
        XCTAssertEqual(submenu.frame.minY + submenu.rows[0].frame.minY, itemY, accuracy: 0.5,
                       "its first item level with the item that opened it")
        harness.key(.left)
        XCTAssertEqual(harness.menus.count, 1, "Left closed the submenu")
        XCTAssertTrue(harness.host.focusedNode === menu)
        harness.key(.left)
        XCTAssertEqual(harness.menus.count, 1, "Left in the first menu (not a bar's) does nothing")
        harness.key(.enter)
        XCTAssertEqual(harness.menus.count, 2, "Enter on a submenu's item opens it")
        XCTAssertEqual(harness.menus.last?.highlightedIndex, 0)
        XCTAssertEqual(log.chosen, [])
    }

    func testAMenuNearTheRightEdgeOpensItsSubmenuOnTheLeft() async throws {
        harness.focusButton()
        let overlay = harness.host.showMenu(editMenu(), at: Point(x: 300, y: 20))
        harness.frame()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        harness.keys(.end, .up, .right)
        let submenu = try XCTUnwrap(harness.menus.last)
        XCTAssertLessThanOrEqual(submenu.frame.maxX, menu.frame.minX, "flipped to the leading side")
        XCTAssertGreaterThanOrEqual(submenu.frame.minX, 0)
    }
}
