import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
import TesseraDBus

/// A published tree with one element of each interface: a heading, a button, a disabled switch, a
/// focused text field, a slider and a list of 100 rows of which two have a node (row 0 selected).
@MainActor
enum ServerFixture {
    static let text = "Hello world. Second line\nThird"

    static func tree(version: Int = 1) -> AccessibilityTree {
        let rows = [
            AccessibilityElement(id: 10, role: .listItem, label: "Row 0", states: [.selectable, .selected, .showing],
                                 frame: Rect(x: 10, y: 160, width: 300, height: 30), actions: [.press], rowIndex: 0),
            AccessibilityElement(id: 11, role: .listItem, label: "Row 1", states: [.selectable, .showing],
                                 frame: Rect(x: 10, y: 190, width: 300, height: 30), actions: [.press], rowIndex: 1),
        ]
        let children = [
            AccessibilityElement(id: 1, role: .heading, label: "Title", states: [.showing],
                                 frame: Rect(x: 10, y: 10, width: 200, height: 20), text: AccessibilityText(string: "Title"),
                                 headingLevel: 1),
            AccessibilityElement(id: 2, role: .button, label: "Send", hint: "Sends the message", states: [.focusable, .showing],
                                 frame: Rect(x: 10, y: 40, width: 80, height: 30), actions: [.press]),
            AccessibilityElement(id: 3, role: .switch, label: "Wi-Fi", value: "on",
                                 states: [.checkable, .checked, .focusable, .showing, .disabled],
                                 frame: Rect(x: 100, y: 40, width: 44, height: 24), actions: [.press]),
            AccessibilityElement(id: 4, role: .textField, label: "Message", value: text,
                                 states: [.editable, .focusable, .focused, .showing],
                                 frame: Rect(x: 10, y: 80, width: 200, height: 30),
                                 text: AccessibilityText(string: text, caretOffset: 5, selection: 0..<5, isEditable: true)),
            AccessibilityElement(id: 5, role: .slider, label: "Volume", value: "3", states: [.focusable, .showing],
                                 frame: Rect(x: 10, y: 120, width: 200, height: 20), actions: [.increment, .decrement],
                                 valueRange: AccessibilityValueRange(minimum: 0, maximum: 10, current: 3, step: 1)),
            AccessibilityElement(id: 6, role: .list, states: [.showing], frame: Rect(x: 10, y: 160, width: 300, height: 120),
                                 actions: [.scrollForward, .scrollBackward], rowCount: 100, children: rows),
        ]
        let root = AccessibilityElement(id: 0, role: .window, label: "Window", states: [.showing],
                                        frame: Rect(x: 0, y: 0, width: 400, height: 300), children: children)
        return AccessibilityTree(root: root, focusedID: 4, version: version)
    }

    static func server(tree: AccessibilityTree? = ServerFixture.tree(),
                       placement: WindowPlacement.State = WindowPlacement.State(origin: Point(x: 100, y: 50), unitsPerPoint: 2,
                                                                                  isActive: true)) -> AtspiServer {
        let server = AtspiServer(busName: ":1.5", applicationName: "Fixture", toolkitVersion: "0.1", locale: "de_DE.UTF-8",
                                 windowPlacement: { placement })
        server.desktop = .structure([.string(":1.0"), .objectPath(Atspi.rootPath)])
        server.replaceSnapshot(AtspiSnapshot(tree: tree))
        return server
    }
}

/// The bridge's answers to AT-SPI's calls, read from a published tree without a bus: every
/// interface's methods and properties, the questions that go to the UI thread, and the errors for
/// unknown objects, methods and arguments.
@MainActor
final class AtspiServerTests: XCTestCase {
    private func call(_ server: AtspiServer, _ object: AtspiObject, _ interface: String, _ member: String,
                      _ arguments: [DBusValue] = []) -> AtspiOutcome {
        server.handle(AtspiCall(path: object.path, interface: interface, member: member, arguments: arguments))
    }

    private func reply(_ outcome: AtspiOutcome, file: StaticString = #filePath, line: UInt = #line) -> [DBusValue] {
        guard case .reply(let values) = outcome else {
            XCTFail("expected a reply, got \(outcome)", file: file, line: line)
            return []
        }
        return values
    }

    private func errorName(_ outcome: AtspiOutcome) -> String? {
        if case .error(let error) = outcome { return error.name }
        return nil
    }

    private func property(_ server: AtspiServer, _ object: AtspiObject, _ interface: String, _ name: String,
                          file: StaticString = #filePath, line: UInt = #line) -> DBusValue? {
        reply(call(server, object, Atspi.properties, "Get", [.string(interface), .string(name)]), file: file, line: line)
            .first?.variantValue
    }

    private func ref(_ object: AtspiObject) -> DBusValue { .structure([.string(":1.5"), .objectPath(object.path)]) }

    func testTheApplicationHoldsTheWindow() async throws {
        let server = ServerFixture.server()
        XCTAssertEqual(reply(call(server, .application, Atspi.accessible, "GetRole")), [.uint32(75)])
        XCTAssertEqual(property(server, .application, Atspi.accessible, "Name"), .string("Fixture"))
        XCTAssertEqual(property(server, .application, Atspi.accessible, "ChildCount"), .int32(1))
        XCTAssertEqual(property(server, .application, Atspi.accessible, "Parent"),
                       .structure([.string(":1.0"), .objectPath(Atspi.rootPath)]), "the registry's desktop")
        XCTAssertEqual(reply(call(server, .application, Atspi.accessible, "GetChildAtIndex", [.int32(0)])), [ref(.element(0))])
        XCTAssertEqual(property(server, .application, Atspi.application, "ToolkitName"), .string("Tessera"))
        XCTAssertEqual(property(server, .application, Atspi.application, "AtspiVersion"), .string("2.1"))
        XCTAssertEqual(reply(call(server, .application, Atspi.accessible, "GetInterfaces")),
                       [.array(elementSignature: "s", [.string(Atspi.accessible), .string(Atspi.application)])])
        XCTAssertEqual(reply(call(server, .application, Atspi.accessible, "GetAttributes")), [.stringDictionary(["toolkit": "Tessera"])])
        XCTAssertEqual(reply(call(server, .application, Atspi.application, "GetLocale", [.uint32(0)])), [.string("de_DE.UTF-8")])
        // The registry numbers the app; nothing else may be written.
        XCTAssertEqual(reply(call(server, .application, Atspi.properties, "Set",
                                  [.string(Atspi.application), .string("Id"), .variant(.int32(7))])), [])
        XCTAssertEqual(property(server, .application, Atspi.application, "Id"), .int32(7))
        XCTAssertEqual(errorName(call(server, .application, Atspi.properties, "Set",
                                      [.string(Atspi.accessible), .string("Name"), .variant(.string("x"))])),
                       "org.freedesktop.DBus.Error.PropertyReadOnly")
        // Before the UI thread published a tree, the application has no window yet.
        let empty = ServerFixture.server(tree: nil)
        XCTAssertEqual(property(empty, .application, Atspi.accessible, "ChildCount"), .int32(0))
        XCTAssertEqual(reply(call(empty, .application, Atspi.accessible, "GetChildAtIndex", [.int32(0)])),
                       [.structure([.string(":1.5"), .objectPath(Atspi.nullPath)])])
        XCTAssertEqual(errorName(call(empty, .element(0), Atspi.accessible, "GetRole")), "org.freedesktop.DBus.Error.UnknownObject")
    }

    func testElementsHaveTheirRolesNamesPlacesAndStates() async throws {
        let server = ServerFixture.server()
        let roles = (0...6).map { reply(call(server, .element($0), Atspi.accessible, "GetRoleName")).first }
        XCTAssertEqual(roles, ["frame", "heading", "push button", "toggle button", "entry", "slider", "list"].map(DBusValue.string))
        XCTAssertEqual(reply(call(server, .element(2), Atspi.accessible, "GetRole")), [.uint32(43)])
        XCTAssertEqual(property(server, .element(2), Atspi.accessible, "Name"), .string("Send"))
        XCTAssertEqual(property(server, .element(2), Atspi.accessible, "Description"), .string("Sends the message"))
        XCTAssertEqual(property(server, .element(2), Atspi.accessible, "Parent"), ref(.element(0)))
        XCTAssertEqual(property(server, .element(0), Atspi.accessible, "Parent"), ref(.application))
        XCTAssertEqual(reply(call(server, .element(3), Atspi.accessible, "GetIndexInParent")), [.int32(2)])
        XCTAssertEqual(reply(call(server, .element(0), Atspi.accessible, "GetChildren")),
                       [.array(elementSignature: "(so)", (1...6).map { ref(.element($0)) })])
        XCTAssertEqual(reply(call(server, .element(1), Atspi.accessible, "GetAttributes")), [.stringDictionary(["level": "1"])])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.accessible, "GetApplication")), [ref(.application)])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.accessible, "GetRelationSet")),
                       [.array(elementSignature: "(ua(so))", [])])

        func states(_ id: Int) -> AtspiStateSet {
            guard case .array(_, let words)? = reply(call(server, .element(id), Atspi.accessible, "GetState")).first,
                  words.count == 2, let low = words[0].uint32Value, let high = words[1].uint32Value else {
                XCTFail("GetState of \(id) is not two words")
                return AtspiStateSet()
            }
            var set = AtspiStateSet()
            set.bits = UInt64(high) << 32 | UInt64(low)
            return set
        }
        let button = states(2)
        for state in [AtspiState.enabled, .sensitive, .visible, .showing, .focusable] {
            XCTAssertTrue(button.contains(state), "the button is \(state.name)")
        }
        XCTAssertFalse(button.contains(.focused))
        let toggle = states(3)
        XCTAssertTrue(toggle.contains(.checked) && toggle.contains(.checkable))
        XCTAssertFalse(toggle.contains(.enabled) || toggle.contains(.sensitive), "a disabled switch is neither")
        let field = states(4)
        for state in [AtspiState.editable, .focused, .focusable, .singleLine] { XCTAssertTrue(field.contains(state), state.name) }
        let window = states(0)
        XCTAssertTrue(window.contains(.active) && window.contains(.resizable), "the window has the keyboard focus")
        XCTAssertEqual(AtspiState.checked.rawValue, 4, "ATSPI_STATE_CHECKED")
        XCTAssertEqual(AtspiState.focused.rawValue, 12, "ATSPI_STATE_FOCUSED")
        XCTAssertEqual(AtspiState.checkable.rawValue, 41, "ATSPI_STATE_CHECKABLE, in the second word")
        XCTAssertEqual(AtspiStateSet([.checkable]).words, [0, 1 << 9])
    }

    func testAListHasAChildForEveryRowAndAsksTheUIThreadForRowsWithoutANode() async throws {
        let server = ServerFixture.server()
        XCTAssertEqual(property(server, .element(6), Atspi.accessible, "ChildCount"), .int32(100))
        XCTAssertEqual(reply(call(server, .element(6), Atspi.accessible, "GetChildAtIndex", [.int32(1)])), [ref(.element(11))])
        let placeholderID = AccessibilityElement.placeholderID(row: 50, list: 6)
        XCTAssertEqual(reply(call(server, .element(6), Atspi.accessible, "GetChildAtIndex", [.int32(50)])),
                       [ref(.element(placeholderID))], "named without a question to the UI thread")
        XCTAssertEqual(reply(call(server, .element(6), Atspi.accessible, "GetChildAtIndex", [.int32(100)])),
                       [.structure([.string(":1.5"), .objectPath(Atspi.nullPath)])])
        guard case .array(_, let children) = reply(call(server, .element(6), Atspi.accessible, "GetChildren")).first else {
            return XCTFail("GetChildren")
        }
        XCTAssertEqual(children.count, 100)
        XCTAssertEqual(reply(call(server, .element(11), Atspi.accessible, "GetAttributes")),
                       [.stringDictionary(["posinset": "2", "setsize": "100"])])
        // The placeholder's details come from the UI thread once, then from the bridge.
        guard case .needsUI(let request, let continuation) = call(server, .element(placeholderID), Atspi.accessible, "GetRole") else {
            return XCTFail("a row without a node is asked of the UI thread")
        }
        XCTAssertEqual(request, .placeholder(row: 50, list: 6))
        let placeholder = AccessibilityElement(id: placeholderID, role: .listItem, states: [.selectable], actions: [.press],
                                               rowIndex: 50)
        XCTAssertEqual(reply(continuation(.placeholder(placeholder))), [.uint32(32)])
        XCTAssertEqual(reply(call(server, .element(placeholderID), Atspi.accessible, "GetIndexInParent")), [.int32(50)])
        XCTAssertEqual(property(server, .element(placeholderID), Atspi.accessible, "Parent"), ref(.element(6)))
        guard case .array(_, let words)? = reply(call(server, .element(placeholderID), Atspi.accessible, "GetState")).first,
              let low = words.first?.uint32Value else { return XCTFail("GetState") }
        XCTAssertNotEqual(low & (1 << AtspiState.transient.rawValue), 0, "a placeholder is transient: no client caches it")
        XCTAssertEqual(low & (1 << AtspiState.showing.rawValue), 0)
        // A row the list no longer has is unknown; so is a placeholder the UI thread could not make.
        XCTAssertEqual(errorName(call(server, .element(AccessibilityElement.placeholderID(row: 100, list: 6)), Atspi.accessible,
                                      "GetRole")), "org.freedesktop.DBus.Error.UnknownObject")
        let gone = AccessibilityElement.placeholderID(row: 60, list: 6)
        guard case .needsUI(_, let refused) = call(server, .element(gone), Atspi.accessible, "GetRole") else { return XCTFail() }
        XCTAssertEqual(errorName(refused(.placeholder(nil))), "org.freedesktop.DBus.Error.UnknownObject")
        // Selection: row 0 is selected; selecting row 70 presses it on the UI thread.
        XCTAssertEqual(property(server, .element(6), Atspi.selection, "NSelectedChildren"), .int32(1))
        XCTAssertEqual(reply(call(server, .element(6), Atspi.selection, "GetSelectedChild", [.int32(0)])), [ref(.element(10))])
        XCTAssertEqual(reply(call(server, .element(6), Atspi.selection, "IsChildSelected", [.int32(0)])), [.boolean(true)])
        XCTAssertEqual(reply(call(server, .element(6), Atspi.selection, "IsChildSelected", [.int32(1)])), [.boolean(false)])
        guard case .needsUI(let select, let selected) = call(server, .element(6), Atspi.selection, "SelectChild", [.int32(70)]) else {
            return XCTFail("SelectChild")
        }
        XCTAssertEqual(select, .perform(.press, element: AccessibilityElement.placeholderID(row: 70, list: 6)))
        XCTAssertEqual(reply(selected(.done(true))), [.boolean(true)])
        // A new tree without the list drops its placeholders.
        var smaller = ServerFixture.tree(version: 2)
        smaller.root.children.removeLast()
        server.replaceSnapshot(AtspiSnapshot(tree: smaller))
        XCTAssertTrue(server.placeholders.isEmpty)
    }

    func testExtentsInScreenWindowAndParentCoordinatesAndHitTesting() async throws {
        // The window's content at (100, 50) on the screen, 2 screen pixels a point.
        let server = ServerFixture.server()
        func extents(_ id: Int, _ type: Atspi.CoordinateType) -> [DBusValue] {
            reply(call(server, .element(id), Atspi.component, "GetExtents", [.uint32(type.rawValue)]))
        }
        XCTAssertEqual(extents(2, .screen), [.structure([.int32(120), .int32(130), .int32(160), .int32(60)])])
        XCTAssertEqual(extents(2, .window), [.structure([.int32(20), .int32(80), .int32(160), .int32(60)])])
        XCTAssertEqual(extents(11, .parent), [.structure([.int32(0), .int32(60), .int32(600), .int32(60)])], "inside the list")
        XCTAssertEqual(reply(call(server, .element(2), Atspi.component, "GetPosition", [.uint32(0)])), [.int32(120), .int32(130)])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.component, "GetSize")), [.int32(160), .int32(60)])
        XCTAssertEqual(reply(call(server, .element(0), Atspi.component, "GetLayer")), [.uint32(7)])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.component, "GetLayer")), [.uint32(3)])
        // The button's centre on the screen is the button; a row's is the row; empty space is nothing.
        XCTAssertEqual(reply(call(server, .element(0), Atspi.component, "GetAccessibleAtPoint",
                                  [.int32(200), .int32(160), .uint32(0)])), [ref(.element(2))])
        XCTAssertEqual(reply(call(server, .element(0), Atspi.component, "GetAccessibleAtPoint",
                                  [.int32(300), .int32(430), .uint32(0)])), [ref(.element(11))], "the deepest element")
        XCTAssertEqual(reply(call(server, .element(0), Atspi.component, "GetAccessibleAtPoint",
                                  [.int32(790), .int32(20), .uint32(1)])), [.structure([.string(":1.5"), .objectPath(Atspi.nullPath)])])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.component, "Contains", [.int32(121), .int32(131), .uint32(0)])),
                       [.boolean(true)])
        XCTAssertEqual(reply(call(server, .element(2), Atspi.component, "Contains", [.int32(119), .int32(131), .uint32(0)])),
                       [.boolean(false)])
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.component, "GetExtents", [.uint32(9)])),
                       "org.freedesktop.DBus.Error.InvalidArgs")
        guard case .needsUI(let request, let done) = call(server, .element(2), Atspi.component, "GrabFocus") else {
            return XCTFail("GrabFocus goes to the UI thread")
        }
        XCTAssertEqual(request, .focus(element: 2))
        XCTAssertEqual(reply(done(.done(false))), [.boolean(false)])
    }

    func testActionsAreNamedAndPerformedOnTheUIThread() async throws {
        let server = ServerFixture.server()
        XCTAssertEqual(property(server, .element(2), Atspi.action, "NActions"), .int32(1))
        XCTAssertEqual(reply(call(server, .element(2), Atspi.action, "GetName", [.int32(0)])), [.string("click")])
        XCTAssertEqual(reply(call(server, .element(5), Atspi.action, "GetActions")),
                       [.array(elementSignature: "(sss)", [
                           .structure([.string("increment"), .string("Increases the value"), .string("")]),
                           .structure([.string("decrement"), .string("Decreases the value"), .string("")]),
                       ])])
        guard case .needsUI(let request, let done) = call(server, .element(2), Atspi.action, "DoAction", [.int32(0)]) else {
            return XCTFail("DoAction goes to the UI thread")
        }
        XCTAssertEqual(request, .perform(.press, element: 2))
        XCTAssertEqual(reply(done(.done(true))), [.boolean(true)])
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.action, "DoAction", [.int32(1)])),
                       "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertEqual(errorName(call(server, .element(1), Atspi.action, "DoAction", [.int32(0)])),
                       "org.freedesktop.DBus.Error.UnknownInterface", "a heading has no actions")
        // Value: properties of the slider.
        XCTAssertEqual(property(server, .element(5), Atspi.value, "CurrentValue"), .double(3))
        XCTAssertEqual(property(server, .element(5), Atspi.value, "MaximumValue"), .double(10))
        XCTAssertEqual(property(server, .element(5), Atspi.value, "MinimumIncrement"), .double(1))
        XCTAssertEqual(reply(call(server, .element(5), Atspi.properties, "GetAll", [.string(Atspi.value)])),
                       [.stringVariantDictionary([("MinimumValue", .double(0)), ("MaximumValue", .double(10)),
                                                  ("MinimumIncrement", .double(1)), ("CurrentValue", .double(3)),
                                                  ("Text", .string("3"))])])
        XCTAssertEqual(errorName(call(server, .element(5), Atspi.properties, "Set",
                                      [.string(Atspi.value), .string("CurrentValue"), .variant(.double(5))])),
                       "org.freedesktop.DBus.Error.PropertyReadOnly")
    }

    func testTextIsReadByCharactersWordsSentencesAndLines() async throws {
        let server = ServerFixture.server()
        func textCall(_ member: String, _ arguments: [DBusValue]) -> [DBusValue] {
            reply(call(server, .element(4), Atspi.text, member, arguments))
        }
        func piece(_ string: String, _ start: Int32, _ end: Int32) -> [DBusValue] { [.string(string), .int32(start), .int32(end)] }
        XCTAssertEqual(property(server, .element(4), Atspi.text, "CharacterCount"), .int32(30))
        XCTAssertEqual(property(server, .element(4), Atspi.text, "CaretOffset"), .int32(5))
        XCTAssertEqual(textCall("GetText", [.int32(0), .int32(5)]), [.string("Hello")])
        XCTAssertEqual(textCall("GetText", [.int32(25), .int32(-1)]), [.string("Third")])
        XCTAssertEqual(textCall("GetText", [.int32(40), .int32(50)]), [.string("")])
        XCTAssertEqual(textCall("GetCharacterAtOffset", [.int32(1)]), [.int32(Int32(UInt8(ascii: "e")))])
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(7), .uint32(1)]), piece("world. ", 6, 13), "word start")
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(7), .uint32(2)]), piece(" world", 5, 11), "word end")
        XCTAssertEqual(textCall("GetTextBeforeOffset", [.int32(7), .uint32(1)]), piece("Hello ", 0, 6))
        XCTAssertEqual(textCall("GetTextAfterOffset", [.int32(7), .uint32(1)]), piece("Second ", 13, 20))
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(3), .uint32(3)]), piece("Hello world. ", 0, 13), "sentence start")
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(3), .uint32(5)]), piece("Hello world. Second line\n", 0, 25), "line start")
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(27), .uint32(6)]), piece("\nThird", 24, 30), "line end")
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(2), .uint32(0)]), piece("l", 2, 3), "character")
        XCTAssertEqual(textCall("GetTextAtOffset", [.int32(30), .uint32(0)]), piece("", 30, 30), "nothing after the end")
        XCTAssertEqual(textCall("GetStringAtOffset", [.int32(7), .uint32(1)]), piece("world", 6, 11))
        XCTAssertEqual(textCall("GetStringAtOffset", [.int32(12), .uint32(1)]), piece("world", 6, 11), "between words: the one before")
        XCTAssertEqual(textCall("GetStringAtOffset", [.int32(7), .uint32(2)]), piece("Hello world.", 0, 12))
        XCTAssertEqual(textCall("GetStringAtOffset", [.int32(26), .uint32(3)]), piece("Third", 25, 30))
        XCTAssertEqual(textCall("GetNSelections", []), [.int32(1)])
        XCTAssertEqual(textCall("GetSelection", [.int32(0)]), [.int32(0), .int32(5)])
        XCTAssertEqual(textCall("GetSelection", [.int32(1)]), [.int32(0), .int32(0)], "no such selection: empty, at 0")
        // No attributes are known: the text is one run without any.
        XCTAssertEqual(textCall("GetAttributeRun", [.int32(7), .boolean(true)]), [.stringDictionary([:]), .int32(0), .int32(30)])
        XCTAssertEqual(textCall("GetDefaultAttributes", []), [.stringDictionary([:])])
        XCTAssertEqual(errorName(call(server, .element(4), Atspi.text, "GetTextAtOffset", [.int32(0), .uint32(99)])),
                       "org.freedesktop.DBus.Error.InvalidArgs")
        // Static text has the Text interface, read-only.
        XCTAssertEqual(reply(call(server, .element(1), Atspi.text, "GetText", [.int32(0), .int32(-1)])), [.string("Title")])
        XCTAssertEqual(reply(call(server, .element(1), Atspi.text, "SetCaretOffset", [.int32(1)])), [.boolean(false)])
    }

    func testEditsGoToTheUIThreadAsRangesOfCharacters() async throws {
        let server = ServerFixture.server()
        func request(_ member: String, _ arguments: [DBusValue], on interface: String = Atspi.editableText) -> AtspiUIRequest? {
            guard case .needsUI(let request, _) = call(server, .element(4), interface, member, arguments) else { return nil }
            return request
        }
        XCTAssertEqual(request("SetTextContents", [.string("new")]), .replaceText(element: 4, range: nil, text: "new"))
        XCTAssertEqual(request("InsertText", [.int32(5), .string("XYZ"), .int32(2)]),
                       .replaceText(element: 4, range: 5..<5, text: "XY"), "length counts characters of the text")
        XCTAssertEqual(request("InsertText", [.int32(99), .string("!"), .int32(-1)]),
                       .replaceText(element: 4, range: 30..<30, text: "!"), "past the end: at the end")
        XCTAssertEqual(request("DeleteText", [.int32(5), .int32(0)]), .replaceText(element: 4, range: 0..<5, text: ""))
        XCTAssertEqual(request("DeleteText", [.int32(25), .int32(-1)]), .replaceText(element: 4, range: 25..<30, text: ""))
        XCTAssertEqual(request("SetCaretOffset", [.int32(3)], on: Atspi.text), .select(element: 4, range: 3..<3))
        XCTAssertEqual(request("SetSelection", [.int32(0), .int32(8), .int32(2)], on: Atspi.text), .select(element: 4, range: 2..<8))
        XCTAssertEqual(request("RemoveSelection", [.int32(0)], on: Atspi.text), .select(element: 4, range: 5..<5))
        XCTAssertEqual(errorName(call(server, .element(1), Atspi.editableText, "SetTextContents", [.string("x")])),
                       "org.freedesktop.DBus.Error.UnknownInterface", "static text cannot be edited")
    }

    /// Any peer on the accessibility bus may edit a field: an edit inserting more than
    /// `maximumEditCharacters`, or growing the field past `maximumEditedTextCharacters`, is refused
    /// with LimitsExceeded before it reaches the UI thread (a 1 MB `SetTextContents` froze the UI for
    /// seconds); an edit that shortens a long field still goes through.
    func testEditsFromTheBusAreBounded() async throws {
        let server = ServerFixture.server()
        let big = String(repeating: "x", count: Atspi.maximumEditCharacters + 1)
        XCTAssertEqual(errorName(call(server, .element(4), Atspi.editableText, "SetTextContents", [.string(big)])),
                       "org.freedesktop.DBus.Error.LimitsExceeded")
        XCTAssertEqual(errorName(call(server, .element(4), Atspi.editableText, "InsertText", [.int32(0), .string(big), .int32(-1)])),
                       "org.freedesktop.DBus.Error.LimitsExceeded")
        // Only the characters asked for count.
        guard case .needsUI = call(server, .element(4), Atspi.editableText, "InsertText", [.int32(0), .string(big), .int32(10)]) else {
            return XCTFail("ten characters of a long string are an ordinary edit")
        }
        let most = String(repeating: "y", count: Atspi.maximumEditCharacters)
        guard case .needsUI = call(server, .element(4), Atspi.editableText, "SetTextContents", [.string(most)]) else {
            return XCTFail("an edit at the limit goes through")
        }
    }

    func testUnknownObjectsMethodsAndArgumentsGetDBusErrors() async throws {
        let server = ServerFixture.server()
        XCTAssertEqual(errorName(call(server, .element(999), Atspi.accessible, "GetRole")), "org.freedesktop.DBus.Error.UnknownObject")
        XCTAssertEqual(errorName(server.handle(AtspiCall(path: "/org/example", interface: Atspi.accessible, member: "GetRole",
                                                         arguments: []))), "org.freedesktop.DBus.Error.UnknownObject")
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.accessible, "Frobnicate")), "org.freedesktop.DBus.Error.UnknownMethod")
        XCTAssertEqual(errorName(call(server, .element(2), "org.example.Nothing", "GetRole")),
                       "org.freedesktop.DBus.Error.UnknownMethod")
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.accessible, "GetChildAtIndex", [.string("one")])),
                       "org.freedesktop.DBus.Error.InvalidArgs")
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.properties, "Get", [.string(Atspi.accessible), .string("Colour")])),
                       "org.freedesktop.DBus.Error.UnknownProperty")
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.properties, "Get", [.string(Atspi.text), .string("CaretOffset")])),
                       "org.freedesktop.DBus.Error.UnknownInterface")
        XCTAssertEqual(errorName(call(server, .element(2), Atspi.properties, "Get", [.string(Atspi.accessible)])),
                       "org.freedesktop.DBus.Error.InvalidArgs")
        // A call without an interface finds the method among the object's.
        XCTAssertEqual(reply(call(server, .element(2), "", "GetRoleName")), [.string("push button")])
        // The peer interface answers on any path.
        XCTAssertEqual(reply(server.handle(AtspiCall(path: "/", interface: Atspi.peer, member: "Ping", arguments: []))), [])
    }

    func testIntrospectionAndTheCacheDescribeTheObjects() async throws {
        let server = ServerFixture.server()
        guard case .string(let xml)? = reply(call(server, .element(4), Atspi.introspectable, "Introspect")).first else {
            return XCTFail("Introspect")
        }
        XCTAssertTrue(xml.contains("<interface name=\"org.a11y.atspi.EditableText\">"))
        XCTAssertTrue(xml.contains("<method name=\"GetTextAtOffset\">"))
        XCTAssertTrue(xml.contains("<arg direction=\"in\" name=\"arg1\" type=\"u\"/>"))
        XCTAssertTrue(xml.contains("<property name=\"CaretOffset\" type=\"i\" access=\"read\"/>"))
        XCTAssertFalse(xml.contains("org.a11y.atspi.Value"), "the field has no value")
        guard case .array(let signature, let items)? = reply(server.handle(AtspiCall(path: Atspi.cachePath, interface: Atspi.cache,
                                                                                     member: "GetItems", arguments: []))).first else {
            return XCTFail("GetItems")
        }
        XCTAssertEqual("a" + signature, AtspiServer.cacheItemsSignature)
        XCTAssertEqual(items.count, 9, "the window and its eight elements")
        guard case .structure(let list)? = items.first(where: {
            if case .structure(let fields) = $0 { return fields.first == ref(.element(6)) }
            return false
        }) else { return XCTFail("the list's item") }
        XCTAssertEqual(list[4], .int32(-1), "a list's rows are never taken from a client's cache")
        XCTAssertEqual(list[7], .uint32(31))
    }
}
