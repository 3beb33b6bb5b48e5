import Foundation
import Tessera
import TestSupport
import XCTest
import TesseraDBus
@testable import TesseraPortal

private let appearanceNamespace = "org.freedesktop.appearance"
private let gnomeNamespace = "org.gnome.desktop.interface"

private func accent(_ red: Double, _ green: Double, _ blue: Double) -> DBusValue {
    .structure([.double(red), .double(green), .double(blue)])
}

/// The appearances a reader applied on the main actor.
private typealias AppliedAppearances = AwaitedValues<Appearance>

/// The settings portal reader on a private bus (a `dbus-daemon` of the test's own) against a fake
/// portal: it reads the desktop's appearance at start, follows `SettingChanged` live, keeps to the
/// documented fallbacks when the portal answers with wrong types, NaN colours, huge or unknown
/// numbers, and when there is no portal or no bus at all; an app built on it shows dark pixels when
/// the desktop turns dark, and does not wake while nothing changes.
@MainActor
final class SettingsPortalTests: XCTestCase {
    private func makeReader(bus: PrivateBus?, environment: [String: String] = [:], record: AppliedAppearances) -> SettingsPortal {
        var environment = environment
        if let bus { environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address }
        return SettingsPortal(configuration: SettingsPortal.Configuration(environment: environment, callTimeout: 5),
                              post: { work in Task { @MainActor in work() } },
                              apply: { appearance in record.take(appearance) })
    }

    private func makePortal(_ bus: PrivateBus, _ settings: [String: [String: DBusValue]]) throws -> OffMain<FakeSettingsPortal> {
        try OffMain("portal") { try FakeSettingsPortal(address: bus.address, settings: settings) }
    }

    func testItReadsTheDesktopsAppearanceAtStart() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus, [
            appearanceNamespace: ["color-scheme": .uint32(1), "accent-color": accent(0.2, 0.4, 0.6), "contrast": .uint32(1),
                              "reduced-motion": .uint32(1)],
            gnomeNamespace: ["text-scaling-factor": .double(1.25), "font-name": .string("Cantarell 11")],
        ])
        defer { portal.close() }
        let record = AppliedAppearances()
        let reader = makeReader(bus: bus, record: record)
        defer { reader.stop() }
        let applied = record.expectOne("the first reading")
        reader.start()
        try await portal.run { try $0.answerReadAll() }
        await fulfillment(of: [applied], timeout: 10)
        let expected = Appearance(colorScheme: .dark, contrast: .high, accentColor: Color(red: 51, green: 102, blue: 153),
                                  textScale: 1.25, reducedMotion: true)
        XCTAssertEqual(record.all, [expected])
        XCTAssertEqual(reader.waitForFirstReading(timeout: 5), expected)
        XCTAssertEqual(reader.status, .following)
        XCTAssertEqual(reader.settings?.fontName, "Cantarell 11")
    }

    func testSettingChangedTurnsTheAppearanceDarkLive() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus, [appearanceNamespace: ["color-scheme": .uint32(2)]])
        defer { portal.close() }
        let record = AppliedAppearances()
        let reader = makeReader(bus: bus, record: record)
        defer { reader.stop() }
        let first = record.expectOne("light at start")
        reader.start()
        try await portal.run { try $0.answerReadAll() }
        await fulfillment(of: [first], timeout: 10)
        XCTAssertEqual(record.all.last?.colorScheme, .light)

        // A setting the appearance does not use changes nothing the app sees; dark does.
        let dark = record.expectOne("dark")
        try await portal.run { portal in
            try portal.changeSetting(gnomeNamespace, "font-name", .string("Inter 12"))
            try portal.changeSetting(appearanceNamespace, "color-scheme", .uint32(1))
        }
        await fulfillment(of: [dark], timeout: 10)
        XCTAssertEqual(record.all.map(\.colorScheme), [.light, .dark], "one application per change of what shows")
        XCTAssertEqual(reader.changesReceived, 2)

        let larger = record.expectOne("larger text, less motion")
        try await portal.run { portal in
            try portal.changeSetting(gnomeNamespace, "text-scaling-factor", .double(1.5))
        }
        await fulfillment(of: [larger], timeout: 10)
        XCTAssertEqual(record.all.last, Appearance(colorScheme: .dark, textScale: 1.5))
    }

    /// Wrong types, a NaN and an out-of-range colour channel, a huge text scale and unknown numbers:
    /// each key falls back as documented, and the reader goes on following.
    func testHostileAnswersFallBackAsDocumented() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus, [
            appearanceNamespace: ["color-scheme": .string("dark"), "accent-color": accent(.nan, 0.5, 2), "contrast": .uint32(99),
                              "reduced-motion": .int64(1)],
            gnomeNamespace: ["color-scheme": .string("prefer-dark"), "text-scaling-factor": .double(1e300),
                         "enable-animations": .string("no"), "gtk-theme": .string(String(repeating: "x", count: 100_000))],
        ])
        defer { portal.close() }
        let record = AppliedAppearances()
        let reader = makeReader(bus: bus, record: record)
        defer { reader.stop() }
        let first = record.expectOne("the first reading")
        reader.start()
        try await portal.run { try $0.answerReadAll() }
        await fulfillment(of: [first], timeout: 10)
        // color-scheme as a string is dropped, GNOME's "prefer-dark" decides; the accent is none; the
        // contrast and the motion keys are dropped (normal, motion); the scale is brought to 3.
        XCTAssertEqual(record.all.last, Appearance(colorScheme: .dark, textScale: 3))
        XCTAssertNil(reader.settings?.gtkTheme, "a 100 kB theme name is not kept")

        try await portal.run { portal in
            // Wrong arity, wrong types, an unknown scheme number, a NaN accent: none changes what shows.
            try portal.changeSetting("", "", .int32(0), arguments: [.int32(1)])
            try portal.changeSetting("", "", .int32(0), arguments: [.uint32(1), .string("x"), .variant(.int32(1))])
            try portal.changeSetting(appearanceNamespace, "color-scheme", .uint32(7))
            try portal.changeSetting(appearanceNamespace, "accent-color", accent(.nan, .infinity, -1))
            try portal.changeSetting(appearanceNamespace, "accent-color", .array(elementSignature: "d", [.double(0.5)]))
            try portal.changeSetting(gnomeNamespace, "text-scaling-factor", .double(.nan))
            try portal.changeSetting(gnomeNamespace, "color-scheme", .string("prefer-light"))
        }
        // The signals may reach the UI thread in one appearance or in several (the NaN scale's, then
        // the scheme's): waited for until all seven are taken and the appearance they end in is applied
        // (the count may be taken before the reader's newest appearance is made from them; a wait for
        // that alone could end one appearance early). Bounded: a wrong fold still fails below.
        let final = Appearance(colorScheme: .light)
        let deadline = Date(timeIntervalSinceNow: 10)
        while (reader.changesReceived < 7 || record.all.last != final || reader.latestAppearance != final) && Date() < deadline {
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        // The NaN scale dropped the key: back to 1. Only the last signal changed the scheme.
        XCTAssertEqual(record.all.last, final)
        XCTAssertEqual(reader.changesReceived, 7)
        XCTAssertEqual(reader.status, .following)
    }

    func testAReadAllOfAnotherShapeLeavesTheEnvironmentsAppearance() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus, [:])
        defer { portal.close() }
        let record = AppliedAppearances()
        let reader = makeReader(bus: bus, environment: ["GTK_THEME": "Adwaita:dark"], record: record)
        defer { reader.stop() }
        reader.start()
        try await portal.run { try $0.answerReadAll(with: [.int32(5), .string("no")]) }
        XCTAssertNil(reader.waitForFirstReading(timeout: 10))
        guard case .noPortal = reader.status else { return XCTFail("status \(reader.status)") }
        XCTAssertEqual(record.all, [])
        XCTAssertEqual(PortalSettings().appearance(environment: ["GTK_THEME": "Adwaita:dark"]).colorScheme, .dark)
    }

    /// GTK's text-only scale in the environment sizes text when the desktop's text-scaling-factor is
    /// not known; an unreadable one is ignored, an absurd one kept in range, and the portal's wins.
    func testGDKDPIScaleIsTheTextScaleWhenTheDesktopSaysNone() async {
        XCTAssertEqual(PortalSettings().appearance(environment: ["GDK_DPI_SCALE": "1.25"]).textScale, 1.25)
        XCTAssertEqual(PortalSettings().appearance(environment: ["GDK_DPI_SCALE": " 0.5 "]).textScale, 0.5)
        XCTAssertEqual(PortalSettings().appearance(environment: ["GDK_DPI_SCALE": "40"]).textScale,
                       Appearance.textScaleRange.upperBound)
        for value in ["", "big", "nan", "inf", "-1", "0"] {
            XCTAssertEqual(PortalSettings().appearance(environment: ["GDK_DPI_SCALE": value]).textScale, 1, value)
        }
        var settings = PortalSettings()
        settings.textScalingFactor = 1.5
        XCTAssertEqual(settings.appearance(environment: ["GDK_DPI_SCALE": "2"]).textScale, 1.5)
    }

    /// A bus without a portal: the environment decides; a portal that comes later is followed.
    func testWithoutAPortalTheEnvironmentDecidesUntilOneSpeaks() async throws {
        let bus = try PrivateBus()
        let record = AppliedAppearances()
        let reader = makeReader(bus: bus, record: record)
        defer { reader.stop() }
        reader.start()
        XCTAssertNil(reader.waitForFirstReading(timeout: 10), "no portal answers")
        guard case .noPortal = reader.status else { return XCTFail("status \(reader.status)") }
        XCTAssertEqual(PortalSettings().appearance(environment: [:]), .standard, "no GTK_THEME: light")
        XCTAssertEqual(PortalSettings().appearance(environment: ["GTK_THEME": "HighContrast"]).contrast, .high)

        let portal = try makePortal(bus, [:])
        defer { portal.close() }
        let dark = record.expectOne("dark from a portal started later")
        try await portal.run { try $0.changeSetting(appearanceNamespace, "color-scheme", .uint32(1)) }
        await fulfillment(of: [dark], timeout: 10)
        XCTAssertEqual(record.all, [Appearance(colorScheme: .dark)])
        XCTAssertEqual(reader.status, .following)
    }

    func testWithoutASessionBusItSaysSo() async throws {
        let record = AppliedAppearances()
        let reader = makeReader(bus: nil, environment: ["XDG_RUNTIME_DIR": "/nonexistent"], record: record)
        reader.start()
        XCTAssertNil(reader.waitForFirstReading(timeout: 10))
        guard case .unavailable(let reason) = reader.status else { return XCTFail("status \(reader.status)") }
        XCTAssertTrue(reason.contains("no session bus"), reason)
    }

    /// An app following the desktop: light at its first frame, dark pixels after the portal says dark,
    /// and, at rest, no frame and no wake (the portal's thread sleeps in `poll`, not on a timer).
    func testAnAppFollowsTheDesktopLiveAndSleepsAtRest() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus, [appearanceNamespace: ["color-scheme": .uint32(0)]])
        defer { portal.close() }
        defer { Runtime.shared.setAppearance(.standard) }
        let answered = Task.detached { try await portal.run { try $0.answerReadAll() } }
        var configuration = Application.Configuration.headless(size: Size(width: 120, height: 80))
        configuration.accessibility = false
        configuration.followsSystemAppearance = true
        configuration.settingsEnvironment = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        configuration.appearanceWaitTimeout = 10
        let screen = Node()
        screen.themedBackgroundColor = .background
        let app = try Application(configuration: configuration, rootNode: screen)
        defer { app.close() }
        try await answered.value
        XCTAssertEqual(app.settingsPortal?.status, .following)
        try app.settle()
        XCTAssertEqual(try app.capture().pixel(x: 60, y: 40), Color(rgb: 0xFFFFFF).premultipliedARGB, "light: no preference")

        try await portal.run { try $0.changeSetting(appearanceNamespace, "color-scheme", .uint32(1)) }
        // The change reaches the UI thread through the main queue, which wakes the loop.
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while !Runtime.shared.appearance.isDark && MonotonicClock.nanoseconds() < deadline {
            _ = UIWakeup.shared.wait(timeout: 0.5)
            UIWakeup.shared.reset()
            app.frame()
        }
        XCTAssertTrue(Runtime.shared.appearance.isDark)
        try app.settle()
        XCTAssertEqual(try app.capture().pixel(x: 60, y: 40), ThemeColors.standardDark[.background]!.premultipliedARGB,
                       "the screen turned dark")

        // At rest: the loop runs no frame and nothing wakes it, the portal's connection open.
        let frames = app.frameCount, wakes = UIWakeup.shared.wakeCount
        app.runEventLoop(forSeconds: 0.6)
        XCTAssertEqual(app.frameCount, frames, "no frame at rest")
        XCTAssertEqual(UIWakeup.shared.wakeCount, wakes, "the portal's thread did not wake the app")
        XCTAssertEqual(app.settingsPortal?.status, .following)
    }
}
