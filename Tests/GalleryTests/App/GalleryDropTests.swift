import Compositor
import Foundation
import TestSupport
import XCTest
@testable import gallery

/// Files and text dragged onto the gallery's composer from another X client, through XDND (a small
/// drag source in Python, `xdnd_source.py`, as a file manager would send them), in a window under
/// Xvfb: the composer lights up while the drag is over it and goes back when it leaves; a dropped
/// image is sent as a photo, a file that is no image is refused, dropped text goes into the field.
@MainActor
final class GalleryDropTests: XCTestCase {
    private let viewport = GalleryOptions().size
    private var source: String { GoldenImage.repositoryRoot.appendingPathComponent("Tests/GalleryTests/App/xdnd_source.py").path }

    private nonisolated func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess.run(executable, arguments, environment: environment)
    }

    /// The colour of the screen's pixel at `point` (screen pixels), nil when xwd could not read it.
    private func screenColor(display: String, at point: (x: Int, y: Int)) -> UInt32? {
        guard let shot = Xvfb.screenshot(display: display) else { return nil }
        return shot.pixels[point.y * shot.width + point.x] & 0xFFFFFF
    }

    func testFilesAndTextDraggedOntoTheComposer() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard Xvfb.which("xwd") != nil else { throw XCTSkip("xwd is not installed (make test installs x11-apps)") }
        let python = "/usr/bin/python3"
        guard try run(python, ["-c", "import Xlib"], environment: [:]).status == 0 else {
            throw XCTSkip("python3-xlib is not installed (make test installs it)")
        }
        try Xvfb.withDisplay(numbers: 800..<900) { display in
            let x = ["DISPLAY": display]
            // `--frames` also ends the run after that many frame intervals: ten minutes, so that screenshots
            // slowed by a loaded machine never outlast the gallery (3,600 frames, a minute, once did).
            let (gallery, window) = try GalleryProcess.startInWindow(display: display, arguments: ["--screen", "thread", "--frames", "36000"],
                                                                     environment: ["TESSERA_APPEARANCE": "light"], xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            let geometry = try run(xdotool, ["getwindowgeometry", "--shell", window], environment: x).output
            func value(_ name: String) -> Int? {
                geometry.split(separator: "\n").first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
            }
            let origin = (x: try XCTUnwrap(value("X")), y: try XCTUnwrap(value("Y")))
            // The composer: above the tab bar (48 points), 52 tall; its background left of its + button.
            let composer = (x: origin.x + Int(viewport.width) / 2, y: origin.y + Int(viewport.height) - 48 - 26)
            let composerEdge = (x: origin.x + 2, y: origin.y + Int(viewport.height) - 48 - 40)
            let message = (x: origin.x + 200, y: origin.y + 200)
            let background = screenColor(display: display, at: composerEdge)
            XCTAssertEqual(background, 0xFFFFFF, "the composer's light background")

            // A drag over a message, then the composer (held there), then away: lit while over it.
            var mark = gallery.output.count
            let hover = try GalleryProcess(python, [source, window, "\(message.x),\(message.y)", "\(composer.x),\(composer.y)",
                                                    "--uri", "/tmp/none.png", "--leave", "--wait"], environment: x)
            XCTAssertNotNil(hover.readLine(containing: "status accept=1", after: 0), hover.output)
            XCTAssertNotNil(gallery.readLine(containing: "composer targeted by a drag", after: mark), gallery.output)
            var lit = background
            for _ in 0..<100 where lit != 0xFFF3A3 {
                lit = screenColor(display: display, at: composerEdge)
            }
            XCTAssertEqual(lit, 0xFFF3A3, "the composer shows it takes the drop (the gallery's highlight)")
            if let shot = Xvfb.screenshot(display: display) {
                try? Xvfb.writePNG(shot, to: GalleryProcess.outputFolder.appendingPathComponent("drop-target.png").path)
            }
            hover.writeLine("leave")
            XCTAssertEqual(hover.finish().status, 0, hover.output)
            XCTAssertNotNil(gallery.readLine(containing: "composer untargeted by a drag", after: mark), gallery.output)
            var unlit = lit
            for _ in 0..<100 where unlit != background {
                unlit = screenColor(display: display, at: composerEdge)
            }
            XCTAssertEqual(unlit, background, "back to its background once the drag left")
            XCTAssertFalse(gallery.output.dropFirst(mark).contains("photo sent"), "a drag that left drops nothing")

            // An image dropped on the composer is sent as a photo; a file that is no image is refused.
            let photo = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/brick.jpg").path
            let readme = GoldenImage.repositoryRoot.appendingPathComponent("Assets/README.md").path
            mark = gallery.output.count
            let drop = try run(python, [source, window, "\(composer.x),\(composer.y)", "--uri", photo, readme], environment: x)
            XCTAssertEqual(drop.status, 0, drop.output)
            XCTAssertTrue(drop.output.contains("finished accepted=1"), drop.output)
            XCTAssertNotNil(gallery.readLine(containing: "photo sent (brick.jpg)", after: mark), gallery.output)
            XCTAssertNotNil(gallery.readLine(containing: "dropped file is not an image: README.md", after: mark), gallery.output)

            // Text dropped on the composer goes into its field.
            mark = gallery.output.count
            let text = try run(python, [source, window, "\(composer.x),\(composer.y)", "--text", "dropped words"], environment: x)
            XCTAssertEqual(text.status, 0, text.output)
            XCTAssertNotNil(gallery.readLine(containing: "text dropped on the composer (13 characters)", after: mark), gallery.output)
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }
}
