import Compositor
import Foundation
import Glibc
import TestSupport
import XCTest
@testable import gallery

/// The gallery's window moved between two outputs of different scale under a headless sway
/// (HEADLESS-1 at scale 1, HEADLESS-2 beside it at scale 2): it notices the new scale (SDL's Wayland
/// driver resizes its drawable as the surface enters the other output), redraws at it, and grim's
/// capture of its window on each output equals the headless render at that output's scale, with
/// OpenGL and with the software renderer, drawn on a compositor thread or on the UI thread; and no
/// frame it presents across the moves lacks the screen's content or is an old frame stretched: the
/// first present at a new scale is drawn whole at the new drawable size, and none at the old size
/// follows it.
@MainActor
final class GalleryWaylandOutputScaleTests: XCTestCase {
    private static var sharedSway: HeadlessWayland?
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder.deletingLastPathComponent().appendingPathComponent("wayland") }
    private let arguments = ["--screen", "chats", "--rows", "200"] + GalleryProcess.assetsArguments
    private let title = "Tessera gallery"

    /// The class's sway with a second output, HEADLESS-2, at x 1280 beside HEADLESS-1 (1280×800 at
    /// scale 1).
    private func sway() throws -> HeadlessWayland {
        if let sway = Self.sharedSway { return sway }
        let sway = try HeadlessWayland(.sway)
        Self.sharedSway = sway
        try sway.message(["create_output"])
        try sway.message(["output", "HEADLESS-1", "resolution", "1280x800", "position", "0", "0", "scale", "1"])
        let outputs = try sway.message(["-t", "get_outputs"])
        guard outputs.contains("HEADLESS-2") else { throw GalleryWindowError(what: "sway made no second output: \(outputs)") }
        return sway
    }

    /// Sets HEADLESS-2's scale, its size kept at 1280×800 layout points beside HEADLESS-1.
    private func setSecondOutputScale(_ scale: Int, _ sway: HeadlessWayland) throws {
        try sway.message(["output", "HEADLESS-2", "resolution", "\(1280 * scale)x\(800 * scale)", "position", "1280", "0",
                          "scale", "\(scale)"])
    }

    override class func tearDown() {
        MainActor.assumeIsolated {
            sharedSway?.stop()
            sharedSway = nil
        }
        super.tearDown()
    }

    private func differingFraction(_ a: Bitmap, _ b: Bitmap) -> Double {
        guard a.width == b.width && a.height == b.height else { return 1 }
        return Double(GoldenImage.compare(a, b, tolerance: 24).0.differingPixels) / Double(a.width * a.height)
    }

    /// The headless render of the gallery at `scale`, written as `<name>-headless-<scale>x.png`.
    private func headless(scale: Int, name: String) throws -> Bitmap {
        let path = outputFolder.appendingPathComponent("\(name)-headless-\(scale)x.png").path
        let (status, output) = try GalleryProcess.run(
            galleryBinary.path, arguments + ["--headless", "--scale", "\(scale)", "--frames", "5", "--screenshot", path],
            environment: [:])
        XCTAssertEqual(status, 0, output)
        return try Bitmap(contentsOfFile: path)
    }

    /// grim's capture of the gallery's window, taken again until it equals `expected` drawn at
    /// `scale`, its menu bar too (or at the 15 s deadline); written as `<name>.png`.
    private func captureWindow(_ sway: HeadlessWayland, matching expected: Bitmap, scale: Int, name: String) throws -> Bitmap {
        guard let grim = Xvfb.which("grim") else { throw XCTSkip("grim is not installed (make test installs it)") }
        let path = outputFolder.appendingPathComponent("\(name).png").path
        var window: Bitmap?
        let deadline = Date().addingTimeInterval(15)
        repeat {
            if let rect = try sway.windowRect(title: title) {
                let (status, output) = try GalleryProcess.run(
                    grim, ["-g", "\(rect.x),\(rect.y) \(rect.width)x\(rect.height)", path], environment: sway.environment)
                XCTAssertEqual(status, 0, output)
                let shot = try Bitmap(contentsOfFile: path)
                window = shot
                if differingFraction(shot, expected) < Self.allowedDifference,
                   let bar = try? top(shot, points: 30, scale: scale), let expectedBar = try? top(expected, points: 30, scale: scale),
                   differingFraction(bar, expectedBar) < Self.allowedMenuBarDifference { break }
            }
            usleep(100_000)
        } while Date() < deadline
        return try XCTUnwrap(window, "the gallery's window is in sway's tree: " + sway.output)
    }

    /// The share of a capture's pixels that may differ from the headless render (by more than 24 a
    /// channel), as `GalleryWaylandTests` has it: a picture scaled up from window units differs at
    /// every text edge; the renderers' own rounding differs in a sliver.
    private static let allowedDifference = 0.01
    /// The share of the menu bar's pixels that may differ: left at the old scale, its titles differ
    /// in 1.7% of them.
    private static let allowedMenuBarDifference = 0.002

    /// The top `points` of `bitmap` (at `scale` pixels per point).
    private func top(_ bitmap: Bitmap, points: Int, scale: Int) throws -> Bitmap {
        let height = min(bitmap.height, points * scale)
        return try Bitmap(width: bitmap.width, height: height, premultipliedARGB: Array(bitmap.pixels.prefix(bitmap.width * height)))
    }

    /// `window` equals `expected` but for `allowedDifference` of its pixels (tolerance 24 a channel),
    /// and its menu bar (outside the root's tree) but for `allowedMenuBarDifference` of its own; the
    /// differences are written as `<name>-diff.png`.
    private func assertMatches(_ window: Bitmap, _ expected: Bitmap, _ name: String, scale: Int,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(window.width, expected.width, "\(name): the drawable is the output's scale × the window", file: file, line: line)
        XCTAssertEqual(window.height, expected.height, name, file: file, line: line)
        guard window.width == expected.width && window.height == expected.height else { return }
        XCTAssertGreaterThan(Set(window.pixels.prefix(200_000)).count, 200, "\(name): the window is not blank", file: file, line: line)
        let (difference, diff) = GoldenImage.compare(window, expected, tolerance: 24)
        let diffFile = outputFolder.appendingPathComponent("\(name)-diff.png").path
        try? FileManager.default.removeItem(atPath: diffFile)
        if difference.differingPixels > 0, let diff { try? diff.writePNG(to: diffFile) }
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), Self.allowedDifference,
                          "\(name): \(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))",
                          file: file, line: line)
        let bar = try top(window, points: 30, scale: scale)
        let (barDifference, _) = GoldenImage.compare(bar, try top(expected, points: 30, scale: scale), tolerance: 24)
        XCTAssertLessThan(Double(barDifference.differingPixels) / Double(bar.width * bar.height), Self.allowedMenuBarDifference,
                          "\(name): the menu bar is drawn at the window's scale (\(barDifference.differingPixels) pixels differ)",
                          file: file, line: line)
    }

    /// The output sway has the gallery's window on.
    private func outputOfWindow(_ sway: HeadlessWayland) throws -> String? {
        let tree = try JSONSerialization.jsonObject(with: Data(sway.message(["-t", "get_tree"]).utf8))
        func find(_ node: Any, output: String?) -> String? {
            guard let node = node as? [String: Any] else { return nil }
            let output = node["type"] as? String == "output" ? node["name"] as? String : output
            if node["name"] as? String == title, node["pid"] != nil { return output }
            for key in ["nodes", "floating_nodes"] {
                for child in node[key] as? [Any] ?? [] { if let found = find(child, output: output) { return found } }
            }
            return nil
        }
        return find(tree, output: nil)
    }

    /// The "gallery: presented …" lines of `output`.
    private func presents(in output: String) -> [String] {
        output.split(separator: "\n").filter { $0.hasPrefix("gallery: presented") }.map(String.init)
    }

    /// The layers a "gallery: presented …, N layers" line says were drawn.
    private func layerCount(_ line: String) -> Int {
        line.split(separator: " ").dropLast().last.flatMap { Int($0) } ?? 0
    }

    /// Starts the gallery with `renderer` on HEADLESS-1 while both outputs are at scale 1 (its window
    /// made at 1x), turns HEADLESS-2 to scale 2, moves the window there and back, and checks each
    /// output's capture against the headless render at its scale, and the frames presented across
    /// each move.
    private func moveAcrossScales(renderer: String, compositorThread: Bool = true) throws {
        let sway = try sway()
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let name = "chats-move-\(renderer)" + (compositorThread ? "" : "-ui-thread")
        let at1 = try headless(scale: 1, name: name), at2 = try headless(scale: 2, name: name)
        try setSecondOutputScale(1, sway)
        try sway.message(["focus", "output", "HEADLESS-1"])
        let gallery = try GalleryProcess(galleryBinary.path, arguments + ["--renderer", renderer, "--frames", "36000",
                                                                         "--report-presents"]
                                                             + (compositorThread ? [] : ["--no-compositor-thread"]),
                                         environment: sway.environment)
        // The reads below wait for lines: a gallery that never says them is ended, which ends the wait.
        // (Under ThreadSanitizer the two moves, each captured until it matches, have kept the gallery
        // running over 40 s: the limit only bounds a hang.)
        let watchdog = DispatchWorkItem { [process = gallery.process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        defer {
            watchdog.cancel()
            if gallery.process.isRunning { gallery.process.terminate(); _ = gallery.finish() }
        }
        guard gallery.read(until: "screen ready") else {
            throw GalleryWindowError(what: "the gallery did not start on Wayland: \(gallery.output)")
        }
        XCTAssertTrue(gallery.output.contains("renderer \(renderer), video driver wayland"), gallery.output)
        XCTAssertTrue(gallery.output.contains("at 1x (the window's)" + (compositorThread ? ", compositor thread" : "\n")),
                      gallery.output)
        try assertMatches(try captureWindow(sway, matching: at1, scale: 1, name: "\(name)-1-start"), at1, "\(name)-1-start", scale: 1)
        XCTAssertEqual(try outputOfWindow(sway), "HEADLESS-1")
        try setSecondOutputScale(2, sway)

        var moves: [(output: String, scale: Int)] = []
        var moveOffsets: [Int] = []
        for (output, scale, expected, step) in [("HEADLESS-2", 2, at2, "2"), ("HEADLESS-1", 1, at1, "1-back")] {
            let offset = gallery.output.count
            moveOffsets.append(offset)
            moves.append((output, scale))
            try sway.message(["[title=\"\(title)\"]", "move", "container", "to", "output", output])
            XCTAssertEqual(try outputOfWindow(sway), output)
            XCTAssertNotNil(gallery.readLine(containing: "gallery: scale \(scale)x", after: offset),
                            "the gallery notices the scale: " + gallery.output)
            let size = "\(960 * scale)×\(720 * scale)"
            XCTAssertNotNil(gallery.readLine(containing: "gallery: presented \(size)", after: offset),
                            "a frame at \(size) is presented: " + gallery.output)
            let window = try captureWindow(sway, matching: expected, scale: scale, name: "\(name)-\(step)")
            try assertMatches(window, expected, "\(name)-\(step)", scale: scale)
        }
        gallery.process.terminate()
        let (_, output) = gallery.finish()
        // The renderer is made anew only for the software renderer's pixel surface, once a move: larger
        // for the drawable of scale 2, smaller again (its memory given back) for the drawable of scale
        // 1; never frame after frame. OpenGL's renderer is never made anew.
        let resetsAfterEachMove = moveOffsets.indices.map { index -> Int in
            let end = index + 1 < moveOffsets.count ? moveOffsets[index + 1] : output.count
            let segment = output.dropFirst(moveOffsets[index]).prefix(end - moveOffsets[index])
            return segment.split(separator: "\n").filter { $0.hasPrefix("gallery: renderer reset") }.count
        }
        XCTAssertEqual(resetsAfterEachMove, moves.map { _ in renderer == "software" ? 1 : 0 },
                       "renderer resets after each move (\(moves.map(\.scale)))")
        // The frames presented, in order: their drawable size changes once per move (a frame at the
        // old size after one at the new would be a step back), the first at the new size is drawn
        // and sent whole, and every frame drawn whole after it draws about as many layers as the
        // screen's last before the move (a region drawn again draws only what is in it).
        let presented = presents(in: output)
        func size(_ line: String) -> String { String(line.split(separator: " ")[2]) }
        // Every frame is drawn at the scale of its drawable: never a layout of the old scale drawn
        // into the new drawable (a quarter of it filled, or four times it cut).
        for line in presented {
            let scale = line.split(separator: " ")[4].dropLast()
            XCTAssertTrue(["1": "960×720", "2": "1920×1440"][String(scale)] == size(line), "drawn at its drawable's scale: \(line)")
        }
        let changes = presented.indices.dropFirst().filter { size(presented[$0]) != size(presented[$0 - 1]) }
        XCTAssertEqual(changes.map { size(presented[$0]) }, moves.map { "\(960 * $0.scale)×\(720 * $0.scale)" },
                       "one change of size per move: \(presented.joined(separator: "; "))")
        for (index, change) in changes.enumerated() {
            let end = index + 1 < changes.count ? changes[index + 1] : presented.count
            let after = presented[change..<end]
            print("\(name): " + after.prefix(4).joined(separator: "; "))
            XCTAssertTrue(presented[change].contains(" whole") && !presented[change].contains(", sent"),
                          "the first frame at the new scale is drawn and sent whole: \(presented[change])")
            let usual = presented[..<change].last { $0.contains(" whole") }.map(layerCount) ?? 0
            XCTAssertGreaterThan(usual, 10, "the screen drew its content before the move: \(presented[..<change].suffix(3))")
            for line in after where line.contains(" whole") {
                XCTAssertGreaterThanOrEqual(layerCount(line), usual * 8 / 10, "no frame lacking the screen's content: \(line)")
            }
        }
    }

    /// OpenGL: the window moved to the scale-2 output redraws at scale 2 and back at scale 1.
    func testOpenGLRedrawsAtTheNewScaleOnAnotherOutput() async throws {
        try moveAcrossScales(renderer: "opengl")
    }

    /// OpenGL with the UI thread drawing (no compositor thread): the same.
    func testOnTheUIThreadOpenGLRedrawsAtTheNewScaleOnAnotherOutput() async throws {
        // Under the sanitizers the compositor-thread variant runs alone: its hand-off is what they
        // watch, and the drawing on either thread is the same code.
        if TestEnvironment.isSanitized { throw XCTSkip("the compositor-thread variant covers this under the sanitizers") }
        try moveAcrossScales(renderer: "opengl", compositorThread: false)
    }

    /// The software renderer: its drawable-sized surface is made anew at the new drawable size, larger
    /// on the output of scale 2 and smaller again back on the output of scale 1.
    func testTheSoftwareRendererRedrawsAtTheNewScaleOnAnotherOutput() async throws {
        try moveAcrossScales(renderer: "software")
    }

    /// The software renderer with the UI thread drawing: its surface made anew there.
    func testOnTheUIThreadTheSoftwareRendererRedrawsAtTheNewScaleOnAnotherOutput() async throws {
        // Under the sanitizers the compositor-thread variant runs alone: its hand-off is what they
        // watch, and the drawing on either thread is the same code.
        if TestEnvironment.isSanitized { throw XCTSkip("the compositor-thread variant covers this under the sanitizers") }
        try moveAcrossScales(renderer: "software", compositorThread: false)
    }
}
