import Foundation
import Testing
import TestSupport
@testable import NodeRuntime

/// The display scheduler's contracts, each broken in a child process that must trap with its message.
@Suite struct SchedulerContractExitTests {
    @Test func waitingUntilIdleFromAWorkerTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = DisplayScheduler(workerCount: 1, name: "contract")
            let done = DispatchSemaphore(value: 0)
            scheduler.schedule(priority: .visible) { _ in
                scheduler.waitUntilIdle()  // traps: the worker would wait for itself
                done.signal()
                return .completed
            }
            done.wait()
        }
        ContractTrap.expectMessage(
            result, "DisplayScheduler.waitUntilIdle() called from one of its own workers would wait for itself")
    }

    @Test func pushingAnIDThatIsInTheHeapTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var heap = IndexedHeap<UInt64>(id: { $0 }, precedes: { $0 < $1 })
            heap.push(7)
            heap.push(7)
        }
        ContractTrap.expectMessage(result, "IndexedHeap.push: the id is already in the heap")
    }
}
