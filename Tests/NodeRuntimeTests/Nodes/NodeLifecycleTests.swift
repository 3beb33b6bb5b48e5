import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// The lifecycle a node goes through on its way to the screen, with the thread of every step.
@MainActor
final class NodeLifecycleTests: XCTestCase {
    final class LifecycleNode: Node, NodeDrawing, @unchecked Sendable {
        let log: EventLog
        init(log: EventLog) {
            self.log = log
            super.init()
            log.record("init")
        }
        override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
            log.record("layoutSpecThatFits")
            return nil
        }
        override func didEnterPreloadState() { log.record("didEnterPreloadState") }
        override func didLoad() { log.record("didLoad") }
        override func didEnterDisplayState() { log.record("didEnterDisplayState") }
        override func layout() { log.record("layout") }
        override func didEnterVisibleState() { log.record("didEnterVisibleState") }
        override func didExitVisibleState() { log.record("didExitVisibleState") }
        override func didExitDisplayState() { log.record("didExitDisplayState") }
        override func didExitPreloadState() { log.record("didExitPreloadState") }
        override func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {
            log.record("interfaceStateDidChange")
        }
        func drawParameters() -> Color { .white }
        static func draw(_ parameters: Color, in context: inout BitmapContext, info: DrawInfo) {
            context.fill(info.bounds, color: parameters)
        }
    }

    func testLifecycleOrderAndThreads() async {
        let (host, _) = makeHost()
        let log = EventLog()
        // Made and measured on a background thread.
        let box = onBackgroundThread { () -> UncheckedSendable<LifecycleNode> in
            let node = LifecycleNode(log: log)
            _ = node.layoutThatFits(SizeRange(min: .zero, max: Size(width: 400, height: 300)))
            return UncheckedSendable(node)
        }
        let node = box.value
        host.setRootNode(node)
        let firstOccurrences = log.all.filter { $0.0 != "interfaceStateDidChange" }
            .reduce(into: [(String, Bool)]()) { result, entry in
                if !result.contains(where: { $0.0 == entry.0 }) { result.append(entry) }
            }
        XCTAssertEqual(firstOccurrences.map(\.0), [
            "init", "layoutSpecThatFits", "didEnterPreloadState", "didLoad", "didEnterDisplayState", "layout",
            "didEnterVisibleState",
        ])
        // One change call per step: measure, preload, display, visible.
        XCTAssertEqual(log.all.filter { $0.0 == "interfaceStateDidChange" }.count, 4)
        let threads = Dictionary(firstOccurrences, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(threads["init"], false, "init ran on the background thread")
        XCTAssertEqual(threads["layoutSpecThatFits"], false, "measured on the background thread")
        for hook in ["didEnterPreloadState", "didLoad", "didEnterDisplayState", "layout", "didEnterVisibleState"] {
            XCTAssertEqual(threads[hook], true, "\(hook) runs on the UI thread")
        }
        XCTAssertEqual(log.names.filter { $0 == "didLoad" }.count, 1)

        // Leaving: visible, display, preload, in that order, then one state-change call.
        let before = log.names.count
        host.setRootNode(nil)
        XCTAssertEqual(Array(log.names[before...]), [
            "didExitVisibleState", "didExitDisplayState", "didExitPreloadState", "interfaceStateDidChange",
        ])
        XCTAssertTrue(log.all[before...].allSatisfy(\.1))
    }

    func testPendingStateIsAppliedInOneBatchAtLoad() async {
        let box = onBackgroundThread { () -> UncheckedSendable<Node> in
            let node = Node()
            node.frame = Rect(x: 10, y: 20, width: 30, height: 40)
            node.backgroundColor = Color(rgb: 0x336699)
            node.opacity = 0.5
            node.isHidden = true
            node.clipsToBounds = true
            node.cornerRadius = 6
            node.maskedCorners = [.topLeft]
            node.cornerRoundingMode = .clipping
            node.cornerClipColor = .white
            node.zPosition = 3
            let child = Node()
            child.frame = Rect(x: 1, y: 2, width: 3, height: 4)
            node.addSubnode(child)
            return UncheckedSendable(node)
        }
        let node = box.value
        XCTAssertFalse(node.isNodeLoaded)
        let layer = node.layer
        XCTAssertTrue(node.isNodeLoaded)
        XCTAssertEqual(layer.frame, Rect(x: 10, y: 20, width: 30, height: 40))
        XCTAssertEqual(layer.backgroundColor, Color(rgb: 0x336699))
        XCTAssertEqual(layer.opacity, 0.5)
        XCTAssertTrue(layer.isHidden)
        XCTAssertTrue(layer.clipsToBounds)
        XCTAssertEqual(layer.cornerRadius, 6)
        XCTAssertEqual(layer.maskedCorners, [.topLeft])
        XCTAssertEqual(layer.cornerRoundingMode, .clipping)
        XCTAssertEqual(layer.cornerClipColor, .white)
        XCTAssertEqual(layer.zPosition, 3)
        XCTAssertEqual(layer.sublayers.count, 1, "subnodes load with their parent")
        XCTAssertEqual(layer.sublayers.first?.frame, Rect(x: 1, y: 2, width: 3, height: 4))
    }

    func testWritesFromOtherThreadsAfterLoadLandAtTheNextFrame() async {
        let (host, _) = makeHost()
        let node = Node()
        host.setRootNode(node)
        let layer = node.layer
        let box = UncheckedSendable(node)
        onBackgroundThread {
            box.value.backgroundColor = Color(rgb: 0xFF0000)
            box.value.opacity = 0.25
        }
        XCTAssertEqual(node.backgroundColor, Color(rgb: 0xFF0000), "the node's state changes at once")
        XCTAssertNil(layer.backgroundColor, "the layer waits for the frame")
        XCTAssertEqual(layer.opacity, 1)
        host.runFrame(time: 0, events: [])
        XCTAssertEqual(layer.backgroundColor, Color(rgb: 0xFF0000))
        XCTAssertEqual(layer.opacity, 0.25)
        // On the UI thread, writes reach the layer at once.
        node.opacity = 0.75
        XCTAssertEqual(layer.opacity, 0.75)
    }

    func testSubnodesAddedAfterLoadGetLayersAndStates() async {
        let (host, _) = makeHost()
        let root = Node()
        host.setRootNode(root)
        let child = ColorNode(.white)
        child.frame = Rect(x: 0, y: 0, width: 10, height: 10)
        XCTAssertTrue(root.addSubnode(child))
        XCTAssertTrue(child.isNodeLoaded)
        XCTAssertTrue(root.layer.sublayers.contains { $0 === child.layer })
        XCTAssertEqual(child.interfaceState, .onScreen)
        child.removeFromSupernode()
        XCTAssertEqual(child.interfaceState, [])
        XCTAssertNil(child.layer.superlayer)
        XCTAssertFalse(root.addSubnode(root), "a node cannot contain itself")
        let grandchild = Node()
        child.addSubnode(grandchild)
        XCTAssertFalse(grandchild.addSubnode(child), "nor an ancestor")
    }

    func testNodesReleasedOnAnotherThreadDetachTheirLayersOnTheUIThread() async {
        let (host, _) = makeHost()
        let root = Node()
        host.setRootNode(root)
        var child: ColorNode? = ColorNode(.white)
        child!.frame = Rect(x: 0, y: 0, width: 10, height: 10)
        root.addSubnode(child!)
        let layer = child!.layer
        child!.removeFromSupernode()
        // Hand the last reference to another thread and let it go there.
        let holder = Locked<ColorNode?>(child)
        child = nil
        root.layer.addSublayer(layer)  // pretend something still shows it
        onBackgroundThread {
            // Taken out under the lock, released after it: no lock is held while the node deinits.
            var last = holder.withLock { value -> ColorNode? in defer { value = nil }; return value }
            last = nil
            _ = last
        }
        XCTAssertNotNil(layer.superlayer, "a background release does not touch the layer")
        host.runFrame(time: 0, events: [])
        XCTAssertNil(layer.superlayer, "it is detached on the UI thread at the next frame")
    }
}
