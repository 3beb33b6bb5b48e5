import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Alerts and sheets as they look over a window, in light and dark, against goldens
/// (`TESSERA_RECORD_GOLDENS=1` records them), and the colours that must hold whatever the goldens say.
@MainActor
final class DialogPixelTests: XCTestCase {
    override func setUp() async throws { resetDialogAppearance() }
    override func tearDown() async throws { resetDialogAppearance() }

    private static let longMessage = "Your library has 2,418 photos that are not backed up yet. If you sign out now, "
        + "they stay on this computer but will not reach your other devices until you sign in again with the "
        + "same account. Do you want to sign out anyway?"

    private func alerts() -> [(String, Alert)] {
        [("alert-one-button", Alert(title: "Update installed", message: "Restart to finish.", buttons: [.default("Restart")])),
         ("alert-two-buttons", Alert(title: "Sign out?", message: "You will need your password to sign in again.",
                                     buttons: [.cancel("Cancel"), .destructive("Sign Out")])),
         ("alert-three-buttons", Alert(title: "Save changes?", message: "Your edits to “Budget” are not saved.",
                                       buttons: [.destructive("Discard"), .cancel("Cancel"), .default("Save")])),
         ("alert-long-message", Alert(title: "Photos not backed up", message: Self.longMessage,
                                      buttons: [.cancel("Cancel"), .destructive("Sign Out Anyway")]))]
    }

    private func render(dark: Bool, present: (DialogHarness) -> Void) throws -> Bitmap {
        if dark { Runtime.shared.setAppearance(Appearance(colorScheme: .dark)) }
        let harness = try DialogHarness()
        present(harness)
        try harness.settle()
        return try harness.capture()
    }

    func testAlertsInLightAndDark() async throws {
        for dark in [false, true] {
            for (name, _) in alerts() {
                resetDialogAppearance()
                let alert = try XCTUnwrap(alerts().first { $0.0 == name }?.1)
                let image = try render(dark: dark) { $0.host.presentAlert(alert) }
                GoldenImage.assertMatches(image, named: "\(name)-\(dark ? "dark" : "light")", in: "NodeRuntimeTests")
            }
        }
    }

    func testAnAlertShownFollowsTheAppearanceWhenItChanges() async throws {
        let alert = Alert(title: "Sign out?", message: "You will need your password to sign in again.",
                          buttons: [.cancel("Cancel"), .destructive("Sign Out")])
        let image = try render(dark: false) { harness in
            harness.host.presentAlert(alert)
            try? harness.settle()
            Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        }
        GoldenImage.assertMatches(image, named: "alert-two-buttons-dark", in: "NodeRuntimeTests")
    }

    func testTheDefaultButtonIsFilledWithTheAccentAndTheWindowIsDimmed() async throws {
        let harness = try DialogHarness()
        let background = try harness.pixel(Point(x: 5, y: 350))
        let alert = Alert(title: "Sign out?", buttons: [.cancel("Cancel"), .default("Sign Out")])
        harness.host.presentAlert(alert)
        try harness.settle()
        let accent = Runtime.shared.resolveColor(.accent)
        let buttonFrame = alert.buttonNodes[1].layer.frameInRoot
        let edge = try harness.pixel(Point(x: buttonFrame.minX + 4, y: buttonFrame.midY))
        XCTAssertEqual(edge, accent, "the default button's fill")
        let cancelFrame = alert.buttonNodes[0].layer.frameInRoot
        XCTAssertEqual(try harness.pixel(Point(x: cancelFrame.minX + 4, y: cancelFrame.midY)),
                       Runtime.shared.resolveColor(.fill))
        let card = alert.card.layer.frameInRoot
        XCTAssertEqual(try harness.pixel(Point(x: card.midX, y: card.minY + 6)), Runtime.shared.resolveColor(.background))
        XCTAssertEqual(card.width, DialogMetrics.alertWidth)
        XCTAssertEqual(card.midX, 240, accuracy: 0.5)
        let dimmed = try harness.pixel(Point(x: 5, y: 350))
        XCTAssertLessThan(Int(dimmed.green), Int(background.green) - 40, "the window behind is dimmed: \(background) → \(dimmed)")
    }

    func testButtonsStackWhenATitleDoesNotFitItsShare() async throws {
        let harness = try DialogHarness()
        let alert = Alert(title: "Photos not backed up", message: Self.longMessage,
                          buttons: [.cancel("Cancel"), .destructive("Sign Out and Remove Photos")])
        harness.host.presentAlert(alert)
        try harness.settle()
        let first = alert.buttonNodes[0].layer.frameInRoot, second = alert.buttonNodes[1].layer.frameInRoot
        XCTAssertEqual(first.minX, second.minX)
        XCTAssertGreaterThan(second.minY, first.maxY)
        XCTAssertEqual(first.width, DialogMetrics.alertWidth - 2 * DialogMetrics.cardPadding)
        let message = (alert.card.content as! AlertContentNode).messageNode
        XCTAssertGreaterThan(message.frame.height, 60, "the long message wraps onto several lines")
    }

    func testAnAlertInANarrowWindowKeepsItsMargins() async throws {
        let harness = try DialogHarness(size: Size(width: 300, height: 360))
        let alert = Alert(title: "Sign out?", buttons: [.cancel("Cancel"), .default("Sign Out")])
        harness.host.presentAlert(alert)
        try harness.settle()
        let card = alert.card.layer.frameInRoot
        XCTAssertEqual(card.minX, DialogMetrics.windowMargin)
        XCTAssertEqual(card.width, 300 - 2 * DialogMetrics.windowMargin)
    }

    func testADialogFadesInUnlessMotionIsReduced() async throws {
        let harness = try DialogHarness()
        let alert = harness.host.presentAlert(Alert(title: "Sign out?", buttons: [.cancel("Cancel"), .default("Sign Out")]))
        XCTAssertEqual(alert.backdrop.layer.opacity, 0, "it starts transparent")
        harness.frame()
        harness.frame()
        let midway = alert.backdrop.layer.opacity
        XCTAssertGreaterThan(midway, 0)
        XCTAssertLessThan(midway, 1)
        try harness.settle()
        XCTAssertEqual(alert.backdrop.layer.opacity, 1)
        alert.dismiss()

        Runtime.shared.setAppearance(Appearance(reducedMotion: true))
        let sheet = harness.host.presentSheet(Sheet(content: SheetFormNode(), title: "Rename"))
        XCTAssertEqual(sheet.backdrop.layer.opacity, 1, "with reduced motion it is there at once")
        XCTAssertEqual(Runtime.shared.animator.count, 0)
    }

    func testSheetsInLightAndDark() async throws {
        for dark in [false, true] {
            resetDialogAppearance()
            let image = try render(dark: dark) { harness in
                let sheet = Sheet(content: SheetFormNode(), title: "Rename")
                harness.host.presentSheet(sheet)
            }
            GoldenImage.assertMatches(image, named: "sheet-\(dark ? "dark" : "light")", in: "NodeRuntimeTests")
        }
    }
}

/// A small form for a sheet: a heading, a line of text and two buttons.
final class SheetFormNode: Node, @unchecked Sendable {
    let heading = TextNode()
    let detail = TextNode()
    let cancel = DialogButtonNode(title: "Cancel", suggested: false, destructive: false)
    let rename = DialogButtonNode(title: "Rename", suggested: true, destructive: false)

    override init() {
        super.init()
        automaticallyManagesSubnodes = true
        heading.attributedText = AttributedText("Rename “Holiday 2026”", attributes: .themed(font: .system(size: 17, bold: true), .label))
        detail.attributedText = AttributedText("The album keeps its photos and its sharing.",
                                               attributes: .themed(font: .system(size: 15), .secondaryLabel))
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 12, alignItems: .stretch) {
            heading
            detail
            HStack(spacing: 12, justifyContent: .end) { cancel; rename }.spacingBefore(12)
        }.inset(EdgeInsets(all: 20))
    }
}
