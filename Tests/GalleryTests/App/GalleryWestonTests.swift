import Compositor
import Foundation
import Glibc
import TestSupport
import XCTest

/// The gallery on weston's X11 backend, inside Xvfb: a compositor with a seat (the X server's
/// keyboard and pointer) that decorates nothing, so SDL draws the window's title bar itself with
/// libdecor (its cairo plugin). The screen is read from the X server (`xwd`): weston's output is an
/// X window there. The gallery runs on Wayland, a uniform title bar band with the window's title in it
/// sits right above its content, the content equals the headless render (not moved or cut by the
/// bar), a click from the X server's pointer switches tabs, the bar's close button ends the gallery
/// with status 0, and at rest it presents nothing.
@MainActor
final class GalleryWestonTests: XCTestCase {
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder.deletingLastPathComponent().appendingPathComponent("weston") }
    private let arguments = ["--screen", "chats", "--rows", "200"] + GalleryProcess.assetsArguments
    private typealias Shot = (width: Int, height: Int, pixels: [UInt32])

    /// Runs `body` with Xvfb and weston's X11 backend on it.
    private func withWeston(_ body: (_ weston: HeadlessWayland, _ display: String) throws -> Void) throws {
        guard FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libweston-10/x11-backend.so")
                || Xvfb.which("weston") != nil else { throw XCTSkip("weston is not installed (make test installs it)") }
        try Xvfb.withDisplay(numbers: 1500..<1600) { display in
            let weston = try HeadlessWayland(.westonOnX11(display: display))
            defer { weston.stop() }
            // weston listens before its desktop shell (panel and background, a client of its own) is up;
            // a window that libdecor decorates while it is not up stays without its title bar (2 of 3
            // gallery starts at once here): the session is taken as ready once the panel is drawn.
            let deadline = Date().addingTimeInterval(10)
            var ready = false
            repeat {
                if let shot = Xvfb.screenshot(display: display), shot.width >= 1280, shot.height >= 800 {
                    // The panel's row and the background below it, both drawn (weston's output starts black).
                    ready = [shot.pixels[5 * shot.width + 640], shot.pixels[400 * shot.width + 1270]]
                        .allSatisfy { $0 & 0xFF_FFFF != 0 }
                }
                if !ready { usleep(50_000) }
            } while !ready && Date() < deadline
            XCTAssertTrue(ready, "weston's desktop shell drew its panel: " + weston.output)
            try body(weston, display)
        }
    }

    /// Where the gallery's content is on the screen, and the title bar above it: the band of rows right
    /// above the content whose commonest colour covers 80% of the row's width.
    private struct Decorated {
        var contentX: Int, contentY: Int
        /// The bar's rows and its colour.
        var barTop: Int, barColor: UInt32
        var width: Int
    }

    nonisolated private static func rgb(_ pixel: UInt32) -> (Int, Int, Int) {
        (Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF))
    }

    nonisolated private static func distance(_ a: UInt32, _ b: UInt32) -> Int {
        let (ar, ag, ab) = rgb(a), (br, bg, bb) = rgb(b)
        return max(abs(ar - br), abs(ag - bg), abs(ab - bb))
    }

    /// Finds the gallery's content on the screen: the topmost, then leftmost place where the headless
    /// render's first row, its 40th and its middle row match (every third pixel, within 24 a channel),
    /// and measures the title bar band above it.
    private func locate(_ headless: Bitmap, in shot: Shot) -> Decorated? {
        let width = headless.width
        for y in 0..<shot.height {
            for x in stride(from: 0, to: shot.width - width + 1, by: 1) {
                // Cheap test first: the row's content top left pixel and its right end match.
                guard Self.distance(shot.pixels[y * shot.width + x], headless.pixels[0]) <= 8,
                      Self.distance(shot.pixels[y * shot.width + x + width - 1], headless.pixels[width - 1]) <= 8
                else { continue }
                // The whole first row and the 40th match.
                var matches = true
                for row in [0, 40, headless.height / 2] where matches {
                    for column in stride(from: 0, to: width, by: 3)
                    where Self.distance(shot.pixels[(y + row) * shot.width + x + column],
                                        headless.pixels[row * width + column]) > 24 {
                        matches = false
                        break
                    }
                }
                guard matches, y + headless.height <= shot.height else { continue }
                // The bar: the rows above whose commonest colour covers 80% of the row.
                var barTop = y
                var barColor: UInt32 = 0
                while barTop > 0 {
                    let row = (barTop - 1) * shot.width + x
                    var counts: [UInt32: Int] = [:]
                    for column in 0..<width { counts[shot.pixels[row + column], default: 0] += 1 }
                    guard let commonest = counts.max(by: { $0.value < $1.value }), commonest.value * 10 >= width * 8,
                          barTop == y || Self.distance(commonest.key, barColor) <= 8 else { break }
                    if barTop == y { barColor = commonest.key }
                    barTop -= 1
                }
                return Decorated(contentX: x, contentY: y, barTop: barTop, barColor: barColor, width: width)
            }
        }
        return nil
    }

    private func crop(_ shot: Shot, x: Int, y: Int, width: Int, height: Int) throws -> Bitmap {
        var pixels = [UInt32]()
        pixels.reserveCapacity(width * height)
        for row in y..<y + height { pixels += shot.pixels[row * shot.width + x..<row * shot.width + x + width] }
        return try Bitmap(width: width, height: height, scale: 1, premultipliedARGB: pixels)
    }

    /// The gallery on weston with libdecor's title bar: on Wayland, the bar right above the content
    /// (uniform, with the title's pixels in it), the content the headless render; a click on the
    /// Thread tab switches the screen and the bar's close button ends the gallery with status 0.
    func testLibdecorTitleBarSitsAboveTheContentAndClosesTheGallery() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let headlessShot = outputFolder.appendingPathComponent("chats-headless.png").path
        let (headlessStatus, headlessOutput) = try GalleryProcess.run(
            galleryBinary.path, arguments + ["--headless", "--scale", "1", "--frames", "5", "--screenshot", headlessShot],
            environment: [:])
        XCTAssertEqual(headlessStatus, 0, headlessOutput)
        let headless = try Bitmap(contentsOfFile: headlessShot)

        try withWeston { weston, display in
            let gallery = try GalleryProcess(galleryBinary.path, arguments + ["--frames", "36000"],
                                             environment: weston.environment.merging(["DISPLAY": display]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate(); _ = gallery.finish() } }
            guard gallery.read(until: "screen ready") else {
                throw GalleryWindowError(what: "the gallery did not start on weston: \(gallery.output)\n\(weston.output)")
            }
            let report = gallery.output.split(separator: "\n").first { $0.hasPrefix("gallery: renderer") }.map(String.init) ?? ""
            XCTAssertTrue(report.contains("video driver wayland"), report)
            XCTAssertTrue(report.contains("at 1x (the window's)"), report)
            XCTAssertFalse(gallery.output.contains("offers no seat") || gallery.output.contains("no keyboard and no pointer"),
                           "weston's X11 backend has a seat with a keyboard and a pointer: " + gallery.output)
            // SDL took the client-side decorations from libdecor and its cairo plugin.
            // (/proc's files say they are empty: read them to their end.)
            let maps = (FileHandle(forReadingAtPath: "/proc/\(gallery.process.processIdentifier)/maps")?.readDataToEndOfFile())
                .map { String(decoding: $0, as: UTF8.self) } ?? ""
            XCTAssertTrue(maps.contains("libdecor-0.so"), "SDL loaded libdecor")
            XCTAssertTrue(maps.contains("libdecor-cairo.so"), "libdecor loaded its cairo plugin")

            // The screen as the X server has it, until the content is found equal to the headless render
            // with its title bar above it (weston may show the window a frame before its decorations).
            let screenFile = outputFolder.appendingPathComponent("chats-screen.png").path
            var found: Decorated?
            var shot: Shot?
            let deadline = Date().addingTimeInterval(15)
            repeat {
                shot = Xvfb.screenshot(display: display)
                if let shot, let place = locate(headless, in: shot) {
                    found = place
                    if place.contentY - place.barTop >= 16 { break }
                }
                usleep(100_000)
            } while Date() < deadline
            let screen = try XCTUnwrap(shot, "xwd read the screen")
            try Xvfb.writePNG(screen, to: screenFile)
            let place = try XCTUnwrap(found, "the headless render's rows are on the screen (\(screenFile)): " + weston.output)

            let content = try crop(screen, x: place.contentX, y: place.contentY, width: headless.width, height: headless.height)
            try content.writePNG(to: outputFolder.appendingPathComponent("chats-content.png").path)
            let (difference, diff) = GoldenImage.compare(content, headless, tolerance: 24)
            if difference.differingPixels > 0, let diff {
                try? diff.writePNG(to: outputFolder.appendingPathComponent("chats-diff.png").path)
            }
            XCTAssertLessThan(Double(difference.differingPixels) / Double(headless.width * headless.height), 0.01,
                              "the content is the headless render, whole: \(difference.differingPixels) pixels differ")

            // libdecor's bar: a band of one colour right above the content, as wide, with the title
            // drawn in its middle and nothing of the content in it.
            let barHeight = place.contentY - place.barTop
            XCTAssertTrue((20...40).contains(barHeight), "a title bar above the content: \(barHeight) rows (\(screenFile))")
            XCTAssertGreaterThan(Self.distance(place.barColor, headless.pixels[0]), 64,
                                 "the bar's colour is not the content's")
            let bar = try crop(screen, x: place.contentX, y: place.barTop, width: place.width, height: barHeight)
            try bar.writePNG(to: outputFolder.appendingPathComponent("title-bar.png").path)
            var titlePixels = 0
            for y in 0..<barHeight {
                for x in place.width / 3..<place.width * 2 / 3
                where Self.distance(bar.pixels[y * place.width + x], place.barColor) > 64 { titlePixels += 1 }
            }
            XCTAssertGreaterThan(titlePixels, 100, "the title's pixels in the middle of the bar")

            // A click on the Thread tab (the second of five across the 48-point tab bar at the bottom)
            // through weston's seat: the tab bar shows Thread chosen and the content is no longer the chats.
            let tabX = place.contentX + headless.width * 3 / 10
            let tabY = place.contentY + headless.height - 24
            // weston's X11 backend follows the X pointer only once it has entered weston's window (the X
            // pointer starts inside it, where weston's own pointer sits at 0,0 over its panel's
            // terminal launcher): the pointer goes out below weston's 800 rows and comes back in.
            let (clickStatus, clickOutput) = try GalleryProcess.run(xdotool, ["mousemove", "640", "1000", "mousemove", "\(tabX)",
                                                                              "\(tabY)", "click", "1"],
                                                                    environment: ["DISPLAY": display])
            XCTAssertEqual(clickStatus, 0, clickOutput)
            var switched: Bitmap?
            let clickDeadline = Date().addingTimeInterval(10)
            repeat {
                if let shot = Xvfb.screenshot(display: display) {
                    let now = try crop(shot, x: place.contentX, y: place.contentY, width: headless.width, height: headless.height)
                    let changed = GoldenImage.compare(now, headless, tolerance: 24).0.differingPixels
                    if Double(changed) / Double(headless.width * headless.height) > 0.2 { switched = now; break }
                }
                usleep(100_000)
            } while Date() < clickDeadline
            var thread = try XCTUnwrap(switched, "the click on the Thread tab changed the content")
            // The first screen that changed can be one the switch is still drawing into (the new
            // screen's bitmaps and the tab bar's come from the workers as they are ready): the screen
            // is read until it stays the same for half a second.
            var alikeSince: Date?
            let restDeadline = Date().addingTimeInterval(10)
            while Date() < restDeadline {
                usleep(100_000)
                guard let shot = Xvfb.screenshot(display: display) else { continue }
                let now = try crop(shot, x: place.contentX, y: place.contentY, width: headless.width, height: headless.height)
                if now.pixels == thread.pixels {
                    let since = alikeSince ?? Date()
                    alikeSince = since
                    if Date().timeIntervalSince(since) >= 0.5 { break }
                } else {
                    alikeSince = nil
                    thread = now
                }
            }
            try thread.writePNG(to: outputFolder.appendingPathComponent("thread-content.png").path)
            // The chosen tab's label is tinted (blue): under Thread now, not under Chats.
            func tinted(_ bitmap: Bitmap, column: Int) -> Int {
                var count = 0
                for y in bitmap.height - 40..<bitmap.height - 8 {
                    for x in column * bitmap.width / 5..<(column + 1) * bitmap.width / 5 {
                        let (r, g, b) = Self.rgb(bitmap.pixels[y * bitmap.width + x])
                        if b > r + 60 && b > g + 20 { count += 1 }
                    }
                }
                return count
            }
            XCTAssertGreaterThan(tinted(headless, column: 0), 20, "Chats is chosen at the start")
            XCTAssertGreaterThan(tinted(thread, column: 1), 20, "Thread is chosen after the click")
            XCTAssertEqual(tinted(thread, column: 0), 0, "Chats is no longer chosen")

            // The close button: the rightmost of libdecor's three buttons, each as wide as the bar is high.
            let closeX = place.contentX + place.width - barHeight / 2 - 4
            let closeY = place.barTop + barHeight / 2
            let (closeStatus, closeOutput) = try GalleryProcess.run(xdotool, ["mousemove", "640", "1000", "mousemove", "\(closeX)",
                                                                              "\(closeY)", "click", "1"],
                                                                    environment: ["DISPLAY": display])
            XCTAssertEqual(closeStatus, 0, closeOutput)
            let closeDeadline = Date().addingTimeInterval(10)
            while gallery.process.isRunning && Date() < closeDeadline { usleep(50_000) }
            if gallery.process.isRunning {
                if let shot = Xvfb.screenshot(display: display) {
                    try? Xvfb.writePNG(shot, to: outputFolder.appendingPathComponent("close-not-taken.png").path)
                }
                XCTFail("the close button did not end the gallery: " + gallery.drainAvailable())
                return
            }
            let (status, output) = gallery.finish()
            XCTAssertEqual(gallery.process.terminationReason, .exit, output)
            XCTAssertEqual(status, 0, "closed by its title bar's button: " + output)
        }
    }

    /// `gallery --bench idle` on weston with libdecor's decorations: each screen at rest presents
    /// nothing and runs no frame (the title bar does not keep it drawing). Each screen is measured in
    /// a process of its own (`--idle-one-screen`): SDL 2.26 with libdecor 0.1 crashes (in its libdecor
    /// configure handler) when a window opens after the process's last window closed, which the full
    /// benchmark's window for each screen does; `Tools/sdl-libdecor-reopen.c` shows it without Tessera.
    func testTheIdleBenchmarkOnWestonFindsEachScreenAtRest() async throws {
        struct Report: Decodable {
            struct Measurement: Decodable {
                var name: String
                var framesAfterSettle: Int
                var presentsAfterSettle: Int
            }
            var output: String
            var screens: [Measurement]
        }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        try withWeston { weston, _ in
            for screen in ["chats", "thread", "settings"] {
                let json = outputFolder.appendingPathComponent("idle-weston-\(screen).json").path
                let (status, output) = try GalleryProcess.run(
                    galleryBinary.path, ["--bench", "idle", "--idle-one-screen", "--screen", screen, "--seconds", "1.2",
                                         "--json", json] + GalleryProcess.assetsArguments, environment: weston.environment)
                XCTAssertEqual(status, 0, output)
                guard status == 0 else { continue }
                let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
                XCTAssertTrue(report.output.contains("video driver wayland"), report.output)
                XCTAssertEqual(report.screens.map(\.name), [screen])
                for measured in report.screens where !TestEnvironment.isThreadSanitized {
                    XCTAssertEqual(measured.presentsAfterSettle, 0, "\(screen) at rest presents nothing: \(output)")
                    XCTAssertEqual(measured.framesAfterSettle, 0, "\(screen) at rest runs no frame: \(output)")
                }
            }
        }
    }
}
