internal import CDBus
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

    /// A warning that arrives while the hand-off runs (after it took the level, before the handler
    /// returned) is posted again, not lost; after `stop()` nothing is posted and a hand-off on its way
    /// hands over nothing.
    func testAWarningDuringTheHandOffIsPostedAgainAndNoneAfterStop() async {
        let warnings = Warnings()
        let held = Locked<[@MainActor @Sendable () -> Void]>([])
        let sharedBox = Locked<SettingsPortalShared?>(nil)
        let shared = SettingsPortalShared(post: { work in held.withLock { $0.append(work) } }, apply: { _ in },
                                          lowMemory: { level in
                                              warnings.take(level)
                                              // The portal's thread takes another meanwhile.
                                              if level == .low { sharedBox.withLock { $0 }?.deliverMemoryWarning(.medium) }
                                          })
        sharedBox.withLock { $0 = shared }
        func runPosted() {
            let posted = held.withLock { posted in
                defer { posted.removeAll() }
                return posted
            }
            posted.forEach { $0() }
        }
        shared.deliverMemoryWarning(.low)
        runPosted()
        XCTAssertEqual(warnings.all, [.low])
        XCTAssertEqual(held.withLock { $0.count }, 1, "the one taken during the hand-off is posted")
        runPosted()
        XCTAssertEqual(warnings.all, [.low, .medium])

        shared.deliverMemoryWarning(.critical)
        shared.state.withLock { $0.stopRequested = true }
        runPosted()
        shared.deliverMemoryWarning(.critical)
        XCTAssertEqual(held.withLock { $0.count }, 0, "nothing posted after stop")
        XCTAssertEqual(warnings.all, [.low, .medium], "nothing handed over after stop")
        sharedBox.withLock { $0 = nil }
    }

    /// A warning the portal sends before it answers ReadAll (the reader waits in the call) is kept
    /// and handed over once the reader follows.
    func testAWarningBeforeTheFirstReadingIsHandedOver() async throws {
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
        let medium = warnings.expectOne("medium")
        reader.start()
        try await portal.run { portal in
            let call = try portal.peer.next { $0.kind == .methodCall && $0.member == "ReadAll" }
            try portal.warnOfLowMemory(100)
            try portal.peer.reply(to: call, [FakeSettingsPortal.readAllAnswer([:])])
        }
        await fulfillment(of: [medium], timeout: 10)
        XCTAssertEqual(warnings.all, [.medium])
        XCTAssertEqual(reader.memoryWarningsReceived, 1)
    }

    // FOUND: a LowMemoryWarning that another peer on the bus sent straight to the reader's connection
    // (a destination: the bus routes it past the match rules, whose `sender=` only filters broadcasts)
    // was taken as the portal's, and so was a SettingChanged.
    func testAWarningFromAnotherPeerIsRefused() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus)
        defer { portal.close() }
        let warnings = Warnings()
        let appearances = Locked<[Appearance]>([])
        let reader = SettingsPortal(configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
                                                                                callTimeout: 5),
                                    post: { work in Task { @MainActor in work() } },
                                    apply: { appearance in appearances.withLock { $0.append(appearance) } },
                                    lowMemory: { level in warnings.take(level) })
        defer { reader.stop() }
        reader.start()
        let address = bus.address
        let app = try await portal.run { portal -> String in
            let call = try portal.peer.next { $0.kind == .methodCall && $0.member == "ReadAll" }
            try portal.peer.reply(to: call, [FakeSettingsPortal.readAllAnswer([:])])
            return call.sender ?? ""
        }
        _ = reader.waitForFirstReading(timeout: 10)
        let before = reader.changesReceived
        let low = warnings.expectOne("low")
        try await portal.run { portal in
            let spoofer = try BusPeer(address: address)
            func spoof(_ interface: String, _ member: String, _ arguments: [DBusValue], to destination: String?) throws {
                guard let signal = DBusMessage.signal(path: FakeSettingsPortal.path, interface: interface, member: member),
                      signal.append(arguments),
                      destination.map({ dbus_message_set_destination(signal.pointer, $0) != 0 }) ?? true
                else { throw DBusFailure("cannot make the signal") }
                spoofer.connection.send(signal)
            }
            // Straight to the reader, and broadcast (which the rule's sender keeps out).
            try spoof("org.freedesktop.portal.MemoryMonitor", "LowMemoryWarning", [.byte(255)], to: app)
            try spoof("org.freedesktop.portal.MemoryMonitor", "LowMemoryWarning", [.byte(255)], to: nil)
            try spoof(FakeSettingsPortal.interface, "SettingChanged",
                      [.string("org.freedesktop.appearance"), .string("color-scheme"), .variant(.uint32(1))], to: app)
            // A round trip to the bus: the spoofed signals are on their way to the reader before the
            // portal's own (the bus keeps each connection's messages in order).
            _ = try spoofer.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId")
            try portal.warnOfLowMemory(50)
        }
        await fulfillment(of: [low], timeout: 10)
        XCTAssertEqual(warnings.all, [.low], "only the portal's warning")
        XCTAssertEqual(reader.memoryWarningsReceived, 1)
        XCTAssertEqual(reader.changesReceived, before, "the spoofed SettingChanged is not taken")
    }

    // FOUND: a portal that floods the connection with warnings ran the UI thread's handler (and so
    // `NodeHost.releaseMemory`) for nearly each of them: the fold merges only what piles up while one
    // hand-off waits. A warning no higher than the last handed over, within
    // `Configuration.memoryWarningInterval` of it, is now taken in and not handed over again.
    func testAFloodOfWarningsRunsTheHandlerOncePerLevel() async throws {
        let bus = try PrivateBus()
        let portal = try makePortal(bus)
        defer { portal.close() }
        let warnings = Warnings()
        var configuration = SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], callTimeout: 5)
        configuration.memoryWarningInterval = 600
        let reader = SettingsPortal(configuration: configuration,
                                    post: { work in Task { @MainActor in work() } },
                                    apply: { _ in },
                                    lowMemory: { level in warnings.take(level) })
        defer { reader.stop() }
        reader.start()
        try await portal.run { try $0.answerReadAll() }
        _ = reader.waitForFirstReading(timeout: 10)
        let first = warnings.expectOne("the first")
        try await portal.run { try $0.warnOfLowMemory(100) }
        await fulfillment(of: [first], timeout: 10)
        let critical = warnings.expectOne("critical")
        try await portal.run { portal in
            for index in 0..<3000 { try portal.warnOfLowMemory(index % 2 == 0 ? 100 : 50) }
            try portal.warnOfLowMemory(255)
            for _ in 0..<1000 { try portal.warnOfLowMemory(255) }
        }
        await fulfillment(of: [critical], timeout: 30)
        let deadline = Date().addingTimeInterval(30)
        while reader.memoryWarningsReceived < 4002 && Date() < deadline { await Task.yield() }
        XCTAssertEqual(reader.memoryWarningsReceived, 4002, "every warning taken in")
        // Whatever was posted has run: a hand-off round trip through the main actor.
        await MainActor.run {}
        XCTAssertEqual(warnings.all, [.medium, .critical], "each level handed over once")
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
