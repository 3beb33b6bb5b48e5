import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// `ListNode.fling(velocity:)`: the touch fling's physics, started from code, on a virtual clock.
@MainActor
final class ListFlingTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// 100 rows of 20 points in a 100-point viewport; the content is 2,000 points, the end at 1,900.
    private func makeHarness() -> ListHarness {
        var harness = ListHarness(source: TestListSource(count: 100, height: 20))
        harness.settle()
        return harness
    }

    /// Runs frames until the list stops; returns each frame's time and offset.
    private func runUntilAtRest(_ harness: inout ListHarness, limit: Int = 900) -> [(time: Double, offset: Double)] {
        var samples: [(Double, Double)] = []
        while harness.list.isScrolling && samples.count < limit {
            harness.frame()
            samples.append((harness.time, harness.list.contentOffset))
        }
        XCTAssertFalse(harness.list.isScrolling, "still moving after \(limit) frames")
        return samples
    }

    func testAFlingGlidesAndSlowsToRestAlongTheFlingCurve() async throws {
        var harness = makeHarness()
        let start = harness.time
        harness.list.fling(velocity: 1500)
        XCTAssertTrue(harness.list.isScrolling)
        let samples = runUntilAtRest(&harness)
        let physics = ScrollPhysics()
        // Each frame is the closed form of the fling at the frame's time, until it settles.
        for sample in samples.dropLast() {
            let expected = physics.fling(origin: 0, velocity: 1500, elapsed: sample.time - start).position
            XCTAssertEqual(sample.offset, expected, accuracy: 1e-9)
        }
        let steps = zip(samples.dropFirst(), samples).map { $0.offset - $1.offset }
        XCTAssertTrue(steps.allSatisfy { $0 >= 0 }, "moves one way")
        // Slower every frame, until the last, which puts it at rest (at most half a point on).
        XCTAssertTrue(zip(steps.dropLast().dropFirst(), steps.dropLast()).allSatisfy { $0 <= $1 + 1e-9 }, "and slows down")
        XCTAssertLessThan(steps.last ?? 1, 1)
        XCTAssertGreaterThan(steps.first ?? 0, 20, "about 25 points in the first frame")
        XCTAssertEqual(harness.list.contentOffset, physics.flingRestingPosition(origin: 0, velocity: 1500), accuracy: 1e-9)
        // The rows it came to rest on were made and placed.
        let first = try XCTUnwrap(harness.list.visibleRows?.lowerBound)
        harness.settle()
        XCTAssertNotNil(harness.rowNode(first))
    }

    func testAFlingIntoTheEndBouncesLikeATouchFling() async {
        var harness = makeHarness()
        harness.list.setContentOffset(1800, animated: false)
        harness.settle()
        harness.list.fling(velocity: 2000)
        let offsets = runUntilAtRest(&harness).map(\.offset)
        XCTAssertGreaterThan(offsets.max() ?? 0, 1900, "it ran past the end")
        XCTAssertLessThan(offsets.max() ?? 0, 1980, "by less than a fifth of a screen")
        XCTAssertEqual(harness.list.contentOffset, 1900)
    }

    func testAFlingTowardsTheStartBouncesAtTheTop() async {
        var harness = makeHarness()
        harness.list.setContentOffset(60, animated: false)
        harness.settle()
        harness.list.fling(velocity: -2500)
        let offsets = runUntilAtRest(&harness).map(\.offset)
        XCTAssertLessThan(offsets.min() ?? 0, 0, "it ran past the top")
        XCTAssertEqual(harness.list.contentOffset, 0)
    }

    func testATouchStopsAProgrammaticFling() async {
        var harness = makeHarness()
        harness.list.fling(velocity: 1500)
        for _ in 0..<5 { harness.frame() }
        harness.frame([.pointerDown(Point(x: 50, y: 50), button: 1)])
        let stoppedAt = harness.list.contentOffset
        XCTAssertFalse(harness.list.isScrolling)
        for _ in 0..<5 { harness.frame() }
        XCTAssertEqual(harness.list.contentOffset, stoppedAt)
        harness.frame([.pointerUp(Point(x: 50, y: 50), button: 1)])
    }

    func testASlowFlingLeavesTheListAtRestAndABadOneIsReported() async {
        var harness = makeHarness()
        harness.list.setContentOffset(300, animated: false)
        harness.list.fling(velocity: 20)
        XCTAssertFalse(harness.list.isScrolling, "under minimumFlingVelocity")
        harness.frame()
        XCTAssertEqual(harness.list.contentOffset, 300)
        harness.list.fling(velocity: 1200)
        harness.frame()
        let moving = harness.list.contentOffset
        harness.list.fling(velocity: .nan)
        harness.list.fling(velocity: .infinity)
        XCTAssertTrue(harness.list.isScrolling, "a NaN or infinite fling leaves the motion alone")
        harness.frame()
        XCTAssertGreaterThan(harness.list.contentOffset, moving)
        XCTAssertEqual(harness.list.diagnostics.map(\.message),
                       ["fling(velocity: nan) is not a speed; ignored, the list keeps its motion"])
    }
}
