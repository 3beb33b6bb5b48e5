import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A keystroke reaches the screen in the frame that takes it: that frame lays the tree out itself
/// (within `NodeHost.typingLayoutBudgetMilliseconds`, though the host measures other layouts in the
/// background) and draws the field's lines on the UI thread (`EditableTextNode.drawsLinesOnUIThread`),
/// so the layers it hands to the compositor already hold the typed text. With the lines on a worker,
/// or a layout over the budget, the text shows a frame or more later.
@MainActor
final class TypingLatencyTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// The identity of the bitmap the field's lines show now.
    private func linesContents(_ field: EditableTextNode) -> BitmapIdentity? {
        field.textNode.layer.contents?.identity
    }

    /// Focuses the field and lets everything settle; returns the harness.
    private func focused(configure: (EditableTextNode) -> Void = { _ in }) -> FieldHarness {
        let harness = FieldHarness(text: "Hello", configure: configure)
        // What is tested is what a frame within the budget does, not how long a layout takes (a
        // benchmark's question): a budget no layout reaches, also under ThreadSanitizer's slowness.
        harness.host.typingLayoutBudgetMilliseconds = 1_000
        harness.click()
        XCTAssertTrue(harness.host.focusedNode === harness.field)
        return harness
    }

    func testAKeystrokeIsDrawnInTheFrameThatTakesIt() async {
        let harness = focused()
        defer { harness.tearDown() }
        XCTAssertTrue(harness.field.drawsLinesOnUIThread, "the default")
        XCTAssertTrue(harness.host.measuresLayoutInBackground)
        for letter in ["!", "?", "x"] {
            let before = linesContents(harness.field)
            harness.frame([.textInput(letter)])
            XCTAssertNotEqual(linesContents(harness.field), before, "'\(letter)' drawn in the frame that took it")
            XCTAssertEqual(harness.field.textNode.layout?.text.string, harness.field.text, "the lines drawn hold the text typed")
        }
    }

    func testWithTheLinesOnAWorkerTheKeystrokeShowsLater() async {
        let harness = focused { $0.drawsLinesOnUIThread = false }
        defer { harness.tearDown() }
        let before = linesContents(harness.field)
        harness.frame([.textInput("!")])
        XCTAssertEqual(linesContents(harness.field), before, "drawn on a worker: not yet in this frame")
        harness.send([])
        XCTAssertNotEqual(linesContents(harness.field), before, "shown once the worker's draw is applied")
    }

    /// A frame's layout over the budget sends the next second's typing to the background layout.
    func testALayoutOverTheBudgetSendsTypingToTheBackground() async {
        let harness = focused()
        defer { harness.tearDown() }
        harness.host.typingLayoutBudgetMilliseconds = 1e-9  // every layout is over it
        var before = linesContents(harness.field)
        harness.frame([.textInput("a")])
        XCTAssertNotEqual(linesContents(harness.field), before, "laid out in the frame; found over the budget")
        harness.send([])
        before = linesContents(harness.field)
        harness.frame([.textInput("b")])
        XCTAssertEqual(linesContents(harness.field), before, "measured in the background now: shown later")
        harness.send([])
        XCTAssertNotEqual(linesContents(harness.field), before)
        XCTAssertEqual(harness.field.text, "abHello", "typed at the caret, where the click put it")
    }
}
