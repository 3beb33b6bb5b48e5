import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// What the bridge asked the UI thread, for the tests to read. - Thread: main
@MainActor
private final class UIRecord {
    var requests: [AtspiUIRequest] = []
    var treesAsked = 0
}

/// The bridge on a real bus (a private `dbus-daemon`), with the test as the registry and as a screen
/// reader: it embeds, answers from the published tree on its own thread while the main actor goes
/// on, sends events for each new tree, runs actions on the UI thread, times out when the UI thread
/// does not answer, and says why when there is no bus or no registry.
@MainActor
final class AtspiBridgeTests: XCTestCase {
    /// Polls `condition` on the main actor until it holds or `timeout` seconds pass.
    private func waitUntil(_ what: String, timeout: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            guard Date() < deadline else { throw DBusFailure("timed out waiting for \(what)") }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    /// A bridge on `bus` as the accessibility bus, whose UI thread is the main actor and answers with
    /// `answer` (nil: never runs what it is sent).
    private func makeBridge(bus: PrivateBus, record: UIRecord, tree: AccessibilityTree, uiTimeout: Double = 3,
                            answering: Bool = true) -> AtspiBridge {
        let box = BridgeBox()
        let bridge = AtspiBridge(
            configuration: AtspiBridge.Configuration(applicationName: "Bridge check", environment: ["AT_SPI_BUS_ADDRESS": bus.address],
                                                     connectTimeout: 5, uiTimeout: uiTimeout),
            windowPlacement: WindowPlacement(WindowPlacement.State(origin: Point(x: 100, y: 50), unitsPerPoint: 2, isActive: true)),
            ui: AtspiBridge.UIPort(
                post: { work in if answering { Task { @MainActor in work() } } },
                answer: { request in
                    record.requests.append(request)
                    return .done(true)
                },
                publishTree: {
                    record.treesAsked += 1
                    box.bridge?.publish(tree)
                }))
        box.bridge = bridge
        return bridge
    }

    /// Starts `bridge` and answers its `Embed` as the registry; returns the bridge's name on the bus.
    private func embed(_ bridge: AtspiBridge, registry: OffMain<BusPeer>) async throws -> String {
        bridge.start()
        let (path, member, plug) = try await registry.run { peer -> (String, String, [DBusValue]) in
            let call = try peer.next { $0.kind == .methodCall && $0.member == "Embed" }
            try peer.reply(to: call, [.structure([.string(peer.name), .objectPath(Atspi.rootPath)])])
            return (call.path ?? "", call.member ?? "", call.arguments() ?? [])
        }
        XCTAssertEqual(path, Atspi.rootPath)
        XCTAssertEqual(member, "Embed")
        try await waitUntil("the bridge to connect") { bridge.isConnected }
        guard case .connected(let name) = bridge.status else { throw DBusFailure("not connected: \(bridge.status)") }
        XCTAssertEqual(plug, [.structure([.string(name), .objectPath(Atspi.rootPath)])], "the app's root, by its own name")
        return name
    }

    func testItEmbedsAnswersAndTellsWhatChanged() async throws {
        let bus = try PrivateBus()
        let registry = try OffMain("registry") { try BusPeer(address: bus.address) }
        try await registry.run { try $0.requestName(Atspi.registryName) }
        let reader = try OffMain("reader") { try BusPeer(address: bus.address) }
        try await reader.run { peer in
            try peer.addMatch("type='signal',interface='\(Atspi.eventObject)'")
            try peer.addMatch("type='signal',interface='\(Atspi.eventFocus)'")
            try peer.addMatch("type='signal',interface='\(Atspi.eventWindow)'")
        }
        let record = UIRecord()
        let bridge = makeBridge(bus: bus, record: record, tree: ServerFixture.tree())
        let name = try await embed(bridge, registry: registry)

        // Connected, it asks the UI thread for a tree, and says the window came, that it is active (it
        // had the keyboard focus before the bridge connected) and where the focus is.
        let first = try await reader.run { peer -> [[DBusValue]] in
            var heard: [[DBusValue]] = []
            while heard.count < 5 {
                let signal = try peer.next { $0.kind == .signal && $0.interface?.hasPrefix("org.a11y.atspi.Event.") == true }
                heard.append([.string(signal.path ?? ""), .string(signal.member ?? "")] + (signal.arguments() ?? []))
            }
            return heard
        }
        XCTAssertEqual(record.treesAsked, 1)
        let none = DBusValue.array(elementSignature: "{sv}", [])
        XCTAssertEqual(first, [
            [.string(Atspi.rootPath), .string("ChildrenChanged"), .string("add"), .int32(0), .int32(0),
             .variant(.structure([.string(name), .objectPath("/org/a11y/atspi/accessible/0")])), none],
            [.string("/org/a11y/atspi/accessible/0"), .string("StateChanged"), .string("active"), .int32(1), .int32(0),
             .variant(.int32(0)), none],
            [.string("/org/a11y/atspi/accessible/0"), .string("Activate"), .string(""), .int32(0), .int32(0),
             .variant(.string("")), none],
            [.string("/org/a11y/atspi/accessible/4"), .string("StateChanged"), .string("focused"), .int32(1), .int32(0),
             .variant(.int32(0)), none],
            [.string("/org/a11y/atspi/accessible/4"), .string("Focus"), .string(""), .int32(0), .int32(0), .variant(.int32(0)), none],
        ])

        // Reads, answered from the tree on the bridge's thread.
        let children = try await reader.run { peer in
            try peer.call(name, "/org/a11y/atspi/accessible/0", Atspi.accessible, "GetChildren")
        }
        XCTAssertEqual(children.first.map { if case .array(_, let items) = $0 { return items.count } else { return -1 } }, 6)
        let buttonName = try await reader.run { peer in
            try peer.call(name, "/org/a11y/atspi/accessible/2", Atspi.properties, "Get", [.string(Atspi.accessible), .string("Name")])
        }
        XCTAssertEqual(buttonName, [.variant(.string("Send"))])
        let extents = try await reader.run { peer in
            try peer.call(name, "/org/a11y/atspi/accessible/2", Atspi.component, "GetExtents", [.uint32(0)])
        }
        XCTAssertEqual(extents, [.structure([.int32(120), .int32(130), .int32(160), .int32(60)])], "the window's place added")

        // An action runs on the UI thread (the main actor, free while the reader waits), and its answer is the reply.
        let pressed = try await reader.run { peer in
            try peer.call(name, "/org/a11y/atspi/accessible/2", Atspi.action, "DoAction", [.int32(0)])
        }
        XCTAssertEqual(pressed, [.boolean(true)])
        XCTAssertEqual(record.requests, [.perform(.press, element: 2)])

        // A new tree: the switch is off and the button has the focus.
        var next = ServerFixture.tree(version: 2)
        next.root.children[2].states.remove(.checked)
        next.root.children[3].states.remove(.focused)
        next.root.children[1].states.insert(.focused)
        next.focusedID = 2
        bridge.publish(next)
        let heard = try await reader.run { peer -> [String] in
            var heard: [String] = []
            while !heard.contains("Focus") {
                let signal = try peer.next { $0.kind == .signal && $0.interface?.hasPrefix("org.a11y.atspi.Event.") == true }
                let detail = signal.arguments()?.first?.stringValue ?? ""
                let state = signal.arguments()?.dropFirst().first?.int32Value ?? -1
                heard.append(signal.member == "Focus" ? "Focus" : "\(signal.path ?? "") \(detail) \(state)")
            }
            return heard
        }
        XCTAssertEqual(heard, ["/org/a11y/atspi/accessible/3 checked 0", "/org/a11y/atspi/accessible/4 focused 0",
                               "/org/a11y/atspi/accessible/2 focused 1", "Focus"])

        // Trees published while a reader reads: every read is answered from one whole tree.
        let reads = Task.detached {
            try await reader.run { peer -> Int in
                var answered = 0
                for _ in 0..<200 {
                    let role = try peer.call(name, "/org/a11y/atspi/accessible/3", Atspi.accessible, "GetRoleName")
                    if role == [.string("toggle button")] { answered += 1 }
                }
                return answered
            }
        }
        for version in 3..<203 {
            var tree = ServerFixture.tree(version: version)
            if version.isMultiple(of: 2) { tree.root.children[2].states.remove(.checked) }
            bridge.publish(tree)
            await Task.yield()
        }
        let answered = try await reads.value
        XCTAssertEqual(answered, 200)

        // Stopped: it leaves the bus.
        bridge.stop()
        try await waitUntil("the bridge to stop") { bridge.status == .stopped }
        let after = try await reader.run { peer -> String in
            do {
                _ = try peer.call(name, "/org/a11y/atspi/accessible/0", Atspi.accessible, "GetRole", timeout: 5)
                return "answered"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(after.contains("org.freedesktop.DBus.Error.ServiceUnknown") || after.contains("NameHasNoOwner"), after)
        registry.close()
        reader.close()
    }

    func testACallWaitingForTheUIThreadTimesOutAndOthersAreAnsweredMeanwhile() async throws {
        let bus = try PrivateBus()
        let registry = try OffMain("registry") { try BusPeer(address: bus.address) }
        try await registry.run { try $0.requestName(Atspi.registryName) }
        let record = UIRecord()
        // A UI thread that never runs what it is sent.
        let bridge = makeBridge(bus: bus, record: record, tree: ServerFixture.tree(), uiTimeout: 1, answering: false)
        let name = try await embed(bridge, registry: registry)
        bridge.publish(ServerFixture.tree())
        let waiting = try OffMain("waiting reader") { try BusPeer(address: bus.address) }
        let reader = try OffMain("reader") { try BusPeer(address: bus.address) }
        try await reader.run { peer in
            _ = try peer.call(name, "/org/a11y/atspi/accessible/0", Atspi.accessible, "GetRole")
        }
        let started = Date()
        let pressed = Task.detached { () -> (String, Double) in
            let outcome = try await waiting.run { peer -> String in
                do {
                    _ = try peer.call(name, "/org/a11y/atspi/accessible/2", Atspi.action, "DoAction", [.int32(0)])
                    return "answered"
                } catch {
                    return "\(error)"
                }
            }
            return (outcome, Date().timeIntervalSince(started))
        }
        // While the press waits, reads are answered at once.
        var quick: [Double] = []
        for _ in 0..<20 {
            let before = Date()
            let role = try await reader.run { peer in try peer.call(name, "/org/a11y/atspi/accessible/2", Atspi.accessible, "GetRole") }
            XCTAssertEqual(role, [.uint32(43)])
            quick.append(Date().timeIntervalSince(before))
        }
        let (outcome, waited) = try await pressed.value
        XCTAssertTrue(outcome.contains("org.freedesktop.DBus.Error.TimedOut"), outcome)
        XCTAssertGreaterThanOrEqual(waited, 0.9, "the reply waited for the UI thread's time-out")
        XCTAssertLessThan(waited, 5)
        XCTAssertLessThan(quick.max() ?? 0, 0.9, "reads were not held behind the waiting press")
        XCTAssertEqual(record.requests, [], "the UI thread never ran")
        bridge.stop()
        registry.close()
        reader.close()
        waiting.close()
    }

    func testWithoutABusOrARegistryItSaysWhyAndStops() async throws {
        let bus = try PrivateBus()
        let cases: [([String: String], String)] = [
            ([:], "no session bus"),
            (["DBUS_SESSION_BUS_ADDRESS": bus.address], "the session bus has no accessibility bus"),
            (["AT_SPI_BUS_ADDRESS": bus.address], "no AT-SPI registry"),
            (["AT_SPI_BUS_ADDRESS": "unix:path=/nonexistent/tessera-bus"], "cannot open the accessibility bus"),
        ]
        for (environment, reason) in cases {
            let bridge = AtspiBridge(
                configuration: AtspiBridge.Configuration(applicationName: "Nowhere", environment: environment, connectTimeout: 2),
                windowPlacement: nil,
                ui: AtspiBridge.UIPort(post: { _ in }, answer: { _ in .done(false) }, publishTree: {}))
            XCTAssertEqual(bridge.status, .idle)
            bridge.start()
            try await waitUntil("the bridge to give up (\(reason))") {
                if case .unavailable = bridge.status { return true }
                return false
            }
            guard case .unavailable(let said) = bridge.status else { continue }
            XCTAssertTrue(said.contains(reason), "\(environment): \(said)")
            XCTAssertFalse(bridge.isConnected)
            // Publishing to a bridge that is not connected is dropped, and stopping it is safe.
            bridge.publish(ServerFixture.tree())
            bridge.stop()
        }
    }

    func testTheEnvironmentAndTheConfigurationTurnItOff() async throws {
        XCTAssertFalse(AtspiBridge.isDisabled(by: [:]))
        XCTAssertTrue(AtspiBridge.isDisabled(by: ["TESSERA_NO_ACCESSIBILITY": "1"]))
        XCTAssertTrue(AtspiBridge.isDisabled(by: ["NO_AT_BRIDGE": "1"]))
        XCTAssertFalse(AtspiBridge.isDisabled(by: ["NO_AT_BRIDGE": "0", "TESSERA_NO_ACCESSIBILITY": ""]))
        var configuration = Application.Configuration.headless(size: Size(width: 100, height: 100))
        configuration.accessibility = false
        let off = try Application(configuration: configuration, rootNode: Node())
        XCTAssertNil(off.accessibilityBridge)
        off.close()
        configuration.accessibility = true
        let on = try Application(configuration: configuration, rootNode: Node())
        if AtspiBridge.isDisabled() {
            XCTAssertNil(on.accessibilityBridge, "the environment turned it off")
        } else {
            XCTAssertNotNil(on.accessibilityBridge)
            XCTAssertNotEqual(on.accessibilityBridge?.status, .idle, "started with the application")
        }
        on.close()
    }

    /// A change a screen reader reads that need not show (a label, a value) is published: the app at
    /// rest runs a frame for it, and a screen reader asking afterwards reads the new text.
    func testALabelOrValueChangedAloneIsPublished() async throws {
        let bus = try PrivateBus()
        let registry = try OffMain("registry") { try BusPeer(address: bus.address) }
        try await registry.run { try $0.requestName(Atspi.registryName) }
        var configuration = Application.Configuration.headless(size: Size(width: 200, height: 100))
        configuration.accessibility = false
        let button = ButtonNode(title: "Send")
        let app = try Application(configuration: configuration, rootNode: button)
        defer { app.close() }
        let publisher = AtspiPublisher(host: app.host, title: "Label check", windowPlacement: nil,
                                       environment: ["AT_SPI_BUS_ADDRESS": bus.address])
        defer { publisher.stop() }
        app.onFrame = { [weak publisher] record in publisher?.frameDidRun(record, hadEvents: false) }
        let name = try await embed(publisher.bridge, registry: registry)
        try app.settle()
        app.frame()
        let reader = try OffMain("reader") { try BusPeer(address: bus.address) }
        func buttonName() async throws -> [DBusValue] {
            try await reader.run { peer in
                try peer.call(name, "/org/a11y/atspi/accessible/\(button.accessibilityIdentifier)", Atspi.properties, "Get",
                              [.string(Atspi.accessible), .string("Name")])
            }
        }
        let first = try await buttonName()
        XCTAssertEqual(first, [.variant(.string("Send"))])
        XCTAssertFalse(app.host.needsFrame, "at rest")

        // Set from another thread, as a node's properties may be: nothing on screen changes.
        let published = publisher.publishedCount
        await Task.detached { button.accessibilityLabel = "Send the message" }.value
        XCTAssertTrue(app.host.needsFrame, "the change asks for a frame")
        app.frame()
        XCTAssertEqual(publisher.publishedCount, published + 1, "a new tree for it")
        // The bridge's thread takes the tree in; a screen reader then reads the new name.
        var read = try await buttonName()
        let deadline = Date(timeIntervalSinceNow: 10)
        while read != [.variant(.string("Send the message"))] && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
            read = try await buttonName()
        }
        XCTAssertEqual(read, [.variant(.string("Send the message"))])
        XCTAssertFalse(app.host.needsFrame, "and at rest again")
    }
}

/// The bridge, reached weakly from its own UI port.
@MainActor
private final class BridgeBox {
    weak var bridge: AtspiBridge?
}
