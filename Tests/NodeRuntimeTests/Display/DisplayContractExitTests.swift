import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// The display pipeline's contracts, each broken in a child process that must trap with its message.
@Suite struct DisplayContractExitTests {
    @Test func displayingNowOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let node = UncheckedSendable(ColorNode(.white))
                onBackgroundThread { callIgnoringIsolation { node.value.displayNowAndWait() } }
            }
        }
        ContractTrap.expectMessage(result, "Node.displayNowAndWait must run on the UI thread")
    }
}
