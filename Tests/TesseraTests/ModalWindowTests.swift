import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A dialog window modal for another (`Application.openWindow(configuration:rootController:modalFor:)`):
/// while it is open the window under it takes no pointer, keys or close request, read from the
/// platform or given to its frame; the dialog takes its own; closing it gives the input back; closing
/// the window under it closes the dialog first. Headless, on the UI thread and on the compositor thread.
@MainActor
final class ModalWindowTests: XCTestCase {
    private func makeApp(compositorThread: Bool) throws -> (Application, ButtonNode) {
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 120))
        configuration.compositorThread = compositorThread
        configuration.accessibility = false
        let button = ButtonNode(title: "Press")
        button.backgroundColor = Color(rgb: 0x3050D0)
        let app = try Application(configuration: configuration, rootNode: button)
        try app.settle()
        return (app, button)
    }

    /// Puts `events` on SDL's queue for `window`, as the window system would, on the thread that owns it.
    private func push(_ events: [InputEvent], to window: Application.Window) {
        if let backend = window.backend {
            for event in events { backend.window.pushEvent(.input(event)) }
        } else {
            window.compositorThread?.perform { _, backend in
                for event in events { backend.window.pushEvent(.input(event)) }
            }
        }
    }

    /// Runs the loop in short turns until `done` holds (at most 10 s).
    private func run(_ app: Application, until done: () -> Bool) {
        for _ in 0..<100 where !done() { app.runEventLoop(forSeconds: 0.1) }
    }

    private func blocksItsParent(compositorThread: Bool) throws {
        let (app, button) = try makeApp(compositorThread: compositorThread)
        defer { app.close() }
        var presses = 0
        button.addTarget(for: .primaryActionTriggered) { _, _ in presses += 1 }
        var mainKeys: [Key] = [], dialogKeys: [Key] = []
        app.host.keyHandler = { key, _ in mainKeys.append(key); return true }
        let main = app.mainWindow
        let dialog = try app.openWindow(configuration: .init(title: "dialog", size: Size(width: 80, height: 60), scale: 1),
                                        rootController: NodeController(node: Node()), modalFor: main)
        dialog.host.keyHandler = { key, _ in dialogKeys.append(key); return true }
        XCTAssertTrue(main.isBlockedByModalWindow)
        XCTAssertTrue(dialog.modalParent === main)
        XCTAssertEqual(main.modalWindows.count, 1)
        XCTAssertFalse(dialog.isBlockedByModalWindow)

        // A click on the button, a key, the wheel and the close button, all for the main window; then a
        // key for the dialog (read after them: SDL's queue is one).
        let middle = Point(x: 80, y: 60)
        push([.pointerMoved(middle), .pointerDown(middle, button: 1), .pointerUp(middle, button: 1),
              .keyDown(.character("m"), modifiers: []), .wheel(dx: 0, dy: -3), .closeRequested], to: main)
        push([.keyDown(.character("d"), modifiers: [])], to: dialog)
        run(app) { !dialogKeys.isEmpty }
        try app.settle()
        XCTAssertEqual(dialogKeys, [.character("d")], "the dialog takes its own keys")
        XCTAssertEqual(presses, 0, "the click under the dialog pressed nothing")
        XCTAssertEqual(mainKeys, [], "the key under the dialog reached nothing")
        XCTAssertTrue(main.isOpen, "the close button under the dialog closed nothing")

        // Given to the main window's frame, the same input is dropped too.
        app.frame(events: [.pointerDown(middle, button: 1), .pointerUp(middle, button: 1), .keyDown(.character("g"), modifiers: [])])
        XCTAssertEqual(presses, 0)
        XCTAssertEqual(mainKeys, [])

        // The dialog closes: the main window takes input again.
        dialog.close()
        XCTAssertFalse(main.isBlockedByModalWindow)
        XCTAssertNil(dialog.modalParent)
        push([.pointerDown(middle, button: 1), .pointerUp(middle, button: 1), .keyDown(.character("m"), modifiers: [])], to: main)
        run(app) { !mainKeys.isEmpty }
        XCTAssertEqual(mainKeys, [.character("m")], "keys reach the main window once the dialog closed")
        XCTAssertEqual(presses, 1, "and so does the click")
    }

    func testAModalWindowBlocksItsParentsInputUntilItCloses() async throws {
        try blocksItsParent(compositorThread: false)
    }

    func testTheSameOnTheCompositorThread() async throws {
        try blocksItsParent(compositorThread: true)
    }

    func testClosingTheParentClosesItsModalWindowsFirstNewestFirst() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        let main = app.mainWindow
        let side = try app.openWindow(configuration: .init(title: "side", size: Size(width: 80, height: 60), scale: 1),
                                      rootController: nil)
        let first = try app.openWindow(configuration: .init(title: "first", size: Size(width: 80, height: 60), scale: 1),
                                       rootController: nil, modalFor: side)
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 80, height: 60), scale: 1),
                                        rootController: nil, modalFor: side)
        var closed: [String] = []
        for window in [side, first, second] { window.onClose = { [title = window.title] in closed.append(title) } }
        XCTAssertEqual(side.modalWindows.map(\.title), ["first", "second"])
        // The newest closing leaves the older one blocking.
        second.close()
        XCTAssertTrue(side.isBlockedByModalWindow)
        XCTAssertEqual(side.modalWindows.map(\.title), ["first"])
        let third = try app.openWindow(configuration: .init(title: "third", size: Size(width: 80, height: 60), scale: 1),
                                       rootController: nil, modalFor: side)
        third.onClose = { closed.append("third") }
        side.close()
        XCTAssertEqual(closed, ["second", "third", "first", "side"], "dialogs close before their window, the newest first")
        XCTAssertFalse(first.isOpen)
        XCTAssertFalse(third.isOpen)
        XCTAssertEqual(app.windows.count, 1)
        XCTAssertTrue(app.windows.first === main)
        XCTAssertFalse(app.isQuitting, "the main window stays")
    }

    func testAModalWindowForAWindowThatIsNotOpenIsRefused() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        let other = try app.openWindow(configuration: .init(title: "closed", size: Size(width: 80, height: 60), scale: 1),
                                       rootController: nil)
        other.close()
        XCTAssertThrowsError(try app.openWindow(rootController: nil, modalFor: other)) { error in
            XCTAssertTrue("\(error)".contains("not an open window"), "\(error)")
        }
        XCTAssertEqual(app.windows.count, 1, "no window opened")
    }
}
