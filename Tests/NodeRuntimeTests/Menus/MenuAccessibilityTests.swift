import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Menus to a screen reader: the menu and its items' roles and states in the host's tree, and
/// `.press` choosing an item or opening a submenu.
@MainActor
final class MenuAccessibilityTests: XCTestCase {
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

    private func viewMenu() -> Menu {
        Menu("View") {
            log.item("Reload", shortcut: KeyboardShortcut("F5"))
            log.item("Word Wrap", mark: .check(true))
            MenuItem.separator
            MenuItem("Small", selected: false) {}
            MenuItem("Large", selected: true) {}
            log.item("Full Screen").disabled()
            Menu("Zoom") { log.item("Zoom In") }
        }
    }

    private func find(_ role: AccessibilityRole, in element: AccessibilityElement) -> [AccessibilityElement] {
        (element.role == role ? [element] : []) + element.children.flatMap { find(role, in: $0) }
    }

    func testTheTreeHasTheMenuItsItemsRolesAndStates() async throws {
        harness.host.showMenu(viewMenu(), at: Point(x: 20, y: 20), highlightFirst: true)
        harness.frame()
        let tree = harness.host.accessibilityTree()
        let menu = try XCTUnwrap(find(.menu, in: tree.root).first)
        XCTAssertEqual(menu.label, "View")
        XCTAssertEqual(menu.children.map(\.role),
                       [.menuItem, .checkMenuItem, .separator, .radioMenuItem, .radioMenuItem, .menuItem, .menuItem])
        XCTAssertEqual(menu.children.map(\.label), ["Reload", "Word Wrap", "", "Small", "Large", "Full Screen", "Zoom"])
        XCTAssertEqual(tree.focusedID, menu.id, "the menu has the keyboard focus")
        let items = menu.children
        XCTAssertTrue(items[0].states.isSuperset(of: [.selected, .focused]), "the highlighted item")
        XCTAssertEqual(items[0].hint, "F5", "the shortcut")
        XCTAssertEqual(items[0].actions, [.press])
        XCTAssertTrue(items[1].states.isSuperset(of: [.checkable, .checked]))
        XCTAssertFalse(items[1].states.contains(.selected))
        XCTAssertTrue(items[3].states.contains(.checkable))
        XCTAssertFalse(items[3].states.contains(.checked))
        XCTAssertTrue(items[4].states.isSuperset(of: [.checkable, .checked]))
        XCTAssertTrue(items[5].states.contains(.disabled))
        XCTAssertEqual(items[5].actions, [], "a disabled item offers nothing")
        XCTAssertTrue(items[6].states.contains(.expandable))
        XCTAssertFalse(items[6].states.contains(.expanded))
        XCTAssertTrue(items.allSatisfy { $0.frame.width > 0 && $0.frame.minX >= menu.frame.minX }, "framed in the window")
    }

    func testPressOpensASubmenuAndChoosesAnItem() async throws {
        harness.focusButton()
        harness.host.showMenu(viewMenu(), at: Point(x: 20, y: 20))
        harness.frame()
        var tree = harness.host.accessibilityTree()
        var zoom = try XCTUnwrap(find(.menuItem, in: tree.root).first { $0.label == "Zoom" })
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: zoom.id))
        harness.frame()
        tree = harness.host.accessibilityTree()
        XCTAssertEqual(find(.menu, in: tree.root).map(\.label), ["View", "Zoom"], "the submenu is in the tree, above its menu")
        zoom = try XCTUnwrap(find(.menuItem, in: tree.root).first { $0.label == "Zoom" })
        XCTAssertTrue(zoom.states.isSuperset(of: [.expandable, .expanded]))
        let disabled = try XCTUnwrap(find(.menuItem, in: tree.root).first { $0.label == "Full Screen" })
        XCTAssertFalse(harness.host.performAccessibilityAction(.press, onElement: disabled.id), "a disabled item refuses")
        let wrap = try XCTUnwrap(find(.checkMenuItem, in: tree.root).first)
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: wrap.id))
        XCTAssertEqual(log.chosen, ["Word Wrap"])
        XCTAssertTrue(harness.menus.isEmpty, "choosing closed the chain")
        XCTAssertTrue(harness.host.focusedNode === harness.screen.button)
        harness.frame()
        XCTAssertTrue(find(.menu, in: harness.host.accessibilityTree().root).isEmpty)
    }

    func testAMenuBarAndItsTitles() async throws {
        harness.tearDown()
        let bar = MenuBarNode(menus: [Menu("File") { MenuItem("New") {} }, Menu("Edit") { MenuItem("Undo") {} }])
        harness = try MenuHarness(bar: bar)
        var tree = harness.host.accessibilityTree()
        let menuBar = try XCTUnwrap(find(.menuBar, in: tree.root).first)
        XCTAssertEqual(menuBar.children.map(\.label), ["File", "Edit"])
        XCTAssertEqual(menuBar.children.map(\.role), [.menuItem, .menuItem])
        XCTAssertTrue(menuBar.children[1].states.contains(.expandable))
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: menuBar.children[1].id))
        harness.frame()
        tree = harness.host.accessibilityTree()
        let edit = try XCTUnwrap(find(.menuBar, in: tree.root).first?.children[1])
        XCTAssertTrue(edit.states.isSuperset(of: [.expanded, .selected]))
        XCTAssertEqual(find(.menu, in: tree.root).first?.label, "Edit")
        XCTAssertEqual(harness.menus.first?.highlightedIndex, 0)
    }
}
