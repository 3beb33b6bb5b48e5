import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A node that notes the touches it is given.
private final class TouchLogNode: Node, @unchecked Sendable {
    var log: [String] = []

    init(_ size: Size? = nil) {
        super.init()
        backgroundColor = Color(rgb: 0x3050D0)
        isUserInteractionEnabled = true
        if let size { preferredSize = size }
    }

    override func touchesBegan(_ touch: Touch) { log.append("began") }
    override func touchesMoved(_ touch: Touch) { log.append("moved") }
    override func touchesEnded(_ touch: Touch) { log.append("ended") }
    override func touchesCancelled(_ touch: Touch) { log.append("cancelled") }
}

/// A popup's surface whose input the test queues by hand.
@MainActor
private final class QueuedOverlaySurface: OverlaySurface {
    let compositor: Compositor
    var queued: [InputEvent] = []
    private(set) var isClosed = false

    init(frame: Rect) throws {
        let backend = try SDLRenderBackend(.init(title: "surface", size: frame.size, scale: 1))
        compositor = Compositor(backend: backend, scale: 1, configuration: .init())
    }

    func setFrame(_ frame: Rect) {}
    var hasPendingEvents: Bool { !queued.isEmpty }
    func takeEvents() -> [InputEvent] {
        defer { queued.removeAll() }
        return queued
    }
    func close() { isClosed = true }
}

/// Makes `QueuedOverlaySurface`s on a screen that reaches past the window on every side.
@MainActor
private final class QueuedOverlaySurfaceProvider: OverlaySurfaceProvider {
    var screenBounds: Rect? = Rect(x: -100, y: -100, width: 1000, height: 800)
    private(set) var made: [QueuedOverlaySurface] = []

    func makeSurface(kind: Overlay.Kind, frame: Rect) -> OverlaySurface? {
        guard let surface = try? QueuedOverlaySurface(frame: frame) else { return nil }
        made.append(surface)
        return surface
    }
}

/// Modal dialog windows as a careless app (and an impatient user) meet them: a press held as the
/// dialog opens, a press the compositor thread read before the block reached it, menus of the
/// blocked window drawn on surfaces of their own, dialogs opened while their window closes.
@MainActor
final class ModalWindowAuditTests: XCTestCase {
    private func makeApp(compositorThread: Bool) throws -> (Application, TouchLogNode) {
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 120))
        configuration.compositorThread = compositorThread
        configuration.accessibility = false
        let root = TouchLogNode()
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        return (app, root)
    }

    private func small(_ title: String) -> Application.Window.Configuration {
        .init(title: title, size: Size(width: 80, height: 60), scale: 1)
    }

    /// Puts `events` on SDL's queue for `window` on the thread that owns it.
    private func push(_ events: [InputEvent], to window: Application.Window) {
        if let backend = window.backend {
            for event in events { backend.window.pushEvent(.input(event)) }
        } else {
            window.compositorThread?.perform { _, backend in
                for event in events { backend.window.pushEvent(.input(event)) }
            }
        }
    }

    /// Waits (at most 2 s) until `done` holds: a condition another thread makes true, not a time.
    private func wait(until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(2)
        while !done() && Date() < deadline { usleep(500) }
        XCTAssertTrue(done(), "waited 2 s")
    }

    /// A press held on the window as a dialog opens over it: its release is dropped with the rest
    /// of the user's input, so the touch is cancelled as the window is blocked; once the dialog
    /// closes, a motion drags nothing.
    func testATouchHeldAsAModalWindowOpensIsCancelled() async throws {
        let (app, root) = try makeApp(compositorThread: false)
        defer { app.close() }
        let point = Point(x: 40, y: 40)
        app.frame(events: [.pointerMoved(point), .pointerDown(point, button: 1)])
        XCTAssertEqual(root.log, ["began"])
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: nil, modalFor: app.mainWindow)
        app.frame(events: [.pointerMoved(Point(x: 60, y: 60)), .pointerUp(Point(x: 60, y: 60), button: 1)])
        dialog.close()
        app.frame(events: [.pointerMoved(Point(x: 90, y: 70))])
        XCTAssertEqual(root.log, ["began", "cancelled"], "no touch stays down under a dialog, none moves after it")
    }

    /// On the compositor thread, a press read (and forwarded, a fling stopped) before the block
    /// reached the thread still comes to the UI thread, after the window was blocked: it does what
    /// it does, but its touch does not outlive the frame, as its release is dropped on the thread.
    func testAPressTheCompositorThreadReadBeforeTheBlockLeavesNoTouchDown() async throws {
        let (app, root) = try makeApp(compositorThread: true)
        defer { app.close() }
        let main = app.mainWindow
        let thread = try XCTUnwrap(main.compositorThread)
        let point = Point(x: 40, y: 40)
        push([.pointerMoved(point), .pointerDown(point, button: 1)], to: main)
        wait { thread.hasPendingEvents }
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: NodeController(node: Node()),
                                        modalFor: main)
        var dialogKeys: [Key] = []
        dialog.host.keyHandler = { key, _ in dialogKeys.append(key); return true }
        // The release comes after the block: dropped. A key of the dialog's, read after it, says it was read.
        push([.pointerUp(point, button: 1)], to: main)
        push([.keyDown(.character("d"), modifiers: [])], to: dialog)
        for _ in 0..<100 where dialogKeys.isEmpty { app.runEventLoop(forSeconds: 0.05) }
        XCTAssertEqual(dialogKeys, [.character("d")])
        XCTAssertEqual(root.log.first, "began", "the press read before the block came to the window")
        XCTAssertEqual(root.log, ["began", "cancelled"], "its touch ended with the frame that took it: its release was dropped")
        dialog.close()
        XCTAssertFalse(main.isBlockedByModalWindow)
    }

    /// A menu of the window drawn on a surface of its own (a popup window) ends as a dialog opens
    /// over the window, as it would when the window loses the focus; one opened while the dialog is
    /// open takes no press from its surface.
    func testMenusOnSurfacesOfABlockedWindowTakeNoInput() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        let main = app.mainWindow
        let provider = QueuedOverlaySurfaceProvider()
        main.host.overlaySurfaceProvider = provider
        let positioner = PopupPositioner(anchor: Rect(x: 20, y: 20, width: 30, height: 10))
        let menu = main.host.presentOverlay(TouchLogNode(Size(width: 60, height: 40)), kind: .popup, positioner: positioner)
        app.frame()
        XCTAssertNotNil(menu.surface, "the menu is drawn on a surface of its own")
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: nil, modalFor: main)
        XCTAssertFalse(menu.isPresented, "the menu ended as the dialog opened over its window")

        let content = TouchLogNode(Size(width: 60, height: 40))
        let late = main.host.presentOverlay(content, kind: .popup, positioner: positioner)
        app.frame()
        let surface = try XCTUnwrap(late.surface as? QueuedOverlaySurface)
        surface.queued = [.pointerMoved(Point(x: 5, y: 5)), .pointerDown(Point(x: 5, y: 5), button: 1),
                          .pointerUp(Point(x: 5, y: 5), button: 1)]
        app.frame()
        XCTAssertEqual(content.log, [], "a press on a menu of the blocked window reached nothing")
        dialog.close()
        surface.queued = [.pointerDown(Point(x: 5, y: 5), button: 1), .pointerUp(Point(x: 5, y: 5), button: 1)]
        app.frame()
        XCTAssertEqual(content.log, ["began", "ended"], "once the dialog closed, the menu takes presses again")
    }

    /// A dialog whose `onClose` opens another dialog for the window that is closing it: refused, so
    /// no dialog outlives the window it is modal for.
    func testADialogOpenedForAWindowThatIsClosingIsRefused() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        let side = try app.openWindow(configuration: small("side"), rootController: nil)
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: nil, modalFor: side)
        var reopened: Application.Window?
        var refusal: Error?
        dialog.onClose = {
            do {
                reopened = try app.openWindow(configuration: self.small("again"), rootController: nil, modalFor: side)
            } catch {
                refusal = error
            }
        }
        side.close()
        XCTAssertNil(reopened.map(\.isOpen).flatMap { $0 ? true : nil }, "no dialog outlives its window")
        XCTAssertNotNil(refusal, "the closing window takes no new dialog")
        XCTAssertEqual(app.windows.count, 1, "the main window alone is left")
        XCTAssertTrue(app.windows.first === app.mainWindow)
    }

    /// A window closed from its dialog's `onClose` while it closes its dialogs closes once: its own
    /// `onClose` runs once and the loop forgets it.
    func testAWindowClosedFromItsDialogsOnCloseClosesOnce() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        let side = try app.openWindow(configuration: small("side"), rootController: nil)
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: nil, modalFor: side)
        var closes = 0
        side.onClose = { closes += 1 }
        dialog.onClose = { side.close() }
        side.close()
        XCTAssertEqual(closes, 1)
        XCTAssertFalse(side.isOpen)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(app.windows.count, 1)
    }

    /// The application closing with a dialog open over its main window closes the dialog first and
    /// leaves nothing blocked or open; the main window's touch state is not left blocked either.
    func testClosingTheApplicationWithADialogOpenClosesItFirst() async throws {
        let (app, _) = try makeApp(compositorThread: true)
        let dialog = try app.openWindow(configuration: small("dialog"), rootController: nil, modalFor: app.mainWindow)
        var closed: [String] = []
        dialog.onClose = { closed.append("dialog") }
        app.mainWindow.onClose = { closed.append("main") }
        app.close()
        XCTAssertEqual(closed, ["dialog", "main"])
        XCTAssertTrue(app.windows.isEmpty)
        XCTAssertFalse(app.mainWindow.isBlockedByModalWindow)
    }

    /// A window opened modal for a window that is not open (closed meanwhile, or none of the
    /// process's) is an app window, shown once its renderer is made: it never stays hidden, waiting
    /// for a parent there is not.
    func testADialogForAWindowThatIsNotThereIsShownAnyway() async throws {
        var configuration = SDLRenderBackend.Configuration(title: "orphan", size: Size(width: 40, height: 30), scale: 1,
                                                           headless: true, renderDriver: .software)
        let gone = try SDLRenderBackend(SDLRenderBackend.Configuration(title: "gone", size: Size(width: 40, height: 30),
                                                                       scale: 1, headless: true, renderDriver: .software))
        configuration.modalFor = WindowID(rawValue: gone.window.windowID.rawValue &+ 1000)
        let backend = try SDLRenderBackend(configuration)
        XCTAssertTrue(backend.window.isShown, "no parent to wait for: shown")
        withExtendedLifetime(gone) {}
    }

    /// A shortcut with Shift that opens a dialog: its release comes under the dialog, dropped, so the
    /// window takes Shift as released as the dialog opens; a click after the dialog closed extends
    /// no selection.
    func testShiftHeldForTheShortcutThatOpensADialogIsNotLeftHeld() async throws {
        let (app, _) = try makeApp(compositorThread: false)
        defer { app.close() }
        var dialog: Application.Window?
        app.host.keyHandler = { key, modifiers in
            guard key == .character("a"), modifiers.contains(.shift) else { return false }
            dialog = try? app.openWindow(configuration: self.small("about"), rootController: nil, modalFor: app.mainWindow)
            return true
        }
        app.frame(events: [.keyDown(.character("a"), modifiers: [.shift, .control])])
        XCTAssertNotNil(dialog)
        app.frame(events: [.keyUp(.character("a"), modifiers: [.shift, .control]), .keyUp(.character("a"), modifiers: [])])
        dialog?.close()
        XCTAssertFalse(app.host.isShiftDown, "Shift's release under the dialog was dropped: not taken as held after it")
    }
}
