import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Menus and the pointer: hover highlights, a click chooses, a rest on a submenu's item opens it after
/// the delay, a press outside closes without reaching what is under it, and context menus open at a
/// secondary press (flipped to stay inside the window) or by the Menu key and Shift+F10.
@MainActor
final class MenuPointerTests: XCTestCase {
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

    private func fileMenu() -> Menu {
        Menu("File") {
            log.item("New")
            log.item("Open")
            Menu("Recent") {
                log.item("notes.txt")
                log.item("todo.txt")
            }
            MenuItem.separator
            log.item("Quit").disabled()
        }
    }

    func testHoverHighlightsAndAClickChoosesAndCloses() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 150, y: 40))
        harness.frame()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        harness.frame([.pointerMoved(harness.centre(of: 1, in: menu))])
        XCTAssertEqual(menu.highlightedIndex, 1, "the item under the pointer is highlighted")
        harness.frame([.pointerMoved(harness.centre(of: 4, in: menu))])
        XCTAssertNil(menu.highlightedIndex, "a disabled item is not")
        var reasons: [Overlay.DismissReason] = []
        overlay.onDismiss = { reasons.append($0) }
        harness.click(harness.centre(of: 4, in: menu))
        XCTAssertEqual(harness.menus.count, 1, "a click on a disabled item does nothing")
        harness.click(harness.centre(of: 0, in: menu))
        XCTAssertEqual(log.chosen, ["New"])
        XCTAssertTrue(harness.menus.isEmpty)
        XCTAssertEqual(reasons, [.dismissed], "the app's onDismiss still hears how it ended")
    }

    func testRestingOnASubmenuItemOpensItAfterTheDelayAndAClickOpensItAtOnce() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 50, y: 40))
        harness.frame()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        harness.frame([.pointerMoved(harness.centre(of: 2, in: menu))])
        harness.frame(after: 0.1)
        XCTAssertEqual(harness.menus.count, 1, "not before the delay")
        XCTAssertNotNil(harness.host.nextTimerTime(after: harness.host.time), "the host wakes for the delay's end")
        harness.frame(after: 0.2)
        XCTAssertEqual(harness.menus.count, 2, "Recent opened after resting a quarter of a second")
        let submenu = try XCTUnwrap(harness.menus.last)
        XCTAssertNil(submenu.highlightedIndex, "opened by the pointer, nothing highlighted in it")
        // Back on an item of the first menu: through the submenu's popup to the menu below it.
        harness.frame([.pointerMoved(harness.centre(of: 1, in: menu))])
        XCTAssertEqual(menu.highlightedIndex, 1, "the pointer reaches the menu under the submenu's popup")
        harness.frame([.pointerMoved(Point(x: 2, y: 2))])
        XCTAssertEqual(menu.highlightedIndex, 2, "leaving it before the delay: the open submenu's item is highlighted again")
        harness.frame(after: 0.3)
        XCTAssertEqual(harness.menus.count, 2, "and its submenu stays")
        harness.frame([.pointerMoved(harness.centre(of: 0, in: menu))])
        harness.frame(after: 0.3)
        XCTAssertEqual(harness.menus.count, 1, "resting on another item closed the submenu")
        harness.click(harness.centre(of: 2, in: menu))
        XCTAssertEqual(harness.menus.count, 2, "a click opens the submenu at once")
        let opened = try XCTUnwrap(harness.menus.last)
        harness.click(harness.centre(of: 1, in: opened))
        XCTAssertEqual(log.chosen, ["todo.txt"])
        XCTAssertTrue(harness.menus.isEmpty, "choosing in the submenu closes the chain")
    }

    func testWithASubmenuOpenAClickOnTheMenuBelowChoosesThere() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 50, y: 40))
        harness.frame()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        harness.click(harness.centre(of: 2, in: menu))
        XCTAssertEqual(harness.menus.count, 2)
        harness.click(harness.centre(of: 1, in: menu))
        XCTAssertEqual(log.chosen, ["Open"], "the press went through the submenu's popup to the menu below")
        XCTAssertTrue(harness.menus.isEmpty)
    }

    func testAPressOutsideClosesWithoutPressingWhatIsUnderIt() async throws {
        let button = harness.buttonFrame
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 200, y: 100))
        harness.frame()
        var reason: Overlay.DismissReason?
        overlay.onDismiss = { reason = $0 }
        harness.click(Point(x: button.midX, y: button.midY))
        XCTAssertTrue(harness.menus.isEmpty, "the press outside closed the menu")
        XCTAssertEqual(reason, .pressedOutside)
        XCTAssertEqual(harness.buttonPresses, 0, "the button under the press was not pressed")
        XCTAssertEqual(log.chosen, [])
        harness.click(Point(x: button.midX, y: button.midY))
        XCTAssertEqual(harness.buttonPresses, 1, "with the menu closed, the button takes presses again")
    }

    func testAContextMenuNearTheBottomRightCornerFlipsToStayInsideTheWindow() async throws {
        harness.screen.contextMenu = fileMenu()
        let corner = Point(x: 390, y: 290)
        harness.frame([.pointerMoved(corner), .pointerDown(corner, button: 3)])
        harness.frame([.pointerUp(corner, button: 3)])
        let menu = try XCTUnwrap(harness.menus.first)
        let frame = menu.frame
        XCTAssertTrue(frame.minX >= 4 && frame.minY >= 4 && frame.maxX <= 396 && frame.maxY <= 296,
                      "inside the window's margin: \(frame)")
        XCTAssertEqual(frame.maxX, corner.x, accuracy: 0.5, "flipped left: its right edge at the pointer")
        XCTAssertEqual(frame.maxY, corner.y, accuracy: 0.5, "flipped up: its bottom edge at the pointer")
        XCTAssertNil(menu.highlightedIndex)
        XCTAssertEqual(log.chosen, [], "the release of the button that opened it chooses nothing")
    }

    func testASecondaryPressOpensTheNearestContextMenuOutwardsAtThePointer() async throws {
        var asked: [Point] = []
        harness.screen.setContextMenu { point in
            asked.append(point)
            return Menu { MenuItem("Screen") {} }
        }
        harness.screen.button.contextMenu = Menu { MenuItem("Button") {} }
        let onButton = Point(x: harness.buttonFrame.midX, y: harness.buttonFrame.midY)
        harness.frame([.pointerDown(onButton, button: 3)])
        harness.frame([.pointerUp(onButton, button: 3)])
        XCTAssertEqual(harness.menus.first?.menu.items.first?.title, "Button", "the button's own menu")
        XCTAssertEqual(harness.menus.first?.frame.origin, onButton, "below and right of the pointer")
        XCTAssertEqual(harness.buttonPresses, 0, "a secondary press does not press the button")
        let elsewhere = Point(x: 200, y: 150)
        harness.frame([.pointerDown(elsewhere, button: 3)])
        XCTAssertTrue(harness.menus.isEmpty, "a press outside the open menu only closes it")
        harness.frame([.pointerUp(elsewhere, button: 3)])
        harness.frame([.pointerDown(elsewhere, button: 3)])
        harness.frame([.pointerUp(elsewhere, button: 3)])
        XCTAssertEqual(harness.menus.first?.menu.items.first?.title, "Screen")
        XCTAssertEqual(asked, [elsewhere], "the provider got the point in its node's coordinates")
        harness.key(.escape)
        harness.screen.button.setContextMenu { _ in Menu(items: []) }
        harness.frame([.pointerDown(onButton, button: 3)])
        harness.frame([.pointerUp(onButton, button: 3)])
        XCTAssertEqual(harness.menus.first?.menu.items.first?.title, "Screen", "a menu without items lets the screen offer its own")
    }

    func testTheMenuKeyAndShiftF10OpenTheFocusedNodesContextMenuBelowIt() async throws {
        harness.screen.button.contextMenu = fileMenu()
        harness.focusButton()
        let button = harness.buttonFrame
        harness.key(.other(KeyboardShortcut.menuKeyCode))
        let menu = try XCTUnwrap(harness.menus.first, "the Menu key opened the button's menu")
        XCTAssertEqual(menu.frame.minY, button.maxY, accuracy: 0.5, "below the button")
        XCTAssertEqual(menu.frame.minX, button.minX, accuracy: 0.5, "aligned with its start")
        XCTAssertEqual(menu.highlightedIndex, 0, "from the keyboard, the first item is highlighted")
        XCTAssertTrue(harness.host.focusedNode === menu)
        XCTAssertTrue(harness.host.showsFocusRing, "the focus moved by the keyboard")
        XCTAssertTrue(harness.host.focusRing?.isHidden ?? true, "yet no ring around the menu: its highlight shows the focus")
        harness.key(.escape)
        XCTAssertTrue(harness.menus.isEmpty)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button)
        harness.key(.function(10))
        XCTAssertTrue(harness.menus.isEmpty, "F10 without Shift is not the context menu's key")
        harness.key(.function(10), .shift)
        XCTAssertEqual(harness.menus.count, 1, "Shift+F10 opened it")
        harness.keys(.down, .enter)
        XCTAssertEqual(log.chosen, ["Open"])
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button)
    }

    func testLosingTheWindowFocusClosesTheChain() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 50, y: 40))
        harness.frame()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        harness.click(harness.centre(of: 2, in: menu))
        XCTAssertEqual(harness.menus.count, 2)
        harness.frame([.windowFocusChanged(false)])
        XCTAssertTrue(harness.menus.isEmpty)
        XCTAssertFalse(menu.rows[2].isExpanded)
    }
}
