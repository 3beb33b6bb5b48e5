import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen with one button at its top left (which takes the focus, and whose presses are counted),
/// the rest of it empty: what menus open over in the menu tests.
final class MenuScreenNode: Node, @unchecked Sendable {
    let button = ButtonNode(title: "Target")
    let bar: MenuBarNode?

    @MainActor
    init(bar: MenuBarNode? = nil) {
        self.bar = bar
        super.init()
        themedBackgroundColor = .secondaryBackground
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .stretch) {
            bar
            VStack(alignItems: .start) { button }.inset(EdgeInsets(all: 10))
        }
    }
}

/// The one driver of the menu tests: a headless host over the software renderer showing a
/// `MenuScreenNode`, stepped frame by frame by hand (no sleeps), with the helpers the tests share.
@MainActor
final class MenuHarness {
    let host: NodeHost
    let screen: MenuScreenNode
    /// Presses of the screen's button.
    private(set) var buttonPresses = 0

    init(size: Size = Size(width: 400, height: 300), scale: Double = 1, bar: MenuBarNode? = nil) throws {
        host = try PixelOracle.makeHost(size: size, scale: scale)
        host.measuresLayoutInBackground = false
        screen = MenuScreenNode(bar: bar)
        host.setRootNode(screen)
        try host.settle()
        screen.button.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.buttonPresses += 1 }
    }

    /// One frame `seconds` after the last, with `events`.
    func frame(_ events: [InputEvent] = [], after seconds: Double = 1.0 / 60) {
        host.runFrame(time: host.time + seconds, events: events)
    }

    func key(_ key: Key, _ modifiers: KeyModifiers = [], after seconds: Double = 1.0 / 60) {
        frame([.keyDown(key, modifiers: modifiers), .keyUp(key, modifiers: modifiers)], after: seconds)
    }

    func keys(_ keys: Key...) {
        for key in keys { self.key(key) }
    }

    /// A press and release of `button` at `point`, the pointer moved there first.
    func click(_ point: Point, button: Int = 1) {
        frame([.pointerMoved(point)])
        frame([.pointerDown(point, button: button)])
        frame([.pointerUp(point, button: button)])
    }

    /// Focuses the screen's button (as a Tab would).
    func focusButton() {
        key(.tab)
        XCTAssertTrue(host.focusedNode === screen.button, "the button takes the focus")
    }

    func settle() throws { try host.settle() }

    /// The menus open now, the first opened first.
    var menus: [MenuNode] { host.openMenus }

    /// The middle of item `index` of `menu`, in window points.
    func centre(of index: Int, in menu: MenuNode) -> Point {
        let row = menu.rows[index].frame
        return Point(x: menu.frame.minX + row.midX, y: menu.frame.minY + row.midY)
    }

    /// The screen's button's frame in the window.
    var buttonFrame: Rect { NodeHost.windowFrame(of: screen.button) ?? .zero }

    /// Ends the test's menus and takes the screen away.
    func tearDown() {
        host.setRootNode(nil)
    }
}

/// Counts the actions of a test menu's items by title.
@MainActor
final class MenuActionLog {
    private(set) var chosen: [String] = []
    func item(_ title: String, shortcut: KeyboardShortcut? = nil, mark: MenuItem.Mark = .none) -> MenuItem {
        MenuItem(title, shortcut: shortcut, mark: mark) { [weak self] in self?.chosen.append(title) }
    }
}
