import Compositor
import Foundation
import TestSupport
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

/// A node whose spec places its subnodes side by side: its size depends on them.
private final class RowOfSubnodes: Node, @unchecked Sendable {
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let children = subnodes
        return HStack(spacing: 2) { children }
    }
}

/// A root that stacks its subnodes at their own widths.
private final class StackOfSubnodes: Node, @unchecked Sendable {
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let children = subnodes
        return VStack(alignItems: .start) { children }
    }
}

/// Hierarchy changes reach the screen whole: a parent whose size depends on its subnodes (and its
/// ancestors) is laid out again when one is added or removed, and a node moved within its parent
/// takes its new place in the layer order too. (Both found by the stress model's pixel oracle.)
@MainActor
final class HierarchyChangeLayoutTests: XCTestCase {
    private func box(_ side: Double, _ rgb: UInt32) -> ColorNode {
        let node = ColorNode(Color(rgb: rgb))
        node.preferredSize = Size(width: side, height: side)
        return node
    }

    func testAddingOrRemovingASubnodeLaysTheAncestorsOutAgain() async throws {
        let row = RowOfSubnodes()
        row.addSubnode(box(10, 0xD03030))
        let root = StackOfSubnodes()
        root.addSubnode(row)
        let host = try PixelOracle.makeHost(size: Size(width: 100, height: 40))
        host.setRootNode(root)
        try host.settle()
        XCTAssertEqual(row.frame.width, 10)
        let added = box(20, 0x3050D0)
        onBackgroundThread { row.addSubnode(added) }
        try host.settle()
        XCTAssertEqual(row.frame.width, 32, "the row grew by the new subnode and the spacing")
        onBackgroundThread { added.removeFromSupernode() }
        try host.settle()
        XCTAssertEqual(row.frame.width, 10, "and shrank back")
        host.setRootNode(nil)
    }

    func testANodeMovedToTheTopOfItsParentIsDrawnOnTop() async throws {
        let root = Node()
        let bottom = ColorNode(Color(rgb: 0xD03030)), top = ColorNode(Color(rgb: 0x3050D0))
        bottom.frame = Rect(x: 0, y: 0, width: 20, height: 20)
        top.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        root.addSubnode(bottom)
        root.addSubnode(top)
        let host = try PixelOracle.makeHost(size: Size(width: 40, height: 40))
        host.setRootNode(root)
        try host.settle()
        XCTAssertEqual(Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: 15, y: 15)), Color(rgb: 0x3050D0))
        root.addSubnode(bottom)  // to the top, on the UI thread
        try host.settle()
        XCTAssertEqual(Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: 15, y: 15)), Color(rgb: 0xD03030))
        onBackgroundThread { root.addSubnode(top) }  // and back, from another thread
        try host.settle()
        XCTAssertEqual(Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: 15, y: 15)), Color(rgb: 0x3050D0))
        host.setRootNode(nil)
    }
}
