import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The list's interface-state ranges: every row's state after scripted scrolls, the callbacks' order
/// and thread, scheduler priorities that follow the viewport, cancelled decodes, the checkerboard.
@MainActor
final class ListNodeTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.commitBudgetBytes = DisplayCoordinator.defaultCommitBudgetBytes
        }
    }

    /// 100 rows of 20 points in a 100-point viewport: five rows a screen.
    private func makeHarness(log: EventLog? = nil) -> ListHarness {
        let source = TestListSource(count: 100, height: 20)
        source.log = log
        return ListHarness(source: source)
    }

    func testAnIdleListUsesTheMinimumRanges() async {
        var harness = makeHarness()
        harness.settle()
        XCTAssertEqual(harness.list.rangeMode, .minimum, "a list that has not scrolled keeps the small set")
        assertRowStates(harness, height: 20, forward: true, tuning: .minimum)
        // Spelled out once: display reaches a quarter screen below (rows 5–6), preload half a screen
        // (row 7), measure a screen (rows 8–9); nothing further has a node.
        XCTAssertEqual(harness.list.interfaceStateOfRow(4), .onScreen)
        XCTAssertEqual(harness.list.interfaceStateOfRow(6), [.measureLayout, .preload, .display])
        XCTAssertEqual(harness.list.interfaceStateOfRow(7), [.measureLayout, .preload])
        XCTAssertEqual(harness.list.interfaceStateOfRow(9), [.measureLayout])
        XCTAssertEqual(harness.list.interfaceStateOfRow(10), [])
        XCTAssertEqual(harness.list.statistics.liveRows, 10)
    }

    func testEveryRowsStateFollowsScrollsForwardBackAndAJump() async {
        var harness = makeHarness()
        harness.settle()

        harness.list.setContentOffset(500, animated: false)
        harness.settle()
        XCTAssertEqual(harness.list.rangeMode, .full)
        assertRowStates(harness, height: 20, forward: true, tuning: .full)
        XCTAssertEqual(harness.list.visibleRows, 25...29)
        // Leading is below: display one screen down (to row 34), half a screen up (from row 22).
        XCTAssertEqual(harness.list.interfaceStateOfRow(34), [.measureLayout, .preload, .display])
        XCTAssertEqual(harness.list.interfaceStateOfRow(21), [.measureLayout, .preload])

        harness.list.setContentOffset(300, animated: false)
        harness.settle()
        assertRowStates(harness, height: 20, forward: false, tuning: .full)
        // The direction flipped: now display reaches a screen up (from row 10) and half a screen down.
        XCTAssertEqual(harness.list.interfaceStateOfRow(10), [.measureLayout, .preload, .display])
        XCTAssertEqual(harness.list.interfaceStateOfRow(23), [.measureLayout, .preload])

        harness.list.scroll(to: 80, at: .top, animated: false)
        harness.settle()
        XCTAssertEqual(harness.list.contentOffset, 1600)
        assertRowStates(harness, height: 20, forward: true, tuning: .full)
        XCTAssertEqual((0..<100).filter { harness.list.nodeForRow($0) != nil }, Array(70...99),
                       "only rows near the viewport have nodes")
    }

    func testEveryRowsStateStaysRightThroughAWalkOfSmallAndLargeSteps() async {
        // The pass visits only rows at the ranges' moving edges; check every row after every step.
        var harness = ListHarness(source: TestListSource(count: 300, height: 20))
        harness.settle()
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ range: ClosedRange<Int>) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Int((seed >> 33) % UInt64(range.count))
        }
        var offset = 0.0
        var forward = true
        for step in 0..<120 {
            // Mostly small steps one way, sometimes a turn, now and then a jump.
            if next(0...9) == 0 { forward.toggle() }
            let distance = next(0...19) == 0 ? Double(next(300...2000)) : Double(next(1...45))
            offset = min(max(0, offset + (forward ? distance : -distance)), 5900)
            let previous = harness.list.contentOffset
            harness.list.setContentOffset(offset, animated: false)
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
            harness.frame()
            let direction = offset == previous ? nil : offset > previous
            guard let direction else { continue }
            for row in 0..<300 {
                let expected = expectedState(top: Double(row) * 20, height: 20, offset: offset, viewport: 100,
                                             forward: direction, tuning: .full)
                XCTAssertEqual(harness.list.interfaceStateOfRow(row), expected, "step \(step), row \(row), offset \(offset)")
            }
        }
    }

    func testAFlingMovesEveryRowThroughItsStatesAndComesToRest() async {
        var harness = makeHarness()
        harness.settle()
        // Drag up 15 points a frame (900 points a second) and let go while moving: a fling.
        harness.frame([.pointerDown(Point(x: 50, y: 90), button: 1)])
        for step in 1...3 { harness.frame([.pointerMoved(Point(x: 50, y: 90 - Double(step) * 15))]) }
        harness.frame([.pointerMoved(Point(x: 50, y: 30)), .pointerUp(Point(x: 50, y: 30), button: 1)])
        XCTAssertEqual(harness.list.contentOffset, 45, accuracy: 0.001,
                       "the content follows the finger from where the pan began (15 points in)")
        XCTAssertTrue(harness.list.isScrolling)
        var frames = 0
        while harness.list.isScrolling && frames < 600 {
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
            frames += 1
        }
        XCTAssertFalse(harness.list.isScrolling, "the fling stops")
        // 900 points a second decays to rest 900/k ≈ 450 points further.
        let physics = ScrollPhysics()
        XCTAssertEqual(harness.list.contentOffset, physics.flingRestingPosition(origin: 45, velocity: 900), accuracy: 0.001)
        harness.settle()
        assertRowStates(harness, height: 20, forward: true, tuning: .full)
    }

    /// The lifecycle's order for list rows: measure → preload → display and didLoad → layout() →
    /// visible, and back out.
    func testCallbacksComeInOrderOnTheUIThread() async {
        let log = EventLog()
        var harness = makeHarness(log: log)
        harness.settle()
        // Row 12 comes from nothing to on screen and back out, half a screen at a time.
        for offset in stride(from: 0.0, through: 600, by: 50) {
            harness.list.setContentOffset(offset, animated: false)
            harness.settle()
        }
        let row12 = log.all.filter { $0.0.hasPrefix("12:") }
        XCTAssertTrue(row12.allSatisfy(\.1), "every callback on the UI thread")
        XCTAssertEqual(row12.map { String($0.0.dropFirst(3)) }, [
            "state[measureLayout]",
            "+preload", "state[measureLayout, preload]",
            "didLoad", "+display", "state[measureLayout, preload, display]",
            "layout",
            "+visible", "state[measureLayout, preload, display, visible]",
            "-visible", "state[measureLayout, preload, display]",
            "-display", "state[measureLayout, preload]",
            "-preload", "state[measureLayout]",
            "state[]",
        ])
    }

    func testSchedulerPrioritiesFollowTheViewportAndFlipWithTheDirection() async {
        var harness = makeHarness()
        harness.settle()
        harness.list.setContentOffset(1000, animated: false)
        harness.settle()
        let list = harness.list
        // Rows 50–54 are on screen; 56 lies ahead (below), 47 behind.
        XCTAssertEqual(list.nodeForRow(52)?.displayPriority, .visible)
        let ahead = list.nodeForRow(56)!.displayDistance, behind = list.nodeForRow(47)!.displayDistance
        XCTAssertEqual(ahead, 20, "one row past the bottom edge")
        XCTAssertGreaterThan(behind, ahead, "rows behind the scroll come later")

        list.setContentOffset(990, animated: false)
        harness.settle()
        let aheadNow = list.nodeForRow(48)!.displayDistance, behindNow = list.nodeForRow(55)!.displayDistance
        XCTAssertLessThan(aheadNow, behindNow, "scrolling up puts the rows above first")
        XCTAssertEqual(aheadNow, 10)
    }

    func testTheCheckerboardIsRecordedEachFrame() async {
        var harness = makeHarness()
        harness.settle()
        XCTAssertEqual(harness.host.lastFrame.visibleCellArea, 100 * 100)
        XCTAssertEqual(harness.host.lastFrame.checkerboardArea, 0)
        harness.list.scroll(to: 60, at: .top, animated: false)
        let jumped = harness.frame()
        XCTAssertEqual(jumped.checkerboardFraction, 1, "nothing is drawn yet where the list jumped")
        harness.settle()
        XCTAssertEqual(harness.host.lastFrame.checkerboardFraction, 0)
        XCTAssertGreaterThan(harness.list.statistics.checkerboardArea, 0)
    }

    func testLeavingPreloadCancelsImageDecodes() async throws {
        let bytes = [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/clock.jpg")))
        let cache = ImageCache(budgetBytes: 1 << 20)
        let cacheBox = UncheckedSendable(cache)
        let source = TestListSource(count: 100, height: 20)
        // Rows 20 and 21 show an avatar, each a distinct image.
        source.makeNode = { identity, height in
            let row = TestRowNode(identity: identity, height: height)
            if identity == 20 || identity == 21 {
                let image = ImageNode()
                image.frame = Rect(x: 0, y: 0, width: 20, height: 20)
                image.imageCache = cacheBox.value
                image.source = .data(bytes, name: "avatar-\(identity)")
                row.addSubnode(image)
            }
            return row
        }
        // Preload half a screen ahead only; nodes are kept five screens either way.
        let tuning = ListRangeTuning(display: .zero, preload: .init(leading: 0.5, trailing: 0),
                                     measure: .init(leading: 5, trailing: 5))
        var harness = ListHarness(source: source) { list in
            list.fullRangeTuning = tuning
            list.minimumRangeTuning = tuning
        }
        harness.settle()
        XCTAssertNotNil(harness.list.nodeForRow(21), "rows 20–21 are measured")
        let images = [20, 21].map { harness.list.nodeForRow($0)!.subnodes.first as! ImageNode }
        XCTAssertEqual(images.map(\.loadState), [.empty, .empty], "but not preloaded")

        // Hold every worker, then scroll so the two rows enter preload: their decodes queue up.
        let scheduler = harness.host.runtime.scheduler
        let gates = (0..<scheduler.workerCount).map { _ in Gate() }
        for gate in gates {
            scheduler.schedule(priority: .visible) { _ in gate.pass(); return .completed }
            gate.waitUntilEntered()
        }
        let droppedBefore = scheduler.statistics.cancelledBeforeStart
        harness.list.setContentOffset(300, animated: false)
        harness.frame()
        XCTAssertEqual(images.map(\.interfaceState), [[.measureLayout, .preload], [.measureLayout, .preload]])
        XCTAssertEqual(images.map(\.isDecoding), [true, true])

        // Scroll back: the rows leave preload (keeping their nodes) and the decodes are dropped.
        harness.list.setContentOffset(100, animated: false)
        harness.frame()
        XCTAssertTrue(harness.list.nodeForRow(20)! === images[0].supernode, "the row keeps its node")
        XCTAssertEqual(images.map(\.interfaceState), [[.measureLayout], [.measureLayout]])
        XCTAssertEqual(images.map(\.isDecoding), [false, false])
        XCTAssertEqual(images.map(\.loadState), [.empty, .empty])
        XCTAssertGreaterThanOrEqual(scheduler.statistics.cancelledBeforeStart - droppedBefore, 2)

        gates.forEach { $0.open() }
        harness.settle()
        XCTAssertEqual(cache.count, 0, "no decode ran")
        XCTAssertEqual(images.map { $0.image == nil }, [true, true])
    }

    func testTheUploadBudgetCommitsVisibleRowsFirst() async {
        // Nodes five screens either way, drawn a screen ahead: scrolling finds the rows measured.
        let tuning = ListRangeTuning(display: .init(leading: 1, trailing: 0), preload: .init(leading: 1, trailing: 0),
                                     measure: .init(leading: 5, trailing: 5))
        var harness = ListHarness(source: TestListSource(count: 100, height: 20)) { list in
            list.fullRangeTuning = tuning
            list.minimumRangeTuning = tuning
        }
        harness.settle()
        let scheduler = harness.host.runtime.scheduler
        let gates = (0..<scheduler.workerCount).map { _ in Gate() }
        for gate in gates {
            scheduler.schedule(priority: .visible) { _ in gate.pass(); return .completed }
            gate.waitUntilEntered()
        }
        // Rows 15–24 enter display; their ten draws queue behind the gates and finish together.
        harness.list.setContentOffset(300, animated: false)
        harness.frame()
        gates.forEach { $0.open() }
        scheduler.waitUntilIdle()
        XCTAssertEqual(harness.host.runtime.pendingCommitCount, 10)

        harness.host.runtime.commitBudgetBytes = 5 * 100 * 20 * 4  // five rows' bitmaps
        let first = harness.frame()
        XCTAssertEqual(first.commitsApplied, 5)
        XCTAssertEqual(first.commitsDeferred, 5)
        let drawn = (15...24).filter { harness.list.nodeForRow($0)?.layerIfLoaded?.contents != nil }
        XCTAssertEqual(drawn, Array(15...19), "the visible rows go first")
        XCTAssertEqual(first.checkerboardArea, 0)
        harness.frame()
        XCTAssertTrue((15...24).allSatisfy { harness.list.nodeForRow($0)?.layerIfLoaded?.contents != nil })
    }

    func testTheRangeOverlayTintsRowsByState() async {
        var harness = makeHarness()
        harness.list.showsRangeOverlay = true
        harness.settle()
        let overlay = harness.list.layer.sublayers.first { $0.name == "list-range-overlay" }
        let strip = overlay?.sublayers.first { $0.name == "list-range-strip" }
        let colors = strip?.sublayers.filter { $0.name == "list-range-bar" && !$0.isHidden }.map(\.backgroundColor)
        XCTAssertEqual(colors?.count, 10, "one bar per row with a node")
        XCTAssertEqual(colors?.filter { $0 == ListRangeOverlay.visibleColor }.count, 5)
        XCTAssertEqual(colors?.filter { $0 == ListRangeOverlay.displayColor }.count, 2)
        XCTAssertEqual(colors?.filter { $0 == ListRangeOverlay.preloadColor }.count, 1)
        XCTAssertEqual(colors?.filter { $0 == ListRangeOverlay.measureColor }.count, 2)
        harness.list.showsRangeOverlay = false
        XCTAssertFalse(harness.list.layer.sublayers.contains { $0.name == "list-range-overlay" })
    }

    func testAnIdleDelayFallsBackToTheMinimumRanges() async {
        var harness = makeHarness()
        harness.list.idleRangeDelay = 1
        harness.settle()
        harness.list.setContentOffset(500, animated: false)
        harness.settle()
        XCTAssertEqual(harness.list.rangeMode, .full)
        harness.frame(advance: 2)
        harness.settle()
        XCTAssertEqual(harness.list.rangeMode, .minimum, "two seconds without scrolling")
        assertRowStates(harness, height: 20, forward: true, tuning: .minimum)
    }

    func testAHiddenListKeepsItsRowsOffScreen() async {
        var harness = makeHarness()
        harness.settle()
        harness.list.setInterfaceState([.measureLayout, .preload])
        XCTAssertTrue(harness.states.allSatisfy { !$0.contains(.display) }, "no row displays while the list is off screen")
        XCTAssertEqual(harness.list.interfaceStateOfRow(0), [.measureLayout, .preload])
        harness.list.enterInterfaceState(.onScreen)
        harness.settle()
        XCTAssertEqual(harness.list.interfaceStateOfRow(0), .onScreen)
    }
}
