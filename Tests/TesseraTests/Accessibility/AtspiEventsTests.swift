import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// The events that lead from one published tree to the next, as a screen reader hears them.
@MainActor
final class AtspiEventsTests: XCTestCase {
    private func signals(_ old: AccessibilityTree?, _ new: AccessibilityTree) -> [AtspiSignal] {
        AtspiEvents.signals(from: AtspiSnapshot(tree: old), to: AtspiSnapshot(tree: new))
    }

    /// The fixture's tree with `change` applied to the element `id`.
    private func changing(_ id: Int, version: Int = 2, _ change: (inout AccessibilityElement) -> Void) -> AccessibilityTree {
        var tree = ServerFixture.tree(version: version)
        func visit(_ element: inout AccessibilityElement) {
            if element.id == id { change(&element) }
            for index in element.children.indices { visit(&element.children[index]) }
        }
        visit(&tree.root)
        return tree
    }

    func testTheFirstTreeAddsTheWindowAndAnnouncesTheFocus() async throws {
        let first = signals(nil, ServerFixture.tree())
        XCTAssertEqual(first, [
            .childrenChanged(.application, added: true, index: 0, child: .element(0)),
            .stateChanged(.element(4), .focused, true),
            AtspiSignal(object: .element(4), interface: Atspi.eventFocus, member: "Focus", detail: ""),
        ])
        XCTAssertEqual(signals(ServerFixture.tree(), ServerFixture.tree(version: 2)), [], "the same tree: nothing to say")
    }

    func testNamesDescriptionsValuesAndStatesThatChange() async throws {
        let old = ServerFixture.tree()
        XCTAssertEqual(signals(old, changing(2) { $0.label = "Send now" }),
                       [.propertyChanged(.element(2), "accessible-name", .string("Send now"))])
        XCTAssertEqual(signals(old, changing(2) { $0.hint = nil }),
                       [.propertyChanged(.element(2), "accessible-description", .string(""))])
        XCTAssertEqual(signals(old, changing(3) { $0.states.remove(.checked); $0.value = "off" }),
                       [.stateChanged(.element(3), .checked, false)], "the switch flipped")
        XCTAssertEqual(signals(old, changing(3) { $0.states.remove(.disabled) }),
                       [.stateChanged(.element(3), .enabled, true), .stateChanged(.element(3), .sensitive, true)])
        XCTAssertEqual(signals(old, changing(5) { $0.valueRange?.current = 4 }),
                       [.propertyChanged(.element(5), "accessible-value", .double(4))])
        XCTAssertEqual(signals(old, changing(1) { $0.role = .staticText; $0.headingLevel = nil }),
                       [.propertyChanged(.element(1), "accessible-role", .int(29))])
    }

    func testTheFocusMovingTurnsOneOffAndTheOtherOn() async throws {
        var moved = changing(4) { $0.states.remove(.focused) }
        moved = {
            var tree = moved
            tree.root.children[1].states.insert(.focused)
            tree.focusedID = 2
            return tree
        }()
        XCTAssertEqual(signals(ServerFixture.tree(), moved), [
            .stateChanged(.element(4), .focused, false),
            .stateChanged(.element(2), .focused, true),
            AtspiSignal(object: .element(2), interface: Atspi.eventFocus, member: "Focus", detail: ""),
        ])
    }

    func testTextInsertedDeletedAndTheCaretMoved() async throws {
        let old = ServerFixture.tree()
        let typed = changing(4) { $0.text?.string = "Hello, world. Second line\nThird"; $0.text?.caretOffset = 6; $0.text?.selection = nil }
        XCTAssertEqual(signals(old, typed), [
            AtspiSignal(object: .element(4), interface: Atspi.eventObject, member: "TextChanged", detail: "insert",
                        detail1: 5, detail2: 1, value: .string(",")),
            AtspiSignal(object: .element(4), interface: Atspi.eventObject, member: "TextCaretMoved", detail: "",
                        detail1: 6, value: .string("")),
            AtspiSignal(object: .element(4), interface: Atspi.eventObject, member: "TextSelectionChanged", detail: "",
                        value: .string("")),
        ])
        let replaced = changing(4) { $0.text?.string = "Hello there. Second line\nThird" }
        XCTAssertEqual(signals(old, replaced).map(\.detail), ["delete", "insert"])
        XCTAssertEqual(signals(old, replaced).map(\.value), [.string("world"), .string("there")])
        XCTAssertEqual(signals(old, replaced).map(\.detail1), [6, 6])
        // Offsets count Unicode scalars: an emoji before the change is one character.
        let emoji = AtspiEvents.textChanges(of: .element(1), before: AccessibilityText(string: "👋 a"),
                                            after: AccessibilityText(string: "👋 ab"))
        XCTAssertEqual(emoji.map(\.detail1), [3])
    }

    func testChildrenAddedRemovedAndMoved() async throws {
        let parent = AtspiObject.element(0)
        XCTAssertEqual(AtspiEvents.childChanges(of: parent, before: [1, 2, 3], after: [1, 3]),
                       [.childrenChanged(parent, added: false, index: 1, child: .element(2))])
        XCTAssertEqual(AtspiEvents.childChanges(of: parent, before: [1, 3], after: [1, 2, 3, 4]),
                       [.childrenChanged(parent, added: true, index: 1, child: .element(2)),
                        .childrenChanged(parent, added: true, index: 3, child: .element(4))])
        XCTAssertEqual(AtspiEvents.childChanges(of: parent, before: [1, 2, 3], after: [9, 3]), [
            .childrenChanged(parent, added: false, index: 1, child: .element(2)),
            .childrenChanged(parent, added: false, index: 0, child: .element(1)),
            .childrenChanged(parent, added: true, index: 0, child: .element(9)),
        ], "removals last first, so each index holds when applied; then additions first first")
        let swapped = AtspiEvents.childChanges(of: parent, before: [1, 2], after: [2, 1])
        XCTAssertEqual(swapped.map(\.detail), ["remove", "remove", "add", "add"])
        XCTAssertEqual(swapped.map(\.detail1), [1, 0, 0, 1])
        // In a tree: a screen that lost its button and gained a text.
        var tree = ServerFixture.tree(version: 2)
        tree.root.children.remove(at: 1)
        tree.root.children.append(AccessibilityElement(id: 20, role: .staticText, label: "Sent"))
        XCTAssertEqual(signals(ServerFixture.tree(), tree), [
            .childrenChanged(parent, added: false, index: 1, child: .element(2)),
            .childrenChanged(parent, added: true, index: 5, child: .element(20)),
        ])
    }

    func testAListsRowsAreCounted() async throws {
        let list = AtspiObject.element(6)
        // A row inserted at the top: its node is new, at row 0.
        let inserted = changing(6) { element in
            element.rowCount = 101
            element.children = [AccessibilityElement(id: 12, role: .listItem, label: "New", rowIndex: 0)]
                + element.children.map { var row = $0; row.rowIndex = (row.rowIndex ?? 0) + 1; return row }
        }
        XCTAssertEqual(signals(ServerFixture.tree(), inserted), [.childrenChanged(list, added: true, index: 0, child: .element(12))])
        // Rows appended far below: named by index, as placeholders.
        let appended = changing(6) { $0.rowCount = 102 }
        XCTAssertEqual(signals(ServerFixture.tree(), appended), [
            .childrenChanged(list, added: true, index: 100, child: .element(AccessibilityElement.placeholderID(row: 100, list: 6))),
            .childrenChanged(list, added: true, index: 101, child: .element(AccessibilityElement.placeholderID(row: 101, list: 6))),
        ])
        // Row 1's node gone with one row fewer: that row was removed.
        let removed = changing(6) { $0.rowCount = 99; $0.children.removeLast() }
        XCTAssertEqual(signals(ServerFixture.tree(), removed), [.childrenChanged(list, added: false, index: 1, child: .element(11))])
        // Rows that gain or lose a node as the list scrolls are the same rows: nothing is said.
        let scrolled = changing(6) { $0.children.removeLast() }
        XCTAssertEqual(signals(ServerFixture.tree(), scrolled), [])
    }

    func testTheWindowsActivation() async throws {
        XCTAssertEqual(AtspiEvents.windowActivation(window: 0, isActive: true), [
            .stateChanged(.element(0), .active, true),
            AtspiSignal(object: .element(0), interface: Atspi.eventWindow, member: "Activate", detail: "", value: .string("")),
        ])
        XCTAssertEqual(AtspiEvents.windowActivation(window: 0, isActive: false).last?.member, "Deactivate")
    }
}
