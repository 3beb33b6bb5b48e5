import Foundation
import TestSupport
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// A D-Bus daemon of the test's own, with a configuration that activates no services (a bus that
/// does not start the system's accessibility bus or registry by itself), stopped when this goes.
final class PrivateBus {
    let address: String
    private let process: Process
    private let directory: URL

    init() throws {
        guard let daemon = Xvfb.which("dbus-daemon") else {
            throw XCTSkip("dbus-daemon is not installed (make test installs it)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
          "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(directory.path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: configuration, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The daemon prints its address once it listens; a read blocks until then (or until it exits).
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        address = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else {
            process.terminate()
            throw DBusFailure("dbus-daemon printed no address")
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A connection to a bus used by a test as a screen reader or a registry would: blocking calls,
/// and messages awaited with a time-out. Lives on one dispatch queue (`OffMain`), so the main
/// actor stays free to answer the bridge's questions meanwhile.
final class BusPeer {
    let connection: DBusConnection

    init(address: String) throws { connection = try DBusConnection(address: address, timeout: 5) }

    var name: String { connection.uniqueName }

    /// Calls a method; its reply's arguments, or a `DBusFailure` naming the error reply.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Double = 10) throws -> [DBusValue] {
        guard let message = DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member),
              message.append(arguments) else { throw DBusFailure("cannot make the call \(member)") }
        return try connection.call(message, timeout: timeout).arguments() ?? []
    }

    func requestName(_ name: String) throws {
        let reply = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                             [.string(name), .uint32(4)])
        guard reply == [.uint32(1)] else { throw DBusFailure("the bus did not give \(name): \(reply)") }
    }

    func addMatch(_ rule: String) throws {
        _ = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", [.string(rule)])
    }

    /// The next message that `accept` takes (others are dropped), or a failure after `timeout` seconds.
    func next(timeout: Double = 10, _ accept: (DBusMessage) -> Bool) throws -> DBusMessage {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            while let message = connection.popMessage() {
                if accept(message) { return message }
            }
            connection.readAndWrite()
            if connection.hasBufferedInput { continue }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let socket = connection.fileDescriptor else { throw DBusFailure("nothing came in \(timeout) s") }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(left * 1000) + 1)
        }
    }

    /// Replies to `call` with `values`.
    func reply(to call: DBusMessage, _ values: [DBusValue]) throws {
        guard let reply = call.methodReturn(), reply.append(values) else { throw DBusFailure("cannot make the reply") }
        connection.send(reply)
        connection.readAndWrite()
    }
}

/// A value kept on a serial queue of its own and reached only there: a test's D-Bus peers, whose
/// blocking calls must not hold the main actor.
final class OffMain<Value>: @unchecked Sendable {
    private let queue: DispatchQueue
    private var value: Value?  // only on queue

    init(_ label: String, _ make: @escaping () throws -> Value) throws {
        queue = DispatchQueue(label: label)
        try queue.sync { value = try make() }
    }

    func run<Output: Sendable>(_ body: @escaping @Sendable (Value) throws -> Output) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                continuation.resume(with: Swift.Result { try body(value!) })
            }
        }
    }

    /// Drops the value on its queue.
    func close() { queue.sync { value = nil } }
}
