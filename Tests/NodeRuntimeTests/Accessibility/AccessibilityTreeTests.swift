import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen with one of each kind, stacked.
private final class FormNode: Node, @unchecked Sendable {
    let title = TextNode("Settings")
    let body: TextNode
    let photo = ImageNode()
    let button = ButtonNode(title: "Send")
    let toggle = SwitchNode(isOn: true)
    let field = EditableTextNode(text: "hello", placeholder: "Message")
    let decoration = TextNode("★")
    let group = Node()
    let groupText = TextNode("Inside a group")

    override init() {
        var text = AttributedText("Read ")
        var link = TextAttributes()
        link.link = "https://example.org/guide"
        text.append("the guide", attributes: link)
        text.append(" first.", attributes: TextAttributes())
        body = TextNode(attributedText: text)
        super.init()
        photo.accessibilityLabel = "A cup of coffee"
        photo.preferredSize = Size(width: 40, height: 40)
        decoration.accessibilityElementsHidden = true
        group.addSubnode(groupText)
        [title, body, photo, button, toggle, field, decoration, group].forEach { addSubnode($0) }
        field.preferredSize = Size(width: 200, height: 30)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 4, alignItems: .start) { [title, body, photo, button, toggle, field, decoration, group] }
    }
}

/// A row holding one text, `height` points tall.
private final class LabelRowNode: Node, @unchecked Sendable {
    let label: TextNode
    init(text: String, height: Double) {
        label = TextNode(text)
        super.init()
        label.style.height = .points(height)
        addSubnode(label)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack { label }
    }
}

/// The accessibility tree a host builds: roles, labels, values and states from each kind's defaults
/// and the app's settings, reading order, lists read by index, and the actions a screen reader asks for.
@MainActor
final class AccessibilityTreeTests: XCTestCase {
    private var time = 0.0

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func show(_ node: Node, size: Size = Size(width: 320, height: 400)) throws -> NodeHost {
        let (host, _) = try OffscreenRender.makeHost(size: size)
        host.setRootNode(node)
        try host.settle(timeout: 10)
        return host
    }

    func testEachKindHasItsRoleLabelStatesAndReadingOrder() async throws {
        let form = FormNode()
        let host = try show(form)
        defer { host.setRootNode(nil) }
        let tree = host.accessibilityTree(title: "Form")
        XCTAssertEqual(tree.root.role, .window)
        XCTAssertEqual(tree.root.label, "Form")
        let elements = tree.root.children
        XCTAssertEqual(elements.map(\.role), [.staticText, .staticText, .image, .button, .switch, .textField, .staticText],
                       "in subnode order; the hidden decoration left out; the group's text hoisted")
        XCTAssertEqual(elements.map(\.label), ["Settings", "Read the guide first.", "A cup of coffee", "Send", "",
                                               "Message", "Inside a group"])
        // The text's link is a link element inside it.
        let link = try XCTUnwrap(elements[1].children.first)
        XCTAssertEqual(link.role, .link)
        XCTAssertEqual(link.label, "the guide")
        XCTAssertEqual(link.value, "https://example.org/guide")
        XCTAssertEqual(link.actions, [.press])
        // The button: focusable, pressable, labelled by its title, its title not read twice.
        XCTAssertEqual(elements[3].actions, [.press])
        XCTAssertTrue(elements[3].states.contains(.focusable))
        XCTAssertTrue(elements[3].children.isEmpty)
        // The switch: checked, value "on".
        XCTAssertTrue(elements[4].states.isSuperset(of: [.checkable, .checked]))
        XCTAssertEqual(elements[4].value, "on")
        // The field: editable text with its caret at the end.
        let field = elements[5]
        XCTAssertEqual(field.value, "hello")
        XCTAssertEqual(field.text, AccessibilityText(string: "hello", caretOffset: 5, isEditable: true))
        XCTAssertTrue(field.states.isSuperset(of: [.editable, .focusable, .showing]))
        // Frames are where the nodes are in the window.
        XCTAssertEqual(elements[2].frame, form.photo.layerIfLoaded?.frameInRoot)
        XCTAssertEqual(elements[2].frame.size, Size(width: 40, height: 40))
        // Ids are stable across trees.
        let again = host.accessibilityTree()
        XCTAssertEqual(again.root.children.map(\.id), elements.map(\.id))
        XCTAssertGreaterThan(again.version, tree.version)
    }

    func testWhatTheAppSetsGoesOverTheDefaults() async throws {
        let form = FormNode()
        form.title.accessibilityRole = .heading
        form.button.accessibilityLabel = "Send message"
        form.button.accessibilityHint = "Sends what you typed"
        form.button.isEnabled = false
        form.group.accessibilityLabel = "Account"
        form.group.accessibilityRole = .group
        let host = try show(form)
        defer { host.setRootNode(nil) }
        let elements = host.accessibilityTree().root.children
        XCTAssertEqual(elements[0].role, .heading)
        XCTAssertEqual(elements[3].label, "Send message")
        XCTAssertEqual(elements[3].hint, "Sends what you typed")
        XCTAssertTrue(elements[3].states.contains(.disabled))
        let group = try XCTUnwrap(elements.last)
        XCTAssertEqual(group.role, .group, "a role makes a plain node an element")
        XCTAssertEqual(group.label, "Account")
        XCTAssertEqual(group.children.map(\.label), ["Inside a group"])
    }

    func testActionsPressControlsOpenLinksFocusAndEdit() async throws {
        let form = FormNode()
        let host = try show(form)
        defer { host.setRootNode(nil) }
        var pressed = 0
        _ = form.button.addTarget(for: .primaryActionTriggered) { _, _ in pressed += 1 }
        var opened: [String] = []
        form.body.linkTapHandler = { opened.append($0) }
        var tree = host.accessibilityTree()
        let elements = tree.root.children
        XCTAssertTrue(host.performAccessibilityAction(.press, onElement: elements[3].id))
        XCTAssertEqual(pressed, 1)
        XCTAssertTrue(host.performAccessibilityAction(.press, onElement: elements[4].id))
        XCTAssertFalse(form.toggle.isOn, "pressing the switch turns it off")
        XCTAssertTrue(host.performAccessibilityAction(.press, onElement: elements[1].children[0].id))
        XCTAssertEqual(opened, ["https://example.org/guide"])
        XCTAssertFalse(host.performAccessibilityAction(.press, onElement: elements[0].id), "static text does nothing")
        XCTAssertFalse(host.performAccessibilityAction(.press, onElement: 987_654_321), "an unknown id is refused")
        // Focus moves to the field; the next tree says so.
        XCTAssertTrue(host.focusAccessibilityElement(elements[5].id))
        XCTAssertFalse(host.focusAccessibilityElement(elements[0].id), "text cannot take the focus")
        XCTAssertTrue(host.setAccessibilityText("changed", ofElement: elements[5].id))
        XCTAssertEqual(form.field.text, "changed")
        try host.settle(timeout: 10)
        tree = host.accessibilityTree()
        XCTAssertEqual(tree.focusedID, elements[5].id)
        XCTAssertTrue(tree.root.children[5].states.contains(.focused))
        XCTAssertEqual(tree.root.children[5].value, "changed")
        XCTAssertEqual(tree.root.children[4].value, "off")
        // A custom action.
        var replied = false
        form.group.accessibilityRole = .group
        form.group.accessibilityCustomActions = [AccessibilityCustomAction(name: "Reply") { replied = true; return true }]
        tree = host.accessibilityTree()
        let group = try XCTUnwrap(tree.root.children.last)
        XCTAssertEqual(group.actions, [.custom("Reply")])
        XCTAssertTrue(host.performAccessibilityAction(.custom("Reply"), onElement: group.id))
        XCTAssertTrue(replied)
    }

    func testAListIsReadByIndexWithItsRowsAsItems() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 100, height: 100))
        defer { host.setRootNode(nil) }
        let source = TestListSource(count: 1_000, height: 20)
        source.makeNode = { identity, height in LabelRowNode(text: "Row \(identity)", height: height) }
        let list = ListNode()
        list.dataSource = source
        host.setRootNode(list)
        try host.settle(timeout: 10)
        var selected: [Int] = []
        list.onSelectRow = { selected.append($0) }
        let tree = host.accessibilityTree()
        let element = try XCTUnwrap(tree.root.children.first)
        XCTAssertEqual(element.role, .list)
        XCTAssertEqual(element.rowCount, 1_000, "every row counts, with a node or not")
        XCTAssertEqual(element.children.first?.role, .listItem)
        XCTAssertEqual(element.children.first?.rowIndex, 0)
        XCTAssertEqual(element.children.first?.label, "Row 0")
        XCTAssertEqual(element.children.first?.children.map(\.label), ["Row 0"])
        XCTAssertTrue(element.children.first?.states.contains(.showing) == true)
        XCTAssertLessThan(element.children.count, 100, "rows near the screen have nodes")
        let offscreen = try XCTUnwrap(element.children.last)
        XCTAssertFalse(offscreen.states.contains(.showing), "a row made ahead of the screen is not showing")
        // A row far away is a placeholder; pressing it scrolls it into view and selects it.
        let far = try XCTUnwrap(host.accessibilityPlaceholder(forRow: 700, ofListElement: element.id))
        XCTAssertEqual(far.rowIndex, 700)
        XCTAssertEqual(far.role, .listItem)
        XCTAssertNil(host.accessibilityPlaceholder(forRow: 1_000, ofListElement: element.id))
        XCTAssertTrue(host.performAccessibilityAction(.press, onElement: far.id))
        try host.settle(timeout: 10)
        XCTAssertEqual(selected, [700])
        XCTAssertTrue(list.visibleRows?.contains(700) == true)
        // Scrolling by a screenful.
        let before = list.contentOffset
        XCTAssertTrue(host.performAccessibilityAction(.scrollForward, onElement: element.id))
        try host.settle(timeout: 10)
        XCTAssertEqual(list.contentOffset, before + 90, accuracy: 0.5)
    }
}
