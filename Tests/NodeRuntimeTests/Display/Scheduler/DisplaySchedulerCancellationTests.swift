import Foundation
import Synchronization
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Cancelling jobs before and while they run, by the handle and by the caller's own check.
@MainActor
final class DisplaySchedulerCancellationTests: XCTestCase {
    // MARK: Cancellation

    func testCancelBeforeStartDropsTheJob() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let ran = SharedCounter()
        let dropped = SharedCounter()
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

    func testExternalCancellationCheckDropsBeforeStart() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let stale = SharedFlag()
        let ran = SharedCounter()
        let dropped = SharedCounter()
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

    func testCancelWhileRunningIsSeenByTheWork() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let seen = SharedRecorder<Bool>()
        let dropped = SharedCounter()
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

    func testExternalCheckTurningTrueWhileRunningIsSeenByTheWork() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let stale = SharedFlag()
        let seen = SharedRecorder<Bool>()
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

    func testThousandJobsCancelledBeforeTheGateOpensNeverRun() async {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let second = occupyWorker(scheduler)
        let ran = SharedCounter()
        let dropped = SharedTally(count: 1_000)
        var rng = SeededRandom(seed: 3)
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
}
