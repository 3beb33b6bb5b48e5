import FoundationEssentials
import Glibc
import Dispatch
import TesseraDBus

/// The portals' arguments as D-Bus values, and their answers read back: pure functions of values,
/// made and checked on the portal's thread and in tests.
/// - Thread: any
enum PortalMessages {
    static let desktopName = "org.freedesktop.portal.Desktop"
    static let desktopPath = "/org/freedesktop/portal/desktop"
    static let openURIInterface = "org.freedesktop.portal.OpenURI"
    static let fileChooserInterface = "org.freedesktop.portal.FileChooser"
    static let notificationInterface = "org.freedesktop.portal.Notification"
    static let requestInterface = "org.freedesktop.portal.Request"
    static let notificationsName = "org.freedesktop.Notifications"
    static let notificationsPath = "/org/freedesktop/Notifications"
    static let notificationsInterface = "org.freedesktop.Notifications"

    /// The folder under which the portal makes this connection's request objects: the unique name
    /// without its ":" and with "." as "_" (":1.42" → ".../request/1_42"), as the portal spec says.
    static func requestFolder(uniqueName: String) -> String {
        let sender = uniqueName.drop { $0 == ":" }.replacing(".", with: "_")
        return desktopPath + "/request/" + sender
    }

    /// The request object's path the portal will make for `token`.
    static func requestPath(uniqueName: String, token: String) -> String {
        requestFolder(uniqueName: uniqueName) + "/" + token
    }

    /// `OpenURI(s parent_window, s uri, a{sv} options)`.
    static func openURIArguments(uri: String, parentWindow: String, token: String, ask: Bool) -> [DBusValue] {
        var options: [(String, DBusValue)] = [("handle_token", .string(token))]
        if ask { options.append(("ask", .boolean(true))) }
        return [.string(parentWindow), .string(uri), .stringVariantDictionary(options)]
    }

    /// A filter as the portal takes it: `(sa(us))`, 0 for a glob, 1 for a MIME type.
    static func filterValue(_ filter: FileFilter) -> DBusValue {
        .structure([.string(filter.name), .array(elementSignature: "(us)", filter.patterns.map { pattern in
            switch pattern {
            case .glob(let glob): return .structure([.uint32(0), .string(glob)])
            case .mimeType(let type): return .structure([.uint32(1), .string(type)])
            }
        })])
    }

    /// A path as the portal takes `current_folder`: its bytes and a NUL (`ay`).
    static func pathBytes(_ url: URL) -> DBusValue {
        .array(elementSignature: "y", (Array(url.path.utf8) + [0]).map { .byte($0) })
    }

    /// `OpenFile` or `SaveFile` with `(s parent_window, s title, a{sv} options)`: the method and its arguments.
    static func fileChooserCall(_ options: FileChooserOptions, parentWindow: String, token: String) -> (member: String, arguments: [DBusValue]) {
        var entries: [(String, DBusValue)] = [("handle_token", .string(token)), ("modal", .boolean(options.isModal))]
        if let label = options.acceptLabel { entries.append(("accept_label", .string(label))) }
        switch options.mode {
        case .open:
            entries.append(("multiple", .boolean(options.allowsMultipleSelection)))
        case .folder:
            entries.append(("directory", .boolean(true)))
        case .save:
            if let name = options.suggestedName { entries.append(("current_name", .string(name))) }
        }
        if !options.filters.isEmpty {
            entries.append(("filters", .array(elementSignature: "(sa(us))", options.filters.map(filterValue))))
        }
        if let current = options.currentFilter { entries.append(("current_filter", filterValue(current))) }
        if let folder = options.currentFolder { entries.append(("current_folder", pathBytes(folder))) }
        let member = options.mode == .save ? "SaveFile" : "OpenFile"
        return (member, [.string(parentWindow), .string(options.resolvedTitle), .stringVariantDictionary(entries)])
    }

    /// `AddNotification(s id, a{sv} notification)`.
    static func addNotificationArguments(_ notification: DesktopNotification) -> [DBusValue] {
        var entries: [(String, DBusValue)] = [("title", .string(notification.title)), ("body", .string(notification.body)),
                                              ("priority", .string(notification.priority.rawValue))]
        if let action = notification.defaultAction { entries.append(("default-action", .string(action))) }
        if !notification.buttons.isEmpty {
            entries.append(("buttons", .array(elementSignature: "a{sv}", notification.buttons.map { button in
                .stringVariantDictionary([("label", .string(button.label)), ("action", .string(button.action))])
            })))
        }
        return [.string(notification.id), .stringVariantDictionary(entries)]
    }

    /// `Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions, a{sv} hints,
    /// i expire_timeout)`: the default action as the key "default", the buttons as key and label.
    static func notifyArguments(_ notification: DesktopNotification, applicationName: String, replacing: UInt32) -> [DBusValue] {
        var actions: [DBusValue] = []
        if notification.defaultAction != nil { actions += [.string("default"), .string("Open")] }
        for button in notification.buttons { actions += [.string(button.action), .string(button.label)] }
        let urgency: UInt8 = switch notification.priority {
        case .low: 0
        case .normal, .high: 1
        case .urgent: 2
        }
        return [.string(applicationName), .uint32(replacing), .string(""), .string(notification.title), .string(notification.body),
                .array(elementSignature: "s", actions), .stringVariantDictionary([("urgency", .byte(urgency))]), .int32(-1)]
    }

    // MARK: Answers

    /// What a request's `Response(u response, a{sv} results)` says.
    enum Response: Equatable {
        case success([String: DBusValue])
        case cancelled
        case failed
    }

    /// Reads a `Response` signal's arguments; nil (and why) when they are not `(u a{sv})` with a code 0…2.
    static func response(_ arguments: [DBusValue]?) -> Result<Response, PortalError> {
        guard let arguments, arguments.count == 2, let code = arguments[0].uint32Value,
              case .array(let signature, let entries) = arguments[1], signature == "{sv}" else {
            let shape = arguments.map { "(" + $0.map(\.signature).joined() + ")" } ?? "unreadable"
            return .failure(.malformedAnswer("Response has arguments \(shape), not (ua{sv})"))
        }
        switch code {
        case 0:
            var results: [String: DBusValue] = [:]
            for entry in entries {
                if case .dictEntry(.string(let key), .variant(let value)) = entry { results[key] = value }
            }
            return .success(.success(results))
        case 1: return .success(.cancelled)
        case 2: return .success(.failed)
        default: return .failure(.malformedAnswer("Response code \(code) is not 0, 1 or 2"))
        }
    }

    /// The files of a file chooser's results: `uris` (`as`), each a `file://` URI of an absolute path.
    static func chosenFiles(_ results: [String: DBusValue]) -> Result<[URL], PortalError> {
        guard let value = results["uris"] else { return .failure(.malformedAnswer("the results have no uris")) }
        guard case .array(let signature, let items) = value, signature == "s" else {
            return .failure(.malformedAnswer("uris is \(value.signature), not as"))
        }
        guard items.count <= DesktopPortal.maximumURICount else {
            return .failure(.invalidURI("\(items.count) URIs; at most \(DesktopPortal.maximumURICount) are taken"))
        }
        var urls: [URL] = []
        urls.reserveCapacity(items.count)
        for item in items {
            guard let text = item.stringValue else { return .failure(.malformedAnswer("uris is not as")) }
            switch fileURL(text) {
            case .success(let url): urls.append(url)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(urls)
    }

    /// A `file://` URI as a file URL: `file:///a%20b` or `file://localhost/a%20b`, whose path, its
    /// escapes decoded, is absolute, UTF-8 and has no NUL.
    static func fileURL(_ uri: String) -> Result<URL, PortalError> {
        let bytes = Array(uri.utf8)
        guard bytes.count <= DesktopPortal.maximumURILength else {
            return .failure(.invalidURI("a URI of \(bytes.count) bytes; the limit is \(DesktopPortal.maximumURILength)"))
        }
        let shown = String(uri.prefix(80))
        var rest: ArraySlice<UInt8>
        if uri.lowercased().hasPrefix("file:///") {
            rest = bytes[7...]
        } else if uri.lowercased().hasPrefix("file://localhost/") {
            rest = bytes[16...]
        } else {
            return .failure(.invalidURI("\(shown) is not a file:// URI of this machine"))
        }
        // The path ends where a query or fragment would start.
        if let end = rest.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { rest = rest[..<end] }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(rest.count)
        var index = rest.startIndex
        while index < rest.endIndex {
            let byte = rest[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < rest.endIndex, let high = hexValue(rest[index + 1]), let low = hexValue(rest[index + 2]) else {
                    return .failure(.invalidURI("\(shown) has a malformed %-escape"))
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(byte)
                index += 1
            }
        }
        guard !decoded.contains(0) else { return .failure(.invalidURI("\(shown) has a NUL in its path")) }
        guard let path = String(validating: decoded, as: UTF8.self) else {
            return .failure(.invalidURI("\(shown) is not UTF-8 once its escapes are decoded"))
        }
        guard path.hasPrefix("/") else { return .failure(.invalidURI("\(shown) has no absolute path")) }
        return .success(URL(fileURLWithPath: path))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The error names that say there is no such portal (or nobody answers for it): the request
    /// goes to the fallback.
    static func meansNoPortal(_ errorName: String) -> Bool {
        [
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.NoReply",
            "org.freedesktop.DBus.Error.TimedOut", "org.freedesktop.DBus.Error.Spawn.ServiceNotFound",
            "org.freedesktop.DBus.Error.Spawn.Failed",
        ].contains(errorName)
    }
}
