import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A node of one colour filling its window.
private final class SolidNode: Node, @unchecked Sendable {
    init(_ color: Color) {
        super.init()
        backgroundColor = color
    }
}

/// Rows of colours that differ from row to row. - Thread: main
@MainActor
private final class BandSource: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 2_000 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let color = Color(red: UInt8(row * 37 % 256), green: UInt8(row * 91 % 256), blue: UInt8(row * 53 % 256))
        return {
            let node = SolidNode(color)
            node.preferredSize = Size(width: 100, height: 40)
            return node
        }
    }
}

/// An application with several windows: a second one opened while the loop runs draws its own tree
/// and takes its own events, its close button closes it alone, two windows at rest run no frames,
/// the last one closed ends the loop; headless on the UI thread and on the compositor thread.
@MainActor
final class WindowsTests: XCTestCase {
    private static let red = Color(rgb: 0xD03030)
    private static let blue = Color(rgb: 0x3050D0)
    private static let startColor = Color(rgb: 0x30D030)

    private func makeApp(compositorThread: Bool) throws -> Application {
        var configuration = Application.Configuration.headless(size: Size(width: 120, height: 90))
        configuration.compositorThread = compositorThread
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: SolidNode(Self.startColor))
        try app.settle()
        return app
    }

    /// Returns once the compositor thread has drawn what it was handed before: two turns of its loop
    /// (a command runs before the turn's frame; the second starts after that frame).
    private static func drain(_ thread: CompositorThread) {
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
    }

    private func color(_ window: Application.Window, x: Int = 10, y: Int = 10) throws -> Color {
        Color(premultipliedARGB: try window.capture().pixel(x: x, y: y))
    }

    /// Opens a second window from the running loop, lets each show its colour, then closes the
    /// second and the main one: the loop ends with the last.
    private func openAtRunTimeAndCloseBoth(compositorThread: Bool) throws {
        let app = try makeApp(compositorThread: compositorThread)
        let main = app.mainWindow
        var second: Application.Window?
        var sawSecondBlue = false, sawMainRed = false
        func step() {
            guard let app = main.application else { return }
            guard let window = second else {
                // The main window's first frame in the loop opens the second one.
                second = try? app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                             rootController: NodeController(node: SolidNode(Self.blue)))
                second?.onFrame = { _ in step() }
                return
            }
            guard window.isOpen, window.frameCount > 0, window.host.isSettled, (try? self.color(window)) == Self.blue else { return }
            sawSecondBlue = true
            window.close()
            sawMainRed = (try? self.color(main)) == Self.red
            main.close()
        }
        main.onFrame = { _ in step() }
        let mainFrames = main.frameCount
        // The main window has something to show, so the loop runs its frame.
        app.host.rootNode?.backgroundColor = Self.red
        app.runEventLoop(forSeconds: 20)
        XCTAssertNotNil(second, "opened at run time")
        XCTAssertTrue(sawSecondBlue, "the second window drew its own tree")
        XCTAssertTrue(sawMainRed, "the main window kept its own")
        XCTAssertGreaterThan(main.frameCount, mainFrames, "the main host ran its frames")
        XCTAssertGreaterThan(second?.frameCount ?? 0, 0, "the second host ran its frames")
        XCTAssertTrue(app.isQuitting, "closing the last window ended the loop")
        XCTAssertTrue(app.windows.isEmpty)
        if compositorThread {
            XCTAssertFalse(main.compositorThread?.isRunning ?? true, "its window closed on the thread")
            XCTAssertFalse(second?.compositorThread?.isRunning ?? true)
        }
        main.onFrame = nil
        second?.onFrame = nil
        app.close()
    }

    func testASecondWindowOpenedAtRunTimeRunsItsFramesAndTheLastClosedEndsTheLoop() async throws {
        try openAtRunTimeAndCloseBoth(compositorThread: false)
    }

    func testTheSameOnTheCompositorThread() async throws {
        try openAtRunTimeAndCloseBoth(compositorThread: true)
    }

    func testTwoWindowsOnTheCompositorThreadShareItAndShowTheirOwnPixels() async throws {
        let app = try makeApp(compositorThread: true)
        defer { app.close() }
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                        rootController: NodeController(node: SolidNode(Self.blue)))
        try app.settle()
        XCTAssertEqual(app.windows.count, 2)
        XCTAssertTrue(app.windows.first === app.mainWindow)
        XCTAssertEqual(second.size, Size(width: 70, height: 50))
        XCTAssertNotEqual(second.windowID, app.mainWindow.windowID)
        let mainThread = app.compositorThread?.performAndWait { _, _ in pthread_self() }
        let secondThread = second.compositorThread?.performAndWait { _, _ in pthread_self() }
        XCTAssertNotNil(mainThread)
        XCTAssertEqual(mainThread, secondThread, "one compositor thread for both windows")
        // What each window's thread side shows on screen, read back there.
        let mainScreen = try XCTUnwrap(app.compositorThread?.performAndWait { c, _ in c.backend.readPixels() } ?? nil)
        let secondScreen = try XCTUnwrap(second.compositorThread?.performAndWait { c, _ in c.backend.readPixels() } ?? nil)
        XCTAssertEqual(Color(premultipliedARGB: mainScreen.pixel(x: 100, y: 80)), Self.startColor)
        XCTAssertEqual(Color(premultipliedARGB: secondScreen.pixel(x: 60, y: 40)), Self.blue)
        XCTAssertEqual(secondScreen.width, 70)
    }

    func testEventsGoToTheirOwnWindowAndTheCloseButtonClosesThatWindowAlone() async throws {
        let app = try makeApp(compositorThread: false)
        defer { app.close() }
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                        rootController: NodeController(node: SolidNode(Self.blue)))
        try app.settle()
        var mainKeys: [Key] = [], secondKeys: [Key] = []
        app.host.keyHandler = { key, _ in mainKeys.append(key); return true }
        second.host.keyHandler = { key, _ in secondKeys.append(key); return true }
        let mainWindow = try XCTUnwrap(app.backend?.window)
        let secondWindow = try XCTUnwrap(second.backend?.window)
        // Both on SDL's one queue; whichever window reads it first, each key reaches its own host.
        secondWindow.pushEvent(.input(.keyDown(.character("s"), modifiers: [])))
        mainWindow.pushEvent(.input(.keyDown(.character("m"), modifiers: [])))
        var closed = false
        second.onClose = { closed = true }
        let bothArrived: (FrameRecord) -> Void = { _ in if !secondKeys.isEmpty && !mainKeys.isEmpty { app.quit() } }
        app.mainWindow.onFrame = bothArrived
        second.onFrame = bothArrived
        app.runEventLoop(forSeconds: 10)
        XCTAssertEqual(mainKeys, [.character("m")])
        XCTAssertEqual(secondKeys, [.character("s")])

        // The second window's close button: that window closes, the app goes on.
        secondWindow.pushEvent(.input(.closeRequested))
        _ = second.frame()
        XCTAssertTrue(closed, "the close request closed the second window")
        XCTAssertFalse(second.isOpen)
        XCTAssertTrue(app.mainWindow.isOpen)
        XCTAssertEqual(app.windows.count, 1)
        // Each window's key was read last in a frame no later read answered: the text events SDL
        // turned on as it read them (in case the key focused a field) end as its window closes,
        // though this test still holds both windows.
        XCTAssertFalse(secondWindow.provisionalTextInput, "the closed window holds text input on no more")
        app.mainWindow.onFrame = nil
        second.onFrame = nil
        app.close()
        XCTAssertFalse(mainWindow.isTextInputActive, "no window of the closed app holds text input on")
    }

    func testTwoWindowsAtRestRunNoFramesAndPresentNothing() async throws {
        for threaded in [false, true] {
            let app = try makeApp(compositorThread: threaded)
            let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                            rootController: NodeController(node: SolidNode(Self.blue)))
            try app.settle()
            // Frames once more until neither host has anything left (a change in one window's layers is
            // looked at by the other's too).
            for _ in 0..<3 where app.windows.contains(where: { $0.host.needsFrame }) { try app.settle() }
            XCTAssertFalse(app.host.needsFrame, "main settled: \(app.host.pendingWork)")
            XCTAssertFalse(second.host.needsFrame, "second settled: \(second.host.pendingWork)")
            // What the compositor thread had been handed is drawn: two turns of its loop.
            for window in app.windows { window.compositorThread.map(Self.drain) }
            let frames = app.frameCount
            let presents = (app.compositorThread?.presentCount ?? app.compositor.presentCount,
                            second.compositorThread?.presentCount ?? second.compositor.presentCount)
            app.runEventLoop(forSeconds: 0.6)
            XCTAssertEqual(app.frameCount, frames, "no frame ran at rest (threaded: \(threaded))")
            XCTAssertEqual(app.compositorThread?.presentCount ?? app.compositor.presentCount, presents.0,
                           "the main window presented nothing (threaded: \(threaded))")
            XCTAssertEqual(second.compositorThread?.presentCount ?? second.compositor.presentCount, presents.1,
                           "the second window presented nothing (threaded: \(threaded))")
            XCTAssertEqual(app.compositorThread?.lateWakeups ?? 0, 0)

            // A change in the main window is presented there alone.
            app.host.rootNode?.backgroundColor = Self.red
            try app.settle()
            for window in app.windows { window.compositorThread.map(Self.drain) }
            XCTAssertGreaterThan(app.compositorThread?.presentCount ?? app.compositor.presentCount, presents.0)
            XCTAssertEqual(second.compositorThread?.presentCount ?? second.compositor.presentCount, presents.1,
                           "the other window presented nothing for it (threaded: \(threaded))")
            app.close()
        }
    }

    /// An app that outlives its windows: the close of its last window (and SDL's quit that echoes it)
    /// leaves the loop running with no window, and a window opened then works as the first did.
    func testAnAppThatOutlivesItsWindowsKeepsRunningAndOpensANewOne() async throws {
        var configuration = Application.Configuration.headless(size: Size(width: 120, height: 90))
        configuration.accessibility = false
        configuration.quitsWhenLastWindowCloses = false
        let app = try Application(configuration: configuration, rootNode: SolidNode(Self.red))
        defer { app.close() }
        try app.settle()
        app.frame(events: [.closeRequested, .quit])
        XCTAssertFalse(app.mainWindow.isOpen)
        XCTAssertTrue(app.windows.isEmpty)
        XCTAssertFalse(app.isQuitting, "the quit that echoes the last window's close does not end the app")
        let frames = app.frameCount
        app.runEventLoop(forSeconds: 0.3)
        XCTAssertFalse(app.isQuitting)
        XCTAssertEqual(app.frameCount, frames, "no window, no frame")

        let again = try app.openWindow(configuration: .init(title: "again", size: Size(width: 50, height: 40), scale: 1),
                                       rootController: NodeController(node: SolidNode(Self.blue)))
        try again.settle()
        XCTAssertEqual(try color(again), Self.blue)
        XCTAssertTrue(app.windows.first === again)
        // A quit of its own (a signal, the session ending) still ends it.
        again.frame(events: [.quit])
        XCTAssertTrue(app.isQuitting)
    }

    /// A window of another density draws its own tree at its own scale; the main window's, and the
    /// scale of nodes outside any window (`Runtime.contentsScale`), stay as they were.
    func testASecondWindowOfAnotherScaleLeavesTheFirstsScaleAlone() async throws {
        for threaded in [false, true] {
            let app = try makeApp(compositorThread: threaded)
            let mainText = TextNode("main", attributes: TextAttributes(font: .system(size: 15)))
            let secondText = TextNode("second", attributes: TextAttributes(font: .system(size: 15)))
            app.host.setRootNode(mainText)
            let runtimeScale = Runtime.shared.contentsScale
            let second = try app.openWindow(configuration: .init(title: "dense", size: Size(width: 70, height: 50), scale: 2),
                                            rootController: NodeController(node: secondText))
            try app.settle()
            XCTAssertEqual(app.mainWindow.scale, 1)
            XCTAssertEqual(second.scale, 2)
            XCTAssertEqual(Runtime.shared.contentsScale, runtimeScale, "the process's scale is the main window's")
            XCTAssertEqual(mainText.contentsScale, 1)
            XCTAssertEqual(secondText.contentsScale, 2)
            XCTAssertEqual(mainText.layer.contents?.scale, 1, "main drawn at 1x (threaded: \(threaded))")
            XCTAssertEqual(secondText.layer.contents?.scale, 2, "second drawn at 2x (threaded: \(threaded))")
            XCTAssertEqual(try second.capture().width, 140)
            XCTAssertEqual(try app.capture().width, 120)
            app.close()
        }
    }

    /// A list flung in a second window goes on moving on the compositor thread while the UI thread
    /// is blocked, as in a window alone; the main window, at rest, presents nothing meanwhile.
    func testAFlingInASecondWindowGoesOnWhileTheUIThreadIsBlocked() async throws {
        let app = try makeApp(compositorThread: true)
        defer { app.close() }
        let list = ListNode()
        let source = BandSource()
        list.dataSource = source
        let second = try app.openWindow(configuration: .init(title: "list", size: Size(width: 160, height: 240), scale: 1),
                                        rootController: NodeController(node: list))
        try app.settle()
        let content = try XCTUnwrap(list.layer.sublayers.first { $0.name == "list-content" })
        let serial = content.serial
        let ys = Locked<[Double]>([])
        let arrived = DispatchSemaphore(value: 0)
        let thread = try XCTUnwrap(second.compositorThread)
        Self.drain(thread)
        thread.setFrameObserver { frame in
            guard let layer = frame.snapshot?.layer(serial: serial) else { return }
            ys.withLock { $0.append(layer.presentedFrame(at: frame.time).minY) }
            arrived.signal()
        }
        let mainPresents = try XCTUnwrap(app.compositorThread).presentCount
        list.fling(velocity: 1_500)
        second.frame()  // the list hands its motion to the compositor thread
        // The UI thread blocks here until the second window has presented six frames on its own.
        let deadline = DispatchTime.now() + 10
        while ys.withLock({ $0.count }) < 6 {
            guard arrived.wait(timeout: deadline) == .success else { break }
        }
        let moved = ys.withLock { $0 }
        XCTAssertGreaterThanOrEqual(moved.count, 6, "frames presented while the UI thread was blocked")
        XCTAssertEqual(moved, moved.sorted(by: >), "the content moves one way: \(moved)")
        XCTAssertLessThan(moved.last ?? 0, moved.first ?? 0, "and it moved")
        XCTAssertEqual(app.compositorThread?.presentCount, mainPresents, "the main window, at rest, presented nothing")
        thread.setFrameObserver(nil)
        second.close()
        _ = source
    }

    // MARK: Real windows under Xvfb

    private static let childVariable = "TESSERA_WINDOWS_CHILD"

    /// In a real X11 window (Xvfb, a child process of this test binary: SDL's video driver is chosen
    /// once per process), a second window opens on the compositor thread, is seen by the X server,
    /// and its close request closes it alone.
    func testASecondRealWindowOpensAndClosesAlone() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runRealWindows()
            return
        }
        guard let xwininfo = Xvfb.which("xwininfo") else { throw XCTSkip("xwininfo is not installed") }
        try Xvfb.withDisplay(numbers: 400..<500, screen: "640x480x24") { display in
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["TesseraTests.WindowsTests/testASecondRealWindowOpensAndClosesAlone"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["SDL_VIDEODRIVER"] = "x11"
            environment[Self.childVariable] = "1"
            child.environment = environment
            let output = Pipe(), input = Pipe()
            child.standardOutput = output
            child.standardError = output
            child.standardInput = input
            try child.run()
            var said = ""
            func read(until text: String) -> Bool {
                while !said.contains(text) {
                    let data = output.fileHandleForReading.availableData
                    if data.isEmpty { return false }
                    said += String(decoding: data, as: UTF8.self)
                }
                return true
            }
            func windowNames() throws -> String {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: xwininfo)
                process.arguments = ["-root", "-tree"]
                process.environment = ["DISPLAY": display]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                try process.run()
                let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return text
            }
            defer {
                if child.isRunning { child.terminate() }
                child.waitUntilExit()
            }
            XCTAssertTrue(read(until: "second window open"), said)
            var tree = try windowNames()
            XCTAssertTrue(tree.contains("\"tessera main window\""), tree)
            XCTAssertTrue(tree.contains("\"tessera second window\""), tree)
            input.fileHandleForWriting.write(Data("close\n".utf8))
            XCTAssertTrue(read(until: "second window closed, main open true, windows left 1"), said)
            tree = try windowNames()
            XCTAssertTrue(tree.contains("\"tessera main window\""), "the main window stays: " + tree)
            XCTAssertFalse(tree.contains("\"tessera second window\""), "the second window is gone: " + tree)
            input.fileHandleForWriting.write(Data("quit\n".utf8))
            XCTAssertTrue(read(until: "done"), said)
        }
    }

    /// The child's side: two windows on the compositor thread of a real X11 display.
    private func runRealWindows() throws {
        var configuration = Application.Configuration(title: "tessera main window", size: Size(width: 200, height: 150),
                                                      headless: false)
        configuration.accessibility = false
        configuration.followsSystemAppearance = false
        configuration.compositorThread = true
        let app = try Application(configuration: configuration, rootNode: SolidNode(Self.red))
        try app.settle()
        let second = try app.openWindow(configuration: .init(title: "tessera second window", size: Size(width: 160, height: 120)),
                                        rootController: NodeController(node: SolidNode(Self.blue)))
        try second.settle()
        let shown = try XCTUnwrap(second.compositorThread?.performAndWait { c, _ in c.backend.readPixels() } ?? nil)
        print("second window open on \(second.renderer.videoDriverName), shows \(Color(premultipliedARGB: shown.pixel(x: 5, y: 5)))")
        fflush(nil)
        guard readLine() == "close" else { return }
        // The window manager's close, as SDL reports it for that window alone.
        second.compositorThread?.perform { _, backend in backend.window.pushEvent(.input(.closeRequested)) }
        second.onClose = { [weak app] in app?.quit() }
        app.runEventLoop(forSeconds: 10)
        print("second window \(second.isOpen ? "still open" : "closed"), main open \(app.mainWindow.isOpen), "
              + "windows left \(app.windows.count)")
        fflush(nil)
        _ = readLine()
        app.close()
        print("done")
        fflush(nil)
    }
}
