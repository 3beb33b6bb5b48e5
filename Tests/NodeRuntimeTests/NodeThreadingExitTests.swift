import Compositor
import Foundation
import Testing
@testable import NodeRuntime

/// Reading `layer` off the UI thread is a precondition failure, in release builds too.
@Suite struct NodeThreadingExitTests {
    @Test func layerAccessOffTheUIThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            UIThread.claim()
            let node = UncheckedSendable(Node())
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = node.value.layer  // traps
                done.signal()
            }
            done.wait()
        }
    }

    @Test func addingASubnodeToALoadedNodeOffTheUIThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            UIThread.claim()
            let node = Node()
            _ = node.layer
            let box = UncheckedSendable(node)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                box.value.addSubnode(Node())  // traps
                done.signal()
            }
            done.wait()
        }
    }

    @Test func layerAccessOnTheUIThreadWorks() async {
        await #expect(processExitsWith: .success) {
            UIThread.claim()
            let node = Node()
            node.addSubnode(Node())
            _ = node.layer
        }
    }
}
