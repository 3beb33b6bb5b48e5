import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Drags, flings, rubber bands, touches that stop a fling, the wheel and the keys, on a virtual clock.
@MainActor
final class ListScrollingTests: XCTestCase {
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

    /// Runs frames until the list stops moving; returns the offsets it passed through.
    @discardableResult
    private func runUntilAtRest(_ harness: inout ListHarness, limit: Int = 600) -> [Double] {
        var offsets: [Double] = []
        var frames = 0
        while harness.list.isScrolling && frames < limit {
            harness.frame()
            offsets.append(harness.list.contentOffset)
            frames += 1
        }
        XCTAssertFalse(harness.list.isScrolling, "still moving after \(limit) frames")
        return offsets
    }

    func testADragPastTheTopIsResistedAndSpringsBack() async {
        var harness = makeHarness()
        harness.frame([.pointerDown(Point(x: 50, y: 10), button: 1)])
        harness.frame([.pointerMoved(Point(x: 50, y: 30))])  // the pan begins 20 points in
        harness.frame([.pointerMoved(Point(x: 50, y: 110))])
        let physics = ScrollPhysics()
        XCTAssertEqual(harness.list.contentOffset, -physics.rubberBand(80, dimension: 100), accuracy: 1e-9)
        XCTAssertEqual(harness.windowFrame(ofRow: 0)?.minY ?? 0, 30.5, accuracy: 0.5, "80 points of drag show about 30")
        // Held still for longer than the velocity window, then let go: no fling, just the spring.
        for _ in 0..<7 { harness.frame() }
        harness.frame([.pointerUp(Point(x: 50, y: 110), button: 1)])
        let offsets = runUntilAtRest(&harness)
        XCTAssertEqual(harness.list.contentOffset, 0)
        XCTAssertTrue(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 }, "springs straight back, no wobble")
    }

    func testAFlingIntoTheEndOvershootsAndSettlesAtTheEnd() async {
        var harness = makeHarness()
        harness.list.setContentOffset(1800, animated: false)
        harness.settle()
        // 2,000 points a second towards the end, released 83 points before it.
        harness.frame([.pointerDown(Point(x: 50, y: 95), button: 1)])
        harness.frame([.pointerMoved(Point(x: 50, y: 45))])
        let last = Point(x: 50, y: 95 - 200.0 / 3)
        harness.frame([.pointerMoved(last), .pointerUp(last, button: 1)])
        XCTAssertEqual(harness.list.contentOffset, 1800 + 50.0 / 3, accuracy: 1e-9)
        let offsets = runUntilAtRest(&harness)
        XCTAssertGreaterThan(offsets.max() ?? 0, 1900, "it ran past the end")
        XCTAssertLessThan(offsets.max() ?? 0, 1980, "by less than a fifth of a screen")
        XCTAssertEqual(harness.list.contentOffset, 1900)
    }

    func testATouchStopsAFlingWithoutSelectingARow() async {
        var harness = makeHarness()
        var selected: [Int] = []
        harness.list.onSelectRow = { selected.append($0) }
        harness.frame([.pointerDown(Point(x: 50, y: 90), button: 1)])
        harness.frame([.pointerMoved(Point(x: 50, y: 70))])
        harness.frame([.pointerMoved(Point(x: 50, y: 50)), .pointerUp(Point(x: 50, y: 50), button: 1)])
        for _ in 0..<5 { harness.frame() }
        XCTAssertTrue(harness.list.isScrolling)
        harness.frame([.pointerDown(Point(x: 50, y: 50), button: 1)])
        let stoppedAt = harness.list.contentOffset
        XCTAssertFalse(harness.list.isScrolling)
        for _ in 0..<5 { harness.frame() }
        XCTAssertEqual(harness.list.contentOffset, stoppedAt, "held where the touch landed")
        harness.frame([.pointerUp(Point(x: 50, y: 50), button: 1)])
        XCTAssertEqual(selected, [], "the touch that stopped the fling is not a tap")

        harness.frame([.pointerDown(Point(x: 50, y: 5), button: 1)])
        harness.frame([.pointerUp(Point(x: 50, y: 5), button: 1)])
        XCTAssertEqual(selected, [harness.list.row(at: Point(x: 50, y: 5))!])
    }

    func testTheWheelScrollsTheListUnderThePointer() async {
        var harness = makeHarness()
        harness.frame([.pointerMoved(Point(x: 50, y: 50)), .wheel(dx: 0, dy: -2)])
        XCTAssertEqual(harness.list.contentOffset, 96, "two steps towards the end")
        harness.frame([.wheel(dx: 0, dy: 5)])
        XCTAssertEqual(harness.list.contentOffset, 0, "clamped at the start")
    }

    func testKeysScrollByStepsPagesAndToTheEnds() async {
        var harness = makeHarness()
        let list = harness.list
        harness.host.keyHandler = { key, modifiers in list.handleKey(key, modifiers: modifiers) }
        func press(_ key: Key, _ modifiers: KeyModifiers = []) {
            harness.frame([.keyDown(key, modifiers: modifiers)])
            runUntilAtRest(&harness)
        }
        press(.down)
        XCTAssertEqual(list.contentOffset, 40)
        press(.pageDown)
        XCTAssertEqual(list.contentOffset, 100, "a page is a screen less a step")
        harness.frame([.keyDown(.down, modifiers: []), .keyDown(.down, modifiers: [])])
        runUntilAtRest(&harness)
        XCTAssertEqual(list.contentOffset, 180, "repeated keys add up")
        press(.space, .shift)
        XCTAssertEqual(list.contentOffset, 120)
        press(.end)
        XCTAssertEqual(list.contentOffset, 1900)
        press(.pageDown)
        XCTAssertEqual(list.contentOffset, 1900, "clamped at the end")
        press(.home)
        XCTAssertEqual(list.contentOffset, 0)
        XCTAssertFalse(list.handleKey(.character("x")))
    }

    // MARK: The laws of motion

    func testFlingsDecayToTheirRestingPositionAndCrossEdgesContinuously() async {
        let physics = ScrollPhysics()
        let rest = physics.flingRestingPosition(origin: 0, velocity: 3000)
        XCTAssertEqual(rest, 3000 / (-1000 * log(0.998)), accuracy: 1e-9)
        XCTAssertEqual(physics.fling(origin: 0, velocity: 3000, elapsed: 60).position, rest, accuracy: 1e-6)
        let crossing = physics.flingTime(origin: 0, velocity: 3000, reaching: 1000)!
        let atCrossing = physics.fling(origin: 0, velocity: 3000, elapsed: crossing)
        XCTAssertEqual(atCrossing.position, 1000, accuracy: 1e-9)
        XCTAssertNil(physics.flingTime(origin: 0, velocity: 3000, reaching: rest + 1), "never gets there")
        let spring = physics.spring(origin: 1000, velocity: atCrossing.velocity, rest: 1000, elapsed: 0)
        XCTAssertEqual(spring.velocity, atCrossing.velocity, accuracy: 1e-9, "the bounce starts at the fling's speed")
        let late = physics.spring(origin: 1000, velocity: atCrossing.velocity, rest: 1000, elapsed: 3)
        XCTAssertTrue(physics.springHasSettled(position: late.position, velocity: late.velocity, rest: 1000))
    }

    func testTheRubberBandIsInvertible() async {
        let physics = ScrollPhysics()
        for distance in [0.0, 1, 10, 100, 1000] {
            let shown = physics.rubberBand(distance, dimension: 800)
            XCTAssertLessThan(shown, max(distance, 1e-9) + 1e-9)
            XCTAssertEqual(physics.rubberBandInverse(shown, dimension: 800), distance, accuracy: 1e-6)
        }
        XCTAssertLessThan(physics.rubberBand(1e9, dimension: 800), 800, "never more than a screen")
    }
}
