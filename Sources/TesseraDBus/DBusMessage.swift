internal import CDBus
import FoundationEssentials
import Glibc
import Dispatch

/// An error reply's name and text (`org.freedesktop.DBus.Error.UnknownMethod`, "…").
/// - Thread: any (a value)
package struct DBusErrorReply: Error, Hashable, Sendable, CustomStringConvertible {
    package var name: String
    package var message: String

    package var description: String { "\(name): \(message)" }

    package static func unknownObject(_ path: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object at \(path)")
    }
    package static func unknownMethod(_ interface: String, _ member: String, path: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownMethod",
                       message: "\(path) has no method \(member) in interface \(interface.isEmpty ? "(none)" : interface)")
    }
    package static func unknownInterface(_ interface: String, path: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownInterface",
                       message: "\(path) does not implement \(interface)")
    }
    package static func unknownProperty(_ interface: String, _ property: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "\(interface) has no property \(property)")
    }
    package static func invalidArguments(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    package static func readOnly(_ interface: String, _ property: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(property) is read-only")
    }
    package static func timedOut(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.TimedOut", message: message)
    }
    package static func limitsExceeded(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: message)
    }
    package static func failed(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}

/// A libdbus message, owned: made here (a call, a reply, an error, a signal) or taken from a
/// connection, released when this goes. Arguments are written and read as `DBusValue`s through
/// libdbus's iterators.
/// - Thread: the thread that made or received it (not `Sendable`).
package final class DBusMessage {
    package let pointer: OpaquePointer

    /// Takes over one reference to `pointer` (as libdbus's constructors and `pop_message` give).
    package init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { dbus_message_unref(pointer) }

    /// A method call to `destination` (nil: none, on a direct connection).
    package static func methodCall(destination: String?, path: String, interface: String, member: String) -> DBusMessage? {
        guard DBusValue.isValidObjectPath(path), let made = dbus_message_new_method_call(destination, path, interface, member) else {
            return nil
        }
        return DBusMessage(taking: made)
    }

    /// A signal from the object at `path`.
    package static func signal(path: String, interface: String, member: String) -> DBusMessage? {
        guard DBusValue.isValidObjectPath(path), let made = dbus_message_new_signal(path, interface, member) else { return nil }
        return DBusMessage(taking: made)
    }

    /// The successful reply to this call.
    package func methodReturn() -> DBusMessage? {
        dbus_message_new_method_return(pointer).map { DBusMessage(taking: $0) }
    }

    /// An error reply to this call.
    package func errorReply(_ error: DBusErrorReply) -> DBusMessage? {
        dbus_message_new_error(pointer, error.name, error.message).map { DBusMessage(taking: $0) }
    }

    package enum Kind: Equatable { case methodCall, methodReturn, error, signal, other }

    package var kind: Kind {
        switch dbus_message_get_type(pointer) {
        case TESSERA_DBUS_MESSAGE_TYPE_METHOD_CALL: return .methodCall
        case TESSERA_DBUS_MESSAGE_TYPE_METHOD_RETURN: return .methodReturn
        case TESSERA_DBUS_MESSAGE_TYPE_ERROR: return .error
        case TESSERA_DBUS_MESSAGE_TYPE_SIGNAL: return .signal
        default: return .other
        }
    }

    package var path: String? { dbus_message_get_path(pointer).map { String(cString: $0) } }
    package var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    package var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    package var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    /// The one connection the message is addressed to; nil for a signal broadcast through the bus's
    /// match rules.
    package var destination: String? { dbus_message_get_destination(pointer).map { String(cString: $0) } }
    package var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
    package var signature: String { dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }
    /// The caller asked for no reply.
    package var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }

    // MARK: Arguments

    /// Appends `values` as the message's next arguments. False (and nothing appended past the first
    /// bad value) when a value is malformed or libdbus runs out of memory.
    @discardableResult
    package func append(_ values: [DBusValue]) -> Bool {
        guard values.allSatisfy(\.isWellFormed) else { return false }
        let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        defer { iterator.deallocate() }
        dbus_message_iter_init_append(pointer, iterator)
        for value in values where !Self.append(value, to: iterator) { return false }
        return true
    }

    /// The message's arguments; nil when one has a type this reader does not take (a file descriptor).
    package func arguments() -> [DBusValue]? {
        let iterator = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        defer { iterator.deallocate() }
        guard dbus_message_iter_init(pointer, iterator) != 0 else { return [] }
        return Self.readAll(iterator)
    }

    private static func append(_ value: DBusValue, to iterator: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        func basic<T: BitwiseCopyable>(_ type: Int32, _ value: T) -> Bool {
            var copy = value
            return withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(iterator, type, $0) } != 0
        }
        func text(_ type: Int32, _ string: String) -> Bool {
            // libdbus takes a C string: a NUL inside would cut it short, so it is sent as U+FFFD
            // (one character for one, offsets unchanged).
            let clean = string.contains("\0") ? string.replacing("\0", with: "\u{FFFD}") : string
            return clean.withCString { characters in
                var pointer: UnsafePointer<CChar>? = characters
                return dbus_message_iter_append_basic(iterator, type, &pointer) != 0
            }
        }
        func container(_ type: Int32, _ signature: String?, _ contents: [DBusValue]) -> Bool {
            let sub = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
            defer { sub.deallocate() }
            guard dbus_message_iter_open_container(iterator, type, signature, sub) != 0 else { return false }
            for value in contents where !append(value, to: sub) {
                dbus_message_iter_abandon_container(iterator, sub)
                return false
            }
            return dbus_message_iter_close_container(iterator, sub) != 0
        }
        switch value {
        case .byte(let byte): return basic(TESSERA_DBUS_TYPE_BYTE, byte)
        case .boolean(let flag): return basic(TESSERA_DBUS_TYPE_BOOLEAN, UInt32(flag ? 1 : 0))
        case .int16(let number): return basic(TESSERA_DBUS_TYPE_INT16, number)
        case .uint16(let number): return basic(TESSERA_DBUS_TYPE_UINT16, number)
        case .int32(let number): return basic(TESSERA_DBUS_TYPE_INT32, number)
        case .uint32(let number): return basic(TESSERA_DBUS_TYPE_UINT32, number)
        case .int64(let number): return basic(TESSERA_DBUS_TYPE_INT64, number)
        case .uint64(let number): return basic(TESSERA_DBUS_TYPE_UINT64, number)
        case .double(let number): return basic(TESSERA_DBUS_TYPE_DOUBLE, number)
        case .string(let string): return text(TESSERA_DBUS_TYPE_STRING, string)
        case .objectPath(let path): return text(TESSERA_DBUS_TYPE_OBJECT_PATH, path)
        case .signature(let signature): return text(TESSERA_DBUS_TYPE_SIGNATURE, signature)
        case .array(let element, let values): return container(TESSERA_DBUS_TYPE_ARRAY, element, values)
        case .structure(let fields): return container(TESSERA_DBUS_TYPE_STRUCT, nil, fields)
        case .dictEntry(let key, let value): return container(TESSERA_DBUS_TYPE_DICT_ENTRY, nil, [key, value])
        case .variant(let inner): return container(TESSERA_DBUS_TYPE_VARIANT, inner.signature, [inner])
        }
    }

    private static func readAll(_ iterator: UnsafeMutablePointer<DBusMessageIter>) -> [DBusValue]? {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(iterator) != TESSERA_DBUS_TYPE_INVALID {
            guard let value = read(iterator) else { return nil }
            values.append(value)
            dbus_message_iter_next(iterator)
        }
        return values
    }

    /// The value the iterator stands on.
    private static func read(_ iterator: UnsafeMutablePointer<DBusMessageIter>) -> DBusValue? {
        func basic<T: BitwiseCopyable>(_ initial: T) -> T {
            var value = initial
            withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(iterator, $0) }
            return value
        }
        func text() -> String {
            var pointer: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(iterator, &pointer)
            return pointer.map { String(cString: $0) } ?? ""
        }
        func contents() -> [DBusValue]? {
            let sub = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
            defer { sub.deallocate() }
            dbus_message_iter_recurse(iterator, sub)
            return readAll(sub)
        }
        switch dbus_message_iter_get_arg_type(iterator) {
        case TESSERA_DBUS_TYPE_BYTE: return .byte(basic(UInt8(0)))
        case TESSERA_DBUS_TYPE_BOOLEAN: return .boolean(basic(UInt32(0)) != 0)
        case TESSERA_DBUS_TYPE_INT16: return .int16(basic(Int16(0)))
        case TESSERA_DBUS_TYPE_UINT16: return .uint16(basic(UInt16(0)))
        case TESSERA_DBUS_TYPE_INT32: return .int32(basic(Int32(0)))
        case TESSERA_DBUS_TYPE_UINT32: return .uint32(basic(UInt32(0)))
        case TESSERA_DBUS_TYPE_INT64: return .int64(basic(Int64(0)))
        case TESSERA_DBUS_TYPE_UINT64: return .uint64(basic(UInt64(0)))
        case TESSERA_DBUS_TYPE_DOUBLE: return .double(basic(Double(0)))
        case TESSERA_DBUS_TYPE_STRING: return .string(text())
        case TESSERA_DBUS_TYPE_OBJECT_PATH: return .objectPath(text())
        case TESSERA_DBUS_TYPE_SIGNATURE: return .signature(text())
        case TESSERA_DBUS_TYPE_ARRAY:
            guard let signature = dbus_message_iter_get_signature(iterator) else { return nil }
            defer { dbus_free(signature) }
            let element = String(String(cString: signature).dropFirst())
            return contents().map { .array(elementSignature: element, $0) }
        case TESSERA_DBUS_TYPE_STRUCT:
            return contents().map { .structure($0) }
        case TESSERA_DBUS_TYPE_DICT_ENTRY:
            guard let pair = contents(), pair.count == 2 else { return nil }
            return .dictEntry(pair[0], pair[1])
        case TESSERA_DBUS_TYPE_VARIANT:
            guard let inner = contents(), inner.count == 1 else { return nil }
            return .variant(inner[0])
        default:
            return nil
        }
    }
}
