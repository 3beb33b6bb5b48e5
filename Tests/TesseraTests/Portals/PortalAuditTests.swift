internal import CDBus
import Foundation
@testable import Tessera
import NodeRuntime
import TestSupport
import XCTest
import TesseraDBus
@testable import TesseraPortal

/// The portals' thread hand-offs under stress: completions called exactly once and on the UI thread,
/// none lost to `stop()`, time-outs that fire while other requests come and go, `Response`s from
/// peers other than the portal refused, a hundred requests at once, the bus going away mid-request,
/// the threads and descriptors gone after `stop()`, and the appearance fold applying the newest.
/// Every wait is bounded and waits on a condition, never on a fixed delay.
@MainActor
final class PortalAuditTests: XCTestCase {
    private func makePortal(bus: PrivateBus?, environment: [String: String] = [:], callTimeout: Double = 5,
                            responseTimeout: Double = 30) -> DesktopPortal {
        var environment = environment
        if let bus { environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address }
        let configuration = DesktopPortal.Configuration(environment: environment, callTimeout: callTimeout,
                                                        responseTimeout: responseTimeout)
        return DesktopPortal(configuration: configuration, post: { work in Task { @MainActor in work() } })
    }

    private func makeFake(_ bus: PrivateBus, name: String = FakeDesktopPortal.portalName) throws -> OffMain<FakeDesktopPortal> {
        try OffMain("fake-\(name)") { try FakeDesktopPortal(address: bus.address, name: name) }
    }

    /// Waits (bounded) until `condition` holds, letting the main actor run meanwhile.
    private func waitUntil(_ what: String, timeout: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            guard Date() < deadline else { throw DBusFailure("waited \(timeout) s for \(what)") }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    private static func descriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    // MARK: Completions after stop()

    // FOUND: a notification whose AddNotification the portal had not answered at stop() never got its completion
    // (the unanswered call fell through to the notification server's Notify, sent after the loop had ended).
    func testStopEndsANotificationThePortalHasNotAnswered() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        let results = PortalResults<Result<DesktopRoute, PortalError>>()
        let ended = results.expectOne("ended")
        portal.postNotification(DesktopNotification(id: "n1", title: "Ada")) { result in
            XCTAssertTrue(Thread.isMainThread)
            results.take(result)
        }
        try await fake.run { fake in _ = try fake.nextCall("AddNotification") }  // taken, never answered
        portal.stop()
        await fulfillment(of: [ended], timeout: 10)
        XCTAssertEqual(results.all, [.failure(.stopped)])
        try await waitUntil("the thread to end") { portal.status == .stopped }
    }

    /// Requests made from many threads while `stop()` comes: each completion runs exactly once, on the
    /// UI thread; those after stop end with `.stopped` at once.
    func testRequestsRacingStopEachEndExactlyOnce() async throws {
        let bus = try PrivateBus()  // no portal on it: every request falls back
        for round in 0..<20 {
            let portal = makePortal(bus: bus, environment: ["PATH": "/nonexistent"])
            let counts = PortalResults<Int>()
            let count = 40
            let group = DispatchGroup()
            for index in 0..<count {
                DispatchQueue.global().async(group: group) {
                    if index == count / 2 { portal.stop() }
                    portal.openURI(URL(string: "https://example.com/\(index)")!) { _ in
                        XCTAssertTrue(Thread.isMainThread)
                        counts.take(index)
                    }
                }
            }
            await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
            try await waitUntil("round \(round)'s \(count) completions") { counts.all.count >= count }
            try await waitUntil("round \(round)'s thread to end") {
                if case .unavailable = portal.status { return false }
                return portal.status == .stopped || portal.status == .idle
            }
            XCTAssertEqual(counts.all.sorted(), Array(0..<count), "round \(round): each exactly once")
        }
    }

    // MARK: Time-outs

    /// A request that never gets its `Response` times out on time while other requests keep coming
    /// (each new one recomputes poll's time-out; none pushes the old deadline away).
    func testAResponseTimeOutFiresWhileNewRequestsKeepArriving() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus, responseTimeout: 1)
        defer { portal.stop() }
        let first = PortalResults<Result<[URL]?, PortalError>>()
        let timedOut = first.expectOne("timed out")
        let started = Date()
        portal.chooseFiles(FileChooserOptions()) { first.take($0) }
        let path = try await fake.run { fake in try fake.takeRequest(try fake.nextCall("OpenFile"), optionsAt: 2) }
        // More requests keep the thread busy; each is answered at once.
        let others = PortalResults<Result<OpenURIOutcome, PortalError>>()
        var expectations: [XCTestExpectation] = []
        for index in 0..<8 {
            expectations.append(others.expectOne("other \(index)"))
            portal.openURI(URL(string: "https://example.com/\(index)")!) { others.take($0) }
            try await fake.run { fake in
                try fake.respond(try fake.takeRequest(try fake.nextCall("OpenURI"), optionsAt: 2), code: 0)
            }
        }
        await fulfillment(of: [timedOut] + expectations, timeout: 15)
        XCTAssertEqual(first.all, [.failure(.timedOut(seconds: 1))])
        XCTAssertLessThan(Date().timeIntervalSince(started), 12, "bounded")
        let closed = try await fake.run { fake in try fake.nextCall("Close").path }
        XCTAssertEqual(closed, path)
        XCTAssertEqual(others.all.count, 8)
    }

    // MARK: Many at once

    func testAHundredRequestsAtOnceAreEachAnsweredOnce() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Int>()
        let count = 100
        for index in 0..<count {
            portal.chooseFiles(FileChooserOptions()) { result in
                XCTAssertTrue(Thread.isMainThread)
                if case .success(let urls?) = result, urls.count == 1, urls[0].lastPathComponent == "\(index).txt" {
                    results.take(index)
                } else {
                    XCTFail("request \(index) ended with \(result)")
                    results.take(-1)
                }
            }
        }
        // Taken in a different order than asked, answered in reverse.
        try await fake.run { fake in
            var taken: [(String, String)] = []
            for _ in 0..<count {
                let call = try fake.nextCall("OpenFile")
                let token = FakeDesktopPortal.options(call.arguments() ?? [], at: 2)["handle_token"]?.stringValue ?? ""
                taken.append((try fake.takeRequest(call, optionsAt: 2), token))
            }
            for (path, token) in taken.reversed() {
                // The token is "tessera<n>", n counted from 1 in the order asked.
                let index = (Int(token.dropFirst("tessera".count)) ?? 0) - 1
                try fake.respond(path, code: 0, results: [("uris", FakeDesktopPortal.uris(["file:///tmp/\(index).txt"]))])
            }
        }
        try await waitUntil("\(count) answers") { results.all.count >= count }
        XCTAssertEqual(results.all.sorted(), Array(0..<count))
    }

    // MARK: Spoofing

    // FOUND: a Response sent straight to the app by another peer, before the portal had answered the
    // call, was taken as the portal's (nothing was known of the portal's owner yet).
    func testAResponseFromAnotherPeerBeforeThePortalAnswersIsRefused() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let chosen = results.expectOne("chosen")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        let address = bus.address
        try await fake.run { fake in
            let call = try fake.nextCall("OpenFile")
            let path = FakeDesktopPortal.requestPath(for: call, optionsAt: 2)
            let app = call.sender ?? ""
            // Another peer on the bus sends a Response straight to the app, on the predicted path.
            let spoofer = try BusPeer(address: address)
            guard let signal = DBusMessage.signal(path: path, interface: "org.freedesktop.portal.Request", member: "Response"),
                  signal.append([.uint32(0), .stringVariantDictionary([("uris", FakeDesktopPortal.uris(["file:///tmp/spoofed"]))])]),
                  dbus_message_set_destination(signal.pointer, app) != 0 else { throw DBusFailure("cannot make the signal") }
            spoofer.connection.send(signal)
            // A round trip through the app's thread: the signal before it has been taken there.
            _ = try? spoofer.call(app, "/audit", "test.Audit", "Ping")
            try fake.reply(to: call, [.objectPath(path)])
            try fake.respond(path, code: 0, results: [("uris", FakeDesktopPortal.uris(["file:///tmp/real"]))])
        }
        await fulfillment(of: [chosen], timeout: 10)
        XCTAssertEqual(results.all, [.success([URL(fileURLWithPath: "/tmp/real")])])
    }

    // MARK: The bus going away

    /// The bus goes away while calls wait for their replies (not yet requests the portal holds): each
    /// completion runs once.
    func testTheBusGoingAwayWhileCallsWaitEndsEachOnce() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let fake = try makeFake(bus!)
        defer { fake.close() }
        let portal = makePortal(bus: bus, environment: ["PATH": "/nonexistent"])
        defer { portal.stop() }
        let links = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let notes = PortalResults<Result<DesktopRoute, PortalError>>()
        let files = PortalResults<Result<[URL]?, PortalError>>()
        let done = [links.expectOne("link"), notes.expectOne("note"), files.expectOne("files")]
        portal.openURI(URL(string: "https://example.com/")!) { links.take($0) }
        portal.postNotification(DesktopNotification(id: "n", title: "t")) { notes.take($0) }
        portal.chooseFiles(FileChooserOptions()) { files.take($0) }
        try await fake.run { fake in
            _ = try fake.nextCall("OpenURI")
            _ = try fake.nextCall("AddNotification")
            _ = try fake.nextCall("OpenFile")
        }
        bus = nil
        await fulfillment(of: done, timeout: 10)
        try await waitUntil("the status") { if case .unavailable = portal.status { return true } else { return false } }
        // Nothing more arrives.
        await Task.yield()
        XCTAssertEqual(links.all.count, 1)
        XCTAssertEqual(notes.all.count, 1)
        XCTAssertEqual(files.all.count, 1)
    }

    // MARK: Threads and descriptors

    func testStopLeavesNoThreadAndNoDescriptors() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let settingsFake = try OffMain("settings") { try BusPeer(address: bus.address) }
        defer { settingsFake.close() }
        // Warm up libdbus and Foundation so that their one-time descriptors are counted in the baseline.
        do {
            let warm = makePortal(bus: bus)
            let results = PortalResults<Result<OpenURIOutcome, PortalError>>()
            let done = results.expectOne("warm")
            warm.openURI(URL(string: "https://example.com/")!) { results.take($0) }
            try await fake.run { fake in try fake.respond(try fake.takeRequest(try fake.nextCall("OpenURI"), optionsAt: 2), code: 0) }
            await fulfillment(of: [done], timeout: 10)
            warm.stop()
            try await waitUntil("the warm-up thread to end") { warm.status == .stopped }
        }
        let baseline = Self.descriptorCount()
        for _ in 0..<5 {
            var portal: DesktopPortal? = makePortal(bus: bus)
            let results = PortalResults<Result<[URL]?, PortalError>>()
            let done = results.expectOne("stopped")
            portal!.chooseFiles(FileChooserOptions()) { results.take($0) }
            try await fake.run { fake in _ = try fake.takeRequest(try fake.nextCall("OpenFile"), optionsAt: 2) }
            portal!.stop()
            await fulfillment(of: [done], timeout: 10)
            XCTAssertEqual(results.all, [.failure(.stopped)])
            try await waitUntil("the thread to end") { portal!.status == .stopped }
            portal = nil
        }
        try await waitUntil("the descriptors back to \(baseline) (now \(Self.descriptorCount()))") { Self.descriptorCount() <= baseline }

        // The settings reader: no portal on the bus answers ReadAll (ServiceUnknown), so it listens.
        for _ in 0..<5 {
            var reader: SettingsPortal? = SettingsPortal(
                configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], callTimeout: 2),
                post: { work in Task { @MainActor in work() } }, apply: { _ in })
            reader!.start()
            _ = reader!.waitForFirstReading(timeout: 5)
            reader!.stop()
            try await waitUntil("the reader to stop") { reader!.status == .stopped }
            reader = nil
        }
        try await waitUntil("the descriptors back to \(baseline) (now \(Self.descriptorCount()))") { Self.descriptorCount() <= baseline }
    }

    // MARK: The appearance fold

    /// Changes that arrive while an appearance waits for the UI thread fold into one, and that one
    /// applies the newest; nothing applies after stop().
    func testTheFoldAppliesTheNewestAndNothingAfterStop() async throws {
        let bus = try PrivateBus()
        let settings: [String: [String: DBusValue]] = ["org.freedesktop.appearance": ["color-scheme": .uint32(2)]]
        let fake = try OffMain("settings-portal") { try FakeSettingsPortal(address: bus.address, settings: settings) }
        defer { fake.close() }
        let held = Locked<[@MainActor @Sendable () -> Void]>([])
        let applied = Locked<[Appearance]>([])
        let reader = SettingsPortal(
            configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], callTimeout: 5),
            post: { work in held.withLock { $0.append(work) } },
            apply: { appearance in
                XCTAssertTrue(Thread.isMainThread)
                applied.withLock { $0.append(appearance) }
            })
        defer { reader.stop() }
        reader.start()
        try await fake.run { fake in try fake.answerReadAll() }
        try await waitUntil("the first reading") { reader.latestAppearance != nil }
        XCTAssertEqual(held.withLock { $0.count }, 1)
        // Light → dark → light → dark while the first hand-off waits.
        for (index, scheme) in [UInt32(1), 2, 1].enumerated() {
            try await fake.run { fake in try fake.changeSetting("org.freedesktop.appearance", "color-scheme", .uint32(scheme)) }
            try await waitUntil("change \(index)") { reader.changesReceived == index + 1 }
        }
        // The count is taken as a signal arrives, before the appearance is made from it: wait for the
        // appearance the three end in (dark), which the waiting hand-off then applies.
        try await waitUntil("the appearance the changes end in") { reader.latestAppearance?.colorScheme == .dark }
        XCTAssertEqual(held.withLock { $0.count }, 1, "folded into the one waiting")
        for work in held.withLock({ state in defer { state.removeAll() }; return state }) { work() }
        XCTAssertEqual(applied.withLock { $0 }, [reader.latestAppearance!])
        XCTAssertEqual(reader.latestAppearance?.colorScheme, .dark)

        // A change after that posts again; stop() before the UI thread runs it: nothing is applied.
        try await fake.run { fake in try fake.changeSetting("org.freedesktop.appearance", "color-scheme", .uint32(2)) }
        try await waitUntil("the post") { held.withLock { $0.count } == 1 }
        reader.stop()
        for work in held.withLock({ state in defer { state.removeAll() }; return state }) { work() }
        XCTAssertEqual(applied.withLock { $0.count }, 1, "nothing applied after stop()")
        try await waitUntil("the reader to stop") { reader.status == .stopped }
    }

    /// stop() right after start(), before the thread has connected: the thread ends and the status
    /// says stopped (no lost wake-up leaves it in poll()).
    func testStopRightAfterStartEndsTheReader() async throws {
        let bus = try PrivateBus()
        let fake = try OffMain("settings-portal") {
            try FakeSettingsPortal(address: bus.address, settings: ["org.freedesktop.appearance": ["color-scheme": .uint32(1)]])
        }
        defer { fake.close() }
        for round in 0..<20 {
            let reader = SettingsPortal(
                configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], callTimeout: 0.5),
                post: { work in Task { @MainActor in work() } }, apply: { _ in })
            reader.start()
            if round % 2 == 1 { _ = reader.waitForFirstReading(timeout: 2) }
            reader.stop()
            try await waitUntil("round \(round) to stop (\(reader.status))") { reader.status == .stopped }
        }
    }

    // MARK: The application

    // FOUND: closing the Application while the in-app file chooser was open left the request's
    // completion never called.
    func testClosingTheAppWithTheInAppChooserOpenEndsTheRequest() async throws {
        let bus = try PrivateBus()  // no portal: the in-app chooser answers
        var configuration = Application.Configuration.headless(size: Size(width: 200, height: 200))
        configuration.accessibility = false
        configuration.portalConfiguration = DesktopPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let app = try Application(configuration: configuration, rootNode: Node())
        var results: [Result<[URL]?, PortalError>] = []
        app.chooseFiles(FileChooserOptions()) { results.append($0) }
        let deadline = Date(timeIntervalSinceNow: 10)
        while app.presentedFileChooser == nil && Date() < deadline {
            _ = UIWakeup.shared.wait(timeout: 0.1)
            UIWakeup.shared.reset()
            app.frame()
        }
        XCTAssertNotNil(app.presentedFileChooser)
        app.close()
        let after = Date(timeIntervalSinceNow: 10)
        while results.isEmpty && Date() < after {
            _ = Runtime.shared.mainQueue.drain()
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        XCTAssertEqual(results, [.failure(.stopped)])
    }
}

/// More hand-offs: a portal too slow to take a request, and notification actions from other peers.
@MainActor
final class PortalAuditMoreTests: XCTestCase {
    private func makePortal(bus: PrivateBus, callTimeout: Double = 5) -> DesktopPortal {
        let configuration = DesktopPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/nonexistent"],
                                                        callTimeout: callTimeout, responseTimeout: 30)
        return DesktopPortal(configuration: configuration, post: { work in Task { @MainActor in work() } })
    }

    // FOUND: a file chooser call the portal took too long to answer went to the fallback, but the
    // request (and its dialog) the portal made afterwards was never closed.
    func testACallThatTimesOutClosesTheRequestThePortalMayStillMake() async throws {
        let bus = try PrivateBus()
        let fake = try OffMain("fake") { try FakeDesktopPortal(address: bus.address) }
        defer { fake.close() }
        let portal = makePortal(bus: bus, callTimeout: 0.5)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let fellBack = results.expectOne("fell back")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        let call = try await fake.run { fake in
            let call = try fake.nextCall("OpenFile")
            return FakeDesktopPortal.requestPath(for: call, optionsAt: 2)
        }
        await fulfillment(of: [fellBack], timeout: 10)
        guard case .failure(.portalUnavailable)? = results.last else { return XCTFail("\(String(describing: results.last))") }
        let closed = try await fake.run { fake in try fake.nextCall("Close").path }
        XCTAssertEqual(closed, call)
    }

    // FOUND: a notification ActionInvoked sent straight to the app by any peer was taken as the
    // portal's while no portal call had been answered yet.
    func testAnActionInvokedFromAnotherPeerIsRefused() async throws {
        let bus = try PrivateBus()
        let fake = try OffMain("fake") { try FakeDesktopPortal(address: bus.address) }
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let actions = PortalResults<NotificationAction>()
        portal.setNotificationActionHandler { actions.take($0) }
        let opened = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let done = opened.expectOne("opened")
        portal.openURI(URL(string: "https://example.com/")!) { opened.take($0) }
        let address = bus.address
        try await fake.run { fake in
            let call = try fake.nextCall("OpenURI")
            let app = call.sender ?? ""
            let spoofer = try BusPeer(address: address)
            guard let signal = DBusMessage.signal(path: FakeDesktopPortal.portalPath, interface: "org.freedesktop.portal.Notification",
                                                  member: "ActionInvoked"),
                  signal.append([.string("message-42"), .string("delete-everything"), .array(elementSignature: "v", [])]),
                  dbus_message_set_destination(signal.pointer, app) != 0 else { throw DBusFailure("cannot make the signal") }
            spoofer.connection.send(signal)
            _ = try? spoofer.call(app, "/audit", "test.Audit", "Ping")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0)
        }
        // The action, had it been taken, was posted before the answer.
        await fulfillment(of: [done], timeout: 10)
        await Task.yield()
        XCTAssertEqual(actions.all.map(\.action), [])
    }

    // FOUND: stop() while the settings reader read key by key (a portal without ReadAll that does not
    // answer Read) ended the thread only after every key's time-out (nine of them).
    func testStopWhileTheSettingsAreReadKeyByKeyEndsPromptly() async throws {
        let bus = try PrivateBus()
        let fake = try OffMain("settings-portal") {
            try FakeSettingsPortal(address: bus.address, settings: ["org.freedesktop.appearance": ["color-scheme": .uint32(1)]])
        }
        defer { fake.close() }
        let reader = SettingsPortal(
            configuration: SettingsPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], callTimeout: 1),
            post: { work in Task { @MainActor in work() } }, apply: { _ in })
        reader.start()
        try await fake.run { fake in
            try fake.answerReadAll(error: .unknownMethod("org.freedesktop.portal.Settings", "ReadAll", path: FakeSettingsPortal.path))
            _ = try fake.peer.next(timeout: 10) { $0.kind == .methodCall && $0.member == "Read" }  // never answered
        }
        reader.stop()
        let deadline = Date(timeIntervalSinceNow: 4)  // the Read under way may take its second; not nine
        while reader.status != .stopped && Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertEqual(reader.status, .stopped)
    }
}
