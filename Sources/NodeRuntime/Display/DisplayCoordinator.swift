public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The display pipeline's hub: the nodes waiting to start a draw, the finished transactions waiting to
/// be applied, and the budgets that bound a frame's share of both.
///
/// A draw reads one way through it:
/// 1. `Node.setNeedsDisplay()` (any thread) registers the node here, unless a draw of it is in flight.
/// 2. At the frame's display phase, `startPendingDisplays()` (UI thread) asks each registered node to
///    claim its request and capture its draw parameters (`Node.startDisplayIfPossible`), which
///    schedules the draw and adds it to its container's `DisplayTransaction`.
/// 3. A worker draws and prepares the bitmap for the renderer (`Bitmap.prepared(forUpload:)`); the
///    transaction collects the result and, once all its draws are in, comes back here with
///    `enqueueCommit` (any thread).
/// 4. At the next frame's commit phase, `applyPendingCommits()` (UI thread) commits transactions, most
///    urgent first within `commitBudgetBytes`; each node applies its result if it is still current
///    (`Node.finishDraw`) and, if a newer request came while it drew, registers here again.
/// - Thread: any, unless a member says otherwise.
public final class DisplayCoordinator: Sendable {
    /// The workers that draw.
    let scheduler: DisplayScheduler
    /// Counts of what the pipeline did.
    let counters: RuntimeCounters

    /// Nodes that asked to display, in the order they asked (so a serialized run is reproducible).
    private struct Requests {
        var order: [UIThreadBound<WeakNode>] = []
        var members = Set<ObjectIdentifier>()
    }
    private let requests = Locked(Requests())
    /// A finished transaction and the bytes of contents it applies, counted once, by the thread that
    /// finished it.
    private struct PendingCommit {
        let transaction: DisplayTransaction
    }
    /// Finished transactions waiting for the frame loop to apply them.
    private let pendingCommits = Locked<[PendingCommit]>([])

    private struct Settings {
        var commitBudgetBytes: Int? = DisplayCoordinator.defaultCommitBudgetBytes
        var placeholderWaitBudget = DisplayCoordinator.defaultPlaceholderWaitBudget
        var uploadAlphaLayout = Bitmap.AlphaLayout.premultiplied
    }
    private let settings = Locked(Settings())
    /// Called on the UI thread each time a node applies new contents, with their generation: the
    /// stress model checks its invariants here.
    typealias CommitObserver = @MainActor @Sendable (Node, UInt64) -> Void
    /// The observer in a struct: a bare closure as a lock's generic state is re-wrapped in a
    /// reabstraction thunk on every `inout` pass, and the chain grows with each read.
    private struct ObserverSlot { var observe: CommitObserver? }
    private let observer = Locked(ObserverSlot())
    var commitObserver: CommitObserver? {
        get { observer.withLock { $0.observe } }
        set {
            // The old observer is released after the lock: what it holds may take locks as it goes.
            let old = observer.withLock { slot -> CommitObserver? in defer { slot.observe = newValue }; return slot.observe }
            _ = old
        }
    }

    /// The default of `placeholderWaitBudget`: 8 ms, half a 60 Hz frame.
    public static let defaultPlaceholderWaitBudget = 0.008

    /// The default of `commitBudgetBytes`: 4 MB a frame. Uploading it costs the UI thread about half a
    /// millisecond on SDL's software renderer on a shared two-core machine (a copy per byte, once the
    /// pixels are prepared on the workers; docs/display-pipeline.md, "Uploads"), a thirtieth of a
    /// 60 Hz frame; it is a whole 1280×800 window of new contents at 1x, so ordinary screens commit in
    /// one frame, and a screen of new contents at 2x (16 MB) spreads over four or five, visible cells
    /// first.
    public static let defaultCommitBudgetBytes = 4 << 20

    init(scheduler: DisplayScheduler, counters: RuntimeCounters) {
        self.scheduler = scheduler
        self.counters = counters
    }

    /// The most bytes of new contents committed in one frame (default `defaultCommitBudgetBytes`; nil:
    /// no limit). Contents committed in a frame are uploaded in that frame when they are on screen, so
    /// this bounds what a burst of finished draws costs one frame: transactions commit most urgent
    /// first (visible cells, then the nearest offscreen ones; in the order they finished otherwise)
    /// while they fit, and the rest wait for the next frame, first in line. Never starves: the first
    /// transaction of a frame commits whatever its size (alone, when it is larger than the budget),
    /// transactions with nothing to apply (cancelled draws) always commit, and every frame commits
    /// something while any wait, so everything converges once changes stop. Transactions the frame
    /// waits for (`Node.neverShowPlaceholders`) commit when they are ready, outside the budget: their
    /// wait is bounded in time instead (`placeholderWaitBudget`).
    /// - Thread: any
    public var commitBudgetBytes: Int? {
        get { settings.withLock { $0.commitBudgetBytes } }
        set { settings.withLock { $0.commitBudgetBytes = newValue.map { max(0, $0) } } }
    }

    /// The alpha layout the renderer uploads without converting (`RenderBackend.uploadAlphaLayout`):
    /// every draw is prepared for it on its worker (`Bitmap.prepared(forUpload:)`), with its opacity
    /// recorded, so the UI thread's upload is a copy. A `NodeHost` publishes its backend's layout when
    /// it is made, before any of its nodes draw; with several hosts on renderers that disagree, the
    /// last one made wins and the others convert at upload (correct, slower). Read once a frame, at
    /// the display phase. - Thread: any
    public var uploadAlphaLayout: Bitmap.AlphaLayout {
        get { settings.withLock { $0.uploadAlphaLayout } }
        set { settings.withLock { $0.uploadAlphaLayout = newValue } }
    }

    /// Seconds the UI thread may wait in one frame, in all, for the draws of never-show-placeholders
    /// nodes that become visible in that frame (default 8 ms). When it runs out the frame shows what it
    /// has and the rest commit at a later frame. Zero never waits.
    public var placeholderWaitBudget: Double {
        get { settings.withLock { $0.placeholderWaitBudget } }
        set { settings.withLock { $0.placeholderWaitBudget = newValue.isFinite ? min(max(0, newValue), 1) : 0 } }
    }

    // MARK: Requests

    /// Adds `node` to the next frame's draws (once, however often it asks).
    func register(_ node: Node) {
        let box = UIThreadBound(WeakNode(node))
        let added = requests.withLock { requests -> Bool in
            guard requests.members.insert(ObjectIdentifier(node)).inserted else { return false }
            requests.order.append(box)
            return true
        }
        // A request from another thread is work for an app at rest (the UI thread's own requests are
        // started by the frame it is running).
        if added && !UIThread.isCurrent { UIWakeup.shared.wake() }
    }

    /// Forgets `node`'s request (it drew synchronously, or it is being freed).
    func unregister(_ node: Node) {
        _ = requests.withLock { $0.members.remove(ObjectIdentifier(node)) }
    }

    /// Number of nodes waiting to start a draw.
    public var pendingDisplayCount: Int { requests.withLock { $0.members.count } }

    /// Starts the draws requested since the last frame: each node claims its request and captures its
    /// draw parameters here, on the UI thread, and its draw goes to the scheduler (or is drawn here,
    /// for synchronous nodes). Waits, within `placeholderWaitBudget`, for never-show-placeholders
    /// transactions. - Thread: main
    /// - Returns: how many draws started.
    @discardableResult
    @MainActor
    public func startPendingDisplays() -> Int {
        UIThread.precondition("DisplayCoordinator.startPendingDisplays")
        let entries = requests.withLock { requests -> [UIThreadBound<WeakNode>] in
            defer {
                requests.order.removeAll(keepingCapacity: true)
                requests.members.removeAll(keepingCapacity: true)
            }
            return requests.order
        }
        var frame = DisplayFrame(coordinator: self, uploadAlphaLayout: uploadAlphaLayout)
        var started = 0
        var seen = Set<ObjectIdentifier>()
        for entry in entries {
            guard let node = entry.value.node, seen.insert(ObjectIdentifier(node)).inserted else { continue }
            if node.startDisplayIfPossible(in: &frame) { started += 1 }
        }
        let budget = placeholderWaitBudget
        let deadline = DispatchTime.now() + .nanoseconds(Int(budget * 1e9))
        for transaction in frame.transactions {
            if transaction.seal(deadline: deadline) { counters.placeholderWaitsMet.add(1, ordering: .relaxed) }
            else if transaction.waitsForCompletion { counters.placeholderWaitsTimedOut.add(1, ordering: .relaxed) }
        }
        return started
    }

    // MARK: Commits

    /// Reports an applied result to the observer, if any. (UI thread)
    @MainActor
    func contentsDidCommit(_ node: Node, generation: UInt64) {
        if let observe = commitObserver { observe(node, generation) }
    }

    /// Transactions finished and not yet applied.
    public var pendingCommitCount: Int { pendingCommits.withLock { $0.count } }

    func enqueueCommit(_ transaction: DisplayTransaction) {
        pendingCommits.withLock { $0.append(PendingCommit(transaction: transaction)) }
        UIWakeup.shared.wake()
    }

    /// Applies finished transactions within `commitBudgetBytes`, most urgent first when they do not
    /// all fit. - Thread: main
    /// - Returns: how many were applied and how many wait for the next frame.
    @discardableResult
    @MainActor
    public func applyPendingCommits() -> (applied: Int, deferred: Int) {
        UIThread.precondition("DisplayCoordinator.applyPendingCommits")
        let waiting = pendingCommits.withLock { queue -> [PendingCommit] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard !waiting.isEmpty else { return (0, 0) }
        // What each will show, measured now: results dropped at commit cost nothing.
        let bytes = waiting.map(\.transaction.bytesToApply)
        let total = bytes.reduce(0, +)
        guard let budget = commitBudgetBytes, total > budget else {
            // Everything fits: the order within one frame changes nothing on screen.
            for commit in waiting { commit.transaction.commitIfNeeded() }
            return (waiting.count, 0)
        }
        // Most urgent first; equal priorities keep the order they finished in.
        struct Rank { let priority: DisplayPriority; let index: Int }
        var ranks = waiting.indices.map { Rank(priority: waiting[$0].transaction.priority, index: $0) }
        ranks.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.index < $1.index }
        var spent = 0
        var applied = 0
        var full = false
        var deferred: [PendingCommit] = []
        for rank in ranks {
            let commit = waiting[rank.index]
            let cost = bytes[rank.index]
            if cost > 0 {
                // Strictly in order: once one waits, every later one with contents waits too, so a
                // large visible cell is never overtaken by smaller, less urgent ones.
                if full || (spent > 0 && spent + cost > budget) {
                    full = true
                    deferred.append(commit)
                    continue
                }
                spent += cost
            }
            commit.transaction.commitIfNeeded()
            applied += 1
        }
        if !deferred.isEmpty { pendingCommits.withLock { $0.insert(contentsOf: deferred, at: 0) } }
        return (applied, deferred.count)
    }
}

/// The draws one frame starts, grouped by transaction container. (UI thread, one frame)
struct DisplayFrame {
    let coordinator: DisplayCoordinator
    /// The layout every draw of the frame is prepared for on its worker.
    let uploadAlphaLayout: Bitmap.AlphaLayout
    /// In the order the containers were first seen.
    private(set) var transactions: [DisplayTransaction] = []
    private var byOwner: [ObjectIdentifier: DisplayTransaction] = [:]

    init(coordinator: DisplayCoordinator, uploadAlphaLayout: Bitmap.AlphaLayout) {
        self.coordinator = coordinator
        self.uploadAlphaLayout = uploadAlphaLayout
    }

    /// The frame's transaction for `owner`, made on first use.
    mutating func transaction(for owner: Node, waitsForCompletion: @autoclosure () -> Bool) -> DisplayTransaction {
        let key = ObjectIdentifier(owner)
        if let existing = byOwner[key] { return existing }
        let made = DisplayTransaction(coordinator: coordinator, owner: owner, waitsForCompletion: waitsForCompletion())
        byOwner[key] = made
        transactions.append(made)
        return made
    }
}
