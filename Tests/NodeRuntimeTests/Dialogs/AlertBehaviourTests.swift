import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// What an alert does with focus, keys, presses and screen readers.
@MainActor
final class AlertBehaviourTests: XCTestCase {
    override func setUp() async throws { resetDialogAppearance() }
    override func tearDown() async throws { resetDialogAppearance() }

    /// Records which buttons' handlers ran, in order.
    private final class Choices: @unchecked Sendable {
        var names: [String] = []
    }

    private func signOutAlert(_ choices: Choices) -> Alert {
        Alert(title: "Sign out?", message: "You will need your password to sign in again.",
              buttons: [.cancel("Cancel") { choices.names.append("cancel") },
                        .plain("Later") { choices.names.append("later") },
                        .default("Sign Out") { choices.names.append("sign out") }])
    }

    private func present(_ alert: Alert, on harness: DialogHarness) throws {
        harness.host.presentAlert(alert)
        try harness.settle()
    }

    func testFocusMovesOntoTheDefaultButtonAndReturnsWhenTheAlertEnds() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.share)
        let choices = Choices()
        let alert = signOutAlert(choices)
        try present(alert, on: harness)
        XCTAssertTrue(harness.host.focusedNode === alert.buttonNodes[2], "the default button has the focus")
        harness.key(.escape)
        XCTAssertFalse(alert.isPresented)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.share, "the focus went back to what had it")
        XCTAssertEqual(choices.names, ["cancel"])
    }

    func testWithoutADefaultButtonTheCancelButtonTakesTheFocus() async throws {
        let harness = try DialogHarness()
        let alert = Alert(title: "Delete?", buttons: [.destructive("Delete"), .cancel("Keep")])
        try present(alert, on: harness)
        XCTAssertTrue(harness.host.focusedNode === alert.buttonNodes[1])
    }

    func testTabAndShiftTabGoRoundTheButtonsOnly() async throws {
        let harness = try DialogHarness()
        let alert = signOutAlert(Choices())
        try present(alert, on: harness)
        var seen: [Node] = []
        for _ in 0..<6 {
            harness.key(.tab)
            seen.append(try XCTUnwrap(harness.host.focusedNode))
        }
        let buttons = alert.buttonNodes
        XCTAssertTrue(zip(seen, [buttons[0], buttons[1], buttons[2], buttons[0], buttons[1], buttons[2]]).allSatisfy { $0 === $1 },
                      "Tab goes round the three buttons: \(seen.map { $0.debugName ?? "?" })")
        harness.key(.tab, .shift)
        XCTAssertTrue(harness.host.focusedNode === buttons[1], "Shift+Tab goes back")
        harness.key(.tab, .shift)
        harness.key(.tab, .shift)
        XCTAssertTrue(harness.host.focusedNode === buttons[2], "Shift+Tab wraps round inside the alert")
        XCTAssertTrue(harness.keysHeard.isEmpty)
    }

    func testEnterActivatesTheFocusedButton() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = signOutAlert(choices)
        try present(alert, on: harness)
        harness.key(.tab)  // onto Cancel
        harness.key(.tab)  // onto Later
        harness.key(.enter)
        XCTAssertEqual(choices.names, ["later"], "Enter activates the focused button, as GTK does")
        XCTAssertEqual(alert.chosenButtonIndex, 1)
        XCTAssertFalse(alert.isPresented)
    }

    func testEnterActivatesTheDefaultButtonWhenTheFocusIsOnNoButton() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = signOutAlert(choices)
        try present(alert, on: harness)
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === alert.buttonNodes[0])
        // The focused button turned off: the focus is on nothing, and Enter goes to the default.
        alert.buttonNodes[0].isEnabled = false
        harness.frame()
        XCTAssertNil(harness.host.focusedNode)
        harness.key(.enter)
        XCTAssertEqual(choices.names, ["sign out"])
        XCTAssertTrue(harness.keysHeard.isEmpty, "\(harness.keysHeard)")
    }

    func testSpaceActivatesTheFocusedButton() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = signOutAlert(choices)
        try present(alert, on: harness)
        harness.key(.tab)  // onto Cancel
        harness.key(.space)
        XCTAssertEqual(choices.names, ["cancel"])
    }

    func testEscapeChoosesCancel() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        var ended: [Int?] = []
        let alert = signOutAlert(choices)
        alert.onDismiss = { ended.append($0) }
        try present(alert, on: harness)
        harness.key(.escape)
        XCTAssertEqual(choices.names, ["cancel"])
        XCTAssertEqual(ended, [0])
        XCTAssertTrue(harness.host.overlays.isEmpty)
        XCTAssertTrue(harness.keysHeard.isEmpty, "the app's key handler heard nothing: \(harness.keysHeard)")
    }

    func testEscapeWithoutACancelButtonDoesNothing() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = Alert(title: "Update installed", message: "Restart to finish.",
                          buttons: [.default("Restart") { choices.names.append("restart") }])
        try present(alert, on: harness)
        harness.key(.escape)
        harness.host.focus(nil)
        harness.key(.escape)  // reaching the host, not the card
        XCTAssertTrue(alert.isPresented, "no cancel button: Escape leaves the alert up")
        XCTAssertEqual(choices.names, [])
        XCTAssertTrue(harness.keysHeard.isEmpty, "nor does Escape reach the app: \(harness.keysHeard)")
    }

    func testTheAppsKeyHandlerHearsNothingWhileTheAlertIsUp() async throws {
        let harness = try DialogHarness()
        let alert = signOutAlert(Choices())
        try present(alert, on: harness)
        for key in [Key.character("q"), .character("w"), .up, .function(5)] { harness.key(key) }
        harness.key(.character("q"), .control)
        XCTAssertTrue(harness.keysHeard.isEmpty, "\(harness.keysHeard)")
        alert.dismiss()
        harness.key(.character("q"))
        XCTAssertEqual(harness.keysHeard, [.character("q")], "the app hears keys again once it ended")
    }

    func testAClickOnTheBackdropOrOnAButtonUnderItDoesNothing() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = signOutAlert(choices)
        let editCentre = harness.centre(of: harness.screen.edit)
        try present(alert, on: harness)
        XCTAssertFalse(alert.card.layer.frameInRoot.contains(editCentre), "the app's button is outside the card")
        harness.click(editCentre)
        harness.click(Point(x: 5, y: 350))
        try harness.settle()
        XCTAssertEqual(harness.screen.activations, [], "the button under the dim was not activated")
        XCTAssertTrue(alert.isPresented, "a click on the dim does not end an alert")
        XCTAssertEqual(choices.names, [])
        XCTAssertTrue(harness.host.focusedNode === alert.buttonNodes[2], "nor does it move the focus")
    }

    func testAClickOnAButtonRunsItsHandlerOnceAfterTheAlertHasClosed() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.edit)
        var seenWhenHandled: (presented: Bool, overlays: Int, focusBack: Bool)?
        var calls = 0
        var alert: Alert!
        alert = Alert(title: "Discard draft?", buttons: [.cancel("Cancel"), .destructive("Discard") {
            calls += 1
            seenWhenHandled = (alert.isPresented, harness.host.overlays.count,
                               harness.host.focusedNode === harness.screen.edit)
        }])
        try present(alert, on: harness)
        let discard = harness.centre(of: alert.buttonNodes[1])
        harness.click(discard)
        harness.click(discard)
        harness.key(.enter)
        alert.chooseButton(at: 1)
        _ = alert.buttonNodes[1].performAccessibilityAction(.press)
        try harness.settle()
        XCTAssertEqual(calls, 1, "the handler ran once")
        XCTAssertEqual(seenWhenHandled?.presented, false)
        XCTAssertEqual(seenWhenHandled?.overlays, 0, "the alert had left the screen")
        XCTAssertEqual(seenWhenHandled?.focusBack, true, "and the focus had gone back")
        XCTAssertEqual(harness.screen.activations, ["edit"], "the second Enter reached the app's focused button")
    }

    func testAHandlerThatPresentsTheNextAlertKeepsIt() async throws {
        let harness = try DialogHarness()
        var second: Alert?
        let first = Alert(title: "Delete 3 photos?", buttons: [.cancel("Cancel"), .destructive("Delete") {
            second = harness.host.presentAlert(Alert(title: "Deleted", buttons: [.default("OK")]))
        }])
        try present(first, on: harness)
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === first.buttonNodes[1])
        harness.key(.space)
        try harness.settle()
        let next = try XCTUnwrap(second)
        XCTAssertTrue(next.isPresented, "the alert the handler opened is up")
        XCTAssertTrue(harness.host.overlays.count == 1 && harness.host.overlays[0].content === next.backdrop)
        XCTAssertTrue(harness.host.focusedNode === next.buttonNodes[0])
    }

    func testAnAlertWithoutButtonsHasAnOKButton() async throws {
        let alert = Alert(title: "Saved")
        XCTAssertEqual(alert.buttons.map(\.title), ["OK"])
        XCTAssertEqual(alert.defaultButtonIndex, 0)
        XCTAssertNil(alert.cancelButtonIndex)
    }

    func testTheAccessibilityTreeShowsAModalAlertLabelledByItsTitle() async throws {
        let harness = try DialogHarness()
        let choices = Choices()
        let alert = signOutAlert(choices)
        try present(alert, on: harness)
        let tree = harness.host.accessibilityTree(title: "Mail")
        let element = try XCTUnwrap(DialogHarness.element(.alert, in: tree.root))
        XCTAssertEqual(element.label, "Sign out?")
        XCTAssertTrue(element.states.contains(.modal))
        XCTAssertEqual(element.children.map(\.role), [.staticText, .button, .button, .button])
        XCTAssertEqual(element.children.map(\.label),
                       ["You will need your password to sign in again.", "Cancel", "Later", "Sign Out"])
        XCTAssertTrue(element.children[3].states.contains(.focused))
        XCTAssertEqual(tree.focusedID, element.children[3].id)

        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: element.children[2].id))
        XCTAssertEqual(choices.names, ["later"], "a screen reader's press activates the button")
        XCTAssertFalse(alert.isPresented)
        harness.host.performAccessibilityAction(.press, onElement: element.children[1].id)
        XCTAssertEqual(choices.names, ["later"], "a press on a button of the ended alert does nothing")
        let after = harness.host.accessibilityTree(title: "Mail")
        XCTAssertNil(DialogHarness.element(.alert, in: after.root), "the alert left the tree")
    }
}
