import Foundation
import Tessera
import TestSupport
import XCTest
import TesseraDBus
@testable import TesseraPortal

/// The desktop portals on a private bus (a `dbus-daemon` of the test's own) against a fake portal:
/// OpenURI with its arguments and a tapped link going there, FileChooser's request and response
/// (open with filters and the parent window, cancel, save, folder), notifications with their
/// actions reaching the app, the fallbacks (xdg-open, the notification server, no bus at all), and
/// hostile answers (wrong types, no Response, huge and undecodable URIs).
@MainActor
final class DesktopPortalTests: XCTestCase {
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

    // MARK: OpenURI

    func testOpenURIReachesThePortalWithItsArguments() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let opened = results.expectOne("opened")
        portal.openURI(URL(string: "https://example.com/a?b=1#c")!, parentWindow: "x11:1e00004") { results.take($0) }
        let arguments = try await fake.run { fake -> [DBusValue] in
            let call = try fake.nextCall("OpenURI")
            XCTAssertEqual(call.interface, "org.freedesktop.portal.OpenURI")
            XCTAssertEqual(call.path, FakeDesktopPortal.portalPath)
            XCTAssertEqual(call.signature, "ssa{sv}")
            let path = try fake.takeRequest(call, optionsAt: 2)
            try fake.respond(path, code: 0)
            return call.arguments() ?? []
        }
        XCTAssertEqual(arguments.first, .string("x11:1e00004"))
        XCTAssertEqual(arguments.dropFirst().first, .string("https://example.com/a?b=1#c"))
        XCTAssertEqual(FakeDesktopPortal.options(arguments, at: 2)["handle_token"]?.stringValue?.hasPrefix("tessera"), true)
        await fulfillment(of: [opened], timeout: 10)
        XCTAssertEqual(results.last, .success(.opened(.portal)))
        XCTAssertEqual(portal.status, .connected)

        // The user dismissed the portal's choice of app: Response 1.
        let cancelled = results.expectOne("cancelled")
        portal.openURI(URL(string: "mailto:ada@example.com")!) { results.take($0) }
        try await fake.run { fake in
            let call = try fake.nextCall("OpenURI")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 1)
        }
        await fulfillment(of: [cancelled], timeout: 10)
        XCTAssertEqual(results.last, .success(.cancelled))
    }

    /// The link policy: http, https and mailto go to the portal; file: and odd schemes need the app.
    func testOpenLinkOpensOnlyTheAllowedSchemes() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<OpenURIOutcome, PortalError>>()
        for (link, scheme) in [("file:///etc/passwd", "file"), ("javascript:alert(1)", "javascript"), ("no scheme at all", "")] {
            let refused = results.expectOne(link)
            portal.openLink(link) { results.take($0) }
            await fulfillment(of: [refused], timeout: 10)
            XCTAssertEqual(results.last, .failure(.schemeNotAllowed(scheme)), link)
        }
        XCTAssertEqual(portal.status, .idle, "nothing was sent: the portal's thread never started")
        let opened = results.expectOne("https")
        portal.openLink("HTTPS://example.com/") { results.take($0) }
        try await fake.run { fake in
            let call = try fake.nextCall("OpenURI")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0)
        }
        await fulfillment(of: [opened], timeout: 10)
        XCTAssertEqual(results.last, .success(.opened(.portal)))
    }

    /// A link tapped in a text node without a handler goes to the portal, as the app's default.
    func testATappedLinkWithoutAHandlerOpensThroughThePortal() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        var configuration = Application.Configuration.headless(size: Size(width: 300, height: 80))
        configuration.accessibility = false
        configuration.opensLinks = true
        configuration.portalConfiguration = DesktopPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let text = TextNode(attributedText: AttributedText(runs: [
            TextRun("Read the docs", attributes: TextAttributes(font: .system(size: 20), link: "https://example.com/docs")),
        ]))
        let screen = InsetScreen(text)
        let app = try Application(configuration: configuration, rootNode: screen)
        defer { app.close() }
        try app.settle()
        let answered = Task.detached {
            try await fake.run { fake -> [DBusValue] in
                let call = try fake.nextCall("OpenURI")
                try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0)
                return call.arguments() ?? []
            }
        }
        let point = Point(x: 30, y: 20)
        app.frame(events: [.pointerDown(point, button: 1), .pointerUp(point, button: 1)])
        let arguments = try await answered.value
        XCTAssertEqual(arguments.dropFirst().first, .string("https://example.com/docs"))
        XCTAssertEqual(arguments.first, .string(""), "headless: no parent window")
        XCTAssertTrue(app.opensLinks, "as configured")
        app.close()  // one application at a time
        let plain = try Application(configuration: .headless(size: Size(width: 40, height: 40)), rootNode: Node())
        XCTAssertFalse(plain.opensLinks, "headless apps open no links unless they say so")
        plain.close()
    }

    // MARK: FileChooser

    func testOpenFileSendsFiltersAndTheParentWindowAndReturnsTheChosenFiles() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let chosen = results.expectOne("chosen")
        let text = FileFilter(name: "Text", patterns: [.glob("*.txt"), .mimeType("text/plain")])
        let options = FileChooserOptions(mode: .open, title: "Attach", acceptLabel: "Attach", allowsMultipleSelection: true,
                                         filters: [.images, text], currentFilter: text,
                                         currentFolder: URL(fileURLWithPath: "/tmp/photos"))
        portal.chooseFiles(options, parentWindow: "x11:3a0000f") { results.take($0) }
        let call = try await fake.run { fake -> [DBusValue] in
            let call = try fake.nextCall("OpenFile")
            XCTAssertEqual(call.interface, "org.freedesktop.portal.FileChooser")
            XCTAssertEqual(call.signature, "ssa{sv}")
            let path = try fake.takeRequest(call, optionsAt: 2)
            try fake.respond(path, code: 0, results: [
                ("uris", FakeDesktopPortal.uris(["file:///tmp/photos/a%20b.png", "file://localhost/tmp/photos/%C3%A9t%C3%A9.jpg"])),
                ("current_filter", .structure([.string("Text"), .array(elementSignature: "(us)", [])])),
            ])
            return call.arguments() ?? []
        }
        XCTAssertEqual(call.first, .string("x11:3a0000f"))
        XCTAssertEqual(call.dropFirst().first, .string("Attach"))
        let sent = FakeDesktopPortal.options(call, at: 2)
        XCTAssertEqual(sent["multiple"], .boolean(true))
        XCTAssertEqual(sent["modal"], .boolean(true))
        XCTAssertEqual(sent["accept_label"], .string("Attach"))
        XCTAssertNil(sent["directory"])
        XCTAssertEqual(sent["filters"]?.signature, "a(sa(us))")
        XCTAssertEqual(sent["filters"], .array(elementSignature: "(sa(us))", [
            PortalMessages.filterValue(.images),
            .structure([.string("Text"), .array(elementSignature: "(us)", [.structure([.uint32(0), .string("*.txt")]),
                                                                          .structure([.uint32(1), .string("text/plain")])])]),
        ]))
        XCTAssertEqual(sent["current_filter"]?.signature, "(sa(us))")
        XCTAssertEqual(sent["current_folder"], .array(elementSignature: "y", (Array("/tmp/photos".utf8) + [0]).map { .byte($0) }))
        await fulfillment(of: [chosen], timeout: 10)
        XCTAssertEqual(try results.last?.get()?.map(\.path), ["/tmp/photos/a b.png", "/tmp/photos/été.jpg"])
    }

    func testCancelSaveAndFolderRequests() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()

        let cancelled = results.expectOne("cancelled")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        try await fake.run { fake in
            let call = try fake.nextCall("OpenFile")
            XCTAssertEqual(call.arguments()?.dropFirst().first, .string("Open File"), "the mode's title")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 1)
        }
        await fulfillment(of: [cancelled], timeout: 10)
        XCTAssertEqual(try results.last?.get(), .some(nil), "cancel: nil")

        let saved = results.expectOne("saved")
        portal.chooseFiles(FileChooserOptions(mode: .save, suggestedName: "notes.txt")) { results.take($0) }
        let saveOptions = try await fake.run { fake -> [String: DBusValue] in
            let call = try fake.nextCall("SaveFile")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0,
                             results: [("uris", FakeDesktopPortal.uris(["file:///home/ada/notes.txt"]))])
            return FakeDesktopPortal.options(call.arguments() ?? [], at: 2)
        }
        XCTAssertEqual(saveOptions["current_name"], .string("notes.txt"))
        XCTAssertNil(saveOptions["multiple"])
        await fulfillment(of: [saved], timeout: 10)
        XCTAssertEqual(try results.last?.get()?.map(\.path), ["/home/ada/notes.txt"])

        let folder = results.expectOne("folder")
        portal.chooseFiles(FileChooserOptions(mode: .folder)) { results.take($0) }
        let folderOptions = try await fake.run { fake -> [String: DBusValue] in
            let call = try fake.nextCall("OpenFile")
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 2)
            return FakeDesktopPortal.options(call.arguments() ?? [], at: 2)
        }
        XCTAssertEqual(folderOptions["directory"], .boolean(true))
        await fulfillment(of: [folder], timeout: 10)
        XCTAssertEqual(results.last, .failure(.failed("OpenFile ended with Response 2")))
    }

    // MARK: Hostile portals

    /// A portal that takes the request and never answers: the request times out, the portal is told
    /// to close it, and the app gets `timedOut`.
    func testAResponseNeverSentTimesOutAndClosesTheRequest() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus, responseTimeout: 0.5)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let timedOut = results.expectOne("timed out")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        let (handle, closed) = try await fake.run { fake -> (String, String?) in
            let call = try fake.nextCall("OpenFile")
            let handle = try fake.takeRequest(call, optionsAt: 2)
            let close = try fake.nextCall("Close")
            XCTAssertEqual(close.interface, "org.freedesktop.portal.Request")
            return (handle, close.path)
        }
        XCTAssertEqual(closed, handle, "the request object was closed")
        await fulfillment(of: [timedOut], timeout: 10)
        XCTAssertEqual(results.last, .failure(.timedOut(seconds: 0.5)))
    }

    /// Wrong types, huge strings, URIs that are not files of this machine or not UTF-8: each a
    /// documented error, and the portal goes on answering the next request.
    func testHostileAnswersEndWithDocumentedErrors() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()

        /// One request answered by `answer`; what the app got.
        func request(_ name: String, _ answer: @escaping @Sendable (FakeDesktopPortal, DBusMessage) throws -> Void) async throws
            -> Result<[URL]?, PortalError>? {
            let done = results.expectOne(name)
            portal.chooseFiles(FileChooserOptions()) { results.take($0) }
            try await fake.run { fake in try answer(fake, try fake.nextCall("OpenFile")) }
            await fulfillment(of: [done], timeout: 10)
            return results.last
        }
        func uris(_ list: [String]) -> @Sendable (FakeDesktopPortal, DBusMessage) throws -> Void {
            { fake, call in try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0, results: [("uris", FakeDesktopPortal.uris(list))]) }
        }

        let notAPath = try await request("a string for a handle") { fake, call in try fake.reply(to: call, [.string("/not/a/path")]) }
        XCTAssertEqual(notAPath, .failure(.malformedAnswer("OpenFile answered (s), not (o)")))
        let wrongResponse = try await request("Response (s)") { fake, call in
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0, arguments: [.string("0"), .int32(1)])
        }
        XCTAssertEqual(wrongResponse, .failure(.malformedAnswer("Response has arguments (si), not (ua{sv})")))
        let oddCode = try await request("Response 7") { fake, call in try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 7) }
        XCTAssertEqual(oddCode, .failure(.malformedAnswer("Response code 7 is not 0, 1 or 2")))
        let urisOfInts = try await request("uris ai") { fake, call in
            try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0,
                             results: [("uris", .array(elementSignature: "i", [.int32(1)]))])
        }
        XCTAssertEqual(urisOfInts, .failure(.malformedAnswer("uris is ai, not as")))
        let noURIs = try await request("no uris") { fake, call in try fake.respond(try fake.takeRequest(call, optionsAt: 2), code: 0) }
        XCTAssertEqual(noURIs, .failure(.malformedAnswer("the results have no uris")))

        let huge = "file:///" + String(repeating: "a", count: 1 << 20)
        guard case .failure(.invalidURI(let hugeReason))? = try await request("a 1 MB URI", uris([huge])) else {
            return XCTFail("a 1 MB URI was taken")
        }
        XCTAssertTrue(hugeReason.contains("the limit is 16384"), hugeReason)
        for (uri, why) in [("file:///tmp/%FF%FE.png", "is not UTF-8 once its escapes are decoded"),
                           ("file:///tmp/a%00b", "has a NUL in its path"), ("file:///tmp/a%2", "has a malformed %-escape"),
                           ("https://example.com/a.png", "is not a file:// URI of this machine"),
                           ("file://elsewhere/tmp/a.png", "is not a file:// URI of this machine")] {
            let answer = try await request(uri, uris(["file:///tmp/fine.png", uri]))
            XCTAssertEqual(answer, .failure(.invalidURI("\(uri) \(why)")), uri)
        }
        let tooMany = try await request("too many", uris(Array(repeating: "file:///a", count: DesktopPortal.maximumURICount + 1)))
        XCTAssertEqual(tooMany, .failure(.invalidURI("10001 URIs; at most 10000 are taken")))

        // A Response from another peer on the request's path is not the portal's: the bus does not
        // route it (the match names the portal as sender), and the real one still decides.
        let spoofer = try OffMain("spoofer") { try FakeDesktopPortal(address: bus.address, name: "org.example.Spoofer") }
        defer { spoofer.close() }
        let spoofed = results.expectOne("spoofed")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        let handle = try await fake.run { fake in try fake.takeRequest(try fake.nextCall("OpenFile"), optionsAt: 2) }
        try await spoofer.run { peer in
            try peer.respond(handle, code: 0, results: [("uris", FakeDesktopPortal.uris(["file:///etc/shadow"]))])
        }
        try await fake.run { fake in
            try fake.respond(handle, code: 0, results: [("uris", FakeDesktopPortal.uris(["file:///tmp/real.png"]))])
        }
        await fulfillment(of: [spoofed], timeout: 10)
        XCTAssertEqual(try results.last?.get()?.map(\.path), ["/tmp/real.png"])
        XCTAssertEqual(portal.status, .connected)
    }

    /// A portal whose call never comes back, and a bus without a portal: the in-app fallback is used
    /// (here a recording one), after the call time-out or at once.
    func testNoPortalAnswerGoesToTheInAppFallback() async throws {
        let bus = try PrivateBus()
        let silent = try makeFake(bus)
        defer { silent.close() }
        let portal = makePortal(bus: bus, callTimeout: 0.5)
        defer { portal.stop() }
        let asked = PortalResults<FileChooserOptions>()
        portal.setFileChooserFallback { options, completion in
            asked.take(options)
            completion(.success([URL(fileURLWithPath: "/tmp/from-the-app")]))
        }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let done = results.expectOne("the fallback answered")
        portal.chooseFiles(FileChooserOptions(mode: .save, suggestedName: "a.txt")) { results.take($0) }
        try await silent.run { fake in _ = try fake.nextCall("SaveFile") }  // taken, never answered
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(asked.last?.suggestedName, "a.txt")
        XCTAssertEqual(try results.last?.get()?.map(\.path), ["/tmp/from-the-app"])

        silent.close()  // the name goes with it: the bus says ServiceUnknown
        let again = results.expectOne("no portal at all")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        await fulfillment(of: [again], timeout: 10)
        XCTAssertEqual(asked.all.count, 2)

        portal.setFileChooserFallback(nil)
        let none = results.expectOne("no fallback")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        await fulfillment(of: [none], timeout: 10)
        guard case .failure(.portalUnavailable(let reason))? = results.last else { return XCTFail("\(String(describing: results.last))") }
        XCTAssertEqual(reason, "org.freedesktop.DBus.Error.ServiceUnknown")
    }

    /// Requests never wait on the caller's thread: 100 file chooser requests to a portal that takes
    /// every call and never answers it return at once on the UI thread, and each ends (through the
    /// fallback, after the call time-out) on its own.
    func testRequestsToAPortalThatNeverAnswersDoNotBlockTheCaller() async throws {
        let bus = try PrivateBus()
        let silent = try makeFake(bus)
        defer { silent.close() }
        let portal = makePortal(bus: bus, callTimeout: 0.5)
        defer { portal.stop() }
        portal.setFileChooserFallback { _, completion in completion(.success(nil)) }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let count = 100  // under the private bus's default of 128 calls awaiting replies per connection
        let all = (0..<count).map { results.expectOne("request \($0)") }
        let start = MonotonicClock.nanoseconds()
        for _ in 0..<count { portal.chooseFiles(FileChooserOptions()) { results.take($0) } }
        let issued = Double(MonotonicClock.nanoseconds() - start) / 1e6
        print("portal: \(count) requests issued on the UI thread in \(String(format: "%.2f", issued)) ms")
        XCTAssertLessThan(issued, 500, "issuing requests does not wait for the bus")
        try await silent.run { fake in for _ in 0..<count { _ = try fake.nextCall("OpenFile") } }
        await fulfillment(of: all, timeout: 20)
        XCTAssertEqual(results.all.count, count)
        XCTAssertTrue(results.all.allSatisfy { (try? $0.get()) == .some(nil) }, "each ended through the fallback")
    }

    /// The bus goes away while a request waits for its `Response`: the request ends with an error
    /// (no hang), the portal says it is unavailable, and the next link goes to `xdg-open`.
    func testTheBusGoingAwayEndsWhatWaits() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let fake = try makeFake(bus!)
        defer { fake.close() }
        let folder = try TemporaryFolder("bus-gone")
        try folder.script("xdg-open", "exit 0")
        let portal = makePortal(bus: bus, environment: ["PATH": folder.url.path])
        defer { portal.stop() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        let ended = results.expectOne("ended")
        portal.chooseFiles(FileChooserOptions()) { results.take($0) }
        try await fake.run { fake in _ = try fake.takeRequest(try fake.nextCall("OpenFile"), optionsAt: 2) }
        bus = nil  // the daemon stops
        await fulfillment(of: [ended], timeout: 10)
        guard case .failure(.failed(let reason))? = results.last else { return XCTFail("\(String(describing: results.last))") }
        XCTAssertTrue(reason.contains("session bus"), reason)
        guard case .unavailable = portal.status else { return XCTFail("\(portal.status)") }
        let opened = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let done = opened.expectOne("xdg-open")
        portal.openURI(URL(string: "https://example.com/")!) { opened.take($0) }
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(opened.last, .success(.opened(.fallback)))
    }

    // MARK: OpenURI's fallback

    /// No portal on the bus: the URI goes to the `xdg-open` on PATH (a fake that records its
    /// arguments); one that fails, or none at all, is an error.
    func testWithoutAPortalLinksOpenWithXDGOpen() async throws {
        let bus = try PrivateBus()
        let folder = try TemporaryFolder("xdg-open")
        let record = folder.url.appendingPathComponent("opened").path
        try folder.script("xdg-open", "printf '%s\\n' \"$#\" \"$1\" > '\(record)'")
        let portal = makePortal(bus: bus, environment: ["PATH": folder.url.path])
        defer { portal.stop() }
        let results = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let opened = results.expectOne("xdg-open")
        let uri = "https://example.com/a b?q=$(reboot)"
        portal.openURI(URL(string: "https://example.com/a%20b?q=$(reboot)")!) { results.take($0) }
        await fulfillment(of: [opened], timeout: 10)
        XCTAssertEqual(results.last, .success(.opened(.fallback)))
        XCTAssertEqual(try String(contentsOfFile: record, encoding: .utf8), "1\n" + uri.replacingOccurrences(of: " ", with: "%20") + "\n",
                       "one argument, as given, no shell")

        try folder.script("xdg-open", "exit 3")
        let failed = results.expectOne("failing xdg-open")
        portal.openURI(URL(string: "https://example.com/")!) { results.take($0) }
        await fulfillment(of: [failed], timeout: 10)
        XCTAssertEqual(results.last, .failure(.fallbackFailed("xdg-open exited with status 3")))

        let bare = makePortal(bus: bus, environment: ["PATH": folder.url.appendingPathComponent("none").path])
        defer { bare.stop() }
        let missing = results.expectOne("no xdg-open")
        bare.openURI(URL(string: "https://example.com/")!) { results.take($0) }
        await fulfillment(of: [missing], timeout: 10)
        XCTAssertEqual(results.last, .failure(.fallbackFailed("xdg-open is not on PATH")))
    }

    /// No session bus at all: links still open (xdg-open), notifications say why they cannot.
    func testWithoutASessionBus() async throws {
        let folder = try TemporaryFolder("no-bus")
        let record = folder.url.appendingPathComponent("opened").path
        try folder.script("xdg-open", "printf '%s' \"$1\" > '\(record)'")
        let portal = makePortal(bus: nil, environment: ["PATH": folder.url.path])
        defer { portal.stop() }
        let opened = PortalResults<Result<OpenURIOutcome, PortalError>>()
        let done = opened.expectOne("opened")
        portal.openURI(URL(string: "mailto:ada@example.com")!) { opened.take($0) }
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(opened.last, .success(.opened(.fallback)))
        XCTAssertEqual(try String(contentsOfFile: record, encoding: .utf8), "mailto:ada@example.com")
        guard case .unavailable = portal.status else { return XCTFail("\(portal.status)") }

        let posted = PortalResults<Result<DesktopRoute, PortalError>>()
        let refused = posted.expectOne("no bus")
        portal.postNotification(DesktopNotification(id: "n", title: "Hi")) { posted.take($0) }
        await fulfillment(of: [refused], timeout: 10)
        guard case .failure(.noSessionBus)? = posted.last else { return XCTFail("\(String(describing: posted.last))") }
    }

    // MARK: Notifications

    func testANotificationsActionReachesTheApp() async throws {
        let bus = try PrivateBus()
        let fake = try makeFake(bus)
        defer { fake.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let actions = PortalResults<NotificationAction>()
        portal.setNotificationActionHandler { action in
            XCTAssertTrue(Thread.isMainThread, "actions reach the UI thread")
            actions.take(action)
        }
        let posted = PortalResults<Result<DesktopRoute, PortalError>>()
        let done = posted.expectOne("posted")
        let notification = DesktopNotification(id: "message-42", title: "Ada", body: "Lunch at one?",
                                               buttons: [.init(label: "Reply", action: "reply"), .init(label: "Mute", action: "mute")],
                                               defaultAction: "open", priority: .high)
        portal.postNotification(notification) { posted.take($0) }
        let arguments = try await fake.run { fake -> [DBusValue] in
            let call = try fake.nextCall("AddNotification")
            XCTAssertEqual(call.interface, "org.freedesktop.portal.Notification")
            XCTAssertEqual(call.signature, "sa{sv}")
            try fake.reply(to: call, [])
            return call.arguments() ?? []
        }
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(posted.last, .success(.portal))
        XCTAssertEqual(arguments.first, .string("message-42"))
        let sent = FakeDesktopPortal.options(arguments, at: 1)
        XCTAssertEqual(sent["title"], .string("Ada"))
        XCTAssertEqual(sent["body"], .string("Lunch at one?"))
        XCTAssertEqual(sent["priority"], .string("high"))
        XCTAssertEqual(sent["default-action"], .string("open"))
        XCTAssertEqual(sent["buttons"], .array(elementSignature: "a{sv}", [
            .stringVariantDictionary([("label", .string("Reply")), ("action", .string("reply"))]),
            .stringVariantDictionary([("label", .string("Mute")), ("action", .string("mute"))]),
        ]))

        let clicked = actions.expectOne("reply clicked")
        try await fake.run { fake in
            // A malformed signal and one with a 1 MB id first: both ignored.
            try fake.signal(path: FakeDesktopPortal.portalPath, interface: "org.freedesktop.portal.Notification",
                            member: "ActionInvoked", [.uint32(1)])
            try fake.signal(path: FakeDesktopPortal.portalPath, interface: "org.freedesktop.portal.Notification",
                            member: "ActionInvoked", [.string(String(repeating: "n", count: 1 << 20)), .string("reply"),
                                                      .array(elementSignature: "v", [])])
            try fake.signal(path: FakeDesktopPortal.portalPath, interface: "org.freedesktop.portal.Notification",
                            member: "ActionInvoked", [.string("message-42"), .string("reply"),
                                                      .array(elementSignature: "v", [.variant(.string("draft"))])])
        }
        await fulfillment(of: [clicked], timeout: 10)
        XCTAssertEqual(actions.all, [NotificationAction(notificationID: "message-42", action: "reply", parameter: "draft", route: .portal)])

        portal.removeNotification(id: "message-42")
        let removed = try await fake.run { fake in try fake.nextCall("RemoveNotification").arguments() ?? [] }
        XCTAssertEqual(removed, [.string("message-42")])

        let refused = posted.expectOne("app. action")
        portal.postNotification(DesktopNotification(id: "x", title: "x", defaultAction: "app.open")) { posted.take($0) }
        await fulfillment(of: [refused], timeout: 10)
        guard case .failure(.failed)? = posted.last else { return XCTFail("an app. action was posted") }
    }

    /// No notification portal: the notification server takes it (`Notify`), its `ActionInvoked` maps
    /// back to the app's id and action, other apps' ids are ignored, and removing closes it.
    func testWithoutAPortalNotificationsGoToTheNotificationServer() async throws {
        let bus = try PrivateBus()
        let server = try makeFake(bus, name: FakeDesktopPortal.serverName)
        defer { server.close() }
        let portal = makePortal(bus: bus)
        defer { portal.stop() }
        let actions = PortalResults<NotificationAction>()
        portal.setNotificationActionHandler { actions.take($0) }
        let posted = PortalResults<Result<DesktopRoute, PortalError>>()
        let done = posted.expectOne("posted")
        portal.postNotification(DesktopNotification(id: "message-7", title: "Grace", body: "Compiled!",
                                                    buttons: [.init(label: "Reply", action: "reply")], defaultAction: "open")) {
            posted.take($0)
        }
        let arguments = try await server.run { fake -> [DBusValue] in
            let call = try fake.nextCall("Notify")
            XCTAssertEqual(call.signature, "susssasa{sv}i")
            try fake.reply(to: call, [.uint32(7)])
            return call.arguments() ?? []
        }
        await fulfillment(of: [done], timeout: 10)
        XCTAssertEqual(posted.last, .success(.fallback))
        XCTAssertEqual(Array(arguments.prefix(5)), [.string("Tessera"), .uint32(0), .string(""), .string("Grace"), .string("Compiled!")])
        XCTAssertEqual(arguments[5], .array(elementSignature: "s", [.string("default"), .string("Open"), .string("reply"), .string("Reply")]))

        let clicked = actions.expectOne("default")
        let button = actions.expectOne("button")
        try await server.run { fake in
            let path = FakeDesktopPortal.serverPath, interface = "org.freedesktop.Notifications"
            try fake.signal(path: path, interface: interface, member: "ActionInvoked", [.uint32(99), .string("reply")])  // not ours
            try fake.signal(path: path, interface: interface, member: "ActionInvoked", [.uint32(7), .string("default")])
            try fake.signal(path: path, interface: interface, member: "ActionInvoked", [.uint32(7), .string("reply")])
        }
        await fulfillment(of: [clicked, button], timeout: 10, enforceOrder: true)
        XCTAssertEqual(actions.all, [NotificationAction(notificationID: "message-7", action: "open", route: .fallback),
                                     NotificationAction(notificationID: "message-7", action: "reply", route: .fallback)])

        portal.removeNotification(id: "message-7")
        let closed = try await server.run { fake in try fake.nextCall("CloseNotification").arguments() ?? [] }
        XCTAssertEqual(closed, [.uint32(7)])
    }
}

/// A node inset by 10 points in a screen.
private final class InsetScreen: Node, @unchecked Sendable {
    let content: Node

    init(_ content: Node) {
        self.content = content
        super.init()
        automaticallyManagesSubnodes = true
        backgroundColor = .white
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { content }.inset(10)
    }
}
