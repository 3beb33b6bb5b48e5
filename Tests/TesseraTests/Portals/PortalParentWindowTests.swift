import Foundation
import Tessera
import TestSupport
import XCTest

/// The parent window the portals are given is the app's own X11 window: a child process opens a
/// window on a private Xvfb and says its `portalParentWindow`; `xwininfo` finds a window of the
/// app's title under that id.
@MainActor
final class PortalParentWindowTests: XCTestCase {
    private static let childVariable = "TESSERA_PORTAL_PARENT_CHILD"
    private static let title = "Tessera portal parent"

    func testThePortalsParentWindowIsTheAppsX11Window() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            var configuration = Application.Configuration(title: Self.title, size: Size(width: 200, height: 120), headless: false)
            configuration.accessibility = false
            configuration.followsSystemAppearance = false
            let app = try Application(configuration: configuration, rootNode: Node())
            try app.settle()
            let parent = app.portalParentWindow
            print("parent window: \(parent)")
            // Asked while the window is open: what the X server calls the window with that id.
            if parent.hasPrefix("x11:"), let xwininfo = Xvfb.which("xwininfo") {
                let query = Process()
                query.executableURL = URL(fileURLWithPath: xwininfo)
                query.arguments = ["-id", "0x" + parent.dropFirst(4)]
                let pipe = Pipe()
                query.standardOutput = pipe
                query.standardError = pipe
                try query.run()
                let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                query.waitUntilExit()
                print("xwininfo: \(said.split(separator: "\n").first { $0.contains("Window id") } ?? "nothing: \(said)")")
            }
            app.close()
            return
        }
        guard let xwininfo = Xvfb.which("xwininfo") else { throw XCTSkip("xwininfo is not installed (x11-utils)") }
        try Xvfb.withDisplay(numbers: 400..<500, screen: "640x480x24") { display in
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["TesseraTests.PortalParentWindowTests/testThePortalsParentWindowIsTheAppsX11Window"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["SDL_VIDEODRIVER"] = "x11"
            environment[Self.childVariable] = "1"
            child.environment = environment
            let pipe = Pipe()
            child.standardOutput = pipe
            child.standardError = pipe
            try child.run()
            // Read to the end: the child exits once it has printed (bounded by the test's own time-out).
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            let line = try XCTUnwrap(output.split(separator: "\n").first { $0.hasPrefix("parent window: ") }, output)
            let parent = String(line.dropFirst("parent window: ".count))
            XCTAssertTrue(parent.hasPrefix("x11:"), parent)
            let hex = String(parent.dropFirst(4))
            XCTAssertFalse(hex.isEmpty)
            XCTAssertTrue(hex.allSatisfy(\.isHexDigit) && hex == hex.lowercased(), "lower-case hex: \(hex)")
            XCTAssertEqual(child.terminationStatus, 0, output)
            XCTAssertTrue(output.contains("Window id: 0x\(hex) \"\(Self.title)\""), "xwininfo names the app's window: \(output)")
            _ = xwininfo
        }
    }
}
