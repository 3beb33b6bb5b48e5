import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery's controls in a window under Xvfb, driven from outside with xdotool as a person would:
/// the Settings screen's Text size slider dragged by its thumb (and stepped by a key), the Chats
/// screen's search field typed into and cleared by its clear button.
@MainActor
final class GalleryControlsWindowTests: XCTestCase {
    private let viewport = GalleryOptions().size

    private nonisolated func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess.run(executable, arguments, environment: environment)
    }

    /// The percentage in the last "text size N%" line after `mark`.
    private func textSize(in gallery: GalleryProcess, after mark: Int) -> Int? {
        gallery.output.dropFirst(mark).split(separator: "\n").last { $0.contains("gallery: text size ") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Int($0.dropLast()) }
    }

    func testTheSliderByItsThumbAndTheSearchFieldByTyping() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        try Xvfb.withDisplay(numbers: 1000..<1100) { display in
            let x = ["DISPLAY": display]
            let (gallery, window) = try GalleryProcess.startInWindow(display: display, arguments: ["--screen", "settings", "--frames", "36000"],
                                                                     environment: ["TESSERA_APPEARANCE": "light"], xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }

            // The slider: 180 points wide at the row's right edge (16 in), in the fourth row; at 100%
            // its thumb (28 across) sits a quarter of the way along its travel (80–160%).
            let sliderLeft = Int(viewport.width) - 16 - 180
            let thumb = (x: sliderLeft + 14 + (180 - 28) / 4, y: 246)
            var mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(thumb.x)", "\(thumb.y)", "mousedown", "1",
                                             "mousemove", "--window", window, "\(thumb.x + 30)", "\(thumb.y)",
                                             "mousemove", "--window", window, "\(thumb.x + 76)", "\(thumb.y + 3)",
                                             "mouseup", "1"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "gallery: text size 140%", after: mark),
                            "half the travel further: 140%: \(gallery.output.dropFirst(mark))")
            // The drag left the focus on the slider: Left steps it back 10%.
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "Left"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "gallery: text size 130%", after: mark), gallery.output)
            // Once the screen stops changing (the text laid out again at 130%), it is kept to look at.
            var previous = Xvfb.screenshot(display: display)
            for _ in 0..<40 {
                let shot = Xvfb.screenshot(display: display)
                if let shot, let last = previous, shot.pixels == last.pixels { break }
                previous = shot
            }
            if let previous {
                try? Xvfb.writePNG(previous, to: GalleryProcess.outputFolder.appendingPathComponent("settings-slider-window.png").path)
            }

            // The Chats screen's search field: a click in it, typed letters filter; its clear button empties it.
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "1"], environment: x).status, 0)
            let field = (x: 120, y: Int(MenuBarNode.height) + 8 + 17)
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(field.x)", "\(field.y)", "click", "1",
                                             "type", "--delay", "30", "laura"], environment: x).status, 0)
            let line = try XCTUnwrap(gallery.readLine(containing: "gallery: search \"laura\"", after: mark), gallery.output)
            XCTAssertFalse(line.contains("shows 0 chats"), line)
            mark = gallery.output.count
            // The clear button at the field's right end (10 in from the window's edge, 14 more to its middle).
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(viewport.width) - 10 - 16)", "\(field.y)",
                                             "click", "1"], environment: x).status, 0)
            XCTAssertNotNil(gallery.readLine(containing: "gallery: search \"\" shows", after: mark), gallery.output)
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }
}
