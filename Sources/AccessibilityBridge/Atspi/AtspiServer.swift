internal import CDBus
import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import TesseraDBus
import NodeRuntime

/// A method call on one of the bridge's objects, as read from the bus.
/// - Thread: any (a value)
struct AtspiCall: Sendable {
    var path: String
    var interface: String
    var member: String
    var arguments: [DBusValue]

    var signature: String { arguments.map(\.signature).joined() }
}

/// What a method call comes to: a reply, an error reply, or a question for the UI thread whose
/// answer the continuation turns into one of these (on the bridge's thread).
enum AtspiOutcome {
    case reply([DBusValue])
    case error(DBusErrorReply)
    case needsUI(AtspiUIRequest, (AtspiUIResponse) -> AtspiOutcome)
}

/// Answers AT-SPI's method calls from the latest published tree: the Accessible, Application,
/// Component, Action, Text, EditableText, Value and Selection interfaces, D-Bus properties and
/// introspection. It never touches a node: what only the UI thread can do (an action, focus, an
/// edit, a list's row without a node) comes back as `.needsUI`.
/// - Thread: the bridge's thread (not `Sendable`).
final class AtspiServer {
    /// This connection's name on the accessibility bus.
    let busName: String
    let applicationName: String
    let toolkitVersion: String
    let locale: String
    /// The registry's desktop, the application's parent (from `Embed`'s reply); nil until embedded.
    var desktop: DBusValue?
    /// The number the registry gave the application (`Application.Id`).
    var applicationID: Int32 = 0
    /// The tree requests are answered from.
    private(set) var snapshot = AtspiSnapshot(tree: nil)
    /// Rows of lists read by index without a node, as the UI thread made them, by id.
    private(set) var placeholders: [Int: AccessibilityElement] = [:]
    /// The most placeholders kept; past it they are all dropped (each is made again on request).
    static let placeholderLimit = 4096
    /// The windows' places on the screen, by window element id (set by the bridge's loop as windows
    /// come and go), read when a call needs screen coordinates or a window's `active` state.
    var placements: [Int: WindowPlacement] = [:]
    /// The place of a window not in `placements`.
    let windowPlacement: @Sendable () -> WindowPlacement.State

    init(busName: String, applicationName: String, toolkitVersion: String, locale: String,
         windowPlacement: @escaping @Sendable () -> WindowPlacement.State) {
        self.busName = busName
        self.applicationName = applicationName
        self.toolkitVersion = toolkitVersion
        self.locale = locale
        self.windowPlacement = windowPlacement
    }

    /// The place of the window holding `target` (the screen's origin for the application).
    func placement(of target: Target) -> WindowPlacement.State {
        guard let window = target.window else { return WindowPlacement.State() }
        return placements[window]?.state ?? windowPlacement()
    }

    /// The window whose host answers `request`: the one whose tree holds its element (a list's
    /// row: the list's); nil when none does.
    func window(of request: AtspiUIRequest) -> Int? {
        let id: Int
        switch request {
        case .perform(_, let element), .focus(let element), .replaceText(let element, _, _), .select(let element, _): id = element
        case .placeholder(_, let list): id = list
        }
        return snapshot.windowID(containing: id)
    }

    /// Answers from `snapshot` from now on; placeholders of lists no longer in it are dropped.
    func replaceSnapshot(_ snapshot: AtspiSnapshot) {
        self.snapshot = snapshot
        placeholders = placeholders.filter { id, _ in
            AccessibilityElement.placeholderRow(ofID: id).map { snapshot.entry($0.list) != nil } ?? false
        }
    }

    func reference(_ object: AtspiObject) -> DBusValue {
        .structure([.string(busName), .objectPath(object.path)])
    }

    var nullReference: DBusValue { .structure([.string(busName), .objectPath(Atspi.nullPath)]) }

    // MARK: Objects

    /// One object a call is about, resolved from the snapshot (or the placeholders).
    struct Target {
        let object: AtspiObject
        /// Nil for the application.
        let element: AccessibilityElement?
        /// The list's rows by index, for a list element.
        let rows: [Int: Int]?
        /// Nil for the application (its parent is the registry's desktop).
        let parent: AtspiObject?
        let indexInParent: Int
        let isPlaceholder: Bool
        /// The id of the window element whose tree holds the object; nil for the application.
        var window: Int? = nil

        var interfaces: [String] {
            guard let element else { return [Atspi.accessible, Atspi.application] }
            var result = [Atspi.accessible, Atspi.component]
            if !element.actions.isEmpty { result.append(Atspi.action) }
            if let text = element.text {
                result.append(Atspi.text)
                if text.isEditable { result.append(Atspi.editableText) }
            }
            if element.valueRange != nil { result.append(Atspi.value) }
            if element.role == .list || element.role == .tabList { result.append(Atspi.selection) }
            return result
        }
    }

    func target(_ object: AtspiObject) -> Target? {
        switch object {
        case .application:
            return Target(object: .application, element: nil, rows: nil, parent: nil, indexInParent: -1, isPlaceholder: false)
        case .element(let id):
            if let entry = snapshot.entry(id) {
                return Target(object: object, element: entry.element, rows: entry.rows, parent: entry.parent,
                              indexInParent: entry.indexInParent, isPlaceholder: false, window: snapshot.windowID(containing: id))
            }
            if let placeholder = placeholders[id], let (list, row) = AccessibilityElement.placeholderRow(ofID: id),
               snapshot.entry(list) != nil {
                return Target(object: object, element: placeholder, rows: nil, parent: .element(list), indexInParent: row,
                              isPlaceholder: true, window: snapshot.windowID(containing: list))
            }
            return nil
        }
    }

    /// Runs `body` on the object at `path`; a list's row without a node is first asked of the UI thread.
    private func withTarget(_ call: AtspiCall, _ body: @escaping (Target) -> AtspiOutcome) -> AtspiOutcome {
        guard let object = AtspiObject(path: call.path) else { return .error(.unknownObject(call.path)) }
        if let target = target(object) { return body(target) }
        if case .element(let id) = object, let (list, row) = AccessibilityElement.placeholderRow(ofID: id),
           let listEntry = snapshot.entry(list), listEntry.rows != nil, row < AtspiSnapshot.childCount(of: listEntry.element) {
            return .needsUI(.placeholder(row: row, list: list)) { [self] response in
                if case .placeholder(let element?) = response, element.id == id {
                    if placeholders.count >= Self.placeholderLimit { placeholders.removeAll() }
                    placeholders[id] = element
                }
                guard let target = target(object) else { return .error(.unknownObject(call.path)) }
                return body(target)
            }
        }
        return .error(.unknownObject(call.path))
    }

    // MARK: Dispatch

    func handle(_ call: AtspiCall) -> AtspiOutcome {
        // The peer interface is the connection's, answered on any path (libatspi pings "/").
        if call.interface == Atspi.peer {
            switch (call.member, call.signature) {
            case ("Ping", ""): return .reply([])
            case ("GetMachineId", ""): return .reply([.string(Self.machineID)])
            default: return .error(.unknownMethod(call.interface, call.member, path: call.path))
            }
        }
        if call.path == Atspi.cachePath { return cache(call) }
        return withTarget(call) { [self] target in
            if call.interface == Atspi.introspectable {
                guard call.member == "Introspect", call.arguments.isEmpty else {
                    return .error(.unknownMethod(call.interface, call.member, path: call.path))
                }
                return .reply([.string(introspection(of: target))])
            }
            if call.interface == Atspi.properties { return handleProperties(call, target) }
            // A call without an interface goes to the first of the object's interfaces that has the member.
            let interface = call.interface.isEmpty
                ? target.interfaces.first { AtspiInterfaces.methods[$0]?[call.member] != nil } ?? ""
                : call.interface
            guard target.interfaces.contains(interface) else {
                if interface.isEmpty || AtspiInterfaces.methods[interface] == nil {
                    return .error(.unknownMethod(interface, call.member, path: call.path))
                }
                return .error(.unknownInterface(interface, path: call.path))
            }
            guard let method = AtspiInterfaces.methods[interface]?[call.member] else {
                return .error(.unknownMethod(interface, call.member, path: call.path))
            }
            guard call.signature == method.input else {
                return .error(.invalidArguments("\(interface).\(call.member) takes (\(method.input)), not (\(call.signature))"))
            }
            let arguments = AtspiArguments(call.arguments)
            switch interface {
            case Atspi.accessible: return accessible(call.member, arguments, target)
            case Atspi.application: return application(call.member, arguments)
            case Atspi.component: return component(call.member, arguments, target)
            case Atspi.action: return action(call.member, arguments, target)
            case Atspi.text: return text(call.member, arguments, target)
            case Atspi.editableText: return editableText(call.member, arguments, target)
            case Atspi.selection: return selection(call.member, arguments, target)
            default: return .error(.unknownMethod(interface, call.member, path: call.path))
            }
        }
    }

    /// The machine's D-Bus id (`org.freedesktop.DBus.Peer.GetMachineId`).
    static let machineID: String = {
        guard let id = dbus_try_get_local_machine_id(nil) else { return "" }
        defer { dbus_free(id) }
        return String(cString: id)
    }()

    // MARK: Accessible

    func name(of target: Target) -> String {
        guard let element = target.element else { return applicationName }
        return element.label
    }

    func role(of target: Target) -> AccessibilityRole { target.element?.role ?? .application }

    func states(of target: Target) -> AtspiStateSet {
        guard let element = target.element else { return AtspiStateSet() }
        return AtspiStateSet(element: element, isWindow: snapshot.isWindow(target.object),
                             windowIsActive: placement(of: target).isActive, isPlaceholder: target.isPlaceholder)
    }

    func attributes(of target: Target) -> [String: String] {
        guard let element = target.element else { return ["toolkit": "Tessera"] }
        var result: [String: String] = [:]
        if let level = element.headingLevel { result["level"] = String(level) }
        if let row = element.rowIndex, case .element(let list)? = target.parent,
           let count = snapshot.entry(list)?.element.rowCount {
            result["posinset"] = String(row + 1)
            result["setsize"] = String(count)
        }
        if element.role == .textField, !element.label.isEmpty { result["placeholder-text"] = element.label }
        return result
    }

    func parentReference(of target: Target) -> DBusValue {
        guard let parent = target.parent else { return desktop ?? nullReference }
        return reference(parent)
    }

    func children(of target: Target) -> [AtspiObject] {
        let count = min(snapshot.childCount(of: target.object), Self.childrenLimit)
        return (0..<count).compactMap { snapshot.child(of: target.object, at: $0) }
    }

    /// The most references `GetChildren` answers (a list of a million rows would make a message of
    /// tens of megabytes); `ChildCount` and `GetChildAtIndex` reach every row.
    static let childrenLimit = 65_536

    private func accessible(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        switch member {
        case "GetChildAtIndex":
            let child = target.isPlaceholder ? nil : snapshot.child(of: target.object, at: arguments.int(0))
            return .reply([child.map(reference) ?? nullReference])
        case "GetChildren":
            return .reply([.array(elementSignature: "(so)", target.isPlaceholder ? [] : children(of: target).map(reference))])
        case "GetIndexInParent":
            return .reply([.int32(Int32(clamping: target.indexInParent))])
        case "GetRelationSet":
            // Tessera's model has no relations (labelled-by, member-of, …) between elements.
            return .reply([.array(elementSignature: "(ua(so))", [])])
        case "GetRole":
            return .reply([.uint32(role(of: target).atspiRole)])
        case "GetRoleName", "GetLocalizedRoleName":
            return .reply([.string(role(of: target).atspiRoleName)])
        case "GetState":
            return .reply([.array(elementSignature: "u", states(of: target).words.map(DBusValue.uint32))])
        case "GetAttributes":
            return .reply([.stringDictionary(attributes(of: target))])
        case "GetApplication":
            return .reply([reference(.application)])
        case "GetInterfaces":
            return .reply([.array(elementSignature: "s", target.interfaces.map(DBusValue.string))])
        default:
            return .error(.unknownMethod(Atspi.accessible, member, path: target.object.path))
        }
    }

    // MARK: Application

    private func application(_ member: String, _ arguments: AtspiArguments) -> AtspiOutcome {
        switch member {
        case "GetLocale": return .reply([.string(locale)])
        // No peer-to-peer connection: everything goes through the accessibility bus.
        case "GetApplicationBusAddress": return .reply([.string("")])
        default: return .error(.unknownMethod(Atspi.application, member, path: Atspi.rootPath))
        }
    }

    // MARK: Properties

    /// The value of `interface`'s property `name` on `target`; nil when it has none of that name.
    func property(_ interface: String, _ name: String, of target: Target) -> DBusValue? {
        switch (interface, name) {
        case (Atspi.accessible, "Name"): return .string(self.name(of: target))
        case (Atspi.accessible, "Description"): return .string(target.element?.hint ?? "")
        case (Atspi.accessible, "Parent"): return parentReference(of: target)
        case (Atspi.accessible, "ChildCount"):
            return .int32(Int32(clamping: target.isPlaceholder ? 0 : snapshot.childCount(of: target.object)))
        case (Atspi.accessible, "Locale"): return .string(locale)
        case (Atspi.accessible, "AccessibleId"): return .string(target.element.map { String($0.id) } ?? "")
        case (Atspi.application, "ToolkitName"): return .string("Tessera")
        case (Atspi.application, "Version"), (Atspi.application, "ToolkitVersion"): return .string(toolkitVersion)
        case (Atspi.application, "AtspiVersion"): return .string(Atspi.protocolVersion)
        case (Atspi.application, "Id"): return .int32(applicationID)
        case (Atspi.action, "NActions"): return .int32(Int32(clamping: target.element?.actions.count ?? 0))
        case (Atspi.text, "CharacterCount"):
            return .int32(Int32(clamping: target.element?.text?.string.unicodeScalars.count ?? 0))
        case (Atspi.text, "CaretOffset"): return .int32(Int32(clamping: target.element?.text?.caretOffset ?? 0))
        case (Atspi.value, "MinimumValue"): return target.element?.valueRange.map { .double($0.minimum) }
        case (Atspi.value, "MaximumValue"): return target.element?.valueRange.map { .double($0.maximum) }
        case (Atspi.value, "CurrentValue"): return target.element?.valueRange.map { .double($0.current) }
        case (Atspi.value, "MinimumIncrement"): return target.element?.valueRange.map { .double($0.step) }
        case (Atspi.value, "Text"): return .string(target.element?.value ?? "")
        case (Atspi.selection, "NSelectedChildren"): return .int32(Int32(clamping: selectedChildren(of: target).count))
        default: return nil
        }
    }

    private func handleProperties(_ call: AtspiCall, _ target: Target) -> AtspiOutcome {
        let arguments = AtspiArguments(call.arguments)
        switch (call.member, call.signature) {
        case ("Get", "ss"):
            let interface = arguments.string(0), name = arguments.string(1)
            guard target.interfaces.contains(interface) else { return .error(.unknownInterface(interface, path: call.path)) }
            guard let value = property(interface, name, of: target) else { return .error(.unknownProperty(interface, name)) }
            return .reply([.variant(value)])
        case ("GetAll", "s"):
            let interface = arguments.string(0)
            guard target.interfaces.contains(interface) else { return .error(.unknownInterface(interface, path: call.path)) }
            let names = AtspiInterfaces.properties[interface] ?? []
            return .reply([.stringVariantDictionary(names.compactMap { name in
                property(interface, name.name, of: target).map { (name.name, $0) }
            })])
        case ("Set", "ssv"):
            let interface = arguments.string(0), name = arguments.string(1)
            guard target.interfaces.contains(interface) else { return .error(.unknownInterface(interface, path: call.path)) }
            guard property(interface, name, of: target) != nil else { return .error(.unknownProperty(interface, name)) }
            // The registry numbers the applications it embeds; nothing else is written from outside.
            if interface == Atspi.application, name == "Id" {
                guard case .variant(.int32(let id))? = call.arguments.last else {
                    return .error(.invalidArguments("Application.Id is an int32"))
                }
                applicationID = id
                return .reply([])
            }
            return .error(.readOnly(interface, name))
        default:
            if ["Get", "GetAll", "Set"].contains(call.member) {
                return .error(.invalidArguments("\(Atspi.properties).\(call.member) does not take (\(call.signature))"))
            }
            return .error(.unknownMethod(Atspi.properties, call.member, path: call.path))
        }
    }

    // MARK: Cache

    /// The cache interface (`/org/a11y/atspi/cache`): every element of the tree with what a client
    /// keeps of it, so a screen reader reads a new app in one call. A list's child count goes as -1,
    /// so its rows, read by index, are never taken from a client's cache.
    private func cache(_ call: AtspiCall) -> AtspiOutcome {
        if call.interface == Atspi.introspectable && call.member == "Introspect" && call.arguments.isEmpty {
            var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
            xml += "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
            xml += "  <interface name=\"\(Atspi.cache)\">\n    <method name=\"GetItems\">\n"
            xml += "      <arg direction=\"out\" type=\"\(Self.cacheItemsSignature)\"/>\n    </method>\n  </interface>\n</node>\n"
            return .reply([.string(xml)])
        }
        guard call.interface == Atspi.cache || call.interface.isEmpty, call.member == "GetItems" else {
            return .error(.unknownMethod(call.interface, call.member, path: call.path))
        }
        guard call.arguments.isEmpty else { return .error(.invalidArguments("\(Atspi.cache).GetItems takes no arguments")) }
        var items: [DBusValue] = []
        for window in snapshot.windows {
            let tree = window.tree
            for element in [tree.root] + tree.root.allElements.dropFirst() {
                guard let target = target(.element(element.id)) else { continue }
                items.append(cacheItem(target))
            }
        }
        return .reply([.array(elementSignature: String(Self.cacheItemsSignature.dropFirst()), items)])
    }

    static let cacheItemsSignature = "a((so)(so)(so)iiassusau)"

    private func cacheItem(_ target: Target) -> DBusValue {
        let childCount = target.rows != nil ? -1 : snapshot.childCount(of: target.object)
        return .structure([
            reference(target.object), reference(.application), parentReference(of: target),
            .int32(Int32(clamping: target.indexInParent)), .int32(Int32(clamping: childCount)),
            .array(elementSignature: "s", target.interfaces.map(DBusValue.string)),
            .string(name(of: target)), .uint32(role(of: target).atspiRole), .string(target.element?.hint ?? ""),
            .array(elementSignature: "u", states(of: target).words.map(DBusValue.uint32)),
        ])
    }

    // MARK: Introspection

    func introspection(of target: Target) -> String {
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
        xml += "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        for interface in target.interfaces + [Atspi.properties, Atspi.introspectable, Atspi.peer] {
            xml += "  <interface name=\"\(interface)\">\n"
            for (name, method) in (AtspiInterfaces.methods[interface] ?? [:]).sorted(by: { $0.key < $1.key }) {
                xml += "    <method name=\"\(name)\">\n"
                for (index, type) in AtspiInterfaces.completeTypes(method.input).enumerated() {
                    xml += "      <arg direction=\"in\" name=\"arg\(index)\" type=\"\(type)\"/>\n"
                }
                for type in AtspiInterfaces.completeTypes(method.output) {
                    xml += "      <arg direction=\"out\" type=\"\(type)\"/>\n"
                }
                xml += "    </method>\n"
            }
            for property in AtspiInterfaces.properties[interface] ?? [] {
                let access = interface == Atspi.application && property.name == "Id" ? "readwrite" : "read"
                xml += "    <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"\(access)\"/>\n"
            }
            xml += "  </interface>\n"
        }
        return xml + "</node>\n"
    }
}

/// A call's arguments, read after the call's signature was checked against the method's: each
/// accessor only converts.
struct AtspiArguments {
    let values: [DBusValue]
    init(_ values: [DBusValue]) { self.values = values }

    func int(_ index: Int) -> Int { index < values.count ? Int(values[index].int32Value ?? 0) : 0 }
    func uint(_ index: Int) -> UInt32 { index < values.count ? values[index].uint32Value ?? 0 : 0 }
    func string(_ index: Int) -> String { index < values.count ? values[index].stringValue ?? "" : "" }
    func bool(_ index: Int) -> Bool { index < values.count ? values[index].booleanValue ?? false : false }
}
