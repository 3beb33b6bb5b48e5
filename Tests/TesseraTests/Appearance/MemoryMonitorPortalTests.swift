import Compositor
import Foundation
@testable import NodeRuntime
import TestSupport
import XCTest
@testable import Tessera
import TesseraDBus
@testable import TesseraPortal

/// The levels a handler was given.
private typealias Warnings = AwaitedValues<MemoryWarningLevel>

/// The desktop's memory monitor (the portal's `LowMemoryWarning(y)`) heard on the settings portal's
/// connection: each warning reaches the UI thread's handler at its level, warnings that pile up are
/// folded into one at the highest level, a hostile signal is ignored, and an app lets its caches and
/// the rows drawn ahead go.
@MainActor
final class MemoryMonitorPortalTests: XCTestCase {
    private func makePortal(_ bus: PrivateBus) throws -> OffMain<FakeSettingsPortal> {
        try OffMain("portal") { try FakeSettingsPortal(address: bus.address, settings: [:]) }
    }

    func testWarningsReachTheHandlerAtTheirLevelAndHostileOnesAreIgnored() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus)
        defer { portal.close() }
        let warnings = Warnings()
        let reader = SettingsPortal(configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
                                                                                callTimeout: 5),
                                    post: { work in Task { @MainActor in work() } },
                                    apply: { _ in },
                                    lowMemory: { level in warnings.take(level) })
        defer { reader.stop() }
        reader.start()
        try await portal.run { try $0.answerReadAll() }
        _ = reader.waitForFirstReading(timeout: 10)

        let medium = warnings.expectOne("medium")
        try await portal.run { try $0.warnOfLowMemory(100) }
        await fulfillment(of: [medium], timeout: 10)
        XCTAssertEqual(warnings.all, [.medium])

        // A string, two bytes, nothing: ignored; the next good one arrives alone.
        let critical = warnings.expectOne("critical")
        try await portal.run { portal in
            try portal.warnOfLowMemory(0, arguments: [.string("255")])
            try portal.warnOfLowMemory(0, arguments: [.byte(255), .byte(255)])
            try portal.warnOfLowMemory(0, arguments: [])
            try portal.warnOfLowMemory(255)
        }
        await fulfillment(of: [critical], timeout: 10)
        XCTAssertEqual(warnings.all, [.medium, .critical])
        XCTAssertEqual(reader.memoryWarningsReceived, 2)
    }

    /// Warnings that arrive while one is on its way to the UI thread fold into it, at the highest level.
    func testWarningsThatPileUpFoldIntoOneAtTheHighestLevel() async throws {
        let warnings = Warnings()
        // The UI thread takes the posted work only when the test lets it.
        let held = Locked<[@MainActor @Sendable () -> Void]>([])
        let shared = SettingsPortalShared(post: { work in held.withLock { $0.append(work) } }, apply: { _ in },
                                          lowMemory: { level in warnings.take(level) })
        shared.deliverMemoryWarning(.low)
        shared.deliverMemoryWarning(.critical)
        shared.deliverMemoryWarning(.medium)
        let posted = held.withLock { $0 }
        XCTAssertEqual(posted.count, 1, "one hand-off on its way")
        posted.forEach { $0() }
        XCTAssertEqual(warnings.all, [.critical])
        shared.deliverMemoryWarning(.low)
        held.withLock { $0 }.dropFirst().forEach { $0() }
        XCTAssertEqual(warnings.all, [.critical, .low], "the next one is posted again")
    }

    /// The whole way in an app: the portal warns, the app's lists let go of the rows drawn ahead, its
    /// caches empty, and `onLowMemory` hears it after.
    func testAnAppLetsGoOfWhatItCanRebuildWhenTheDesktopWarns() async throws {
        final class Rows: ListDataSource {
            func numberOfRows(in list: ListNode) -> Int { 300 }
            func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
                { TextNode("Row \(row) of a list drawn ahead", attributes: TextAttributes(font: .system(size: 15))) }
            }
        }
        let bus = try PrivateBus()
        let portal = try makePortal(bus)
        defer { portal.close() }
        let rows = Rows()
        let list = ListNode()
        list.dataSource = rows
        list.idleRangeDelay = nil
        var configuration = Application.Configuration.headless(size: Size(width: 320, height: 240))
        configuration.followsSystemAppearance = true
        configuration.settingsEnvironment = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        let app = try Application(configuration: configuration, rootNode: list)
        defer { app.host.setRootController(nil); app.settingsPortal?.stop() }
        try await portal.run { try $0.answerReadAll() }
        _ = app.settingsPortal?.waitForFirstReading(timeout: 10)
        try app.settle()
        list.setContentOffset(1500, animated: false)
        try app.settle()
        func drawnAhead() -> Int {
            list.rowNodes.filter { $0.interfaceState.contains(.display) && !$0.interfaceState.contains(.visible) }
                .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
        }
        let ahead = drawnAhead()
        XCTAssertGreaterThan(ahead, 0)
        var heard: [MemoryWarningLevel] = []
        app.onLowMemory = { level in
            heard.append(level)
            XCTAssertEqual(TextLayoutCache.shared.statistics.bytes, 0, "the app hears it after the caches went")
        }
        try await portal.run { try $0.warnOfLowMemory(100) }
        let deadline = Date().addingTimeInterval(10)
        while heard.isEmpty && Date() < deadline { app.runEventLoop(forSeconds: 0.05) }
        XCTAssertEqual(heard, [.medium])
        try app.settle()
        XCTAssertEqual(list.rangeMode, .minimum)
        XCTAssertLessThan(drawnAhead(), ahead / 2)
    }
}
