import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// Values written into a real libdbus message and read back (no bus needed: a message is built and
/// read in memory), signatures and object paths checked before libdbus sees them, and the paths of
/// the bridge's objects.
@MainActor
final class DBusMarshallingTests: XCTestCase {
    private func roundTrip(_ values: [DBusValue], file: StaticString = #filePath, line: UInt = #line) throws -> [DBusValue] {
        let message = try XCTUnwrap(DBusMessage.methodCall(destination: "org.example.Test", path: "/org/example",
                                                           interface: "org.example.Test", member: "Check"))
        XCTAssertTrue(message.append(values), "append", file: file, line: line)
        XCTAssertEqual(message.signature, values.map(\.signature).joined(), file: file, line: line)
        return try XCTUnwrap(message.arguments(), file: file, line: line)
    }

    func testEveryBasicTypeComesBackAsWritten() async throws {
        let values: [DBusValue] = [
            .byte(0xFE), .boolean(true), .boolean(false), .int16(-12_345), .uint16(54_321), .int32(.min), .uint32(.max),
            .int64(.min), .uint64(.max), .double(-0.125), .string("héllo, мир 👋"), .string(""),
            .objectPath("/org/a11y/atspi/accessible/n42"), .signature("a{sv}"),
        ]
        XCTAssertEqual(try roundTrip(values), values)
    }

    func testContainersNestAndKeepTheirTypesWhenEmpty() async throws {
        let reference = DBusValue.structure([.string(":1.7"), .objectPath("/org/a11y/atspi/accessible/root")])
        let values: [DBusValue] = [
            reference,
            .array(elementSignature: "(so)", [reference, reference]),
            .array(elementSignature: "(so)", []),
            .array(elementSignature: "u", [.uint32(1 << 8 | 1 << 12), .uint32(0)]),
            .stringVariantDictionary([("a", .int32(1)), ("b", .string("two")), ("c", .variant(.double(3)))]),
            .stringDictionary(["level": "2", "posinset": "5"]),
            .variant(.array(elementSignature: "i", [.int32(1), .int32(2)])),
            .array(elementSignature: "(ua(so))", [.structure([.uint32(3), .array(elementSignature: "(so)", [reference])])]),
        ]
        let back = try roundTrip(values)
        XCTAssertEqual(back, values)
        XCTAssertEqual(back.map(\.signature), ["(so)", "a(so)", "a(so)", "au", "a{sv}", "a{ss}", "v", "a(ua(so))"])
    }

    func testAnAtspiEventHasTheSignatureLibatspiAccepts() async throws {
        let signal = AtspiSignal(object: .element(7), interface: Atspi.eventObject, member: "TextChanged", detail: "insert",
                                 detail1: 3, detail2: 2, value: .string("ab"))
        let arguments = signal.arguments { .structure([.string(":1.9"), .objectPath($0.path)]) }
        let message = try XCTUnwrap(DBusMessage.signal(path: signal.object.path, interface: signal.interface, member: signal.member))
        XCTAssertTrue(message.append(arguments))
        // libatspi drops an event of any other signature (atspi-event-listener.c).
        XCTAssertEqual(message.signature, "siiva{sv}")
        XCTAssertEqual(message.path, "/org/a11y/atspi/accessible/7")
        XCTAssertEqual(message.kind, .signal)
        XCTAssertEqual(message.arguments(), [.string("insert"), .int32(3), .int32(2), .variant(.string("ab")),
                                             .array(elementSignature: "{sv}", [])])
    }

    func testANulInsideAStringGoesAsOneReplacementCharacter() async throws {
        let back = try roundTrip([.string("a\0b")])
        XCTAssertEqual(back, [.string("a\u{FFFD}b")], "the same number of characters, so text offsets hold")
    }

    func testMalformedValuesAreRefusedBeforeLibdbusSeesThem() async throws {
        let message = try XCTUnwrap(DBusMessage.methodCall(destination: nil, path: "/", interface: "org.example.Test",
                                                           member: "Check"))
        // Each would make libdbus abort the process; each is refused and nothing is appended.
        XCTAssertFalse(message.append([.array(elementSignature: "s", [.int32(1)])]), "an element of the wrong type")
        XCTAssertFalse(message.append([.structure([])]), "an empty structure")
        XCTAssertFalse(message.append([.dictEntry(.string("k"), .string("v"))]), "a dict entry outside an array")
        XCTAssertFalse(message.append([.array(elementSignature: "{vs}", [])]), "a dict entry with a container key")
        XCTAssertFalse(message.append([.objectPath("not/a/path")]), "an object path without the leading slash")
        XCTAssertFalse(message.append([.objectPath("/trailing/")]), "an object path ending in a slash")
        XCTAssertFalse(message.append([.objectPath("/a-b")]), "a character a path may not hold")
        XCTAssertFalse(message.append([.signature("(")]), "an unfinished signature")
        XCTAssertFalse(message.append([.variant(.structure([]))]), "an empty structure inside a variant")
        XCTAssertEqual(message.signature, "")
        XCTAssertNil(DBusMessage.methodCall(destination: nil, path: "bad", interface: "org.example.Test", member: "Check"))
        XCTAssertNil(DBusMessage.signal(path: "", interface: "org.example.Test", member: "Check"))
    }

    func testSignatureValidation() async throws {
        for valid in ["", "s", "a{sv}", "(so)", "a(ua(so))", "siiva{sv}", "aai", "a((so)(so)(so)iiassusau)", "v", "g"] {
            XCTAssertTrue(DBusValue.isValidSignature(valid), valid)
        }
        for invalid in ["(", ")", "()", "a", "{sv}", "a{vs}", "a{s}", "a{svs}", "z", "(s", String(repeating: "a", count: 70) + "i"] {
            XCTAssertFalse(DBusValue.isValidSignature(invalid), invalid)
        }
        XCTAssertTrue(DBusValue.isValidSignature("(so)", singleCompleteType: true))
        XCTAssertFalse(DBusValue.isValidSignature("so", singleCompleteType: true))
    }

    func testObjectPathsOfTheBridgesObjects() async throws {
        XCTAssertEqual(AtspiObject.application.path, "/org/a11y/atspi/accessible/root")
        XCTAssertEqual(AtspiObject.element(0).path, "/org/a11y/atspi/accessible/0")
        XCTAssertEqual(AtspiObject.element(-9_876_543_210).path, "/org/a11y/atspi/accessible/n9876543210")
        for object in [AtspiObject.application, .element(0), .element(17), .element(-5), .element(.max), .element(-.max)] {
            XCTAssertTrue(DBusValue.isValidObjectPath(object.path), object.path)
            XCTAssertEqual(AtspiObject(path: object.path), object)
        }
        for foreign in ["/", "/org/a11y/atspi/accessible/", "/org/a11y/atspi/accessible/n0", "/org/a11y/atspi/accessible/n",
                        "/org/a11y/atspi/accessible/12x", "/org/a11y/atspi/accessible/1/2", "/org/a11y/atspi/cache",
                        "/org/a11y/atspi/accessible/99999999999999999999999"] {
            XCTAssertNil(AtspiObject(path: foreign), foreign)
        }
    }

    func testPlaceholderIDsNameTheirListAndRow() async throws {
        let id = AccessibilityElement.placeholderID(row: 150, list: 42)
        XCTAssertLessThan(id, 0)
        XCTAssertEqual(AccessibilityElement.placeholderRow(ofID: id)?.list, 42)
        XCTAssertEqual(AccessibilityElement.placeholderRow(ofID: id)?.row, 150)
        XCTAssertNil(AccessibilityElement.placeholderRow(ofID: 42), "a node's id")
        XCTAssertNil(AccessibilityElement.placeholderRow(ofID: -((42 << 24) | (3 << 2) | 1)), "a link's id")
    }
}
