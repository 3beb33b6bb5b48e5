import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// `NodeHost`'s contracts, each broken in a child process that must trap with its message.
@Suite struct HostContractExitTests {
    @Test func aControllerOnANavigationStackCannotBeTheRoot() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let (host, _) = makeHost()
                let child = NodeController(node: Node())
                let navigation = NavigationController(rootController: child)
                withExtendedLifetime(navigation) { host.setRootController(child) }
            }
        }
        ContractTrap.expectMessage(result, "NodeHost.setRootController: the controller belongs to a navigation controller")
    }

    @Test func runningAFrameOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let host = UncheckedSendable(makeHost().0)
                onBackgroundThread { callIgnoringIsolation { _ = host.value.runFrame(time: 1, events: []) } }
            }
        }
        ContractTrap.expectMessage(result, "NodeHost.runFrame must run on the UI thread")
    }

    @Test func readingTheAnimatorOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let animator = UncheckedSendable(makeHost().0.runtime.animator)
                onBackgroundThread { callIgnoringIsolation { _ = animator.value.count } }
            }
        }
        ContractTrap.expectMessage(result, "Animator.count must run on the UI thread")
    }

    @Test func anOverlaysContentMustNotBeInATreeAlready() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let (host, _) = makeHost()
                let root = Node()
                let child = Node()
                root.addSubnode(child)
                host.setRootNode(root)
                host.presentOverlay(child, kind: .popup)
            }
        }
        ContractTrap.expectMessage(result, "NodeHost.presentOverlay: the content is in a tree already")
    }
}
