internal import CDBus
import FoundationEssentials
import Glibc
import Dispatch

/// Why a bus could not be reached or answered: what the log line says.
/// - Thread: any (a value)
package struct DBusFailure: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A private libdbus connection to a message bus, driven by its owner's thread: it is never
/// shared with other code in the process (libdbus's shared session connection would end the
/// process when the bus goes away), never exits the process on a disconnect, and every call made
/// through it has a time-out.
///
/// No libdbus main loop is attached: the owner polls `fileDescriptor`, calls `readAndWrite()` and
/// takes messages with `popMessage()`.
/// - Thread: the thread that opened it (not `Sendable`).
package final class DBusConnection {
    private let pointer: OpaquePointer
    /// The name the bus gave this connection (":1.42").
    package let uniqueName: String

    /// Opens a private connection to the bus at `address` and registers with it (the bus's `Hello`,
    /// sent here with `timeout` seconds rather than through `dbus_bus_register`, which waits libdbus's
    /// default 25 seconds).
    /// - Throws: `DBusFailure` when the address is not a bus, or the bus does not answer in time.
    package init(address: String, timeout: Double) throws {
        Self.initializeThreads
        var error = DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_connection_open_private(address, &error) else {
            defer { dbus_error_free(&error) }
            throw DBusFailure("cannot connect to \(address): \(Self.describe(error))")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        // What libdbus reads ahead of the bridge is bounded: a peer flooding the bus waits there, not
        // in this process.
        dbus_connection_set_max_received_size(connection, Self.maximumReceivedBytes)
        guard let hello = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                 interface: "org.freedesktop.DBus", member: "Hello") else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusFailure("out of memory")
        }
        let reply = dbus_connection_send_with_reply_and_block(connection, hello.pointer, Self.milliseconds(timeout), &error)
        guard let reply else {
            defer { dbus_error_free(&error) }
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusFailure("the bus at \(address) did not register this connection: \(Self.describe(error))")
        }
        let answer = DBusMessage(taking: reply)
        guard let name = answer.arguments()?.first?.stringValue, !name.isEmpty,
              dbus_bus_set_unique_name(connection, name) != 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusFailure("the bus at \(address) answered Hello without a name")
        }
        pointer = connection
        uniqueName = name
    }

    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    /// libdbus's locks, made once before the first connection (several bridges may run at once,
    /// each on its own thread).
    private static let initializeThreads: Void = { _ = dbus_threads_init_default() }()

    private static func milliseconds(_ seconds: Double) -> Int32 {
        Int32(clamping: Int((max(0.001, min(seconds, 600)) * 1000).rounded()))
    }

    private static func describe(_ error: DBusError) -> String {
        let name = error.name.map { String(cString: $0) } ?? "unknown error"
        let message = error.message.map { String(cString: $0) } ?? ""
        return message.isEmpty ? name : "\(message) (\(name))"
    }

    /// Sends `message` and waits up to `timeout` seconds for its reply.
    /// - Throws: `DBusFailure` on a time-out, a lost connection or an error reply (named in it).
    package func call(_ message: DBusMessage, timeout: Double) throws -> DBusMessage {
        var error = DBusError()
        dbus_error_init(&error)
        guard let reply = dbus_connection_send_with_reply_and_block(pointer, message.pointer, Self.milliseconds(timeout), &error) else {
            defer { dbus_error_free(&error) }
            throw DBusFailure(Self.describe(error))
        }
        return DBusMessage(taking: reply)
    }

    /// Queues `message` to be written (by `readAndWrite()`); false when libdbus is out of memory.
    @discardableResult
    package func send(_ message: DBusMessage) -> Bool {
        dbus_connection_send(pointer, message.pointer, nil) != 0
    }

    /// The socket to poll for input (and for output while `hasOutgoingData`); nil when libdbus has none.
    package var fileDescriptor: Int32? {
        var descriptor: Int32 = -1
        guard dbus_connection_get_unix_fd(pointer, &descriptor) != 0, descriptor >= 0 else { return nil }
        return descriptor
    }

    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else the systemd user bus at
    /// `$XDG_RUNTIME_DIR/bus` when it exists. Never libdbus's autolaunch, which would start a bus of
    /// its own. - Thread: any
    package static func sessionBusAddress(_ environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        guard let directory = environment["XDG_RUNTIME_DIR"], !directory.isEmpty else { return nil }
        let path = directory + "/bus"
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        guard let escaped = dbus_address_escape_value(path) else { return nil }
        defer { dbus_free(escaped) }
        return "unix:path=" + String(cString: escaped)
    }

    /// Asks the bus to route the messages `rule` matches to this connection (the bus's `AddMatch`,
    /// waited for up to `timeout` seconds).
    /// - Throws: `DBusFailure` when the bus refuses the rule or does not answer in time.
    package func addMatch(_ rule: String, timeout: Double) throws {
        guard let message = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                   interface: "org.freedesktop.DBus", member: "AddMatch"),
              message.append([.string(rule)]) else { throw DBusFailure("out of memory") }
        let reply = try call(message, timeout: timeout)
        if reply.kind == .error { throw DBusFailure("the bus refused the match rule \(rule): \(reply.errorName ?? "")") }
    }

    /// Messages wait to be written.
    package var hasOutgoingData: Bool { dbus_connection_has_messages_to_send(pointer) != 0 }

    /// The bytes of the messages waiting to be written.
    package var outgoingBytes: Int { Int(dbus_connection_get_outgoing_size(pointer)) }

    /// The most libdbus reads from the bus before the bridge takes it (4 MB).
    package static let maximumReceivedBytes = 4 << 20
    /// The most the bridge queues to write before it reads another call (4 MB): answers to a peer
    /// that asks faster than the bus takes them wait in the bus, not here.
    package static let maximumOutgoingBytes = 4 << 20

    /// Reads what the socket has and writes what it can take, without blocking; false once the
    /// connection is closed.
    @discardableResult
    package func readAndWrite() -> Bool {
        dbus_connection_read_write(pointer, 0) != 0
    }

    /// The next message read, if any.
    package func popMessage() -> DBusMessage? {
        dbus_connection_pop_message(pointer).map { DBusMessage(taking: $0) }
    }

    package var isConnected: Bool { dbus_connection_get_is_connected(pointer) != 0 }

    /// Messages were read from the socket and wait in libdbus's buffer: `popMessage()` has something,
    /// though `poll()` on the socket would not say so.
    package var hasBufferedInput: Bool { dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS }
}
