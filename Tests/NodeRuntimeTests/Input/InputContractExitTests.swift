import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// Input's contracts (focus, pointer, gesture recognizers), each broken in a child process that must
/// trap with its message.
@Suite struct InputContractExitTests {
    @Test func focusingOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let host = UncheckedSendable(makeHost().0)
                onBackgroundThread { callIgnoringIsolation { host.value.focus(nil) } }
            }
        }
        ContractTrap.expectMessage(result, "NodeHost.focus must run on the UI thread")
    }

    @Test func readingTheHoveredNodeOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let host = UncheckedSendable(makeHost().0)
                onBackgroundThread { callIgnoringIsolation { _ = host.value.hoveredNode } }
            }
        }
        ContractTrap.expectMessage(result, "NodeHost.hoveredNode must run on the UI thread")
    }

    @Test func makingARecognizerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                onBackgroundThread { callIgnoringIsolation { _ = TapGestureRecognizer() } }
            }
        }
        ContractTrap.expectMessage(result, "GestureRecognizer.init must run on the UI thread")
    }

    @Test func attachingARecognizerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let node = UncheckedSendable(Node()), recognizer = UncheckedSendable(TapGestureRecognizer())
                onBackgroundThread { callIgnoringIsolation { node.value.addGestureRecognizer(recognizer.value) } }
            }
        }
        ContractTrap.expectMessage(result, "Node.addGestureRecognizer must run on the UI thread")
    }
}
