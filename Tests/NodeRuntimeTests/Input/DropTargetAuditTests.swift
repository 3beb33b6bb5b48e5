import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Drop targets at their edges: a target replaced while targeted, a targeted node taken out of the
/// tree or moved from under a still drag, a window blocked by a modal window while a drag is over it.
@MainActor
final class DropTargetAuditTests: XCTestCase {
    private final class Screen: Node, @unchecked Sendable {
        let left = Node(), right = Node()
        var leftX = 0.0, rightX = 100.0
        override init() {
            super.init()
            for node in [left, right] { addSubnode(node) }
        }
        override func layout() {
            super.layout()
            left.frame = Rect(x: leftX, y: 0, width: 100, height: 100)
            right.frame = Rect(x: rightX, y: 0, width: 100, height: 100)
        }
    }

    private var host: NodeHost!
    private var screen: Screen!
    private var log: [String] = []

    override func setUp() async throws {
        host = try PixelOracle.makeHost(size: Size(width: 200, height: 150))
        screen = Screen()
        host.setRootNode(screen)
        try host.settle()
        log = []
        screen.left.dropTarget = target("left")
        screen.right.dropTarget = target("right")
    }

    override func tearDown() async throws {
        host.setRootNode(nil)
        host = nil
    }

    private func target(_ name: String) -> DropTarget {
        let target = DropTarget { [unowned self] items, _ in
            log.append("\(name) drop \(items.count)")
            return true
        }
        target.onTargetedChange = { [unowned self] targeted in log.append("\(name) \(targeted ? "on" : "off")") }
        return target
    }

    private func frame(_ events: [InputEvent] = []) {
        host.runFrame(time: host.time + 1.0 / 60, events: events)
    }

    /// A target replaced by another while a drag is over its node is untargeted; the new one takes
    /// over at the drag's next move and is untargeted when the drag leaves.
    func testATargetReplacedWhileTargetedIsUntargeted() async throws {
        frame([.dragMoved(Point(x: 20, y: 20))])
        let old = screen.left.dropTarget!
        screen.left.dropTarget = target("new")
        XCTAssertFalse(old.isTargeted, "the replaced target is no longer under the drag")
        XCTAssertEqual(log, ["left on", "left off"])
        frame([.dragMoved(Point(x: 25, y: 20)), .dragExited])
        XCTAssertEqual(log, ["left on", "left off", "new on", "new off"])
    }

    /// A targeted node taken out of the tree is untargeted at the next frame, though the drag over
    /// the window has not moved (XDND says where a drag is only as it moves).
    func testATargetedNodeTakenOutOfTheTreeIsUntargeted() async throws {
        frame([.dragMoved(Point(x: 20, y: 20))])
        screen.left.removeFromSupernode()
        frame()
        XCTAssertFalse(screen.left.dropTarget!.isTargeted)
        XCTAssertEqual(log, ["left on", "left off"])
        frame([.dragExited])
        XCTAssertEqual(log, ["left on", "left off"])
    }

    /// Content that moves under a still drag changes what it targets, as it changes what the pointer hovers.
    func testContentMovingUnderAStillDragRetargets() async throws {
        frame([.dragMoved(Point(x: 150, y: 20))])
        screen.leftX = 120
        screen.rightX = 250
        screen.setNeedsLayout()
        try host.settle()
        frame()
        XCTAssertEqual(screen.right.frame.minX, 250, "laid out again")
        XCTAssertEqual(log, ["right on", "right off", "left on"])
    }

    /// A window blocked by a modal window while a drag is over it untargets the drag's target: the
    /// drag's moves and its drop are dropped there, its target would stay lit.
    func testAWindowBlockedWhileADragIsOverItUntargets() async throws {
        frame([.dragMoved(Point(x: 20, y: 20))])
        host.isInputBlocked = true
        XCTAssertFalse(screen.left.dropTarget!.isTargeted)
        XCTAssertEqual(log, ["left on", "left off"])
        // A move read before the window was blocked (a compositor thread's, kept) targets nothing.
        frame([.dragMoved(Point(x: 150, y: 20))])
        XCTAssertFalse(screen.right.dropTarget!.isTargeted)
        XCTAssertEqual(log, ["left on", "left off"])
        host.isInputBlocked = false
    }

    /// A targeted node taken out of the tree and let go (its target kept by the app, as a view
    /// model may keep it) leaves its target untargeted: the target hears it went.
    func testATargetedNodeLetGoLeavesItsTargetUntargeted() async throws {
        var node: Node? = Node()
        let kept = target("kept")
        node!.dropTarget = kept
        screen.addSubnode(node!)
        node!.frame = Rect(x: 0, y: 110, width: 50, height: 30)
        frame([.dragMoved(Point(x: 20, y: 120))])
        XCTAssertTrue(kept.isTargeted)
        weak let gone = node
        node!.removeFromSupernode()
        node = nil
        XCTAssertNil(gone, "let go")
        frame()
        XCTAssertFalse(kept.isTargeted)
        XCTAssertEqual(log, ["kept on", "kept off"])
    }

    /// Under a modal overlay (an in-window dialog) the targets behind it take no drop: not by the
    /// drop's place, not as the fallback of a drop the platform gives no place (the root's target).
    func testTargetsBehindAModalOverlayTakeNoDrop() async throws {
        screen.dropTarget = target("screen")
        let dialog = Node()
        dialog.frame = Rect(x: 50, y: 50, width: 60, height: 40)
        let overlay = host.presentOverlay(dialog, kind: .modal)
        frame([.dropped([.text("a")], at: nil), .dropped([.text("b")], at: Point(x: 20, y: 20))])
        XCTAssertEqual(log, [], "nothing behind the dialog takes a drop")
        dialog.dropTarget = target("dialog")
        frame([.dropped([.text("c")], at: nil)])
        XCTAssertEqual(log, ["dialog drop 1"], "the dialog's own target does")
        overlay.dismiss()
    }
}
