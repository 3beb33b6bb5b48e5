import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// A focusable node that records leaving the screen.
private final class FocusableNode: Node, @unchecked Sendable {
    let log = EventLog()
    override var canBecomeFocused: Bool { true }
    override func didExitVisibleState() { log.record("exitVisible") }
    override func didExitDisplayState() { log.record("exitDisplay") }
}

/// A node moved to another parent takes that parent's interface state, leaving the states the new
/// parent does not have (with their exit hooks), whether it moves on the UI thread or off it.
@MainActor
final class NodeMoveStateTests: XCTestCase {
    private var time = 0.0

    private func frame(_ host: NodeHost) {
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
    }

    /// A root with a visible parent holding the node, and a loaded parent only in preload (a screen
    /// kept ready offscreen).
    private func makeScene() -> (NodeHost, FocusableNode, visible: Node, offscreen: Node) {
        let (host, _) = makeHost(width: 200, height: 200)
        let root = Node(), visible = Node(), offscreen = Node()
        let node = FocusableNode()
        node.frame = Rect(x: 0, y: 0, width: 20, height: 20)
        visible.addSubnode(node)
        root.addSubnode(visible)
        root.addSubnode(offscreen)
        host.setRootNode(root)
        offscreen.setInterfaceState([.measureLayout, .preload])
        frame(host)
        return (host, node, visible, offscreen)
    }

    func testAVisibleNodeMovedUnderAnOffscreenParentLeavesTheScreen() async {
        let (host, node, _, offscreen) = makeScene()
        host.focus(node)
        XCTAssertTrue(host.focusedNode === node)
        XCTAssertTrue(node.interfaceState.contains(.visible))
        offscreen.addSubnode(node)
        frame(host)
        XCTAssertEqual(node.interfaceState, [.measureLayout, .preload])
        XCTAssertEqual(node.log.names, ["exitVisible", "exitDisplay"])
        XCTAssertNil(host.focusedNode, "a node that left the screen loses focus")
        XCTAssertFalse(node.displayPriority.isVisible)
    }

    func testTheSameMoveFromAWorkerThread() async {
        let (host, node, _, offscreen) = makeScene()
        onBackgroundThread { offscreen.addSubnode(node) }
        frame(host)
        XCTAssertEqual(node.interfaceState, [.measureLayout, .preload])
        XCTAssertEqual(node.log.names, ["exitVisible", "exitDisplay"])
    }

    func testMovedBackItEntersTheScreenAgain() async {
        let (host, node, visible, offscreen) = makeScene()
        offscreen.addSubnode(node)
        frame(host)
        visible.addSubnode(node)
        frame(host)
        XCTAssertEqual(node.interfaceState, visible.interfaceState)
        XCTAssertTrue(node.interfaceState.contains(.visible))
    }
}
