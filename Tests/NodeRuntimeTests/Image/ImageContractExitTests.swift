import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// An image node's state is out of a draw function's reach: reading it while drawing traps, naming it.
@Suite struct ImageContractExitTests {
    @Test func aDrawThatReadsAnImageNodesSourceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let image = ImageNode()
            DrawScope.run { _ = image.source }  // as if from inside a draw function
        }
        ContractTrap.expectMessage(result, "Tessera: a draw function read or wrote node state (ImageNode)")
    }
}
