import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery's menus, dialogs and tooltips in a real window under Xvfb (menus and tooltips in popup
/// windows of their own), driven from outside with xdotool and read back with xwd and xwininfo, as a
/// person (and a check kept outside the project) would meet them. The gallery says on standard output when a surface opens or ends
/// (`gallery: surface shown: ROLE "LABEL" at X,Y W×H`, `gallery: surfaces now N`).
@MainActor
final class GallerySurfacesWindowTests: XCTestCase {
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder }
    private let assetsArguments = GalleryProcess.assetsArguments
    private let viewport = GalleryOptions().size

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess(executable, arguments, environment: environment).finish()
    }

    /// The window's top-left corner on the screen, from `xwininfo`.
    private func windowOrigin(_ window: String, environment: [String: String]) throws -> (x: Int, y: Int) {
        let xwininfo = try XCTUnwrap(Xvfb.which("xwininfo"), "xwininfo is installed with x11-utils")
        let (status, output) = try run(xwininfo, ["-id", window], environment: environment)
        XCTAssertEqual(status, 0, output)
        func value(_ name: String) -> Int? {
            output.split(separator: "\n").first { $0.contains(name) }
                .flatMap { $0.split(separator: ":").last }.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        return (try XCTUnwrap(value("Absolute upper-left X")), try XCTUnwrap(value("Absolute upper-left Y")))
    }

    /// The X windows named `name` (the gallery's popup windows are "popup" and "tooltip"): where
    /// they are on the screen, whether they are override-redirect and mapped.
    private func popupWindows(named name: String, environment: [String: String]) throws
        -> [(frame: Rect, overrideRedirect: Bool, viewable: Bool)] {
        let xwininfo = try XCTUnwrap(Xvfb.which("xwininfo"), "xwininfo is installed with x11-utils")
        let tree = try run(xwininfo, ["-root", "-tree"], environment: environment).output
        let ids = tree.split(separator: "\n").filter { $0.contains("\"\(name)\"") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        return try ids.map { id in
            let info = try run(xwininfo, ["-id", id], environment: environment).output
            func value(_ label: String) -> Double {
                info.split(separator: "\n").first { $0.contains(label) }
                    .flatMap { $0.split(separator: ":").last }.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } ?? -1
            }
            return (Rect(x: value("Absolute upper-left X"), y: value("Absolute upper-left Y"),
                         width: value("Width"), height: value("Height")),
                    info.contains("Override Redirect State: yes"), info.contains("Map State: IsViewable"))
        }
    }

    /// `popupWindows(named:)` once `check` holds for them (looked at for at most 10 s).
    private func waitForPopupWindows(named name: String, environment: [String: String],
                                     until check: ([(frame: Rect, overrideRedirect: Bool, viewable: Bool)]) -> Bool) throws
        -> [(frame: Rect, overrideRedirect: Bool, viewable: Bool)] {
        var found = try popupWindows(named: name, environment: environment)
        for _ in 0..<100 where !check(found) {
            usleep(100_000)
            found = try popupWindows(named: name, environment: environment)
        }
        return found
    }

    /// The rectangle in a "surface shown" line: "at X,Y W×H".
    private func frame(in line: String) throws -> Rect {
        let at = try XCTUnwrap(line.range(of: " at ")).upperBound
        let parts = line[at...].split(whereSeparator: { $0 == "," || $0 == " " || $0 == "×" }).compactMap { Double($0) }
        XCTAssertEqual(parts.count, 4, line)
        return Rect(x: parts[0], y: parts[1], width: parts[2], height: parts[3])
    }

    /// The mean difference of the three channels between two screenshots over `rect` (screen pixels).
    private func meanDifference(_ a: (width: Int, height: Int, pixels: [UInt32]), _ b: (width: Int, height: Int, pixels: [UInt32]),
                                in rect: Rect) -> Double {
        var total = 0.0, count = 0.0
        for y in Int(rect.minY)..<Int(rect.maxY) where y >= 0 && y < a.height {
            for x in Int(rect.minX)..<Int(rect.maxX) where x >= 0 && x < a.width {
                let p = a.pixels[y * a.width + x], q = b.pixels[y * b.width + x]
                for shift in [16, 8, 0] as [UInt32] {
                    total += abs(Double(Int(p >> shift & 0xFF) - Int(q >> shift & 0xFF)))
                }
                count += 3
            }
        }
        return count > 0 ? total / count : 0
    }

    func testATooltipShowsOverTheTabBarAfterTheDelayAndGoesWhenThePointerLeaves() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard Xvfb.which("xwd") != nil else { throw XCTSkip("xwd is not installed (make test installs x11-apps)") }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        try Xvfb.withDisplay(numbers: 190..<290) { display in
            let x = ["DISPLAY": display]
            let gallery = try GalleryProcess(galleryBinary.path, ["--screen", "chats", "--rows", "200", "--frames", "3600"]
                                             + assetsArguments, environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            let (_, windows) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                            "^Tessera gallery$"], environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found")
            let origin = try windowOrigin(window, environment: x)
            let before = try XCTUnwrap(Xvfb.screenshot(display: display), "xwd read the screen")

            // The pointer rests on the first tab (the bar is the window's bottom 48 points).
            let tab = (x: Int(viewport.width / 10), y: Int(viewport.height) - 24)
            let mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, String(tab.x), String(tab.y)], environment: x).status, 0)
            let line = try XCTUnwrap(gallery.readLine(containing: "surface shown: toolTip", after: mark), gallery.output)
            XCTAssertTrue(line.contains("\"Show Chats (1)\""), line)
            let bubble = try frame(in: line)
            // Placed against the screen, which has room below the window: below the pointer, past the
            // window's bottom edge (inside the window it would have flipped above the pointer).
            XCTAssertGreaterThan(bubble.minY, Double(tab.y), "below the pointer: \(line)")
            XCTAssertGreaterThan(bubble.maxY, viewport.height, "past the window's bottom edge: \(line)")
            let onScreen = bubble.offsetBy(dx: Double(origin.x), dy: Double(origin.y)).insetBy(dx: 2, dy: 2)
            // Drawn in a window of its own (override-redirect, as X11 popups are), where the bubble is.
            let tipWindows = try waitForPopupWindows(named: "tooltip", environment: x) { $0.contains { $0.viewable } }
            let tipWindow = try XCTUnwrap(tipWindows.first, "the tooltip has a window of its own")
            XCTAssertTrue(tipWindow.overrideRedirect && tipWindow.viewable, "\(tipWindow)")
            XCTAssertEqual(tipWindow.frame.minX, bubble.minX + Double(origin.x), accuracy: 1, "\(tipWindow.frame) \(line)")
            XCTAssertEqual(tipWindow.frame.minY, bubble.minY + Double(origin.y), accuracy: 1, "\(tipWindow.frame) \(line)")
            // The frame that shows it is presented right after the one that reported it: looked for
            // until it is there (the loop ends with the gallery's own frame limit).
            var shown: (width: Int, height: Int, pixels: [UInt32])?
            for _ in 0..<200 {
                guard let shot = Xvfb.screenshot(display: display) else { break }
                if meanDifference(before, shot, in: onScreen) > 40 { shown = shot; break }
            }
            XCTAssertNotNil(shown, "the tooltip's bubble reached the screen at \(onScreen)")
            if let shown { try? Xvfb.writePNG(shown, to: outputFolder.appendingPathComponent("tooltip-window.png").path) }

            let hideMark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, String(Int(viewport.width / 2)), "200"],
                                   environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "surfaces now 0", after: hideMark), "the tooltip went: " + gallery.output)
            XCTAssertTrue(try waitForPopupWindows(named: "tooltip", environment: x) { $0.isEmpty }.isEmpty,
                          "the tooltip's window went with it")
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }

    /// A right click near the window's right edge on a message opens its menu in a window of its
    /// own that `xwininfo` finds on the screen, where the gallery says it is; End and Return choose
    /// Delete…, whose alert opens; Escape cancels it. F10 opens the menu bar's first menu and Escape closes it.
    func testAContextMenuByRightClickAndItsAlertByKeysInTheWindow() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        try Xvfb.withDisplay(numbers: 290..<300) { display in
            let x = ["DISPLAY": display]
            let gallery = try GalleryProcess(galleryBinary.path, ["--screen", "thread", "--frames", "3600"] + assetsArguments,
                                             environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            let (_, windows) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                            "^Tessera gallery$"], environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found")
            // The last message sits just above the composer (52 points) and the tab bar (48).
            let point = (x: Int(viewport.width) - 40, y: Int(viewport.height) - 48 - 52 - 16)
            var mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["windowfocus", "--sync", window, "mousemove", "--window", window,
                                             String(point.x), String(point.y), "click", "3"], environment: x).status, 0)
            let menuLine = try XCTUnwrap(gallery.readLine(containing: "surface shown: menu", after: mark), gallery.output)
            // In a window of its own, placed against the screen (1280×1024): at the pointer, on screen.
            let menu = try frame(in: menuLine)
            let origin = try windowOrigin(window, environment: x)
            let onScreen = menu.offsetBy(dx: Double(origin.x), dy: Double(origin.y))
            XCTAssertEqual(menu.minY, Double(point.y), accuracy: 1, "below the pointer: \(menuLine)")
            XCTAssertTrue(onScreen.minX >= 0 && onScreen.minY >= 0 && onScreen.maxX <= 1280 && onScreen.maxY <= 1024,
                          "on the screen: \(onScreen)")
            let xwininfo = try XCTUnwrap(Xvfb.which("xwininfo"))
            let tree = try run(xwininfo, ["-root", "-tree"], environment: x).output
            XCTAssertTrue(tree.contains("\(Int(menu.width))x\(Int(menu.height))+\(Int(onScreen.minX))+\(Int(onScreen.minY))"),
                          "the menu's own window is on the X server where the gallery put it: \(tree)")

            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "End", "Return"], environment: x).status, 0)
            let alertLine = try XCTUnwrap(gallery.readLine(containing: "surface shown: alert", after: mark), gallery.output)
            XCTAssertTrue(alertLine.contains("\"Delete message?\""), alertLine)
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "Escape"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "surfaces now 0", after: mark), "Escape cancelled the alert: " + gallery.output)
            XCTAssertFalse(gallery.output.contains("gallery: deleted message"), "nothing was deleted")

            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "F10"], environment: x).status, 0)
            let barLine = try XCTUnwrap(gallery.readLine(containing: "surface shown: menu \"File\"", after: mark), gallery.output)
            XCTAssertEqual(try frame(in: barLine).minY, MenuBarNode.height, accuracy: 1, "below the bar: \(barLine)")
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "Escape"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "surfaces now 0", after: mark), gallery.output)

            // Help › About the Gallery opens a dialog window modal for the main window.
            try checkTheAboutWindow(window: window, messagePoint: point, gallery: gallery, xdotool: xdotool, display: display)
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }

    /// Alt+H, End, Return open the About window: transient for the main window and marked modal
    /// (`xprop`), centred over it, with the keyboard focus. A right click on a message of the main
    /// window opens no menu while it is open; Escape closes it and the focus goes back.
    private func checkTheAboutWindow(window: String, messagePoint point: (x: Int, y: Int), gallery: GalleryProcess,
                                     xdotool: String, display: String) throws {
        let x = ["DISPLAY": display]
        var mark = gallery.output.count
        XCTAssertEqual(try run(xdotool, ["key", "alt+h", "End", "Return"], environment: x).status, 0)
        let opened = try XCTUnwrap(gallery.readLine(containing: "about window opened", after: mark), gallery.output)
        XCTAssertTrue(opened.contains("modal for \"Tessera gallery\""), opened)
        let (_, found) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                      "^About Tessera Gallery$"], environment: x)
        let about = try XCTUnwrap(found.split(separator: "\n").first.map(String.init), "the About window is on the X server")
        let xprop = try XCTUnwrap(Xvfb.which("xprop"), "xprop is installed with x11-utils")
        let properties = try run(xprop, ["-id", about, "WM_TRANSIENT_FOR", "_NET_WM_STATE"], environment: x).output
        let transientFor = properties.split(separator: "\n").first { $0.hasPrefix("WM_TRANSIENT_FOR") }
            .flatMap { $0.split(separator: "#").last }.map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(transientFor.flatMap { Int($0.dropFirst(2), radix: 16) }, Int(window),
                       "transient for the main window: \(properties)")
        XCTAssertTrue(properties.contains("_NET_WM_STATE_MODAL"), "marked modal: \(properties)")
        let mainOrigin = try windowOrigin(window, environment: x), aboutOrigin = try windowOrigin(about, environment: x)
        XCTAssertEqual(Double(aboutOrigin.x), Double(mainOrigin.x) + (viewport.width - 360) / 2, accuracy: 2, "centred over the main window")
        XCTAssertEqual(Double(aboutOrigin.y), Double(mainOrigin.y) + (viewport.height - 220) / 2, accuracy: 2, "centred over the main window")
        func focusedWindow() throws -> String {
            try run(xdotool, ["getwindowfocus"], environment: x).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try focusedWindow(), about, "the dialog has the keyboard focus")
        // Drawn: its OK button in the accent colour (120×36 points, its title aside) inside its frame.
        let aboutFrame = Rect(x: Double(aboutOrigin.x), y: Double(aboutOrigin.y), width: 360, height: 220)
        var accentPixels = 0
        for _ in 0..<100 {
            guard let shot = Xvfb.screenshot(display: display) else { break }
            accentPixels = 0
            for py in Int(aboutFrame.minY)..<Int(aboutFrame.maxY) where py < shot.height {
                for px in Int(aboutFrame.minX)..<Int(aboutFrame.maxX) where px < shot.width
                    && shot.pixels[py * shot.width + px] & 0xFFFFFF == 0x3390EC { accentPixels += 1 }
            }
            if accentPixels > 2_000 {
                try? Xvfb.writePNG(shot, to: outputFolder.appendingPathComponent("about-window.png").path)
                break
            }
            usleep(50_000)
        }
        XCTAssertGreaterThan(accentPixels, 2_000, "the About window's OK button is on the screen")

        // A right click on a message of the main window under it: no menu. Escape, read after it, goes to
        // the dialog, which closes: the main window has the focus back.
        mark = gallery.output.count
        XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, String(point.x), String(point.y), "click", "3",
                                         "key", "Escape"], environment: x).status, 0)
        XCTAssertNotNil(gallery.readLine(containing: "about window closed", after: mark), gallery.output)
        let during = String(gallery.output.dropFirst(mark))
        XCTAssertFalse(during.contains("surface shown"), "the click under the dialog opened nothing: \(during)")
        var focus = try focusedWindow()
        for _ in 0..<50 where focus != window {
            usleep(100_000)
            focus = try focusedWindow()
        }
        XCTAssertEqual(focus, window, "the focus went back to the main window")
        // And the main window takes input again: the same right click opens the message's menu.
        mark = gallery.output.count
        XCTAssertEqual(try run(xdotool, ["click", "3"], environment: x).status, 0)
        XCTAssertNotNil(gallery.readLine(containing: "surface shown: menu", after: mark), gallery.output)
        mark = gallery.output.count
        XCTAssertEqual(try run(xdotool, ["key", "Escape"], environment: x).status, 0)
        XCTAssertNotNil(gallery.readLine(containing: "surfaces now 0", after: mark), gallery.output)
    }
}
