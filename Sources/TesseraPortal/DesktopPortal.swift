internal import CDBus
public import FoundationEssentials
import Glibc
import Compositor
import Dispatch
public import NodeRuntime
import TesseraDBus

/// The desktop around the app, through the XDG desktop portals on the session bus: open a link in
/// the user's browser (`OpenURI`), ask the user for files (`FileChooser`), post notifications
/// (`Notification`), each with a fallback when no portal answers.
///
/// Every request is asynchronous: a method returns at once, the bus is spoken to on a thread of
/// the portal's own (started by the first request), and the result reaches the UI thread through
/// `post` (an `Application`'s: the runtime's main queue). That thread waits in `poll()` on the bus's
/// socket and on an `eventfd` that new requests and `stop()` write; every call it makes has a
/// time-out (`callTimeout`), and every request waits for its answer (`Response`) at most
/// `responseTimeout`, after which the request is closed (`org.freedesktop.portal.Request.Close`)
/// and the completion gets `PortalError.timedOut`. Answers of the wrong type, URIs that are not
/// usable files, or too many or too long, end a request with a `PortalError`, never a crash.
///
/// Fallbacks, used when the bus has no portal (the bus says there is no such name, method or
/// interface) or the portal does not answer the call within `callTimeout`:
/// - `openURI`: the `xdg-open` found on the environment's `PATH`, run with the URI as its one
///   argument; it succeeds when `xdg-open` exits with 0 (or still runs after `callTimeout`).
/// - `chooseFiles`: the in-app chooser set with `setFileChooserFallback` (an `Application` sets
///   `FileChooserController`'s), on the UI thread.
/// - `postNotification`: the notification server, `org.freedesktop.Notifications.Notify`, whose
///   `ActionInvoked` reaches the same handler.
/// - Thread: any
public final class DesktopPortal: Sendable {
    /// Where the portals are looked for, how long they may take, and what links open by default.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// The session bus's address (`DBUS_SESSION_BUS_ADDRESS`, or `$XDG_RUNTIME_DIR/bus`) and the
        /// `PATH` (and the rest of the environment) `xdg-open` runs with; the process's unless given.
        public var environment: [String: String]
        /// The longest a portal may take to answer a call (to take a request), in seconds; past it
        /// the fallback is used.
        public var callTimeout: Double
        /// The longest a request waits for the portal's `Response` (the user choosing files), in
        /// seconds; past it the request is closed and ends with `PortalError.timedOut`.
        public var responseTimeout: Double
        /// The schemes `openLink` (and so a tapped link) opens; others need the app's own handler.
        public var linkSchemes: Set<String>
        /// The name the fallback notification server shows (`Notify`'s `app_name`).
        public var applicationName: String

        public init(environment: [String: String]? = nil, callTimeout: Double = 5, responseTimeout: Double = 1800,
                    linkSchemes: Set<String> = ["http", "https", "mailto"], applicationName: String = "Tessera") {
            self.environment = environment ?? ProcessInfo.processInfo.environment
            self.callTimeout = callTimeout
            self.responseTimeout = responseTimeout
            self.linkSchemes = linkSchemes
            self.applicationName = applicationName
        }
    }

    /// Where the portal's thread stands.
    /// - Thread: any (a value)
    public enum Status: Sendable, Equatable {
        /// No request yet: no thread, no connection.
        case idle
        case connecting
        /// Connected to the session bus (which may or may not have the portals: each request finds out).
        case connected
        /// No session bus, for the reason given: requests go to their fallbacks.
        case unavailable(String)
        case stopped
    }

    /// A URI longer than this (in UTF-8 bytes) is refused, coming or going: a file path is at most
    /// 4,096 bytes, three times that escaped.
    public static let maximumURILength = 16 << 10
    /// The most files one answer may name.
    public static let maximumURICount = 10_000
    /// The longest notification id or action name taken from the bus.
    public static let maximumActionLength = 4 << 10

    let configuration: Configuration
    let shared: DesktopPortalShared

    /// A portal whose results reach the UI thread through `post` (which runs its work there, e.g. the
    /// runtime's main queue). Nothing connects before the first request.
    public init(configuration: Configuration = Configuration(),
                post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void) {
        self.configuration = configuration
        shared = DesktopPortalShared(post: post)
    }

    deinit { stop() }

    /// Where the portal's thread stands now.
    public var status: Status { shared.state.withLock { $0.status } }

    /// Ends the thread: requests waiting end with `PortalError.stopped` (those the portal holds are
    /// closed first), and later ones at once.
    public func stop() {
        shared.state.withLock { state in
            state.stopRequested = true
            if state.status == .idle { state.status = .stopped }
        }
        shared.wake()
    }

    // MARK: Open a URI

    /// Opens `url` in the app the desktop chooses for it (`org.freedesktop.portal.OpenURI.OpenURI`),
    /// or with `xdg-open` when no portal answers. Any scheme: the app decides (`openLink` applies
    /// `linkSchemes`). `parentWindow` is the portal's name for the window ("x11:1e00004"; "" for
    /// none); `ask` asks the user to choose the app.
    /// - Thread: any; `completion` runs on the UI thread.
    public func openURI(_ url: URL, parentWindow: String = "", ask: Bool = false,
                        completion: (@MainActor @Sendable (Result<OpenURIOutcome, PortalError>) -> Void)? = nil) {
        let uri = url.absoluteString
        let completion = completion ?? { _ in }
        guard let scheme = url.scheme, !scheme.isEmpty else {
            return shared.deliver(completion, .failure(.invalidURI("\(uri.prefix(80)) has no scheme")))
        }
        guard uri.utf8.count <= Self.maximumURILength else {
            return shared.deliver(completion, .failure(.invalidURI("a URI of \(uri.utf8.count) bytes; the limit is \(Self.maximumURILength)")))
        }
        enqueue(.openURI(uri: uri, parentWindow: parentWindow, ask: ask, completion: completion))
    }

    /// Opens a link's value (a tapped `TextNode` link) when its scheme is one of `linkSchemes`
    /// (http, https and mailto by default); other schemes, a `file:` URL among them, end with
    /// `PortalError.schemeNotAllowed` and are not opened: the app opens those itself, from its own
    /// `linkTapHandler` (with `openURI`, if it wants the desktop to).
    /// - Thread: any; `completion` runs on the UI thread.
    public func openLink(_ link: String, parentWindow: String = "",
                         completion: (@MainActor @Sendable (Result<OpenURIOutcome, PortalError>) -> Void)? = nil) {
        let completion = completion ?? { _ in }
        guard let url = URL(string: link), let scheme = url.scheme?.lowercased(), configuration.linkSchemes.contains(scheme) else {
            let scheme = URL(string: link)?.scheme ?? ""
            return shared.deliver(completion, .failure(.schemeNotAllowed(scheme)))
        }
        openURI(url, parentWindow: parentWindow, completion: completion)
    }

    // MARK: Choose files

    /// Asks the user for files, a folder or a name to save as (`org.freedesktop.portal.FileChooser`'s
    /// `OpenFile` or `SaveFile`), as a dialog of the desktop's over `parentWindow`; without a portal,
    /// through the in-app fallback (`setFileChooserFallback`). The completion gets the chosen files'
    /// URLs, nil when the user cancelled, or a `PortalError`.
    /// - Thread: any; `completion` runs on the UI thread.
    public func chooseFiles(_ options: FileChooserOptions, parentWindow: String = "",
                            completion: @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) {
        enqueue(.chooseFiles(options, parentWindow: parentWindow, completion: completion))
    }

    /// The in-app file chooser used when no portal answers: called on the UI thread with the options
    /// and the completion to call once (URLs, nil for cancel). Nil (the default): such requests end
    /// with `PortalError.portalUnavailable`.
    /// - Thread: any
    public func setFileChooserFallback(
        _ fallback: (@MainActor @Sendable (FileChooserOptions, @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) -> Void)?
    ) {
        let old = shared.state.withLock { state in
            defer { state.fileChooserFallback = fallback }
            return state.fileChooserFallback
        }
        withExtendedLifetime(old) {}
    }

    // MARK: Notifications

    /// Posts `notification` (`org.freedesktop.portal.Notification.AddNotification`), or through the
    /// notification server (`org.freedesktop.Notifications.Notify`) without a portal. The completion
    /// says which took it.
    /// - Thread: any; `completion` runs on the UI thread.
    public func postNotification(_ notification: DesktopNotification,
                                 completion: (@MainActor @Sendable (Result<DesktopRoute, PortalError>) -> Void)? = nil) {
        let completion = completion ?? { _ in }
        let actions = notification.buttons.map(\.action) + (notification.defaultAction.map { [$0] } ?? [])
        if let reserved = actions.first(where: { $0.hasPrefix("app.") }) {
            return shared.deliver(completion, .failure(.failed("the action \(reserved) starts with \"app.\", which the portal activates by D-Bus activation instead of sending it back")))
        }
        enqueue(.addNotification(notification, completion: completion))
    }

    /// Takes the notification `id` away (the portal's `RemoveNotification`, or the server's
    /// `CloseNotification`). Unknown ids are ignored.
    /// - Thread: any
    public func removeNotification(id: String) {
        enqueue(.removeNotification(id))
    }

    /// Called on the UI thread when the user clicks a notification this app posted or one of its
    /// buttons. Nil: actions are dropped.
    /// - Thread: any
    public func setNotificationActionHandler(_ handler: (@MainActor @Sendable (NotificationAction) -> Void)?) {
        let old = shared.state.withLock { state in
            defer { state.notificationActionHandler = handler }
            return state.notificationActionHandler
        }
        withExtendedLifetime(old) {}
    }

    // MARK: The thread

    private func enqueue(_ command: DesktopPortalCommand) {
        let (accepted, start) = shared.state.withLock { state -> (Bool, Bool) in
            guard !state.stopRequested else { return (false, false) }
            state.commands.append(command)
            let start = state.status == .idle
            if start { state.status = .connecting }
            return (true, start)
        }
        guard accepted else { return command.fail(.stopped, shared: shared) }
        if start {
            let seed = DesktopPortalLoopSeed(configuration: configuration, shared: shared)
            PlatformThread.detach(name: "tessera.desktop-portal", stackSize: 512 << 10) {
                DesktopPortalLoop(seed: seed).run()
            }
        } else {
            shared.wake()
        }
    }
}

/// A request on its way to the portal's thread.
/// - Thread: any (a value)
enum DesktopPortalCommand: Sendable {
    case openURI(uri: String, parentWindow: String, ask: Bool, completion: @MainActor @Sendable (Result<OpenURIOutcome, PortalError>) -> Void)
    case chooseFiles(FileChooserOptions, parentWindow: String, completion: @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void)
    case addNotification(DesktopNotification, completion: @MainActor @Sendable (Result<DesktopRoute, PortalError>) -> Void)
    case removeNotification(String)

    func fail(_ error: PortalError, shared: DesktopPortalShared) {
        switch self {
        case .openURI(_, _, _, let completion): shared.deliver(completion, .failure(error))
        case .chooseFiles(_, _, let completion): shared.deliver(completion, .failure(error))
        case .addNotification(_, let completion): shared.deliver(completion, .failure(error))
        case .removeNotification: break
        }
    }
}

/// What the portal's thread shares with every other: the state under a lock, the `eventfd` that
/// wakes its `poll()`, and the hand-off to the UI thread.
/// - Thread: any
final class DesktopPortalShared: @unchecked Sendable {
    struct State {
        var status = DesktopPortal.Status.idle
        var commands: [DesktopPortalCommand] = []
        var stopRequested = false
        var fileChooserFallback: (@MainActor @Sendable (FileChooserOptions, @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) -> Void)?
        var notificationActionHandler: (@MainActor @Sendable (NotificationAction) -> Void)?
    }

    // Set once in `init` (`state` is a lock of its own); the descriptor is written and read with
    // system calls any thread may make.
    let state = Locked(State())
    let wakeDescriptor: Int32
    let post: @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void

    init(post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void) {
        self.post = post
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
    }

    func wake() {
        guard wakeDescriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    func drainWake() {
        guard wakeDescriptor >= 0 else { return }
        var count: UInt64 = 0
        _ = read(wakeDescriptor, &count, 8)
    }

    func setStatus(_ status: DesktopPortal.Status) {
        state.withLock { state in
            if state.status != .stopped { state.status = status }
        }
    }

    /// Runs `completion(result)` on the UI thread.
    func deliver<Value: Sendable>(_ completion: @escaping @MainActor @Sendable (Result<Value, PortalError>) -> Void,
                                  _ result: Result<Value, PortalError>) {
        post { completion(result) }
    }

    /// Hands `action` to the app's handler on the UI thread (read there, so a handler set meanwhile
    /// is the one called).
    func deliverAction(_ action: NotificationAction) {
        post { [self] in
            let handler = state.withLock { $0.notificationActionHandler }
            handler?(action)
        }
    }
}

/// What the thread starts from: every part `Sendable`.
struct DesktopPortalLoopSeed: Sendable {
    let configuration: DesktopPortal.Configuration
    let shared: DesktopPortalShared
}
