import Compositor
import Foundation
import Glibc
import TestSupport
import XCTest
@testable import gallery

/// An input method typing into the gallery's composer through SDL's own fcitx client, in a window
/// under Xvfb: a scripted fcitx5 (`fake_fcitx.py`, the D-Bus service SDL 2.26 talks to) on a session
/// bus of the test's own sends a 60-byte composition and its commit. The composition is drawn in the
/// field (its underline and glyphs, on the screen's pixels) and arrives whole; the rectangle SDL gives
/// the input method for its candidate window (`SetCursorRect`, screen coordinates) is the caret's
/// place on the screen, and follows the window when it moves; the input method's selection is drawn;
/// the commit replaces the composition and one undo takes it back; moving the focus away resets the
/// input method and the field keeps what was composed.
@MainActor
final class GalleryInputMethodTests: XCTestCase {
    private let viewport = GalleryOptions().size
    private let python = "/usr/bin/python3"
    private var fake: String { GoldenImage.repositoryRoot.appendingPathComponent("Tests/GalleryTests/App/fake_fcitx.py").path }

    /// 60 bytes of UTF-8: twenty kana and kanji.
    private let sixtyBytes = "にほんごのにゅうりょくをためすためのなが"
    /// The commit: 54 bytes, which SDL sends as two text events.
    private let committed = "日本語の入力を試すための長い文章です"

    private nonisolated func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess.run(executable, arguments, environment: environment)
    }

    /// Waits until a whole line written by `process` after `mark` (a count of characters of its
    /// output) satisfies `match`; returns the first such line, nil after `seconds`.
    private func line(of process: GalleryProcess, after mark: Int, within seconds: Double = 20,
                      where match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let output = process.drainAvailable()
            // Whole lines only: up to the last line end.
            let tail = output.dropFirst(mark)
            let complete = tail.lastIndex(of: "\n").map { tail[..<$0] } ?? ""
            if let found = complete.split(separator: "\n").first(where: { match(String($0)) }) { return String(found) }
            if !process.process.isRunning { return nil }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    private func line(of process: GalleryProcess, after mark: Int, containing text: String) -> String? {
        line(of: process, after: mark) { $0.contains(text) }
    }

    /// "x,y w×h" at the end of a line of the gallery's, as numbers.
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
        return lines.last { $0.hasPrefix("gallery: text input caret at ") }.flatMap { rect(in: String($0)) }
    }

    /// The window's origin on the screen (X11 pixels).
    private func origin(of window: String, display: String, xdotool: String) throws -> (x: Int, y: Int) {
        let geometry = try run(xdotool, ["getwindowgeometry", "--shell", window], environment: ["DISPLAY": display]).output
        func value(_ name: String) -> Int? {
            geometry.split(separator: "\n").first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
        }
        return (try XCTUnwrap(value("X")), try XCTUnwrap(value("Y")))
    }

    /// Waits until the input method was given `caret` (window points, scale 1) placed in the window at
    /// `origin`, in screen coordinates as SDL computes them; returns the line, nil after 20 s.
    private func cursorRect(_ ime: GalleryProcess, after mark: Int, caret: Rect, origin: (x: Int, y: Int)) -> String? {
        let expected = "SetCursorRect \(origin.x + Int(caret.minX.rounded())) \(origin.y + Int(caret.minY.rounded())) "
            + "\(Int(caret.width.rounded())) \(Int(caret.height.rounded()))"
        return line(of: ime, after: mark) { $0 == expected }
    }

    /// A screenshot's underline under the composition: the longest run of dark pixels along one row
    /// inside `area` (screen pixels), as its row and columns; nil when there is no run of `minimum`.
    private func underline(in shot: (width: Int, height: Int, pixels: [UInt32]), area: (x: Range<Int>, y: Range<Int>),
                           minimum: Int) -> (y: Int, x: ClosedRange<Int>)? {
        var best: (y: Int, x: ClosedRange<Int>)?
        for y in area.y where y >= 0 && y < shot.height {
            var start: Int?
            for x in area.x.lowerBound...area.x.upperBound {
                let dark = x < area.x.upperBound && x < shot.width && Self.isDark(shot.pixels[y * shot.width + x])
                if dark, start == nil { start = x }
                if !dark, let first = start {
                    if x - first >= minimum, (best.map { x - first > $0.x.count } ?? true) { best = (y, first...(x - 1)) }
                    start = nil
                }
            }
        }
        return best
    }

    private static func channels(_ pixel: UInt32) -> (Int, Int, Int) {
        (Int((pixel >> 16) & 0xFF), Int((pixel >> 8) & 0xFF), Int(pixel & 0xFF))
    }

    private static func isDark(_ pixel: UInt32) -> Bool {
        let (r, g, b) = channels(pixel)
        return max(r, g, b) < 0x80
    }

    /// Pixels of a colour that is neither grey nor white nor black (a highlight) in `area`.
    private static func tinted(in shot: (width: Int, height: Int, pixels: [UInt32]), area: (x: Range<Int>, y: Range<Int>)) -> Int {
        var count = 0
        for y in area.y where y >= 0 && y < shot.height {
            for x in area.x where x >= 0 && x < shot.width {
                let (r, g, b) = channels(shot.pixels[y * shot.width + x])
                if max(r, g, b) - min(r, g, b) > 24 { count += 1 }
            }
        }
        return count
    }

    /// Waits (20 s at most) for the gallery to end after Ctrl+Q, ending it when it does not (a failure
    /// then); its status and output.
    private func quitted(_ gallery: GalleryProcess) -> (status: Int32, output: String) {
        let deadline = Date().addingTimeInterval(20)
        while gallery.process.isRunning && Date() < deadline {
            _ = gallery.drainAvailable()
            usleep(20_000)
        }
        if gallery.process.isRunning {
            XCTFail("the gallery did not quit: \(gallery.output)")
            gallery.process.terminate()
        }
        return gallery.finish()
    }

    /// A session bus of the test's own that starts no services (a folder of its own holds its
    /// socket): the running daemon, its address, and the folder, which the caller removes.
    private func sessionBus(display: String, daemon: String) throws -> (GalleryProcess, String, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-ime-\(getpid())-\(display.dropFirst())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let configuration = folder.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(folder.path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: configuration, atomically: true, encoding: .utf8)
        let bus = try GalleryProcess(daemon, ["--config-file=\(configuration.path)", "--nofork", "--print-address=1"], environment: [:])
        guard let address = line(of: bus, after: 0, containing: "unix:")?.trimmingCharacters(in: .whitespaces) else {
            bus.process.terminate()
            throw GalleryWindowError(what: "the session bus did not start: \(bus.output)")
        }
        return (bus, address, folder)
    }

    func testAScriptedFcitxComposesAndCommitsIntoTheComposer() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard Xvfb.which("xwd") != nil else { throw XCTSkip("xwd is not installed (make test installs x11-apps)") }
        guard let busDaemon = Xvfb.which("dbus-daemon") else { throw XCTSkip("dbus-daemon is not installed (make test installs dbus)") }
        guard try run(python, ["-c", "import dbus, dbus.service, dbus.mainloop.glib; from gi.repository import GLib"],
                      environment: [:]).status == 0 else {
            throw XCTSkip("python3-dbus or python3-gi is not installed (make test installs them)")
        }
        XCTAssertEqual(sixtyBytes.utf8.count, 60)
        try? FileManager.default.createDirectory(at: GalleryProcess.outputFolder, withIntermediateDirectories: true)
        // A command written to an input method that died fails the test instead of ending the run.
        signal(SIGPIPE, SIG_IGN)
        try Xvfb.withDisplay(numbers: 700..<800) { display in
            let x = ["DISPLAY": display]
            let (bus, address, folder) = try sessionBus(display: display, daemon: busDaemon)
            defer {
                if bus.process.isRunning { bus.process.terminate() }
                try? FileManager.default.removeItem(at: folder)
            }
            let session = ["DBUS_SESSION_BUS_ADDRESS": address]

            let ime = try GalleryProcess(python, [fake], environment: session)
            defer { if ime.process.isRunning { ime.process.terminate() } }
            XCTAssertNotNil(line(of: ime, after: 0, containing: "ready"), "the input method started: \(ime.output)")

            let (gallery, window) = try GalleryProcess.startInWindow(
                display: display, arguments: ["--screen", "thread", "--frames", "36000", "--report-text-input"],
                environment: session.merging(["TESSERA_APPEARANCE": "light", "SDL_IM_MODULE": "fcitx"]) { $1 }, xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            XCTAssertNotNil(line(of: ime, after: 0, containing: "CreateInputContext program="),
                            "SDL's fcitx client made its input context: \(ime.output)")
            let composer = try XCTUnwrap(line(of: gallery, after: 0, containing: "gallery: composer at ").flatMap(rect(in:)),
                                         gallery.output)
            var origin = try origin(of: window, display: display, xdotool: xdotool)

            // A click focuses the composer; keys go through the input method, which leaves them to SDL.
            var mark = gallery.output.count, imeMark = ime.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(composer.minX) + 20)", "\(Int(composer.midY))",
                                             "click", "1"], environment: x).status, 0)
            XCTAssertNotNil(line(of: gallery, after: mark) { $0.hasPrefix("gallery: composer at ") && $0.hasSuffix(", focused") },
                            gallery.output)
            XCTAssertEqual(try run(xdotool, ["type", "--delay", "30", "Hi"], environment: x).status, 0)
            XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composer text \"Hi\""), gallery.output)
            XCTAssertNotNil(line(of: ime, after: imeMark, containing: "ProcessKeyEvent"), "keys went to the input method first")
            let typedCaret = try XCTUnwrap(lastCaret(of: gallery, after: mark))
            XCTAssertNotNil(cursorRect(ime, after: imeMark, caret: typedCaret, origin: origin),
                            "the candidate window at the caret after typing: \(typedCaret) in \(origin): \(ime.output)")

            // The 60-byte composition, its caret at its end: it arrives whole and is drawn underlined.
            mark = gallery.output.count; imeMark = ime.output.count
            ime.writeLine("preedit 60 \(sixtyBytes)")
            XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composition \"\(sixtyBytes)\""),
                            "the whole composition arrived: \(gallery.output)")
            // The caret moves right by the composition's width; the input method is told where.
            var caret: Rect?
            let placed = line(of: ime, after: imeMark) { line in
                guard let now = self.lastCaret(of: gallery, after: mark), now.minX > typedCaret.minX + 100 else { return false }
                caret = now
                return line == "SetCursorRect \(origin.x + Int(now.minX.rounded())) \(origin.y + Int(now.minY.rounded())) "
                    + "\(Int(now.width.rounded())) \(Int(now.height.rounded()))"
            }
            XCTAssertNotNil(placed, "the candidate window at the caret after the composition (\(String(describing: caret))): \(ime.output)")
            let composedCaret = try XCTUnwrap(caret)
            XCTAssertEqual(composedCaret.minY, typedCaret.minY, "one line")

            // On the screen: the underline runs from where the caret was to where it is, under glyphs.
            let area = (x: (origin.x + Int(composer.minX))..<(origin.x + Int(composer.maxX)),
                        y: (origin.y + Int(composer.minY))..<(origin.y + Int(composer.maxY) + 4))
            var found: (y: Int, x: ClosedRange<Int>)?
            var shot: (width: Int, height: Int, pixels: [UInt32])?
            let deadline = Date().addingTimeInterval(20)
            while found == nil && Date() < deadline {
                shot = Xvfb.screenshot(display: display)
                if let shot { found = underline(in: shot, area: area, minimum: 200) }
            }
            if let shot { try? Xvfb.writePNG(shot, to: GalleryProcess.outputFolder.appendingPathComponent("ime-preedit.png").path) }
            let line = try XCTUnwrap(found, "an underline under the composition")
            XCTAssertEqual(Double(line.x.lowerBound), Double(origin.x) + typedCaret.midX, accuracy: 4, "it starts where the caret was")
            XCTAssertEqual(Double(line.x.upperBound), Double(origin.x) + composedCaret.midX, accuracy: 4,
                           "it ends at the caret, where the candidate window is")
            let glyphs = try XCTUnwrap(shot)
            var ink = 0
            for y in (origin.y + Int(composer.minY))..<line.y - 1 {
                for column in line.x where Self.isDark(glyphs.pixels[y * glyphs.width + column]) { ink += 1 }
            }
            XCTAssertGreaterThan(ink, 20 * 25, "twenty glyphs drawn over the underline (dark pixels: \(ink))")

            // The input method's selection (its highlighted segment) is drawn; its caret is its start.
            mark = gallery.output.count; imeMark = ime.output.count
            let plainTint = Self.tinted(in: glyphs, area: area)
            ime.writeLine("select 6 12 とうきょうえき")
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composition \"とうきょうえき\""), gallery.output)
            var tint = plainTint
            var selectionShot = glyphs
            let selectionDeadline = Date().addingTimeInterval(20)
            while tint < plainTint + 200 && Date() < selectionDeadline {
                guard let next = Xvfb.screenshot(display: display) else { continue }
                selectionShot = next
                tint = Self.tinted(in: next, area: area)
            }
            try? Xvfb.writePNG(selectionShot, to: GalleryProcess.outputFolder.appendingPathComponent("ime-selection.png").path)
            XCTAssertGreaterThanOrEqual(tint, plainTint + 200, "the selection's highlight behind two glyphs")

            // The commit (two of SDL's text events) replaces the composition; one undo takes it back.
            mark = gallery.output.count
            ime.writeLine("commit \(committed)")
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composer text \"Hi\(committed)\""), gallery.output)
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: no composition"), gallery.output)
            mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+z"], environment: x).status, 0)
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composer text \"Hi\""),
                            "one undo took the commit back whole: \(gallery.output.dropFirst(mark))")

            // The window moves: the candidate window follows (SDL places it again).
            mark = gallery.output.count
            ime.writeLine("preedit 9 ぺきん")
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composition \"ぺきん\""), gallery.output)
            var pekingCaret: Rect?
            _ = self.line(of: gallery, after: mark) { _ in
                pekingCaret = self.lastCaret(of: gallery, after: mark)
                return pekingCaret.map { $0.minX > typedCaret.minX + 20 } ?? false
            }
            let movedCaret = try XCTUnwrap(pekingCaret)
            imeMark = ime.output.count
            XCTAssertEqual(try run(xdotool, ["windowmove", window, "\(origin.x + 40)", "\(origin.y + 30)"], environment: x).status, 0)
            var moved = origin
            let moveDeadline = Date().addingTimeInterval(20)
            while moved == origin && Date() < moveDeadline { moved = try self.origin(of: window, display: display, xdotool: xdotool) }
            XCTAssertNotEqual(moved.x, origin.x)
            origin = moved
            XCTAssertNotNil(cursorRect(ime, after: imeMark, caret: movedCaret, origin: origin),
                            "the candidate window moved with the window to \(origin): \(ime.output.dropFirst(imeMark))")

            // Focus goes away (another tab): text input stops and the input method is reset; back on
            // the thread, the composer holds what was composed, and composes no more.
            mark = gallery.output.count; imeMark = ime.output.count
            let tabY = "\(Int(viewport.height) - 24)"
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(viewport.width) / 10)", tabY, "click", "1"],
                                   environment: x).status, 0)
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: text input off"), gallery.output)
            XCTAssertNotNil(self.line(of: ime, after: imeMark) { $0 == "Reset" }, "the input method was reset: \(ime.output)")
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(viewport.width) * 3 / 10)", tabY, "click", "1"],
                                   environment: x).status, 0)
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: composer text \"Hiぺきん\""), gallery.output)
            XCTAssertNotNil(self.line(of: gallery, after: mark, containing: "gallery: no composition"), gallery.output)

            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = quitted(gallery)
            XCTAssertEqual(status, 0, output)
            ime.writeLine("quit")
            XCTAssertEqual(ime.finish().status, 0, ime.output)
        }
    }

    /// At two window pixels a point (`--scale 2`) the rectangle given to the input method is the
    /// caret's in pixels: twice its place and size in points, from the window's origin.
    func testTheCandidateRectangleIsInWindowPixelsAtScaleTwo() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard let busDaemon = Xvfb.which("dbus-daemon") else { throw XCTSkip("dbus-daemon is not installed (make test installs dbus)") }
        guard try run(python, ["-c", "import dbus, dbus.service, dbus.mainloop.glib; from gi.repository import GLib"],
                      environment: [:]).status == 0 else {
            throw XCTSkip("python3-dbus or python3-gi is not installed (make test installs them)")
        }
        signal(SIGPIPE, SIG_IGN)
        try Xvfb.withDisplay(numbers: 700..<800, screen: "2560x1600x24") { display in
            let x = ["DISPLAY": display]
            let (bus, address, folder) = try sessionBus(display: display, daemon: busDaemon)
            defer {
                if bus.process.isRunning { bus.process.terminate() }
                try? FileManager.default.removeItem(at: folder)
            }
            let session = ["DBUS_SESSION_BUS_ADDRESS": address]
            let ime = try GalleryProcess(python, [fake], environment: session)
            defer { if ime.process.isRunning { ime.process.terminate() } }
            XCTAssertNotNil(line(of: ime, after: 0, containing: "ready"), "the input method started: \(ime.output)")
            let (gallery, window) = try GalleryProcess.startInWindow(
                display: display, arguments: ["--screen", "thread", "--frames", "36000", "--report-text-input", "--scale", "2"],
                environment: session.merging(["TESSERA_APPEARANCE": "light", "SDL_IM_MODULE": "fcitx"]) { $1 }, xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            let composer = try XCTUnwrap(line(of: gallery, after: 0, containing: "gallery: composer at ").flatMap(rect(in:)),
                                         gallery.output)
            let origin = try origin(of: window, display: display, xdotool: xdotool)
            let mark = gallery.output.count, imeMark = ime.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(composer.minX + 20) * 2)", "\(Int(composer.midY * 2))",
                                             "click", "1"], environment: x).status, 0)
            XCTAssertNotNil(line(of: gallery, after: mark) { $0.hasPrefix("gallery: composer at ") && $0.hasSuffix(", focused") },
                            gallery.output)
            ime.writeLine("preedit 9 ぺきん")
            XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composition \"ぺきん\""), gallery.output)
            var caret: Rect?
            let placed = line(of: ime, after: imeMark) { line in
                guard let now = self.lastCaret(of: gallery, after: mark), now.minX > composer.minX + 20 else { return false }
                caret = now
                return line == "SetCursorRect \(origin.x + Int((now.minX * 2).rounded())) \(origin.y + Int((now.minY * 2).rounded())) "
                    + "\(Int((now.width * 2).rounded())) \(Int((now.height * 2).rounded()))"
            }
            XCTAssertNotNil(placed, "the candidate rectangle at twice the caret (\(String(describing: caret))) from \(origin): \(ime.output)")
            // Committed first: while the input method composes, the field takes every key it leaves (Ctrl+Q too).
            ime.writeLine("commit 北京")
            XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composer text \"北京\""), gallery.output)
            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            XCTAssertEqual(quitted(gallery).status, 0, gallery.output)
        }
    }

    /// Debian's real fcitx5, headless on the test's bus and Xvfb: SDL's client makes its input context
    /// there (fcitx5 lists it, focused, for the gallery), and keys typed reach the composer through
    /// it, a dead key composing with the next (fcitx5 has no composing engine installed here, so no
    /// preedit of its own to check; the scripted input method above checks those).
    func testTypingThroughARealFcitx5() async throws {
        guard let xdotool = Xvfb.which("xdotool") else { throw XCTSkip("xdotool is not installed (make test installs it)") }
        guard let busDaemon = Xvfb.which("dbus-daemon") else { throw XCTSkip("dbus-daemon is not installed (make test installs dbus)") }
        guard let fcitx5 = Xvfb.which("fcitx5") else { throw XCTSkip("fcitx5 is not installed (make test installs it)") }
        guard try run(python, ["-c", "import dbus"], environment: [:]).status == 0 else {
            throw XCTSkip("python3-dbus is not installed (make test installs it)")
        }
        signal(SIGPIPE, SIG_IGN)
        try Xvfb.withDisplay(numbers: 700..<800) { display in
            let x = ["DISPLAY": display]
            let (bus, address, folder) = try sessionBus(display: display, daemon: busDaemon)
            defer {
                if bus.process.isRunning { bus.process.terminate() }
                try? FileManager.default.removeItem(at: folder)
            }
            let home = folder.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            let session = ["DBUS_SESSION_BUS_ADDRESS": address, "HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config",
                           "XDG_DATA_HOME": home.path + "/.local/share", "WAYLAND_DISPLAY": ""]
            let ime = try GalleryProcess(fcitx5, ["--disable=wayland"], environment: session.merging(x) { $1 })
            defer { if ime.process.isRunning { ime.process.terminate() } }
            // Up once it owns the portal's name SDL asks for.
            let owner = "import dbus, sys; print(dbus.SessionBus().name_has_owner('org.freedesktop.portal.Fcitx'))"
            var up = false
            let deadline = Date().addingTimeInterval(20)
            while !up && Date() < deadline && ime.process.isRunning {
                up = (try? run(python, ["-c", owner], environment: session))?.output.contains("True") ?? false
            }
            XCTAssertTrue(up, "fcitx5 started: \(ime.drainAvailable())")

            let (gallery, window) = try GalleryProcess.startInWindow(
                display: display, arguments: ["--screen", "thread", "--frames", "36000", "--report-text-input"],
                environment: session.merging(["TESSERA_APPEARANCE": "light", "SDL_IM_MODULE": "fcitx"]) { $1 }, xdotool: xdotool)
            defer { if gallery.process.isRunning { gallery.process.terminate() } }
            let composer = try XCTUnwrap(line(of: gallery, after: 0, containing: "gallery: composer at ").flatMap(rect(in:)),
                                         gallery.output)
            let mark = gallery.output.count
            XCTAssertEqual(try run(xdotool, ["mousemove", "--window", window, "\(Int(composer.minX) + 20)", "\(Int(composer.midY))",
                                             "click", "1"], environment: x).status, 0)
            XCTAssertNotNil(line(of: gallery, after: mark) { $0.hasPrefix("gallery: composer at ") && $0.hasSuffix(", focused") },
                            gallery.output)
            XCTAssertEqual(try run(xdotool, ["type", "--delay", "30", "Hi"], environment: x).status, 0)
            XCTAssertEqual(try run(xdotool, ["key", "--delay", "50", "dead_acute", "e"], environment: x).status, 0)
            XCTAssertNotNil(line(of: gallery, after: mark, containing: "gallery: composer text \"Hié\""), gallery.output)
            // fcitx5's own account: the gallery's input context, through its D-Bus frontend, focused.
            let debug = "import dbus; print(dbus.SessionBus().get_object('org.fcitx.Fcitx5', '/controller')"
                + ".DebugInfo(dbus_interface='org.fcitx.Fcitx.Controller1'))"
            let info = try run(python, ["-c", debug], environment: session).output
            XCTAssertTrue(info.contains("program:gallery frontend:dbus") && info.contains("focus:1"), info)

            XCTAssertEqual(try run(xdotool, ["key", "ctrl+q"], environment: x).status, 0)
            let (status, output) = quitted(gallery)
            XCTAssertEqual(status, 0, output)
        }
    }
}
