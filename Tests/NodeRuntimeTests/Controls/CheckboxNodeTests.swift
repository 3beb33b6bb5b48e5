import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Check boxes: toggled by a click on the box or the title, or by Space, with `.valueChanged`; set
/// from another thread without an event; read as a check box; drawn in each state, light and dark.
@MainActor
final class CheckboxNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 160, height: 44)

    func testAClickOnTheTitleTogglesItAndSendsValueChanged() async throws {
        let box = CheckboxNode(title: "Wi-Fi")
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(box.frame.origin, Point(x: 10, y: 10))
        XCTAssertEqual(box.frame.height, 24)
        XCTAssertGreaterThan(box.frame.width, 18 + 8 + 20, "the box, the gap and the title")
        var events: [ControlEvents] = []
        box.addTarget(for: [.valueChanged, .primaryActionTriggered]) { control, happened in
            events.append(happened)
            XCTAssertEqual((control as? CheckboxNode)?.isChecked, events.count <= 2, "changed before the targets hear")
        }
        harness.click(Point(x: box.frame.maxX - 4, y: 22))
        XCTAssertTrue(box.isChecked)
        XCTAssertEqual(events, [.valueChanged, .primaryActionTriggered])
        harness.frame([.pointerMoved(Point(x: 150, y: 40))])
        try harness.settle()
        // The box spans x 10…28, y 13…31; the tick's corner is at (7.5, 12.5) in it.
        XCTAssertEqual(try harness.colour(19, 17), ThemeColors.standardLight[.accent], "the box is filled")
        XCTAssertEqual(try harness.colour(17, 25), ThemeColors.standardLight[.onAccent], "the tick's corner is white")
        harness.click(Point(x: 19, y: 22))
        XCTAssertFalse(box.isChecked)
        harness.frame([.pointerMoved(Point(x: 150, y: 40))])
        try harness.settle()
        XCTAssertEqual(try harness.colour(10 + 9, 22), ThemeColors.standardLight[.background], "off: an outline, nothing inside")
    }

    func testSpaceTogglesTheFocusedBoxAndMixedBecomesChecked() async throws {
        let box = CheckboxNode(title: "All")
        box.isMixed = true
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        var changes = 0
        box.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === box)
        harness.keys(.space)
        XCTAssertTrue(box.isChecked)
        XCTAssertFalse(box.isMixed)
        harness.keys(.space)
        XCTAssertFalse(box.isChecked)
        harness.keys(.enter)
        XCTAssertTrue(box.isChecked)
        XCTAssertEqual(changes, 3)
    }

    func testADisabledBoxTakesNoInputOrFocus() async throws {
        let box = CheckboxNode(title: "Locked")
        box.isEnabled = false
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        harness.keys(.tab, .space)
        XCTAssertNil(harness.host.focusedNode)
        harness.click(Point(x: 19, y: 22))
        XCTAssertFalse(box.isChecked)
        XCTAssertEqual(box.opacity, 0.5)
        let tree = harness.host.accessibilityTree()
        let element = try XCTUnwrap(tree.root.first { $0.role == .checkBox })
        XCTAssertTrue(element.states.contains(.disabled))
        XCTAssertFalse(harness.host.performAccessibilityAction(.press, onElement: element.id))
    }

    func testSetFromAnotherThreadWithoutAnEvent() async throws {
        let box = CheckboxNode()
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        var changes = 0
        box.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        let sendable = box
        await Task.detached { sendable.isChecked = true; sendable.title = "Later" }.value
        try harness.settle()
        XCTAssertEqual(try harness.colour(19, 17), ThemeColors.standardLight[.accent])
        XCTAssertEqual(changes, 0)
        XCTAssertEqual(box.title, "Later")
    }

    func testAccessibility() async throws {
        let box = CheckboxNode(title: "Bluetooth", isChecked: true)
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        var tree = harness.host.accessibilityTree()
        var element = try XCTUnwrap(tree.root.children.first)
        XCTAssertEqual(element.role, .checkBox)
        XCTAssertEqual(element.role.atspiRole, 7)
        XCTAssertEqual(element.role.atspiRoleName, "check box")
        XCTAssertEqual(element.label, "Bluetooth")
        XCTAssertTrue(element.states.isSuperset(of: [.checkable, .checked, .focusable]))
        XCTAssertEqual(element.actions, [.press])
        XCTAssertTrue(element.children.isEmpty, "the title is not read twice")
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: element.id))
        XCTAssertFalse(box.isChecked)
        box.isMixed = true
        tree = harness.host.accessibilityTree()
        element = try XCTUnwrap(tree.root.children.first)
        XCTAssertFalse(element.states.contains(.checked))
        XCTAssertEqual(element.value, "mixed")
    }

    func testAShownBoxFollowsTheAppearance() async throws {
        let box = CheckboxNode(title: "Dark", isChecked: true)
        let harness = try ControlHarness(box, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(try harness.colour(19, 17), ThemeColors.standardLight[.accent])
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        try harness.settle()
        XCTAssertEqual(try harness.colour(19, 17), ThemeColors.standardDark[.accent])
        Runtime.shared.setAppearance(Appearance(accentColor: Color(rgb: 0xE01B24)))
        try harness.settle()
        XCTAssertEqual(try harness.colour(19, 17), Color(rgb: 0xE01B24), "the desktop's accent colour")
    }

    private func strip() throws -> Bitmap {
        try ControlStrip.render(rows: 3, cell: Size(width: 110, height: 44)) { row in
            let box = CheckboxNode(title: "Option", isChecked: row == 1)
            box.isMixed = row == 2
            return (box, Point(x: 19, y: 22))
        }
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        // Row 1, the normal look: the accent fill; row 0's box is empty inside.
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 10 + 9, y: 44 + 22 - 5)), ThemeColors.standardLight[.accent])
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 10 + 9, y: 22)), ThemeColors.standardLight[.background])
        GoldenImage.assertMatches(bitmap, named: "checkbox-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 10 + 9, y: 44 + 22 - 5)), ThemeColors.standardDark[.accent])
        GoldenImage.assertMatches(bitmap, named: "checkbox-dark", in: "NodeRuntimeTests")
    }
}
