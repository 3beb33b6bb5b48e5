import Compositor
import FoundationEssentials
import Glibc
import Dispatch
public import Synchronization

/// What every node in the process shares: the main queue, the display scheduler and coordinator, the
/// contents scale.
///
/// One per process, like the UI thread it serves: every node and host uses `Runtime.shared`. Tests and
/// apps configure it before building nodes.
/// - Thread: any, unless a member says otherwise.
public final class Runtime: Sendable {
    /// The process's runtime.
    public static let shared = Runtime()

    /// Where results and cross-thread writes wait for the UI thread.
    public let mainQueue = MainQueue()
    /// The workers that draw, decode and measure.
    public let scheduler: DisplayScheduler
    /// The display pipeline: requests, commits and their budgets.
    public let display: DisplayCoordinator
    /// Counts of what the display pipeline did.
    public let counters = RuntimeCounters()
    /// Frame-driven layer animations. (its members: UI thread)
    public let animator = Animator()
    /// Counts changes a screen reader reads that need not show (a label, a value, a role set on a
    /// node): a host runs a frame for them and a publisher builds a new tree.
    private let accessibilityChanges = Atomic<Int>(0)
    /// The appearance and the theme nodes resolve colours through (see `Runtime+Appearance`).
    let appearanceState = Locked(AppearanceState())
    /// The nodes that depend on the appearance, told when it changes.
    let appearanceDependents = AppearanceDependents()

    /// Changes of what screen readers read made so far (see `noteAccessibilityChange`).
    public var accessibilityChangeCount: Int { accessibilityChanges.load(ordering: .acquiring) }

    /// Records a change screen readers read and wakes the UI thread for it, from any thread.
    func noteAccessibilityChange() {
        accessibilityChanges.add(1, ordering: .releasing)
        UIWakeup.shared.wake()
    }

    private struct Settings {
        var contentsScale = 1.0
        var forcesSynchronousDisplay = false
    }
    private let settings = Locked(Settings())

    /// `TESSERA_SERIALIZE_DISPLAY=1` in the environment starts the process with every draw on one
    /// worker, in the order requested (`DisplayScheduler.serializesAllDrawing`): a debugging switch.
    static let serializeDisplayVariable = "TESSERA_SERIALIZE_DISPLAY"

    init(workerCount: Int = ProcessInfo.processInfo.activeProcessorCount,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        scheduler = DisplayScheduler(workerCount: max(1, workerCount))
        display = DisplayCoordinator(scheduler: scheduler, counters: counters)
        if let value = environment[Self.serializeDisplayVariable], value != "0", !value.isEmpty {
            scheduler.serializesAllDrawing = true
        }
    }

    /// Pixels per point for new contents (the compositor's scale).
    public var contentsScale: Double {
        get { settings.withLock { $0.contentsScale } }
        set {
            let value = newValue.isFinite && newValue > 0 ? newValue : 1
            settings.withLock { $0.contentsScale = value }
        }
    }

    /// When true, every node draws on the UI thread when it displays, as a UIKit-style app would
    /// (the gallery's `--sync` baseline). Off by default.
    public var forcesSynchronousDisplay: Bool {
        get { settings.withLock { $0.forcesSynchronousDisplay } }
        set { settings.withLock { $0.forcesSynchronousDisplay = newValue } }
    }

    /// The most bytes of new contents committed (and so uploaded) in one frame, visible cells first;
    /// 4 MB by default, nil for no limit. See `DisplayCoordinator.commitBudgetBytes`. - Thread: any
    public var commitBudgetBytes: Int? {
        get { display.commitBudgetBytes }
        set { display.commitBudgetBytes = newValue }
    }

    /// Transactions finished and not yet applied.
    public var pendingCommitCount: Int { display.pendingCommitCount }

    /// Number of nodes waiting to start a draw.
    public var pendingDisplayCount: Int { display.pendingDisplayCount }

    /// See `DisplayCoordinator.applyPendingCommits()`. - Thread: main
    @discardableResult
    @MainActor
    public func applyPendingCommits() -> (applied: Int, deferred: Int) { display.applyPendingCommits() }

    /// See `DisplayCoordinator.startPendingDisplays()`. - Thread: main
    @discardableResult
    @MainActor
    public func startPendingDisplays() -> Int { display.startPendingDisplays() }
}

/// Running totals of the display pipeline, for tests, the perf overlay and benchmarks.
/// - Thread: any
public final class RuntimeCounters: Sendable {
    /// Draws started (asynchronous or synchronous).
    public let displaysStarted = Atomic<Int>(0)
    /// Contents applied to layers at commit.
    public let contentsCommitted = Atomic<Int>(0)
    /// Finished draws not applied at commit: the node left the display range, was removed or
    /// suspended meanwhile, or newer contents were already shown.
    public let staleResultsDropped = Atomic<Int>(0)
    /// Transactions committed.
    public let transactionsCommitted = Atomic<Int>(0)
    /// Never-show-placeholders transactions the UI thread waited for and committed in their frame.
    public let placeholderWaitsMet = Atomic<Int>(0)
    /// Never-show-placeholders transactions whose wait ran out of the frame's budget.
    public let placeholderWaitsTimedOut = Atomic<Int>(0)

    /// The counters' current values.
    public var snapshot: Snapshot {
        Snapshot(displaysStarted: displaysStarted.load(ordering: .relaxed),
                 contentsCommitted: contentsCommitted.load(ordering: .relaxed),
                 staleResultsDropped: staleResultsDropped.load(ordering: .relaxed),
                 transactionsCommitted: transactionsCommitted.load(ordering: .relaxed),
                 placeholderWaitsMet: placeholderWaitsMet.load(ordering: .relaxed),
                 placeholderWaitsTimedOut: placeholderWaitsTimedOut.load(ordering: .relaxed))
    }

    /// The counters' values at one moment.
    /// - Thread: any (a value)
    public struct Snapshot: Sendable, Equatable {
        public var displaysStarted: Int
        public var contentsCommitted: Int
        public var staleResultsDropped: Int
        public var transactionsCommitted: Int
        public var placeholderWaitsMet: Int
        public var placeholderWaitsTimedOut: Int
    }
}
