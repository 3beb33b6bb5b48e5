public import Compositor
import FoundationEssentials
import Glibc
import Compositor
import Dispatch
internal import CDBus
public import NodeRuntime

/// The AT-SPI2 bridge: makes an app's accessibility tree readable by screen readers on Linux (Orca)
/// over D-Bus, on a thread of its own.
///
/// `start()` connects on that thread: the session bus's `org.a11y.Bus.GetAddress` gives the
/// accessibility bus (or `AT_SPI_BUS_ADDRESS` does), a private connection registers there, and
/// `org.a11y.atspi.Socket.Embed` puts the app's root object in the registry's desktop. Every step
/// has a time-out; with no session bus, no accessibility bus or no registry, the bridge logs one line
/// (`TesseraLog.accessibility`, once per process) and stops, and the app runs without it.
///
/// Connected, the thread waits in `poll()` on the connection's socket and on an `eventfd` that other
/// threads write to hand it work: it runs when a screen reader asks something or the UI thread
/// publishes a tree, and never on a timer. The application object has one child per window
/// (`setWindows(_:)`, in order; one window of id 0 unless told otherwise), and each window's
/// requests are answered from the latest tree published for it (`publish(_:)`); what needs the UI
/// thread (an action, focus, an edit, a list's row without a node) is posted there (`UIPort`), for
/// the window whose tree holds the element, and the reply waits for its answer up to `uiTimeout`.
/// Each published tree is compared with the window's one before, and the differences go out as
/// AT-SPI events (`AtspiEvents`), as do windows that come and go and each window's activation.
/// - Thread: any
public final class AtspiBridge: Sendable {
    /// What the bridge tells screen readers about the app, and how long it waits.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// The application's name in the desktop (what Orca says when the app takes the focus).
        public var applicationName: String
        /// What `Application.Version` reports.
        public var toolkitVersion: String
        /// Where the bus addresses come from (`AT_SPI_BUS_ADDRESS`, `DBUS_SESSION_BUS_ADDRESS`,
        /// `XDG_RUNTIME_DIR`) and the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`); the process's
        /// environment unless given.
        public var environment: [String: String]
        /// The longest each bus call while connecting may take, in seconds.
        public var connectTimeout: Double
        /// The longest a reply waits for the UI thread's answer, in seconds; past it the caller gets
        /// `org.freedesktop.DBus.Error.TimedOut`.
        public var uiTimeout: Double

        /// What the bridge says and where it connects; `environment` nil takes the process's.
        /// - Thread: any
        public init(applicationName: String, toolkitVersion: String = AtspiBridge.toolkitVersion,
                    environment: [String: String]? = nil,
                    connectTimeout: Double = 5, uiTimeout: Double = 3) {
            self.applicationName = applicationName
            self.toolkitVersion = toolkitVersion
            self.environment = environment ?? ProcessInfo.processInfo.environment
            self.connectTimeout = connectTimeout
            self.uiTimeout = uiTimeout
        }
    }

    /// How the bridge reaches the UI thread.
    /// - Thread: any (a value); `answer` and `publishTree` run on the UI thread.
    public struct UIPort: Sendable {
        /// Runs work on the UI thread soon (the runtime's main queue, which wakes a waiting app).
        public var post: @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void
        /// Answers a request in the window (its window element's id) whose tree holds the request's
        /// element (`AtspiUIRequest.answer(on:)` on that window's host).
        public var answer: @MainActor @Sendable (_ request: AtspiUIRequest, _ window: Int) -> AtspiUIResponse
        /// Publishes the current trees (`publish(_:)`): asked once the bridge is connected.
        public var publishTree: @MainActor @Sendable () -> Void

        /// The three ways to the UI thread; `answer` is told the window. - Thread: any
        public init(post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void,
                    answerInWindow answer: @escaping @MainActor @Sendable (_ request: AtspiUIRequest, _ window: Int) -> AtspiUIResponse,
                    publishTree: @escaping @MainActor @Sendable () -> Void) {
            self.post = post
            self.answer = answer
            self.publishTree = publishTree
        }

        /// The three ways to the UI thread of an app of one window. - Thread: any
        public init(post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void,
                    answer: @escaping @MainActor @Sendable (AtspiUIRequest) -> AtspiUIResponse,
                    publishTree: @escaping @MainActor @Sendable () -> Void) {
            self.init(post: post, answerInWindow: { request, _ in answer(request) }, publishTree: publishTree)
        }
    }

    /// One of the application's windows as the bridge shows it: a child of the application whose
    /// element is the root of the trees published for it.
    /// - Thread: any (a value)
    public struct Window: Sendable {
        /// The window element's id: the root's id in the window's trees, unique among the windows.
        public var id: Int
        /// Where the window is on the screen and whether it has the keyboard focus (nil: at the
        /// screen's origin, never active).
        public var placement: WindowPlacement?

        public init(id: Int, placement: WindowPlacement?) {
            self.id = id
            self.placement = placement
        }
    }

    /// Where the bridge stands.
    /// - Thread: any (a value)
    public enum Status: Sendable, Equatable {
        /// Made, not started.
        case idle
        case connecting
        /// Embedded in the registry's desktop as `busName` on the accessibility bus.
        case connected(busName: String)
        /// Not connected, for the reason given (no bus, no registry, the connection lost).
        case unavailable(String)
        case stopped
    }

    /// The toolkit version AT-SPI's `Application.Version` reports.
    public static let toolkitVersion = "0.1"

    /// True when the environment turns the bridge off: `TESSERA_NO_ACCESSIBILITY` or GTK's
    /// `NO_AT_BRIDGE` set to anything but "" or "0" (nil: the process's environment).
    public static func isDisabled(by environment: [String: String]? = nil) -> Bool {
        let environment = environment ?? ProcessInfo.processInfo.environment
        return ["TESSERA_NO_ACCESSIBILITY", "NO_AT_BRIDGE"].contains { environment[$0].map { !$0.isEmpty && $0 != "0" } ?? false }
    }

    let configuration: Configuration
    let shared: AtspiBridgeShared
    private let ui: UIPort

    /// A bridge for an app whose one window has the element id 0 (`setWindows(_:)` changes the
    /// windows); `windowPlacement` (nil: the window is at the screen's origin) gives screen
    /// coordinates and whether the window is active. Nothing connects before `start()`.
    public init(configuration: Configuration, windowPlacement: WindowPlacement?, ui: UIPort) {
        self.configuration = configuration
        self.ui = ui
        shared = AtspiBridgeShared(windows: [Window(id: 0, placement: windowPlacement)])
    }

    deinit { stop() }

    /// Starts the bridge's thread, which connects and then serves; once only.
    public func start() {
        guard shared.state.withLock({ state -> Bool in
            guard state.status == .idle else { return false }
            state.status = .connecting
            return true
        }) else { return }
        let loop = AtspiBridgeLoopSeed(configuration: configuration, shared: shared, ui: ui)
        PlatformThread.detach(name: "tessera.atspi", stackSize: 1 << 20) { loop.run() }
    }

    /// Disconnects (the app leaves the desktop) and ends the thread; it cannot start again.
    public func stop() {
        let windows = shared.state.withLock { state in
            state.stopRequested = true
            if state.status == .idle { state.status = .stopped }
            return state.windows
        }
        for window in windows { window.placement?.setObserver(nil) }
        shared.wake()
    }

    /// Where the bridge stands now. - Thread: any
    public var status: Status { shared.state.withLock { $0.status } }

    /// True while embedded in the registry: the UI thread publishes trees only then.
    public var isConnected: Bool {
        if case .connected = status { return true }
        return false
    }

    /// Hands `tree`, the tree of the window whose element id is its root's (`Window.id`), to the
    /// bridge's thread, which answers from it from now on and sends the events that lead from the
    /// window's last tree to it. A tree of that window not yet taken is replaced; a tree of no
    /// window in `setWindows(_:)`'s list is dropped.
    public func publish(_ tree: AccessibilityTree) {
        let replaced = shared.state.withLock { $0.pendingTrees.updateValue(tree, forKey: tree.root.id) }
        shared.wake()
        _ = replaced  // let go outside the lock
    }

    /// The application's windows from now on, in the order screen readers list them (the
    /// application's children). A window shows once its first tree is published; one left out
    /// goes, with its tree (`ChildrenChanged` on the application either way).
    public func setWindows(_ windows: [Window]) {
        let replaced = shared.state.withLock { state -> [Window] in
            defer {
                state.windows = windows
                state.windowsChanged = true
            }
            return state.windows
        }
        shared.wake()
        _ = replaced  // let go outside the lock
    }

    /// The windows `setWindows(_:)` gave last. - Thread: any
    public var windows: [Window] { shared.state.withLock { $0.windows } }
}

/// What the bridge's thread shares with every other: the inbox under a lock and the `eventfd` that
/// wakes the thread's `poll()`.
/// - Thread: any
final class AtspiBridgeShared: @unchecked Sendable {
    struct State {
        var status = AtspiBridge.Status.idle
        /// Trees not yet taken, by window element id.
        var pendingTrees: [Int: AccessibilityTree] = [:]
        /// The application's windows, in order; `windowsChanged` until the thread took them.
        var windows: [AtspiBridge.Window]
        var windowsChanged = true
        var responses: [(token: Int, response: AtspiUIResponse)] = []
        /// A window's placement changed.
        var windowChanged = false
        var stopRequested = false
    }

    let state: Locked<State>
    /// Written to wake the thread; closed only when nothing can write it any more (this object goes).
    let wakeDescriptor: Int32

    init(windows: [AtspiBridge.Window]) {
        state = Locked(State(windows: windows))
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

    /// Empties the counter after a wake.
    func drainWake() {
        guard wakeDescriptor >= 0 else { return }
        var count: UInt64 = 0
        _ = read(wakeDescriptor, &count, 8)
    }

    func deliver(token: Int, response: AtspiUIResponse) {
        state.withLock { $0.responses.append((token, response)) }
        wake()
    }

    func setStatus(_ status: AtspiBridge.Status) {
        state.withLock { state in
            if state.status != .stopped { state.status = status }
        }
    }
}

/// What the thread starts from: every part `Sendable`, so it can cross into the new thread, where
/// the loop that owns the connection is made.
struct AtspiBridgeLoopSeed: Sendable {
    let configuration: AtspiBridge.Configuration
    let shared: AtspiBridgeShared
    let ui: AtspiBridge.UIPort

    func run() {
        AtspiBridgeLoop(seed: self).run()
    }
}
