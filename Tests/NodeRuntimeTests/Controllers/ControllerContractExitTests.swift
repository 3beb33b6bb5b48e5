import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// The node controllers' contracts, each broken in a child process that must trap with its message.
@Suite struct ControllerContractExitTests {
    @Test func pushingAControllerTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let navigation = NavigationController()
                let child = NodeController(node: Node())
                navigation.push(child, animated: false)
                navigation.push(child, animated: false)
            }
        }
        ContractTrap.expectMessage(result, "NavigationController.push: the controller is already on a navigation stack")
    }

    @Test func pushingAControllerOfAnotherStackTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let child = NodeController(node: Node())
                let first = NavigationController(rootController: child)
                withExtendedLifetime(first) { NavigationController().push(child, animated: false) }
            }
        }
        ContractTrap.expectMessage(result, "NavigationController.push: the controller is already on a navigation stack")
    }

    @Test func aNavigationControllerPushingItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let navigation = NavigationController()
                navigation.push(navigation, animated: false)
            }
        }
        ContractTrap.expectMessage(result, "NavigationController.push: a navigation controller cannot push itself")
    }

    @Test func aTabControllerWithoutControllersTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                _ = TabController(controllers: [], tabBar: Node())
            }
        }
        ContractTrap.expectMessage(result, "TabController needs at least one controller")
    }

    @Test func makingAControllerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                onBackgroundThread { callIgnoringIsolation { _ = NodeController(node: Node()) } }
            }
        }
        ContractTrap.expectMessage(result, "NodeController.init must run on the UI thread")
    }
}
