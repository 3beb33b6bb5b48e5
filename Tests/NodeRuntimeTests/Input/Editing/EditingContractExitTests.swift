import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// `EditableTextNode`'s contracts, each broken in a child process that must trap with its message.
@Suite struct EditingContractExitTests {
    @Test func readingTheSelectionOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let field = UncheckedSendable(EditableTextNode(text: "hello"))
                onBackgroundThread { callIgnoringIsolation { _ = field.value.selectedRange } }
            }
        }
        ContractTrap.expectMessage(result, "EditableTextNode.selectedRange must run on the UI thread")
    }

    @Test func undoingOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let field = UncheckedSendable(EditableTextNode(text: "hello"))
                onBackgroundThread { callIgnoringIsolation { field.value.undo() } }
            }
        }
        ContractTrap.expectMessage(result, "EditableTextNode.undo must run on the UI thread")
    }
}
