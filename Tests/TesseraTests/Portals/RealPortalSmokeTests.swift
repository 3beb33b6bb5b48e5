import Foundation
import Tessera
import TestSupport
import XCTest

/// A smoke run against Debian's real `xdg-desktop-portal` (with its GTK backend) on the session bus
/// the process has: `Tools/portal-smoke.sh` starts a bus, Xvfb and the portal, then runs this with
/// `TESSERA_REAL_PORTAL=1`. Skipped otherwise. Each request must end (no hang), through the portal:
/// a notification is taken, a file chooser nobody answers times out and is closed (its GTK dialog
/// goes away), and a link is answered by the portal one way or another.
@MainActor
final class RealPortalSmokeTests: XCTestCase {
    func testTheRealPortalAnswersEveryRequest() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["TESSERA_REAL_PORTAL"] == "1" else { throw XCTSkip("run by Tools/portal-smoke.sh") }
        let portal = DesktopPortal(configuration: DesktopPortal.Configuration(callTimeout: 10, responseTimeout: 4),
                                   post: { work in Task { @MainActor in work() } })
        defer { portal.stop() }

        let posted = PortalResults<Result<DesktopRoute, PortalError>>()
        let notified = posted.expectOne("notification")
        portal.postNotification(DesktopNotification(id: "smoke", title: "Tessera", body: "A smoke test",
                                                    buttons: [.init(label: "OK", action: "ok")], defaultAction: "open")) {
            posted.take($0)
        }
        await fulfillment(of: [notified], timeout: 30)
        print("real portal: AddNotification → \(String(describing: posted.last))")
        XCTAssertEqual(posted.last, .success(.portal))
        portal.removeNotification(id: "smoke")

        let chosen = PortalResults<Result<[URL]?, PortalError>>()
        if let xdotool = Xvfb.which("xdotool") {
            // A file picked in the GTK dialog by the keyboard (Ctrl+L, the path, Enter) comes back as
            // the Response's uris.
            let folder = try TemporaryFolder("smoke")
            let picture = folder.url.appendingPathComponent("picked photo.png")
            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: picture)
            let picking = DesktopPortal(configuration: DesktopPortal.Configuration(callTimeout: 10, responseTimeout: 20),
                                        post: { work in Task { @MainActor in work() } })
            defer { picking.stop() }
            let picked = chosen.expectOne("picked")
            picking.chooseFiles(FileChooserOptions(title: "Tessera smoke pick", currentFolder: folder.url)) { chosen.take($0) }
            var window = ""
            for _ in 0..<40 where window.isEmpty {
                window = try Self.windows(named: "^Tessera smoke pick$", xdotool).split(separator: "\n").first.map(String.init) ?? ""
                if window.isEmpty { _ = UIWakeup.shared.wait(timeout: 0.25) }
            }
            XCTAssertFalse(window.isEmpty, "the GTK dialog showed")
            // Ctrl+L opens GTK's location entry; the keys go to the focused window (XTest).
            try Self.run(xdotool, ["windowfocus", "--sync", window])
            try Self.run(xdotool, ["key", "ctrl+l"])
            try Self.run(xdotool, ["type", "--delay", "20", picture.path])
            if let display = ProcessInfo.processInfo.environment["DISPLAY"], let shot = Xvfb.screenshot(display: display) {
                let output = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("portals")
                try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
                try Xvfb.writePNG(shot, to: output.appendingPathComponent("real-portal-file-chooser.png").path)
            }
            // End takes the completion GTK offers; Return opens the file.
            try Self.run(xdotool, ["key", "--delay", "100", "End", "Return"])
            await fulfillment(of: [picked], timeout: 30)
            print("real portal: OpenFile answered in the dialog → \(String(describing: chosen.last))")
            XCTAssertEqual(try chosen.last?.get()?.map(\.path), [picture.path])
        }
        let timedOut = chosen.expectOne("file chooser")
        portal.chooseFiles(FileChooserOptions(title: "Tessera smoke open", filters: [.images])) { chosen.take($0) }
        let xdotool = Xvfb.which("xdotool")
        if let xdotool {
            // The GTK dialog shows, named by the title given (looked for a few times, bounded).
            var shown = false
            for _ in 0..<12 where !shown {
                shown = try !Self.windows(named: "^Tessera smoke open$", xdotool).isEmpty
                if !shown { _ = UIWakeup.shared.wait(timeout: 0.25) }
            }
            print("real portal: the GTK file chooser \(shown ? "showed" : "did not show") on the X server")
            XCTAssertTrue(shown, "the portal showed its dialog")
        }
        await fulfillment(of: [timedOut], timeout: 30)
        print("real portal: OpenFile → \(String(describing: chosen.last))")
        XCTAssertEqual(chosen.last, .failure(.timedOut(seconds: 4)), "nobody answers the dialog")
        if let xdotool {
            // The request was closed: its dialog is gone (asked a few times: the portal closes it
            // asynchronously; bounded).
            var remaining = "?"
            for _ in 0..<20 {
                remaining = try Self.windows(named: "^Tessera smoke open$", xdotool)
                if remaining.isEmpty { break }
                _ = UIWakeup.shared.wait(timeout: 0.25)
            }
            print("real portal: dialog windows left after Close: \(remaining.isEmpty ? "none" : remaining)")
            XCTAssertTrue(remaining.isEmpty, "the dialog closed with the request")
        }

        let opened = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let answered = opened.expectOne("OpenURI")
        portal.openURI(URL(string: "https://example.com/")!) { opened.take($0) }
        await fulfillment(of: [answered], timeout: 30)
        print("real portal: OpenURI → \(String(describing: opened.last))")
        XCTAssertNotEqual(opened.last, .success(.opened(.fallback)), "the portal answered, not xdg-open")
        XCTAssertEqual(portal.status, .connected)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
    }

    /// The ids of the X windows whose name matches `pattern` (`xdotool search --name`), one a line.
    private static func windows(named pattern: String, _ xdotool: String) throws -> String {
        let search = Process()
        search.executableURL = URL(fileURLWithPath: xdotool)
        search.arguments = ["search", "--name", pattern]
        let pipe = Pipe()
        search.standardOutput = pipe
        search.standardError = FileHandle.nullDevice
        try search.run()
        let found = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        search.waitUntilExit()
        return found
    }
}
