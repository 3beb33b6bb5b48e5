import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The host's modal overlays as dialogs use them: what `onDismiss` may do, and keys with the focus
/// on nothing.
@MainActor
final class ModalOverlayTests: XCTestCase {
    override func setUp() async throws { resetDialogAppearance() }
    override func tearDown() async throws { resetDialogAppearance() }

    /// An alert or a sheet still shown when its host goes goes with it (the overlay holds the alert;
    /// the alert only points back to it): nothing of them stays alive to redraw at the next change of
    /// appearance.
    func testAHostLetGoWithAnAlertAndASheetShownTakesThemWithIt() async throws {
        weak var weakAlert: Alert?, weakSheet: Sheet?, weakCard: Node?, weakHost: NodeHost?
        try {
            let harness = try DialogHarness()
            let sheet = harness.host.presentSheet(Sheet(content: Node(), title: "Left open"))
            let alert = harness.host.presentAlert(Alert(title: "Left open", buttons: [.cancel("Cancel")]))
            try harness.settle()
            weakAlert = alert
            weakSheet = sheet
            weakCard = alert.card
            weakHost = harness.host
        }()
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
        XCTAssertNil(weakHost)
        XCTAssertNil(weakAlert)
        XCTAssertNil(weakSheet)
        XCTAssertNil(weakCard)
    }

    func testAnOverlayPresentedFromOnDismissStays() async throws {
        let harness = try DialogHarness()
        let first = harness.host.presentOverlay(Node(), kind: .modal)
        var second: Overlay?
        var secondEnded: Overlay.DismissReason?
        first.onDismiss = { _ in
            second = harness.host.presentOverlay(Node(), kind: .modal)
            second?.onDismiss = { secondEnded = $0 }
        }
        first.dismiss()
        let next = try XCTUnwrap(second)
        XCTAssertNil(secondEnded, "the overlay opened as the first ended was ended with it")
        XCTAssertTrue(next.isPresented)
        XCTAssertTrue(harness.host.overlays.count == 1 && harness.host.overlays[0] === next)
    }

    func testAnOverlayAboveEndsWithTheOneUnderItAndOnlyThose() async throws {
        let harness = try DialogHarness()
        let bottom = harness.host.presentOverlay(Node(), kind: .modal)
        let top = harness.host.presentOverlay(Node(), kind: .modal)
        var reasons: [String] = []
        var replacement: Overlay?
        top.onDismiss = { reasons.append("top \($0)") }
        bottom.onDismiss = {
            reasons.append("bottom \($0)")
            replacement = harness.host.presentOverlay(Node(), kind: .popup)
        }
        bottom.dismiss()
        XCTAssertEqual(reasons, ["top dismissed", "bottom dismissed"])
        XCTAssertTrue(replacement?.isPresented == true)
        XCTAssertEqual(harness.host.overlays.count, 1)
    }

    func testAFocusTargetThatCannotTakeTheFocusLeavesItOnNothingBehindTheOverlay() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.edit)
        let content = Node()
        let off = ButtonNode(title: "Off")
        off.isEnabled = false
        content.addSubnode(off)
        harness.host.presentOverlay(content, kind: .modal, focus: off)
        XCTAssertNil(harness.host.focusedNode, "the focus stayed on the app's button behind the modal overlay")
        harness.key(.enter)
        harness.key(.space)
        XCTAssertEqual(harness.screen.activations, [], "keys reached a button behind the modal overlay")
    }

    func testWithoutAFocusTargetTheFirstFocusableNodeOfTheLaidOutContentTakesIt() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.edit)
        // The button is a subnode only once the content is laid out (`automaticallyManagesSubnodes`).
        let content = DialogTestScreen(name: "overlay screen")
        harness.host.presentOverlay(content, kind: .modal)
        XCTAssertTrue(harness.host.focusedNode === content.edit)
    }

    func testAScreenReaderCannotReachNodesBehindAModalOverlay() async throws {
        let harness = try DialogHarness()
        let tree = harness.host.accessibilityTree()
        let edit = try XCTUnwrap(DialogHarness.element(.button, in: tree.root))
        XCTAssertEqual(edit.label, "Edit")
        let alert = harness.host.presentAlert(Alert(title: "Sign out?", buttons: [.cancel("Cancel"), .default("Sign Out")]))
        try harness.settle()
        _ = harness.host.accessibilityTree()
        XCTAssertFalse(harness.host.performAccessibilityAction(.press, onElement: edit.id))
        XCTAssertFalse(harness.host.focusAccessibilityElement(edit.id))
        XCTAssertEqual(harness.screen.activations, [], "a press behind the alert activated the app's button")
        XCTAssertTrue(harness.host.focusedNode === alert.buttonNodes[1], "the focus left the alert")
        alert.dismiss()
        _ = harness.host.accessibilityTree()
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: edit.id))
        XCTAssertEqual(harness.screen.activations, ["edit"], "in reach again once the alert ended")
    }

    func testAPressBegunBeforeAModalOverlayOpenedDoesNotActivateWhatIsBehind() async throws {
        let harness = try DialogHarness()
        let edit = harness.centre(of: harness.screen.edit)
        var cancelled = 0
        harness.screen.edit.addTarget(for: .touchCancel) { _, _ in cancelled += 1 }
        harness.frame([.pointerMoved(edit), .pointerDown(edit, button: 1)])
        XCTAssertTrue(harness.screen.edit.isHighlighted)
        // A shortcut, a timer or the network opens an alert while the button is held.
        let alert = harness.host.presentAlert(Alert(title: "Connection lost", buttons: [.default("OK")]))
        harness.frame([.pointerUp(edit, button: 1)])
        try harness.settle()
        XCTAssertEqual(harness.screen.activations, [], "the release behind the alert activated the app's button")
        XCTAssertEqual(cancelled, 1, "the button heard its press end")
        XCTAssertFalse(harness.screen.edit.isHighlighted)
        XCTAssertTrue(alert.isPresented)
    }

    func testWhatIsBehindAModalOverlayLosesTheHover() async throws {
        let harness = try DialogHarness()
        let edit = harness.centre(of: harness.screen.edit)
        harness.frame([.pointerMoved(edit)])
        try harness.settle()
        XCTAssertTrue(harness.screen.edit.controlState.contains(.hovered))
        let alert = harness.host.presentAlert(Alert(title: "Connection lost", buttons: [.default("OK")]))
        try harness.settle()
        XCTAssertFalse(harness.screen.edit.controlState.contains(.hovered), "hovered under the alert")
        alert.dismiss()
        try harness.settle()
        XCTAssertTrue(harness.screen.edit.controlState.contains(.hovered), "hovered again once it ended")
    }

    func testKeysWithTheFocusOnNothingGoToTheTopOverlaysContentAndNoFurther() async throws {
        final class KeyNode: Node, @unchecked Sendable {
            var keys: [Key] = []
            override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
                keys.append(key)
                return key == .enter
            }
        }
        let harness = try DialogHarness()
        let content = KeyNode()
        harness.host.presentOverlay(content, kind: .modal)
        XCTAssertNil(harness.host.focusedNode)
        harness.key(.enter)
        harness.key(.character("x"))
        XCTAssertEqual(content.keys, [.enter, .character("x")])
        XCTAssertTrue(harness.keysHeard.isEmpty, "the app heard \(harness.keysHeard)")
    }
}
