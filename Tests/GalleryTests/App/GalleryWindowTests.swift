import Compositor
import Tessera
import Foundation
import Glibc
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery binary as a person runs it: headless with the overlay, and in a real window under Xvfb
/// (installed by `make test`), where it opens an X11 window with the OpenGL renderer, renders the chats
/// screen so that it matches the headless one, shows the overlay when F2 is pressed, and scrolls the
/// text screen's list when a drag starts on a link (keys and the mouse sent with xdotool through the
/// X server, like a keyboard and a mouse).
@MainActor
final class GalleryWindowTests: XCTestCase {
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder }
    private let assetsArguments = GalleryProcess.assetsArguments
    /// The gallery's window size when none is asked for.
    private let viewport = GalleryOptions().size
    /// What the gallery prints once its window is open in a real X11 window.
    private let x11Report = "renderer opengl, video driver x11"

    private typealias Child = GalleryProcess

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try Child(executable, arguments, environment: environment).finish()
    }

    /// Runs `body` with a private X server (see `Xvfb`).
    private func withXvfb(_ body: (_ display: String) throws -> Void) throws {
        try Xvfb.withDisplay(numbers: 90..<190, body)
    }

    func testHeadlessCommandDrawsTheOverlayChart() async throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let shot = outputFolder.appendingPathComponent("overlay-headless.png").path
        try? FileManager.default.removeItem(atPath: shot)
        let (status, output) = try run(galleryBinary.path, ["--headless", "--overlay", "--frames", "120", "--screenshot", shot]
                                       + assetsArguments)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("video driver dummy"), output)
        // Frames of a screen at rest draw and present nothing and cost next to no time: the bars tall
        // enough to see are those of the frames that loaded the screen (3 to 5 of them, fewer when the
        // workers finish the screen in fewer frames).
        ChartPixels.assertChartDrawn(in: try Bitmap(contentsOfFile: shot), viewport: viewport, minimumBars: 3,
                                     "gallery --headless --overlay")
    }

    func testWindowUnderXvfbMatchesTheHeadlessRender() async throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let windowShot = outputFolder.appendingPathComponent("chats-window.png").path
        let headlessShot = outputFolder.appendingPathComponent("chats-headless.png").path
        let arguments = ["--screen", "chats", "--rows", "200", "--frames", "5"] + assetsArguments

        try withXvfb { display in
            let (windowStatus, windowOutput) = try run(galleryBinary.path, arguments + ["--screenshot", windowShot],
                                                       environment: ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"])
            XCTAssertEqual(windowStatus, 0, windowOutput)
            XCTAssertTrue(windowOutput.contains(x11Report), "an X11 window with the OpenGL renderer: " + windowOutput)
            XCTAssertFalse(windowOutput.contains("running headless"), "a display was found: " + windowOutput)
        }

        let (headlessStatus, headlessOutput) = try run(galleryBinary.path, arguments + ["--headless", "--screenshot", headlessShot])
        XCTAssertEqual(headlessStatus, 0, headlessOutput)
        XCTAssertTrue(headlessOutput.contains("video driver dummy"), headlessOutput)

        let window = try Bitmap(contentsOfFile: windowShot)
        let headless = try Bitmap(contentsOfFile: headlessShot)
        // Not blank: a real screen has many colours.
        XCTAssertGreaterThan(Set(window.pixels.prefix(200_000)).count, 200, "the window's frame is not blank")
        let (difference, diff) = GoldenImage.compare(window, headless, tolerance: 24)
        if difference.differingPixels > 0, let diff {
            try? diff.writePNG(to: outputFolder.appendingPathComponent("chats-diff.png").path)
        }
        // OpenGL and the software renderer filter and round slightly differently: allow a sliver.
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), 0.01,
                          "\(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))")
    }

    /// Typing into the Thread screen's composer on the X server's keyboard: a click focuses it, the
    /// keys arrive as SDL text input, Enter sends, and the window's last frame shows the new, short
    /// bubble at the bottom right, above the composer.
    func testTypingAMessageInTheWindowSendsIt() async throws {
        guard let xdotool = Xvfb.which("xdotool") else {
            throw XCTSkip("xdotool is not installed (make test installs it)")
        }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let shot = outputFolder.appendingPathComponent("composer-window.png").path
        try? FileManager.default.removeItem(atPath: shot)

        try withXvfb { display in
            let x = ["DISPLAY": display]
            let gallery = try Child(galleryBinary.path, ["--screen", "thread", "--frames", "1800", "--screenshot", shot]
                                    + assetsArguments, environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            let (_, windows) = try run(xdotool, ["search", "--name", "^Tessera gallery$"], environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found")
            // The composer sits above the 48-point tab bar.
            let clickX = Int(viewport.width / 2), clickY = Int(viewport.height) - 48 - 22
            // The keys follow the click that focuses the composer at once, in the same command: the
            // first ones are read with the click, before any thread has answered it, and keep their text.
            let (typeStatus, typeOutput) = try run(xdotool, ["windowfocus", "--sync", window, "mousemove", "--window", window,
                                                             "\(clickX)", "\(clickY)", "click", "1",
                                                             "type", "--delay", "1", "Hi Xvfb"], environment: x)
            XCTAssertEqual(typeStatus, 0, typeOutput)
            let (enterStatus, enterOutput) = try run(xdotool, ["key", "Return"], environment: x)
            XCTAssertEqual(enterStatus, 0, enterOutput)
            XCTAssertTrue(gallery.read(until: "message sent (7 characters)"), "the typed message was not sent: " + gallery.output)
            let (quitStatus, quitOutput) = try run(xdotool, ["key", "ctrl+q"], environment: x)
            XCTAssertEqual(quitStatus, 0, quitOutput)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
            XCTAssertTrue(output.contains("screenshot written"), output)
        }
        // The lowest stretch of outgoing-bubble green above the composer is the new message: short,
        // at the right edge (the one before it spans most of the width).
        let bitmap = try Bitmap(contentsOfFile: shot)
        let scale = Double(bitmap.width) / viewport.width
        let composerTop = Int((viewport.height - 48 - 47) * scale)
        func isBubble(_ pixel: UInt32) -> Bool {  // opaque ARGB: E3FEE0
            abs(Int((pixel >> 16) & 0xFF) - 0xE3) < 6 && abs(Int((pixel >> 8) & 0xFF) - 0xFE) < 6
                && abs(Int(pixel & 0xFF) - 0xE0) < 6
        }
        var bubbleRow: (y: Int, minX: Int, maxX: Int)?
        for y in stride(from: composerTop - 1, to: composerTop - 120, by: -1) {
            let xs = (0..<bitmap.width).filter { isBubble(bitmap.pixel(x: $0, y: y)) }
            if xs.count > 10, let minX = xs.min(), let maxX = xs.max() { bubbleRow = (y, minX, maxX); break }
        }
        let row = try XCTUnwrap(bubbleRow, "a green bubble above the composer")
        XCTAssertGreaterThan(Double(row.maxX), Double(bitmap.width) * 0.9, "the bubble is on the right")
        XCTAssertLessThan(Double(row.maxX - row.minX), 220 * scale, "the bubble holds the short new message")
    }

    /// `--bench fling` with a display draws in a real window through the renderer `--renderer` names,
    /// and its report (table and JSON) says which; headless, a renderer the dummy driver lacks is
    /// refused by name.
    func testTheFlingBenchmarkRunsInTheWindowOnTheRendererAskedFor() async throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let short = ["--bench", "fling", "--compare", "--rows", "40", "--frames", "10"] + assetsArguments
        try withXvfb { display in
            for renderer in ["opengl", "software"] {
                let file = outputFolder.appendingPathComponent("fling-\(renderer).json")
                try? FileManager.default.removeItem(at: file)
                let (status, output) = try run(galleryBinary.path, short + ["--renderer", renderer, "--json", file.path],
                                               environment: ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"])
                XCTAssertEqual(status, 0, output)
                XCTAssertTrue(output.contains("renderer \(renderer), video driver x11"), output)
                let report = try JSONDecoder().decode(FlingReport.self, from: try Data(contentsOf: file))
                XCTAssertEqual(report.renderer, renderer)
                XCTAssertEqual(report.videoDriver, "x11")
                XCTAssertNotNil(report.ratios.asyncOverFloorP99)
            }
        }
        let (status, output) = try run(galleryBinary.path, ["--headless", "--renderer", "opengl"] + short)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("could not start the opengl renderer with the dummy video driver"), output)
    }

    /// F2 pressed on the X server's keyboard reaches the gallery through SDL's event loop and shows
    /// the overlay, whose chart is drawn in the window's frame; Ctrl+Q quits.
    func testF2InTheWindowShowsTheOverlayChart() async throws {
        guard let xdotool = Xvfb.which("xdotool") else {
            throw XCTSkip("xdotool is not installed (make test installs it)")
        }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let shot = outputFolder.appendingPathComponent("overlay-window.png").path
        try? FileManager.default.removeItem(atPath: shot)

        try withXvfb { display in
            let x = ["DISPLAY": display]
            // At most 30 seconds of frames: if a key never arrives, the gallery ends and the reads below see it.
            let gallery = try Child(galleryBinary.path, ["--screen", "chats", "--rows", "200", "--frames", "1800",
                                                         "--screenshot", shot] + assetsArguments,
                                    environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "video driver"), gallery.output)
            XCTAssertTrue(gallery.output.contains(x11Report), "an X11 window with the OpenGL renderer: " + gallery.output)

            // The window is mapped before the gallery reports it, so it can be found without waiting.
            let (searchStatus, windows) = try run(xdotool, ["search", "--name", "^Tessera gallery$"], environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found: \(searchStatus)")
            // F2 once the first screen is up, as a person would press it: the chart has frames to show.
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            let (keyStatus, keyOutput) = try run(xdotool, ["windowfocus", window, "key", "F2"], environment: x)
            XCTAssertEqual(keyStatus, 0, keyOutput)
            XCTAssertTrue(gallery.read(until: "perf overlay shown"), "F2 did not reach the gallery: " + gallery.output)
            let (quitStatus, quitOutput) = try run(xdotool, ["key", "ctrl+q"], environment: x)
            XCTAssertEqual(quitStatus, 0, quitOutput)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
            XCTAssertTrue(output.contains("screenshot written"), output)
        }
        // The loop runs frames only while something changes: the chart holds the frames that loaded
        // the screen and those F2 and Ctrl+Q ran, about a hundred. With the compositor on its own
        // thread those UI frames take 0.2 ms or so, a pixel or less against the chart's frame budget,
        // so only a few show as bars of their own: the bars there and the workers' lane say it drew.
        ChartPixels.assertChartDrawn(in: try Bitmap(contentsOfFile: shot), viewport: viewport, minimumBars: 1,
                                     "F2 in an X11 window")
    }

    /// Where the Text screen's first link is in a window of `size` points, found by laying the screen
    /// out in this process exactly as the binary does (same assets, fonts and size), and the app, for
    /// rendering it again.
    private func makeTextScreenApp(size: Size) throws -> GalleryApp {
        var options = GalleryOptions()
        options.screen = .text
        options.headless = true
        options.size = size
        let data = try ChatData(assets: GoldenImage.repositoryRoot.appendingPathComponent("Assets"))
        let application = try Application(configuration: .init(title: "gallery-window-test", size: size, headless: true,
                                                                      backgroundColor: Color(rgb: 0x12161B)),
                                          rootController: nil)
        let app = try GalleryApp(options: options, data: data, application: application)
        try app.settle()
        return app
    }

    /// The first link on the Text screen's visible rows: its value and the window point of its middle.
    private func firstLink(in app: GalleryApp) throws -> (value: String, point: Point) {
        let list = try XCTUnwrap(app.visibleList)
        for row in try XCTUnwrap(list.visibleRows) {
            guard let node = list.nodeForRow(row) as? TextSampleNode else { continue }
            let sample = node.sample
            for y in stride(from: 1.0, to: sample.frame.height, by: 2) {
                for x in stride(from: 1.0, to: sample.frame.width, by: 2) {
                    guard let hit = sample.textHit(at: Point(x: x, y: y)), case let .link(value) = hit.target,
                          let rect = hit.rects.first else { continue }
                    let top = app.host.contentBounds.minY + list.frameOfRow(row).minY - list.contentOffset
                    let point = Point(x: sample.frame.minX + rect.midX, y: top + sample.frame.minY + rect.midY)
                    XCTAssertLessThan(point.y + 40, list.bounds.height, "the link is well inside the list")
                    return (value, point)
                }
            }
        }
        throw XCTSkip("no link on the Text screen's first rows")
    }

    /// A press on a link of the Text screen, dragged up 200 pixels and released in a real X11 window,
    /// scrolls the list and does not open the link; a plain click on the same link, just before, does
    /// open it (so the mouse does reach the link). The window's last frame matches the screen rendered
    /// here at the offset the gallery reports.
    func testADragFromALinkInTheWindowScrollsTheListAndOpensNothing() async throws {
        guard let xdotool = Xvfb.which("xdotool") else {
            throw XCTSkip("xdotool is not installed (make test installs it)")
        }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let shot = outputFolder.appendingPathComponent("text-drag-window.png").path
        try? FileManager.default.removeItem(atPath: shot)
        // Tall enough that the links sample is on the first screen.
        let size = Size(width: 960, height: 900)
        var app: GalleryApp? = try makeTextScreenApp(size: size)
        let (link, point) = try firstLink(in: app!)
        let x = String(Int(point.x.rounded())), y = Int(point.y.rounded())
        app?.host.setRootController(nil)
        app = nil  // one SDL backend at a time

        var reportedOffset: Double?
        try withXvfb { display in
            // TESSERA_OPEN_LINKS=0: the clicked link is reported, not handed to a browser.
            let env = ["DISPLAY": display, "TESSERA_OPEN_LINKS": "0"]
            let gallery = try Child(galleryBinary.path, ["--screen", "text", "--size", "960x900", "--frames", "3600",
                                                         "--screenshot", shot] + assetsArguments,
                                    environment: env.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "video driver"), gallery.output)
            XCTAssertTrue(gallery.output.contains(x11Report), "an X11 window with the OpenGL renderer: " + gallery.output)
            XCTAssertTrue(gallery.read(until: "screen ready"), "the first screen never finished: " + gallery.output)
            // The window once it is mapped (bounded: `--sync` alone would wait for ever).
            let (searchStatus, windows) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                                       "^Tessera gallery$"], environment: env)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found: \(searchStatus)")

            // A plain click on the link opens it.
            let (clickStatus, clickOutput) = try run(xdotool, ["mousemove", "--window", window, x, String(y), "click", "1"],
                                                     environment: env)
            XCTAssertEqual(clickStatus, 0, clickOutput)
            XCTAssertTrue(gallery.read(until: "gallery: link opened \(link)"), "the click did not open the link: " + gallery.output)

            // Down on the link, up 200 pixels in steps of 20, up.
            var drag = ["mousemove", "--window", window, x, String(y), "mousedown", "1"]
            for step in 1...10 { drag += ["mousemove", "--window", window, x, String(y - 20 * step)] }
            drag += ["mouseup", "1"]
            let (dragStatus, dragOutput) = try run(xdotool, drag, environment: env)
            XCTAssertEqual(dragStatus, 0, dragOutput)
            let (quitStatus, quitOutput) = try run(xdotool, ["windowfocus", window, "key", "ctrl+q"], environment: env)
            XCTAssertEqual(quitStatus, 0, quitOutput)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(output.components(separatedBy: "gallery: link opened").count - 1, 1,
                           "only the click opened the link, not the drag: " + output)
            let line = try XCTUnwrap(output.split(separator: "\n").first { $0.hasPrefix("gallery: list on screen at offset ") },
                                     output)
            reportedOffset = Double(line.dropFirst("gallery: list on screen at offset ".count))
        }
        // The pan begins 20 pixels up (past its 10-point slop) and follows the next 180; a fling may add more.
        let offset = try XCTUnwrap(reportedOffset)
        XCTAssertGreaterThanOrEqual(offset, 179.5, "the drag scrolled the list")

        // The same screen here, after the same click, at the offset the gallery reports.
        let local = try makeTextScreenApp(size: size)
        defer { local.host.setRootController(nil) }
        local.frame(time: 100, events: [.pointerDown(point, button: 1)])
        local.frame(time: 100 + 1.0 / 60, events: [.pointerUp(point, button: 1)])
        let list = try XCTUnwrap(local.visibleList)
        list.setContentOffset(offset, animated: false)
        try local.settle()
        XCTAssertEqual(list.contentOffset, offset, accuracy: 1e-9)
        let expected = try XCTUnwrap(OffscreenRender.capture(local.host))
        let window = try Bitmap(contentsOfFile: shot)
        let (difference, diff) = GoldenImage.compare(window, expected, tolerance: 24)
        if difference.differingPixels > 0, let diff {
            try? diff.writePNG(to: outputFolder.appendingPathComponent("text-drag-diff.png").path)
            try? expected.writePNG(to: outputFolder.appendingPathComponent("text-drag-expected.png").path)
        }
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), 0.01,
                          "\(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))")
        // And it differs from the screen before the drag: the list did move on screen.
        list.setContentOffset(0, animated: false)
        try local.settle()
        let unscrolled = try XCTUnwrap(OffscreenRender.capture(local.host))
        XCTAssertGreaterThan(Double(GoldenImage.compare(window, unscrolled, tolerance: 24).0.differingPixels)
                             / Double(window.width * window.height), 0.05)
    }

    /// `gallery --bench idle` headless and in a window under Xvfb: each screen at rest, the pointer
    /// inside, presents nothing and runs no frame; the blinking caret presents and does little else.
    func testTheIdleBenchmarkFindsEveryScreenAtRestPresentingNothing() async throws {
        struct Report: Decodable {
            struct Measurement: Decodable {
                var name: String
                var cpuPercent: Double
                var framesAfterSettle: Int
                var presentsAfterSettle: Int
            }
            var output: String
            var firstPresentMilliseconds: Double?
            var screens: [Measurement]
            var caret: Measurement
        }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        func check(_ extra: [String], environment: [String: String], window: Bool) throws {
            let json = outputFolder.appendingPathComponent(window ? "idle-window.json" : "idle-headless.json").path
            let (status, output) = try run(galleryBinary.path, ["--bench", "idle", "--seconds", "1.2", "--json", json]
                                           + extra + assetsArguments, environment: environment)
            XCTAssertEqual(status, 0, output)
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            XCTAssertEqual(report.screens.map(\.name), ["chats", "thread", "photos", "text", "settings"])
            XCTAssertEqual(report.output.contains(x11Report), window, report.output)
            for screen in report.screens {
                XCTAssertTrue(screen.cpuPercent.isFinite && screen.cpuPercent >= 0)
                // (Under ThreadSanitizer a screen may still be settling when the rest is measured.)
                if TestEnvironment.isThreadSanitized { continue }
                XCTAssertEqual(screen.presentsAfterSettle, 0, "\(screen.name) at rest presents nothing: \(output)")
                XCTAssertEqual(screen.framesAfterSettle, 0, "\(screen.name) at rest runs no frame: \(output)")
            }
            // The caret turns off at 0.5 s and on at 1.0 s: two changes, each a frame and a present.
            XCTAssertGreaterThanOrEqual(report.caret.presentsAfterSettle, 1, output)
            XCTAssertLessThanOrEqual(report.caret.presentsAfterSettle, 4, output)
            XCTAssertNotNil(report.firstPresentMilliseconds, output)
        }
        // Under the sanitizers the window alone (its compositor thread is what they watch; headless
        // runs the same frames on the UI thread, which the plain suite covers).
        if !TestEnvironment.isSanitized { try check(["--headless"], environment: [:], window: false) }
        try withXvfb { display in
            try check([], environment: ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"], window: true)
        }
    }

    /// Input at rest reaches the screen, headless and in a real window under Xvfb (where the wait is
    /// SDL's own, whose wake-ups can be lost between a look at the work and the wait): every wheel
    /// notch and every character typed shows in a presented frame, none waits for the compositor
    /// thread's rest time-out, and the report has the fields checks read.
    func testTheLatencyBenchmarkSeesEveryInputShownAndNoLateWakeUp() async throws {
        struct Report: Decodable {
            struct Kind: Decodable {
                var count: Int
                var p50Ms: Double
                var p99Ms: Double
                var maxMs: Double
                var missed: Int
            }
            var output: String
            var wheel: Kind
            var typing: Kind
            var lateWakeups: Int
        }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        func check(_ extra: [String], environment: [String: String], window: Bool) throws {
            let json = outputFolder.appendingPathComponent(window ? "latency-window.json" : "latency-headless.json").path
            let (status, output) = try run(galleryBinary.path, ["--bench", "latency", "--frames", "24", "--json", json]
                                           + extra + assetsArguments, environment: environment)
            XCTAssertEqual(status, 0, output)
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            XCTAssertEqual(report.output.contains("video driver x11"), window, report.output)
            for (name, kind) in [("wheel", report.wheel), ("typing", report.typing)] {
                XCTAssertEqual(kind.count, 24, "\(name): every input showed: \(output)")
                XCTAssertEqual(kind.missed, 0, "\(name): \(output)")
                XCTAssertTrue(kind.p50Ms > 0 && kind.p50Ms <= kind.p99Ms && kind.p99Ms <= kind.maxMs, "\(name): \(output)")
            }
            // No wait at rest ran out its quarter-second time-out with a commit pending.
            XCTAssertEqual(report.lateWakeups, 0, output)
        }
        // Under the sanitizers the window alone, as for the idle benchmark.
        if !TestEnvironment.isSanitized { try check(["--headless"], environment: [:], window: false) }
        try withXvfb { display in
            try check(["--renderer", "software"], environment: ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"], window: true)
        }
    }

    /// Input latency measured from outside, as a user feels it (`Tools/input-latency.py`: XTest in, X
    /// DAMAGE out): every wheel notch and keystroke into the search field changes the window's pixels,
    /// none is missed, and none waits anything like the compositor thread's rest time-out.
    func testInputFromOutsideReachesTheWindow() async throws {
        let python = "/usr/bin/python3"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tools/input-latency.py").path
        guard FileManager.default.isExecutableFile(atPath: python),
              try run(python, ["-c", "import Xlib.ext.damage, Xlib.ext.xtest"]).status == 0 else {
            throw XCTSkip("python3-xlib is not installed (make test installs it)")
        }
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        struct Report: Decodable {
            var count: Int
            var missed: Int
            var p50Ms: Double
            var maxMs: Double
        }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        try withXvfb { display in
            let x = ["DISPLAY": display]
            let gallery = try Child(galleryBinary.path, ["--frames", "3600", "--renderer", "software"] + assetsArguments,
                                    environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            for (kind, extra) in [("wheel", [String]()), ("typing", ["--click", "\(Int(viewport.width / 2)),\(Int(MenuBarNode.height) + 24)"])] {
                let json = outputFolder.appendingPathComponent("input-latency-\(kind).json").path
                let (status, output) = try run(python, [script, "--name", "^Tessera gallery$", "--kind", kind, "--count", "20",
                                                        "--json", json] + extra, environment: x)
                XCTAssertEqual(status, 0, output)
                let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
                XCTAssertEqual(report.count, 20, "\(kind): every input changed the window: \(output)")
                XCTAssertEqual(report.missed, 0, output)
                XCTAssertTrue(report.p50Ms > 0 && report.p50Ms <= report.maxMs, output)
            }
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }

    /// In a window, driven from outside: Tab reaches the first switch of the Settings screen and Space
    /// flips it; key 2 goes to the thread, and the wheel scrolled up there loads older messages.
    func testSettingsByKeyboardAndOlderMessagesByWheelInTheWindow() async throws {
        guard let xdotool = Xvfb.which("xdotool") else {
            throw XCTSkip("xdotool is not installed (make test installs it)")
        }
        try withXvfb { display in
            let x = ["DISPLAY": display]
            let gallery = try Child(galleryBinary.path, ["--screen", "settings", "--frames", "1800"] + assetsArguments,
                                    environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            let (_, windows) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                            "^Tessera gallery$"], environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found")
            let (keyStatus, keyOutput) = try run(xdotool, ["windowfocus", "--sync", window, "key", "Tab", "space"], environment: x)
            XCTAssertEqual(keyStatus, 0, keyOutput)
            XCTAssertTrue(gallery.read(until: "gallery: notifications off"), "Tab and Space: " + gallery.output)
            let (tabStatus, tabOutput) = try run(xdotool, ["key", "2"], environment: x)
            XCTAssertEqual(tabStatus, 0, tabOutput)
            // The wheel over the middle of the thread, upwards, until a batch of history comes in.
            let (wheelStatus, wheelOutput) = try run(xdotool, ["mousemove", "--window", window, "480", "300",
                                                               "click", "--repeat", "100", "--delay", "10", "4"], environment: x)
            XCTAssertEqual(wheelStatus, 0, wheelOutput)
            XCTAssertTrue(gallery.read(until: "gallery: loaded 30 older items"), "the wheel: " + gallery.output)
            let (quitStatus, quitOutput) = try run(xdotool, ["key", "ctrl+q"], environment: x)
            XCTAssertEqual(quitStatus, 0, quitOutput)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }

    /// A stalled app still scrolls: in a real window, F8 blocks the UI thread in a busy loop for
    /// 3 s; meanwhile the wheel, turned three times with xdotool, moves the chat list on the
    /// compositor thread, and the list glides on after the last notch as it does when the app is
    /// free. Screenshots taken from outside (`xwd`) show the list moved by more than the three
    /// wheel steps and come to rest before the gallery says the UI thread is free again; when it is,
    /// the UI thread takes the list over where the screen shows it: the screen does not jump. (Its
    /// timing checks run in the plain suite; see below for what a sanitizer run checks.)
    func testTheListScrollsInTheWindowWhileTheUIThreadIsBlocked() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard Xvfb.which("xwd") != nil else { throw XCTSkip("xwd is not installed (make test installs x11-apps)") }
        try withXvfb { display in
            let x = ["DISPLAY": display]
            let gallery = try Child(galleryBinary.path, ["--frames", "3600", "--renderer", "software"] + assetsArguments,
                                    environment: x.merging(["SDL_VIDEODRIVER": "x11"]) { $1 })
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertTrue(gallery.read(until: "screen ready"), gallery.output)
            XCTAssertTrue(gallery.output.contains("compositor thread"), gallery.output)
            let (_, windows) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name", "^Tessera gallery$"],
                                       environment: x)
            let window = try XCTUnwrap(windows.split(separator: "\n").first.map(String.init), "window not found")
            let (moveStatus, moveOutput) = try run(xdotool, ["windowfocus", "--sync", window, "mousemove", "--window", window,
                                                             "\(Int(viewport.width / 2))", "\(Int(viewport.height / 2))"],
                                                   environment: x)
            XCTAssertEqual(moveStatus, 0, moveOutput)
            XCTAssertEqual(try run(xdotool, ["key", "F8"], environment: x).status, 0)
            XCTAssertTrue(gallery.read(until: "monotonic)"), gallery.output)
            // The block's end on the monotonic clock, which this process reads alike: a screen read
            // that ended before it was on screen while the UI thread was blocked, however late this
            // process read the gallery's line. Screens are read until 0.3 s before it.
            let blockLine = try XCTUnwrap(gallery.output.split(separator: "\n").last { $0.contains("blocking the UI thread") })
            let blockEnd = try XCTUnwrap(blockLine.split(separator: "until ").last?.split(separator: " ").first.flatMap { Double($0) },
                                         "the block's end in: " + blockLine)
            func monotonicNow() -> Double { Double(MonotonicClock.nanoseconds()) / 1e9 }
            let before = try XCTUnwrap(Xvfb.screenshot(display: display), "xwd read the screen")
            XCTAssertEqual(try run(xdotool, ["click", "--repeat", "3", "--delay", "30", "5"], environment: x).status, 0)
            // Screens read until shortly before the block ends, a twentieth of a second apart (so as
            // not to starve the gallery's compositor thread of the CPU), the last read that ended
            // before the block's end kept. The glide is a function of time: whatever frame the
            // thread draws after it ended shows the resting place, so the last screen of the block
            // shows the list at rest even where a loaded machine (a sanitizer) held the thread back
            // for a while — where a rest told by screens alike for a moment could be such a hold.
            // Under a sanitizer on a machine of two cores (the blocked UI thread's busy loop holds
            // one), the compositor thread can be held back for seconds: the timing checks run in the
            // plain suite; under a sanitizer, which watches the same hand-off for races and memory
            // errors, the wheel's motion must reach the screen by the time the UI thread is back.
            guard !TestEnvironment.isSanitized else {
                XCTAssertTrue(gallery.read(until: "UI thread unblocked"), gallery.output)
                let deadline = Date().addingTimeInterval(20)
                var moved = false
                while !moved && Date() < deadline {
                    moved = try XCTUnwrap(Xvfb.screenshot(display: display)).pixels != before.pixels
                    if !moved { usleep(100_000) }
                }
                XCTAssertTrue(moved, "the wheel moved the list: " + gallery.drainAvailable())
                XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
                let (status, output) = gallery.finish()
                XCTAssertEqual(status, 0, output)
                return
            }
            var after = before
            var afterReadBy = monotonicNow()
            while monotonicNow() < blockEnd - 0.3 {
                let shot = try XCTUnwrap(Xvfb.screenshot(display: display))
                let readBy = monotonicNow()
                guard readBy < blockEnd else { break }
                (after, afterReadBy) = (shot, readBy)
                usleep(50_000)
            }
            XCTAssertNotEqual(after.pixels, before.pixels, "the list moved on screen while the UI thread was blocked: "
                              + gallery.drainAvailable())
            XCTAssertLessThan(afterReadBy, blockEnd)
            // The rows of the resting screen are the old one's moved up: by more than three wheel
            // steps of 48 points (the glide after them), found as the shift most rows agree with.
            // Rows compared by hash (one pass over each screen), then every shift counted on the hashes.
            func rowHashes(_ shot: (width: Int, height: Int, pixels: [UInt32])) -> [Int] {
                (0..<shot.height).map { y in
                    var hasher = Hasher()
                    for pixel in shot.pixels[(y * shot.width)..<((y + 1) * shot.width)] { hasher.combine(pixel) }
                    return hasher.finalize()
                }
            }
            // Only rows that show something count: blank rows (the glide can go past the rows drawn
            // before the stall) match each other at any shift.
            func showsContent(_ shot: (width: Int, height: Int, pixels: [UInt32]), row y: Int) -> Bool {
                Set(shot.pixels[(y * shot.width)..<((y + 1) * shot.width)]).count > 2
            }
            let beforeRows = rowHashes(before), afterRows = rowHashes(after)
            let afterShows = (0..<after.height).map { showsContent(after, row: $0) }
            func shiftedRows(by shift: Int) -> Int {
                (0..<(before.height - shift)).filter { y in
                    afterShows[y] && afterRows[y] == beforeRows[y + shift] && afterRows[y] != beforeRows[y]
                }.count
            }
            let best = stride(from: 1, to: before.height / 2, by: 1).max { shiftedRows(by: $0) < shiftedRows(by: $1) } ?? 0
            // Rows of text that match the old screen's at one shift are the list moved whole (a row of
            // pixels with text matches another by chance almost never); the glide can go past what was
            // drawn before the stall and leave only a few rows of chats on screen, so 40 rows of pixels
            // (two lines of text) are asked for, not a screenful.
            let together = shiftedRows(by: best)
            if best <= 144 || together < 40 {
                for (name, shot) in [("before", before), ("blocked", after)] {
                    try? Xvfb.writePNG(shot, to: outputFolder.appendingPathComponent("stall-shift-\(name).png").path)
                }
            }
            XCTAssertGreaterThanOrEqual(together, 40, "the rows moved up together (by \(best) pixels; "
                                        + "screens in \(outputFolder.path)/stall-shift-*.png)")
            XCTAssertGreaterThan(best, 144, "past the three wheel steps: the list glided on")
            XCTAssertTrue(gallery.read(until: "UI thread unblocked"), gallery.output)
            // The UI thread takes the list over where it rests on screen: for half a second after it
            // is back, every row the screen showed stays where it was (rows drawn only now fill in
            // what was blank: the glide went past what had been drawn before the stall).
            let watchEnd = Date().addingTimeInterval(0.5)
            while Date() < watchEnd {
                let taken = try XCTUnwrap(Xvfb.screenshot(display: display))
                var moved = 0, shown = 0
                for y in 0..<after.height where showsContent(after, row: y) {
                    shown += 1
                    if !taken.pixels[(y * after.width)..<((y + 1) * after.width)]
                        .elementsEqual(after.pixels[(y * after.width)..<((y + 1) * after.width)]) { moved += 1 }
                }
                if moved > 0 {
                    for (name, shot) in [("before", before), ("blocked", after), ("unblocked", taken)] {
                        try? Xvfb.writePNG(shot, to: outputFolder.appendingPathComponent("stall-\(name).png").path)
                    }
                }
                XCTAssertGreaterThan(shown, 100, "the resting screen showed rows")
                XCTAssertEqual(moved, 0, "the rows the screen showed stay where the compositor thread left them "
                               + "(screens in \(outputFolder.path)/stall-*.png): " + gallery.drainAvailable()
                               + " running: \(gallery.process.isRunning)")
                if moved > 0 { break }
            }
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = gallery.finish()
            XCTAssertEqual(status, 0, output)
        }
    }

}
