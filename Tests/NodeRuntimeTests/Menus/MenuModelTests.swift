import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Shortcuts written, parsed and matched; menus built by the builder; shortcut lookup.
final class MenuModelTests: XCTestCase {
    func testDisplayStringsAndParsingRoundTrip() {
        XCTAssertEqual(KeyboardShortcut(.character("n"), [.control, .shift]).displayString, "Ctrl+Shift+N")
        XCTAssertEqual(KeyboardShortcut(.character("N"), .control).key, .character("n"), "letters kept lowercase")
        XCTAssertEqual(KeyboardShortcut(.function(5)).displayString, "F5")
        XCTAssertEqual(KeyboardShortcut(.enter, .alt).displayString, "Alt+Enter")
        XCTAssertEqual(KeyboardShortcut(.other(KeyboardShortcut.menuKeyCode)).displayString, "Menu")
        XCTAssertEqual(KeyboardShortcut("Ctrl+Shift+N"), KeyboardShortcut(.character("n"), [.control, .shift]))
        XCTAssertEqual(KeyboardShortcut("shift+ctrl+n"), KeyboardShortcut(.character("n"), [.control, .shift]), "any order, any case")
        XCTAssertEqual(KeyboardShortcut("Alt+F4"), KeyboardShortcut(.function(4), .alt))
        XCTAssertEqual(KeyboardShortcut("Ctrl++"), KeyboardShortcut(.character("+"), .control))
        XCTAssertEqual(KeyboardShortcut("Super+PgDown"), KeyboardShortcut(.pageDown, .command))
        XCTAssertNil(KeyboardShortcut("Hyper+X"), "an unknown modifier")
        XCTAssertNil(KeyboardShortcut("Ctrl+"), "no key")
        XCTAssertNil(KeyboardShortcut("Ctrl+Nope"))
        for shortcut in [KeyboardShortcut("Ctrl+Alt+Del"), KeyboardShortcut("Shift+F10"), KeyboardShortcut("Ctrl+Home")] {
            let shortcut = try! XCTUnwrap(shortcut)
            XCTAssertEqual(KeyboardShortcut(shortcut.displayString), shortcut, "\(shortcut) parses back")
        }
    }

    func testMatchingNeedsTheKeyInEitherCaseAndExactlyTheModifiers() {
        let shortcut = KeyboardShortcut(.character("s"), .control)
        XCTAssertTrue(shortcut.matches(.character("s"), modifiers: .control))
        XCTAssertTrue(shortcut.matches(.character("S"), modifiers: .control))
        XCTAssertFalse(shortcut.matches(.character("s"), modifiers: [.control, .shift]))
        XCTAssertFalse(shortcut.matches(.character("s"), modifiers: []))
        XCTAssertFalse(shortcut.matches(.character("a"), modifiers: .control))
    }

    func testTheBuilderAndShortcutLookup() {
        let showsRecent = true
        let menu = Menu("File") {
            MenuItem("New", shortcut: .init(.character("n"), .control)) {}
            MenuItem.separator
            if showsRecent {
                MenuItem(submenu: Menu("Recent") {
                    for name in ["a", "b"] { MenuItem(name, shortcut: KeyboardShortcut("Ctrl+\(name)")) {} }
                })
            }
            MenuItem("Wrap", checked: true)
            MenuItem("Quit", shortcut: KeyboardShortcut("Ctrl+Q")) {}.disabled()
        }
        XCTAssertEqual(menu.items.map(\.title), ["New", "", "Recent", "Wrap", "Quit"])
        XCTAssertTrue(menu.items[1].isSeparator)
        XCTAssertFalse(menu.items[1].isSelectable)
        XCTAssertEqual(menu.items[2].submenu?.items.count, 2)
        XCTAssertEqual(menu.items[3].mark, .check(true))
        XCTAssertFalse(menu.items[4].isEnabled)
        XCTAssertEqual(menu.item(forShortcut: .character("b"), modifiers: .control)?.title, "b", "found in a submenu")
        XCTAssertNil(menu.item(forShortcut: .character("q"), modifiers: .control), "a disabled item is not")
        XCTAssertNil(menu.item(forShortcut: .character("w"), modifiers: .control))
    }
}
