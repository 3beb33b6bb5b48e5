import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Compositor
import Synchronization

// MARK: - Priority

/// Order of draw jobs: visible work first, then the nearest to the viewport in the scroll direction.
///
/// `<` means "less urgent", so the most urgent job is the maximum. The order is total: `isVisible`
/// decides first, then `distance` (smaller is more urgent, inside the visible group too). A NaN
/// distance is treated as `+infinity` by `<`, `==` and `hash(into:)` alike, so a bad layout value
/// sorts last instead of breaking the scheduler's heap.
/// - Thread: any (a value)
public struct DisplayPriority: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Whether the node intersects the viewport.
    public var isVisible: Bool
    /// Distance from the viewport in points along the scroll direction (0 = at the edge); smaller is
    /// more urgent. NaN counts as +infinity.
    public var distance: Double

    /// - Thread: any
    public init(isVisible: Bool, distance: Double) {
        self.isVisible = isVisible
        self.distance = distance
    }

    /// On screen now: more urgent than any offscreen work.
    public static let visible = DisplayPriority(isVisible: true, distance: 0)

    /// Off screen, `distance` points ahead of the viewport along the scroll direction.
    /// - Thread: any
    public static func offscreen(distance: Double) -> DisplayPriority {
        DisplayPriority(isVisible: false, distance: distance)
    }

    /// The distance the order uses; NaN must not reach a comparison, which would make it partial.
    @inline(__always)
    var orderingDistance: Double { distance.isNaN ? .infinity : distance }

    /// - Thread: any
    public static func < (lhs: DisplayPriority, rhs: DisplayPriority) -> Bool {
        if lhs.isVisible != rhs.isVisible { return rhs.isVisible }
        return lhs.orderingDistance > rhs.orderingDistance
    }

    /// - Thread: any
    public static func == (lhs: DisplayPriority, rhs: DisplayPriority) -> Bool {
        lhs.isVisible == rhs.isVisible && lhs.orderingDistance == rhs.orderingDistance
    }

    /// - Thread: any
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isVisible)
        hasher.combine(orderingDistance)
    }

    /// For logs and test failures; shows the distance as given (NaN stays NaN).
    public var description: String {
        isVisible ? "visible(\(distance))" : "offscreen(\(distance))"
    }
}

// MARK: - Job

/// How a job ended.
/// - Thread: any (a value)
public enum DisplayJobOutcome: Sendable {
    case completed
    case cancelled
}

/// A handle to a scheduled job.
///
/// The handle outlives the job: once the job has run or been dropped, `setPriority` and `cancel` do
/// nothing to the scheduler (a cancel still makes `isCancelled` true).
/// - Thread: any
public final class DisplayJob: Sendable {
    fileprivate let core: DisplaySchedulerCore
    /// The caller's own check (for example "the node's contents went stale"); immutable, so it is read
    /// without a lock.
    private let externalCancellationCheck: @Sendable () -> Bool
    /// Atomic rather than under the scheduler's lock because running work polls it between phases.
    private let cancelRequested = Atomic<Bool>(false)

    /// The priority reported by `priority`; the heap keeps its own copy next to the sequence number.
    fileprivate nonisolated(unsafe) var storedPriority: DisplayPriority  // guarded by core.state's lock
    /// Position in the core's heap, or -1 once the job has left it (picked, cancelled or drained).
    fileprivate nonisolated(unsafe) var heapIndex = -1  // guarded by core.state's lock
    /// Cleared when the job leaves the heap so that whatever the closures capture (nodes, bitmaps) is
    /// released with the job's run, not with the handle.
    fileprivate nonisolated(unsafe) var work: DisplaySchedulerCore.Work?  // guarded by core.state's lock
    fileprivate nonisolated(unsafe) var onDropped: (@Sendable () -> Void)?  // guarded by core.state's lock

    fileprivate init(
        core: DisplaySchedulerCore,
        priority: DisplayPriority,
        isCancelled: @escaping @Sendable () -> Bool,
        onDropped: (@Sendable () -> Void)?,
        work: @escaping DisplaySchedulerCore.Work
    ) {
        self.core = core
        self.externalCancellationCheck = isCancelled
        self.storedPriority = priority
        self.onDropped = onDropped
        self.work = work
    }

    /// The job's current priority.
    /// - Thread: any
    public var priority: DisplayPriority {
        core.priority(of: self)
    }

    /// Changes the job's priority. A waiting job is re-ordered before the next pick; a running or
    /// finished job only records the value.
    /// - Thread: any
    public func setPriority(_ priority: DisplayPriority) {
        core.setPriority(priority, of: self)
    }

    /// Cancels the job. A waiting job leaves the queue at once: its `work` never runs and its
    /// `onDropped` runs once, inline on this thread (or on a worker if one had already picked the job).
    /// A running job sees `isCancelled` become true. Repeated calls do nothing more.
    /// - Thread: any
    public func cancel() {
        // The flag goes first so a worker that picked the job concurrently drops it or lets the work
        // see it; only the first caller needs the scheduler.
        guard !cancelRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        core.dropIfWaiting(self)
    }

    /// True once `cancel()` was called or the job's own cancellation check returns true.
    /// Calls the caller's check on this thread.
    /// - Thread: any
    public var isCancelled: Bool {
        cancelRequested.load(ordering: .acquiring) || externalCancellationCheck()
    }
}

// MARK: - Scheduler

/// Runs draw jobs on a fixed pool of worker threads, most urgent first.
///
/// Workers are `Thread`s that sleep on a condition when there is nothing to pick, so an idle
/// scheduler costs no CPU. User closures (`work`, `onDropped`, `isCancelled`) are never called with
/// the scheduler's lock held, so they may call back into the scheduler (schedule, cancel,
/// re-prioritise) freely.
/// - Thread: any, unless a member says otherwise.
public final class DisplayScheduler: Sendable {
    /// Counts since creation or the last `resetStatistics()`.
    /// - Thread: any (a value)
    public struct Statistics: Sendable, Equatable {
        /// Calls to `schedule` (including ones dropped because the scheduler was shut down).
        public var scheduled = 0
        /// Jobs whose `work` was called.
        public var started = 0
        /// Jobs whose `work` returned `.completed`.
        public var completed = 0
        /// Jobs dropped while waiting: their `work` never ran, their `onDropped` did.
        public var cancelledBeforeStart = 0
        /// Jobs whose `work` returned `.cancelled`.
        public var cancelledWhileRunning = 0
        /// Milliseconds spent inside `work` calls that returned `.completed`.
        public var workMillisecondsCompleted = 0.0
        /// Milliseconds spent inside `work` calls that returned `.cancelled` (wasted drawing).
        public var workMillisecondsCancelled = 0.0

        public init() {}
    }

    /// The number of worker threads.
    public let workerCount: Int
    private let core: DisplaySchedulerCore

    /// The active processor count, the default `workerCount`. A property rather than the expression
    /// itself because a public default argument may not name declarations of Foundation, which this
    /// module imports internally.
    /// - Thread: any
    public static var defaultWorkerCount: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// Starts `workerCount` worker threads (at least 1), named "`name`.0", "`name`.1", ... (on Linux
    /// `name` is shortened so that the whole fits the system's 15-byte limit).
    /// - Thread: any
    public init(workerCount: Int = DisplayScheduler.defaultWorkerCount, name: String = "tessera.display") {
        self.workerCount = max(1, workerCount)
        core = DisplaySchedulerCore(workerCount: self.workerCount)
        core.startWorkers(name: name)
    }

    deinit {
        core.shutdown()
    }

    /// Debug switch: while true, every job runs on one worker (worker 0), strictly in the order
    /// scheduled (priorities ignored), so a drawing bug is reproducible. The first job picked after
    /// turning it on waits for jobs already running on other workers, so no two jobs ever overlap
    /// while it is on. Turning it off returns to priority order.
    /// - Thread: any
    public var serializesAllDrawing: Bool {
        get { core.serializesAllDrawing }
        set { core.setSerializesAllDrawing(newValue) }
    }

    /// Holds back the waking of parked workers: jobs scheduled meanwhile wait in the queue (workers
    /// already running still take them) until `releaseWakeups()`. The frame loop holds wakeups while it
    /// runs, so a worker it wakes does not take its core away in the middle of a frame on a machine with
    /// few cores; the draws start as soon as the frame is presented.
    /// - Thread: any
    public func holdWakeups() { core.setWakeupsHeld(true) }

    /// The nice value of worker threads: low enough that a frame on the UI thread wins a shared core.
    static let workerNiceValue: Int32 = 5

    /// Workers asleep waiting for work (for tests).
    var parkedWorkerCount: Int { core.parkedCount }

    /// Wakes as many parked workers as the queued jobs need, and stops holding wakeups.
    /// - Thread: any
    public func releaseWakeups() { core.setWakeupsHeld(false) }

    /// Queues `work` to run once on a worker.
    ///
    /// - Parameters:
    ///   - priority: where the job goes in the queue; change it later with `DisplayJob.setPriority`.
    ///   - isCancelled: the caller's own cancellation check, evaluated on the worker just before the
    ///     job starts (true: the job is dropped) and by the check handed to `work`. Called without any
    ///     scheduler lock held.
    ///   - onDropped: runs exactly once if the job is dropped without running `work` (cancelled while
    ///     waiting, or the scheduler was shut down), on a worker or inline on the thread that caused
    ///     the drop. Never runs when `work` ran.
    ///   - work: the drawing, on a worker thread; the closure it receives is true once the job is
    ///     cancelled, so long draws can stop between phases and return `.cancelled`.
    /// - Returns: a handle to re-prioritise or cancel the job.
    /// - Thread: any
    @discardableResult
    public func schedule(
        priority: DisplayPriority,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        onDropped: (@Sendable () -> Void)? = nil,
        work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> DisplayJobOutcome
    ) -> DisplayJob {
        let job = DisplayJob(core: core, priority: priority, isCancelled: isCancelled, onDropped: onDropped, work: work)
        core.enqueue(job, priority: priority)
        return job
    }

    /// Jobs waiting to start (not running).
    /// - Thread: any
    public var queueDepth: Int { core.queueDepth }

    /// Jobs a worker has taken and not finished (running, or being checked for cancellation).
    /// - Thread: any
    public var runningCount: Int { core.runningCount }

    /// A snapshot of the counts.
    /// - Thread: any
    public var statistics: Statistics { core.statistics }

    /// Sets every count back to zero.
    /// - Thread: any
    public func resetStatistics() { core.resetStatistics() }

    /// Blocks the caller until no job is waiting or running and no drop callback is in flight.
    /// For tests, benchmarks and "display now and wait".
    /// - Thread: any thread except this scheduler's workers (that would wait for itself; it traps).
    public func waitUntilIdle() { core.waitUntilIdle() }

    /// Stops the workers once their current jobs return, and drops every waiting job (its
    /// `onDropped` runs inline on this thread). Later `schedule` calls drop their job at once.
    /// Does not wait for running jobs; call `waitUntilIdle()` for that. Idempotent; `deinit` calls it.
    /// - Thread: any, including a worker.
    public func shutdown() { core.shutdown() }
}

// MARK: - Internals

extension DisplayScheduler {
    /// The index of the scheduler worker running the caller (0 is the one serial mode uses); nil on
    /// any other thread. For tests and debugging.
    /// - Thread: any
    static var currentWorkerIndex: Int? { DisplaySchedulerCore.currentWorkerMarker?.index }

    /// "`base`.`index`", shortened on Linux to the 15 bytes a thread name may have there (a longer
    /// one is rejected, leaving the process's name); the worker number is kept, as it is what tells
    /// the workers apart in a debugger or profiler.
    static func workerThreadName(_ base: String, index: Int) -> String {
        let suffix = ".\(index)"
        var prefix = Substring(base)
        #if os(Linux)
            while !prefix.isEmpty && prefix.utf8.count + suffix.utf8.count > 15 { prefix.removeLast() }
        #endif
        return prefix + suffix
    }
}

/// Left in a worker thread's dictionary: lets `waitUntilIdle` refuse to run on its own workers and
/// tells tests which worker ran a job. Created and read only on that worker's thread.
private final class DisplayWorkerMarker {
    let core: DisplaySchedulerCore
    let index: Int

    init(core: DisplaySchedulerCore, index: Int) {
        self.core = core
        self.index = index
    }
}

/// Parks one thread until another unparks it. The permit makes an unpark that comes before the park
/// count, so deciding to sleep (under the scheduler's lock) and sleeping (after releasing it) cannot
/// lose a wakeup.
/// - Thread: any
private final class DisplayWorkerParker: Sendable {
    private let condition = NSCondition()
    private nonisolated(unsafe) var permit = false  // guarded by condition

    func park() {
        condition.lock()
        while !permit { condition.wait() }
        permit = false
        condition.unlock()
    }

    func unpark() {
        condition.lock()
        permit = true
        condition.signal()
        condition.unlock()
    }
}

/// The scheduler's state and worker loop. Separate from `DisplayScheduler` so the workers keep only
/// this alive: dropping the last `DisplayScheduler` reference runs its `deinit`, which shuts down.
///
/// Waiting jobs live in an indexed binary heap (each job knows its slot), so that cancelling a
/// waiting job removes it at once in O(log n): its `onDropped` runs on the cancelling thread and no
/// worker is woken to throw it away. A priority change sifts the job in place; when many changes
/// arrive between two picks (a scroll re-prioritising every node), they only rewrite keys and the
/// next pick rebuilds the heap in O(n), which is cheaper than that many sifts.
///
/// Each worker sleeps on its own parker, so a schedule wakes exactly one parked worker, and only
/// when the waiting jobs outnumber the workers already woken; serial mode can then wake worker 0
/// specifically.
/// - Thread: any
fileprivate final class DisplaySchedulerCore: Sendable {
    typealias Work = @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> DisplayJobOutcome

    /// A waiting job with its ordering key stored inline, so heap comparisons do not chase pointers.
    struct Entry {
        var priority: DisplayPriority
        let sequence: UInt64
        let job: DisplayJob
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
        /// Binary max-heap of waiting jobs; each job's `heapIndex` mirrors its position.
        var heap: [Entry] = []
        /// True when keys changed without restoring the heap property; the next pick re-heapifies.
        var heapIsStale = false
        /// In-place re-orderings since the last pick; past a share of the heap's size, one O(n)
        /// rebuild at the next pick is cheaper than more O(log n) sifts.
        var siftedUpdatesSincePick = 0
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

        init(workerCount: Int) {
            workerStates = Array(repeating: .active, count: workerCount)
        }

        var isIdle: Bool { heap.isEmpty && activeCount == 0 && inlineDropsInFlight == 0 }

        // MARK: Heap

        /// Whether `a` must run before `b` under the current mode.
        @inline(__always)
        func precedes(_ a: Entry, _ b: Entry) -> Bool {
            if !serializes {
                if a.priority.isVisible != b.priority.isVisible { return a.priority.isVisible }
                let da = a.priority.orderingDistance
                let db = b.priority.orderingDistance
                if da != db { return da < db }
            }
            return a.sequence < b.sequence
        }

        @inline(__always)
        mutating func place(_ entry: Entry, at index: Int) {
            heap[index] = entry
            entry.job.heapIndex = index
        }

        mutating func siftUp(_ start: Int) {
            var index = start
            let entry = heap[index]
            while index > 0 {
                let parent = (index - 1) / 2
                guard precedes(entry, heap[parent]) else { break }
                place(heap[parent], at: index)
                index = parent
            }
            place(entry, at: index)
        }

        mutating func siftDown(_ start: Int) {
            var index = start
            let entry = heap[index]
            let count = heap.count
            while true {
                let left = 2 * index + 1
                guard left < count else { break }
                let right = left + 1
                let child = right < count && precedes(heap[right], heap[left]) ? right : left
                guard precedes(heap[child], entry) else { break }
                place(heap[child], at: index)
                index = child
            }
            place(entry, at: index)
        }

        /// Restores the heap property at `index` after its key changed in either direction.
        mutating func restore(at index: Int) {
            if index > 0 && precedes(heap[index], heap[(index - 1) / 2]) {
                siftUp(index)
            } else {
                siftDown(index)
            }
        }

        mutating func heapify() {
            if heap.count > 1 {
                for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
            }
            heapIsStale = false
        }

        mutating func push(_ entry: Entry) {
            heap.append(entry)
            entry.job.heapIndex = heap.count - 1
            if !heapIsStale { siftUp(heap.count - 1) }
        }

        /// Removes the entry at `index` (any position, so cancellation is O(log n)).
        mutating func remove(at index: Int) -> Entry {
            let removed = heap[index]
            removed.job.heapIndex = -1
            let last = heap.removeLast()
            if index < heap.count {
                place(last, at: index)
                if !heapIsStale { restore(at: index) }
            }
            return removed
        }

        mutating func reprioritise(_ job: DisplayJob, to priority: DisplayPriority) {
            job.storedPriority = priority
            let index = job.heapIndex
            guard index >= 0 else { return }
            heap[index].priority = priority
            // Schedule order ignores priorities; a stale heap is rebuilt with the new key anyway.
            if serializes || heapIsStale { return }
            if siftedUpdatesSincePick >= max(32, heap.count / 8) {
                heapIsStale = true
                return
            }
            siftedUpdatesSincePick += 1
            restore(at: index)
        }

        /// The next job for worker `index`, removed from the heap, or nil if that worker may not pick.
        mutating func pick(for index: Int) -> Entry? {
            guard !heap.isEmpty else { return nil }
            // Serial mode: one worker, and only once everything started before the switch is done.
            if serializes && (index != 0 || activeCount != 0) { return nil }
            if heapIsStale { heapify() }
            siftedUpdatesSincePick = 0
            return remove(at: 0)
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
                guard workerStates[0] == .parked, activeCount == 0, !heap.isEmpty,
                    let position = parkedWorkers.firstIndex(of: 0)
                else { return nil }
                parkedWorkers.remove(at: position)
                markWoken(0)
                return 0
            }
            guard heap.count > wokenCount, let index = parkedWorkers.popLast() else { return nil }
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

    /// What a worker reports about the job it just finished, recorded under the lock at its next pick.
    enum Finished {
        case dropped
        case ran(DisplayJobOutcome, milliseconds: Double)
    }

    enum WorkerStep {
        case run(DisplayJob, Work, (@Sendable () -> Void)?)
        case park(wake: Int?, idleWaiters: [DisplayWorkerParker])
        case exit(wake: [Int], idleWaiters: [DisplayWorkerParker])
    }

    private static let workerMarkerKey = "tessera.DisplayScheduler.worker"

    /// The marker of the worker running the caller, if the caller is a worker of any scheduler.
    static var currentWorkerMarker: DisplayWorkerMarker? {
        Thread.current.threadDictionary[workerMarkerKey] as? DisplayWorkerMarker
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

    func startWorkers(name: String) {
        for index in parkers.indices {
            let threadName = DisplayScheduler.workerThreadName(name, index: index)
            let thread = Thread { [self] in
                // Named from inside: on Linux a name given before start() does not reach the thread.
                // Even so the name is best effort there (swift-corelibs-foundation occasionally
                // loses it), so identity checks use the marker instead.
                Thread.current.name = threadName
                Thread.current.threadDictionary[Self.workerMarkerKey] = DisplayWorkerMarker(core: self, index: index)
                // Workers yield to the UI thread when they share its core: on Linux the nice value is
                // per thread, so this lowers only the worker's own weight.
                #if os(Linux)
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, DisplayScheduler.workerNiceValue)
                #endif
                runWorker(index: index)
            }
            thread.qualityOfService = .userInitiated
            thread.start()
        }
    }


    // MARK: Worker loop

    private func runWorker(index: Int) {
        let parker = parkers[index]
        var finished: Finished?
        while true {
            let step: WorkerStep = state.withLock { state in
                if let finished {
                    state.activeCount -= 1
                    switch finished {
                    case .dropped:
                        state.statistics.cancelledBeforeStart += 1
                    case .ran(.completed, milliseconds: let milliseconds):
                        state.statistics.completed += 1
                        state.statistics.workMillisecondsCompleted += milliseconds
                    case .ran(.cancelled, milliseconds: let milliseconds):
                        state.statistics.cancelledWhileRunning += 1
                        state.statistics.workMillisecondsCancelled += milliseconds
                    }
                }
                if state.workerStates[index] == .woken { state.wokenCount -= 1 }
                state.workerStates[index] = .active
                if let entry = state.pick(for: index) {
                    state.activeCount += 1
                    let job = entry.job
                    // Only leaving the heap clears `work`, so a job taken from it still has it.
                    let step = WorkerStep.run(job, job.work!, job.onDropped)
                    job.work = nil
                    job.onDropped = nil
                    return step
                }
                if state.isShutDown {
                    state.workerStates[index] = .exited
                    return .exit(wake: state.allWakeups(), idleWaiters: state.takeIdleWaitersIfIdle())
                }
                state.workerStates[index] = .parked
                state.parkedWorkers.append(index)
                // In serial mode the last job of another worker finishing is what lets worker 0 go on.
                return .park(wake: state.nextWakeup(), idleWaiters: state.takeIdleWaitersIfIdle())
            }
            finished = nil
            switch step {
            case .run(let job, let work, let onDropped):
                // The caller's check runs here, unlocked, rather than at cancel time: it may be slow or
                // take the caller's own locks.
                if job.isCancelled {
                    onDropped?()
                    finished = .dropped
                } else {
                    state.withLock { $0.statistics.started += 1 }
                    let start = MonotonicClock.nanoseconds()
                    let outcome = work { job.isCancelled }
                    finished = .ran(outcome, milliseconds: MonotonicClock.milliseconds(since: start))
                }
            case .park(let wake, let idleWaiters):
                if let wake { parkers[wake].unpark() }
                for waiter in idleWaiters { waiter.unpark() }
                parker.park()
            case .exit(let wake, let idleWaiters):
                for index in wake { parkers[index].unpark() }
                for waiter in idleWaiters { waiter.unpark() }
                return
            }
        }
    }

    // MARK: Operations

    func enqueue(_ job: DisplayJob, priority: DisplayPriority) {
        let (wake, dropped): (Int?, (@Sendable () -> Void)?) = state.withLock { state in
            state.statistics.scheduled += 1
            if state.isShutDown {
                state.statistics.cancelledBeforeStart += 1
                let onDropped = job.onDropped
                job.onDropped = nil
                job.work = nil
                if onDropped != nil { state.inlineDropsInFlight += 1 }
                return (nil, onDropped)
            }
            state.push(Entry(priority: priority, sequence: state.nextSequence, job: job))
            state.nextSequence &+= 1
            return (state.wakeupsHeld ? nil : state.nextWakeup(), nil)
        }
        if let wake { parkers[wake].unpark() }
        if let dropped { runInlineDrops([dropped]) }
    }

    func dropIfWaiting(_ job: DisplayJob) {
        let (dropped, idleWaiters): ((@Sendable () -> Void)?, [DisplayWorkerParker]) = state.withLock { state in
            guard job.heapIndex >= 0 else { return (nil, []) }
            _ = state.remove(at: job.heapIndex)
            state.statistics.cancelledBeforeStart += 1
            let onDropped = job.onDropped
            job.onDropped = nil
            job.work = nil
            if onDropped != nil {
                state.inlineDropsInFlight += 1
                return (onDropped, [])
            }
            return (nil, state.takeIdleWaitersIfIdle())
        }
        for waiter in idleWaiters { waiter.unpark() }
        if let dropped { runInlineDrops([dropped]) }
    }

    /// Runs drop callbacks on this thread; they were counted in `inlineDropsInFlight` (as one batch)
    /// under the lock that removed their jobs.
    private func runInlineDrops(_ callbacks: [@Sendable () -> Void]) {
        for callback in callbacks { callback() }
        let idleWaiters = state.withLock { state in
            state.inlineDropsInFlight -= 1
            return state.takeIdleWaitersIfIdle()
        }
        for waiter in idleWaiters { waiter.unpark() }
    }

    func priority(of job: DisplayJob) -> DisplayPriority {
        state.withLock { _ in job.storedPriority }
    }

    func setPriority(_ priority: DisplayPriority, of job: DisplayJob) {
        state.withLock { $0.reprioritise(job, to: priority) }
    }

    var serializesAllDrawing: Bool {
        state.withLock { $0.serializes }
    }

    func setSerializesAllDrawing(_ serializes: Bool) {
        let wake: [Int] = state.withLock { state in
            guard state.serializes != serializes else { return [] }
            state.serializes = serializes
            // The heap was ordered for the other mode.
            if !state.heap.isEmpty { state.heapIsStale = true }
            return state.allWakeups()
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

    var parkedCount: Int { state.withLock { $0.parkedWorkers.count } }

    var queueDepth: Int { state.withLock { $0.heap.count } }
    var runningCount: Int { state.withLock { $0.activeCount } }
    var statistics: DisplayScheduler.Statistics { state.withLock { $0.statistics } }

    func resetStatistics() {
        state.withLock { $0.statistics = DisplayScheduler.Statistics() }
    }

    func waitUntilIdle() {
        precondition(
            Self.currentWorkerMarker?.core !== self,
            "DisplayScheduler.waitUntilIdle() called from one of its own workers would wait for itself")
        let parker = DisplayWorkerParker()
        let mustWait = state.withLock { state in
            if state.isIdle { return false }
            state.idleWaiters.append(parker)
            return true
        }
        if mustWait { parker.park() }
    }

    func shutdown() {
        let (dropped, wake, idleWaiters): ([@Sendable () -> Void], [Int], [DisplayWorkerParker]) =
            state.withLock { state in
                guard !state.isShutDown else { return ([], [], []) }
                state.isShutDown = true
                var dropped: [@Sendable () -> Void] = []
                for entry in state.heap {
                    let job = entry.job
                    job.heapIndex = -1
                    job.work = nil
                    if let onDropped = job.onDropped { dropped.append(onDropped) }
                    job.onDropped = nil
                }
                state.statistics.cancelledBeforeStart += state.heap.count
                state.heap.removeAll()
                state.heapIsStale = false
                if !dropped.isEmpty { state.inlineDropsInFlight += 1 }
                return (dropped, state.allWakeups(), state.takeIdleWaitersIfIdle())
            }
        for index in wake { parkers[index].unpark() }
        for waiter in idleWaiters { waiter.unpark() }
        if !dropped.isEmpty { runInlineDrops(dropped) }
    }
}
