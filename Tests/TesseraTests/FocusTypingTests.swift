import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A button and, below it, a field.
private final class FormNode: Node, @unchecked Sendable {
    let button = ButtonNode(title: "Send")
    let field = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Message")

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        addSubnode(button)
        addSubnode(field)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 10, alignItems: .stretch) { button; field.flexShrink(0) }.inset(EdgeInsets(all: 10))
    }
}

/// A button, and in its place a field that is hidden until `swap()` shows it (and hides the button);
/// Ctrl+F focuses the field, as a toolkit's Find shortcut does.
private final class SwapNode: Node, @unchecked Sendable {
    let button = ButtonNode(title: "Send")
    let field = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Message")

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        field.isHidden = true
        addSubnode(button)
        addSubnode(field)
    }

    func swap() {
        button.isHidden = true
        field.isHidden = false
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .stretch) { button.overlay(field) }.inset(EdgeInsets(all: 10))
    }

    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard key == .character("f"), modifiers == [.control] else { return super.keyDown(key, modifiers: modifiers) }
        field.isHidden = false
        nodeHost?.focus(field)
        return true
    }
}

/// Keys typed right after the click (or the Tab) that focuses a text field. The window system's
/// events are read in batches: the keys can be translated in the same read as the click, before any
/// thread has answered it, and SDL gives a key its text only while text input is on. The window turns
/// text input on while it reads a press on a layer that takes text, and off again when the UI thread
/// answered without focusing a field.
@MainActor
final class FocusTypingTests: XCTestCase {
    private func makeApp(threaded: Bool) throws -> (Application, FormNode) {
        try makeApp(threaded: threaded, root: FormNode())
    }

    private func makeApp<Root: Node>(threaded: Bool, root: Root) throws -> (Application, Root) {
        var configuration = Application.Configuration.headless(size: Size(width: 220, height: 120))
        configuration.compositorThread = threaded
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        return (app, root)
    }

    /// Runs `push` where the window reads its events, then has the app take them in and settle.
    private func deliver(_ app: Application, _ push: @escaping @Sendable (SDLWindow) -> Void) throws {
        if let thread = app.compositorThread {
            // Pushed once the thread has drawn what the UI thread committed: the user clicks what
            // the screen shows.
            _ = thread.performAndWait { _, _ in 0 }
            thread.perform { _, backend in push(backend.window) }
            // A command runs before the thread reads its events; the second round trip starts after.
            _ = thread.performAndWait { _, _ in 0 }
            _ = thread.performAndWait { _, _ in 0 }
            app.frame(events: app.compositor.waitForEvents(timeout: 5))
        } else {
            push(try XCTUnwrap(app.compositor.window as? SDLWindow))
            app.frame(events: app.compositor.pollEvents())
        }
        try app.settle()
    }

    /// The middle of `node`, in window points.
    private func center(of node: Node) -> Point {
        let origin = node.convertFromRoot(.zero)
        return Point(x: node.frame.width / 2 - origin.x, y: node.frame.height / 2 - origin.y)
    }

    private func textInputIsOn(_ app: Application) -> Bool {
        if let thread = app.compositorThread {
            // The thread reads the UI thread's answer after the commands that came with it.
            _ = thread.performAndWait { _, _ in 0 }
            return thread.performAndWait { _, backend in backend.window.isTextInputActive } ?? false
        }
        return (app.compositor.window as? SDLWindow)?.isTextInputActive ?? false
    }

    private func checkKeysInTheReadOfTheClick(threaded: Bool) throws {
        let (app, form) = try makeApp(threaded: threaded)
        defer { app.host.setRootController(nil); app.close() }
        XCTAssertFalse(textInputIsOn(app), "no field has focus yet")
        let point = center(of: form.field)
        try deliver(app) { window in
            window.pushEvent(.input(.pointerDown(point, button: 1)))
            window.pushEvent(.input(.pointerUp(point, button: 1)))
            for character in "hi!" { window.pushKeystroke(character) }
        }
        XCTAssertTrue(app.host.focusedNode === form.field)
        XCTAssertEqual(form.field.text, "hi!", "every key typed after the click reached the field")
        XCTAssertTrue(textInputIsOn(app), "the focused field keeps text input on")
    }

    func testKeysReadWithTheClickThatFocusesAFieldReachItOnACompositorThread() async throws {
        try checkKeysInTheReadOfTheClick(threaded: true)
    }

    func testKeysReadWithTheClickThatFocusesAFieldReachItDrawnInline() async throws {
        try checkKeysInTheReadOfTheClick(threaded: false)
    }

    func testKeysReadWithTheTabThatFocusesAFieldReachIt() async throws {
        let (app, form) = try makeApp(threaded: true)
        defer { app.host.setRootController(nil); app.close() }
        app.host.focus(form.button)
        try app.settle()
        try deliver(app) { window in
            window.pushEvent(.input(.keyDown(.tab, modifiers: [])))
            for character in "ok" { window.pushKeystroke(character) }
        }
        XCTAssertTrue(app.host.focusedNode === form.field)
        XCTAssertEqual(form.field.text, "ok")
    }

    /// The screen can be behind the UI thread's model: the click lands where the screen still shows
    /// a button, and the UI thread, which has put a field there, focuses the field. The keys read with
    /// the click keep their text.
    func testKeysReadWithAClickOnAFieldTheScreenDoesNotShowYetReachIt() async throws {
        for threaded in [true, false] {
            let (app, swap) = try makeApp(threaded: threaded, root: SwapNode())
            defer { app.host.setRootController(nil); app.close() }
            let point = center(of: swap.button)
            swap.swap()
            swap.layoutIfNeeded()
            try deliver(app) { window in
                window.pushEvent(.input(.pointerDown(point, button: 1)))
                window.pushEvent(.input(.pointerUp(point, button: 1)))
                for character in "hi" { window.pushKeystroke(character) }
            }
            XCTAssertTrue(app.host.focusedNode === swap.field, "threaded \(threaded)")
            XCTAssertEqual(swap.field.text, "hi", "threaded \(threaded): the keys typed after the click reached the field")
        }
    }

    /// A shortcut that focuses a field (Find's Ctrl+F): the keys read with it keep their text.
    func testKeysReadWithAShortcutThatFocusesAFieldReachIt() async throws {
        for threaded in [true, false] {
            let (app, swap) = try makeApp(threaded: threaded, root: SwapNode())
            defer { app.host.setRootController(nil); app.close() }
            app.host.focus(swap.button)
            try app.settle()
            try deliver(app) { window in
                window.pushEvent(.input(.keyDown(.character("f"), modifiers: [.control])))
                window.pushEvent(.input(.keyUp(.character("f"), modifiers: [.control])))
                for character in "ok" { window.pushKeystroke(character) }
            }
            XCTAssertTrue(app.host.focusedNode === swap.field, "threaded \(threaded)")
            XCTAssertEqual(swap.field.text, "ok", "threaded \(threaded): the keys typed after Ctrl+F reached the field")
        }
    }

    func testTextInputGoesOffWhenTheUIThreadFocusedNoField() async throws {
        for threaded in [true, false] {
            let (app, form) = try makeApp(threaded: threaded)
            defer { app.host.setRootController(nil); app.close() }
            // The Tab may focus a field (the window has one), but it focuses the button.
            try deliver(app) { window in window.pushEvent(.input(.keyDown(.tab, modifiers: []))) }
            XCTAssertTrue(app.host.focusedNode === form.button, "threaded \(threaded)")
            if !threaded { _ = app.compositor.pollEvents() }
            XCTAssertFalse(textInputIsOn(app), "threaded \(threaded): nothing takes text, text input is off")
            // A click on the button, not on the field, never turns it on.
            let point = center(of: form.button)
            try deliver(app) { window in
                window.pushEvent(.input(.pointerDown(point, button: 1)))
                window.pushEvent(.input(.pointerUp(point, button: 1)))
                window.pushKeystroke("x")
            }
            XCTAssertFalse(textInputIsOn(app), "threaded \(threaded)")
            XCTAssertEqual(form.field.text, "")
        }
    }
}

/// A node with a field at its top.
private final class FieldNode: Node, @unchecked Sendable {
    let field = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Search")

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        addSubnode(field)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .stretch) { field.flexShrink(0) }.inset(EdgeInsets(all: 10))
    }
}

/// A screen with a field, for the focus kept across screens.
private final class FieldScreen: NodeController {
    let screen = FieldNode()
    var field: EditableTextNode { screen.field }

    init() { super.init(node: screen) }
}

/// The focus a screen had comes back with it: a search field keeps its focus across a push and a
/// pop, and across a switch of tabs.
@MainActor
final class FocusAcrossScreensTests: XCTestCase {
    func testAFieldFocusedBeforeAPushHasFocusAgainAfterThePop() async throws {
        let first = FieldScreen(), second = FieldScreen()
        let navigation = NavigationController(rootController: first)
        let app = try Application(configuration: .headless(size: Size(width: 200, height: 120)), rootController: navigation)
        defer { app.host.setRootController(nil); app.close() }
        try app.settle()
        app.host.focus(first.field)
        XCTAssertTrue(app.host.focusedNode === first.field)
        navigation.push(second, animated: true)
        try app.settle()
        XCTAssertNil(app.host.focusedNode, "the field left the screen, and its focus with it")
        app.host.focus(second.field)
        _ = navigation.popController(animated: true)
        try app.settle()
        XCTAssertTrue(app.host.focusedNode === first.field, "the field has its focus back")
    }

    func testAFieldFocusedInATabHasFocusAgainWhenTheTabComesBack() async throws {
        let first = FieldScreen(), second = FieldScreen()
        let tabs = TabController(controllers: [first, second], tabBar: Node(), tabBarHeight: 20)
        let app = try Application(configuration: .headless(size: Size(width: 200, height: 120)), rootController: tabs)
        defer { app.host.setRootController(nil); app.close() }
        try app.settle()
        app.host.focus(first.field)
        tabs.select(1)
        try app.settle()
        XCTAssertNil(app.host.focusedNode)
        tabs.select(0)
        try app.settle()
        XCTAssertTrue(app.host.focusedNode === first.field)
        // A screen that gives focus elsewhere when it appears keeps that choice.
        tabs.select(1)
        try app.settle()
        app.host.focus(second.field)
        tabs.select(0)
        try app.settle()
        XCTAssertTrue(app.host.focusedNode === first.field, "the shown field, not the hidden tab's")
    }
}
