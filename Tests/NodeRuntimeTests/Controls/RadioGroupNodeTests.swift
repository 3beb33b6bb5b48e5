import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Nodes stacked at their own sizes, 8 points apart.
final class ControlStackNode: Node, @unchecked Sendable {
    let items: [Node]
    init(_ items: [Node]) {
        self.items = items
        super.init()
        items.forEach { addSubnode($0) }
    }
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 8, alignItems: .start) { items }
    }
}

/// Radio groups: a click or Space chooses, the arrows move the choice and the focus within the
/// group, which is one stop of Tab; read as a panel of radio buttons; out-of-range indexes choose
/// nothing; drawn in each state, light and dark.
@MainActor
final class RadioGroupNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 160, height: 140)
    private func group(_ selected: Int? = 0) -> RadioGroupNode {
        RadioGroupNode(titles: ["Small", "Medium", "Large"], selectedIndex: selected, title: "Size")
    }

    func testAClickChoosesAndSendsValueChangedOnce() async throws {
        let radios = group()
        let harness = try ControlHarness(radios, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(radios.items.map(\.frame.minY), [0, 30, 60], "24-point rows, 6 apart")
        var changes = 0
        radios.addTarget(for: .valueChanged) { control, _ in
            changes += 1
            XCTAssertEqual((control as? RadioGroupNode)?.selectedIndex, 2)
        }
        harness.click(Point(x: 60, y: 10 + 60 + 12))
        XCTAssertEqual(radios.selectedIndex, 2)
        XCTAssertEqual(radios.items.map(\.isSelected), [false, false, true])
        XCTAssertEqual(changes, 1)
        harness.click(Point(x: 19, y: 10 + 60 + 12))
        XCTAssertEqual(changes, 1, "choosing the chosen button changes nothing")
    }

    func testOneTabStopAndArrowsMoveTheChoiceAndFocusWrapping() async throws {
        let radios = group(1)
        let after = CheckboxNode(title: "After")
        let harness = try ControlHarness(ControlStackNode([radios, after]), size: size)
        defer { harness.tearDown() }
        var changes = 0
        radios.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === radios.items[1], "Tab lands on the chosen button")
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after, "the group is one stop")
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === radios.items[1])
        harness.keys(.down)
        XCTAssertEqual(radios.selectedIndex, 2)
        XCTAssertTrue(harness.host.focusedNode === radios.items[2])
        harness.keys(.right)
        XCTAssertEqual(radios.selectedIndex, 0, "wraps")
        harness.keys(.up)
        XCTAssertEqual(radios.selectedIndex, 2)
        harness.keys(.left)
        XCTAssertEqual(radios.selectedIndex, 1)
        XCTAssertEqual(changes, 4)
        harness.keys(.space)
        XCTAssertEqual(changes, 4, "Space on the chosen button changes nothing")
    }

    func testWithNothingChosenTabReachesTheFirstAndSpaceChoosesIt() async throws {
        let radios = group(nil)
        let harness = try ControlHarness(radios, size: size)
        defer { harness.tearDown() }
        var changes = 0
        radios.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === radios.items[0])
        harness.keys(.space)
        XCTAssertEqual(radios.selectedIndex, 0)
        XCTAssertEqual(changes, 1)
    }

    func testADisabledGroupTakesNoInput() async throws {
        let radios = group()
        radios.isEnabled = false
        let harness = try ControlHarness(radios, size: size)
        defer { harness.tearDown() }
        XCTAssertTrue(radios.items.allSatisfy { !$0.isEnabled })
        harness.keys(.tab, .down)
        XCTAssertNil(harness.host.focusedNode)
        harness.click(Point(x: 19, y: 10 + 30 + 12))
        XCTAssertEqual(radios.selectedIndex, 0)
        let tree = harness.host.accessibilityTree()
        let button = try XCTUnwrap(tree.root.first { $0.role == .radioButton && $0.label == "Medium" })
        XCTAssertFalse(harness.host.performAccessibilityAction(.press, onElement: button.id))
        XCTAssertEqual(radios.selectedIndex, 0)
    }

    func testOutOfRangeIndexesChooseNothingAndCodeSendsNoEvent() async throws {
        XCTAssertNil(RadioGroupNode(titles: ["A", "B"], selectedIndex: 5).selectedIndex)
        XCTAssertNil(RadioGroupNode(titles: [], selectedIndex: 0).selectedIndex, "an empty group")
        let radios = group()
        let harness = try ControlHarness(radios, size: size)
        defer { harness.tearDown() }
        var changes = 0
        radios.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        radios.selectedIndex = 3
        XCTAssertNil(radios.selectedIndex)
        radios.selectedIndex = -1
        XCTAssertNil(radios.selectedIndex)
        XCTAssertTrue(radios.items.allSatisfy { !$0.isSelected })
        let sendable = radios
        await Task.detached { sendable.selectedIndex = 2 }.value
        try harness.settle()
        XCTAssertEqual(radios.selectedIndex, 2)
        XCTAssertEqual(changes, 0)
        XCTAssertEqual(try harness.colour(12, 10 + 60 + 12), ThemeColors.standardLight[.accent])
    }

    func testAccessibility() async throws {
        let radios = group(1)
        let harness = try ControlHarness(radios, size: size)
        defer { harness.tearDown() }
        var tree = harness.host.accessibilityTree()
        let panel = try XCTUnwrap(tree.root.children.first)
        XCTAssertEqual(panel.role, .group)
        XCTAssertEqual(panel.role.atspiRoleName, "panel")
        XCTAssertEqual(panel.label, "Size")
        XCTAssertFalse(panel.states.contains(.focusable))
        XCTAssertEqual(panel.children.map(\.role), [.radioButton, .radioButton, .radioButton])
        XCTAssertEqual(panel.children.map(\.label), ["Small", "Medium", "Large"])
        XCTAssertEqual(panel.children.map { $0.states.contains(.checked) }, [false, true, false])
        XCTAssertTrue(panel.children.allSatisfy { $0.states.contains(.checkable) && $0.actions == [.press] })
        XCTAssertEqual(AccessibilityRole.radioButton.atspiRole, 44)
        XCTAssertEqual(AccessibilityRole.radioButton.atspiRoleName, "radio button")
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: panel.children[2].id))
        XCTAssertEqual(radios.selectedIndex, 2)
        tree = harness.host.accessibilityTree()
        XCTAssertEqual(tree.root.children[0].children.map { $0.states.contains(.checked) }, [false, false, true])
        XCTAssertEqual(tree.focusedID, panel.children[2].id, "the chosen button has the focus")
    }

    private func strip() throws -> Bitmap {
        try ControlStrip.render(rows: 1, cell: Size(width: 120, height: 104)) { _ in
            (RadioGroupNode(titles: ["Small", "Medium", "Large"], selectedIndex: 0, title: "Size"), Point(x: 19, y: 10 + 30 + 12))
        }
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 12, y: 22)), ThemeColors.standardLight[.accent], "the chosen circle")
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 19, y: 22)), ThemeColors.standardLight[.onAccent], "its dot")
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 19, y: 52)), ThemeColors.standardLight[.background], "an empty circle")
        GoldenImage.assertMatches(bitmap, named: "radio-group-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 12, y: 22)), ThemeColors.standardDark[.accent])
        GoldenImage.assertMatches(bitmap, named: "radio-group-dark", in: "NodeRuntimeTests")
    }
}
