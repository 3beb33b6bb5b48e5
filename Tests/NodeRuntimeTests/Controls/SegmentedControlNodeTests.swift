import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Segmented controls: a click chooses a segment, Left and Right move the choice, one Tab stop, read
/// as a panel of radio buttons, out-of-range indexes choose nothing; drawn in each state.
@MainActor
final class SegmentedControlNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 260, height: 100)
    private func control(_ selected: Int? = 0) -> SegmentedControlNode {
        SegmentedControlNode(titles: ["Day", "Week", "Month"], selectedIndex: selected, title: "View")
    }

    func testSegmentsShareTheWidthAndAClickChooses() async throws {
        let segments = control()
        let harness = try ControlHarness(segments, size: size)
        defer { harness.tearDown() }
        let widths = segments.items.map(\.frame.width)
        XCTAssertEqual(Set(widths).count, 1, "equal widths: \(widths)")
        XCTAssertEqual(segments.frame.height, 32)
        var changes = 0
        segments.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        let third = segments.items[2].frame
        harness.click(Point(x: 10 + third.midX, y: 26))
        XCTAssertEqual(segments.selectedIndex, 2)
        XCTAssertEqual(changes, 1)
        harness.frame([.pointerMoved(Point(x: 250, y: 90))])
        try harness.settle()
        XCTAssertEqual(try harness.colour(10 + third.midX, 14), ThemeColors.standardLight[.accent], "the chosen segment")
        XCTAssertEqual(try harness.colour(10 + segments.items[0].frame.minX + 4, 26), ThemeColors.standardLight[.fill],
                       "a segment not chosen")
    }

    func testLeftAndRightMoveTheChoiceUpAndDownDoNot() async throws {
        let segments = control(0)
        let after = CheckboxNode(title: "After")
        let harness = try ControlHarness(ControlStackNode([segments, after]), size: size)
        defer { harness.tearDown() }
        var changes = 0
        segments.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === segments.items[0])
        harness.keys(.right, .right)
        XCTAssertEqual(segments.selectedIndex, 2)
        XCTAssertTrue(harness.host.focusedNode === segments.items[2])
        harness.keys(.right)
        XCTAssertEqual(segments.selectedIndex, 0, "wraps")
        harness.keys(.left)
        XCTAssertEqual(segments.selectedIndex, 2)
        harness.keys(.down, .up)
        XCTAssertEqual(segments.selectedIndex, 2)
        XCTAssertEqual(changes, 4)
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after, "one stop")
        segments.isEnabled = false
        try harness.settle()
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after, "a disabled control is no stop")
        harness.click(Point(x: 10 + segments.items[0].frame.midX, y: 26))
        XCTAssertEqual(segments.selectedIndex, 2)
    }

    func testAccessibilityAndOutOfRangeIndexes() async throws {
        let segments = control(1)
        let harness = try ControlHarness(segments, size: size)
        defer { harness.tearDown() }
        let panel = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(panel.role, .group)
        XCTAssertEqual(panel.label, "View")
        XCTAssertEqual(panel.children.map(\.role), [.radioButton, .radioButton, .radioButton])
        XCTAssertEqual(panel.children.map(\.label), ["Day", "Week", "Month"])
        XCTAssertEqual(panel.children.map { $0.states.contains(.checked) }, [false, true, false])
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: panel.children[0].id))
        XCTAssertEqual(segments.selectedIndex, 0)
        segments.selectedIndex = 9
        XCTAssertNil(segments.selectedIndex)
        segments.selectedIndex = Int.min
        XCTAssertNil(segments.selectedIndex)
        XCTAssertNil(SegmentedControlNode(titles: ["A"], selectedIndex: 1).selectedIndex)
        segments.title = "Period"
        let none = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertFalse(none.children.contains { $0.states.contains(.checked) })
        XCTAssertEqual(none.label, "Period")
        // No segments at all: nothing to draw, choose or focus.
        let empty = SegmentedControlNode(titles: [], selectedIndex: 0)
        XCTAssertNil(empty.selectedIndex)
        let emptyHarness = try ControlHarness(empty, size: size)
        defer { emptyHarness.tearDown() }
        XCTAssertEqual(empty.frame.size, Size(width: 0, height: 32))
        emptyHarness.keys(.tab, .right)
        XCTAssertNil(emptyHarness.host.focusedNode)
    }

    private func strip() throws -> Bitmap {
        try ControlStrip.render(rows: 1, cell: Size(width: 250, height: 52)) { _ in
            let segments = SegmentedControlNode(titles: ["Day", "Week", "Month"], selectedIndex: 0, title: "View")
            return (segments, Point(x: 10 + 90, y: 26))
        }
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 14)), ThemeColors.standardLight[.accent], "the chosen segment")
        GoldenImage.assertMatches(bitmap, named: "segmented-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 14)), ThemeColors.standardDark[.accent])
        GoldenImage.assertMatches(bitmap, named: "segmented-dark", in: "NodeRuntimeTests")
    }
}
