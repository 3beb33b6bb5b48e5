import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The scheduler's state and operations. Separate from `DisplayScheduler` so the workers keep only
/// this alive: dropping the last `DisplayScheduler` reference runs its `deinit`, which shuts down.
///
/// Waiting jobs live in an `IndexedHeap` keyed by job id, so that cancelling a waiting job removes it
/// at once in O(log n): its `onDropped` runs on the cancelling thread and no worker is woken to throw
/// it away. A waiting job's key, slot and closures are all in the heap, inside the lock; the handle
/// holds none of them.
///
/// Each worker sleeps on its own parker, so a schedule wakes exactly one parked worker, and only
/// when the waiting jobs outnumber the workers already woken; serial mode can then wake worker 0
/// specifically. The worker loop is in `DisplaySchedulerCore+Worker.swift`.
/// - Thread: any
final class DisplaySchedulerCore: Sendable {
    typealias Work = @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> DisplayJobOutcome

    /// A waiting job: its ordering key inline (so comparisons do not chase pointers), and what it runs.
    struct Entry {
        var priority: DisplayPriority
        let sequence: UInt64
        let job: DisplayJob
        let work: Work
        let onDropped: (@Sendable () -> Void)?
    }

    enum WorkerState {
        /// Looping: will pick again without being woken.
        case active
        /// Asleep, listed in `parkedWorkers`.
        case parked
        /// Unparked but not yet back under the lock; counted in `wokenCount` so one new job does not
        /// wake several workers.
        case woken
        /// Left its loop after shutdown.
        case exited
    }

    /// Everything mutable about the scheduler. Every field is guarded by `state`'s lock.
    struct State {
        /// The waiting jobs, most urgent first (or in schedule order in serial mode).
        var queue = IndexedHeap<Entry>(id: { $0.job.id }, precedes: State.byPriority)
        var nextSequence: UInt64 = 0
        var serializes = false
        var isShutDown = false
        /// While true, scheduling queues jobs without waking parked workers (see `holdWakeups`).
        var wakeupsHeld = false
        /// Jobs taken by a worker and not yet recorded as finished.
        var activeCount = 0
        /// Drop callbacks being run inline (by cancel, shutdown or a late schedule); waitUntilIdle
        /// waits for them too.
        var inlineDropsInFlight = 0
        var workerStates: [WorkerState]
        var parkedWorkers: [Int] = []
        var wokenCount = 0
        var idleWaiters: [DisplayWorkerParker] = []
        var statistics = DisplayScheduler.Statistics()
        /// How workers run; each worker applies a new generation before its next job.
        var policy = DisplayScheduler.WorkerPolicy.default
        var policyGeneration = 0

        init(workerCount: Int) {
            workerStates = Array(repeating: .active, count: workerCount)
        }

        var isIdle: Bool { queue.isEmpty && activeCount == 0 && inlineDropsInFlight == 0 }

        /// Priority order: visible first, then nearer; ties in schedule order.
        static func byPriority(_ a: Entry, _ b: Entry) -> Bool {
            if a.priority.isVisible != b.priority.isVisible { return a.priority.isVisible }
            let da = a.priority.orderingDistance
            let db = b.priority.orderingDistance
            if da != db { return da < db }
            return a.sequence < b.sequence
        }

        /// Serial order: as scheduled.
        static func bySequence(_ a: Entry, _ b: Entry) -> Bool { a.sequence < b.sequence }

        /// The next job for worker `index`, out of the queue, or nil if that worker may not pick.
        mutating func pick(for index: Int) -> Entry? {
            guard !queue.isEmpty else { return nil }
            // Serial mode: one worker, and only once everything started before the switch is done.
            if serializes && (index != 0 || activeCount != 0) { return nil }
            if let limit = policy.maximumActiveWorkers, activeCount >= limit { return nil }
            return queue.popFirst()
        }

        // MARK: Wakeups

        /// The next parked worker that should be woken, marked woken; nil when none should be.
        /// Waking only as many workers as there are waiting jobs not already claimed by a woken
        /// worker keeps one schedule() from waking the whole pool.
        mutating func nextWakeup() -> Int? {
            if isShutDown {
                guard let index = parkedWorkers.popLast() else { return nil }
                markWoken(index)
                return index
            }
            if serializes {
                guard workerStates[0] == .parked, activeCount == 0, !queue.isEmpty,
                      let position = parkedWorkers.firstIndex(of: 0)
                else { return nil }
                parkedWorkers.remove(at: position)
                markWoken(0)
                return 0
            }
            guard queue.count > wokenCount else { return nil }
            if let limit = policy.maximumActiveWorkers, activeCount + wokenCount >= limit { return nil }
            guard let index = parkedWorkers.popLast() else { return nil }
            markWoken(index)
            return index
        }

        mutating func allWakeups() -> [Int] {
            var result: [Int] = []
            while let index = nextWakeup() { result.append(index) }
            return result
        }

        private mutating func markWoken(_ index: Int) {
            workerStates[index] = .woken
            wokenCount += 1
        }

        mutating func takeIdleWaitersIfIdle() -> [DisplayWorkerParker] {
            guard !idleWaiters.isEmpty, isIdle else { return [] }
            defer { idleWaiters = [] }
            return idleWaiters
        }
    }

    /// `Locked` (an `NSLock`) rather than `Synchronization.Mutex`: on Linux, Mutex locks with raw
    /// futex calls that ThreadSanitizer cannot see, so every access it guards is reported as a race
    /// and a real race in this file would be lost among them.
    let state: Locked<State>  // guards every field of State
    /// One per worker, indexed like `State.workerStates`; immutable after init.
    let parkers: [DisplayWorkerParker]

    init(workerCount: Int) {
        state = Locked(State(workerCount: workerCount))
        parkers = (0..<workerCount).map { _ in DisplayWorkerParker() }
    }

    // MARK: Operations

    func enqueue(priority: DisplayPriority, kind: DisplayJobKind, isCancelled: @escaping @Sendable () -> Bool,
                 onDropped: (@Sendable () -> Void)?, work: @escaping Work) -> DisplayJob {
        let (job, wake, dropped): (DisplayJob, Int?, (@Sendable () -> Void)?) = state.withLock { state in
            let sequence = state.nextSequence
            state.nextSequence &+= 1
            let job = DisplayJob(core: self, id: sequence, kind: kind, priority: priority, isCancelled: isCancelled)
            state.statistics.count(kind) { $0.scheduled += 1 }
            if state.isShutDown {
                state.statistics.count(kind) { $0.cancelledBeforeStart += 1 }
                if onDropped != nil { state.inlineDropsInFlight += 1 }
                return (job, nil, onDropped)
            }
            state.queue.push(Entry(priority: priority, sequence: sequence, job: job, work: work, onDropped: onDropped))
            return (job, state.wakeupsHeld ? nil : state.nextWakeup(), nil)
        }
        if let wake { parkers[wake].unpark() }
        if let dropped { runInlineDrops([dropped]) }
        return job
    }

    func dropIfWaiting(_ job: DisplayJob) {
        // The entry leaves the lock with its closures, which are released here, outside it.
        let (entry, idleWaiters): (Entry?, [DisplayWorkerParker]) = state.withLock { state in
            guard let entry = state.queue.remove(job.id) else { return (nil, []) }
            state.statistics.count(job.kind) { $0.cancelledBeforeStart += 1 }
            if entry.onDropped != nil {
                state.inlineDropsInFlight += 1
                return (entry, [])
            }
            return (entry, state.takeIdleWaitersIfIdle())
        }
        for waiter in idleWaiters { waiter.unpark() }
        if let onDropped = entry?.onDropped { runInlineDrops([onDropped]) }
    }

    /// Runs drop callbacks on this thread; they were counted in `inlineDropsInFlight` (as one batch)
    /// under the lock that removed their jobs.
    func runInlineDrops(_ callbacks: [@Sendable () -> Void]) {
        for callback in callbacks { callback() }
        let idleWaiters = state.withLock { state in
            state.inlineDropsInFlight -= 1
            return state.takeIdleWaitersIfIdle()
        }
        for waiter in idleWaiters { waiter.unpark() }
    }

    func setPriority(_ priority: DisplayPriority, of job: DisplayJob) {
        state.withLock { state in
            // The handle's record and the queue's key change together, so they always agree.
            job.record(priority)
            state.queue.update(job.id) { $0.priority = priority }
        }
    }

    var serializesAllDrawing: Bool {
        state.withLock { $0.serializes }
    }

    func setSerializesAllDrawing(_ serializes: Bool) {
        let order: (Entry, Entry) -> Bool
        if serializes { order = State.bySequence } else { order = State.byPriority }
        let wake = state.withLock { state -> [Int] in
            guard state.serializes != serializes else { return [] }
            state.serializes = serializes
            // The queue re-orders itself for the new mode at its next pick.
            state.queue.precedes = order
            return state.allWakeups()
        }
        for index in wake { parkers[index].unpark() }
    }

    var policy: DisplayScheduler.WorkerPolicy { state.withLock { $0.policy } }

    func setPolicy(_ policy: DisplayScheduler.WorkerPolicy) {
        let wake = state.withLock { state -> [Int] in
            guard state.policy != policy else { return [] }
            state.policy = policy
            state.policyGeneration += 1
            return state.wakeupsHeld ? [] : state.allWakeups()
        }
        for index in wake { parkers[index].unpark() }
    }

    func setWakeupsHeld(_ held: Bool) {
        let wake: [Int] = state.withLock { state in
            guard state.wakeupsHeld != held else { return [] }
            state.wakeupsHeld = held
            return held ? [] : state.allWakeups()
        }
        for index in wake { parkers[index].unpark() }
    }

    var areWakeupsHeld: Bool { state.withLock { $0.wakeupsHeld } }

    var parkedCount: Int { state.withLock { $0.parkedWorkers.count } }
    var queueDepth: Int { state.withLock { $0.queue.count } }
    var runningCount: Int { state.withLock { $0.activeCount } }
    var statistics: DisplayScheduler.Statistics { state.withLock { $0.statistics } }

    func resetStatistics() {
        state.withLock { $0.statistics = DisplayScheduler.Statistics() }
    }

    func waitUntilIdle() {
        _ = waitUntilIdle(timeout: nil)
    }

    /// Waits until no job is queued or running, for at most `timeout` seconds (nil: no limit).
    /// Returns false when the time ran out first.
    func waitUntilIdle(timeout: Double?) -> Bool {
        Contract.require(
            Self.currentWorkerMarker?.core !== self,
            "DisplayScheduler.waitUntilIdle() called from one of its own workers would wait for itself")
        let parker = DisplayWorkerParker()
        let mustWait = state.withLock { state in
            if state.isIdle { return false }
            state.idleWaiters.append(parker)
            return true
        }
        guard mustWait else { return true }
        guard let timeout else {
            parker.park()
            return true
        }
        return parker.park(timeout: max(0, timeout))
    }

    func shutdown() {
        let (entries, wake, idleWaiters) = state.withLock { state -> ([Entry], [Int], [DisplayWorkerParker]) in
            guard !state.isShutDown else { return ([], [], []) }
            state.isShutDown = true
            let entries = state.queue.removeAll()
            for entry in entries {
                state.statistics.count(entry.job.kind) { counts in counts.cancelledBeforeStart += 1 }
            }
            if entries.contains(where: { $0.onDropped != nil }) { state.inlineDropsInFlight += 1 }
            return (entries, state.allWakeups(), state.takeIdleWaitersIfIdle())
        }
        for index in wake { parkers[index].unpark() }
        for waiter in idleWaiters { waiter.unpark() }
        let dropped = entries.compactMap(\.onDropped)
        if !dropped.isEmpty { runInlineDrops(dropped) }
    }
}
