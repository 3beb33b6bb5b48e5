import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Sliders: dragged by the thumb without a jump, jumped by a press on the track, stepped by keys and
/// by a screen reader, `.valueChanged` at every move or once at the end, checked against hostile
/// values, and left alone when disabled.
///
/// The slider is 200×28 at (10, 10): its thumb's centre runs from x 20 (the minimum) to x 200 (the
/// maximum), at y 24.
@MainActor
final class SliderNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    private func show(_ slider: SliderNode) throws -> ControlsHarness {
        try ControlsHarness([slider], size: Size(width: 200, height: 28), windowSize: Size(width: 220, height: 50))
    }

    /// The window's x of the thumb's centre at `fraction` of the range.
    private func x(_ fraction: Double) -> Double { 20 + 180 * fraction }

    /// Records the events `slider` sends, with its value when each came.
    private func record(_ slider: SliderNode) -> () -> [(ControlEvents, Double)] {
        var events: [(ControlEvents, Double)] = []
        slider.addTarget(for: [.valueChanged]) { control, happened in
            events.append((happened, (control as! SliderNode).value))
        }
        return { events }
    }

    func testDraggingTheThumbMovesItAsFarAsThePointerWithoutAJump() async throws {
        let slider = SliderNode(value: 0.5)
        let harness = try show(slider)
        defer { harness.tearDown() }
        XCTAssertEqual(slider.frame, Rect(x: 10, y: 10, width: 200, height: 28))
        XCTAssertEqual(slider.thumbNode.frame.midX + 10, x(0.5), "the thumb's centre at half the range")
        let events = record(slider)
        // Pressed 3 points right of the thumb's centre: the value stays.
        harness.frame([.pointerDown(Point(x: x(0.5) + 3, y: 24), button: 1)])
        XCTAssertEqual(slider.value, 0.5, "a press on the thumb does not move it")
        XCTAssertTrue(slider.isHighlighted)
        XCTAssertEqual(events().count, 0)
        harness.frame([.pointerMoved(Point(x: x(0.7) + 3, y: 24))])
        XCTAssertEqual(slider.value, 0.7, accuracy: 1e-9, "the thumb keeps where it was grabbed")
        // Far below the slider, the drag still follows x.
        harness.frame([.pointerMoved(Point(x: x(0.8) + 3, y: 200))])
        XCTAssertEqual(slider.value, 0.8, accuracy: 1e-9)
        harness.frame([.pointerUp(Point(x: x(0.8) + 3, y: 200), button: 1)])
        XCTAssertFalse(slider.isHighlighted)
        XCTAssertEqual(events().map(\.0), [.valueChanged, .valueChanged], "one per move that changed it")
        XCTAssertEqual(events().last?.1 ?? 0, 0.8, accuracy: 1e-9, "the value has changed when the targets hear of it")
        try harness.settle()
        XCTAssertEqual(slider.thumbNode.frame.midX + 10, x(0.8), accuracy: 1e-9)
        XCTAssertEqual(slider.fillNode.frame.maxX + 10, x(0.8), accuracy: 1e-9, "the fill reaches the thumb's centre")
        XCTAssertFalse(harness.host.needsFrame, "a slider at rest runs no frames")
    }

    func testAPressOnTheTrackJumpsThereAndGoesOnAsADrag() async throws {
        let slider = SliderNode(value: 0.5, minimumValue: 0, maximumValue: 100)
        let harness = try show(slider)
        defer { harness.tearDown() }
        let events = record(slider)
        harness.frame([.pointerDown(Point(x: x(0.2), y: 24), button: 1)])
        XCTAssertEqual(slider.value, 20, accuracy: 1e-9, "the thumb jumps under the pointer")
        harness.frame([.pointerMoved(Point(x: x(0.9), y: 24))])
        XCTAssertEqual(slider.value, 90, accuracy: 1e-9)
        harness.frame([.pointerMoved(Point(x: 400, y: 24))])
        XCTAssertEqual(slider.value, 100, "clamped at the end")
        harness.frame([.pointerMoved(Point(x: -50, y: 24))])
        XCTAssertEqual(slider.value, 0, "clamped at the start")
        harness.frame([.pointerUp(Point(x: -50, y: 24), button: 1)])
        XCTAssertEqual(events().count, 4)
    }

    func testASliderThatIsNotContinuousSendsOnceWhenThePressEnds() async throws {
        let slider = SliderNode(value: 0)
        slider.isContinuous = false
        let harness = try show(slider)
        defer { harness.tearDown() }
        let events = record(slider)
        harness.frame([.pointerDown(Point(x: x(0.3), y: 24), button: 1)])
        harness.frame([.pointerMoved(Point(x: x(0.6), y: 24))])
        XCTAssertEqual(slider.value, 0.6, accuracy: 1e-9, "the value follows the drag")
        XCTAssertEqual(events().count, 0, "nothing while dragging")
        harness.frame([.pointerUp(Point(x: x(0.6), y: 24), button: 1)])
        XCTAssertEqual(events().count, 1)
        XCTAssertEqual(events().first?.1 ?? 0, 0.6, accuracy: 1e-9)
        // A press that ends where it began changes nothing and sends nothing.
        harness.frame([.pointerDown(Point(x: x(0.6), y: 24), button: 1)])
        harness.frame([.pointerUp(Point(x: x(0.6), y: 24), button: 1)])
        XCTAssertEqual(events().count, 1)
    }

    func testAStepSnapsTheDragAndTheKeys() async throws {
        let slider = SliderNode(value: 0, minimumValue: 0, maximumValue: 1, stepValue: 0.25)
        let harness = try show(slider)
        defer { harness.tearDown() }
        harness.frame([.pointerDown(Point(x: x(0.33), y: 24), button: 1)])
        XCTAssertEqual(slider.value, 0.25)
        harness.frame([.pointerMoved(Point(x: x(0.4), y: 24))])
        XCTAssertEqual(slider.value, 0.5)
        harness.frame([.pointerUp(Point(x: x(0.4), y: 24), button: 1)])
        harness.host.focus(slider)
        harness.key(.right)
        XCTAssertEqual(slider.value, 0.75, "a key moves by the step")
        harness.key(.pageDown)
        XCTAssertEqual(slider.value, 0.5, "Page Down by 10% of the range, at least a step")
    }

    func testKeysStepPageAndGoToTheEnds() async throws {
        let slider = SliderNode(value: 100, minimumValue: 0, maximumValue: 200)
        let harness = try show(slider)
        defer { harness.tearDown() }
        let events = record(slider)
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === slider, "Tab reaches the slider")
        harness.key(.right)
        XCTAssertEqual(slider.value, 102, "1% of the range without a step")
        harness.key(.up)
        XCTAssertEqual(slider.value, 104)
        harness.key(.left)
        harness.key(.down)
        XCTAssertEqual(slider.value, 100)
        harness.key(.pageUp)
        XCTAssertEqual(slider.value, 120, "10% of the range")
        harness.key(.pageDown)
        XCTAssertEqual(slider.value, 100)
        harness.key(.end)
        XCTAssertEqual(slider.value, 200)
        harness.key(.right)
        XCTAssertEqual(slider.value, 200, "nothing past the end")
        harness.key(.home)
        XCTAssertEqual(slider.value, 0)
        XCTAssertEqual(events().count, 8, "one .valueChanged per key that changed the value")
        harness.key(.right, [.control])
        XCTAssertEqual(slider.value, 0, "Ctrl+Right is not the slider's")
    }

    func testADisabledSliderIgnoresPressesKeysAndFocus() async throws {
        let slider = SliderNode(value: 0.5)
        slider.isEnabled = false
        let harness = try show(slider)
        defer { harness.tearDown() }
        let events = record(slider)
        harness.frame([.pointerDown(Point(x: x(0.1), y: 24), button: 1)])
        harness.frame([.pointerMoved(Point(x: x(0.9), y: 24))])
        harness.frame([.pointerUp(Point(x: x(0.9), y: 24), button: 1)])
        XCTAssertEqual(slider.value, 0.5)
        harness.key(.tab)
        XCTAssertNil(harness.host.focusedNode, "a disabled slider takes no focus")
        XCTAssertFalse(slider.keyDown(.right, modifiers: []))
        XCTAssertEqual(slider.value, 0.5)
        XCTAssertFalse(slider.performAccessibilityAction(.increment))
        XCTAssertEqual(events().count, 0)
        XCTAssertEqual(slider.opacity, 0.45, "shown faded")
    }

    func testAccessibilityReadsTheValueAndRangeAndStepsIt() async throws {
        let slider = SliderNode(value: 0.5)
        slider.accessibilityLabel = "Volume"
        let harness = try show(slider)
        defer { harness.tearDown() }
        let events = record(slider)
        let element = try XCTUnwrap(harness.element(role: .slider, of: slider))
        XCTAssertEqual(element.role.atspiRole, 51)
        XCTAssertEqual(element.label, "Volume")
        XCTAssertEqual(element.value, "0.5")
        XCTAssertEqual(element.valueRange, AccessibilityValueRange(minimum: 0, maximum: 1, current: 0.5, step: 0.01))
        XCTAssertEqual(element.actions, [.increment, .decrement])
        XCTAssertTrue(element.states.contains(.focusable))
        XCTAssertTrue(harness.host.performAccessibilityAction(.increment, onElement: element.id))
        XCTAssertEqual(slider.value, 0.51, accuracy: 1e-9)
        XCTAssertTrue(harness.host.performAccessibilityAction(.decrement, onElement: element.id))
        XCTAssertTrue(harness.host.performAccessibilityAction(.decrement, onElement: element.id))
        XCTAssertEqual(slider.value, 0.49, accuracy: 1e-9)
        XCTAssertEqual(events().count, 3)
        slider.stepValue = 5
        slider.maximumValue = 100
        slider.value = 40
        harness.frame()
        let stepped = try XCTUnwrap(harness.element(role: .slider, of: slider))
        XCTAssertEqual(stepped.value, "40")
        XCTAssertEqual(stepped.valueRange, AccessibilityValueRange(minimum: 0, maximum: 100, current: 40, step: 5))
        slider.isEnabled = false
        harness.frame()
        let disabled = try XCTUnwrap(harness.element(role: .slider, of: slider))
        XCTAssertTrue(disabled.states.contains(.disabled))
        XCTAssertEqual(disabled.actions, [])
    }

    func testHostileValuesAreRejectedOrClamped() {
        let slider = SliderNode(value: 0.5)
        slider.value = .nan
        XCTAssertEqual(slider.value, 0.5, "NaN is ignored")
        slider.value = .infinity
        XCTAssertEqual(slider.value, 1, "+∞ is clamped to the maximum")
        slider.value = -.infinity
        XCTAssertEqual(slider.value, 0, "−∞ to the minimum")
        slider.value = 7
        XCTAssertEqual(slider.value, 1)

        slider.minimumValue = .nan
        slider.maximumValue = .infinity
        slider.minimumValue = -.infinity
        XCTAssertEqual(slider.minimumValue, 0, "a bound that is not finite is ignored")
        XCTAssertEqual(slider.maximumValue, 1)

        slider.minimumValue = 5
        XCTAssertEqual(slider.maximumValue, 5, "a minimum above the maximum raises it")
        XCTAssertEqual(slider.value, 5, "the value is clamped into the new range")
        slider.maximumValue = -3
        XCTAssertEqual(slider.minimumValue, -3, "a maximum below the minimum lowers it")
        XCTAssertEqual(slider.value, -3)
        slider.maximumValue = 1e308
        slider.minimumValue = -1e308
        XCTAssertEqual(slider.minimumValue, -3, "a range whose span overflows is ignored")
        slider.value = 10
        XCTAssertEqual(slider.value, 10)

        for step in [0, -1, Double.nan, .infinity] {
            slider.stepValue = step
            XCTAssertNil(slider.stepValue, "a step of \(step) is no step")
        }

        let grid = SliderNode(value: 0, minimumValue: 0, maximumValue: 10, stepValue: 3)
        grid.value = 8
        XCTAssertEqual(grid.value, 9, "snapped to the nearest step")
        grid.value = 9.8
        XCTAssertEqual(grid.value, 10, "the maximum is a stop though the steps miss it")
        grid.value = 4.4
        XCTAssertEqual(grid.value, 3)

        let fallback = SliderNode(value: .nan, minimumValue: .nan, maximumValue: .infinity, stepValue: .nan)
        XCTAssertEqual(fallback.minimumValue, 0)
        XCTAssertEqual(fallback.maximumValue, 1)
        XCTAssertEqual(fallback.value, 0, "NaN starts at the minimum")
        XCTAssertNil(fallback.stepValue)
        let reversed = SliderNode(value: 3, minimumValue: 4, maximumValue: 2)
        XCTAssertEqual(reversed.minimumValue, 4)
        XCTAssertEqual(reversed.maximumValue, 4, "a reversed range collapses to its minimum")
        XCTAssertEqual(reversed.value, 4)
        XCTAssertEqual(SliderNode.format(0.00001), "0", "the accessible value has up to 3 decimals")
        XCTAssertEqual(SliderNode.format(-0.0001), "0")
        XCTAssertEqual(SliderNode.format(2.5), "2.5")
        XCTAssertEqual(SliderNode.format(-40), "-40")
        XCTAssertEqual(SliderNode.format(1e20), "100000000000000000000")
        let empty = SliderNode(value: 4, minimumValue: 4, maximumValue: 4)
        XCTAssertEqual(empty.value, 4)
        XCTAssertEqual(empty.accessibilityDefaults().valueRange?.step, 0)
    }
}
