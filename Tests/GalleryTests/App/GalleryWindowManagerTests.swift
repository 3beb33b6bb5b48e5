import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery's popups and its modal About window under a real window manager (Openbox, from
/// Debian's packages, in Xvfb), driven with xdotool: a context menu opens without taking the main
/// window's focus and Escape closes it; the About window is managed as a modal dialog of the main
/// window (transient for it, `_NET_WM_STATE_MODAL` kept), has the focus, keeps it when the main
/// window is clicked, and hands it back as it closes.
@MainActor
final class GalleryWindowManagerTests: XCTestCase {
    private nonisolated func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess.run(executable, arguments, environment: environment)
    }

    func testAMenuAndTheModalAboutWindowUnderOpenbox() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard let openbox = Xvfb.which("openbox") else { throw XCTSkip("openbox is not installed (make test installs it)") }
        let xprop = try XCTUnwrap(Xvfb.which("xprop"), "xprop is installed with x11-utils")
        try Xvfb.withDisplay(numbers: 700..<800) { display in
            let x = ["DISPLAY": display]
            let manager = try GalleryProcess(openbox, ["--sm-disable"], environment: x)
            defer { if manager.process.isRunning { manager.process.terminate() } }
            // The window manager owns the screen once it has set _NET_SUPPORTING_WM_CHECK on the root.
            var managed = false
            for _ in 0..<100 where !managed {
                managed = try run(xprop, ["-root", "_NET_SUPPORTING_WM_CHECK"], environment: x).output.contains("window id")
                if !managed { usleep(50_000) }
            }
            XCTAssertTrue(managed, "openbox manages the screen")
            let (gallery, window) = try GalleryProcess.startInWindow(display: display, arguments: ["--screen", "thread", "--frames", "36000"],
                                                                     xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            func focused() throws -> String {
                try run(xdotool, ["getwindowfocus"], environment: x).output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            /// The focused window once it is `expected` (looked at for at most 5 s).
            func focus(becomes expected: String) throws -> String {
                var now = try focused()
                for _ in 0..<50 where now != expected {
                    usleep(100_000)
                    now = try focused()
                }
                return now
            }
            XCTAssertEqual(try focus(becomes: window), window, "the main window has the focus")

            // A right click on the last message: its menu opens in a popup window, the main window keeps the focus.
            let size = GalleryOptions().size
            var mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, String(Int(size.width) - 40),
                                             String(Int(size.height) - 48 - 52 - 16), "click", "3"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "surface shown: menu", after: mark), gallery.output)
            XCTAssertEqual(try focused(), window, "the menu took no focus from the window")
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "Escape"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "surfaces now 0", after: mark), "Escape closed the menu: " + gallery.output)

            // Help › About: a dialog the window manager keeps modal for the main window, with the focus.
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "alt+h", "End", "Return"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "about window opened", after: mark), gallery.output)
            let (_, aboutFound) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                               "^About Tessera Gallery$"], environment: x)
            let about = try XCTUnwrap(aboutFound.split(separator: "\n").first.map(String.init), "the About window is shown")
            XCTAssertEqual(try focus(becomes: about), about, "the dialog has the focus")
            let properties = try run(xprop, ["-id", about, "_NET_WM_STATE", "WM_TRANSIENT_FOR"], environment: x).output
            XCTAssertTrue(properties.contains("_NET_WM_STATE_MODAL"), "the manager keeps it modal: \(properties)")
            XCTAssertTrue(properties.contains("0x" + String(Int(window) ?? 0, radix: 16)), "transient for the main window: \(properties)")

            // A right click on the message again: no menu under the dialog, which keeps the focus.
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, String(Int(size.width) - 40),
                                             String(Int(size.height) - 48 - 52 - 16), "click", "3"], environment: x).status, 0)
            XCTAssertEqual(try focus(becomes: about), about, "the dialog keeps the focus")
            // Escape closes the dialog; the focus goes back to the main window.
            XCTAssertEqual(try run(xdotool, ["key", "Escape"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "about window closed", after: mark), gallery.output)
            XCTAssertFalse(gallery.output.dropFirst(mark).contains("surface shown"), "the click under the dialog opened nothing")
            XCTAssertEqual(try focus(becomes: window), window, "the focus went back to the main window")
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }
}
