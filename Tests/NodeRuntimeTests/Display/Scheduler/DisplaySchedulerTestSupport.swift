import Foundation
import Synchronization
import TesseraRandom
import XCTest
@testable import NodeRuntime

// Helpers shared by the DisplayScheduler*Tests files.
//
// Ordering in those tests comes from semaphores only: a "gate" job occupies a worker until the test
// releases it, so everything scheduled meanwhile is waiting when the worker picks again. No test
// sleeps or measures time.

/// Upper bound for any single wait. It exists only so that a scheduler bug (a lost wakeup, a job
/// that never runs) fails the test instead of hanging the whole run; nothing is asserted about time.
let deadlockGuard: DispatchTimeInterval = .seconds(120)

/// Waits for `semaphore`; fails (rather than hangs) if it is never signalled.
func waitFor(
    _ semaphore: DispatchSemaphore, _ what: String, file: StaticString = #filePath, line: UInt = #line
) {
    if semaphore.wait(timeout: .now() + deadlockGuard) == .timedOut {
        XCTFail("never happened: \(what) (deadlock?)", file: file, line: line)
    }
}

/// Same, for use inside job closures, where failing is left to the test thread.
func waitInJob(_ semaphore: DispatchSemaphore) -> Bool {
    semaphore.wait(timeout: .now() + deadlockGuard) == .success
}

// The shared test state below is guarded by NSLock rather than Synchronization.Mutex: on Linux, Mutex
// is invisible to ThreadSanitizer and would make the TSan run report false races.

/// An append-only list shared between threads.
final class SharedRecorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []  // guarded by lock
    func append(_ element: Element) { lock.withLock { items.append(element) } }
    var values: [Element] { lock.withLock { items } }
}

/// A per-index counter shared between threads.
final class SharedTally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int]  // guarded by lock
    init(count: Int) { counts = [Int](repeating: 0, count: count) }
    func increment(_ index: Int) { lock.withLock { counts[index] += 1 } }
    func value(at index: Int) -> Int { lock.withLock { counts[index] } }
    var values: [Int] { lock.withLock { counts } }
}

final class SharedCounter: Sendable {
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

final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}


/// A priority drawn from a small set of values so that ties (and NaN) are common.
func randomPriority(_ rng: inout SeededRandom) -> DisplayPriority {
    switch rng.next() % 10 {
    case 0, 1: return .visible
    case 2: return .offscreen(distance: .nan)
    default: return .offscreen(distance: Double(rng.next() % 16) * 25)
    }
}

/// Indices in the order the scheduler must run them: most urgent first, ties by scheduling order.
func expectedOrder(_ priorities: [DisplayPriority], among indices: [Int]) -> [Int] {
    indices.sorted { a, b in
        priorities[a] != priorities[b] ? priorities[a] > priorities[b] : a < b
    }
}

/// Occupies one worker with a job that returns only when the returned semaphore is signalled;
/// returns once that job is running, so later jobs are known to be waiting.
func occupyWorker(_ scheduler: DisplayScheduler, file: StaticString = #filePath, line: UInt = #line)
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
