import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A window's menu bar: across the top, the root below it, presses and conversions in window points.
@MainActor
final class HostMenuBarTests: XCTestCase {
    private final class PressNode: Node, @unchecked Sendable {
        var presses: [Point] = []
        override init() {
            super.init()
            isUserInteractionEnabled = true
        }
        override func touchesBegan(_ touch: Touch) { presses.append(convertFromRoot(touch.location)) }
    }

    func testTheRootGoesBelowTheBarAndPressesLandWhereTheyShow() async throws {
        let host = try OffscreenRender.makeHost(size: Size(width: 300, height: 200)).0
        host.measuresLayoutInBackground = false
        let root = Node()
        let target = PressNode()
        target.frame = Rect(x: 10, y: 10, width: 50, height: 50)
        root.addSubnode(target)
        host.setRootNode(root)
        XCTAssertEqual(root.frame, Rect(x: 0, y: 0, width: 300, height: 200), "without a bar the root fills the window")
        var chosen: [String] = []
        host.menuBar = MenuBarNode(menus: [Menu("File") { MenuItem("Quit", shortcut: KeyboardShortcut("Ctrl+Q")) { chosen.append("quit") } }])
        XCTAssertEqual(root.frame, Rect(x: 0, y: MenuBarNode.height, width: 300, height: 200 - MenuBarNode.height))
        XCTAssertEqual(host.contentBounds, root.frame)
        var time = 0.0
        settle(host, time: &time)

        let press = Point(x: 20, y: MenuBarNode.height + 15)
        host.runFrame(time: time + 0.02, events: [.pointerDown(press, button: 1)])
        host.runFrame(time: time + 0.04, events: [.pointerUp(press, button: 1)])
        XCTAssertEqual(target.presses, [Point(x: 10, y: 5)], "a press in window points lands on the node shown there")
        // Without layers to go by (another thread's view), the root's place below the bar still counts
        // on the UI thread.
        let unloaded = Node()
        unloaded.frame = Rect(x: 5, y: 5, width: 10, height: 10)
        XCTAssertEqual(Node.convertPoint(Point(x: 10, y: MenuBarNode.height + 10), in: unloaded, under: root), Point(x: 5, y: 5))

        host.runFrame(time: time + 0.06, events: [.keyDown(.character("q"), modifiers: .control)])
        XCTAssertEqual(chosen, ["quit"], "the bar's shortcuts run with its menus closed")
        let tree = host.accessibilityTree(title: "t")
        XCTAssertEqual(tree.root.children.first?.role, .menuBar, "the bar comes first")
        let image = try XCTUnwrap(OffscreenRender.capture(host))
        let folder = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("overlays")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try image.writePNG(to: folder.appendingPathComponent("menu-bar.png").path)

        host.menuBar = nil
        XCTAssertEqual(root.frame, Rect(x: 0, y: 0, width: 300, height: 200), "the root fills the window again")
        host.setRootNode(nil)
    }
}

extension Node {
    /// `point` (window points) in `node`'s coordinates, `node` added under `parent` without loading
    /// its layer: the frame-adding conversion.
    @MainActor
    static func convertPoint(_ point: Point, in node: Node, under parent: Node) -> Point {
        parent.addSubnode(node)
        defer { node.removeFromSupernode() }
        return node.convertFromRoot(point)
    }
}
