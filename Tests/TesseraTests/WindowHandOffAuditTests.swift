import Dispatch
import Foundation
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime
@testable import Tessera

/// A node of one colour and a size of its own.
private final class BlockNode: Node, @unchecked Sendable {
    init(_ size: Size) {
        super.init()
        backgroundColor = Color(rgb: 0x3050D0)
        preferredSize = size
    }
}

/// The windows' hand-off to the compositor thread, as a careless app uses it: popup windows of a
/// window that closes, an application closed with a menu open. Headless, on the compositor thread,
/// with the popup windows X11 would get (the dummy driver opens them too).
@MainActor
final class WindowHandOffAuditTests: XCTestCase {
    private func makeApp() throws -> Application {
        var configuration = Application.Configuration.headless(size: Size(width: 200, height: 150))
        configuration.compositorThread = true
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: BlockNode(Size(width: 10, height: 10)))
        try app.settle()
        return app
    }

    /// Gives `window` the popup windows an X11 window gets.
    private func givePopupWindows(_ window: Application.Window, app: Application) throws {
        let thread = try XCTUnwrap(window.compositorThread)
        let backend = SDLRenderBackend.Configuration(size: Size(width: 200, height: 150), headless: true,
                                                     renderDriver: app.configuration.renderer)
        window.host.overlaySurfaceProvider = PopupWindowProvider(parent: thread, backend: backend,
                                                                 compositor: Compositor.Configuration(),
                                                                 timeOrigin: thread.timeOrigin)
    }

    /// Opens a menu in `window` and returns once its popup window is open on the compositor thread.
    @discardableResult
    private func openMenu(in window: Application.Window, livesBefore: Int) throws -> Overlay {
        let overlay = window.host.presentOverlay(
            BlockNode(Size(width: 60, height: 40)), kind: .popup,
            positioner: PopupPositioner(anchor: Rect(x: 20, y: 20, width: 30, height: 10)))
        try window.settle()
        XCTAssertNotNil(overlay.surface, "the menu is drawn in a popup window of its own")
        XCTAssertEqual(CompositorThreadCore.liveCount, livesBefore + 1, "the popup window is open on the thread")
        return overlay
    }

    /// Closing the application with a menu open in its main window closes the menu's popup window
    /// too: nothing of the application stays open on the compositor thread.
    func testClosingTheApplicationWithAMenuOpenClosesItsPopupWindow() async throws {
        let app = try makeApp()
        let before = CompositorThreadCore.liveCount
        try givePopupWindows(app.mainWindow, app: app)
        let menu = try openMenu(in: app.mainWindow, livesBefore: before)
        app.close()
        XCTAssertNil(menu.surface, "the menu's surface closed with the application")
        XCTAssertEqual(CompositorThreadCore.liveCount, before - 1,
                       "the main window and its popup window are gone from the compositor thread")
    }

    /// A window with no root (an app that shows only overlays in it) closed with a menu open closes
    /// the menu's popup window: it does not outlive its window.
    func testClosingAWindowWithNoRootAndAMenuOpenClosesItsPopupWindow() async throws {
        let app = try makeApp()
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 200, height: 150)),
                                        rootController: nil)
        let before = CompositorThreadCore.liveCount
        try givePopupWindows(second, app: app)
        let menu = try openMenu(in: second, livesBefore: before)
        var dismissed: Overlay.DismissReason?
        menu.onDismiss = { dismissed = $0 }
        second.close()
        XCTAssertNil(menu.surface, "the menu's popup window closed with its window")
        XCTAssertNotNil(dismissed, "the menu was told it ended")
        XCTAssertEqual(CompositorThreadCore.liveCount, before - 1,
                       "the window and its popup window are gone from the compositor thread")
        app.close()
    }

    /// The last window's `onClose` opening a new window (an app that goes back to its start window)
    /// keeps the app running with it: closing the last window quits only when none is left once the
    /// window's close is done, by `close()` or by its close button with the quit SDL sends with it.
    func testALastWindowWhoseOnCloseOpensANewOneLeavesTheAppRunning() async throws {
        for byButton in [false, true] {
            var configuration = Application.Configuration.headless(size: Size(width: 120, height: 90))
            configuration.compositorThread = false
            configuration.accessibility = false
            let app = try Application(configuration: configuration, rootNode: BlockNode(Size(width: 10, height: 10)))
            var reopened: Application.Window?
            app.mainWindow.onClose = { [unowned app] in
                reopened = try? app.openWindow(configuration: .init(title: "again", size: Size(width: 120, height: 90)),
                                               rootController: nil)
            }
            if byButton {
                app.frame(events: [.closeRequested, .quit])
            } else {
                app.mainWindow.close()
            }
            let window = try XCTUnwrap(reopened, "the new window opened")
            XCTAssertTrue(window.isOpen)
            XCTAssertEqual(app.windows.map { ObjectIdentifier($0) }, [ObjectIdentifier(window)])
            XCTAssertFalse(app.isQuitting, "the app goes on with the window its onClose opened (by button: \(byButton))")
            window.close()
            XCTAssertTrue(app.isQuitting, "then closing that last window quits (by button: \(byButton))")
            app.close()
        }
    }

    /// Closing the application closes its main window as `Window.close()` does: it is no longer
    /// open, no longer among the windows, and its `onClose` runs once, as its documentation says
    /// ("the application closing"), on the compositor thread and on the UI thread.
    func testClosingTheApplicationClosesItsMainWindowAndTellsItsOnClose() async throws {
        for threaded in [false, true] {
            var configuration = Application.Configuration.headless(size: Size(width: 120, height: 90))
            configuration.compositorThread = threaded
            configuration.accessibility = false
            let app = try Application(configuration: configuration, rootNode: BlockNode(Size(width: 10, height: 10)))
            var closes = 0
            app.mainWindow.onClose = { closes += 1 }
            let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 120, height: 90)),
                                            rootController: nil)
            var secondCloses = 0
            second.onClose = { secondCloses += 1 }
            app.close()
            app.close()
            XCTAssertFalse(app.mainWindow.isOpen, "threaded: \(threaded)")
            XCTAssertTrue(app.windows.isEmpty, "threaded: \(threaded)")
            XCTAssertEqual(closes, 1, "the main window's onClose ran once (threaded: \(threaded))")
            XCTAssertEqual(secondCloses, 1)
            XCTAssertTrue(app.isQuitting)
            XCTAssertFalse(app.compositorThread?.isRunning ?? false)
        }
    }

    /// Windows opened and closed from inside the loop's frame callbacks, many times over, the main
    /// one last: each closes on the compositor thread, none is left open there, and the loop ends
    /// with the last.
    func testWindowsOpenedAndClosedFromFramesLeaveNothingOpen() async throws {
        let app = try makeApp()
        let before = CompositorThreadCore.liveCount
        var opened: [Application.Window] = []
        var rounds = 0
        app.mainWindow.onFrame = { [unowned app] _ in
            guard rounds < 12 else { return }
            rounds += 1
            // Closes the window opened a frame before, from inside this frame, and opens the next.
            opened.last?.close()
            if let window = try? app.openWindow(configuration: .init(title: "round \(rounds)", size: Size(width: 60, height: 40)),
                                                rootController: nil) {
                opened.append(window)
                window.host.setRootNode(BlockNode(Size(width: 10, height: 10)))
            }
            // Something to show, so the loop runs the main window's next frame.
            app.host.rootNode?.backgroundColor = Color(rgb: rounds % 2 == 0 ? 0xD03030 : 0x30D030)
            guard rounds == 12 else { return }
            // The last two close from inside the frame too, the main window last.
            opened.last?.close()
            app.mainWindow.close()
        }
        app.host.rootNode?.backgroundColor = Color(rgb: 0xD03030)
        app.runEventLoop(forSeconds: 20)
        app.mainWindow.onFrame = nil
        XCTAssertEqual(rounds, 12, "every round ran in the loop")
        XCTAssertEqual(opened.count, 12)
        XCTAssertTrue(opened.allSatisfy { !$0.isOpen && $0.compositorThread?.isRunning == false })
        XCTAssertTrue(app.isQuitting, "the last window closed ended the loop")
        XCTAssertEqual(CompositorThreadCore.liveCount, before - 1, "no window of the app is left on the thread")
        app.close()
    }
}
