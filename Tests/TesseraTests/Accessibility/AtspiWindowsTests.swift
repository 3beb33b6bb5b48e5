import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// A second window's tree, as the publisher names it: the window element (the id of the first
/// window added) holding a label and a button.
@MainActor
private enum SecondWindow {
    static let id = AtspiPublisher.windowID(number: 1)

    static func tree(title: String = "Second", focused: Bool = false) -> AccessibilityTree {
        let children = [
            AccessibilityElement(id: 20, role: .staticText, label: "Second screen", states: [.showing],
                                 frame: Rect(x: 5, y: 5, width: 100, height: 20)),
            AccessibilityElement(id: 21, role: .button, label: "Press", states: focused ? [.focusable, .focused, .showing] : [.focusable, .showing],
                                 frame: Rect(x: 5, y: 30, width: 60, height: 30), actions: [.press]),
        ]
        let root = AccessibilityElement(id: id, role: .window, label: title, states: [.showing],
                                        frame: Rect(x: 0, y: 0, width: 200, height: 100), children: children)
        return AccessibilityTree(root: root, focusedID: focused ? 21 : nil, version: 1)
    }
}

/// The buttons pressed, by window. - Thread: main
@MainActor
private final class Presses {
    var names: [String] = []
}

/// Screen readers see every window of an application: the application object holds one frame per
/// window, in order, each answering from its own tree, placed on the screen by its own window and
/// active by its own focus; requests reach the window that shows the element; windows that open and
/// close are announced.
@MainActor
final class AtspiWindowsTests: XCTestCase {
    // MARK: Without a bus

    func testTheSnapshotIndexesEveryWindowsTree() async {
        let snapshot = AtspiSnapshot(trees: [ServerFixture.tree(), SecondWindow.tree()])
        XCTAssertEqual(snapshot.windowIDs, [0, SecondWindow.id])
        XCTAssertEqual(snapshot.childCount(of: .application), 2)
        XCTAssertEqual(snapshot.child(of: .application, at: 0), .element(0))
        XCTAssertEqual(snapshot.child(of: .application, at: 1), .element(SecondWindow.id))
        XCTAssertNil(snapshot.child(of: .application, at: 2))
        XCTAssertEqual(snapshot.parent(of: SecondWindow.id), .application)
        XCTAssertEqual(snapshot.entry(SecondWindow.id)?.indexInParent, 1)
        XCTAssertEqual(snapshot.entry(0)?.indexInParent, 0)
        XCTAssertEqual(snapshot.childCount(of: .element(SecondWindow.id)), 2)
        XCTAssertEqual(snapshot.child(of: .element(SecondWindow.id), at: 1), .element(21))
        XCTAssertEqual(snapshot.parent(of: 20), .element(SecondWindow.id))
        XCTAssertEqual(snapshot.parent(of: 21), .element(SecondWindow.id))
        XCTAssertEqual(snapshot.entry(21)?.indexInParent, 1)
        XCTAssertEqual(snapshot.parent(of: 2), .element(0), "the first window's elements stay its")
        XCTAssertEqual(snapshot.windowID(containing: 21), SecondWindow.id)
        XCTAssertEqual(snapshot.windowID(containing: 2), 0)
        XCTAssertEqual(snapshot.windowID(containing: AccessibilityElement.placeholderID(row: 50, list: 6)), 0, "a list's row: its list's window")
        XCTAssertNil(snapshot.windowID(containing: 99))
        XCTAssertTrue(snapshot.isWindow(.element(SecondWindow.id)))
        XCTAssertFalse(snapshot.isWindow(.element(21)))

        // The first window gone: the second is the application's first child.
        let alone = AtspiSnapshot(trees: [SecondWindow.tree()])
        XCTAssertEqual(alone.child(of: .application, at: 0), .element(SecondWindow.id))
        XCTAssertEqual(alone.entry(SecondWindow.id)?.indexInParent, 0)
        XCTAssertNil(alone.entry(2))
    }

    func testWindowIDsAreNoNodesLinksOrRows() async {
        let ids = (1...5).map(AtspiPublisher.windowID(number:))
        XCTAssertEqual(AtspiPublisher.windowID(number: 0), 0)
        XCTAssertEqual(Set(ids).count, 5)
        for id in ids {
            XCTAssertLessThan(id, 0, "no node's id")
            XCTAssertNil(AccessibilityElement.placeholderRow(ofID: id), "no list's row")
            XCTAssertEqual(AtspiObject(path: AtspiObject.element(id).path), .element(id))
        }
    }

    func testTheServerAnswersForEachWindow() async {
        let server = ServerFixture.server(tree: nil)
        server.placements = [
            0: WindowPlacement(WindowPlacement.State(origin: Point(x: 100, y: 50), unitsPerPoint: 2, isActive: false)),
            SecondWindow.id: WindowPlacement(WindowPlacement.State(origin: Point(x: 700, y: 400), unitsPerPoint: 1, isActive: true)),
        ]
        server.replaceSnapshot(AtspiSnapshot(trees: [ServerFixture.tree(), SecondWindow.tree()]))
        func call(_ object: AtspiObject, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) -> AtspiOutcome {
            server.handle(AtspiCall(path: object.path, interface: interface, member: member, arguments: arguments))
        }
        func reply(_ outcome: AtspiOutcome, file: StaticString = #filePath, line: UInt = #line) -> [DBusValue] {
            guard case .reply(let values) = outcome else {
                XCTFail("expected a reply, got \(outcome)", file: file, line: line)
                return []
            }
            return values
        }
        let second = AtspiObject.element(SecondWindow.id)
        XCTAssertEqual(reply(call(.application, Atspi.accessible, "GetChildren")),
                       [.array(elementSignature: "(so)", [server.reference(.element(0)), server.reference(second)])])
        XCTAssertEqual(reply(call(.application, Atspi.properties, "Get", [.string(Atspi.accessible), .string("ChildCount")])),
                       [.variant(.int32(2))])
        XCTAssertEqual(reply(call(.application, Atspi.accessible, "GetChildAtIndex", [.int32(1)])), [server.reference(second)])
        XCTAssertEqual(reply(call(second, Atspi.properties, "Get", [.string(Atspi.accessible), .string("Name")])),
                       [.variant(.string("Second"))])
        XCTAssertEqual(reply(call(.element(0), Atspi.properties, "Get", [.string(Atspi.accessible), .string("Name")])),
                       [.variant(.string("Window"))])
        XCTAssertEqual(reply(call(second, Atspi.accessible, "GetIndexInParent")), [.int32(1)])
        XCTAssertEqual(reply(call(second, Atspi.accessible, "GetRole")), [.uint32(AccessibilityRole.window.atspiRole)])
        XCTAssertEqual(reply(call(.element(21), Atspi.properties, "Get", [.string(Atspi.accessible), .string("Parent")])),
                       [.variant(server.reference(second))])
        XCTAssertEqual(reply(call(second, Atspi.component, "GetLayer")), [.uint32(Atspi.layerWindow)])

        // Each window's elements are placed by their own window.
        XCTAssertEqual(reply(call(.element(21), Atspi.component, "GetExtents", [.uint32(0)])),
                       [.structure([.int32(705), .int32(430), .int32(60), .int32(30)])])
        XCTAssertEqual(reply(call(.element(2), Atspi.component, "GetExtents", [.uint32(0)])),
                       [.structure([.int32(120), .int32(130), .int32(160), .int32(60)])])

        // Each frame is active by its own window's focus.
        func isActive(_ object: AtspiObject) -> Bool {
            guard case .array(_, let words)? = reply(call(object, Atspi.accessible, "GetState")).first,
                  let first = words.first?.uint32Value else { return false }
            return first & (UInt32(1) << UInt32(AtspiState.active.rawValue)) != 0
        }
        XCTAssertTrue(isActive(second))
        XCTAssertFalse(isActive(.element(0)))

        // A press in the second window goes to the UI thread for that window.
        guard case .needsUI(let request, _) = call(.element(21), Atspi.action, "DoAction", [.int32(0)]) else {
            return XCTFail("DoAction did not ask the UI thread")
        }
        XCTAssertEqual(request, .perform(.press, element: 21))
        XCTAssertEqual(server.window(of: request), SecondWindow.id)
        XCTAssertEqual(server.window(of: .perform(.press, element: 2)), 0)
        XCTAssertEqual(server.window(of: .placeholder(row: 40, list: 6)), 0)
        XCTAssertNil(server.window(of: .focus(element: 99)))

        // The cache holds both windows' elements.
        guard case .array(_, let items)? = reply(server.handle(AtspiCall(path: Atspi.cachePath, interface: Atspi.cache,
                                                                        member: "GetItems", arguments: []))).first else {
            return XCTFail("no cache items")
        }
        XCTAssertEqual(items.count, 9 + 3, "the first window, its six elements and two rows; the second and its two")
    }

    func testWindowsOpeningAndClosingAreAnnounced() async {
        let one = AtspiSnapshot(trees: [ServerFixture.tree()])
        let two = AtspiSnapshot(trees: [ServerFixture.tree(), SecondWindow.tree(focused: true)])
        XCTAssertEqual(AtspiEvents.signals(from: one, to: two), [
            .childrenChanged(.application, added: true, index: 1, child: .element(SecondWindow.id)),
        ] + AtspiEvents.focusSignals(to: .element(21)))
        XCTAssertEqual(AtspiEvents.signals(from: two, to: one), [
            .childrenChanged(.application, added: false, index: 1, child: .element(SecondWindow.id)),
        ])
        // The first window closed: the second stays, now first.
        XCTAssertEqual(AtspiEvents.signals(from: two, to: AtspiSnapshot(trees: [SecondWindow.tree(focused: true)])), [
            .childrenChanged(.application, added: false, index: 0, child: .element(0)),
        ])
        // A change in the second window: its events, none of the first's; a renamed window says so.
        let renamed = AtspiSnapshot(trees: [ServerFixture.tree(), SecondWindow.tree(title: "Second (1)", focused: false)])
        XCTAssertEqual(AtspiEvents.signals(from: two, to: renamed), [
            .propertyChanged(.element(SecondWindow.id), "accessible-name", .string("Second (1)")),
            .stateChanged(.element(21), .focused, false),
        ])
        XCTAssertEqual(AtspiEvents.signals(from: two, to: renamed, changed: [0]), [], "only the windows named are compared")
    }

    // MARK: On a bus

    /// Polls `condition` on the main actor, running the app's frames, until it holds or `timeout`
    /// seconds pass.
    private func pump(_ app: Application, _ what: String, timeout: Double = 10, until condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            guard Date() < deadline else { throw DBusFailure("timed out waiting for \(what)") }
            for window in app.windows { window.frame() }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    /// An app of two windows on a private bus, with the test as the registry and as a screen reader:
    /// the application holds two frames, each with its title and its own elements; a button of the
    /// second window pressed through its action runs in that window; closing the second leaves one
    /// frame, and the reader hears it go.
    func testAScreenReaderSeesBothWindowsAndPressesInTheSecond() async throws {
        let bus = try PrivateBus()
        let registry = try OffMain("registry") { try BusPeer(address: bus.address) }
        try await registry.run { try $0.requestName(Atspi.registryName) }
        let reader = try OffMain("reader") { try BusPeer(address: bus.address) }
        try await reader.run { try $0.addMatch("type='signal',interface='\(Atspi.eventObject)'") }

        var configuration = Application.Configuration.headless(size: Size(width: 200, height: 120))
        configuration.accessibility = false
        let pressed = Presses()
        let mainButton = ButtonNode(title: "Main press")
        mainButton.addTarget(for: .primaryActionTriggered) { _, _ in pressed.names.append("main") }
        let app = try Application(configuration: configuration, rootNode: mainButton)
        defer { app.close() }
        let secondButton = ButtonNode(title: "Second press")
        secondButton.addTarget(for: .primaryActionTriggered) { [weak secondButton] _, _ in
            pressed.names.append("second")
            secondButton?.setTitle("Second pressed")
        }
        let second = try app.openWindow(configuration: .init(title: "Second", size: Size(width: 160, height: 90), scale: 1),
                                        rootController: NodeController(node: secondButton))
        let publisher = AtspiPublisher(host: app.host, title: "Main", windowPlacement: nil,
                                       environment: ["AT_SPI_BUS_ADDRESS": bus.address])
        defer { publisher.stop() }
        publisher.addWindow(host: second.host, title: "Second",
                            windowPlacement: WindowPlacement(WindowPlacement.State(origin: Point(x: 300, y: 200))))
        app.onFrame = { [weak publisher] record in publisher?.frameDidRun(record, hadEvents: false) }
        second.onFrame = { [weak publisher, weak host = second.host] record in
            if let host { publisher?.frameDidRun(record, hadEvents: false, host: host) }
        }
        XCTAssertEqual(publisher.windowID(of: second.host), SecondWindow.id)
        XCTAssertEqual(publisher.bridge.windows.map(\.id), [0, SecondWindow.id])

        publisher.start()
        try await registry.run { peer in
            let call = try peer.next { $0.kind == .methodCall && $0.member == "Embed" }
            try peer.reply(to: call, [.structure([.string(peer.name), .objectPath(Atspi.rootPath)])])
        }
        // Connected, the bridge asks the UI thread for the trees: a frame runs the request.
        try await pump(app, "the bridge to connect and publish") { publisher.bridge.isConnected && publisher.publishedCount >= 2 }
        guard case .connected(let name) = publisher.bridge.status else { return XCTFail("not connected: \(publisher.bridge.status)") }

        func get(_ path: String, _ property: String) async throws -> DBusValue? {
            try await reader.run { peer in
                try peer.call(name, path, Atspi.properties, "Get", [.string(Atspi.accessible), .string(property)]).first
            }
        }
        let secondPath = AtspiObject.element(SecondWindow.id).path
        var count = try await get(Atspi.rootPath, "ChildCount")
        let deadline = Date(timeIntervalSinceNow: 10)
        while count != .variant(.int32(2)) && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
            count = try await get(Atspi.rootPath, "ChildCount")
        }
        XCTAssertEqual(count, .variant(.int32(2)), "two frames under the application")
        let frames = try await reader.run { peer in try peer.call(name, Atspi.rootPath, Atspi.accessible, "GetChildren") }
        XCTAssertEqual(frames, [.array(elementSignature: "(so)", [
            .structure([.string(name), .objectPath(AtspiObject.element(0).path)]),
            .structure([.string(name), .objectPath(secondPath)]),
        ])])
        let firstTitle = try await get(AtspiObject.element(0).path, "Name")
        let secondTitle = try await get(secondPath, "Name")
        XCTAssertEqual(firstTitle, .variant(.string("Main")))
        XCTAssertEqual(secondTitle, .variant(.string("Second")))
        let secondRole = try await reader.run { peer in try peer.call(name, secondPath, Atspi.accessible, "GetRoleName") }
        XCTAssertEqual(secondRole, [.string("frame")])

        // Each frame holds its own window's elements.
        let secondButtonPath = AtspiObject.element(secondButton.accessibilityIdentifier).path
        let mainButtonPath = AtspiObject.element(mainButton.accessibilityIdentifier).path
        let secondChildren = try await reader.run { peer in try peer.call(name, secondPath, Atspi.accessible, "GetChildren") }
        XCTAssertEqual(secondChildren, [.array(elementSignature: "(so)", [.structure([.string(name), .objectPath(secondButtonPath)])])])
        let mainChildren = try await reader.run { peer in
            try peer.call(name, AtspiObject.element(0).path, Atspi.accessible, "GetChildren")
        }
        XCTAssertEqual(mainChildren, [.array(elementSignature: "(so)", [.structure([.string(name), .objectPath(mainButtonPath)])])])
        let parent = try await get(secondButtonPath, "Parent")
        XCTAssertEqual(parent, .variant(.structure([.string(name), .objectPath(secondPath)])))
        let buttonName = try await get(secondButtonPath, "Name")
        XCTAssertEqual(buttonName, .variant(.string("Second press")))
        let extents = try await reader.run { peer in try peer.call(name, secondButtonPath, Atspi.component, "GetExtents", [.uint32(0)]) }
        guard case .structure(let rectangle)? = extents.first, rectangle.count == 4 else { return XCTFail("no extents: \(extents)") }
        XCTAssertEqual(rectangle[0].int32Value.map { $0 >= 300 }, true, "placed by the second window: \(rectangle)")
        XCTAssertEqual(rectangle[1].int32Value.map { $0 >= 200 }, true, "placed by the second window: \(rectangle)")

        // At rest, neither window builds a tree, frames or not.
        try await pump(app, "both windows to come to rest") { !app.host.needsFrame && !second.host.needsFrame }
        for window in app.windows { window.frame() }
        let atRest = publisher.publishedCount
        for _ in 0..<5 {
            for window in app.windows { window.frame() }
        }
        XCTAssertEqual(publisher.publishedCount, atRest, "no tree at rest")

        // The second window's button pressed through its action: it runs there, on the UI thread,
        // while frames run.
        let press = Task.detached {
            try await reader.run { peer in try peer.call(name, secondButtonPath, Atspi.action, "DoAction", [.int32(0)]) }
        }
        try await pump(app, "the press to run") { !pressed.names.isEmpty }
        let answer = try await press.value
        XCTAssertEqual(answer, [.boolean(true)])
        XCTAssertEqual(pressed.names, ["second"], "the second window's button, and only it")
        // What the press changed in the second window reaches the reader, whichever window's frame ran it.
        var renamed = try await get(secondButtonPath, "Name")
        let renameDeadline = Date(timeIntervalSinceNow: 10)
        while renamed != .variant(.string("Second pressed")) && Date() < renameDeadline {
            for window in app.windows { window.frame() }
            try await Task.sleep(nanoseconds: 5_000_000)
            renamed = try await get(secondButtonPath, "Name")
        }
        XCTAssertEqual(renamed, .variant(.string("Second pressed")))

        // The second window closed: one frame is left, and the reader hears the second go.
        second.close()
        publisher.removeWindow(host: second.host)
        XCTAssertEqual(publisher.bridge.windows.map(\.id), [0])
        let heard = try await reader.run { peer -> [DBusValue] in
            let signal = try peer.next {
                $0.kind == .signal && $0.member == "ChildrenChanged" && $0.path == Atspi.rootPath
                    && $0.arguments()?.first?.stringValue == "remove"
            }
            return signal.arguments() ?? []
        }
        XCTAssertEqual(heard.dropFirst().first, .int32(1))
        XCTAssertEqual(heard.dropFirst(3).first, .variant(.structure([.string(name), .objectPath(secondPath)])))
        let left = try await get(Atspi.rootPath, "ChildCount")
        XCTAssertEqual(left, .variant(.int32(1)))
        let gone = try await reader.run { peer -> String in
            do {
                _ = try peer.call(name, secondPath, Atspi.accessible, "GetRole")
                return "answered"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(gone.contains("UnknownObject"), gone)
        registry.close()
        reader.close()
    }

    /// The application tells its publisher about the windows it opens and closes, whether or not a
    /// screen reader is connected.
    func testTheApplicationListsItsWindowsToTheBridge() async throws {
        var configuration = Application.Configuration.headless(size: Size(width: 100, height: 80))
        configuration.accessibility = true
        let app = try Application(configuration: configuration, rootNode: Node())
        defer { app.close() }
        guard let bridge = app.accessibilityBridge else { throw XCTSkip("the environment turns accessibility off") }
        XCTAssertEqual(bridge.windows.map(\.id), [0])
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                        rootController: nil)
        let third = try app.openWindow(configuration: .init(title: "third", size: Size(width: 70, height: 50), scale: 1),
                                       rootController: nil)
        XCTAssertEqual(bridge.windows.map(\.id), [0, AtspiPublisher.windowID(number: 1), AtspiPublisher.windowID(number: 2)])
        second.setTitle("second, renamed")
        second.close()
        XCTAssertEqual(bridge.windows.map(\.id), [0, AtspiPublisher.windowID(number: 2)])
        app.mainWindow.close()
        XCTAssertEqual(bridge.windows.map(\.id), [AtspiPublisher.windowID(number: 2)], "the main window gone, the third is the first")
        third.close()
        XCTAssertEqual(bridge.windows.map(\.id), [])
    }
}
