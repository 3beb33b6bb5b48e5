internal import CDBus
import FoundationEssentials
import Glibc
import Compositor
import Dispatch
public import NodeRuntime
import TesseraDBus

/// Follows the desktop's appearance through the XDG settings portal (`org.freedesktop.portal.Desktop`
/// at `/org/freedesktop/portal/desktop`, interface `org.freedesktop.portal.Settings`) on a thread of
/// its own, and hands each new appearance to the UI thread.
///
/// `start()` starts the thread, which connects to the session bus (a private connection, as the
/// AT-SPI bridge makes), subscribes to `SettingChanged` from the portal, and reads the settings once
/// with `ReadAll` (or, from a portal without it, `Read` key by key); every call has a time-out
/// (`Configuration.callTimeout`). The settings give an appearance (`PortalSettings`, which documents
/// the keys and the fallbacks); it is posted to the UI thread through `post` and applied there with
/// `apply`. Then the thread waits in `poll()` on the bus's socket and on an `eventfd` that `stop()`
/// writes: it runs only when the portal says something changed, never on a timer, and the app's UI
/// thread is woken only when the appearance it shows changes. Changes that arrive faster than the UI
/// thread takes them are folded into one: it applies the newest.
///
/// Without a session bus, or without a portal on it, the thread says why once
/// (`TesseraLog.appearance`) and the app keeps the appearance its environment gives
/// (`PortalSettings().appearance(environment:)`); with a bus and no portal it keeps listening, so a
/// portal that starts later is followed from its first change.
/// - Thread: any
public final class SettingsPortal: Sendable {
    /// Where the portal is looked for and how long a call may take.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// The session bus's address (`DBUS_SESSION_BUS_ADDRESS`, or `$XDG_RUNTIME_DIR/bus`) and
        /// `GTK_THEME`; the process's environment unless given.
        public var environment: [String: String]
        /// The longest each bus call may take, in seconds.
        public var callTimeout: Double
        /// How long, in seconds, after a memory warning was handed to the UI thread a warning at the
        /// same level or lower is only taken in (`memoryWarningsReceived`), not handed over again: what
        /// it asks for was let go already, and a portal that floods the bus does not keep the UI thread
        /// releasing memory. A higher level is handed over at once.
        public var memoryWarningInterval: Double

        public init(environment: [String: String]? = nil, callTimeout: Double = 2, memoryWarningInterval: Double = 5) {
            self.environment = environment ?? ProcessInfo.processInfo.environment
            self.callTimeout = callTimeout
            self.memoryWarningInterval = memoryWarningInterval
        }
    }

    /// Where the reader stands.
    /// - Thread: any (a value)
    public enum Status: Sendable, Equatable {
        /// Made, not started.
        case idle
        case connecting
        /// Read the portal's settings and follows its changes.
        case following
        /// Connected to the bus, which has no settings portal (or it did not answer): listening for
        /// one, with the environment's appearance meanwhile.
        case noPortal(String)
        /// Not connected, for the reason given (no session bus, the connection lost).
        case unavailable(String)
        case stopped
    }

    let configuration: Configuration
    let shared: SettingsPortalShared

    /// A reader whose appearances reach the UI thread through `post` (which runs its work there, e.g.
    /// the runtime's main queue) and are applied there by `apply`. Nothing connects before `start()`.
    ///
    /// `lowMemory`, when given, hears the desktop's memory monitor on the same connection (the portal's
    /// `org.freedesktop.portal.MemoryMonitor`, signal `LowMemoryWarning(y level)`), on the UI thread:
    /// warnings that arrive faster than the UI thread takes them are folded into one, at the highest
    /// level among them. A signal with other arguments is ignored (and said once).
    public init(configuration: Configuration = Configuration(),
                post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void,
                apply: @escaping @MainActor @Sendable (Appearance) -> Void,
                lowMemory: (@MainActor @Sendable (MemoryWarningLevel) -> Void)? = nil) {
        self.configuration = configuration
        shared = SettingsPortalShared(post: post, apply: apply, lowMemory: lowMemory,
                                      memoryWarningInterval: configuration.memoryWarningInterval)
    }

    deinit { stop() }

    /// Starts the thread; once only.
    public func start() {
        guard shared.state.withLock({ state -> Bool in
            guard state.status == .idle else { return false }
            state.status = .connecting
            return true
        }) else { return }
        let seed = SettingsPortalLoopSeed(configuration: configuration, shared: shared)
        PlatformThread.detach(name: "tessera.portal", stackSize: 512 << 10) {
            SettingsPortalLoop(seed: seed).run()
        }
    }

    /// Disconnects and ends the thread; it cannot start again.
    public func stop() {
        shared.state.withLock { state in
            state.stopRequested = true
            if state.status == .idle { state.status = .stopped }
        }
        shared.wake()
        shared.firstReading.signalOnce()
    }

    /// Where the reader stands now.
    public var status: Status { shared.state.withLock { $0.status } }

    /// The settings last read (nil before the first reading, or without a portal).
    public var settings: PortalSettings? { shared.state.withLock { $0.settings } }

    /// The appearance the portal's settings gave last (nil before the first reading, or without a portal).
    public var latestAppearance: Appearance? { shared.state.withLock { $0.latest } }

    /// `SettingChanged` signals taken in so far (whether or not they changed the appearance).
    public var changesReceived: Int { shared.state.withLock { $0.changesReceived } }

    /// `LowMemoryWarning` signals taken in so far (0 without a `lowMemory` handler: none is listened for).
    public var memoryWarningsReceived: Int { shared.state.withLock { $0.memoryWarningsReceived } }

    /// Waits until the first reading is done (read, or known not to come) or `timeout` seconds have
    /// passed, and returns the appearance read, if any: an app asks before its first frame so that it
    /// does not show light for a moment on a dark desktop. Bounded: a portal that does not answer
    /// costs at most `timeout`.
    public func waitForFirstReading(timeout: Double) -> Appearance? {
        shared.firstReading.wait(timeout: timeout)
        return latestAppearance
    }
}

/// What the reader's thread shares with every other: the state under a lock, the `eventfd` that
/// wakes the thread's `poll()`, and the hand-off to the UI thread.
/// - Thread: any
final class SettingsPortalShared: @unchecked Sendable {
    struct State {
        var status = SettingsPortal.Status.idle
        var settings: PortalSettings?
        var latest: Appearance?
        /// An appearance is posted to the UI thread and not yet applied: a newer one only replaces
        /// `latest`, and the posted work applies whichever is newest then.
        var posted = false
        var changesReceived = 0
        var memoryWarningsReceived = 0
        /// The highest memory warning taken in and not yet handed to the UI thread's handler; one
        /// hand-off is posted at a time.
        var pendingWarning: MemoryWarningLevel?
        var warningPosted = false
        /// The last warning handed to the UI thread's handler, and when (`DispatchTime` nanoseconds).
        var lastHandedWarning: (level: MemoryWarningLevel, at: UInt64)?
        var stopRequested = false
    }

    // The stored properties are set once in `init` (`state` is a lock of its own); the descriptor is
    // written and read with system calls that any thread may make.
    let state = Locked(State())
    let wakeDescriptor: Int32
    let firstReading = OneShotSignal()
    private let post: @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void
    private let apply: @MainActor @Sendable (Appearance) -> Void
    let lowMemory: (@MainActor @Sendable (MemoryWarningLevel) -> Void)?
    /// `Configuration.memoryWarningInterval`, in nanoseconds.
    let memoryWarningInterval: UInt64

    init(post: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void,
         apply: @escaping @MainActor @Sendable (Appearance) -> Void,
         lowMemory: (@MainActor @Sendable (MemoryWarningLevel) -> Void)? = nil,
         memoryWarningInterval: Double = 0) {
        self.post = post
        self.apply = apply
        self.lowMemory = lowMemory
        self.memoryWarningInterval = UInt64(max(0, min(memoryWarningInterval, 1e9)) * 1e9)
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

    func setStatus(_ status: SettingsPortal.Status) {
        state.withLock { state in
            if state.status != .stopped { state.status = status }
        }
    }

    /// Keeps `settings` and their appearance; posts to the UI thread when the appearance differs from
    /// the last one posted and nothing is waiting there already.
    func deliver(_ settings: PortalSettings, _ appearance: Appearance) {
        let needsPost = state.withLock { state -> Bool in
            let changed = state.latest != appearance
            state.settings = settings
            state.latest = appearance
            guard changed, !state.posted, !state.stopRequested else { return false }
            state.posted = true
            return true
        }
        guard needsPost else { return }
        let apply = self.apply
        post { [self] in
            let newest = state.withLock { state -> Appearance? in
                state.posted = false
                return state.stopRequested ? nil : state.latest
            }
            if let newest { apply(newest) }
        }
    }
}

extension SettingsPortalShared {
    /// Takes a memory warning: kept at the highest level not yet handed over, and posted to the UI
    /// thread unless a hand-off is on its way (which then hands over the highest). One no higher than
    /// the last handed over, within `memoryWarningInterval` of it, is only counted.
    func deliverMemoryWarning(_ level: MemoryWarningLevel) {
        guard let lowMemory else { return }
        let interval = memoryWarningInterval
        let needsPost = state.withLock { state -> Bool in
            state.memoryWarningsReceived += 1
            if let last = state.lastHandedWarning, level <= last.level,
               DispatchTime.now().uptimeNanoseconds &- last.at < interval { return false }
            state.pendingWarning = max(state.pendingWarning ?? level, level)
            guard !state.warningPosted, !state.stopRequested else { return false }
            state.warningPosted = true
            return true
        }
        guard needsPost else { return }
        post { [self] in
            let level = state.withLock { state -> MemoryWarningLevel? in
                state.warningPosted = false
                defer { state.pendingWarning = nil }
                guard !state.stopRequested, let level = state.pendingWarning else { return nil }
                state.lastHandedWarning = (level, DispatchTime.now().uptimeNanoseconds)
                return level
            }
            if let level { lowMemory(level) }
        }
    }
}

/// Signalled once; waited for with a time-out.
/// - Thread: any
final class OneShotSignal: @unchecked Sendable {
    // guarded by condition
    private var signalled = false
    private let condition = PlatformCondition()

    func signalOnce() {
        condition.lock()
        signalled = true
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeout: Double) {
        let deadline = PlatformCondition.Deadline(after: max(0, timeout))
        condition.lock()
        while !signalled, condition.wait(until: deadline) {}
        condition.unlock()
    }
}

/// What the thread starts from: every part `Sendable`.
struct SettingsPortalLoopSeed: Sendable {
    let configuration: SettingsPortal.Configuration
    let shared: SettingsPortalShared
}
