import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// The dialogs' contracts, each broken in a child process that must trap with its message.
@Suite struct DialogContractExitTests {
    @Test func presentingAnAlertTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let (host, _) = makeHost()
                let alert = Alert(title: "Sign out?", buttons: [.cancel("Cancel")])
                host.presentAlert(alert)
                alert.dismiss()
                host.presentAlert(alert)
            }
        }
        ContractTrap.expectMessage(result, "Alert: an alert is presented once; make a new one to ask again")
    }

    @Test func presentingASheetFromAControllerNotOnScreenTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                _ = NodeController(node: Node()).presentSheet(NodeController(node: Node()))
            }
        }
        ContractTrap.expectMessage(result, "NodeController.presentSheet: the controller is not on screen")
    }

    @Test func showingAControllerThatIsOnScreenInASheetTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let (host, _) = makeHost()
                let root = NodeController(node: Node())
                host.setRootController(root)
                host.presentSheet(Sheet(controller: root))
            }
        }
        ContractTrap.expectMessage(result, "Sheet: the controller is shown elsewhere already")
    }
}
