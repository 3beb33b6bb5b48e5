import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// One draw claimed by a node: which request it serves and what cancels it.
/// - Thread: any (a value)
struct DrawTicket: Sendable {
    /// Tells this draw apart from the node's later ones (the node's in-flight slot holds it).
    let id: UInt64
    /// The request generation the draw's parameters are at least as new as.
    let generation: UInt64
    /// The node's display sentinel when the draw was claimed; a bump cancels the draw.
    let epoch: UInt64
}

/// The draws of one transaction container started in one frame. When every draw has finished (drawn,
/// cancelled or dropped), the transaction waits in the coordinator's commit queue; the frame loop
/// applies all its results together, in one frame, visible cells first within the commit budget.
///
/// A transaction that waits (never-show-placeholders on a node becoming visible) is instead waited for
/// by the UI thread at seal time, up to a deadline; past it, it joins the commit queue like any other.
/// - Thread: any, unless a member says otherwise.
final class DisplayTransaction: Sendable {
    private struct Operation: Sendable {
        let node: UIThreadBound<WeakNode>
        let ticket: DrawTicket
        var bitmap: Bitmap?
        var finished = false
    }
    private enum Delivery: Sendable {
        /// The UI thread waits for the draws in `seal`.
        case waiting
        /// Finished transactions go to the commit queue.
        case queued
    }
    private struct State: Sendable {
        var operations: [Operation] = []
        var finishedCount = 0
        var sealed = false
        var committed = false
        var delivery: Delivery
        var isReady: Bool { sealed && finishedCount == operations.count && !committed }
    }
    private let state: Locked<State>
    private let coordinator: DisplayCoordinator
    /// Signalled when the last draw of a waiting transaction finishes. Its own per transaction, so a
    /// signal that comes after the UI thread gave up waiting is never seen by anyone else.
    private let done = DispatchSemaphore(value: 0)
    /// The container whose cell this is: its priority orders commits under the budget.
    private let owner: UIThreadBound<WeakNode>

    /// True when the UI thread waits for this transaction's draws when it is sealed.
    let waitsForCompletion: Bool

    init(coordinator: DisplayCoordinator, owner: Node, waitsForCompletion: Bool) {
        self.coordinator = coordinator
        self.owner = UIThreadBound(WeakNode(owner))
        self.waitsForCompletion = waitsForCompletion
        state = Locked(State(delivery: waitsForCompletion ? .waiting : .queued))
    }

    /// The owner's current priority; a gone owner sorts last. (UI thread)
    @MainActor
    var priority: DisplayPriority {
        owner.value.node?.displayPriority ?? .offscreen(distance: .infinity)
    }

    /// Bytes of the results that will be shown when this transaction commits: a result whose node is
    /// gone, or whose draw was made stale since (its node left the display range, was removed or
    /// suspended: the sentinel moved), will be dropped and costs nothing. (UI thread)
    @MainActor
    var bytesToApply: Int {
        let operations = state.withLock { $0.operations }
        var bytes = 0
        for operation in operations {
            guard let bitmap = operation.bitmap, let node = operation.node.value.node,
                  node.displaySentinel.value == operation.ticket.epoch else { continue }
            bytes += bitmap.byteCount
        }
        return bytes
    }

    /// Adds a draw of `node`; returns its index. (UI thread, before `seal`)
    func add(node: Node, ticket: DrawTicket) -> Int {
        let box = UIThreadBound(WeakNode(node))
        return state.withLock { state in
            state.operations.append(Operation(node: box, ticket: ticket))
            return state.operations.count - 1
        }
    }

    /// Records the result of one draw (nil when cancelled or dropped). - Thread: any
    func finish(_ index: Int, bitmap: Bitmap?) {
        let delivery = state.withLock { state -> Delivery? in
            guard index < state.operations.count, !state.operations[index].finished else { return nil }
            state.operations[index].finished = true
            state.operations[index].bitmap = bitmap
            state.finishedCount += 1
            return state.isReady ? state.delivery : nil
        }
        deliver(delivery)
    }

    /// No more draws join. A queued transaction whose draws have all finished goes to the commit
    /// queue now. A waiting one is waited for until `deadline` (the frame's shared wait budget) and
    /// committed before this returns; if the deadline passes first it becomes a queued one, and
    /// commits at a later frame like any other. (UI thread)
    /// - Returns: true when the transaction was committed here.
    @discardableResult
    @MainActor
    func seal(deadline: DispatchTime) -> Bool {
        let delivery = state.withLock { state -> Delivery? in
            state.sealed = true
            return state.isReady ? state.delivery : nil
        }
        guard waitsForCompletion else {
            deliver(delivery)
            return false
        }
        if delivery == nil {
            // The frame loop holds worker wakeups; this wait needs the workers now. The hold comes
            // back after the wait, for the rest of the frame.
            let held = coordinator.scheduler.areWakeupsHeld
            coordinator.scheduler.releaseWakeups()
            _ = done.wait(timeout: deadline)
            if held { coordinator.scheduler.holdWakeups() }
        }
        // Decide under the lock: a draw finishing from here on sees `.queued` and enqueues itself.
        let ready = state.withLock { state -> Bool in
            if state.isReady { return true }
            state.delivery = .queued
            return false
        }
        if ready { commitIfNeeded() }
        return ready
    }

    private func deliver(_ delivery: Delivery?) {
        switch delivery {
        case .waiting?: done.signal()
        case .queued?: coordinator.enqueueCommit(self)
        case nil: break
        }
    }

    /// Hands every result to its node, which applies it if it is still current. (UI thread)
    @MainActor
    func commitIfNeeded() {
        let operations = state.withLock { state -> [Operation] in
            guard !state.committed else { return [] }
            state.committed = true
            return state.operations
        }
        guard !operations.isEmpty else { return }
        let counters = coordinator.counters
        counters.transactionsCommitted.add(1, ordering: .relaxed)
        for operation in operations {
            guard let node = operation.node.value.node else { continue }
            let applied = node.finishDraw(operation.ticket, bitmap: operation.bitmap)
            if applied {
                counters.contentsCommitted.add(1, ordering: .relaxed)
            } else if operation.bitmap != nil {
                counters.staleResultsDropped.add(1, ordering: .relaxed)
            }
        }
    }
}
