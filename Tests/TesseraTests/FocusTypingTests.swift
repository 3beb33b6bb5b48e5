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

/// Keys typed right after the click (or the Tab) that focuses a text field. The window system's
/// events are read in batches: the keys can be translated in the same read as the click, before any
/// thread has answered it, and SDL gives a key its text only while text input is on. The window turns
/// text input on while it reads a press on a layer that takes text, and off again when the UI thread
/// answered without focusing a field.
@MainActor
final class FocusTypingTests: XCTestCase {
    private func makeApp(threaded: Bool) throws -> (Application, FormNode) {
        let form = FormNode()
        var configuration = Application.Configuration.headless(size: Size(width: 220, height: 120))
        configuration.compositorThread = threaded
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: form)
        try app.settle()
        return (app, form)
    }

    /// Runs `push` where the window reads its events, then has the app take them in and settle.
    private func deliver(_ app: Application, _ push: @escaping @Sendable (SDLWindow) -> Void) throws {
        if let thread = app.compositorThread {
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
