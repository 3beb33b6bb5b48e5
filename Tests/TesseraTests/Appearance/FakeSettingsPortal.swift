import Foundation
import TestSupport
import XCTest
import TesseraDBus

/// A fake of the desktop's settings portal on a test's private bus: owns
/// `org.freedesktop.portal.Desktop`, answers `ReadAll` (and `Read`) from `settings` — or with
/// whatever a hostile test gives it — and sends `SettingChanged` on request. Runs on a serial queue
/// of its own (`OffMain`), each step waited for by the test with a time-out.
final class FakeSettingsPortal {
    static let name = "org.freedesktop.portal.Desktop"
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.Settings"

    let peer: BusPeer
    /// namespace → key → value (unwrapped; the answer wraps each in a variant).
    var settings: [String: [String: DBusValue]]

    init(address: String, settings: [String: [String: DBusValue]]) throws {
        peer = try BusPeer(address: address)
        self.settings = settings
        try peer.requestName(Self.name)
    }

    /// `ReadAll`'s answer for `settings`: `a{sa{sv}}`.
    static func readAllAnswer(_ settings: [String: [String: DBusValue]]) -> DBusValue {
        .array(elementSignature: "{sa{sv}}", settings.sorted { $0.key < $1.key }.map { namespace, keys in
            .dictEntry(.string(namespace), .stringVariantDictionary(keys.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        })
    }

    /// Waits for the next `ReadAll` and answers it with `answer` (nil: the settings), or with an error.
    func answerReadAll(with answer: [DBusValue]? = nil, error: DBusErrorReply? = nil, timeout: Double = 10) throws {
        let call = try peer.next(timeout: timeout) { $0.kind == .methodCall && $0.member == "ReadAll" }
        if let error {
            guard let reply = call.errorReply(error) else { throw DBusFailure("cannot make the error") }
            peer.connection.send(reply)
            peer.connection.readAndWrite()
            return
        }
        try peer.reply(to: call, answer ?? [Self.readAllAnswer(settings)])
    }

    /// Sends `SettingChanged(namespace, key, value)` with the value in a variant (or `arguments` as
    /// they are, for a hostile signal), and flushes it to the bus.
    func changeSetting(_ namespace: String, _ key: String, _ value: DBusValue, arguments: [DBusValue]? = nil) throws {
        if arguments == nil { settings[namespace, default: [:]][key] = value }
        guard let signal = DBusMessage.signal(path: Self.path, interface: Self.interface, member: "SettingChanged"),
              signal.append(arguments ?? [.string(namespace), .string(key), .variant(value)]) else {
            throw DBusFailure("cannot make the signal")
        }
        sendNow(signal)
    }

    /// Sends `message` and writes it out now: the socket of a local bus takes it at once; bounded all the same.
    private func sendNow(_ message: DBusMessage) {
        peer.connection.send(message)
        var tries = 0
        while peer.connection.hasOutgoingData && tries < 10_000 {
            peer.connection.readAndWrite()
            tries += 1
        }
    }

    /// Sends the memory monitor's `LowMemoryWarning(level)` (or `arguments` as they are, for a hostile
    /// signal) and flushes it to the bus.
    func warnOfLowMemory(_ level: UInt8, arguments: [DBusValue]? = nil) throws {
        guard let signal = DBusMessage.signal(path: Self.path, interface: "org.freedesktop.portal.MemoryMonitor",
                                              member: "LowMemoryWarning"),
              signal.append(arguments ?? [.byte(level)]) else {
            throw DBusFailure("cannot make the signal")
        }
        sendNow(signal)
    }
}

/// The values a handler was given on the main actor, in order, the next one awaited through an expectation.
@MainActor
final class AwaitedValues<Value> {
    var all: [Value] = []
    private var waiting: XCTestExpectation?

    func expectOne(_ description: String) -> XCTestExpectation {
        let expectation = XCTestExpectation(description: description)
        waiting = expectation
        return expectation
    }

    func take(_ value: Value) {
        all.append(value)
        waiting?.fulfill()
        waiting = nil
    }
}
