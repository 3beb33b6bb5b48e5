import Compositor
import Foundation
import TestSupport
import XCTest
@testable import gallery

/// Text selected with the pointer in the gallery's Text screen and copied with Ctrl+C reaches the
/// X clipboard, read back from outside by `xclip`, in a window under Xvfb driven by xdotool.
@MainActor
final class GalleryTextSelectionTests: XCTestCase {
    private nonisolated func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess.run(executable, arguments, environment: environment)
    }

    func testADraggedSelectionCopiedWithCtrlCReachesTheClipboard() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard let xclip = Xvfb.which("xclip") else { throw XCTSkip("xclip is not installed (make test installs it)") }
        try Xvfb.withDisplay(numbers: 900..<1000) { display in
            let x = ["DISPLAY": display]
            let (gallery, window) = try GalleryProcess.startInWindow(display: display, arguments: ["--screen", "text", "--frames", "36000"],
                                                                     environment: [:], xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            // The first sample's first line (below the menu bar and its caption): from its start across
            // a few words, then Ctrl+C.
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "17", "70", "mousedown", "1",
                                             "mousemove", "--window", window, "80", "71",
                                             "mousemove", "--window", window, "150", "71", "mouseup", "1",
                                             "key", "ctrl+c"], environment: x).status, 0)
            let lorem = "Nodes are measured on any thread, drawn on background workers"
            var copied = ""
            // As UTF-8 text (xclip's default target depends on the locale); until the copy has happened.
            for _ in 0..<50 where copied.isEmpty {
                if let read = try? run(xclip, ["-o", "-selection", "clipboard", "-t", "UTF8_STRING"], environment: x),
                   read.status == 0 {
                    copied = read.output
                }
                if copied.isEmpty { usleep(100_000) }
            }
            if let shot = Xvfb.screenshot(display: display) {
                try? Xvfb.writePNG(shot, to: GalleryProcess.outputFolder.appendingPathComponent("text-selection-window.png").path)
            }
            XCTAssertTrue(copied.count >= 8 && lorem.hasPrefix(copied), "the selected words reached the clipboard: [\(copied)]")
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }
}
