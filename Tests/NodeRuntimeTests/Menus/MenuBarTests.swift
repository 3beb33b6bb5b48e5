import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// A menu bar: a click opens the menu below its title and another click closes it, hovering another
/// title while one is open switches, Left and Right move along, F10 opens the first menu; shortcuts
/// run with the menus closed and not while a popup holds the focus.
@MainActor
final class MenuBarTests: XCTestCase {
    private var harness: MenuHarness!
    private var log: MenuActionLog!
    private var bar: MenuBarNode!

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        log = MenuActionLog()
        let log = self.log!
        bar = MenuBarNode(menus: [
            Menu("File") {
                log.item("New", shortcut: KeyboardShortcut(.character("n"), .control))
                log.item("Save", shortcut: KeyboardShortcut("Ctrl+S"))
                log.item("Print", shortcut: KeyboardShortcut("Ctrl+P")).disabled()
            },
            Menu("Edit") {
                log.item("Undo", shortcut: KeyboardShortcut("Ctrl+Z"))
                Menu("Find") { log.item("Find Next", shortcut: KeyboardShortcut("F3")) }
            },
            Menu("Help") { log.item("About") },
        ])
        harness = try MenuHarness(bar: bar)
    }

    override func tearDown() async throws {
        harness?.tearDown()
        harness = nil
    }

    private func titleCentre(_ index: Int) -> Point {
        let frame = NodeHost.windowFrame(of: bar.titles[index]) ?? .zero
        return Point(x: frame.midX, y: frame.midY)
    }

    func testAClickOpensTheMenuBelowItsTitleAndAnotherClickClosesIt() async throws {
        XCTAssertEqual(bar.frame.height, MenuBarNode.height)
        harness.click(titleCentre(0))
        XCTAssertEqual(bar.openIndex, 0)
        let menu = try XCTUnwrap(harness.menus.first)
        let title = try XCTUnwrap(NodeHost.windowFrame(of: bar.titles[0]))
        XCTAssertEqual(menu.frame.minY, title.maxY, accuracy: 0.5, "below its title")
        XCTAssertEqual(menu.frame.minX, title.minX, accuracy: 0.5)
        XCTAssertNil(menu.highlightedIndex, "a click highlights nothing")
        harness.click(titleCentre(0))
        XCTAssertNil(bar.openIndex, "a second click on the title closed it")
        XCTAssertTrue(harness.menus.isEmpty)
    }

    func testHoveringAnotherTitleSwitchesMenusAndAClickOnOneOpensIt() async throws {
        harness.frame([.pointerMoved(titleCentre(1))])
        XCTAssertTrue(harness.menus.isEmpty, "hovering alone opens nothing")
        harness.click(titleCentre(0))
        harness.frame([.pointerMoved(titleCentre(1))])
        XCTAssertEqual(bar.openIndex, 1, "hovering Edit while File is open switches to Edit")
        XCTAssertEqual(harness.menus.map(\.menu.title), ["Edit"])
        harness.frame([.pointerMoved(titleCentre(2))])
        XCTAssertEqual(harness.menus.map(\.menu.title), ["Help"])
        XCTAssertTrue(bar.titles[2].isOpen)
        XCTAssertFalse(bar.titles[1].isOpen)
        // A press on another title with no hover before it (a touch screen) opens that one.
        harness.frame([.pointerDown(titleCentre(0), button: 1)])
        harness.frame([.pointerUp(titleCentre(0), button: 1)])
        XCTAssertEqual(harness.menus.map(\.menu.title), ["File"])
    }

    func testF10OpensTheFirstMenuAndLeftAndRightMoveAlongTheBar() async throws {
        harness.focusButton()
        harness.key(.function(10))
        XCTAssertEqual(bar.openIndex, 0)
        XCTAssertEqual(harness.menus.first?.highlightedIndex, 0, "from the keyboard, the first item is highlighted")
        harness.key(.right)
        XCTAssertEqual(bar.openIndex, 1, "Right on an item without a submenu: the next menu")
        harness.keys(.down, .right)
        XCTAssertEqual(harness.menus.map(\.menu.title), ["Edit", "Find"], "Right on Find opened its submenu")
        harness.key(.left)
        XCTAssertEqual(harness.menus.map(\.menu.title), ["Edit"], "Left closed the submenu")
        harness.key(.left)
        XCTAssertEqual(bar.openIndex, 0, "Left in the bar's menu: the previous menu")
        harness.key(.left)
        XCTAssertEqual(bar.openIndex, 2, "wrapping to the last")
        harness.key(.escape)
        XCTAssertNil(bar.openIndex)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button, "the focus is back where F10 found it")
    }

    func testShortcutsRunWithTheMenusClosedButNotWhileAPopupHoldsTheFocus() async throws {
        harness.focusButton()
        harness.key(.character("n"), .control)
        XCTAssertEqual(log.chosen, ["New"], "Ctrl+N ran New without opening its menu")
        XCTAssertTrue(harness.menus.isEmpty)
        harness.key(.character("N"), [.control])
        XCTAssertEqual(log.chosen, ["New", "New"], "either case of the letter")
        harness.key(.character("n"), [.control, .shift])
        XCTAssertEqual(log.chosen.count, 2, "the modifiers must match exactly")
        harness.key(.character("p"), .control)
        XCTAssertEqual(log.chosen.count, 2, "a disabled item's shortcut does nothing")
        harness.key(.function(3))
        XCTAssertEqual(log.chosen.last, "Find Next", "a submenu's shortcuts too")
        harness.host.showMenu(Menu { MenuItem("Other") {} }, at: Point(x: 200, y: 150))
        harness.frame()
        harness.key(.character("s"), .control)
        XCTAssertEqual(log.chosen.count, 3, "not while a popup holds the focus")
        harness.key(.escape)
        harness.key(.character("s"), .control)
        XCTAssertEqual(log.chosen.last, "Save", "once it closed, shortcuts run again")
        XCTAssertEqual(log.chosen.count, 4)
        let dialog = harness.host.presentOverlay(ButtonNode(title: "OK"), kind: .modal,
                                                 positioner: PopupPositioner(anchor: Rect(x: 150, y: 100, width: 0, height: 0)))
        harness.frame()
        harness.key(.character("s"), .control)
        harness.key(.function(10))
        XCTAssertEqual(log.chosen.count, 4, "nor while a dialog does")
        XCTAssertNil(bar.openIndex, "and F10 does not reach the bar behind it")
        dialog.dismiss()
    }

    func testAltAndALetterOpenTheMenuWithThatInitial() async throws {
        harness.focusButton()
        harness.key(.character("e"), .alt)
        XCTAssertEqual(bar.openIndex, 1, "Alt+E: Edit")
        XCTAssertEqual(harness.menus.first?.highlightedIndex, 0)
        harness.key(.escape)
        harness.key(.character("x"), .alt)
        XCTAssertTrue(harness.menus.isEmpty, "no menu starts with x")
    }

    func testTheKeyboardCancelsASubmenuThePointerWasAboutToOpen() async throws {
        harness.click(titleCentre(1))
        let menu = try XCTUnwrap(harness.menus.first)
        let findRow = menu.rows[1].frame.offsetBy(dx: menu.frame.minX, dy: menu.frame.minY)
        harness.frame([.pointerMoved(Point(x: findRow.midX, y: findRow.midY))])
        XCTAssertEqual(menu.highlightedIndex, 1)
        harness.key(.up)
        harness.frame(after: 0.5)
        XCTAssertEqual(harness.menus.count, 1, "Up moved the highlight: Find's submenu stays closed")
        XCTAssertEqual(menu.highlightedIndex, 0)
    }

    func testShortcutMenusRunWithoutABar() async throws {
        harness.host.setRootNode(MenuScreenNode())
        try harness.settle()
        var ran = 0
        harness.host.shortcutMenus = [Menu { MenuItem("Reload", shortcut: KeyboardShortcut("F5")) { ran += 1 } }]
        harness.key(.function(5))
        harness.key(.character("n"), .control)
        XCTAssertEqual(ran, 1)
        XCTAssertEqual(log.chosen, [], "a bar that left the screen no longer runs its shortcuts")
    }
}
