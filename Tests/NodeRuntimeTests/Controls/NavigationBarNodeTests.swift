import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Navigation bars: the title centred, the back button at the leading edge (a click, Space, Alt+Left
/// call `onBack`), the app's items at the trailing edge; read as a tool bar with a heading and a
/// button named "Back"; drawn light and dark with the back button's states.
@MainActor
final class NavigationBarNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 340, height: 90)

    private func bar(back: Bool = true) -> (NavigationBarNode, ButtonNode) {
        let call = ButtonNode(title: "Call", attributes: .themed(font: .system(size: 15), .accent))
        let bar = NavigationBarNode(title: "Alice", showsBackButton: back, backTitle: back ? "Chats" : nil)
        bar.trailingItems = [call]
        return (bar, call)
    }

    func testLayoutBackButtonAndAltLeft() async throws {
        let (bar, call) = bar()
        let harness = try ControlHarness(bar, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(bar.frame, Rect(x: 10, y: 10, width: 320, height: 44))
        XCTAssertEqual(bar.titleNode.frame.midX, 160, accuracy: 1, "the title is centred on the bar")
        XCTAssertEqual(bar.backButton.frame.minX, 8)
        XCTAssertEqual(call.frame.maxX, 312, "the trailing item at the trailing margin")
        XCTAssertEqual(bar.backButton.titleNode.attributedText.string, "‹ Chats")
        var backs = 0
        bar.onBack = { backs += 1 }
        harness.click(Point(x: 10 + bar.backButton.frame.midX, y: 10 + bar.backButton.frame.midY))
        XCTAssertEqual(backs, 1)
        XCTAssertTrue(bar.handleKey(.left, modifiers: .alt))
        XCTAssertEqual(backs, 2)
        XCTAssertFalse(bar.handleKey(.left, modifiers: []), "Left alone is not Back")
        XCTAssertFalse(bar.handleKey(.escape, modifiers: []), "Escape is the screen owner's")
        harness.host.focus(nil)
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === bar.backButton, "the first Tab stop")
        harness.keys(.space)
        XCTAssertEqual(backs, 3)
        bar.backTitle = nil
        try harness.settle()
        XCTAssertEqual(bar.backButton.titleNode.attributedText.string, "‹ Back")
        bar.showsBackButton = false
        try harness.settle()
        XCTAssertTrue(bar.backButton.isHidden)
        XCTAssertFalse(bar.handleKey(.left, modifiers: .alt))
        XCTAssertEqual(backs, 3)
        harness.frame([.pointerMoved(Point(x: 330, y: 85))])
        try harness.settle()
        XCTAssertEqual(try harness.colour(40, 30), ThemeColors.standardLight[.bar], "the bar's fill")
    }

    func testAccessibility() async throws {
        let (bar, _) = bar()
        let harness = try ControlHarness(bar, size: size)
        defer { harness.tearDown() }
        let toolBar = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(toolBar.role, .toolBar)
        XCTAssertEqual(toolBar.role.atspiRole, 63)
        XCTAssertEqual(toolBar.role.atspiRoleName, "tool bar")
        XCTAssertEqual(toolBar.label, "Alice")
        XCTAssertEqual(toolBar.children.map(\.role), [.heading, .button, .button])
        XCTAssertEqual(toolBar.children.map(\.label), ["Alice", "Back", "Call"])
        var backs = 0
        bar.onBack = { backs += 1 }
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: toolBar.children[1].id))
        XCTAssertEqual(backs, 1)
        bar.showsBackButton = false
        bar.title = "Chats"
        try harness.settle()
        let plain = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(plain.label, "Chats")
        XCTAssertEqual(plain.children.map(\.label), ["Chats", "Call"], "a hidden back button is not read")
    }

    func testABarFollowsANavigationStack() async throws {
        let chats = NodeController(node: Node())
        chats.title = "Chats"
        let navigation = NavigationController(rootController: chats)
        let bar = NavigationBarNode()
        navigation.navigationBar = bar
        XCTAssertEqual(bar.title, "Chats")
        XCTAssertFalse(bar.showsBackButton, "nothing to go back to")
        let thread = NodeController(node: Node())
        thread.title = "Alice"
        navigation.push(thread, animated: false)
        XCTAssertEqual(bar.title, "Alice")
        XCTAssertTrue(bar.showsBackButton)
        XCTAssertEqual(bar.backTitle, "Chats", "the back button names the screen below")
        thread.title = "Alice Smith"
        XCTAssertEqual(bar.title, "Alice Smith", "a title set later shows")
        bar.onBack?()
        XCTAssertEqual(navigation.viewControllers.count, 1, "the back button pops")
        XCTAssertEqual(bar.title, "Chats")
        XCTAssertFalse(bar.showsBackButton)
        navigation.push(thread, animated: false)
        XCTAssertTrue(navigation.handleKey(.left, modifiers: .alt), "Alt+Left pops")
        XCTAssertEqual(navigation.viewControllers.count, 1)
        XCTAssertFalse(navigation.handleKey(.left, modifiers: .alt), "not at the root")
        navigation.navigationBar = nil
        XCTAssertNil(bar.onBack, "a bar given up stops following")
    }

    /// Rows: a bar without a back button, one with it and a trailing item; columns: at rest, the back
    /// button hovered, pressed, focused.
    private func strip() throws -> Bitmap {
        let cell = Size(width: 340, height: 64)
        let looks: [ControlLook] = [.normal, .hovered, .pressed, .focused]
        var context = try BitmapContext(size: Size(width: cell.width * Double(looks.count), height: cell.height * 2))
        for row in 0..<2 {
            for (column, look) in looks.enumerated() {
                let (bar, _) = bar(back: row == 1)
                let harness = try ControlHarness(bar, size: cell)
                let point = Point(x: 10 + bar.backButton.frame.midX, y: 10 + bar.backButton.frame.midY)
                switch look {
                case .hovered: harness.frame([.pointerMoved(point)])
                case .pressed: harness.frame([.pointerMoved(point), .pointerDown(point, button: 1)])
                case .focused: harness.keys(.tab)
                default: break
                }
                try harness.settle()
                context.draw(try harness.capture(), in: Rect(x: cell.width * Double(column), y: cell.height * Double(row),
                                                             width: cell.width, height: cell.height))
                if look == .pressed { harness.frame([.pointerUp(point, button: 1)]) }
                harness.tearDown()
            }
        }
        return context.makeBitmap()
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 14)), ThemeColors.standardLight[.bar])
        GoldenImage.assertMatches(bitmap, named: "navigationbar-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 14)), ThemeColors.standardDark[.bar])
        GoldenImage.assertMatches(bitmap, named: "navigationbar-dark", in: "NodeRuntimeTests")
    }
}
