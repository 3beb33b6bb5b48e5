import Foundation
import Synchronization
import XCTest
@testable import NodeRuntime

// Ordering in these tests comes from semaphores only: a "gate" job occupies a worker until the test
// releases it, so everything scheduled meanwhile is waiting when the worker picks again. No test
// sleeps or measures time.

// MARK: - Helpers

/// Upper bound for any single wait. It exists only so that a scheduler bug (a lost wakeup, a job
/// that never runs) fails the test instead of hanging the whole run; nothing is asserted about time.
private let deadlockGuard: DispatchTimeInterval = .seconds(120)

/// Waits for `semaphore`; fails (rather than hangs) if it is never signalled.
private func waitFor(
    _ semaphore: DispatchSemaphore, _ what: String, file: StaticString = #filePath, line: UInt = #line
) {
    if semaphore.wait(timeout: .now() + deadlockGuard) == .timedOut {
        XCTFail("never happened: \(what) (deadlock?)", file: file, line: line)
    }
}

/// Same, for use inside job closures, where failing is left to the test thread.
private func waitInJob(_ semaphore: DispatchSemaphore) -> Bool {
    semaphore.wait(timeout: .now() + deadlockGuard) == .success
}

// The shared test state below is guarded by NSLock rather than Synchronization.Mutex: on Linux, Mutex
// is invisible to ThreadSanitizer and would make the TSan run report false races.

/// An append-only list shared between threads.
private final class Recorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []  // guarded by lock
    func append(_ element: Element) { lock.withLock { items.append(element) } }
    var values: [Element] { lock.withLock { items } }
}

/// A per-index counter shared between threads.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int]  // guarded by lock
    init(count: Int) { counts = [Int](repeating: 0, count: count) }
    func increment(_ index: Int) { lock.withLock { counts[index] += 1 } }
    func value(at index: Int) -> Int { lock.withLock { counts[index] } }
    var values: [Int] { lock.withLock { counts } }
}

private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    @discardableResult
    func increment() -> Int { value.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue }
    func decrement() { value.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
    var current: Int { value.load(ordering: .acquiring) }
    /// Raises the stored value to `candidate` if it is larger (for a running maximum).
    func raise(to candidate: Int) {
        var seen = value.load(ordering: .relaxed)
        while candidate > seen {
            let (exchanged, original) = value.compareExchange(
                expected: seen, desired: candidate, ordering: .acquiringAndReleasing)
            if exchanged { break }
            seen = original
        }
    }
}

private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// Deterministic random numbers, so a failing order test can be replayed.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A priority drawn from a small set of values so that ties (and NaN) are common.
private func randomPriority(_ rng: inout SplitMix64) -> DisplayPriority {
    switch rng.next() % 10 {
    case 0, 1: return .visible
    case 2: return .offscreen(distance: .nan)
    default: return .offscreen(distance: Double(rng.next() % 16) * 25)
    }
}

/// Indices in the order the scheduler must run them: most urgent first, ties by scheduling order.
private func expectedOrder(_ priorities: [DisplayPriority], among indices: [Int]) -> [Int] {
    indices.sorted { a, b in
        priorities[a] != priorities[b] ? priorities[a] > priorities[b] : a < b
    }
}

final class DisplaySchedulerTests: XCTestCase {
    /// Occupies one worker with a job that returns only when the returned semaphore is signalled;
    /// returns once that job is running, so later jobs are known to be waiting.
    private func occupyWorker(_ scheduler: DisplayScheduler, file: StaticString = #filePath, line: UInt = #line)
        -> DispatchSemaphore
    {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        scheduler.schedule(priority: .visible) { _ in
            started.signal()
            _ = waitInJob(release)
            return .completed
        }
        waitFor(started, "gate job started", file: file, line: line)
        return release
    }

    // MARK: DisplayPriority

    func testPriorityOrdering() {
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

    // MARK: Running

    func testRunsEveryJobExactlyOnce() {
        let scheduler = DisplayScheduler(workerCount: 4)
        defer { scheduler.shutdown() }
        XCTAssertEqual(scheduler.workerCount, 4)
        let count = 500
        let runs = Tally(count: count)
        var rng = SplitMix64(seed: 1)
        for index in 0..<count {
            scheduler.schedule(priority: randomPriority(&rng)) { _ in
                runs.increment(index)
                return .completed
            }
        }
        scheduler.waitUntilIdle()
        XCTAssertEqual(runs.values, [Int](repeating: 1, count: count))
        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.scheduled, count)
        XCTAssertEqual(statistics.started, count)
        XCTAssertEqual(statistics.completed, count)
        XCTAssertEqual(statistics.cancelledBeforeStart, 0)
        XCTAssertEqual(statistics.cancelledWhileRunning, 0)
        XCTAssertGreaterThanOrEqual(statistics.workMillisecondsCompleted, 0)
        XCTAssertEqual(statistics.workMillisecondsCancelled, 0)
        XCTAssertEqual(scheduler.queueDepth, 0)
        XCTAssertEqual(scheduler.runningCount, 0)

        scheduler.resetStatistics()
        XCTAssertEqual(scheduler.statistics, DisplayScheduler.Statistics())
    }

    func testWorkerCountIsAtLeastOne() {
        let scheduler = DisplayScheduler(workerCount: 0)
        defer { scheduler.shutdown() }
        XCTAssertEqual(scheduler.workerCount, 1)
        let ran = Counter()
        scheduler.schedule(priority: .visible) { _ in ran.increment(); return .completed }
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.current, 1)
        XCTAssertGreaterThanOrEqual(DisplayScheduler().workerCount, 1)
    }

    func testWorkerIndexAndThreadNames() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let indices = Recorder<Int?>()
        scheduler.schedule(priority: .visible) { _ in
            indices.append(DisplayScheduler.currentWorkerIndex)
            return .completed
        }
        scheduler.waitUntilIdle()
        XCTAssertEqual(indices.values, [0])
        XCTAssertNil(DisplayScheduler.currentWorkerIndex)
        XCTAssertEqual(DisplayScheduler.workerThreadName("draw", index: 3), "draw.3")
        #if os(Linux)
            XCTAssertEqual(DisplayScheduler.workerThreadName("tessera.display", index: 12), "tessera.disp.12")
        #endif
    }

    func testWaitUntilIdleReturnsAtOnceWhenNothingIsScheduled() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        scheduler.waitUntilIdle()
        scheduler.waitUntilIdle()
        XCTAssertEqual(scheduler.statistics, DisplayScheduler.Statistics())
    }

    func testQueueDepthAndRunningCount() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        for distance in 0..<5 {
            scheduler.schedule(priority: .offscreen(distance: Double(distance))) { _ in .completed }
        }
        XCTAssertEqual(scheduler.runningCount, 1)
        XCTAssertEqual(scheduler.queueDepth, 5)
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(scheduler.runningCount, 0)
        XCTAssertEqual(scheduler.queueDepth, 0)
        XCTAssertEqual(scheduler.statistics.completed, 6)
    }

    func testTwoWorkersRunJobsAtTheSameTime() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let aStarted = DispatchSemaphore(value: 0)
        let bStarted = DispatchSemaphore(value: 0)
        let sawOther = Recorder<String>()
        // Each job finishes only after the other has started: possible only if both run at once.
        scheduler.schedule(priority: .visible) { _ in
            aStarted.signal()
            if waitInJob(bStarted) { sawOther.append("a") }
            return .completed
        }
        scheduler.schedule(priority: .visible) { _ in
            bStarted.signal()
            if waitInJob(aStarted) { sawOther.append("b") }
            return .completed
        }
        scheduler.waitUntilIdle()
        XCTAssertEqual(Set(sawOther.values), ["a", "b"])
        XCTAssertEqual(scheduler.statistics.completed, 2)
    }

    func testCallbacksMayCallBackIntoTheScheduler() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let events = Recorder<String>()
        scheduler.schedule(priority: .visible) { _ in
            _ = scheduler.statistics
            _ = scheduler.queueDepth
            let followUp = scheduler.schedule(priority: .offscreen(distance: 1)) { _ in
                events.append("follow-up ran")
                return .completed
            }
            followUp.setPriority(.visible)
            _ = followUp.priority
            events.append("first ran")
            return .completed
        }
        let release = occupyWorker(scheduler)
        let release2 = occupyWorker(scheduler)
        let dropped = scheduler.schedule(
            priority: .visible,
            onDropped: {
                scheduler.schedule(priority: .visible) { _ in
                    events.append("scheduled from onDropped ran")
                    return .completed
                }
            },
            work: { _ in
                events.append("dropped job ran")
                return .completed
            })
        dropped.cancel()
        release.signal()
        release2.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(
            Set(events.values), ["first ran", "follow-up ran", "scheduled from onDropped ran"])
    }

    // MARK: Priority order

    func testRunsVisibleFirstThenByDistanceWithTiesInSchedulingOrder() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = Recorder<Int>()
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

    func testGatedJobsAcrossAllWorkersRunInPriorityOrderOnOneWorker() {
        // Every worker is blocked; the jobs queued meanwhile run in priority order once one worker is
        // free (the other stays blocked, so the order is a single sequence).
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let second = occupyWorker(scheduler)
        let order = Recorder<Int>()
        var rng = SplitMix64(seed: 7)
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

    func testRaisingAWaitingJobsPriorityRunsItFirst() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = Recorder<String>()
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
        let order = Recorder<Int>()
        var rng = SplitMix64(seed: seed)
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

    func testFewReprioritisationsKeepTheOrder() {
        checkOrderAfterRandomChanges(count: 300, updates: 25, seed: 11)
        checkOrderAfterRandomChanges(count: 50, updates: 30, seed: 12)
    }

    func testManyReprioritisationsKeepTheOrder() {
        checkOrderAfterRandomChanges(count: 300, updates: 900, seed: 13)
    }

    func testTenThousandWaitingJobsWithHeavyReprioritisation() {
        checkOrderAfterRandomChanges(count: 10_000, updates: 30_000, seed: 14)
    }

    func testReprioritisingBetweenPicksKeepsTheOrder() {
        // Changes land while the worker is picking, alternating with picks.
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = Recorder<Int>()
        let count = 400
        var rng = SplitMix64(seed: 21)
        let priorities = (0..<count).map { _ in randomPriority(&rng) }
        // Each job, when it runs, raises a later job to visible; the expected order is replayed below.
        let jobs = Recorder<DisplayJob>()
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

    // MARK: Cancellation

    func testCancelBeforeStartDropsTheJob() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let ran = Counter()
        let dropped = Counter()
        let job = scheduler.schedule(priority: .visible, onDropped: { dropped.increment() }) { _ in
            ran.increment()
            return .completed
        }
        XCTAssertFalse(job.isCancelled)
        job.cancel()
        job.cancel()
        XCTAssertTrue(job.isCancelled)
        // Dropped from the queue at once, without waiting for a worker.
        XCTAssertEqual(scheduler.queueDepth, 0)
        release.signal()
        scheduler.waitUntilIdle()
        job.cancel()
        XCTAssertEqual(ran.current, 0)
        XCTAssertEqual(dropped.current, 1)
        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.cancelledBeforeStart, 1)
        XCTAssertEqual(statistics.started, 1)  // the gate job
        XCTAssertEqual(statistics.completed, 1)
    }

    func testExternalCancellationCheckDropsBeforeStart() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let stale = Flag()
        let ran = Counter()
        let dropped = Counter()
        let job = scheduler.schedule(
            priority: .visible, isCancelled: { stale.isSet }, onDropped: { dropped.increment() }
        ) { _ in
            ran.increment()
            return .completed
        }
        XCTAssertFalse(job.isCancelled)
        stale.set()
        XCTAssertTrue(job.isCancelled)
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.current, 0)
        XCTAssertEqual(dropped.current, 1)
        XCTAssertEqual(scheduler.statistics.cancelledBeforeStart, 1)
        XCTAssertEqual(scheduler.statistics.started, 1)
    }

    func testCancelWhileRunningIsSeenByTheWork() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let seen = Recorder<Bool>()
        let dropped = Counter()
        let job = scheduler.schedule(priority: .visible, onDropped: { dropped.increment() }) { isCancelled in
            seen.append(isCancelled())
            started.signal()
            _ = waitInJob(proceed)
            let cancelled = isCancelled()
            seen.append(cancelled)
            return cancelled ? .cancelled : .completed
        }
        waitFor(started, "job started")
        XCTAssertEqual(scheduler.runningCount, 1)
        job.cancel()
        proceed.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(seen.values, [false, true])
        XCTAssertEqual(dropped.current, 0)
        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.started, 1)
        XCTAssertEqual(statistics.cancelledWhileRunning, 1)
        XCTAssertEqual(statistics.completed, 0)
        XCTAssertEqual(statistics.cancelledBeforeStart, 0)
        XCTAssertGreaterThanOrEqual(statistics.workMillisecondsCancelled, 0)
        XCTAssertEqual(statistics.workMillisecondsCompleted, 0)
    }

    func testExternalCheckTurningTrueWhileRunningIsSeenByTheWork() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let stale = Flag()
        let seen = Recorder<Bool>()
        scheduler.schedule(priority: .visible, isCancelled: { stale.isSet }) { isCancelled in
            seen.append(isCancelled())
            started.signal()
            _ = waitInJob(proceed)
            seen.append(isCancelled())
            return isCancelled() ? .cancelled : .completed
        }
        waitFor(started, "job started")
        stale.set()
        proceed.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(seen.values, [false, true])
        XCTAssertEqual(scheduler.statistics.cancelledWhileRunning, 1)
    }

    func testThousandJobsCancelledBeforeTheGateOpensNeverRun() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let second = occupyWorker(scheduler)
        let ran = Counter()
        let dropped = Tally(count: 1_000)
        var rng = SplitMix64(seed: 3)
        let jobs = (0..<1_000).map { index in
            scheduler.schedule(priority: randomPriority(&rng), onDropped: { dropped.increment(index) }) { _ in
                ran.increment()
                return .completed
            }
        }
        XCTAssertEqual(scheduler.queueDepth, 1_000)
        for job in jobs { job.cancel() }
        XCTAssertEqual(scheduler.queueDepth, 0)
        first.signal()
        second.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.current, 0)
        XCTAssertEqual(dropped.values, [Int](repeating: 1, count: 1_000))
        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.scheduled, 1_002)
        XCTAssertEqual(statistics.cancelledBeforeStart, 1_000)
        XCTAssertEqual(statistics.started, 2)
        XCTAssertEqual(statistics.completed, 2)
    }

    // MARK: serializesAllDrawing

    /// Schedules `count` jobs of random priority that record their order, the worker they ran on
    /// and the most jobs running at once.
    private func scheduleRecordingJobs(_ scheduler: DisplayScheduler, count: Int, seed: UInt64)
        -> (order: Recorder<Int>, workers: Recorder<Int>, maximumRunning: Counter)
    {
        let running = Counter()
        let maximum = Counter()
        let order = Recorder<Int>()
        let workers = Recorder<Int>()
        var rng = SplitMix64(seed: seed)
        for index in 0..<count {
            scheduler.schedule(priority: randomPriority(&rng)) { _ in
                maximum.raise(to: running.increment())
                order.append(index)
                workers.append(DisplayScheduler.currentWorkerIndex ?? -1)
                running.decrement()
                return .completed
            }
        }
        return (order, workers, maximum)
    }

    func testSerializedDrawingRunsOneJobAtATimeInSchedulingOrder() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        scheduler.serializesAllDrawing = true
        XCTAssertTrue(scheduler.serializesAllDrawing)
        let gateStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        scheduler.schedule(priority: .offscreen(distance: 1)) { _ in
            gateStarted.signal()
            _ = waitInJob(release)
            return .completed
        }
        waitFor(gateStarted, "gate job started")
        // The other worker is free; if it picked anything, order and thread would both show it.
        let count = 60
        let (order, workers, maximum) = scheduleRecordingJobs(scheduler, count: count, seed: 5)
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(order.values, Array(0..<count))
        XCTAssertEqual(maximum.current, 1)
        XCTAssertEqual(Set(workers.values), [0])
        XCTAssertEqual(scheduler.statistics.completed, count + 1)
    }

    func testSerializedDrawingUsesOneWorkerEvenWhenAllWereBusy() {
        // Both workers are busy when the switch turns on and both come back looking for work; only
        // worker 0 may take any.
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let second = occupyWorker(scheduler)
        scheduler.serializesAllDrawing = true
        let count = 200
        let (order, workers, maximum) = scheduleRecordingJobs(scheduler, count: count, seed: 6)
        first.signal()
        second.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(order.values, Array(0..<count))
        XCTAssertEqual(maximum.current, 1)
        XCTAssertEqual(Set(workers.values), [0])
    }

    func testTurningSerializationOffReturnsToPriorityOrder() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        scheduler.serializesAllDrawing = true
        let release = occupyWorker(scheduler)
        let order = Recorder<Int>()
        var rng = SplitMix64(seed: 9)
        let priorities = (0..<100).map { _ in randomPriority(&rng) }
        for (index, priority) in priorities.enumerated() {
            scheduler.schedule(priority: priority) { _ in
                order.append(index)
                return .completed
            }
        }
        scheduler.serializesAllDrawing = false
        XCTAssertFalse(scheduler.serializesAllDrawing)
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(order.values, expectedOrder(priorities, among: Array(priorities.indices)))
    }

    func testTurningSerializationOnSwitchesWaitingJobsToSchedulingOrder() {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = Recorder<Int>()
        var rng = SplitMix64(seed: 10)
        let jobs = (0..<100).map { index in
            scheduler.schedule(priority: randomPriority(&rng)) { _ in
                order.append(index)
                return .completed
            }
        }
        scheduler.serializesAllDrawing = true
        // Priority changes and cancellation while serialized must not disturb the schedule order.
        jobs[50].setPriority(.visible)
        jobs[3].cancel()
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(order.values, Array(0..<100).filter { $0 != 3 })
    }

    func testTurningSerializationOnWaitsForJobsAlreadyRunning() {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let secondFinished = Flag()
        let secondStarted = DispatchSemaphore(value: 0)
        let releaseSecond = DispatchSemaphore(value: 0)
        scheduler.schedule(priority: .visible) { _ in
            secondStarted.signal()
            _ = waitInJob(releaseSecond)
            secondFinished.set()
            return .completed
        }
        waitFor(secondStarted, "second gate started")
        scheduler.serializesAllDrawing = true
        let sawSecondFinished = Recorder<Bool>()
        scheduler.schedule(priority: .visible) { _ in
            sawSecondFinished.append(secondFinished.isSet)
            return .completed
        }
        // A worker is free now, but the serialized job must wait for the second gate as well.
        first.signal()
        releaseSecond.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(sawSecondFinished.values, [true])
    }

    // MARK: Shutdown

    func testShutdownDropsWaitingAndLaterJobsAndIsIdempotent() {
        let scheduler = DisplayScheduler(workerCount: 1)
        let release = occupyWorker(scheduler)
        let ran = Counter()
        let dropped = Counter()
        let waiting = scheduler.schedule(priority: .visible, onDropped: { dropped.increment() }) { _ in
            ran.increment()
            return .completed
        }
        scheduler.shutdown()
        XCTAssertEqual(dropped.current, 1)
        XCTAssertEqual(scheduler.queueDepth, 0)
        let late = scheduler.schedule(priority: .visible, onDropped: { dropped.increment() }) { _ in
            ran.increment()
            return .completed
        }
        XCTAssertEqual(dropped.current, 2)
        scheduler.shutdown()
        waiting.cancel()
        late.cancel()
        XCTAssertEqual(dropped.current, 2)
        // The running job still finishes.
        release.signal()
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.current, 0)
        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.scheduled, 3)
        XCTAssertEqual(statistics.started, 1)
        XCTAssertEqual(statistics.completed, 1)
        XCTAssertEqual(statistics.cancelledBeforeStart, 2)
        scheduler.shutdown()
    }

    func testDeinitShutsDown() {
        var scheduler: DisplayScheduler? = DisplayScheduler(workerCount: 1)
        let release = occupyWorker(scheduler!)
        let dropped = Counter()
        let ran = Counter()
        let job = scheduler!.schedule(priority: .visible, onDropped: { dropped.increment() }) { _ in
            ran.increment()
            return .completed
        }
        scheduler = nil
        XCTAssertEqual(dropped.current, 1)
        release.signal()
        job.cancel()
        XCTAssertEqual(dropped.current, 1)
        XCTAssertEqual(ran.current, 0)
    }

    // MARK: Stress

    func testConcurrentSchedulingReprioritisingAndCancelling() {
        let scheduler = DisplayScheduler(workerCount: 4)
        defer { scheduler.shutdown() }
        let producers = 4
        let perProducer = 500
        let total = producers * perProducer
        let runs = Tally(count: total)
        let drops = Tally(count: total)
        let completions = Tally(count: total)
        let cancellations = Tally(count: total)
        let staleMarks = Tally(count: total)
        let jobs = Recorder<DisplayJob>()
        let producersDone = Counter()
        let firstScheduled = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        for producer in 0..<producers {
            let thread = Thread {
                var rng = SplitMix64(seed: UInt64(100 + producer))
                for k in 0..<perProducer {
                    let id = producer * perProducer + k
                    // Every 13th job's own check is always true: it must be dropped, never run.
                    let alwaysStale = id % 13 == 0
                    // Every 11th job goes stale once running, through its own check: it must end
                    // cancelled.
                    let goesStale = id % 11 == 0
                    let job = scheduler.schedule(
                        priority: randomPriority(&rng),
                        isCancelled: { alwaysStale || staleMarks.value(at: id) > 0 },
                        onDropped: { drops.increment(id) }
                    ) { isCancelled in
                        runs.increment(id)
                        if goesStale { staleMarks.increment(id) }
                        var sum = 0
                        var outcome = DisplayJobOutcome.completed
                        for step in 0..<(id % 40) * 50 {
                            sum &+= step
                            if step % 100 == 0 && isCancelled() {
                                outcome = .cancelled
                                break
                            }
                        }
                        if isCancelled() || sum < 0 { outcome = .cancelled }
                        if outcome == .cancelled { cancellations.increment(id) } else { completions.increment(id) }
                        return outcome
                    }
                    jobs.append(job)
                    if k == 0 && producer == 0 { firstScheduled.signal() }
                }
                producersDone.increment()
                finished.signal()
            }
            thread.start()
        }

        let mutator = Thread {
            var rng = SplitMix64(seed: 99)
            _ = waitInJob(firstScheduled)
            var operations = 0
            // Keeps changing things while producers run, then a little longer.
            while producersDone.current < producers || operations < 3_000 {
                let all = jobs.values
                let job = all[Int(rng.next() % UInt64(all.count))]
                switch rng.next() % 10 {
                case 0, 1: job.cancel()
                case 2 where operations % 50 == 0: scheduler.serializesAllDrawing.toggle()
                default: job.setPriority(randomPriority(&rng))
                }
                operations += 1
            }
            scheduler.serializesAllDrawing = false
            finished.signal()
        }
        mutator.start()

        for _ in 0...producers { waitFor(finished, "producer or mutator finished") }
        scheduler.waitUntilIdle()

        let statistics = scheduler.statistics
        XCTAssertEqual(statistics.scheduled, total)
        XCTAssertEqual(
            statistics.completed + statistics.cancelledBeforeStart + statistics.cancelledWhileRunning, total)
        XCTAssertEqual(statistics.started, statistics.completed + statistics.cancelledWhileRunning)
        XCTAssertEqual(scheduler.queueDepth, 0)
        XCTAssertEqual(scheduler.runningCount, 0)
        let runCounts = runs.values
        let dropCounts = drops.values
        XCTAssertEqual(runCounts.reduce(0, +), statistics.started)
        XCTAssertEqual(dropCounts.reduce(0, +), statistics.cancelledBeforeStart)
        let cancellationCounts = cancellations.values
        XCTAssertEqual(completions.values.reduce(0, +), statistics.completed)
        XCTAssertEqual(cancellationCounts.reduce(0, +), statistics.cancelledWhileRunning)
        XCTAssertGreaterThan(statistics.cancelledWhileRunning, 0)
        for id in 0..<total {
            // Each job either ran once or was dropped once, never both, never twice.
            if runCounts[id] + dropCounts[id] != 1 || runCounts[id] > 1 || dropCounts[id] > 1 {
                XCTFail("job \(id): ran \(runCounts[id]) times, dropped \(dropCounts[id]) times")
                break
            }
            if id % 13 == 0 && runCounts[id] != 0 {
                XCTFail("job \(id) ran although its own check was always true")
                break
            }
            if id % 11 == 0 && runCounts[id] == 1 && cancellationCounts[id] != 1 {
                XCTFail("job \(id) went stale while running but did not see it")
                break
            }
        }
    }

    func testHeldWakeupsLeaveJobsQueuedUntilReleased() {
        let scheduler = DisplayScheduler(workerCount: 2, name: "held")
        // Wait (yielding, not sleeping) until both workers are asleep: a worker still on its way to
        // sleep would take the jobs itself, which is by design.
        while scheduler.parkedWorkerCount < 2 { sched_yield() }
        let ran = DrawCounter()
        scheduler.holdWakeups()
        for _ in 0..<5 { scheduler.schedule(priority: .visible) { _ in ran.increment(); return .completed } }
        XCTAssertEqual(scheduler.queueDepth, 5, "no parked worker was woken")
        XCTAssertEqual(ran.count, 0)
        scheduler.releaseWakeups()
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.count, 5)
        scheduler.shutdown()
    }
}
