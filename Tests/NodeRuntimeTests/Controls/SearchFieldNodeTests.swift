import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Search fields: typing tells `onTextChange` and `.valueChanged`, the clear button shows only with
/// text and empties the field keeping the focus, Escape clears, Enter submits, a press anywhere on
/// the field focuses its text, a disabled one takes nothing; screen readers read an entry.
///
/// The field is 240×36 at (10, 10).
@MainActor
final class SearchFieldNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    private func show(_ field: SearchFieldNode) throws -> ControlsHarness {
        try ControlsHarness([field], size: Size(width: 240, height: 36), windowSize: Size(width: 260, height: 60))
    }

    /// What a field told its listeners, in order.
    private final class Log {
        var changes: [String] = []
        var submits: [String] = []
        var events: [ControlEvents] = []
    }

    private func listen(_ field: SearchFieldNode) -> Log {
        let log = Log()
        field.onTextChange = { log.changes.append($0) }
        field.onSubmit = { log.submits.append($0) }
        field.addTarget(for: [.valueChanged, .primaryActionTriggered]) { _, happened in log.events.append(happened) }
        return log
    }

    /// Whether the clear button is in the field and laid out.
    private func clearShown(_ field: SearchFieldNode) -> Bool {
        field.clearButton.supernode === field && !field.clearButton.frame.isEmpty
    }

    func testTypingTellsItsListenersAndShowsTheClearButton() async throws {
        let field = SearchFieldNode()
        let harness = try show(field)
        defer { harness.tearDown() }
        let log = listen(field)
        XCTAssertEqual(field.frame, Rect(x: 10, y: 10, width: 240, height: 36))
        XCTAssertFalse(clearShown(field), "no clear button while empty")
        // A press on the magnifier focuses the text.
        harness.click(harness.point(Point(x: 14, y: 18), in: field))
        XCTAssertTrue(harness.host.focusedNode === field.textField)
        XCTAssertTrue(field.backgroundNode.isOutlined, "the focused field is outlined")
        harness.type("cat")
        XCTAssertEqual(field.text, "cat")
        XCTAssertEqual(log.changes, ["cat"])
        XCTAssertEqual(log.events, [.valueChanged])
        try harness.settle()
        XCTAssertTrue(clearShown(field))
        let clear = field.clearButton.frame
        XCTAssertEqual(clear.maxX, 240 - 8, "the clear button at the end")
        XCTAssertEqual(clear.midY, 18)
        XCTAssertLessThan(field.textField.frame.maxX, clear.minX)
    }

    func testTheClearButtonEmptiesTheFieldAndKeepsTheFocus() async throws {
        let field = SearchFieldNode()
        let harness = try show(field)
        defer { harness.tearDown() }
        let log = listen(field)
        harness.host.focus(field.textField)
        harness.type("kittens")
        try harness.settle()
        let clear = field.clearButton.frame
        harness.click(harness.point(Point(x: clear.midX, y: clear.midY), in: field))
        XCTAssertEqual(field.text, "")
        XCTAssertTrue(harness.host.focusedNode === field.textField, "the focus stays in the field")
        XCTAssertEqual(log.changes, ["kittens", ""])
        XCTAssertEqual(log.events, [.valueChanged, .valueChanged])
        XCTAssertTrue(log.submits.isEmpty)
        try harness.settle()
        XCTAssertFalse(clearShown(field), "gone with the text")
        harness.key(.character("z"), [.control])
        XCTAssertEqual(field.text, "kittens", "clearing is one step of undo")
    }

    func testEscapeClearsAndEnterSubmits() async throws {
        let field = SearchFieldNode()
        let harness = try show(field)
        defer { harness.tearDown() }
        let log = listen(field)
        harness.host.focus(field.textField)
        harness.type("dog")
        harness.key(.escape)
        XCTAssertEqual(field.text, "")
        XCTAssertTrue(harness.host.focusedNode === field.textField)
        XCTAssertEqual(log.changes, ["dog", ""])
        XCTAssertFalse(field.keyDown(.escape, modifiers: []), "Escape in an empty field goes on up")
        harness.type("fox")
        harness.key(.enter)
        XCTAssertEqual(log.submits, ["fox"])
        XCTAssertEqual(field.text, "fox", "submitting keeps the text")
        XCTAssertEqual(log.events, [.valueChanged, .valueChanged, .valueChanged, .primaryActionTriggered])
    }

    func testTextSetInCodeTellsNoOneAndShowsTheClearButton() async throws {
        let field = SearchFieldNode(placeholder: "Find chats")
        let harness = try show(field)
        defer { harness.tearDown() }
        let log = listen(field)
        field.text = "hello\nworld"
        try harness.settle()
        XCTAssertEqual(field.text, "hello world", "one line")
        XCTAssertTrue(clearShown(field))
        XCTAssertTrue(log.changes.isEmpty)
        XCTAssertTrue(log.events.isEmpty)
        XCTAssertEqual(field.placeholder, "Find chats")
        XCTAssertNil(harness.host.focusedNode)
    }

    func testADisabledFieldTakesNothing() async throws {
        let field = SearchFieldNode(text: "x")
        let harness = try show(field)
        defer { harness.tearDown() }
        let log = listen(field)
        harness.host.focus(field.textField)
        field.isEnabled = false
        try harness.settle()
        XCTAssertNil(harness.host.focusedNode, "disabling gives up the focus")
        XCTAssertFalse(clearShown(field), "no clear button while disabled")
        harness.click(harness.point(Point(x: 100, y: 18), in: field))
        harness.key(.tab)
        XCTAssertNil(harness.host.focusedNode, "no press or Tab focuses it")
        harness.type("y")
        XCTAssertEqual(field.text, "x")
        field.clear()
        XCTAssertEqual(field.text, "x")
        XCTAssertTrue(log.changes.isEmpty)
        XCTAssertEqual(field.opacity, 0.45)
        field.isEnabled = true
        try harness.settle()
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === field.textField, "enabled again, Tab reaches it")
    }

    func testAccessibilityReadsASearchEntryAndItsClearButton() async throws {
        let field = SearchFieldNode()
        let harness = try show(field)
        defer { harness.tearDown() }
        var entry = try XCTUnwrap(harness.element(role: .textField, of: field.textField))
        XCTAssertEqual(entry.role.atspiRole, 79)
        XCTAssertEqual(entry.role.atspiRoleName, "entry")
        XCTAssertEqual(entry.label, "Search")
        XCTAssertEqual(entry.hint, "Search", "the placeholder is its description")
        XCTAssertTrue(entry.states.contains(.editable))
        XCTAssertNil(harness.element(role: .button, of: field.clearButton), "no clear button while empty")
        harness.host.focus(field.textField)
        harness.type("owl")
        try harness.settle()
        entry = try XCTUnwrap(harness.element(role: .textField, of: field.textField))
        XCTAssertEqual(entry.value, "owl")
        let clear = try XCTUnwrap(harness.element(role: .button, of: field.clearButton))
        XCTAssertEqual(clear.label, "Clear")
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: clear.id))
        XCTAssertEqual(field.text, "")
        let tree = harness.host.accessibilityTree()
        XCTAssertEqual(tree.root.allElements.filter { $0.role == .textField }.count, 1, "one entry, the text field")
    }
}
