import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The slider, the progress bar and the search field in their states side by side, light and dark,
/// against goldens; and the colours that matter checked as numbers.
@MainActor
final class ControlPixelTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private func colors(_ scheme: Appearance.ColorScheme) -> ThemeColors {
        scheme == .dark ? .standardDark : .standardLight
    }

    // MARK: Sliders

    /// Seven 200×28 sliders 8 points apart from (10, 10): at 0, 50% and 100%, hovered at 30%, pressed
    /// at 70%, focused with the ring at 40%, disabled at 60%.
    private func renderSliders(_ scheme: Appearance.ColorScheme) throws -> (Bitmap, [SliderNode]) {
        Runtime.shared.setAppearance(Appearance(colorScheme: scheme))
        let sliders = [0, 0.5, 1, 0.3, 0.7, 0.4, 0.6].map { SliderNode(value: $0) }
        sliders[6].isEnabled = false
        let harness = try ControlsHarness(sliders, size: Size(width: 200, height: 28), windowSize: Size(width: 220, height: 264))
        defer { harness.tearDown() }
        sliders[3].pointerEntered()
        let pressed = harness.point(Point(x: 10 + 0.7 * 180, y: 14), in: sliders[4])
        harness.frame([.pointerMoved(pressed), .pointerDown(pressed, button: 1)])
        harness.host.focus(sliders[5])
        harness.host.showsFocusRing = true
        for _ in 0..<3 { harness.frame() }
        XCTAssertTrue(sliders[4].isHighlighted)
        XCTAssertEqual(sliders[4].value, 0.7, accuracy: 1e-9, "pressed on its thumb, it did not move")
        let bitmap = try harness.capture()
        harness.frame([.pointerUp(pressed, button: 1)])
        return (bitmap, sliders)
    }

    private func checkSliders(_ bitmap: Bitmap, _ sliders: [SliderNode], _ scheme: Appearance.ColorScheme) {
        let colors = colors(scheme)
        let half = sliders[1].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, half.minX + 40, half.midY), colors[.accent], "the fill left of the thumb")
        XCTAssertEqual(ControlsHarness.colour(bitmap, half.minX + 180, half.midY), colors[.separator], "the track right of it")
        XCTAssertEqual(ControlsHarness.colour(bitmap, half.minX + 180, half.minY + 4), colors[.background], "above the track")
        XCTAssertEqual(ControlsHarness.colour(bitmap, half.minX + 100, half.midY), colors[.onAccent], "the thumb's centre")
        XCTAssertEqual(ControlsHarness.colour(bitmap, half.minX + 100 + 8, half.midY), colors[.accent], "the thumb's ring")
        let zero = sliders[0].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, zero.minX + 40, zero.midY), colors[.separator], "no fill at 0")
        let full = sliders[2].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, full.minX + 150, full.midY), colors[.accent], "all fill at 100%")
        let focused = sliders[5].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, focused.minX - 2, focused.midY), Color(rgb: 0x3390EC), "the focus ring")
        let disabled = sliders[6].frame
        XCTAssertNotEqual(ControlsHarness.colour(bitmap, disabled.minX + 40, disabled.midY), colors[.accent], "disabled: faded")
        let hovered = sliders[3].frame
        let besideThumb = ControlsHarness.colour(bitmap, hovered.minX + 10 + 0.3 * 180, hovered.midY - 12)
        XCTAssertNotEqual(besideThumb, colors[.background], "the halo around a hovered thumb")
    }

    func testSlidersLight() async throws {
        let (bitmap, sliders) = try renderSliders(.light)
        checkSliders(bitmap, sliders, .light)
        GoldenImage.assertMatches(bitmap, named: "controls-sliders-light", in: "NodeRuntimeTests")
    }

    func testSlidersDark() async throws {
        let (bitmap, sliders) = try renderSliders(.dark)
        checkSliders(bitmap, sliders, .dark)
        GoldenImage.assertMatches(bitmap, named: "controls-sliders-dark", in: "NodeRuntimeTests")
    }

    // MARK: Progress bars

    /// A frame time at which the block is half way across: x 70…130 of a 200-point track.
    static let halfWayTime = 60.75

    /// Four 200×6 bars 8 points apart from (10, 10): at 0, 30% and 100%, and indeterminate at
    /// `halfWayTime` (or still stripes under reduced motion).
    private func renderBars(_ scheme: Appearance.ColorScheme, reducedMotion: Bool = false) throws -> (Bitmap, [ProgressIndicatorNode]) {
        Runtime.shared.setAppearance(Appearance(colorScheme: scheme, reducedMotion: reducedMotion))
        let bars = [0, 0.3, 1].map { ProgressIndicatorNode(progress: $0) } + [ProgressIndicatorNode(isIndeterminate: true)]
        bars[3].isHidden = !reducedMotion  // so the rest settles; shown for the frame captured
        let harness = try ControlsHarness(bars, size: Size(width: 200, height: 6), windowSize: Size(width: 220, height: 68))
        defer { harness.tearDown() }
        bars[3].isHidden = false
        harness.host.runFrame(time: Self.halfWayTime, events: [])
        harness.host.runFrame(time: Self.halfWayTime, events: [])
        XCTAssertEqual(bars[3].isAnimating, !reducedMotion)
        return (try harness.capture(), bars)
    }

    private func checkBars(_ bitmap: Bitmap, _ bars: [ProgressIndicatorNode], _ scheme: Appearance.ColorScheme) {
        let colors = colors(scheme)
        let zero = bars[0].frame, third = bars[1].frame, full = bars[2].frame, moving = bars[3].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, zero.minX + 20, zero.midY), colors[.separator], "no fill at 0")
        XCTAssertEqual(ControlsHarness.colour(bitmap, third.minX + 30, third.midY), colors[.accent], "30%: filled to x 60")
        XCTAssertEqual(ControlsHarness.colour(bitmap, third.minX + 100, third.midY), colors[.separator])
        XCTAssertEqual(ControlsHarness.colour(bitmap, full.minX + 190, full.midY), colors[.accent], "100%: filled")
        XCTAssertEqual(ControlsHarness.colour(bitmap, moving.minX + 100, moving.midY), colors[.accent], "the block at x 70…130")
        XCTAssertEqual(ControlsHarness.colour(bitmap, moving.minX + 30, moving.midY), colors[.separator])
        XCTAssertEqual(ControlsHarness.colour(bitmap, moving.minX + 170, moving.midY), colors[.separator])
    }

    func testProgressBarsLight() async throws {
        let (bitmap, bars) = try renderBars(.light)
        checkBars(bitmap, bars, .light)
        GoldenImage.assertMatches(bitmap, named: "controls-progress-light", in: "NodeRuntimeTests")
    }

    func testProgressBarsDark() async throws {
        let (bitmap, bars) = try renderBars(.dark)
        checkBars(bitmap, bars, .dark)
        GoldenImage.assertMatches(bitmap, named: "controls-progress-dark", in: "NodeRuntimeTests")
    }

    func testProgressBarsReducedMotion() async throws {
        let (bitmap, bars) = try renderBars(.light, reducedMotion: true)
        let accent = ThemeColors.standardLight[.accent]!
        let stripes = bars[3].frame
        // Every 12 points a 6-point band of accent, over a paler accent.
        let row = (0..<24).map { ControlsHarness.colour(bitmap, stripes.minX + Double($0), stripes.midY) }
        XCTAssertEqual(row.filter { $0 == accent }.count, 12, "half the pixels are the accent's bands")
        XCTAssertTrue(row.contains { $0 != accent && $0 != ThemeColors.standardLight[.separator] }, "the paler accent between")
        GoldenImage.assertMatches(bitmap, named: "controls-progress-reduced-motion", in: "NodeRuntimeTests")
    }

    // MARK: Search fields

    /// Three 240×36 fields 8 points apart from (10, 10): empty with its placeholder, with text and its
    /// clear button, and focused (empty, outlined, the host's ring around it).
    private func renderSearchFields(_ scheme: Appearance.ColorScheme) throws -> (Bitmap, [SearchFieldNode]) {
        Runtime.shared.setAppearance(Appearance(colorScheme: scheme))
        let fields = [SearchFieldNode(), SearchFieldNode(text: "kittens"), SearchFieldNode()]
        let harness = try ControlsHarness(fields, size: Size(width: 240, height: 36), windowSize: Size(width: 260, height: 144))
        defer { harness.tearDown() }
        harness.host.focus(fields[2].textField)
        harness.host.showsFocusRing = true
        try harness.settle()
        XCTAssertTrue(fields[2].textField.isCaretShown, "the caret shows solid after focusing")
        return (try harness.capture(), fields)
    }

    private func checkSearchFields(_ bitmap: Bitmap, _ fields: [SearchFieldNode], _ scheme: Appearance.ColorScheme) {
        let colors = colors(scheme)
        let empty = fields[0].frame, typed = fields[1].frame, focused = fields[2].frame
        XCTAssertEqual(ControlsHarness.colour(bitmap, empty.minX + 120, empty.minY + 3), colors[.fill], "the field's fill")
        XCTAssertEqual(ControlsHarness.colour(bitmap, empty.minX, empty.minY), colors[.background], "a rounded corner")
        XCTAssertEqual(ControlsHarness.colour(bitmap, empty.minX, empty.midY), colors[.fill], "no outline unfocused")
        let clear = fields[1].clearButton.frame.offsetBy(dx: typed.minX, dy: typed.minY)
        XCTAssertEqual(ControlsHarness.colour(bitmap, clear.midX, clear.midY + 6), colors[.secondaryLabel], "the clear disc")
        XCTAssertEqual(ControlsHarness.colour(bitmap, clear.midX, clear.midY), colors[.fill], "the × cut out of it")
        XCTAssertEqual(ControlsHarness.colour(bitmap, focused.minX, focused.midY), colors[.accent], "the focused outline")
        XCTAssertEqual(ControlsHarness.colour(bitmap, focused.minX - 2, focused.midY), Color(rgb: 0x3390EC),
                       "the host's ring around the whole field")
    }

    func testSearchFieldsLight() async throws {
        let (bitmap, fields) = try renderSearchFields(.light)
        checkSearchFields(bitmap, fields, .light)
        GoldenImage.assertMatches(bitmap, named: "controls-search-light", in: "NodeRuntimeTests")
    }

    func testSearchFieldsDark() async throws {
        let (bitmap, fields) = try renderSearchFields(.dark)
        checkSearchFields(bitmap, fields, .dark)
        GoldenImage.assertMatches(bitmap, named: "controls-search-dark", in: "NodeRuntimeTests")
    }
}
