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

    /// The compiler lets a `Sendable` wrapper smuggle a node into draw parameters; the runtime check
    /// catches the draw that reads it.
    @Test func aDrawThatReadsNodeStateTraps() async {
        await #expect(processExitsWith: .failure) {
            UIThread.claim()
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

    @Test func aDrawThatReadsNodeStateOnAWorkerTraps() async {
        await #expect(processExitsWith: .failure) {
            UIThread.claim()
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

    @Test func aDrawThatUsesOnlyItsParametersWorks() async {
        await #expect(processExitsWith: .success) {
            UIThread.claim()
            let smuggler = SmuggledNodeDrawer()
            smuggler.frame = Rect(x: 0, y: 0, width: 8, height: 8)
            smuggler.displayNowAndWait()  // nothing smuggled: draws
            precondition(smuggler.layer.contents != nil)
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

/// Carries a node past the compiler's `Sendable` check, as a careless app might.
final class NodeSmugglingBox: Sendable {
    let node = Locked<UncheckedSendable<Node>?>(nil)
}

/// Draws from parameters that smuggle a node, and reads its frame while drawing when there is one.
final class SmuggledNodeDrawer: Node, NodeDrawing {
    let box = NodeSmugglingBox()
    func drawParameters() -> NodeSmugglingBox { box }
    static func draw(_ box: NodeSmugglingBox, in context: inout BitmapContext, info: DrawInfo) {
        if let smuggled = box.node.withLock({ $0 }) {
            _ = smuggled.value.frame  // node state from inside a draw
        }
        context.fill(info.bounds, color: .white)
    }
}

/// The lock-order check (debug builds): taking one `Locked` while holding another traps.
@Suite struct LockOrderExitTests {
    #if DEBUG
    @Test func takingALockWhileHoldingOneTraps() async {
        await #expect(processExitsWith: .failure) {
            let outer = Locked(0), inner = Locked(0)
            outer.withLock { _ in inner.withLock { $0 += 1 } }  // traps
        }
    }
    #endif

    @Test func locksTakenOneAfterAnotherWork() async {
        await #expect(processExitsWith: .success) {
            let first = Locked(0), second = Locked(0)
            first.withLock { $0 += 1 }
            second.withLock { $0 += 1 }
        }
    }
}
