import Foundation
import Tessera
import XCTest
@testable import TesseraPortal

/// The reader against the desktop's real portal (`xdg-desktop-portal` with its GTK backend), driven by
/// `gsettings` as a person's settings panel would. Runs only inside `Tools/portal-smoke.sh`, which
/// starts a private session bus, Xvfb (the GTK backend needs a display), the portal and dconf, and sets
/// `TESSERA_PORTAL_SMOKE=1`; skipped elsewhere.
@MainActor
final class SettingsPortalDesktopTests: XCTestCase {
    @MainActor
    private final class Applied {
        var last: Appearance?
        var waiting: (XCTestExpectation, (Appearance) -> Bool)?
        func take(_ appearance: Appearance) {
            last = appearance
            if let (expectation, accepts) = waiting, accepts(appearance) {
                expectation.fulfill()
                waiting = nil
            }
        }
    }

    private func gsettings(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gsettings")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "gsettings \(arguments.joined(separator: " "))")
    }

    func testTheRealPortalIsReadAndFollowed() async throws {
        guard ProcessInfo.processInfo.environment["TESSERA_PORTAL_SMOKE"] == "1" else {
            throw XCTSkip("runs inside Tools/portal-smoke.sh (a session bus with xdg-desktop-portal)")
        }
        try gsettings("set", "org.gnome.desktop.interface", "color-scheme", "default")
        let applied = Applied()
        let reader = SettingsPortal(post: { work in Task { @MainActor in work() } },
                                    apply: { appearance in applied.take(appearance) })
        defer { reader.stop() }
        reader.start()
        let first = reader.waitForFirstReading(timeout: 10)
        print("portal smoke: status \(reader.status), first reading \(first.map(String.init(describing:)) ?? "none")")
        XCTAssertEqual(reader.status, .following)
        XCTAssertEqual(first?.colorScheme, .light)

        func expect(_ what: String, after change: () throws -> Void, _ accepts: @escaping (Appearance) -> Bool) async throws {
            let expectation = XCTestExpectation(description: what)
            applied.waiting = (expectation, accepts)
            try change()
            await fulfillment(of: [expectation], timeout: 10)
            print("portal smoke: \(what): \(applied.last.map(String.init(describing:)) ?? "none")")
        }
        try await expect("dark", after: { try gsettings("set", "org.gnome.desktop.interface", "color-scheme", "prefer-dark") }) {
            $0.colorScheme == .dark
        }
        try await expect("text scale", after: { try gsettings("set", "org.gnome.desktop.interface", "text-scaling-factor", "1.25") }) {
            $0.textScale == 1.25
        }
        try await expect("less motion", after: { try gsettings("set", "org.gnome.desktop.interface", "enable-animations", "false") }) {
            $0.reducedMotion
        }
        try await expect("high contrast", after: { try gsettings("set", "org.gnome.desktop.a11y.interface", "high-contrast", "true") }) {
            $0.contrast == .high
        }
        try await expect("light", after: { try gsettings("set", "org.gnome.desktop.interface", "color-scheme", "prefer-light") }) {
            $0.colorScheme == .light
        }
    }
}
