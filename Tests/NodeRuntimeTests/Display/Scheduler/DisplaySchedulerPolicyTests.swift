import Foundation
import Synchronization
import XCTest
@testable import NodeRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The worker policy: each worker runs at the policy's priority (applied before its next job), and
/// at most the policy's number of workers run at once.
@MainActor
final class DisplaySchedulerPolicyTests: XCTestCase {
    /// Runs one job and returns the worker thread's nice value and scheduling class.
    private func workerPriority(_ scheduler: DisplayScheduler) -> (nice: Int32, policy: Int32) {
        let result = Mutex<(Int32, Int32)>((-100, -100))
        scheduler.schedule(priority: .visible) { _ in
            errno = 0
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            result.withLock { $0 = (nice, sched_getscheduler(0)) }
            return .completed
        }
        scheduler.waitUntilIdle()
        return result.withLock { $0 }
    }

    func testWorkersRunAtThePolicysPriority() async {
        let scheduler = DisplayScheduler(workerCount: 1)
        defer { scheduler.shutdown() }
        XCTAssertEqual(scheduler.workerPolicy, .default)
        XCTAssertEqual(workerPriority(scheduler).nice, 5, "nice 5 by default")
        XCTAssertEqual(workerPriority(scheduler).policy, SCHED_OTHER)
        scheduler.workerPolicy = .init(priority: .idle)
        XCTAssertEqual(workerPriority(scheduler).policy, 5, "SCHED_IDLE")
        scheduler.workerPolicy = .init(priority: .nice(12))
        let back = workerPriority(scheduler)
        XCTAssertEqual(back.policy, SCHED_OTHER)
        XCTAssertEqual(back.nice, 12)
    }

    func testAtMostTheActiveLimitOfWorkersRunAtOnce() async {
        let scheduler = DisplayScheduler(workerCount: 3)
        defer { scheduler.shutdown() }
        scheduler.workerPolicy = .init(maximumActiveWorkers: 1)
        let gate = Gate()
        let ran = Atomic<Int>(0)
        scheduler.schedule(priority: .visible) { _ in gate.pass(); ran.add(1, ordering: .relaxed); return .completed }
        gate.waitUntilEntered()
        for _ in 0..<3 {
            scheduler.schedule(priority: .visible) { _ in ran.add(1, ordering: .relaxed); return .completed }
        }
        // The limit is checked under the scheduler's lock at every pick: with one job running, the
        // other two idle workers may not take the three waiting ones.
        XCTAssertEqual(scheduler.runningCount, 1)
        XCTAssertEqual(scheduler.queueDepth, 3)
        gate.open()
        scheduler.waitUntilIdle()
        XCTAssertEqual(ran.load(ordering: .relaxed), 4, "the waiting jobs all run once the first is done")
        // Lifting the limit lets every worker take jobs again.
        scheduler.workerPolicy = .default
        let gates = (0..<3).map { _ in Gate() }
        for gate in gates { scheduler.schedule(priority: .visible) { _ in gate.pass(); return .completed } }
        for gate in gates { gate.waitUntilEntered() }
        XCTAssertEqual(scheduler.runningCount, 3)
        for gate in gates { gate.open() }
        scheduler.waitUntilIdle()
    }
}
