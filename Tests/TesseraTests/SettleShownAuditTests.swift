import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// `Application.Window.settle` and `CompositorThread.waitUntilShown` with a compositor thread: a
/// commit that came after the thread's look is not taken as shown; a change of the window's scale read
/// after settle's last frame is answered, not waited out; a window closed on the compositor thread
/// meanwhile ends the wait without a timeout; a minimized window, a closed one and a second window
/// settle.
@MainActor
final class SettleShownAuditTests: XCTestCase {
    /// A headless app on a compositor thread showing one coloured node, settled.
    private func makeApp(followsScale: Bool = false) throws -> (root: Node, app: Application) {
        let root = Node()
        root.backgroundColor = Color(rgb: 0x3366CC)
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 120))
        if followsScale { configuration.scale = nil }
        configuration.compositorThread = true
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        return (root, app)
    }

    /// Holds the compositor thread in a command (which runs after its turn's look for work) until
    /// `gate` is signalled; returns once it is held.
    private nonisolated func hold(_ thread: CompositorThread, until gate: DispatchSemaphore) {
        let entered = DispatchSemaphore(value: 0)
        thread.perform { _, _ in
            entered.signal()
            gate.wait()
        }
        entered.wait()
    }

    /// A commit made after the thread's look for work is not counted by the draw of that turn: the
    /// wait says false until a turn that took it in has drawn it.
    func testACommitAfterTheThreadsLookIsNotShownUntilDrawn() async throws {
        let (root, app) = try makeApp()
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        XCTAssertTrue(thread.waitUntilShown(timeout: 5))
        // The thread held in a turn whose look came before the commit; then held again in the next
        // turn, after its look (which takes the commit in) and before its draw.
        let gate = DispatchSemaphore(value: 0)
        let gate2 = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let entered2 = DispatchSemaphore(value: 0)
        thread.perform { [thread] _, _ in
            entered.signal()
            gate.wait()
            thread.perform { _, _ in
                entered2.signal()
                gate2.wait()
            }
        }
        entered.wait()
        root.backgroundColor = Color(rgb: 0xCC6633)
        app.frame()
        let committed = try XCTUnwrap(app.compositor.drawnSnapshot)
        XCTAssertFalse(thread.waitUntilShown(timeout: 0.2), "the thread is held: the commit is not shown")
        gate.signal()
        entered2.wait()
        XCTAssertFalse(thread.waitUntilShown(timeout: 0), "a turn whose look came before the commit does not count it")
        XCTAssertFalse(thread.shownSnapshot === committed)
        gate2.signal()
        XCTAssertTrue(thread.waitUntilShown(timeout: 5))
        XCTAssertTrue(thread.shownSnapshot === committed, "what the wait counts as shown is on screen")
    }

    /// The window moves to an output of another scale in the turn that takes the last commit in,
    /// read after settle's last frame: the thread draws nothing until the UI thread answers, which
    /// another frame does. Settle runs it rather than waiting out its time and throwing.
    func testSettleAnswersAScaleChangeReadAfterItsLastFrame() async throws {
        let (root, app) = try makeApp(followsScale: true)
        defer {
            app.mainWindow.onFrame = nil
            app.close()
        }
        let thread = try XCTUnwrap(app.compositorThread)
        let gate = DispatchSemaphore(value: 0)
        hold(thread, until: gate)
        root.backgroundColor = Color(rgb: 0xCC6633)
        app.frame()
        // Read by the thread in the turn that takes the commit in, before that turn's draw.
        CompositorThreadSupport.push([.contentsScaleChanged(2)], to: thread)
        // The thread goes on at settle's last frame (two quiet frames in a row, as `NodeHost.settle` counts).
        var quiet = 0
        var released = false
        app.mainWindow.onFrame = { [unowned app] _ in
            quiet = app.host.pendingWork.isEmpty ? quiet + 1 : 0
            if quiet >= 2 && !released {
                released = true
                gate.signal()
            }
        }
        do {
            try app.settle(timeout: 3)
        } catch {
            XCTFail("settle threw: \(error)")
        }
        if !released { gate.signal() }
        app.mainWindow.onFrame = nil
        XCTAssertEqual(app.host.contentsScale, 2, "settle's frames answered the new scale")
        XCTAssertTrue(thread.waitUntilShown(timeout: 5))
        XCTAssertTrue(thread.shownSnapshot === app.compositor.drawnSnapshot, "the screen shows the last commit")
    }

    /// The window is closed on the compositor thread (a command, a frame observer) while settle waits
    /// for its last commit: settle ends without a `SettleTimeout`, at once rather than after its time.
    func testSettleDoesNotThrowForAWindowClosedOnTheCompositorThread() async throws {
        let (root, app) = try makeApp()
        defer {
            app.mainWindow.onFrame = nil
            app.close()
        }
        let thread = try XCTUnwrap(app.compositorThread)
        let gate = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        thread.perform { [thread] _, _ in
            entered.signal()
            gate.wait()
            thread.stop()
            stopped.signal()
            // The window closes once this returns to the loop: held a moment, so that the UI
            // thread's wait surely sees it closing rather than closed.
            usleep(500_000)
        }
        entered.wait()
        root.backgroundColor = Color(rgb: 0xCC6633)
        app.frame()
        var released = false
        app.mainWindow.onFrame = { _ in
            guard !released else { return }
            released = true
            gate.signal()
            stopped.wait()
        }
        // The first of settle's frames lets the thread close the window; none of its commits is drawn.
        do {
            try app.mainWindow.settle(timeout: 5)
        } catch {
            XCTFail("settle threw for a window closed meanwhile: \(error)")
        }
        if !released { gate.signal() }
        app.mainWindow.onFrame = nil
        XCTAssertTrue(thread.waitUntilShown(timeout: 5) || !thread.isRunning)
    }

    /// A minimized window's commits are taken as seen without a draw: settle returns.
    func testSettleReturnsForAMinimizedWindow() async throws {
        let (root, app) = try makeApp()
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        CompositorThreadSupport.send([.windowVisibilityChanged(false)], to: thread)
        app.frame()
        XCTAssertFalse(app.host.isWindowVisible)
        root.backgroundColor = Color(rgb: 0xCC6633)
        XCTAssertNoThrow(try app.settle(timeout: 5))
        XCTAssertTrue(thread.waitUntilShown(timeout: 0))
        CompositorThreadSupport.send([.windowVisibilityChanged(true)], to: thread)
        XCTAssertNoThrow(try app.settle(timeout: 5))
        XCTAssertTrue(thread.shownSnapshot === app.compositor.drawnSnapshot)
    }

    /// A window closed by the app settles (nothing to wait for).
    func testSettleReturnsForAClosedWindow() async throws {
        let (root, app) = try makeApp()
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let window = app.mainWindow
        root.backgroundColor = Color(rgb: 0xCC6633)
        app.frame()
        window.close()
        XCTAssertFalse(thread.isRunning)
        XCTAssertFalse(thread.waitUntilShown(timeout: 1) && thread.isRunning)
        XCTAssertNoThrow(try window.settle(timeout: 1))
    }

    /// Two windows on the one compositor thread, the thread held while both change: settle returns
    /// once each window's thread front has shown its own last commit.
    func testSettleWaitsForEachWindowOnTheOneThread() async throws {
        let (root, app) = try makeApp()
        defer { app.close() }
        let otherRoot = Node()
        otherRoot.backgroundColor = Color(rgb: 0x22AA44)
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 100, height: 80)),
                                        rootController: NodeController(node: otherRoot))
        try app.settle()
        let thread = try XCTUnwrap(app.compositorThread)
        let secondThread = try XCTUnwrap(second.compositorThread)
        let gate = DispatchSemaphore(value: 0)
        hold(thread, until: gate)
        root.backgroundColor = Color(rgb: 0xCC6633)
        otherRoot.backgroundColor = Color(rgb: 0xAA22AA)
        app.frame()
        second.frame()
        XCTAssertFalse(secondThread.waitUntilShown(timeout: 0.1), "the one thread is held: neither is shown")
        gate.signal()
        XCTAssertNoThrow(try app.settle(timeout: 5))
        XCTAssertTrue(thread.shownSnapshot === app.compositor.drawnSnapshot)
        XCTAssertTrue(secondThread.shownSnapshot === second.compositor.drawnSnapshot)
    }
}
