import Foundation
import TestSupport
import XCTest
import TesseraDBus

/// A fake of the desktop's portals (`org.freedesktop.portal.Desktop`: OpenURI, FileChooser,
/// Notification) or of the notification server (`org.freedesktop.Notifications`) on a test's private
/// bus: it owns the name it is given, hands the test each call it receives, answers as the test says
/// (correctly, or with whatever a hostile test gives it), and sends signals (`Response`,
/// `ActionInvoked`) on request. Lives on a serial queue of its own (`OffMain`); every wait has a
/// time-out.
final class FakeDesktopPortal {
    static let portalName = "org.freedesktop.portal.Desktop"
    static let portalPath = "/org/freedesktop/portal/desktop"
    static let serverName = "org.freedesktop.Notifications"
    static let serverPath = "/org/freedesktop/Notifications"

    let peer: BusPeer

    /// A peer owning `name` (the portal's, or the notification server's).
    init(address: String, name: String = FakeDesktopPortal.portalName) throws {
        peer = try BusPeer(address: address)
        try peer.requestName(name)
    }

    /// The next method call named `member` (other messages are dropped), or a failure after `timeout` s.
    func nextCall(_ member: String, timeout: Double = 10) throws -> DBusMessage {
        try peer.next(timeout: timeout) { $0.kind == .methodCall && $0.member == member }
    }

    /// The options dictionary (`a{sv}`) of a call's arguments at `index`, unwrapped of the variants.
    static func options(_ arguments: [DBusValue], at index: Int) -> [String: DBusValue] {
        guard index < arguments.count, case .array(_, let entries) = arguments[index] else { return [:] }
        var options: [String: DBusValue] = [:]
        for entry in entries {
            if case .dictEntry(.string(let key), .variant(let value)) = entry { options[key] = value }
        }
        return options
    }

    /// The request path the portal makes for `call`: from its sender and its `handle_token`.
    static func requestPath(for call: DBusMessage, optionsAt index: Int) -> String {
        let sender = (call.sender ?? "").drop { $0 == ":" }.replacingOccurrences(of: ".", with: "_")
        let token = options(call.arguments() ?? [], at: index)["handle_token"]?.stringValue ?? "t"
        return portalPath + "/request/" + sender + "/" + token
    }

    func reply(to call: DBusMessage, _ values: [DBusValue]) throws {
        try peer.reply(to: call, values)
        flush()
    }

    func replyError(to call: DBusMessage, _ error: DBusErrorReply) throws {
        guard let reply = call.errorReply(error) else { throw DBusFailure("cannot make the error") }
        peer.connection.send(reply)
        flush()
    }

    /// Takes a request: replies with its handle (the predicted path), which it returns.
    func takeRequest(_ call: DBusMessage, optionsAt index: Int) throws -> String {
        let path = Self.requestPath(for: call, optionsAt: index)
        try reply(to: call, [.objectPath(path)])
        return path
    }

    /// Sends `Response(code, results)` on `path` (or `arguments` as they are, for a hostile answer).
    func respond(_ path: String, code: UInt32, results: [(String, DBusValue)] = [], arguments: [DBusValue]? = nil) throws {
        try signal(path: path, interface: "org.freedesktop.portal.Request", member: "Response",
                   arguments ?? [.uint32(code), .stringVariantDictionary(results)])
    }

    func signal(path: String, interface: String, member: String, _ arguments: [DBusValue]) throws {
        guard let signal = DBusMessage.signal(path: path, interface: interface, member: member), signal.append(arguments) else {
            throw DBusFailure("cannot make the signal \(member)")
        }
        peer.connection.send(signal)
        flush()
    }

    /// Writes out what is queued: the socket of a local bus takes it at once; bounded all the same.
    func flush() {
        var tries = 0
        while peer.connection.hasOutgoingData && tries < 10_000 {
            peer.connection.readAndWrite()
            tries += 1
        }
    }

    /// `as` of `uris`.
    static func uris(_ uris: [String]) -> DBusValue { .array(elementSignature: "s", uris.map { .string($0) }) }
}

/// Results handed to the UI thread, each awaited through an expectation.
@MainActor
final class PortalResults<Value: Sendable> {
    private(set) var all: [Value] = []
    private var waiting: [XCTestExpectation] = []

    /// An expectation met by the next result.
    func expectOne(_ description: String) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: description)
        waiting.append(expectation)
        return expectation
    }

    func take(_ value: Value) {
        all.append(value)
        if !waiting.isEmpty { waiting.removeFirst().fulfill() }
    }

    var last: Value? { all.last }
}

/// A folder of the test's own, removed when this goes.
final class TemporaryFolder {
    let url: URL

    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes an executable shell script named `name`.
    func script(_ name: String, _ body: String) throws {
        let path = url.appendingPathComponent(name).path
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        guard chmod(path, 0o755) == 0 else { throw DBusFailure("cannot make \(path) executable") }
    }
}
