import Foundation
import Synchronization
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Many threads scheduling, re-prioritising and cancelling at once.
@MainActor
final class DisplaySchedulerStressTests: XCTestCase {
    // MARK: Stress

    func testConcurrentSchedulingReprioritisingAndCancelling() async {
        let scheduler = DisplayScheduler(workerCount: 4)
        defer { scheduler.shutdown() }
        let producers = 4
        let perProducer = 500
        let total = producers * perProducer
        let runs = SharedTally(count: total)
        let drops = SharedTally(count: total)
        let completions = SharedTally(count: total)
        let cancellations = SharedTally(count: total)
        let staleMarks = SharedTally(count: total)
        let jobs = SharedRecorder<DisplayJob>()
        let producersDone = SharedCounter()
        let firstScheduled = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        for producer in 0..<producers {
            let thread = Thread {
                var rng = SeededRandom(seed: UInt64(100 + producer))
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
            var rng = SeededRandom(seed: 99)
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
}
