import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A node that takes the focus and logs its keys and presses.
private final class FocusLogNode: Node, @unchecked Sendable {
    let name: String
    let log: EventLog

    init(_ name: String, log: EventLog, size: Size = Size(width: 100, height: 40)) {
        self.name = name
        self.log = log
        super.init()
        style.preferredSize = size
        frame = Rect(origin: .zero, size: size)
        isUserInteractionEnabled = true
    }

    override var canBecomeFocused: Bool { true }
    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard key != .escape, key != .tab, modifiers.isEmpty else { return false }
        log.record("\(name) key")
        return true
    }
    override func touchesBegan(_ touch: Touch) { log.record("\(name) press") }
}

/// Popups, modal overlays and tooltips above a host's root: placement, the input they take and
/// let through, the focus they take and give back, what screen readers see, and their pixels.
@MainActor
final class OverlayTests: XCTestCase {
    nonisolated(unsafe) private var host: NodeHost!
    private var time = 0.0
    private var log = EventLog()
    private var root: Node!
    private var field: FocusLogNode!

    override func setUp() async throws {
        host = makeHost(width: 400, height: 300).0
        log = EventLog()
        root = Node()
        field = FocusLogNode("field", log: log)
        field.frame = Rect(x: 20, y: 20, width: 200, height: 200)
        root.addSubnode(field)
        host.setRootNode(root)
        host.measuresLayoutInBackground = false
        frame()
        host.focus(field)
    }

    override func tearDown() async throws {
        host.setRootNode(nil)
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
    }

    private func frame(_ events: [InputEvent] = [], after seconds: Double = 1.0 / 60) {
        time += seconds
        host.runFrame(time: time, events: events)
    }

    private func click(_ point: Point, button: Int = 1) {
        frame([.pointerDown(point, button: button)])
        frame([.pointerUp(point, button: button)])
    }

    private func names() -> [String] { log.names }

    func testAPopupIsPlacedByItsPositionerAndTakesTheFocus() async {
        let menu = FocusLogNode("menu", log: log, size: Size(width: 120, height: 100))
        let overlay = host.presentOverlay(menu, kind: .popup,
                                          positioner: PopupPositioner(anchor: Rect(x: 380, y: 280, width: 0, height: 0)))
        frame()
        XCTAssertEqual(overlay.contentFrame, Rect(x: 260, y: 180, width: 120, height: 100),
                       "flipped above and to the left of a point near the bottom-right corner")
        XCTAssertTrue(host.focusedNode === menu)
        XCTAssertEqual(host.overlays.count, 1)
        frame([.keyDown(.down, modifiers: [])])
        XCTAssertEqual(names(), ["menu key"], "keys go to the popup, not to what had the focus")
    }

    func testAPressOutsideAPopupEndsItAndGoesNoFurther() async {
        let menu = FocusLogNode("menu", log: log)
        var reasons: [Overlay.DismissReason] = []
        let overlay = host.presentOverlay(menu, kind: .popup, positioner: PopupPositioner(anchor: Rect(x: 250, y: 20, width: 10, height: 10)))
        overlay.onDismiss = { reasons.append($0) }
        frame()
        click(Point(x: 50, y: 50))
        XCTAssertEqual(reasons, [.pressedOutside])
        XCTAssertFalse(overlay.isPresented)
        XCTAssertTrue(host.overlays.isEmpty)
        XCTAssertEqual(names(), [], "the press that ended the popup reached nothing under it")
        XCTAssertTrue(host.focusedNode === field, "the focus went back")
        click(Point(x: 50, y: 50))
        XCTAssertEqual(names(), ["field press"], "the next press does")
    }

    func testAPressInsideAPopupReachesItsContent() async {
        let menu = FocusLogNode("menu", log: log)
        let overlay = host.presentOverlay(menu, kind: .popup, positioner: PopupPositioner(anchor: Rect(x: 250, y: 20, width: 10, height: 10)))
        frame()
        let inside = Point(x: overlay.contentFrame.midX, y: overlay.contentFrame.midY)
        click(inside)
        XCTAssertEqual(names(), ["menu press"])
        XCTAssertTrue(overlay.isPresented)
    }

    func testEscapeEndsTheTopPopupOnlyAndAPressOutsideBothEndsBoth() async {
        let menu = FocusLogNode("menu", log: log)
        let submenu = FocusLogNode("submenu", log: log)
        let first = host.presentOverlay(menu, kind: .popup, positioner: PopupPositioner(anchor: Rect(x: 240, y: 20, width: 10, height: 10)))
        frame()
        let second = host.presentOverlay(submenu, kind: .popup, positioner: PopupPositioner(anchor: first.contentFrame, side: .trailing))
        frame()
        XCTAssertTrue(host.focusedNode === submenu)
        frame([.keyDown(.escape, modifiers: [])])
        XCTAssertFalse(second.isPresented)
        XCTAssertTrue(first.isPresented)
        XCTAssertTrue(host.focusedNode === menu, "the focus went back to the menu the submenu opened from")
        _ = host.presentOverlay(FocusLogNode("again", log: log), kind: .popup,
                                positioner: PopupPositioner(anchor: first.contentFrame, side: .trailing))
        frame()
        // A press inside the first menu ends the submenu above it and reaches the menu.
        click(Point(x: first.contentFrame.midX, y: first.contentFrame.midY))
        XCTAssertTrue(first.isPresented)
        XCTAssertEqual(host.overlays.count, 1)
        XCTAssertEqual(names(), ["menu press"])
        click(Point(x: 10, y: 290))
        XCTAssertTrue(host.overlays.isEmpty)
    }

    func testAModalOverlayKeepsEveryPressTabAndTheAppsKeysForItself() async {
        var handled: [Key] = []
        host.keyHandler = { key, _ in handled.append(key); return true }
        let dialog = Node()
        let ok = FocusLogNode("ok", log: log)
        let cancel = FocusLogNode("cancel", log: log)
        dialog.addSubnode(ok)
        dialog.addSubnode(cancel)
        ok.frame = Rect(x: 100, y: 100, width: 80, height: 30)
        cancel.frame = Rect(x: 200, y: 100, width: 80, height: 30)
        var reasons: [Overlay.DismissReason] = []
        let overlay = host.presentOverlay(dialog, kind: .modal, focus: ok)
        overlay.onDismiss = { reasons.append($0) }
        frame()
        XCTAssertEqual(overlay.contentFrame, Rect(x: 0, y: 0, width: 400, height: 300), "no positioner: it fills the window")
        XCTAssertTrue(host.focusedNode === ok)
        click(Point(x: 30, y: 30))
        XCTAssertEqual(names(), [], "a press behind a modal overlay reaches nothing")
        XCTAssertTrue(overlay.isPresented)
        for _ in 0..<3 { frame([.keyDown(.tab, modifiers: [])]) }
        XCTAssertTrue(host.focusedNode === cancel, "Tab stays among the overlay's nodes")
        frame([.keyDown(.character("q"), modifiers: [.control])])
        frame([.keyDown(.escape, modifiers: [])])
        XCTAssertEqual(handled, [], "the app's key handler hears nothing while a modal overlay is up")
        XCTAssertTrue(overlay.isPresented, "Escape does not end a modal overlay unless it says so")
        frame([.windowFocusChanged(false)])
        XCTAssertTrue(overlay.isPresented, "nor does the window's focus loss")
        overlay.dismissesOnEscape = true
        frame([.keyDown(.escape, modifiers: [])])
        XCTAssertEqual(reasons, [.escape])
        XCTAssertTrue(host.focusedNode === field)
        frame([.keyDown(.character("q"), modifiers: [.control])])
        XCTAssertEqual(handled, [.character("q")])
    }

    func testTheWindowsFocusLossEndsPopups() async {
        let overlay = host.presentOverlay(FocusLogNode("menu", log: log), kind: .popup,
                                          positioner: PopupPositioner(anchor: Rect(x: 200, y: 20, width: 10, height: 10)))
        var reasons: [Overlay.DismissReason] = []
        overlay.onDismiss = { reasons.append($0) }
        frame([.windowFocusChanged(true)])
        XCTAssertTrue(overlay.isPresented)
        frame([.windowFocusChanged(false)])
        XCTAssertEqual(reasons, [.focusLost])
    }

    func testANewRootEndsTheOverlaysOfTheOldOne() async {
        let overlay = host.presentOverlay(Node(), kind: .modal)
        var reasons: [Overlay.DismissReason] = []
        overlay.onDismiss = { reasons.append($0) }
        host.setRootNode(Node())
        XCTAssertEqual(reasons, [.hostReset])
        XCTAssertTrue(host.overlays.isEmpty)
        XCTAssertNil(overlay.content.supernode)
    }

    func testOverlaysAreInTheAccessibilityTreeAfterTheRoot() async {
        let text = TextNode()
        text.attributedText = AttributedText("Delete this chat?")
        let alert = Node()
        alert.accessibilityRole = .alert
        alert.accessibilityLabel = "Delete"
        alert.automaticallyManagesSubnodes = false
        alert.addSubnode(text)
        text.frame = Rect(x: 10, y: 10, width: 200, height: 20)
        host.presentOverlay(alert, kind: .modal)
        frame()
        let tree = host.accessibilityTree(title: "test")
        let roles = tree.root.children.map(\.role)
        XCTAssertEqual(roles.last, .alert)
        XCTAssertEqual(tree.root.children.last?.children.first?.label, "Delete this chat?")
    }
}
