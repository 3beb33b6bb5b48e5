import Compositor
import Foundation
import Testing
import TestSupport
@testable import NodeRuntime

/// Reading `layer` off the UI thread is a precondition failure, in release builds too; so is reaching
/// a node's state from inside a draw function. Each trap is recognised by its message.
@Suite struct NodeThreadingExitTests {
    @Test func layerAccessOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let node = UncheckedSendable(Node())
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    callIgnoringIsolation { _ = node.value.layer }  // traps
                    done.signal()
                }
                done.wait()
            }
        }
        ContractTrap.expectMessage(result, "Node.layer must run on the UI thread")
    }

    /// Nodes are `Sendable`, so the compiler lets draw parameters carry one; the runtime check catches
    /// the draw that reads it.
    @Test func aDrawThatReadsNodeStateTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let host = Node()
                host.frame = Rect(x: 0, y: 0, width: 8, height: 8)
                let smuggler = SmuggledNodeDrawer()
                smuggler.frame = Rect(x: 0, y: 0, width: 8, height: 8)
                smuggler.box.node.withLock { $0 = UncheckedSendable(host) }
                host.addSubnode(smuggler)
                smuggler.displaysAsynchronously = false
                host.displayNowAndWait()  // the draw reads `host.frame`: traps
            }
        }
        ContractTrap.expectMessage(result, "Tessera: a draw function read or wrote node state (Node)")
    }

    @Test func aDrawThatReadsNodeStateOnAWorkerTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let smuggler = SmuggledNodeDrawer()
                smuggler.frame = Rect(x: 0, y: 0, width: 8, height: 8)
                smuggler.box.node.withLock { $0 = UncheckedSendable(smuggler) }
                let parameters = smuggler.drawParameters()
                let done = DispatchSemaphore(value: 0)
                Runtime.shared.scheduler.schedule(priority: .visible) { _ in
                    // The pipeline's own wrapping of a draw on a worker.
                    _ = DrawScope.run { SmuggledNodeDrawer.display(parameters, info: DrawInfo(bounds: .zero, scale: 1)) }
                    done.signal()
                    return .completed
                }
                done.wait()
            }
        }
        ContractTrap.expectMessage(result, "Tessera: a draw function read or wrote node state (SmuggledNodeDrawer)")
    }

    @Test func aDrawThatUsesOnlyItsParametersWorks() async {
        await #expect(processExitsWith: .success) {
            await MainActor.run {
                let smuggler = SmuggledNodeDrawer()
                smuggler.frame = Rect(x: 0, y: 0, width: 8, height: 8)
                smuggler.displayNowAndWait()  // nothing smuggled: draws
                precondition(smuggler.layer.contents != nil)
            }
        }
    }

    @Test func layerAccessOnTheUIThreadWorks() async {
        await #expect(processExitsWith: .success) {
            await MainActor.run {
                let node = Node()
                node.addSubnode(Node())
                _ = node.layer
            }
        }
    }
}

/// Carries a node past the compiler's `Sendable` check, as a careless app might.
final class NodeSmugglingBox: Sendable {
    let node = Locked<UncheckedSendable<Node>?>(nil)
}

/// Draws from parameters that smuggle a node, and reads its frame while drawing when there is one.
final class SmuggledNodeDrawer: Node, NodeDrawing, @unchecked Sendable {
    let box = NodeSmugglingBox()
    func drawParameters() -> NodeSmugglingBox { box }
    static func draw(_ box: NodeSmugglingBox, in context: inout BitmapContext, info: DrawInfo) {
        if let smuggled = box.node.withLock({ $0 }) {
            _ = smuggled.value.frame  // node state from inside a draw
        }
        context.fill(info.bounds, color: .white)
    }
}
