import Compositor
import Foundation
public import Synchronization

/// What every node in the process shares: the main queue, the display scheduler, the contents scale,
/// and the set of nodes waiting to display at the next frame.
///
/// One per process, like the UI thread it serves. Tests and apps configure it before building nodes.
/// - Thread: any, unless a member says otherwise.
public final class Runtime: Sendable {
    /// The process's runtime.
    public static let shared = Runtime()

    /// Where results and cross-thread writes wait for the UI thread.
    public let mainQueue = MainQueue()
    /// The workers that draw.
    public let scheduler: DisplayScheduler
    /// Counts of what the display pipeline did.
    public let counters = RuntimeCounters()
    /// Frame-driven layer animations. (its members: UI thread)
    public let animator = Animator()

    private struct Settings {
        var contentsScale = 1.0
        var forcesSynchronousDisplay = false
        var commitBudgetBytes: Int?
    }
    /// Finished transactions waiting for the frame loop to apply them.
    private let pendingCommits = Locked<[DisplayTransaction]>([])
    private let settings = Locked(Settings())

    /// Nodes that asked to display, in the order they asked (so a serialized run is reproducible);
    /// processed on the UI thread once a frame.
    private struct DisplayRequests {
        var order: [UncheckedSendable<WeakNode>] = []
        var members = Set<ObjectIdentifier>()
    }
    private let needsDisplay = Locked(DisplayRequests())

    init(workerCount: Int = ProcessInfo.processInfo.activeProcessorCount) {
        scheduler = DisplayScheduler(workerCount: max(1, workerCount))
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

    /// The most bytes of new contents applied in one frame (nil: no limit). When more finish at once,
    /// visible cells commit first and the rest wait for the next frame; at least one cell commits every
    /// frame, however large.
    public var commitBudgetBytes: Int? {
        get { settings.withLock { $0.commitBudgetBytes } }
        set { settings.withLock { $0.commitBudgetBytes = newValue.map { max(0, $0) } } }
    }

    /// Transactions finished and not yet applied.
    public var pendingCommitCount: Int { pendingCommits.withLock { $0.count } }

    func enqueueCommit(_ transaction: DisplayTransaction) {
        pendingCommits.withLock { $0.append(transaction) }
    }

    /// Applies finished transactions, most urgent first, within `commitBudgetBytes`.
    /// - Returns: how many were applied and how many wait for the next frame.
    @discardableResult
    public func applyPendingCommits() -> (applied: Int, deferred: Int) {
        UIThread.precondition("Runtime.applyPendingCommits")
        let waiting = pendingCommits.withLock { queue -> [DisplayTransaction] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !waiting.isEmpty else { return (0, 0) }
        let budget = commitBudgetBytes
        let ordered = budget == nil ? waiting : waiting.enumerated()
            .map { (priority: $0.element.priority, index: $0.offset, transaction: $0.element) }
            .sorted { $0.priority != $1.priority ? $0.priority > $1.priority : $0.index < $1.index }
            .map(\.transaction)
        var spent = 0
        var applied = 0
        var deferred: [DisplayTransaction] = []
        for transaction in ordered {
            if let budget, applied > 0, spent >= budget {
                deferred.append(transaction)
                continue
            }
            spent += transaction.pendingBytes
            transaction.commitIfNeeded()
            applied += 1
        }
        if !deferred.isEmpty { pendingCommits.withLock { $0.insert(contentsOf: deferred, at: 0) } }
        return (applied, deferred.count)
    }

    func registerNeedsDisplay(_ node: Node) {
        let box = UncheckedSendable(WeakNode(node))
        needsDisplay.withLock { requests in
            if requests.members.insert(ObjectIdentifier(node)).inserted { requests.order.append(box) }
        }
    }

    func unregisterNeedsDisplay(_ node: Node) {
        _ = needsDisplay.withLock { $0.members.remove(ObjectIdentifier(node)) }
    }

    /// Number of nodes waiting to start a display.
    public var pendingDisplayCount: Int { needsDisplay.withLock { $0.members.count } }

    /// Starts the displays requested since the last frame: captures draw parameters on the UI thread and
    /// hands the draws to the scheduler (or draws here, for synchronous nodes). Returns how many started.
    @discardableResult
    public func startPendingDisplays() -> Int {
        UIThread.precondition("Runtime.startPendingDisplays")
        let nodes = needsDisplay.withLock { requests -> [Node] in
            var live: [Node] = []
            for entry in requests.order {
                // Each member once, at its first request; entries of unregistered nodes are skipped.
                if let node = entry.value.node, requests.members.remove(ObjectIdentifier(node)) != nil {
                    live.append(node)
                }
            }
            requests.order.removeAll(keepingCapacity: true)
            requests.members.removeAll(keepingCapacity: true)
            return live
        }
        var transactions: [ObjectIdentifier: DisplayTransaction] = [:]
        var started = 0
        for node in nodes where node.startDisplayIfPossible(transactions: &transactions) { started += 1 }
        for transaction in transactions.values { transaction.seal() }
        return started
    }
}

/// A weak reference to a node.
struct WeakNode {
    weak var node: Node?
    init(_ node: Node) { self.node = node }
}

/// Running totals of the display pipeline, for tests, the perf overlay and benchmarks.
/// - Thread: any
public final class RuntimeCounters: Sendable {
    /// Draws started (asynchronous or synchronous).
    public let displaysStarted = Atomic<Int>(0)
    /// Contents applied to layers at commit.
    public let contentsCommitted = Atomic<Int>(0)
    /// Finished draws dropped at commit because their sentinel had moved on.
    public let staleResultsDropped = Atomic<Int>(0)
    /// Transactions committed.
    public let transactionsCommitted = Atomic<Int>(0)

    /// The counters' current values.
    public var snapshot: Snapshot {
        Snapshot(displaysStarted: displaysStarted.load(ordering: .relaxed),
                 contentsCommitted: contentsCommitted.load(ordering: .relaxed),
                 staleResultsDropped: staleResultsDropped.load(ordering: .relaxed),
                 transactionsCommitted: transactionsCommitted.load(ordering: .relaxed))
    }

    public struct Snapshot: Sendable, Equatable {
        public var displaysStarted: Int
        public var contentsCommitted: Int
        public var staleResultsDropped: Int
        public var transactionsCommitted: Int
    }
}
