import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Progress bars: the fill follows `progress`, clamped; the indeterminate block moves with the frame
/// time only while the bar is shown, and an app whose bar is hidden, removed, determinate or under
/// reduced motion runs no frames; screen readers read the percentage, or busy.
@MainActor
final class ProgressIndicatorNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private func show(_ bar: ProgressIndicatorNode) throws -> ControlsHarness {
        try ControlsHarness([bar], size: Size(width: 200, height: 6), windowSize: Size(width: 220, height: 30))
    }

    func testTheFillFollowsTheProgress() async throws {
        let bar = ProgressIndicatorNode(progress: 0.3)
        let harness = try show(bar)
        defer { harness.tearDown() }
        XCTAssertEqual(bar.fillNode.frame, Rect(x: 0, y: 0, width: 60, height: 6))
        bar.progress = 1
        try harness.settle()
        XCTAssertEqual(bar.fillNode.frame.width, 200)
        bar.progress = 0
        try harness.settle()
        XCTAssertEqual(bar.fillNode.frame.width, 0)
        XCTAssertFalse(harness.host.needsFrame, "a determinate bar at rest runs no frames")
        XCTAssertTrue(bar.isSettled)
    }

    func testTheIndeterminateBlockMovesWithTheFrameTimeWhileVisible() async throws {
        let bar = ProgressIndicatorNode(isIndeterminate: true)
        bar.isHidden = true
        let harness = try show(bar)
        defer { harness.tearDown() }
        bar.isHidden = false
        XCTAssertTrue(bar.isAnimating)
        XCTAssertTrue(harness.host.needsFrame, "a visible indeterminate bar asks for frames")
        XCTAssertTrue(harness.host.movesByItself)
        XCTAssertThrowsError(try harness.host.settle(timeout: 0.2) { harness.frame() }, "it never settles while it moves")
        // Two frames in one period: 0.3 s and 0.55 s into it.
        let start = (harness.time / ProgressIndicatorNode.period).rounded(.up) * ProgressIndicatorNode.period + 0.3
        let track = Rect(x: 0, y: 0, width: 200, height: 6)
        harness.host.runFrame(time: start, events: [])
        let first = bar.fillNode.frame
        XCTAssertEqual(first, ProgressIndicatorNode.blockFrame(at: start, in: track))
        harness.host.runFrame(time: start + 0.25, events: [])
        let second = bar.fillNode.frame
        XCTAssertEqual(second, ProgressIndicatorNode.blockFrame(at: start + 0.25, in: track))
        XCTAssertGreaterThan(second.minX, first.minX, "the block moves right")
        XCTAssertTrue(harness.host.needsFrame)
    }

    func testTheBlocksPlaceIsAFunctionOfTime() {
        let track = Rect(x: 0, y: 0, width: 200, height: 6)
        XCTAssertEqual(ProgressIndicatorNode.blockFrame(at: 0, in: track), Rect(x: -60, y: 0, width: 60, height: 6),
                       "it enters from the left")
        XCTAssertEqual(ProgressIndicatorNode.blockFrame(at: 0.75, in: track).minX, 70, "half way: (-60 + 0.5 × 260)")
        XCTAssertEqual(ProgressIndicatorNode.blockFrame(at: 1.5, in: track), ProgressIndicatorNode.blockFrame(at: 0, in: track),
                       "it starts again after a period")
        XCTAssertEqual(ProgressIndicatorNode.blockFrame(at: .nan, in: track), ProgressIndicatorNode.blockFrame(at: 0, in: track))
        XCTAssertEqual(ProgressIndicatorNode.blockFrame(at: -0.75, in: track).minX, 70, "times before zero wrap too")
    }

    func testHiddenRemovedOrDeterminateItRunsNoFrames() async throws {
        let bar = ProgressIndicatorNode(isIndeterminate: true)
        bar.isHidden = true
        let harness = try show(bar)
        defer { harness.tearDown() }
        XCTAssertFalse(bar.isAnimating)
        XCTAssertFalse(harness.host.needsFrame, "hidden: settled, at rest")

        bar.isHidden = false
        harness.frame()
        XCTAssertTrue(harness.host.needsFrame)
        harness.root.isHidden = true
        try harness.settle()
        XCTAssertFalse(harness.host.needsFrame, "an ancestor hidden: at rest")
        harness.root.isHidden = false
        harness.frame()
        XCTAssertTrue(harness.host.needsFrame)

        bar.isIndeterminate = false
        try harness.settle()
        XCTAssertFalse(harness.host.needsFrame, "determinate: at rest")
        bar.isIndeterminate = true
        harness.frame()
        XCTAssertTrue(harness.host.needsFrame)

        harness.host.setRootNode(Node())
        try harness.settle()
        XCTAssertFalse(bar.isAnimating)
        XCTAssertFalse(harness.host.needsFrame, "removed from the window: at rest")
        XCTAssertFalse(harness.host.frameParticipants.contains { $0 === bar }, "it left the host's frames")
    }

    func testReducedMotionShowsStillStripesAndRunsNoFrames() async throws {
        Runtime.shared.setAppearance(Appearance(reducedMotion: true))
        let bar = ProgressIndicatorNode(isIndeterminate: true)
        let harness = try show(bar)
        defer { harness.tearDown() }
        XCTAssertFalse(bar.isAnimating)
        XCTAssertFalse(harness.host.needsFrame, "still stripes need no frames")
        XCTAssertFalse(bar.stripesNode.isHidden)
        XCTAssertTrue(bar.fillNode.isHidden)
        Runtime.shared.setAppearance(.standard)
        harness.frame()
        XCTAssertTrue(bar.stripesNode.isHidden, "motion back: the block again")
        XCTAssertFalse(bar.fillNode.isHidden)
        XCTAssertTrue(harness.host.needsFrame)
    }

    func testAccessibilityReadsThePercentageOrBusy() async throws {
        let bar = ProgressIndicatorNode(progress: 0.3)
        bar.accessibilityLabel = "Downloading"
        let harness = try show(bar)
        defer { harness.tearDown() }
        let element = try XCTUnwrap(harness.element(role: .progressBar, of: bar))
        XCTAssertEqual(element.role.atspiRole, 42)
        XCTAssertEqual(element.label, "Downloading")
        XCTAssertEqual(element.value, "30%")
        XCTAssertEqual(element.valueRange, AccessibilityValueRange(minimum: 0, maximum: 1, current: 0.3, step: 0.01))
        XCTAssertFalse(element.states.contains(.busy))
        bar.isIndeterminate = true
        bar.isHidden = true  // so the test can settle
        try harness.settle()
        bar.isHidden = false
        let busy = try XCTUnwrap(harness.element(role: .progressBar, of: bar))
        XCTAssertTrue(busy.states.contains(.busy))
        XCTAssertNil(busy.valueRange, "no value while the length is unknown")
        XCTAssertNil(busy.value)
    }

    func testHostileProgressIsClamped() {
        let bar = ProgressIndicatorNode(progress: .nan)
        XCTAssertEqual(bar.progress, 0, "NaN is 0")
        bar.progress = 0.4
        bar.progress = .nan
        XCTAssertEqual(bar.progress, 0)
        bar.progress = 2
        XCTAssertEqual(bar.progress, 1)
        bar.progress = -1
        XCTAssertEqual(bar.progress, 0)
        bar.progress = .infinity
        XCTAssertEqual(bar.progress, 1)
        bar.progress = -.infinity
        XCTAssertEqual(bar.progress, 0)
        XCTAssertEqual(ProgressIndicatorNode(progress: 7).progress, 1)
    }
}
