import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// The threading helpers' contracts, each broken in a child process that must trap with its message.
@Suite struct ThreadingContractExitTests {
    @Test func drainingTheMainQueueOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let queue = MainQueue()
                onBackgroundThread { callIgnoringIsolation { queue.drain() } }
            }
        }
        ContractTrap.expectMessage(result, "MainQueue.drain must run on the UI thread")
    }

    @Test func readingAUIThreadBoundValueOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let bound = UIThreadBound(Node())
                onBackgroundThread { callIgnoringIsolation { _ = bound.value } }
            }
        }
        ContractTrap.expectMessage(result, "UIThreadBound.value must run on the UI thread")
    }
}
