import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A screen with a tooltip over its bottom-left corner and a context menu everywhere.
private final class PopupScreenNode: Node, @unchecked Sendable {
    let tip = Node()

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x3060A0)
        tip.backgroundColor = Color(rgb: 0x20A040)
        tip.isUserInteractionEnabled = true
        tip.toolTip = "A tip past the edge"
        addSubnode(tip)
    }

    override func layout() {
        tip.frame = Rect(x: 0, y: frame.height - 40, width: 80, height: 40)
    }
}

/// A UI-thread object carried through a timer thread back to the UI thread, never touched on the way.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Reads a child process's output on a thread of its own, so that the test can wait for a line with
/// a time-out.
private final class ChildOutput: @unchecked Sendable {
    private let condition = NSCondition()
    private var text = ""  // guarded by condition
    private var ended = false  // guarded by condition

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty { ended = true } else { text += String(decoding: data, as: UTF8.self) }
                condition.broadcast()
                condition.unlock()
                if data.isEmpty { return }
            }
        }
    }

    var all: String {
        condition.lock()
        defer { condition.unlock() }
        return text
    }

    /// The first line after character `offset` that contains `needle`, waiting at most `timeout` seconds.
    func line(containing needle: String, after offset: Int, timeout: Double = 15) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let start = text.index(text.startIndex, offsetBy: min(offset, text.count))
            if let line = text[start...].split(separator: "\n").first(where: { $0.contains(needle) }) { return String(line) }
            if ended || !condition.wait(until: deadline) { return nil }
        }
    }
}

/// Menus and tooltips in popup windows of their own in a real X11 window (Xvfb, no window manager,
/// driven from outside with xdotool and read back with xwininfo): a context menu opened near the
/// window's bottom-right corner is an override-redirect window placed against the screen (flipped
/// left at the screen's edge, reaching past the window's bottom where the screen has room), chosen
/// by keys, ended by Escape, presenting nothing at rest; a tooltip gets a window of its own too; each
/// window goes with its popup.
@MainActor
final class PopupWindowsTests: XCTestCase {
    private static let childVariable = "TESSERA_POPUP_WINDOWS_CHILD"
    private static let windowSize = Size(width: 400, height: 200)

    /// One X window as `xwininfo -id` describes it.
    private struct XWindow: Sendable {
        var id: String
        var frame: Rect
        var overrideRedirect: Bool
        var viewable: Bool
    }

    private nonisolated func run(_ tool: String, _ arguments: [String], display: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ["DISPLAY": display]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }

    /// The windows named `name` in `xwininfo -root -tree`, described by `xwininfo -id`.
    private nonisolated func windows(named name: String, xwininfo: String, display: String) throws -> [XWindow] {
        let tree = try run(xwininfo, ["-root", "-tree"], display: display)
        let ids = tree.split(separator: "\n").filter { $0.contains("\"\(name)\"") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        return try ids.map { id in
            let info = try run(xwininfo, ["-id", id], display: display)
            func value(_ label: String) -> Double {
                info.split(separator: "\n").first { $0.contains(label) }
                    .flatMap { $0.split(separator: ":").last }.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? -1
            }
            return XWindow(id: id, frame: Rect(x: value("Absolute upper-left X"), y: value("Absolute upper-left Y"),
                                       width: value("Width"), height: value("Height")),
                           overrideRedirect: info.contains("Override Redirect State: yes"),
                           viewable: info.contains("Map State: IsViewable"))
        }
    }

    /// Checks the window type the window system is told (`xprop`, where it is installed).
    private nonisolated func assertWindowType(of window: XWindow, is type: String, display: String) throws {
        guard let xprop = Xvfb.which("xprop") else { return }
        let property = try run(xprop, ["-id", window.id, "_NET_WM_WINDOW_TYPE"], display: display)
        XCTAssertTrue(property.contains(type), property)
    }

    /// Waits (at most 10 s) until `check` holds for the windows named `name`.
    private nonisolated func waitForWindows(named name: String, xwininfo: String, display: String,
                                until check: ([XWindow]) -> Bool) throws -> [XWindow] {
        var found: [XWindow] = []
        for _ in 0..<100 {
            found = try windows(named: name, xwininfo: xwininfo, display: display)
            if check(found) { return found }
            usleep(100_000)
        }
        return found
    }

    func testAContextMenuAndATooltipOpenInWindowsOfTheirOwnPlacedOnTheScreen() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runChild()
            return
        }
        guard let xwininfo = Xvfb.which("xwininfo") else { throw XCTSkip("xwininfo is not installed") }
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        try Xvfb.withDisplay(numbers: 600..<700, screen: "640x480x24") { display in
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["TesseraTests.PopupWindowsTests/testAContextMenuAndATooltipOpenInWindowsOfTheirOwnPlacedOnTheScreen"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["SDL_VIDEODRIVER"] = "x11"
            environment[Self.childVariable] = "1"
            child.environment = environment
            let pipe = Pipe()
            child.standardOutput = pipe
            child.standardError = pipe
            let output = ChildOutput(pipe)
            try child.run()
            defer {
                if child.isRunning { child.terminate() }
                child.waitUntilExit()
            }
            func xdo(_ arguments: String...) throws { _ = try run(xdotool, arguments, display: display) }

            let ready = try XCTUnwrap(output.line(containing: "ready at", after: 0), output.all)
            let origin = ready.split(separator: " ").last.map { $0.split(separator: ",").compactMap { Double($0) } } ?? []
            XCTAssertEqual(origin.count, 2, ready)
            guard origin.count == 2 else { return }
            let window = Rect(x: origin[0], y: origin[1], width: Self.windowSize.width, height: Self.windowSize.height)

            // A secondary click near the window's bottom-right corner: the menu goes right of the
            // pointer unless the screen ends first (it does: flipped left), and below it, where the
            // screen has room past the window's bottom edge.
            let click = (x: Int(window.maxX) - 10, y: Int(window.maxY) - 10)
            var mark = output.all.count
            try xdo("mousemove", String(click.x), String(click.y))
            usleep(200_000)
            try xdo("click", "3")
            XCTAssertNotNil(output.line(containing: "popup in a window of its own", after: mark), output.all)
            var menus = try waitForWindows(named: "popup", xwininfo: xwininfo, display: display) { $0.contains(where: \.viewable) }
            let tree = try run(xwininfo, ["-root", "-tree"], display: display)
            let menu = try XCTUnwrap(menus.first, "the menu's own window is on the X server: " + tree + output.all)
            XCTAssertTrue(menu.overrideRedirect, "an override-redirect window")
            XCTAssertTrue(menu.viewable, "mapped")
            try assertWindowType(of: menu, is: "_NET_WM_WINDOW_TYPE_POPUP_MENU", display: display)
            XCTAssertTrue(menu.frame.minX >= 0 && menu.frame.minY >= 0 && menu.frame.maxX <= 640 && menu.frame.maxY <= 480,
                          "on the screen: \(menu.frame)")
            XCTAssertEqual(menu.frame.maxX, Double(click.x), accuracy: 1, "flipped left at the screen's edge: \(menu.frame)")
            XCTAssertEqual(menu.frame.minY, Double(click.y), accuracy: 1, "below the pointer: \(menu.frame)")
            XCTAssertGreaterThan(menu.frame.maxY, window.maxY, "past the window's bottom edge: \(menu.frame), window \(window)")
            let rest = output.line(containing: "at rest for 1 s", after: mark)
            XCTAssertEqual(rest?.hasSuffix("frames 0, the menu's window presented 0, the app's 0"), true,
                           "a shown menu at rest presents nothing: \(rest ?? output.all)")

            // Chosen by keys, which reach the app's window (a popup never takes the focus).
            mark = output.all.count
            try xdo("key", "Down")
            usleep(200_000)
            try xdo("key", "Return")
            XCTAssertNotNil(output.line(containing: "chose Open", after: mark), output.all)
            menus = try waitForWindows(named: "popup", xwininfo: xwininfo, display: display) { $0.isEmpty }
            XCTAssertTrue(menus.isEmpty, "the menu's window went with it")

            // Opened again, ended by Escape.
            mark = output.all.count
            try xdo("click", "3")
            XCTAssertNotNil(output.line(containing: "popup in a window of its own", after: mark), output.all)
            menus = try waitForWindows(named: "popup", xwininfo: xwininfo, display: display) { $0.contains(where: \.viewable) }
            XCTAssertEqual(menus.count, 1)
            mark = output.all.count
            try xdo("key", "Escape")
            XCTAssertNotNil(output.line(containing: "overlays: none", after: mark), output.all)
            menus = try waitForWindows(named: "popup", xwininfo: xwininfo, display: display) { $0.isEmpty }
            XCTAssertTrue(menus.isEmpty, "Escape closed the menu's window")
            XCTAssertEqual(output.all.components(separatedBy: "chose").count, 2, "Escape chose nothing: " + output.all)

            // The pointer rests on the tip near the window's bottom: its tooltip opens below the
            // pointer, in a window of its own, past the window's edge.
            mark = output.all.count
            try xdo("mousemove", String(Int(window.minX) + 40), String(Int(window.maxY) - 20))
            XCTAssertNotNil(output.line(containing: "tooltip in a window of its own", after: mark), output.all)
            XCTAssertNil(output.line(containing: "tooltip in the window", after: mark, timeout: 0), "never drawn in the window first")
            var tips = try waitForWindows(named: "tooltip", xwininfo: xwininfo, display: display) { $0.contains(where: \.viewable) }
            let tip = try XCTUnwrap(tips.first, "the tooltip's own window is on the X server")
            XCTAssertTrue(tip.overrideRedirect && tip.viewable, "\(tip)")
            try assertWindowType(of: tip, is: "_NET_WM_WINDOW_TYPE_TOOLTIP", display: display)
            XCTAssertGreaterThan(tip.frame.maxY, window.maxY, "below the pointer, past the window: \(tip.frame)")
            mark = output.all.count
            try xdo("mousemove", String(Int(window.midX)), String(Int(window.minY) + 20))
            XCTAssertNotNil(output.line(containing: "overlays: none", after: mark), output.all)
            tips = try waitForWindows(named: "tooltip", xwininfo: xwininfo, display: display) { $0.isEmpty }
            XCTAssertTrue(tips.isEmpty, "the tooltip's window went")

            try xdo("key", "q")
            XCTAssertNotNil(output.line(containing: "done", after: 0), output.all)
        }
    }

    /// The child's side: the app in a real X11 window, saying what its overlays do.
    private func runChild() throws {
        var configuration = Application.Configuration(title: "tessera popups", size: Self.windowSize, scale: 1, headless: false)
        configuration.accessibility = false
        configuration.followsSystemAppearance = false
        configuration.compositorThread = true
        let screen = PopupScreenNode()
        screen.contextMenu = Menu {
            MenuItem("Open") { print("chose Open"); fflush(nil) }
            MenuItem("Save") { print("chose Save"); fflush(nil) }
            MenuItem("Close") { print("chose Close"); fflush(nil) }
        }
        let app = try Application(configuration: configuration, rootNode: screen)
        app.host.toolTipDelay = 0.2
        app.host.keyHandler = { [weak app] key, _ in
            guard key == .character("q") else { return false }
            app?.quit()
            return true
        }
        var reported = ""
        var watchedAtRest = false
        nonisolated(unsafe) var frameTimes: [Date] = []
        app.onFrame = { [weak app] _ in
            guard let app else { return }
            frameTimes.append(Date())
            if !watchedAtRest, let popup = app.host.overlays.first(where: { $0.kind == .popup })?.surface {
                // Once the menu is shown: what its window and the app's present while nothing happens.
                // (The loop runs inside this test's main-actor task: a timer thread posts to the UI
                // thread's queue, which the loop drains, instead of a main-actor task.)
                watchedAtRest = true
                let popupCompositor = UncheckedBox(popup.compositor), application = UncheckedBox(app)
                let opened = Date()
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
                    Runtime.shared.mainQueue.enqueue {
                        let before = (popupCompositor.value.presentCount, application.value.compositor.presentCount)
                        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
                            Runtime.shared.mainQueue.enqueue {
                                // The frames the two jobs ran in (and the one after each) fall outside.
                                let quiet = frameTimes.filter { $0 > opened + 0.7 && $0 < opened + 1.3 }.count
                                print("at rest for 1 s: frames \(quiet), "
                                      + "the menu's window presented \(popupCompositor.value.presentCount - before.0), "
                                      + "the app's \(application.value.compositor.presentCount - before.1)")
                                fflush(nil)
                            }
                        }
                    }
                }
            }
            let overlays = app.host.overlays.map { overlay -> String in
                let frame = overlay.contentFrame
                return "\(overlay.kind) \(overlay.surface != nil ? "in a window of its own" : "in the window") at "
                    + "\(Int(frame.minX)),\(Int(frame.minY)) \(Int(frame.width))x\(Int(frame.height))"
            }
            let report = overlays.isEmpty ? "overlays: none" : "overlays: " + overlays.joined(separator: "; ")
            if report != reported {
                reported = report
                print(report)
                fflush(nil)
            }
        }
        try app.settle()
        // The window's first placement may come with its first events: looked at once it has settled.
        let placement = try XCTUnwrap(app.compositor.window?.windowPlacement.state)
        print("ready at \(Int(placement.origin.x)),\(Int(placement.origin.y))")
        fflush(nil)
        app.runEventLoop(forSeconds: 60)
        print("done")
        fflush(nil)
    }
}
