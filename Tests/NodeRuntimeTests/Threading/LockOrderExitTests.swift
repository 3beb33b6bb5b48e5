import Testing
import TestSupport
@testable import NodeRuntime

/// The lock-order check (debug builds): taking one `Locked` while holding another traps.
@Suite struct LockOrderExitTests {
    #if DEBUG
    @Test func takingALockWhileHoldingOneTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let outer = Locked(0), inner = Locked(0)
            outer.withLock { _ in inner.withLock { $0 += 1 } }  // traps
        }
        ContractTrap.expectMessage(result, "Tessera lock order: a lock taken at NodeRuntimeTests/LockOrderExitTests.swift:")
        ContractTrap.expectMessage(result, "every Locked is a leaf (see Locked.swift)")
    }
    #endif

    @Test func locksTakenOneAfterAnotherWork() async {
        await #expect(processExitsWith: .success) {
            let first = Locked(0), second = Locked(0)
            first.withLock { $0 += 1 }
            second.withLock { $0 += 1 }
        }
    }
}
