import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// Two buttons and two fields, in Tab order: button, field, second button, second field.
private final class TwoFieldForm: Node, @unchecked Sendable {
    let button = ButtonNode(title: "One")
    let field = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "First")
    let secondButton = ButtonNode(title: "Two")
    let secondField = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Second")
    /// Empty space that takes the pointer but no focus.
    let pad = Node()

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        pad.isUserInteractionEnabled = true
        for node in [button, field, secondButton, secondField, pad] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 8, alignItems: .stretch) {
            button; field.flexShrink(0); secondButton; secondField.flexShrink(0); pad.height(30)
        }.inset(EdgeInsets(all: 8))
    }
}

/// An audit of the text input a press or a Tab turns on while SDL reads it, at the app's level:
/// orderings of presses, Tabs, keys, UI answers and focus changes, drawn inline and on a compositor
/// thread. The invariant after every answered step: text input is on exactly while a field has focus,
/// and every key typed after the click or Tab that focuses a field reaches that field. Tests marked
/// FOUND failed when first written (each names the defect they found, now fixed).
@MainActor
final class TextEntryAuditTests: XCTestCase {
    private func makeApp(threaded: Bool, _ prepare: (TwoFieldForm) -> Void = { _ in }) throws -> (Application, TwoFieldForm) {
        let form = TwoFieldForm()
        prepare(form)
        var configuration = Application.Configuration.headless(size: Size(width: 240, height: 220))
        configuration.compositorThread = threaded
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: form)
        try app.settle()
        return (app, form)
    }

    /// Puts events where the window reads them (on its thread), and returns once they were read;
    /// the UI thread has not taken them in yet.
    private func push(_ app: Application, _ push: @escaping @Sendable (SDLWindow) -> Void) throws {
        if let thread = app.compositorThread {
            // Pushed once the thread has drawn what the UI thread committed (a command runs before the
            // commit that came with it is drawn): the user clicks what the screen shows.
            _ = thread.performAndWait { _, _ in 0 }
            thread.perform { _, backend in push(backend.window) }
            _ = thread.performAndWait { _, _ in 0 }
            _ = thread.performAndWait { _, _ in 0 }
        } else {
            push(try XCTUnwrap(app.compositor.window as? SDLWindow))
        }
    }

    /// The UI thread takes in what was read and answers it (one frame, then settled).
    private func answer(_ app: Application) throws {
        if app.compositorThread != nil {
            app.frame(events: app.compositor.waitForEvents(timeout: 5))
        } else {
            app.frame(events: app.compositor.pollEvents())
        }
        try app.settle()
    }

    private func deliver(_ app: Application, _ body: @escaping @Sendable (SDLWindow) -> Void) throws {
        try push(app, body)
        try answer(app)
    }

    private func center(of node: Node) -> Point {
        let origin = node.convertFromRoot(.zero)
        return Point(x: node.frame.width / 2 - origin.x, y: node.frame.height / 2 - origin.y)
    }

    private func textInputIsOn(_ app: Application) throws -> Bool {
        if let thread = app.compositorThread {
            _ = thread.performAndWait { _, _ in 0 }
            return try XCTUnwrap(thread.performAndWait { _, backend in backend.window.isTextInputActive })
        }
        let window = try XCTUnwrap(app.compositor.window as? SDLWindow)
        // A window drawn inline ends an unconfirmed one at its next read.
        _ = window.pollEvents()
        return window.isTextInputActive
    }

    /// Text input is on exactly while a field has focus.
    private func assertTextInputFollowsFocus(_ app: Application, _ step: String,
                                             file: StaticString = #filePath, line: UInt = #line) throws {
        let on = try textInputIsOn(app)
        let fieldFocused = app.host.focusedNode is EditableTextNode
        XCTAssertEqual(on, fieldFocused, "\(step): text input on \(on), focus \(String(describing: app.host.focusedNode))",
                       file: file, line: line)
    }

    private nonisolated static func click(_ point: Point, in window: SDLWindow) {
        window.pushEvent(.input(.pointerDown(point, button: 1)))
        window.pushEvent(.input(.pointerUp(point, button: 1)))
    }

    private func close(_ app: Application) {
        app.host.setRootController(nil)
        app.close()
    }

    // MARK: Regressions that held

    func testClickFieldThenClickElsewhereThenClickEmptySpace() async throws {
        for threaded in [true, false] {
            let (app, form) = try makeApp(threaded: threaded)
            defer { close(app) }
            let field = center(of: form.field), button = center(of: form.secondButton), pad = center(of: form.pad)
            try deliver(app) { window in
                Self.click(field, in: window)
                for character in "ab" { window.pushKeystroke(character) }
            }
            XCTAssertEqual(form.field.text, "ab", "threaded \(threaded)")
            try assertTextInputFollowsFocus(app, "threaded \(threaded): field clicked")
            try deliver(app) { window in
                Self.click(button, in: window)
                for character in "cd" { window.pushKeystroke(character) }
            }
            XCTAssertTrue(app.host.focusedNode === form.secondButton)
            XCTAssertEqual(form.field.text, "ab", "threaded \(threaded): keys after the button's click went nowhere")
            try assertTextInputFollowsFocus(app, "threaded \(threaded): button clicked")
            // Empty space takes the pointer but no focus: the button keeps it, text input stays off.
            try deliver(app) { window in Self.click(pad, in: window) }
            try assertTextInputFollowsFocus(app, "threaded \(threaded): empty space clicked")
            // Back to the second field, with keys in the same read.
            let second = center(of: form.secondField)
            try deliver(app) { window in
                Self.click(second, in: window)
                for character in "ef" { window.pushKeystroke(character) }
            }
            XCTAssertEqual(form.secondField.text, "ef", "threaded \(threaded)")
            try assertTextInputFollowsFocus(app, "threaded \(threaded): second field clicked")
        }
    }

    func testTabAcrossButtonsAndFieldsKeepsTextInputWithTheFocusedField() async throws {
        for threaded in [true, false] {
            let (app, form) = try makeApp(threaded: threaded)
            defer { close(app) }
            let order: [Node] = [form.button, form.field, form.secondButton, form.secondField, form.button, form.field]
            for (index, expected) in order.enumerated() {
                let letter = Character(Unicode.Scalar(UInt8(97 + index)))
                try deliver(app) { window in
                    window.pushEvent(.input(.keyDown(.tab, modifiers: [])))
                    window.pushEvent(.input(.keyUp(.tab, modifiers: [])))
                    window.pushKeystroke(letter)
                }
                XCTAssertTrue(app.host.focusedNode === expected, "threaded \(threaded), Tab \(index + 1)")
                try assertTextInputFollowsFocus(app, "threaded \(threaded), Tab \(index + 1)")
            }
            // Each field got the key typed right after the Tab that focused it, and only that.
            XCTAssertEqual(form.field.text, "bf", "threaded \(threaded)")
            XCTAssertEqual(form.secondField.text, "d", "threaded \(threaded)")
            // Shift-Tab back from the field to the button.
            try deliver(app) { window in window.pushEvent(.input(.keyDown(.tab, modifiers: [.shift]))) }
            XCTAssertTrue(app.host.focusedNode === form.button)
            try assertTextInputFollowsFocus(app, "threaded \(threaded), Shift-Tab")
        }
    }

    /// Reads while the UI thread stalls: a press on the field and keys, then a press on a button and
    /// keys, both read before the UI answers the first.
    func testAPressOnTheFieldThenOnAButtonDuringAStall() async throws {
        for threaded in [true, false] {
            let (app, form) = try makeApp(threaded: threaded)
            defer { close(app) }
            let field = center(of: form.field), button = center(of: form.secondButton)
            try push(app) { window in
                Self.click(field, in: window)
                for character in "ab" { window.pushKeystroke(character) }
            }
            try push(app) { window in
                Self.click(button, in: window)
                for character in "cd" { window.pushKeystroke(character) }
            }
            try answer(app)
            XCTAssertEqual(form.field.text, "ab", "threaded \(threaded)")
            XCTAssertTrue(app.host.focusedNode === form.secondButton)
            try assertTextInputFollowsFocus(app, "threaded \(threaded): after the stall")
            // The other way round: a button, then the other field.
            let second = center(of: form.secondField)
            try push(app) { window in Self.click(button, in: window) }
            try push(app) { window in
                Self.click(second, in: window)
                for character in "xy" { window.pushKeystroke(character) }
            }
            try answer(app)
            XCTAssertEqual(form.secondField.text, "xy", "threaded \(threaded)")
            try assertTextInputFollowsFocus(app, "threaded \(threaded): after the second stall")
        }
    }

    /// The field goes (removed, or hidden) between the press the window read and the UI's answer: no
    /// field takes focus, and text input goes off again.
    func testTheFieldGoesBetweenThePressAndTheAnswer() async throws {
        for threaded in [true, false] {
            for removes in [true, false] {
                let (app, form) = try makeApp(threaded: threaded)
                defer { close(app) }
                let field = center(of: form.field)
                try push(app) { window in
                    Self.click(field, in: window)
                    for character in "ab" { window.pushKeystroke(character) }
                }
                if removes { form.field.removeFromSupernode() } else { form.field.isHidden = true }
                try answer(app)
                XCTAssertNil(app.host.focusedNode, "threaded \(threaded), removed \(removes)")
                XCTAssertEqual(form.field.text, "")
                try assertTextInputFollowsFocus(app, "threaded \(threaded), removed \(removes)")
            }
        }
    }

    /// Focus moved by code between the Tab the window read and the UI's answer.
    func testFocusMovedByCodeBetweenTheTabAndTheAnswer() async throws {
        for threaded in [true, false] {
            let (app, form) = try makeApp(threaded: threaded)
            defer { close(app) }
            try push(app) { window in window.pushEvent(.input(.keyDown(.tab, modifiers: []))) }
            app.host.focus(form.secondField)  // code: the Tab then moves on from there, to the button
            try answer(app)
            XCTAssertTrue(app.host.focusedNode === form.button, "threaded \(threaded)")
            try assertTextInputFollowsFocus(app, "threaded \(threaded)")
            // And by code to a field after a press on a button.
            let button = center(of: form.secondButton)
            try push(app) { window in Self.click(button, in: window) }
            try answer(app)
            app.host.focus(form.field)
            try app.settle()
            try assertTextInputFollowsFocus(app, "threaded \(threaded), focused by code")
            app.host.focus(nil)
            try app.settle()
            try assertTextInputFollowsFocus(app, "threaded \(threaded), focus cleared by code")
        }
    }

    /// Without an SDL window (a recording backend) nothing of SDL is touched; the input roles say
    /// which layers take text, and the platform's text input follows focus as before.
    func testARecordingBackendTakesTextWithoutAWindow() async throws {
        let backend = RecordingRenderBackend(width: 240, height: 220)
        let host = NodeHost(compositor: Compositor(backend: backend))
        let form = TwoFieldForm()
        host.setRootNode(form)
        try host.settle()
        XCTAssertTrue(form.field.layer.inputRole.takesText)
        XCTAssertFalse(form.button.layer.inputRole.takesText)
        XCTAssertFalse(form.pad.layer.inputRole.takesText)
        host.runFrame(time: host.time + 0.1, events: [.pointerDown(center(of: form.field), button: 1),
                                                       .pointerUp(center(of: form.field), button: 1)])
        XCTAssertNotNil(backend.textInputCaret, "the field took focus: text input on")
        host.runFrame(time: host.time + 1, events: [.pointerDown(center(of: form.button), button: 1),
                                                     .pointerUp(center(of: form.button), button: 1)])
        XCTAssertNil(backend.textInputCaret)
        // A field that takes no pointer takes no text from a press either.
        form.secondField.isUserInteractionEnabled = false
        try host.settle()
        XCTAssertFalse(form.secondField.layer.inputRole.takesText)
        host.setRootNode(nil)
    }

    // MARK: Defects

    /// FOUND (drawn inline). The Tab turned text input on and focused a button; the UI answered, and
    /// the app went idle in `waitForEvents`. The click on the field and the keys after it are read by
    /// that wait (SDL_WaitEventTimeout reads the window system before `drainEvents` runs): text input
    /// was still on, so the press recorded nothing and the keys got their text; then `drainEvents`
    /// ended the old provisional with `SDL_StopTextInput`, which flushes SDL_TEXTINPUT events still
    /// queued. The field takes focus with none of the keys typed right after the click.
    func testKeysTypedAfterAClickReadByTheIdleWaitAfterATabReachTheField() async throws {
        let (app, form) = try makeApp(threaded: false)
        defer { close(app) }
        let window = try XCTUnwrap(app.compositor.window as? SDLWindow)
        window.pushEvent(.input(.keyDown(.tab, modifiers: [])))
        app.frame(events: app.compositor.pollEvents())  // the Tab focuses the button: no field confirms
        XCTAssertTrue(app.host.focusedNode === form.button)
        // Idle: the run loop waits (`waitForEvents`); the click and the keys come in.
        let field = center(of: form.field)
        Self.click(field, in: window)
        for character in "hi" { window.pushKeystroke(character) }
        app.frame(events: app.compositor.waitForEvents(timeout: 0))
        try app.settle()
        XCTAssertTrue(app.host.focusedNode === form.field)
        XCTAssertEqual(form.field.text, "hi", "the keys typed right after the click reach the field")
        try assertTextInputFollowsFocus(app, "field clicked")
    }

    /// FOUND (drawn inline). A layer's input role is part of its snapshot but not of what
    /// `Layer.changeCount` counts, and a compositor drawing inline draws (and so notes its text
    /// targets, `SDLWindow.showed`) only when `changeCount` moved. A field made interactive after the
    /// last draw (a form enabled once loaded) is not a text target for the watch: the keys typed right
    /// after the first click on it lose their text. A compositor thread, handed every snapshot
    /// change, does not lose them.
    func testAFieldMadeInteractiveSinceTheLastDrawTakesTheKeysTypedAfterItsClick() async throws {
        for threaded in [false, true] {
            let (app, form) = try makeApp(threaded: threaded) { form in form.field.isUserInteractionEnabled = false }
            defer { close(app) }
            form.field.isUserInteractionEnabled = true
            app.frame()
            try app.settle()
            let field = center(of: form.field)
            try deliver(app) { window in
                Self.click(field, in: window)
                for character in "hi" { window.pushKeystroke(character) }
            }
            XCTAssertTrue(app.host.focusedNode === form.field, "threaded \(threaded)")
            XCTAssertEqual(form.field.text, "hi", "threaded \(threaded): the keys typed right after the click reach the field")
        }
    }
}
