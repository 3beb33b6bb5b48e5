import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Steppers: − and + step the value within its range and are disabled at the ends; the keys step by
/// one or ten steps or go to the ends; values that are not numbers are refused; read as a spin button
/// with its value range; drawn in each state.
@MainActor
final class StepperNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 160, height: 60)
    /// At (10, 10): − spans x 10…42, + spans x 90…122 (48 points for the value between).
    private let minus = Point(x: 26, y: 26), plus = Point(x: 106, y: 26)

    func testTheButtonsStepAndAreDisabledAtTheEnds() async throws {
        let stepper = StepperNode(value: 8, minimumValue: 0, maximumValue: 10, stepValue: 1)
        let harness = try ControlHarness(stepper, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(stepper.frame, Rect(x: 10, y: 10, width: 112, height: 32))
        var values: [Double] = []
        stepper.addTarget(for: .valueChanged) { control, _ in values.append((control as! StepperNode).value) }
        harness.click(plus)
        harness.click(plus)
        harness.click(plus)
        XCTAssertEqual(stepper.value, 10)
        XCTAssertEqual(values, [9, 10], "no event at the end")
        harness.click(minus)
        XCTAssertEqual(stepper.value, 9)
        harness.click(Point(x: 66, y: 26))
        XCTAssertEqual(stepper.value, 9, "a press on the value steps nothing")
        XCTAssertEqual(values, [9, 10, 9])
        XCTAssertEqual(stepper.valueNode.attributedText.string, "9")
        // At the end, the + glyph is dimmed; − is not.
        stepper.value = 10
        harness.frame([.pointerMoved(Point(x: 150, y: 55))])
        try harness.settle()
        let label = ThemeColors.standardLight[.label]!
        XCTAssertEqual(try harness.colour(minus.x, minus.y), label, "− in the label colour")
        let dim = try harness.colour(plus.x, plus.y)
        XCTAssertNotEqual(dim, label)
        XCTAssertGreaterThan(Int(dim.red), 0x80, "+ dimmed at the maximum")
        XCTAssertEqual(try harness.colour(plus.x + 10, plus.y), ThemeColors.standardLight[.fill], "the field's fill")
    }

    func testAPressReleasedOutsideStepsNothingAndIsForgotten() async throws {
        let stepper = StepperNode(value: 5, minimumValue: 0, maximumValue: 10)
        let harness = try ControlHarness(stepper, size: Size(width: 240, height: 120))
        defer { harness.tearDown() }
        harness.frame([.pointerMoved(plus), .pointerDown(plus, button: 1)])
        harness.frame([.pointerMoved(Point(x: 230, y: 110)), .pointerUp(Point(x: 230, y: 110), button: 1)])
        XCTAssertEqual(stepper.value, 5)
        let element = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertFalse(harness.host.performAccessibilityAction(.press, onElement: element.id) && stepper.value != 5,
                       "a later press does not step by the forgotten button")
        XCTAssertEqual(stepper.value, 5)
        stepper.isEnabled = false
        try harness.settle()
        harness.click(plus)
        XCTAssertEqual(stepper.value, 5, "disabled")
    }

    func testKeysStepPageAndGoToTheEnds() async throws {
        let stepper = StepperNode(value: 50, minimumValue: 0, maximumValue: 100, stepValue: 2)
        let harness = try ControlHarness(stepper, size: size)
        defer { harness.tearDown() }
        var changes = 0
        stepper.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === stepper)
        harness.keys(.up)
        XCTAssertEqual(stepper.value, 52)
        harness.keys(.down, .down)
        XCTAssertEqual(stepper.value, 48)
        harness.keys(.pageUp)
        XCTAssertEqual(stepper.value, 68)
        harness.keys(.pageDown, .pageDown, .pageDown, .pageDown)
        XCTAssertEqual(stepper.value, 0, "clamped")
        harness.keys(.down)
        XCTAssertEqual(stepper.value, 0)
        harness.keys(.end)
        XCTAssertEqual(stepper.value, 100)
        harness.keys(.home)
        XCTAssertEqual(stepper.value, 0)
        harness.keys(.space, .enter)
        XCTAssertEqual(stepper.value, 0, "Space and Enter step nothing")
        XCTAssertEqual(changes, 10, "each step that moved the value, no more")
        stepper.isEnabled = false
        try harness.settle()
        harness.keys(.up)
        XCTAssertEqual(stepper.value, 0, "disabled")
        XCTAssertNil(harness.host.focusedNode, "a disabled stepper gives up the focus")
    }

    func testHostileValuesAreRefusedOrBroughtIntoRange() async throws {
        let stepper = StepperNode(value: 5, minimumValue: 0, maximumValue: 10, stepValue: 1)
        stepper.value = .nan
        XCTAssertEqual(stepper.value, 5)
        stepper.value = .infinity
        XCTAssertEqual(stepper.value, 5)
        stepper.value = 50
        XCTAssertEqual(stepper.value, 10, "brought into the range")
        stepper.stepValue = .nan
        stepper.stepValue = -.infinity
        stepper.stepValue = 0
        stepper.stepValue = -2
        XCTAssertEqual(stepper.stepValue, 1)
        stepper.minimumValue = -.infinity
        stepper.maximumValue = .nan
        XCTAssertEqual(stepper.minimumValue, 0)
        XCTAssertEqual(stepper.maximumValue, 10)
        stepper.minimumValue = 20
        XCTAssertEqual(stepper.maximumValue, 20, "a minimum above the maximum moves it")
        XCTAssertEqual(stepper.value, 20)
        stepper.maximumValue = -5
        XCTAssertEqual(stepper.minimumValue, -5, "a maximum below the minimum moves it")
        XCTAssertEqual(stepper.value, -5)
        let odd = StepperNode(value: .nan, minimumValue: .nan, maximumValue: -.infinity, stepValue: .infinity)
        XCTAssertEqual([odd.value, odd.minimumValue, odd.maximumValue, odd.stepValue], [0, 0, 100, 1], "the defaults stand")
        let inverted = StepperNode(value: 3, minimumValue: 10, maximumValue: 2)
        XCTAssertEqual([inverted.minimumValue, inverted.maximumValue, inverted.value], [2, 2, 2])
        let fractional = StepperNode(value: 0.5, minimumValue: 0, maximumValue: 1, stepValue: 0.1)
        XCTAssertEqual(fractional.formattedValue, "0.5")
        fractional.value = 0.30000000000000004
        XCTAssertEqual(fractional.formattedValue, "0.3")
        XCTAssertEqual(StepperNode(value: -0.001, minimumValue: -1, maximumValue: 1).formattedValue, "0", "no -0")
    }

    func testAccessibility() async throws {
        let stepper = StepperNode(value: 9, minimumValue: 0, maximumValue: 10, stepValue: 1)
        stepper.accessibilityLabel = "Copies"
        let harness = try ControlHarness(stepper, size: size)
        defer { harness.tearDown() }
        var element = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(element.role, .spinButton)
        XCTAssertEqual(element.role.atspiRole, 52)
        XCTAssertEqual(element.role.atspiRoleName, "spin button")
        XCTAssertEqual(element.label, "Copies")
        XCTAssertEqual(element.value, "9")
        XCTAssertEqual(element.valueRange, AccessibilityValueRange(minimum: 0, maximum: 10, current: 9, step: 1))
        XCTAssertEqual(element.actions, [.increment, .decrement])
        XCTAssertTrue(element.children.isEmpty, "the value is not read as text of its own")
        var changes = 0
        stepper.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        XCTAssertTrue(harness.host.performAccessibilityAction(.increment, onElement: element.id))
        XCTAssertFalse(harness.host.performAccessibilityAction(.increment, onElement: element.id), "at the maximum")
        XCTAssertTrue(harness.host.performAccessibilityAction(.decrement, onElement: element.id))
        XCTAssertEqual(changes, 2)
        element = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(element.value, "9")
        XCTAssertEqual(element.valueRange?.current, 9)
        stepper.isEnabled = false
        try harness.settle()
        element = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertTrue(element.states.contains(.disabled))
        XCTAssertFalse(harness.host.performAccessibilityAction(.decrement, onElement: element.id))
    }

    private func strip() throws -> Bitmap {
        try ControlStrip.render(rows: 2, cell: Size(width: 132, height: 52)) { row in
            (StepperNode(value: row == 0 ? 5 : 10, minimumValue: 0, maximumValue: 10), Point(x: 26, y: 26))
        }
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        let pressed = Color(premultipliedARGB: bitmap.pixel(x: 2 * 132 + 14, y: 26))
        XCTAssertNotEqual(pressed, ThemeColors.standardLight[.fill], "the pressed − is shaded")
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 26)), ThemeColors.standardLight[.fill])
        GoldenImage.assertMatches(bitmap, named: "stepper-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 26)), ThemeColors.standardDark[.fill])
        GoldenImage.assertMatches(bitmap, named: "stepper-dark", in: "NodeRuntimeTests")
    }
}
