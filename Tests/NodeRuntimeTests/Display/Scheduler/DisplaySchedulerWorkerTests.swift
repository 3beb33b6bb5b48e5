import Foundation
import Synchronization
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Running jobs on the worker pool: counts, threads, serial mode, wakeups and shutdown.
@MainActor
final class DisplaySchedulerWorkerTests: XCTestCase {
    // MARK: Running

    func testRunsEveryJobExactlyOnce() async {
        let scheduler = DisplayScheduler(workerCount: 4)
        defer { scheduler.shutdown() }
        XCTAssertEqual(scheduler.workerCount, 4)
        let count = 500
        let runs = SharedTally(count: count)
        var rng = SeededRandom(seed: 1)
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

    func testWorkerCountIsAtLeastOne() async {
        let scheduler = DisplayScheduler(workerCount: 0)
        defer { scheduler.shutdown() }
        XCTAssertEqual(scheduler.workerCount, 1)
        let ran = SharedCounter()
        scheduler.schedule(priority: .visible) { _ in ran.increment(); return .completed }
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.current, 1)
        XCTAssertGreaterThanOrEqual(DisplayScheduler().workerCount, 1)
    }

    func testWorkerIndexAndThreadNames() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let indices = SharedRecorder<Int?>()
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

    func testWaitUntilIdleReturnsAtOnceWhenNothingIsScheduled() async {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        scheduler.waitUntilIdle()
        scheduler.waitUntilIdle()
        XCTAssertEqual(scheduler.statistics, DisplayScheduler.Statistics())
    }

    func testQueueDepthAndRunningCount() async {
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

    func testTwoWorkersRunJobsAtTheSameTime() async {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let aStarted = DispatchSemaphore(value: 0)
        let bStarted = DispatchSemaphore(value: 0)
        let sawOther = SharedRecorder<String>()
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

    func testCallbacksMayCallBackIntoTheScheduler() async {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let events = SharedRecorder<String>()
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
    // MARK: serializesAllDrawing

    /// Schedules `count` jobs of random priority that record their order, the worker they ran on
    /// and the most jobs running at once.
    private func scheduleRecordingJobs(_ scheduler: DisplayScheduler, count: Int, seed: UInt64)
        -> (order: SharedRecorder<Int>, workers: SharedRecorder<Int>, maximumRunning: SharedCounter)
    {
        let running = SharedCounter()
        let maximum = SharedCounter()
        let order = SharedRecorder<Int>()
        let workers = SharedRecorder<Int>()
        var rng = SeededRandom(seed: seed)
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

    func testSerializedDrawingRunsOneJobAtATimeInSchedulingOrder() async {
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

    func testSerializedDrawingUsesOneWorkerEvenWhenAllWereBusy() async {
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

    func testTurningSerializationOffReturnsToPriorityOrder() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        scheduler.serializesAllDrawing = true
        let release = occupyWorker(scheduler)
        let order = SharedRecorder<Int>()
        var rng = SeededRandom(seed: 9)
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

    func testTurningSerializationOnSwitchesWaitingJobsToSchedulingOrder() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        let release = occupyWorker(scheduler)
        let order = SharedRecorder<Int>()
        var rng = SeededRandom(seed: 10)
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

    func testTurningSerializationOnWaitsForJobsAlreadyRunning() async {
        let scheduler = DisplayScheduler(workerCount: 2)
        defer { scheduler.shutdown() }
        let first = occupyWorker(scheduler)
        let secondFinished = SharedFlag()
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
        let sawSecondFinished = SharedRecorder<Bool>()
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

    func testShutdownDropsWaitingAndLaterJobsAndIsIdempotent() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        let release = occupyWorker(scheduler)
        let ran = SharedCounter()
        let dropped = SharedCounter()
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

    func testDeinitShutsDown() async {
        var scheduler: DisplayScheduler? = DisplayScheduler(workerCount: 1)
        let release = occupyWorker(scheduler!)
        let dropped = SharedCounter()
        let ran = SharedCounter()
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

    // MARK: Wakeups
    func testHeldWakeupsLeaveJobsQueuedUntilReleased() async {
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
