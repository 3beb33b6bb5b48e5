import Foundation
import Tessera
import TestSupport
import XCTest
import TesseraDBus
@testable import TesseraPortal

/// An app under `dbus-run-session`, as on a desktop: the session bus comes from the environment that
/// `dbus-run-session` sets (nothing injected), the fake portal owns its name there, and the app reads
/// dark at start and turns light live, its pixels with it. The test binary runs itself as the child, as the AT-SPI end-to-end test
/// does.
@MainActor
final class SettingsPortalSessionTests: XCTestCase {
    private static let childVariable = "TESSERA_PORTAL_SESSION_CHILD"

    func testAnAppOnTheSessionBusFollowsThePortal() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try await runChild()
            return
        }
        guard let runSession = Xvfb.which("dbus-run-session") else {
            throw XCTSkip("dbus-run-session is not installed (make test installs dbus-bin)")
        }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: runSession)
        child.arguments = ["--", CommandLine.arguments[0], "TesseraTests.SettingsPortalSessionTests/testAnAppOnTheSessionBusFollowsThePortal"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        environment["SDL_VIDEODRIVER"] = "dummy"
        environment["TESSERA_NO_ACCESSIBILITY"] = "1"
        for name in ["DBUS_SESSION_BUS_ADDRESS", "TESSERA_APPEARANCE", "GTK_THEME"] { environment[name] = nil }
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        // Each wait in the child is bounded; this bounds the whole, should it hang anyway.
        let watchdog = DispatchWorkItem { if child.isRunning { child.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        watchdog.cancel()
        let log = said.split(separator: "\n").suffix(40).joined(separator: "\n")
        XCTAssertEqual(child.terminationStatus, 0, log)
        XCTAssertTrue(said.contains("Executed 1 test, with 0 failures"), log)
        XCTAssertTrue(said.contains("session check: dark at start") && said.contains("session check: light live"), log)
    }

    /// The child, on the session bus `dbus-run-session` made.
    private func runChild() async throws {
        let address = try XCTUnwrap(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"])
        let portal = try OffMain("portal") {
            try FakeSettingsPortal(address: address, settings: ["org.freedesktop.appearance": ["color-scheme": .uint32(1)]])
        }
        defer { portal.close() }
        defer { Runtime.shared.setAppearance(.standard) }
        let answered = Task.detached { try await portal.run { try $0.answerReadAll() } }
        // Headless on the dummy driver, following the desktop as a window does by default; the bus
        // from the process's environment (`settingsEnvironment` nil).
        var configuration = Application.Configuration(size: Size(width: 100, height: 60), headless: true)
        configuration.followsSystemAppearance = true
        configuration.appearanceWaitTimeout = 10
        let screen = Node()
        screen.themedBackgroundColor = .background
        let app = try Application(configuration: configuration, rootNode: screen)
        defer { app.close() }
        try await answered.value
        try app.settle()
        XCTAssertEqual(try app.capture().pixel(x: 50, y: 30), ThemeColors.standardDark[.background]!.premultipliedARGB)
        print("session check: dark at start")

        try await portal.run { try $0.changeSetting("org.freedesktop.appearance", "color-scheme", .uint32(2)) }
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while Runtime.shared.appearance.isDark && MonotonicClock.nanoseconds() < deadline {
            _ = UIWakeup.shared.wait(timeout: 0.5)
            UIWakeup.shared.reset()
            app.frame()
        }
        try app.settle()
        XCTAssertEqual(try app.capture().pixel(x: 50, y: 30), Color(rgb: 0xFFFFFF).premultipliedARGB)
        print("session check: light live")
    }
}
