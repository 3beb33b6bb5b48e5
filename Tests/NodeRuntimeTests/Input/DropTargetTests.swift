import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Drop targets: a drag over a node with a target (or a node inside it) targets it, moving away or
/// leaving untargets it; a drop offers each target from the node under it outwards the items it
/// accepts until one takes them; a drop the platform gives no place goes to the focused node's
/// target, then the root's; a target removed while targeted is untargeted.
@MainActor
final class DropTargetTests: XCTestCase {
    /// Two boxes side by side in a screen: the left one (with a child) takes files, the right one
    /// text; the screen itself takes anything.
    private final class Screen: Node, @unchecked Sendable {
        let left = Node(), leftChild = Node(), right = Node()
        override init() {
            super.init()
            for node in [left, right] { addSubnode(node) }
            left.addSubnode(leftChild)
        }
        override func layout() {
            super.layout()
            left.frame = Rect(x: 0, y: 0, width: 100, height: 100)
            leftChild.frame = Rect(x: 10, y: 10, width: 40, height: 40)
            right.frame = Rect(x: 100, y: 0, width: 100, height: 100)
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
        screen.left.dropTarget = target("left", accepting: .files)
        screen.right.dropTarget = target("right", accepting: .text)
        screen.dropTarget = target("screen", accepting: .all)
        screen.leftChild.isUserInteractionEnabled = true
    }

    override func tearDown() async throws {
        host.setRootNode(nil)
        host = nil
    }

    private func target(_ name: String, accepting kinds: DropTarget.Kinds, takes: Bool = true) -> DropTarget {
        let target = DropTarget(accepting: kinds) { [unowned self] items, point in
            log.append("\(name) drop \(items.map(describe)) at \(Int(point.x)),\(Int(point.y))")
            return takes
        }
        target.onTargetedChange = { [unowned self] targeted in log.append("\(name) \(targeted ? "on" : "off")") }
        return target
    }

    private func describe(_ item: DroppedItem) -> String {
        switch item {
        case let .file(path): return "file:" + path
        case let .text(text): return "text:" + text
        }
    }

    private func frame(_ events: [InputEvent]) {
        host.runFrame(time: host.time + 1.0 / 60, events: events)
    }

    func testADragTargetsTheNearestTargetAndADropGoesToTheOneThatTakesIt() async throws {
        frame([.dragMoved(Point(x: 20, y: 20))])
        XCTAssertEqual(log, ["left on"], "over the left box's child: the left box, the nearest target around it")
        XCTAssertTrue(screen.left.dropTarget!.isTargeted)
        frame([.dragMoved(Point(x: 60, y: 60))])
        XCTAssertEqual(log, ["left on"], "still over the left box: nothing new")
        frame([.dragMoved(Point(x: 150, y: 50))])
        XCTAssertEqual(log, ["left on", "left off", "right on"])
        frame([.dragMoved(Point(x: 150, y: 130))])
        XCTAssertEqual(log.suffix(2), ["right off", "screen on"], "below the boxes: the screen")
        log = []

        // A drop of a file and a text on the right box: it takes the text; the file goes nowhere else
        // (the first target that takes a drop ends it).
        frame([.dropped([.file("/tmp/a.png"), .text("hello")], at: Point(x: 150, y: 50))])
        XCTAssertEqual(log, ["screen off", "right drop [\"text:hello\"] at 50,50"])
        XCTAssertFalse(screen.dropTarget!.isTargeted)
        log = []

        // Files only on the right box: it accepts none of them, the screen around it takes them.
        frame([.dropped([.file("/tmp/a.png")], at: Point(x: 150, y: 50))])
        XCTAssertEqual(log, ["screen drop [\"file:/tmp/a.png\"] at 150,50"])
    }

    func testATargetThatRefusesLetsTheOnesAroundItTakeTheDrop() async throws {
        screen.left.dropTarget = target("left", accepting: .files, takes: false)
        frame([.dropped([.file("/x.txt")], at: Point(x: 20, y: 20))])
        XCTAssertEqual(log, ["left drop [\"file:/x.txt\"] at 20,20", "screen drop [\"file:/x.txt\"] at 20,20"])
    }

    func testLeavingUntargetsAndADropWithNoPlaceGoesToTheFocusedNodesTarget() async throws {
        frame([.dragMoved(Point(x: 150, y: 50))])
        frame([.dragExited])
        XCTAssertEqual(log, ["right on", "right off"])
        log = []
        // No place: the focused node's target (none focused: the root's).
        frame([.dropped([.text("a")], at: nil)])
        XCTAssertEqual(log, ["screen drop [\"text:a\"] at 100,75"], "the root, at its middle")
        log = []
        let field = FocusableNode()
        screen.right.addSubnode(field)
        field.frame = Rect(x: 0, y: 0, width: 50, height: 20)
        host.focus(field)
        frame([.dropped([.text("b")], at: nil)])
        XCTAssertEqual(log, ["right drop [\"text:b\"] at 50,50"])
    }

    func testATargetRemovedWhileTargetedIsUntargetedAndNodesWithoutTargetsIgnoreDrags() async throws {
        frame([.dragMoved(Point(x: 20, y: 20))])
        screen.left.dropTarget = nil
        XCTAssertEqual(log, ["left on", "left off"])
        log = []
        screen.dropTarget = nil
        screen.right.dropTarget = nil
        frame([.dragMoved(Point(x: 150, y: 50)), .dropped([.text("lost")], at: Point(x: 150, y: 50))])
        XCTAssertEqual(log, [], "no target: nothing happens")
    }
}

/// A node that takes the keyboard focus.
private final class FocusableNode: Node, @unchecked Sendable {
    override var canBecomeFocused: Bool { true }
}
