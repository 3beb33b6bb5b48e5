import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen with one button at its top left, and no size of its own.
private final class FieldScreenNode: Node, @unchecked Sendable {
    let field = ButtonNode(title: "Name", attributes: TextFixtures.plain(15))

    override init() {
        super.init()
        automaticallyManagesSubnodes = true
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size { .zero }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        // Only when given a size: measured freely, the screen has none (it fills what it gets).
        guard constrainedSize.min.width > 0 else { return nil }
        return RelativeSpec(horizontal: .start, vertical: .start, child: field.inset(20))
    }
}

/// A controller that logs its lifecycle, shown in a sheet.
private final class SheetLoggingController: NodeController {
    var log: [String] = []
    var sizes: [Size] = []
    var field: ButtonNode { (node as! FieldScreenNode).field }

    init() {
        super.init(node: FieldScreenNode())
    }

    override func loadView() { log.append("loadView") }
    override func viewDidLoad() { log.append("viewDidLoad") }
    override func viewWillAppear() { log.append("viewWillAppear") }
    override func viewDidAppear() { log.append("viewDidAppear") }
    override func viewWillLayoutSubviews() {
        log.append("viewWillLayoutSubviews")
        sizes.append(node.frame.size)
    }
    override func viewWillDisappear() { log.append("viewWillDisappear") }
    override func viewDidDisappear() { log.append("viewDidDisappear") }
}

/// Sheets: focus, Tab, Escape, dismissing from code, a controller's lifecycle, screen readers.
@MainActor
final class SheetTests: XCTestCase {
    override func setUp() async throws { resetDialogAppearance() }
    override func tearDown() async throws { resetDialogAppearance() }

    private func presentForm(on harness: DialogHarness, configure: (Sheet) -> Void = { _ in }) throws -> (Sheet, SheetFormNode) {
        let form = SheetFormNode()
        let sheet = Sheet(content: form, title: "Rename Album")
        configure(sheet)
        harness.host.presentSheet(sheet)
        try harness.settle()
        return (sheet, form)
    }

    func testFocusMovesInTabStaysInsideAndTheFocusReturns() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.edit)
        let (sheet, form) = try presentForm(on: harness)
        XCTAssertTrue(harness.host.focusedNode === form.cancel, "the first node inside that takes the focus")
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === form.rename)
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === form.cancel, "Tab wraps round inside the sheet")
        harness.key(.tab, .shift)
        XCTAssertTrue(harness.host.focusedNode === form.rename)
        var completions = 0
        var reasons: [Overlay.DismissReason] = []
        sheet.onDismiss = { reasons.append($0) }
        sheet.dismiss { completions += 1 }
        sheet.dismiss { completions += 10 }  // ended already: at once
        XCTAssertFalse(sheet.isPresented)
        XCTAssertEqual(completions, 11)
        XCTAssertEqual(reasons, [.dismissed])
        XCTAssertTrue(harness.host.focusedNode === harness.screen.edit)
    }

    func testEscapeEndsTheSheetOnlyWhenTheAppLetsIt() async throws {
        let harness = try DialogHarness()
        let (sheet, _) = try presentForm(on: harness) { $0.dismissesOnEscape = false }
        harness.key(.escape)
        harness.host.focus(nil)
        harness.key(.escape)
        XCTAssertTrue(sheet.isPresented, "Escape refused")
        XCTAssertTrue(harness.keysHeard.isEmpty, "and kept from the app: \(harness.keysHeard)")
        sheet.dismissesOnEscape = true
        var reasons: [Overlay.DismissReason] = []
        sheet.onDismiss = { reasons.append($0) }
        harness.key(.escape)
        XCTAssertFalse(sheet.isPresented)
        XCTAssertEqual(reasons, [.escape])
    }

    func testASheetWithNothingFocusableTakesTheFocusItselfAndEscapeEndsIt() async throws {
        let harness = try DialogHarness()
        harness.host.focus(harness.screen.share)
        let text = TextNode()
        text.attributedText = AttributedText("Copied to the clipboard.", attributes: TextFixtures.plain(15))
        let sheet = harness.host.presentSheet(Sheet(content: text, title: "Copied"))
        try harness.settle()
        XCTAssertTrue(harness.host.focusedNode === sheet.card, "the card holds the focus")
        harness.key(.character("c"), .control)
        XCTAssertTrue(harness.keysHeard.isEmpty)
        harness.key(.escape)
        XCTAssertFalse(sheet.isPresented)
        XCTAssertTrue(harness.host.focusedNode === harness.screen.share)
    }

    func testClicksBehindTheSheetDoNothing() async throws {
        let harness = try DialogHarness()
        let edit = harness.centre(of: harness.screen.edit)
        let (sheet, form) = try presentForm(on: harness)
        harness.click(edit)
        harness.click(Point(x: 470, y: 350))
        XCTAssertTrue(sheet.isPresented)
        XCTAssertEqual(harness.screen.activations, [])
        var renamed = 0
        form.rename.addTarget(for: .primaryActionTriggered) { _, _ in renamed += 1 }
        harness.click(harness.centre(of: form.rename))
        XCTAssertEqual(renamed, 1, "the sheet's own controls take clicks")
    }

    func testAControllersLifecycleInASheet() async throws {
        let harness = try DialogHarness()
        let presenter = NodeController(node: harness.screen)
        harness.host.setRootController(presenter)
        try harness.settle()
        let shown = SheetLoggingController()
        let sheet = presenter.presentSheet(shown, title: "Edit Profile")
        try harness.settle()
        XCTAssertTrue(presenter.presentedSheet === sheet)
        XCTAssertTrue(shown.sheet === sheet)
        XCTAssertTrue(shown.isPresented)
        XCTAssertEqual(Array(shown.log.prefix(3)), ["loadView", "viewDidLoad", "viewWillAppear"])
        XCTAssertEqual(shown.log.filter { $0 == "viewDidAppear" }.count, 1)
        XCTAssertLessThan(try XCTUnwrap(shown.log.firstIndex(of: "viewWillAppear")),
                          try XCTUnwrap(shown.log.firstIndex(of: "viewDidAppear")))
        // A node that measures to nothing fills the room the window leaves.
        let margin = DialogMetrics.windowMargin
        XCTAssertEqual(shown.node.frame.size, Size(width: 480 - 2 * margin, height: 360 - 2 * margin))
        XCTAssertEqual(shown.sizes.last, shown.node.frame.size, "viewWillLayoutSubviews saw the size")
        XCTAssertTrue(harness.host.focusedNode === shown.field)

        sheet.preferredContentSize = Size(width: 300, height: 200)
        try harness.settle()
        XCTAssertEqual(shown.node.frame.size, Size(width: 300, height: 200))
        XCTAssertEqual(shown.sizes.last, Size(width: 300, height: 200))
        XCTAssertEqual(sheet.frame, Rect(x: 90, y: 80, width: 300, height: 200))

        shown.log.removeAll()
        var completed = false
        shown.dismissSheet { completed = true }
        XCTAssertTrue(completed)
        XCTAssertEqual(shown.log, ["viewWillDisappear", "viewDidDisappear"])
        XCTAssertFalse(shown.isPresented)
        XCTAssertNil(presenter.presentedSheet)
        XCTAssertNil(shown.sheet)
        XCTAssertTrue(harness.host.overlays.isEmpty)
    }

    func testAControllerPushedInASheetsNavigationDismissesTheSheet() async throws {
        let harness = try DialogHarness()
        let presenter = NodeController(node: harness.screen)
        harness.host.setRootController(presenter)
        let first = SheetLoggingController()
        let navigation = NavigationController(rootController: first)
        let sheet = presenter.presentSheet(navigation, title: "Settings")
        try harness.settle()
        let second = SheetLoggingController()
        navigation.push(second, animated: false)
        try harness.settle()
        XCTAssertTrue(second.isPresented)
        var completed = false
        second.dismissSheet { completed = true }
        XCTAssertFalse(sheet.isPresented)
        XCTAssertTrue(completed)
        XCTAssertFalse(second.isPresented, "the navigation controller passed the dismissal on")
        XCTAssertTrue(harness.host.overlays.isEmpty)
    }

    func testAControllerInASheetFollowsTheWindowsSize() async throws {
        // The recording backend's window can be resized from a test.
        let (host, backend) = makeHost(width: 480, height: 360)
        let presenter = NodeController(node: DialogTestScreen())
        host.setRootController(presenter)
        try host.settle()
        let shown = SheetLoggingController()
        presenter.presentSheet(shown)
        try host.settle()
        let margin = DialogMetrics.windowMargin
        XCTAssertEqual(shown.node.frame.size, Size(width: 480 - 2 * margin, height: 360 - 2 * margin))
        backend.outputPixelSize = (400, 300)
        host.viewportDidChange()
        try host.settle()
        let resized = Size(width: 400 - 2 * margin, height: 300 - 2 * margin)
        XCTAssertEqual(shown.node.frame.size, resized)
        XCTAssertEqual(shown.sizes.last, resized, "viewWillLayoutSubviews heard of the new size")
        XCTAssertEqual(host.overlays.first?.container.frame.size, Size(width: 400, height: 300))
        shown.dismissSheet()
    }

    func testEscapeAndAHostResetEndAControllersSheetWithItsLifecycle() async throws {
        let harness = try DialogHarness()
        let presenter = NodeController(node: harness.screen)
        harness.host.setRootController(presenter)
        let first = SheetLoggingController()
        presenter.presentSheet(first)
        try harness.settle()
        first.log.removeAll()
        harness.key(.escape)
        XCTAssertEqual(first.log, ["viewWillDisappear", "viewDidDisappear"])

        let second = SheetLoggingController()
        var reasons: [Overlay.DismissReason] = []
        presenter.presentSheet(second).onDismiss = { reasons.append($0) }
        try harness.settle()
        second.log.removeAll()
        harness.host.setRootNode(DialogTestScreen(name: "other"))
        XCTAssertEqual(second.log, ["viewWillDisappear", "viewDidDisappear"])
        XCTAssertEqual(reasons, [.hostReset])
    }

    func testAnAlertOverASheetReturnsTheFocusToTheSheet() async throws {
        let harness = try DialogHarness()
        let (sheet, form) = try presentForm(on: harness)
        harness.key(.tab)
        XCTAssertTrue(harness.host.focusedNode === form.rename)
        let alert = harness.host.presentAlert(Alert(title: "Name taken", buttons: [.default("OK")]))
        try harness.settle()
        harness.key(.escape)
        XCTAssertTrue(alert.isPresented, "no cancel button: Escape stays with the alert, the sheet under it stays too")
        XCTAssertTrue(sheet.isPresented)
        harness.key(.enter)
        XCTAssertFalse(alert.isPresented)
        XCTAssertTrue(sheet.isPresented)
        XCTAssertTrue(harness.host.focusedNode === form.rename)
    }

    func testTheAccessibilityTreeShowsAModalDialog() async throws {
        let harness = try DialogHarness()
        let (_, form) = try presentForm(on: harness)
        let tree = harness.host.accessibilityTree(title: "Photos")
        let dialog = try XCTUnwrap(DialogHarness.element(.dialog, in: tree.root))
        XCTAssertEqual(dialog.label, "Rename Album")
        XCTAssertTrue(dialog.states.contains(.modal))
        XCTAssertEqual(dialog.children.map(\.role), [.staticText, .staticText, .button, .button])
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: dialog.children[3].id))
        var renamed = 0
        form.rename.addTarget(for: .primaryActionTriggered) { _, _ in renamed += 1 }
        harness.host.performAccessibilityAction(.press, onElement: dialog.children[3].id)
        XCTAssertEqual(renamed, 1)
    }
}
