import Compositor
import Foundation
import Glibc
import TestSupport
import XCTest
@testable import gallery

/// The gallery on Wayland, under a headless sway (one compositor for the class, its output's scale
/// set per test) and a headless weston (a compositor with no seat): with `WAYLAND_DISPLAY` set it
/// runs on SDL's Wayland driver even where X11 is there too (the user's `SDL_VIDEODRIVER` wins), its
/// window as grim captures it equals the headless render at the output's scale (1 and 2, OpenGL and
/// the software renderer), it draws nothing at rest, and a seatless compositor sends it to X11
/// (or to a clear error without X11) instead of crashing SDL.
@MainActor
final class GalleryWaylandTests: XCTestCase {
    private static var sharedSway: HeadlessWayland?
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder.deletingLastPathComponent().appendingPathComponent("wayland") }
    private let arguments = ["--screen", "chats", "--rows", "200"] + GalleryProcess.assetsArguments

    /// The class's sway, started by the first test that needs it.
    private func sway() throws -> HeadlessWayland {
        if let sway = Self.sharedSway { return sway }
        let sway = try HeadlessWayland(.sway)
        Self.sharedSway = sway
        return sway
    }

    override class func tearDown() {
        MainActor.assumeIsolated {
            sharedSway?.stop()
            sharedSway = nil
        }
        super.tearDown()
    }

    /// The gallery's window on sway at `scale` with `renderer` (nil: its default), captured with grim
    /// once it equals the headless render at that scale (or at the 20 s deadline), and that render.
    /// Both are written to the output folder as `<name>-wayland.png` and `<name>-headless.png`.
    private func capture(scale: Int, renderer: String?, name: String, extraEnvironment: [String: String] = [:])
        throws -> (window: Bitmap, headless: Bitmap, report: String, output: String) {
        guard let grim = Xvfb.which("grim") else { throw XCTSkip("grim is not installed (make test installs it)") }
        let sway = try sway()
        try sway.setScale(scale)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let headlessShot = outputFolder.appendingPathComponent("\(name)-headless.png").path
        let rendererArguments = renderer.map { ["--renderer", $0] } ?? []
        let (headlessStatus, headlessOutput) = try GalleryProcess.run(
            galleryBinary.path, arguments + ["--headless", "--scale", "\(scale)", "--frames", "5", "--screenshot", headlessShot],
            environment: [:])
        XCTAssertEqual(headlessStatus, 0, headlessOutput)
        let headless = try Bitmap(contentsOfFile: headlessShot)

        let gallery = try GalleryProcess(galleryBinary.path, arguments + rendererArguments + ["--frames", "36000"],
                                         environment: sway.environment.merging(extraEnvironment) { $1 })
        defer { if gallery.process.isRunning { gallery.process.terminate(); _ = gallery.finish() } }
        guard gallery.read(until: "screen ready") else {
            throw GalleryWindowError(what: "the gallery did not start on Wayland: \(gallery.output)")
        }
        let report = gallery.output.split(separator: "\n").first { $0.hasPrefix("gallery: renderer") }.map(String.init) ?? ""
        let windowShot = outputFolder.appendingPathComponent("\(name)-wayland.png").path
        var window: Bitmap?
        let deadline = Date().addingTimeInterval(20)
        repeat {
            if let rect = try sway.windowRect(title: "Tessera gallery") {
                let geometry = "\(rect.x),\(rect.y) \(rect.width)x\(rect.height)"
                let (status, output) = try GalleryProcess.run(grim, ["-g", geometry, windowShot], environment: sway.environment)
                XCTAssertEqual(status, 0, output)
                let shot = try Bitmap(contentsOfFile: windowShot)
                window = shot
                if shot.width == headless.width && shot.height == headless.height
                    && differingFraction(shot, headless) < 0.01 { break }
            }
            usleep(100_000)
        } while Date() < deadline
        return (try XCTUnwrap(window, "the gallery's window is in sway's tree: " + sway.output), headless, report, gallery.output)
    }

    private func differingFraction(_ a: Bitmap, _ b: Bitmap) -> Double {
        Double(GoldenImage.compare(a, b, tolerance: 24).0.differingPixels) / Double(a.width * a.height)
    }

    private func assertMatches(_ window: Bitmap, _ headless: Bitmap, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(window.width, headless.width, "\(name): the drawable is the output's scale × the window", file: file, line: line)
        XCTAssertEqual(window.height, headless.height, name, file: file, line: line)
        guard window.width == headless.width && window.height == headless.height else { return }
        XCTAssertGreaterThan(Set(window.pixels.prefix(200_000)).count, 200, "\(name): the window is not blank", file: file, line: line)
        let (difference, diff) = GoldenImage.compare(window, headless, tolerance: 24)
        let diffFile = outputFolder.appendingPathComponent("\(name)-diff.png").path
        try? FileManager.default.removeItem(atPath: diffFile)
        if difference.differingPixels > 0, let diff { try? diff.writePNG(to: diffFile) }
        // A picture scaled up from window units differs at every text edge; the renderers' own
        // rounding differs in a sliver.
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), 0.01,
                          "\(name): \(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))",
                          file: file, line: line)
    }

    /// With both WAYLAND_DISPLAY and DISPLAY (Xvfb) set, the gallery runs on Wayland (SDL alone would
    /// take X11), and at scale 1 its window equals the headless render (OpenGL and software); SDL_VIDEODRIVER=x11 (or the
    /// gallery's `--video-driver x11`) still wins, and X11 takes over when SDL's Wayland driver fails.
    func testWaylandIsPreferredOverX11AndTheWindowMatchesTheHeadlessRenderAtScale1() async throws {
        try Xvfb.withDisplay(numbers: 1300..<1400) { display in
            let (window, headless, report, output) = try capture(scale: 1, renderer: nil, name: "chats-scale1",
                                                         extraEnvironment: ["DISPLAY": display])
            XCTAssertTrue(report.contains("renderer opengl, video driver wayland"), report)
            XCTAssertTrue(report.contains("at 1x (the window's)"), report)
            assertMatches(window, headless, "chats-scale1")
            XCTAssertEqual(output.components(separatedBy: "no keyboard and no pointer").count - 1, 1,
                           "sway's seat without devices is said once")
            // The software renderer at scale 1 draws into a pixel surface too (see `SDLPixelSurface`).
            let software = try capture(scale: 1, renderer: "software", name: "chats-scale1-software")
            XCTAssertTrue(software.report.contains("renderer software, video driver wayland"), software.report)
            assertMatches(software.window, software.headless, "chats-scale1-software")

            let (status, x11Output) = try GalleryProcess.run(
                galleryBinary.path, arguments + ["--frames", "5"],
                environment: try sway().environment.merging(["DISPLAY": display, "SDL_VIDEODRIVER": "x11"]) { $1 })
            XCTAssertEqual(status, 0, x11Output)
            XCTAssertTrue(x11Output.contains("video driver x11"), "the user's SDL_VIDEODRIVER wins: " + x11Output)
            // SDL's Wayland driver failing to start (no XKB data for its keyboard context: a real
            // failure of SDL_VideoInit, after the compositor answered): X11 takes over, no input notice.
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-no-xkb-\(getpid())").path
            let (fallbackStatus, fallbackOutput) = try GalleryProcess.run(
                galleryBinary.path, arguments + ["--frames", "5"],
                environment: try sway().environment.merging(["DISPLAY": display, "XKB_CONFIG_ROOT": missing,
                                                             "HOME": missing]) { $1 })
            XCTAssertEqual(fallbackStatus, 0, fallbackOutput)
            XCTAssertTrue(fallbackOutput.contains("wayland video driver did not start"), fallbackOutput)
            XCTAssertTrue(fallbackOutput.contains("video driver x11"), "X11 is the fallback: " + fallbackOutput)
            XCTAssertFalse(fallbackOutput.contains("no keyboard and no pointer"), fallbackOutput)
            // The gallery's own switch does the same.
            let (optionStatus, optionOutput) = try GalleryProcess.run(
                galleryBinary.path, arguments + ["--frames", "5", "--video-driver", "x11"],
                environment: try sway().environment.merging(["DISPLAY": display]) { $1 })
            XCTAssertEqual(optionStatus, 0, optionOutput)
            XCTAssertTrue(optionOutput.contains("video driver x11"), "--video-driver x11: " + optionOutput)
        }
    }

    /// At the output's scale 2 the window's drawable is twice its size, and both OpenGL and the
    /// software renderer draw it sharp: equal to the headless render at scale 2.
    func testAtScale2BothRenderersAreSharp() async throws {
        // Under the sanitizers OpenGL alone: the hand-off they watch is the same for both renderers.
        for renderer in TestEnvironment.isSanitized ? ["opengl"] : ["opengl", "software"] {
            let name = "chats-scale2-\(renderer)"
            let (window, headless, report, _) = try capture(scale: 2, renderer: renderer, name: name)
            XCTAssertTrue(report.contains("renderer \(renderer), video driver wayland"), report)
            XCTAssertTrue(report.contains("at 2x (the window's)"), report)
            assertMatches(window, headless, name)
        }
    }

    /// `gallery --bench idle` on Wayland: each screen at rest presents nothing and runs no frame.
    func testTheIdleBenchmarkOnWaylandFindsEveryScreenAtRest() async throws {
        struct Report: Decodable {
            struct Measurement: Decodable {
                var name: String
                var cpuPercent: Double
                var framesAfterSettle: Int
                var presentsAfterSettle: Int
            }
            var output: String
            var screens: [Measurement]
        }
        let sway = try sway()
        try sway.setScale(1)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let json = outputFolder.appendingPathComponent("idle-wayland.json").path
        let (status, output) = try GalleryProcess.run(galleryBinary.path, ["--bench", "idle", "--seconds", "1.2", "--json", json]
                                                      + GalleryProcess.assetsArguments, environment: sway.environment)
        XCTAssertEqual(status, 0, output)
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        XCTAssertTrue(report.output.contains("video driver wayland"), report.output)
        XCTAssertEqual(report.screens.map(\.name), ["chats", "thread", "photos", "text", "settings"])
        for screen in report.screens where !TestEnvironment.isThreadSanitized {
            XCTAssertEqual(screen.presentsAfterSettle, 0, "\(screen.name) at rest presents nothing: \(output)")
            XCTAssertEqual(screen.framesAfterSettle, 0, "\(screen.name) at rest runs no frame: \(output)")
        }
        print("idle on wayland: " + report.screens.map { "\($0.name) \($0.framesAfterSettle) frames, "
                                                        + String(format: "%.1f%% CPU", $0.cpuPercent) }.joined(separator: "; "))
    }

    /// weston's headless backend offers no seat, where SDL 2.26's Wayland driver crashes: the gallery
    /// says so once and opens its window through X11 when DISPLAY is set, and ends with an error (not
    /// a crash) when it is not. sway's seat (with no devices) is seen as one.
    func testASeatlessCompositorSendsTheGalleryToX11WithoutACrash() async throws {
        XCTAssertEqual(VideoDriverChoice.waylandSeats(
            display: try sway().runtimeDirectory.appendingPathComponent(try sway().socket).path),
                       .init(count: 1, hasKeyboardOrPointer: false), "sway has seat0, with no devices")
        let weston = try HeadlessWayland(.weston)
        defer { weston.stop() }
        XCTAssertEqual(VideoDriverChoice.waylandSeats(
            display: weston.runtimeDirectory.appendingPathComponent(weston.socket).path).count, 0, "weston headless has no seat")
        let notice = "offers no seat"
        try Xvfb.withDisplay(numbers: 1400..<1500) { display in
            let gallery = try GalleryProcess(galleryBinary.path, arguments + ["--frames", "5"],
                                             environment: weston.environment.merging(["DISPLAY": display]) { $1 })
            let (status, output) = gallery.finish()
            XCTAssertEqual(gallery.process.terminationReason, .exit, output)
            XCTAssertEqual(status, 0, output)
            XCTAssertTrue(output.contains("video driver x11"), output)
            XCTAssertEqual(output.components(separatedBy: notice).count - 1, 1, "said once: " + output)
        }
        let gallery = try GalleryProcess(galleryBinary.path, arguments + ["--frames", "5"], environment: weston.environment)
        let (status, output) = gallery.finish()
        XCTAssertEqual(gallery.process.terminationReason, .exit, "no crash: " + output)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains(notice) && output.contains("DISPLAY is not set"), output)
        XCTAssertFalse(output.contains("crashed"), output)
    }
}
