import Foundation
import Synchronization
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// The order waiting jobs run in: priority, ties, re-prioritisation.
@MainActor
final class DisplaySchedulerOrderTests: XCTestCase {
    // MARK: DisplayPriority

    func testPriorityOrdering() async {
        XCTAssertGreaterThan(DisplayPriority.visible, .offscreen(distance: 0))
        XCTAssertGreaterThan(DisplayPriority.visible, .offscreen(distance: -100))
        XCTAssertGreaterThan(DisplayPriority.offscreen(distance: 10), .offscreen(distance: 20))
        XCTAssertLessThan(DisplayPriority.offscreen(distance: .infinity), .offscreen(distance: 1e300))
        XCTAssertEqual(DisplayPriority.visible, DisplayPriority(isVisible: true, distance: 0))
        XCTAssertEqual(DisplayPriority.offscreen(distance: 5), DisplayPriority(isVisible: false, distance: 5))
        // NaN behaves as +infinity in every relation, so the order stays total.
        let nan = DisplayPriority.offscreen(distance: .nan)
        let infinity = DisplayPriority.offscreen(distance: .infinity)
        XCTAssertEqual(nan, infinity)
        XCTAssertEqual(nan, nan)
        XCTAssertEqual(nan.hashValue, infinity.hashValue)
        XCTAssertFalse(nan < infinity)
        XCTAssertFalse(infinity < nan)
        XCTAssertLessThan(nan, .offscreen(distance: 1_000_000))
        XCTAssertEqual(Set([nan, infinity, .visible, .visible]).count, 2)
        let sorted = [DisplayPriority.offscreen(distance: 3), .visible, .offscreen(distance: .nan), .offscreen(distance: 1)]
            .sorted(by: >)
        XCTAssertEqual(sorted, [.visible, .offscreen(distance: 1), .offscreen(distance: 3), .offscreen(distance: .infinity)])
    }
    // MARK: Priority order

    func testRunsVisibleFirstThenByDistanceWithTiesInSchedulingOrder() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = SharedRecorder<Int>()
        let priorities: [DisplayPriority] = [
            .offscreen(distance: 300),  // 0
            .visible,  // 1
            .offscreen(distance: 100),  // 2
            .offscreen(distance: .infinity),  // 3
            .visible,  // 4
            .offscreen(distance: 100),  // 5
            .offscreen(distance: 0),  // 6
            .offscreen(distance: .nan),  // 7, ties with 3 and comes after it
            .offscreen(distance: 50),  // 8
        ]
        for (index, priority) in priorities.enumerated() {
            scheduler.schedule(priority: priority) { _ in
                order.append(index)
                return .completed
            }
        }
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(order.values, [1, 4, 6, 8, 2, 5, 0, 3, 7])
    }

    func testGatedJobsAcrossAllWorkersRunInPriorityOrderOnOneWorker() async {
        // Every worker is blocked; the jobs queued meanwhile run in priority order once one worker is
        // free (the other stays blocked, so the order is a single sequence).
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let second = occupyWorker(scheduler)
        let order = SharedRecorder<Int>()
        var rng = SeededRandom(seed: 7)
        let priorities = (0..<200).map { _ in randomPriority(&rng) }
        for (index, priority) in priorities.enumerated() {
            scheduler.schedule(priority: priority) { _ in
                order.append(index)
                return .completed
            }
        }
        first.signal()
        let drained = DispatchSemaphore(value: 0)
        scheduler.schedule(priority: .offscreen(distance: .infinity)) { _ in
            drained.signal()
            return .completed
        }
        waitFor(drained, "last job ran")
        XCTAssertEqual(order.values, expectedOrder(priorities, among: Array(priorities.indices)))
        second.signal()
        scheduler.waitUntilIdle()
    }

    func testRaisingAWaitingJobsPriorityRunsItFirst() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = SharedRecorder<String>()
        func job(_ name: String, _ priority: DisplayPriority) -> DisplayJob {
            scheduler.schedule(priority: priority) { _ in
                order.append(name)
                return .completed
            }
        }
        _ = job("near", .offscreen(distance: 10))
        _ = job("visible", .visible)
        let far = job("far", .offscreen(distance: 5_000))
        let middle = job("middle", .offscreen(distance: 100))
        let lowered = job("lowered", .visible)
        far.setPriority(.visible)
        lowered.setPriority(.offscreen(distance: 10_000))
        middle.setPriority(.offscreen(distance: 5))
        XCTAssertEqual(far.priority, .visible)
        XCTAssertEqual(lowered.priority, .offscreen(distance: 10_000))
        release.signal()
        scheduler.waitUntilIdle()
        // "far" ties with "visible" and was scheduled later.
        XCTAssertEqual(order.values, ["visible", "far", "middle", "near", "lowered"])
        // A finished job keeps answering; changing it does nothing to the scheduler.
        far.setPriority(.offscreen(distance: 1))
        XCTAssertEqual(far.priority, .offscreen(distance: 1))
        XCTAssertEqual(scheduler.statistics.completed, 6)
    }

    /// Re-prioritises and cancels random waiting jobs, then checks the run order against a sort.
    /// `updates` small keeps the scheduler on in-place sifts; large pushes it to rebuild the heap.
    private func checkOrderAfterRandomChanges(count: Int, updates: Int, seed: UInt64, file: StaticString = #filePath, line: UInt = #line) {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler, file: file, line: line)
        let order = SharedRecorder<Int>()
        var rng = SeededRandom(seed: seed)
        var priorities = (0..<count).map { _ in randomPriority(&rng) }
        let jobs = priorities.enumerated().map { index, priority in
            scheduler.schedule(priority: priority) { _ in
                order.append(index)
                return .completed
            }
        }
        var cancelled = Set<Int>()
        for step in 0..<updates {
            let index = Int(rng.next() % UInt64(count))
            if step % 10 == 9 {
                jobs[index].cancel()
                cancelled.insert(index)
            } else {
                priorities[index] = randomPriority(&rng)
                jobs[index].setPriority(priorities[index])
            }
        }
        XCTAssertEqual(scheduler.queueDepth, count - cancelled.count, file: file, line: line)
        for (job, priority) in zip(jobs, priorities) where job.priority != priority {
            XCTFail("priority not recorded", file: file, line: line)
            break
        }
        release.signal()
        scheduler.waitUntilIdle()
        let live = (0..<count).filter { !cancelled.contains($0) }
        XCTAssertEqual(order.values, expectedOrder(priorities, among: live), file: file, line: line)
        XCTAssertEqual(scheduler.statistics.cancelledBeforeStart, cancelled.count, file: file, line: line)
    }

    func testFewReprioritisationsKeepTheOrder() async {
        checkOrderAfterRandomChanges(count: 300, updates: 25, seed: 11)
        checkOrderAfterRandomChanges(count: 50, updates: 30, seed: 12)
    }

    func testManyReprioritisationsKeepTheOrder() async {
        checkOrderAfterRandomChanges(count: 300, updates: 900, seed: 13)
    }

    func testTenThousandWaitingJobsWithHeavyReprioritisation() async {
        checkOrderAfterRandomChanges(count: 10_000, updates: 30_000, seed: 14)
    }

    func testReprioritisingBetweenPicksKeepsTheOrder() async {
        // Changes land while the worker is picking, alternating with picks.
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = SharedRecorder<Int>()
        let count = 400
        var rng = SeededRandom(seed: 21)
        let priorities = (0..<count).map { _ in randomPriority(&rng) }
        // Each job, when it runs, raises a later job to visible; the expected order is replayed below.
        let jobs = SharedRecorder<DisplayJob>()
        let plan = (0..<count).map { _ in Int(rng.next() % UInt64(count)) }
        for index in 0..<count {
            let job = scheduler.schedule(priority: priorities[index]) { _ in
                order.append(index)
                jobs.values[plan[index]].setPriority(.visible)
                return .completed
            }
            jobs.append(job)
        }
        release.signal()
        scheduler.waitUntilIdle()
        // Replay: pick the most urgent remaining, then apply its change.
        var current = priorities
        var remaining = Set(0..<count)
        var expected: [Int] = []
        while !remaining.isEmpty {
            let next = expectedOrder(current, among: Array(remaining))[0]
            expected.append(next)
            remaining.remove(next)
            current[plan[next]] = .visible
        }
        XCTAssertEqual(order.values, expected)
    }
}
