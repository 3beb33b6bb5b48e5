import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// A text node's state is out of a draw function's reach: reading it while drawing traps, naming it.
@Suite struct TextContractExitTests {
    @Test func aDrawThatReadsATextNodesTextTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let text = TextNode("hello")
            DrawScope.run { _ = text.attributedText }  // as if from inside a draw function
        }
        ContractTrap.expectMessage(result, "Tessera: a draw function read or wrote node state (TextNode)")
    }
}
