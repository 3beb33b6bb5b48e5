import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// Input's contracts (focus, pointer, gesture recognizers), each broken in a child process that must
/// trap with its message.
@Suite struct InputContractExitTests {
    @Test func focusingOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            let host = UncheckedSendable(makeHost().0)
            onBackgroundThread { host.value.focus(nil) }
        }
        ContractTrap.expectMessage(result, "NodeHost.focus must run on the UI thread")
    }

    @Test func readingTheHoveredNodeOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            let host = UncheckedSendable(makeHost().0)
            onBackgroundThread { _ = host.value.hoveredNode }
        }
        ContractTrap.expectMessage(result, "NodeHost.hoveredNode must run on the UI thread")
    }

    @Test func makingARecognizerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            onBackgroundThread { _ = TapGestureRecognizer() }
        }
        ContractTrap.expectMessage(result, "GestureRecognizer.init must run on the UI thread")
    }

    @Test func attachingARecognizerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            let node = UncheckedSendable(Node()), recognizer = UncheckedSendable(TapGestureRecognizer())
            onBackgroundThread { node.value.addGestureRecognizer(recognizer.value) }
        }
        ContractTrap.expectMessage(result, "Node.addGestureRecognizer must run on the UI thread")
    }
}
