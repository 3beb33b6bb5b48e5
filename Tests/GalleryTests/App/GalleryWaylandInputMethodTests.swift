import Compositor
import Foundation
import Glibc
import TestSupport
import XCTest
@testable import gallery

/// An input method typing into the gallery's composer on Wayland, under a headless sway: a scripted
/// input method (`WaylandInputMethod/wayland_ime.c`, built here with `cc` from the protocols'
/// XML through `wayland-scanner`) speaks input-method-unstable-v2 on sway's seat, and sway relays
/// its composition and commit to SDL's text-input-v3 client in the gallery. The seat has no keyboard:
/// the input method makes a virtual one and Tab focuses the composer. The 60-byte composition arrives
/// whole, is drawn underlined (grim's pixels), the cursor rectangle SDL gives the compositor (its
/// `set_cursor_rectangle`, read from the gallery's protocol trace, `WAYLAND_DEBUG=client`) is the
/// caret's place in surface points, where the underline ends on the screen, at the output's scale 1
/// and 2; a commit lands in the composer, a commit with a new composition keeps both (commit first,
/// as text-input-v3 has it), and the focus moving away deactivates the input method.
///
/// sway 1.7 (Debian's) gives an input method's popup surface no `text_input_rectangle` (popups
/// came in sway 1.9): the rectangle is checked where SDL sends it, on the wire to the compositor.
@MainActor
final class GalleryWaylandInputMethodTests: XCTestCase {
    private static var sharedSway: HeadlessWayland?
    /// The scripted input method, built once for the class.
    private static var inputMethodBinary: String?

    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder.deletingLastPathComponent().appendingPathComponent("wayland") }

    /// 60 bytes of UTF-8: twenty kana.
    private let sixtyBytes = "にほんごのにゅうりょくをためすためのなが"
    /// The commit: 54 bytes, which SDL sends as two text events.
    private let committed = "日本語の入力を試すための長い文章です"

    override class func tearDown() {
        MainActor.assumeIsolated {
            sharedSway?.stop()
            sharedSway = nil
            if let binary = inputMethodBinary {
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: binary).deletingLastPathComponent())
            }
            inputMethodBinary = nil
        }
        super.tearDown()
    }

    private func sway() throws -> HeadlessWayland {
        if let sway = Self.sharedSway { return sway }
        let sway = try HeadlessWayland(.sway)
        Self.sharedSway = sway
        return sway
    }

    /// Builds the scripted input method into a temporary folder (once): the protocols' code from
    /// wayland-scanner, then cc against libwayland-client and libxkbcommon.
    /// - Throws: `XCTSkip` when the tools or headers are not installed; an error when the build fails.
    private func inputMethod() throws -> String {
        if let binary = Self.inputMethodBinary { return binary }
        guard let scanner = Xvfb.which("wayland-scanner") else {
            throw XCTSkip("wayland-scanner is not installed (make test installs libwayland-bin)")
        }
        guard let cc = Xvfb.which("cc") else { throw XCTSkip("cc is not installed (make test installs gcc)") }
        for header in ["/usr/include/wayland-client.h", "/usr/include/xkbcommon/xkbcommon.h"]
        where !FileManager.default.fileExists(atPath: header) {
            throw XCTSkip("\(header) is not installed (make test installs libwayland-dev and libxkbcommon-dev)")
        }
        let source = GoldenImage.repositoryRoot.appendingPathComponent("Tests/GalleryTests/App/WaylandInputMethod")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-wayland-ime-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sources = [source.appendingPathComponent("wayland_ime.c").path]
        for proto in ["input-method-unstable-v2", "virtual-keyboard-unstable-v1"] {
            let xml = source.appendingPathComponent("\(proto).xml").path
            for (kind, name) in [("client-header", "\(proto)-client-protocol.h"), ("private-code", "\(proto)-protocol.c")] {
                let (status, output) = try GalleryProcess.run(scanner, [kind, xml, folder.appendingPathComponent(name).path],
                                                              environment: [:])
                guard status == 0 else { throw GalleryWindowError(what: "wayland-scanner \(kind) \(proto): \(output)") }
            }
            sources.append(folder.appendingPathComponent("\(proto)-protocol.c").path)
        }
        let binary = folder.appendingPathComponent("wayland_ime").path
        let (status, output) = try GalleryProcess.run(
            cc, ["-std=c11", "-Wall", "-Werror", "-I", folder.path, "-o", binary] + sources + ["-lwayland-client", "-lxkbcommon"],
            environment: [:])
        guard status == 0 else { throw GalleryWindowError(what: "the input method did not build: \(output)") }
        Self.inputMethodBinary = binary
        return binary
    }

    /// Waits until a whole line written by `process` after `mark` (a count of characters of its
    /// output) satisfies `match`; returns it, nil after `seconds` or when the process ended.
    private func line(of process: GalleryProcess, after mark: Int, within seconds: Double = 20,
                      where match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let tail = process.drainAvailable().dropFirst(mark)
            let complete = tail.lastIndex(of: "\n").map { tail[..<$0] } ?? ""
            if let found = complete.split(separator: "\n").first(where: { match(String($0)) }) { return String(found) }
            if !process.process.isRunning { return nil }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    private func line(of process: GalleryProcess, after mark: Int, within seconds: Double = 20, containing text: String) -> String? {
        line(of: process, after: mark, within: seconds) { $0.contains(text) }
    }

    /// Waits until the protocol trace (the file the gallery's standard error goes to) has a line after
    /// `mark` (a count of its bytes) that satisfies `match`; returns it, nil after 20 s.
    private func traceLine(_ trace: URL, after mark: Int, where match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(20)
        repeat {
            let text = String(decoding: (try? Data(contentsOf: trace))?.dropFirst(mark) ?? Data(), as: UTF8.self)
            let complete = text.lastIndex(of: "\n").map { text[..<$0] } ?? ""
            if let found = complete.split(separator: "\n").last(where: { match(String($0)) }) { return String(found) }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    private func traceSize(_ trace: URL) -> Int { (try? Data(contentsOf: trace))?.count ?? 0 }

    /// "x,y w×h" after " at " in a line of the gallery's, as a rectangle.
    private func rect(in line: String) -> Rect? {
        guard let at = line.range(of: " at ") else { return nil }
        let fields = line[at.upperBound...].split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count >= 2, let x = Double(fields[0]) else { return nil }
        let rest = fields[1].split(separator: " ")
        guard rest.count >= 2, let y = Double(rest[0]) else { return nil }
        let size = rest[1].split(separator: "×")
        guard size.count == 2, let width = Double(size[0]), let height = Double(size[1]) else { return nil }
        return Rect(x: x, y: y, width: width, height: height)
    }

    /// The caret the gallery said last, after `mark`.
    private func lastCaret(of gallery: GalleryProcess, after mark: Int) -> Rect? {
        let lines = gallery.drainAvailable().dropFirst(mark).split(separator: "\n")
        return lines.last { $0.contains("gallery: text input caret at ") }.flatMap { rect(in: String($0)) }
    }

    /// The caret in whole surface points, as SDL sends it: `set_cursor_rectangle(x, y, w, h)`.
    private func cursorRectangle(_ caret: Rect) -> String {
        "set_cursor_rectangle(\(Int(caret.minX.rounded())), \(Int(caret.minY.rounded())), "
            + "\(Int(caret.width.rounded())), \(Int(caret.height.rounded())))"
    }

    private static func isDark(_ pixel: UInt32) -> Bool {
        max((pixel >> 16) & 0xFF, (pixel >> 8) & 0xFF, pixel & 0xFF) < 0x80
    }

    /// The longest run of dark pixels along one row inside `area` (pixels of `shot`), as its row
    /// and columns; nil when none is `minimum` long.
    private func underline(in shot: Bitmap, area: (x: Range<Int>, y: Range<Int>), minimum: Int) -> (y: Int, x: ClosedRange<Int>)? {
        let pixels = shot.pixels
        var best: (y: Int, x: ClosedRange<Int>)?
        for y in area.y where y >= 0 && y < shot.height {
            var start: Int?
            for x in area.x.lowerBound...area.x.upperBound {
                let dark = x < area.x.upperBound && x < shot.width && Self.isDark(pixels[y * shot.width + x])
                if dark, start == nil { start = x }
                if !dark, let first = start {
                    if x - first >= minimum, (best.map { x - first > $0.x.count } ?? true) { best = (y, first...(x - 1)) }
                    start = nil
                }
            }
        }
        return best
    }

    /// Pixels of a colour that is neither grey nor white nor black (a highlight) in `area`.
    private static func tinted(in shot: Bitmap, area: (x: Range<Int>, y: Range<Int>)) -> Int {
        let pixels = shot.pixels
        var count = 0
        for y in area.y where y >= 0 && y < shot.height {
            for x in area.x where x >= 0 && x < shot.width {
                let pixel = pixels[y * shot.width + x]
                let channels = [(pixel >> 16) & 0xFF, (pixel >> 8) & 0xFF, pixel & 0xFF]
                if channels.max()! - channels.min()! > 24 { count += 1 }
            }
        }
        return count
    }

    /// The gallery's window as grim captures it (the output's pixels), written to `file`, taken again
    /// until `done` says it shows what is awaited (at most 20 s); the last capture.
    private func capture(_ sway: HeadlessWayland, grim: String, to file: String, until done: (Bitmap) -> Bool) throws -> Bitmap {
        var shot: Bitmap?
        let deadline = Date().addingTimeInterval(20)
        repeat {
            guard let window = try sway.windowRect(title: "Tessera gallery") else { continue }
            let geometry = "\(window.x),\(window.y) \(window.width)x\(window.height)"
            let (status, output) = try GalleryProcess.run(grim, ["-g", geometry, file], environment: sway.environment)
            XCTAssertEqual(status, 0, output)
            let next = try Bitmap(contentsOfFile: file)
            shot = next
            if done(next) { break }
        } while Date() < deadline
        return try XCTUnwrap(shot, "the gallery's window is in sway's tree: \(sway.output)")
    }

    /// Starts the gallery on sway's thread screen, saying what its text input does, its protocol trace
    /// (`WAYLAND_DEBUG=client`, its standard error) written to `trace`; waits until its screen is ready.
    /// The caller ends it.
    private func startGallery(_ sway: HeadlessWayland, trace: URL) throws -> GalleryProcess {
        try? FileManager.default.removeItem(at: trace)
        let arguments = ["--screen", "thread", "--frames", "36000", "--report-text-input"] + GalleryProcess.assetsArguments
        let gallery = try GalleryProcess(
            "/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>\"$TESSERA_TRACE\"", galleryBinary.path] + arguments,
            environment: sway.environment.merging(["WAYLAND_DEBUG": "client", "TESSERA_TRACE": trace.path,
                                                   "TESSERA_APPEARANCE": "light"]) { $1 })
        guard gallery.read(until: "screen ready") else {
            gallery.process.terminate()
            throw GalleryWindowError(what: "the gallery did not start on Wayland: \(gallery.output) \(sway.output)")
        }
        return gallery
    }

    /// Presses Tab on `keyboard` (the scripted input method's virtual keyboard) until the gallery says
    /// its composer has the focus (six at most); a failure when it does not.
    private func focusComposer(_ gallery: GalleryProcess, keyboard: GalleryProcess, file: StaticString = #filePath, line: UInt = #line) {
        let mark = gallery.output.count
        var focused: String?
        for _ in 0..<6 where focused == nil {
            keyboard.writeLine("key 15")
            focused = self.line(of: gallery, after: mark, within: 3) { $0.contains("gallery: composer at ") && $0.hasSuffix(", focused") }
        }
        XCTAssertNotNil(focused, "Tab focused the composer: \(gallery.output)", file: file, line: line)
    }

    /// The scripted input method composes 60 bytes into the composer and commits, the output at
    /// `scale`; see the class's comment.
    private func composeAndCommit(scale: Int) throws {
        guard let grim = Xvfb.which("grim") else { throw XCTSkip("grim is not installed (make test installs it)") }
        let binary = try inputMethod()
        let sway = try sway()
        try sway.setScale(scale)
        XCTAssertEqual(sixtyBytes.utf8.count, 60)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        // A command written to an input method that died fails the test instead of ending the run.
        signal(SIGPIPE, SIG_IGN)

        let ime = try GalleryProcess(binary, [], environment: sway.environment)
        defer { if ime.process.isRunning { ime.process.terminate(); _ = ime.finish() } }
        XCTAssertNotNil(line(of: ime, after: 0, containing: "ready"), "the input method started: \(ime.output)")

        let trace = outputFolder.appendingPathComponent("ime-scale\(scale)-trace.txt")
        let gallery = try startGallery(sway, trace: trace)
        defer { if gallery.process.isRunning { gallery.process.terminate(); _ = gallery.finish() } }
        let composer = try XCTUnwrap(line(of: gallery, after: 0, containing: "gallery: composer at ").flatMap(rect(in:)),
                                     gallery.output)
        // sway gives the text input its enter with the seat's focus alone, with no keyboard on the seat;
        // the input method stays inactive while no field takes text.
        XCTAssertNotNil(traceLine(trace, after: 0) { $0.contains("zwp_text_input_v3@") && $0.contains(".enter(wl_surface@") },
                        "the text input entered the window with the seat's focus")
        XCTAssertNil(ime.drainAvailable().split(separator: "\n").first { $0 == "activate" }, ime.output)

        // A keyboard on the seat; Tab until the composer has the focus: the input method is activated.
        var mark = gallery.output.count, imeMark = ime.output.count
        ime.writeLine("keyboard")
        XCTAssertNotNil(line(of: ime, after: imeMark) { $0 == "keyboard" }, ime.output)
        focusComposer(gallery, keyboard: ime)
        XCTAssertNotNil(line(of: ime, after: imeMark) { $0 == "activate" }, "sway activated the input method: \(ime.output)")
        let typedCaret = try XCTUnwrap(lastCaret(of: gallery, after: mark), gallery.output)
        XCTAssertNotNil(traceLine(trace, after: 0) { $0.contains(cursorRectangle(typedCaret)) },
                        "the cursor rectangle at the caret in the empty composer (\(typedCaret))")

        // The 60-byte composition, its cursor at its end: it arrives whole.
        mark = gallery.output.count; imeMark = ime.output.count
        let traceMark = traceSize(trace)
        ime.writeLine("preedit 60 60 \(sixtyBytes)")
        XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composition \"\(sixtyBytes)\""),
                        "the whole composition arrived: \(gallery.output)")
        // The caret moves right by the composition's width; SDL tells the compositor where.
        var caret: Rect?
        let placed = traceLine(trace, after: traceMark) { line in
            guard let now = self.lastCaret(of: gallery, after: mark), now.minX > typedCaret.minX + 100 else { return false }
            caret = now
            return line.contains(self.cursorRectangle(now))
        }
        XCTAssertNotNil(placed, "the cursor rectangle at the caret after the composition (\(String(describing: caret)))")
        let composedCaret = try XCTUnwrap(caret)
        XCTAssertEqual(composedCaret.minY, typedCaret.minY, "one line")

        // On the screen (grim, the output's pixels): the underline runs from where the caret was to
        // where it is, the cursor rectangle's place, under glyphs.
        let s = Double(scale)
        let area = (x: Int(composer.minX * s)..<Int(composer.maxX * s), y: Int(composer.minY * s)..<Int((composer.maxY + 4) * s))
        let shotFile = outputFolder.appendingPathComponent("ime-preedit-scale\(scale).png").path
        var found: (y: Int, x: ClosedRange<Int>)?
        let shot = try capture(sway, grim: grim, to: shotFile) { shot in
            found = underline(in: shot, area: area, minimum: 200 * scale)
            return found != nil
        }
        let line = try XCTUnwrap(found, "an underline under the composition in \(shotFile)")
        XCTAssertEqual(shot.width, Int(GalleryOptions().size.width * s), "the window's pixels at the output's scale")
        XCTAssertEqual(Double(line.x.lowerBound), typedCaret.midX * s, accuracy: 4 * s, "it starts where the caret was")
        XCTAssertEqual(Double(line.x.upperBound), composedCaret.midX * s, accuracy: 4 * s,
                       "it ends at the caret, where the cursor rectangle is")
        let glyphs = shot, pixels = glyphs.pixels
        var ink = 0
        for y in Int(composer.minY * s)..<line.y - 1 {
            for column in line.x where Self.isDark(pixels[y * glyphs.width + column]) { ink += 1 }
        }
        XCTAssertGreaterThan(ink, 20 * 25 * scale * scale, "twenty glyphs drawn over the underline (dark pixels: \(ink))")

        // The input method's selection (bytes 6 to 12: two kana) is drawn highlighted; the caret, and
        // the cursor rectangle with it, is at its start.
        mark = gallery.output.count
        let plainTint = Self.tinted(in: glyphs, area: area)
        ime.writeLine("preedit 6 12 とうきょうえき")
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composition \"とうきょうえき\""), gallery.output)
        var tint = plainTint
        _ = try capture(sway, grim: grim, to: outputFolder.appendingPathComponent("ime-selection-scale\(scale).png").path) { shot in
            tint = Self.tinted(in: shot, area: area)
            return tint >= plainTint + 200 * scale * scale
        }
        XCTAssertGreaterThanOrEqual(tint, plainTint + 200 * scale * scale, "the selection's highlight behind two kana")
        var selectionCaret: Rect?
        XCTAssertNotNil(traceLine(trace, after: 0) { line in
            guard let now = self.lastCaret(of: gallery, after: mark), now.minX < composedCaret.minX - 100 else { return false }
            selectionCaret = now
            return line.contains(self.cursorRectangle(now))
        }, "the cursor rectangle at the selection's start (\(String(describing: selectionCaret)))")
        XCTAssertGreaterThan(try XCTUnwrap(selectionCaret).minX, typedCaret.minX + 10, "two kana in")

        // A commit and a new composition in one: text-input-v3 replaces the composition with the
        // commit, then composes after it (SDL 2.26 sends the composition's event first).
        mark = gallery.output.count
        ime.writeLine("compose 東京 えき")
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composer text \"東京\""), gallery.output)
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composition \"えき\""),
                        "the composition after the commit stays: \(gallery.output.dropFirst(mark))")

        // The commit (two of SDL's text events) replaces the composition.
        mark = gallery.output.count
        ime.writeLine("commit \(committed)")
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composer text \"東京\(committed)\""), gallery.output)
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: no composition"), gallery.output)

        // Tab takes the focus away: text input goes off and sway deactivates the input method.
        mark = gallery.output.count; imeMark = ime.output.count
        ime.writeLine("key 15")
        XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: text input off"), gallery.output)
        XCTAssertNotNil(self.line(of: ime, after: imeMark) { $0 == "deactivate" }, "the input method was deactivated: \(ime.output)")
        // The input method's popup surface was told nothing on sway 1.7 (see the class's comment).
        if let rectangle = ime.drainAvailable().split(separator: "\n").first(where: { $0.hasPrefix("rectangle ") }) {
            print("the compositor gave the input method's popup: \(rectangle)")
        }

        gallery.process.terminate()
        _ = gallery.finish()
        ime.writeLine("quit")
        let (status, output) = ime.finish()
        XCTAssertEqual(status, 0, output)
        XCTAssertFalse(output.contains("error"), output)
    }

    /// At the output's scale 1: see the class's comment.
    func testAScriptedInputMethodComposesAndCommitsIntoTheComposerAtScale1() async throws {
        try composeAndCommit(scale: 1)
    }

    /// At the output's scale 2 the window draws twice the pixels, and the cursor rectangle stays in
    /// surface points (the caret's place, not twice it).
    func testAtScale2TheCursorRectangleIsInSurfacePoints() async throws {
        try composeAndCommit(scale: 2)
    }

    /// Debian's real fcitx5, its Wayland input method frontend on sway's seat: it takes the seat's
    /// keyboard (the scripted keyboard's keys, US international: a dead acute), leaves plain keys to
    /// the gallery, composes the dead key (its preedit "´" shown in the composer) and commits "é"
    /// through text-input-v3. The keyboard is on the seat before the gallery starts: the text input
    /// SDL turns on as its video starts is off again before any key.
    func testTypingThroughARealFcitx5OnWayland() async throws {
        guard let fcitx5 = Xvfb.which("fcitx5") else { throw XCTSkip("fcitx5 is not installed (make test installs it)") }
        let binary = try inputMethod()
        let sway = try sway()
        try sway.setScale(1)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        signal(SIGPIPE, SIG_IGN)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-wayland-fcitx-\(getpid())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        // No session bus: fcitx5's D-Bus addons are off; its Wayland frontend is the only one.
        let ime = try GalleryProcess(
            fcitx5, ["--disable=x11,xim,dbus,dbusfrontend,ibusfrontend,fcitx4frontend,notificationitem,kimpanel",
                     "--verbose=waylandim=5"],
            environment: sway.environment.merging(["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config",
                                                   "XDG_DATA_HOME": home.path + "/.local/share",
                                                   "DBUS_SESSION_BUS_ADDRESS": "", "DISPLAY": ""]) { $1 })
        defer { if ime.process.isRunning { ime.process.terminate(); _ = ime.finish() } }
        XCTAssertNotNil(line(of: ime, after: 0, containing: "INIT IM V2"), "fcitx5 made its input method: \(ime.output)")

        let keyboard = try GalleryProcess(binary, ["keyboard-only"], environment: sway.environment.merging(
            ["XKB_DEFAULT_LAYOUT": "us", "XKB_DEFAULT_VARIANT": "intl"]) { $1 })
        defer { if keyboard.process.isRunning { keyboard.process.terminate(); _ = keyboard.finish() } }
        XCTAssertNotNil(line(of: keyboard, after: 0) { $0 == "ready" }, "the keyboard was made: \(keyboard.output)")

        let trace = outputFolder.appendingPathComponent("fcitx5-trace.txt")
        let gallery = try startGallery(sway, trace: trace)
        defer { if gallery.process.isRunning { gallery.process.terminate(); _ = gallery.finish() } }
        // With a keyboard on the seat SDL turns text input on as video starts; no field takes text:
        // off again once the window settles, before any key.
        XCTAssertNotNil(traceLine(trace, after: 0) { $0.contains("zwp_text_input_v3@") && $0.hasSuffix(".disable()") },
                        "text input SDL turned on at start is off")
        XCTAssertTrue(gallery.output.contains("gallery: text input off"), gallery.output)
        var imeMark = ime.output.count
        focusComposer(gallery, keyboard: keyboard)
        XCTAssertNotNil(line(of: ime, after: imeMark, containing: "ACTIVATE"), "sway activated fcitx5: \(ime.output)")

        // h, i: fcitx5 leaves them to the gallery (its own virtual keyboard's keys).
        var mark = gallery.output.count
        imeMark = ime.output.count
        keyboard.writeLine("key 35")
        keyboard.writeLine("key 23")
        XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composer text \"hi\""), gallery.output)
        XCTAssertNotNil(line(of: ime, after: imeMark) { $0.contains("] h IsRelease=0") }, "fcitx5 saw the keys first: \(ime.output)")

        // The dead acute: fcitx5 composes; the e: it commits é.
        mark = gallery.output.count
        keyboard.writeLine("key 40")
        XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composition \"´\""), gallery.output)
        XCTAssertNotNil(traceLine(trace, after: 0) { $0.contains("preedit_string(\"´\"") }, "fcitx5's preedit through text-input-v3")
        mark = gallery.output.count
        keyboard.writeLine("key 18")
        XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composer text \"hié\""), gallery.output)
        XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: no composition"), gallery.output)
        XCTAssertNotNil(traceLine(trace, after: 0) { $0.contains("commit_string(\"é\")") }, "fcitx5's commit through text-input-v3")

        gallery.process.terminate()
        _ = gallery.finish()
        keyboard.writeLine("quit")
        XCTAssertEqual(keyboard.finish().status, 0, keyboard.output)
    }
}
