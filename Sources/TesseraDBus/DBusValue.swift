import FoundationEssentials
import Glibc
import Dispatch

/// One D-Bus value with its type: what a message's arguments are made of, built and read here in
/// Swift and written to (or read from) a libdbus message by `DBusMessage`.
///
/// An array carries its element's signature, so an empty array still has a type. A dictionary is an
/// array of `dictEntry` values (`a{sv}` is `.array("{sv}", [.dictEntry(.string(key), .variant(value))])`).
/// - Thread: any (a value)
package indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array of values of the single complete type `elementSignature`.
    case array(elementSignature: String, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    /// The value's D-Bus type signature ("s", "(so)", "a{sv}", …).
    package var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .array(let element, _): return "a" + element
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): return "{" + key.signature + value.signature + "}"
        case .variant: return "v"
        }
    }

    /// A dictionary of strings to variants (`a{sv}`), in the order given.
    package static func stringVariantDictionary(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// A dictionary of strings to strings (`a{ss}`), sorted by key so the order is stable.
    package static func stringDictionary(_ entries: [String: String]) -> DBusValue {
        .array(elementSignature: "{ss}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
    }

    // MARK: Reading arguments

    package var int32Value: Int32? { if case .int32(let value) = self { return value } else { return nil } }
    package var uint32Value: UInt32? { if case .uint32(let value) = self { return value } else { return nil } }
    package var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }
    package var booleanValue: Bool? { if case .boolean(let value) = self { return value } else { return nil } }
    package var doubleValue: Double? { if case .double(let value) = self { return value } else { return nil } }
    package var variantValue: DBusValue? { if case .variant(let value) = self { return value } else { return nil } }
}

extension DBusValue {
    /// Whether `signature` is a sequence of complete D-Bus types (what libdbus accepts for a message's
    /// arguments or a container's contents): checked before a signature made from data reaches
    /// libdbus, which aborts on an invalid one.
    package static func isValidSignature(_ signature: String, singleCompleteType: Bool = false) -> Bool {
        let codes = Array(signature.utf8)
        guard codes.count <= 255 else { return false }
        var index = 0
        var count = 0
        while index < codes.count {
            guard let end = completeTypeEnd(codes, from: index, depth: 0) else { return false }
            index = end
            count += 1
        }
        return singleCompleteType ? count == 1 : true
    }

    /// The index after the complete type starting at `start`, or nil when there is none.
    private static func completeTypeEnd(_ codes: [UInt8], from start: Int, depth: Int) -> Int? {
        guard start < codes.count, depth < 64 else { return nil }
        switch codes[start] {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
             UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"),
             UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "v"):
            return start + 1
        case UInt8(ascii: "a"):
            if start + 1 < codes.count, codes[start + 1] == UInt8(ascii: "{") {
                // A dict entry: a basic key, one complete value, "}".
                guard start + 2 < codes.count, isBasic(codes[start + 2]),
                      let valueEnd = completeTypeEnd(codes, from: start + 3, depth: depth + 1),
                      valueEnd < codes.count, codes[valueEnd] == UInt8(ascii: "}") else { return nil }
                return valueEnd + 1
            }
            return completeTypeEnd(codes, from: start + 1, depth: depth + 1)
        case UInt8(ascii: "("):
            var index = start + 1
            var fields = 0
            while index < codes.count, codes[index] != UInt8(ascii: ")") {
                guard let end = completeTypeEnd(codes, from: index, depth: depth + 1) else { return nil }
                index = end
                fields += 1
            }
            guard index < codes.count, fields > 0 else { return nil }
            return index + 1
        default:
            return nil
        }
    }

    private static func isBasic(_ code: UInt8) -> Bool {
        "ybnqiuxtdsog".utf8.contains(code)
    }

    /// Whether every value in the tree has a type consistent with its container's signature (an
    /// array's elements all of its element signature, dictionary entries only directly inside an
    /// array, signatures and object paths valid): what `DBusMessage.append` checks before it hands a
    /// value to libdbus, which aborts the process on a malformed one.
    package var isWellFormed: Bool { isWellFormed(asArrayElement: false) }

    private func isWellFormed(asArrayElement: Bool) -> Bool {
        switch self {
        case .objectPath(let path): return DBusValue.isValidObjectPath(path)
        case .signature(let signature): return DBusValue.isValidSignature(signature)
        case .array(let element, let values):
            guard DBusValue.isValidSignature("a" + element, singleCompleteType: true) else { return false }
            return values.allSatisfy { $0.signature == element && $0.isWellFormed(asArrayElement: true) }
        case .structure(let fields): return !fields.isEmpty && fields.allSatisfy(\.isWellFormed)
        case .dictEntry(let key, let value):
            guard asArrayElement, let code = key.signature.utf8.first, key.signature.utf8.count == 1,
                  DBusValue.isBasic(code) else { return false }
            return key.isWellFormed && value.isWellFormed
        case .variant(let value): return value.isWellFormed
        default: return true
        }
    }

    /// Whether `path` is a D-Bus object path: "/" or "/"-separated non-empty elements of
    /// `[A-Za-z0-9_]`, no trailing "/".
    package static func isValidObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
                continue
            }
            previousWasSlash = false
            let ok = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_")
            if !ok { return false }
        }
        return true
    }
}
