public import FoundationEssentials
import Glibc
import Dispatch
public import Logging
public import NodeRuntime

extension TesseraLog {
    /// The desktop's portals (`DesktopPortal`): no session bus or no portal, and the fallback used
    /// instead; answers of the wrong type; requests that timed out.
    public static let portals = Logger(label: "tessera.portals")
}

/// Why a portal request did not give what was asked.
/// - Thread: any (a value)
public enum PortalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No session bus to reach (`DBUS_SESSION_BUS_ADDRESS` unset and no `$XDG_RUNTIME_DIR/bus`, or the
    /// bus refused the connection), and no fallback that does without one.
    case noSessionBus(String)
    /// The bus has no such portal (or it did not answer within `callTimeout`) and no fallback could
    /// be used (none installed: no in-app file chooser set, fallbacks turned off).
    case portalUnavailable(String)
    /// The portal refused the request: an error reply (its name and text), or `Response` 2.
    case failed(String)
    /// The portal took the request and sent no `Response` within `responseTimeout` seconds; the
    /// request was closed (`org.freedesktop.portal.Request.Close`).
    case timedOut(seconds: Double)
    /// An answer whose type is not the documented one (a reply that is not an object path, a
    /// `Response` that is not `(u a{sv})`, `uris` that is not `as`, a response code outside 0…2).
    case malformedAnswer(String)
    /// A URI the portal gave back that is not a usable file: not `file://`, not absolute, longer than
    /// `DesktopPortal.maximumURILength`, not UTF-8 once its escapes are decoded, or with a NUL in it;
    /// or more than `DesktopPortal.maximumURICount` of them. The whole answer is refused.
    case invalidURI(String)
    /// A link whose scheme the app did not allow (`DesktopPortal.Configuration.linkSchemes`).
    case schemeNotAllowed(String)
    /// The fallback failed too: `xdg-open` missing or exiting with an error, the notification
    /// server refusing.
    case fallbackFailed(String)
    /// The portal was stopped before the answer came.
    case stopped

    public var description: String {
        switch self {
        case .noSessionBus(let reason): return "no session bus: \(reason)"
        case .portalUnavailable(let reason): return "no portal: \(reason)"
        case .failed(let reason): return "the portal refused: \(reason)"
        case .timedOut(let seconds): return "the portal sent no answer in \(seconds) s; the request was closed"
        case .malformedAnswer(let reason): return "the portal's answer has the wrong type: \(reason)"
        case .invalidURI(let reason): return "the portal gave an unusable URI: \(reason)"
        case .schemeNotAllowed(let scheme): return "links with the scheme \"\(scheme)\" are not opened without the app's say-so"
        case .fallbackFailed(let reason): return "the fallback failed: \(reason)"
        case .stopped: return "the portal was stopped"
        }
    }
}

/// Who carried a request out: the desktop's portal, or the fallback (`xdg-open`, the in-app file
/// chooser, the `org.freedesktop.Notifications` server).
/// - Thread: any (a value)
public enum DesktopRoute: Sendable, Hashable {
    case portal
    case fallback
}

/// What became of a URI handed to the desktop.
/// - Thread: any (a value)
public enum OpenURIOutcome: Sendable, Hashable {
    /// Handed to the app that opens it (by the portal, or `xdg-open` which exited with 0 or was still
    /// running after `callTimeout`).
    case opened(DesktopRoute)
    /// The user dismissed the portal's choice of app (`Response` 1).
    case cancelled
}

/// A group of files a file chooser offers to show: a name and glob patterns or MIME types
/// (the portal's `(sa(us))`).
/// - Thread: any (a value)
public struct FileFilter: Sendable, Hashable {
    public enum Pattern: Sendable, Hashable {
        /// A shell glob, "*.png" (case-sensitive).
        case glob(String)
        /// A MIME type, "image/png".
        case mimeType(String)
    }

    public var name: String
    public var patterns: [Pattern]

    public init(name: String, patterns: [Pattern]) {
        self.name = name
        self.patterns = patterns
    }

    /// PNG, JPEG, WebP and GIF images, by MIME type and by extension.
    public static let images = FileFilter(name: "Images", patterns: [
        .mimeType("image/png"), .mimeType("image/jpeg"), .mimeType("image/webp"), .mimeType("image/gif"),
        .glob("*.png"), .glob("*.jpg"), .glob("*.jpeg"), .glob("*.webp"), .glob("*.gif"),
    ])

    /// Whether a file named `name` matches one of the glob patterns (the in-app chooser's test; it
    /// knows no MIME types, so a filter of MIME types alone matches every file).
    public func matches(fileName name: String) -> Bool {
        let globs = patterns.compactMap { pattern -> String? in if case .glob(let glob) = pattern { return glob } else { return nil } }
        guard !globs.isEmpty else { return true }
        return globs.contains { glob in fnmatch(glob, name, 0) == 0 }
    }
}

/// What a file chooser asks for.
/// - Thread: any (a value)
public struct FileChooserOptions: Sendable, Hashable {
    public enum Mode: Sendable, Hashable {
        /// Existing files (`OpenFile`).
        case open
        /// A name to save as (`SaveFile`).
        case save
        /// An existing folder (`OpenFile` with `directory`).
        case folder
    }

    public var mode: Mode
    /// The dialog's title; empty: "Open", "Save" or "Choose a Folder".
    public var title: String
    /// The accept button's label (`accept_label`); nil: the portal's own.
    public var acceptLabel: String?
    /// More than one file may be chosen (`multiple`; open only).
    public var allowsMultipleSelection: Bool
    /// The filters offered, in order (`filters`).
    public var filters: [FileFilter]
    /// The filter chosen at first (`current_filter`); one of `filters`, or the first when nil.
    public var currentFilter: FileFilter?
    /// The name a save starts with (`current_name`).
    public var suggestedName: String?
    /// The folder the chooser starts in (`current_folder`, a path as bytes).
    public var currentFolder: URL?
    /// The dialog is modal to the parent window (`modal`).
    public var isModal: Bool

    public init(mode: Mode = .open, title: String = "", acceptLabel: String? = nil, allowsMultipleSelection: Bool = false,
                filters: [FileFilter] = [], currentFilter: FileFilter? = nil, suggestedName: String? = nil,
                currentFolder: URL? = nil, isModal: Bool = true) {
        self.mode = mode
        self.title = title
        self.acceptLabel = acceptLabel
        self.allowsMultipleSelection = allowsMultipleSelection
        self.filters = filters
        self.currentFilter = currentFilter
        self.suggestedName = suggestedName
        self.currentFolder = currentFolder
        self.isModal = isModal
    }

    /// `title`, or the mode's own when it is empty.
    public var resolvedTitle: String {
        if !title.isEmpty { return title }
        switch mode {
        case .open: return allowsMultipleSelection ? "Open Files" : "Open File"
        case .save: return "Save File"
        case .folder: return "Choose a Folder"
        }
    }
}

/// A notification for the desktop's notification centre.
/// - Thread: any (a value)
public struct DesktopNotification: Sendable, Hashable {
    /// A button under the notification: its label and the action name it sends back.
    public struct Button: Sendable, Hashable {
        public var label: String
        public var action: String
        public init(label: String, action: String) {
            self.label = label
            self.action = action
        }
    }

    public enum Priority: String, Sendable, Hashable {
        case low, normal, high, urgent
    }

    /// The app's name for it: posting again with the same id replaces it, and `removeNotification`
    /// takes it away.
    public var id: String
    public var title: String
    public var body: String
    public var buttons: [Button]
    /// The action sent back when the notification itself is clicked; nil: none.
    public var defaultAction: String?
    public var priority: Priority

    /// Action names are the app's own. A name starting with "app." is refused by `postNotification`:
    /// the portal would activate such an action through `org.freedesktop.Application` (D-Bus
    /// activation), not send it back to this process.
    public init(id: String, title: String, body: String = "", buttons: [Button] = [], defaultAction: String? = nil,
                priority: Priority = .normal) {
        self.id = id
        self.title = title
        self.body = body
        self.buttons = buttons
        self.defaultAction = defaultAction
        self.priority = priority
    }
}

/// The user acted on a notification: clicked it (its `defaultAction`) or one of its buttons.
/// - Thread: any (a value)
public struct NotificationAction: Sendable, Hashable {
    /// The notification's `id`.
    public var notificationID: String
    /// The action name: a button's `action`, or the notification's `defaultAction`.
    public var action: String
    /// The action's parameter as the portal sent it, when it is a string (the portal's `av`); nil otherwise.
    public var parameter: String?
    /// The portal (`org.freedesktop.portal.Notification`) or the fallback server
    /// (`org.freedesktop.Notifications`).
    public var route: DesktopRoute

    public init(notificationID: String, action: String, parameter: String? = nil, route: DesktopRoute) {
        self.notificationID = notificationID
        self.action = action
        self.parameter = parameter
        self.route = route
    }
}
