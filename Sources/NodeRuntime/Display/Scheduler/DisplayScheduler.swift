import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Runs draw jobs on a fixed pool of worker threads, most urgent first.
///
/// Workers are `Thread`s that sleep on a condition when there is nothing to pick, so an idle
/// scheduler costs no CPU. User closures (`work`, `onDropped`, `isCancelled`) are never called with
/// the scheduler's lock held, so they may call back into the scheduler (schedule, cancel,
/// re-prioritise) freely.
/// - Thread: any, unless a member says otherwise.
public final class DisplayScheduler: Sendable {
    /// Counts since creation or the last `resetStatistics()`: in all, and for each kind of job.
    /// - Thread: any (a value)
    public struct Statistics: Sendable, Equatable {
        /// The counts of all jobs, whatever their kind.
        public var total = Counts()
        /// The counts of each kind of job (draw, decode, measure); a kind never scheduled has no entry.
        public var byKind: [DisplayJobKind: Counts] = [:]

        /// What happened to a set of jobs.
        /// - Thread: any (a value)
        public struct Counts: Sendable, Equatable {
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

        public init() {}

        public var scheduled: Int { total.scheduled }
        public var started: Int { total.started }
        public var completed: Int { total.completed }
        public var cancelledBeforeStart: Int { total.cancelledBeforeStart }
        public var cancelledWhileRunning: Int { total.cancelledWhileRunning }
        public var workMillisecondsCompleted: Double { total.workMillisecondsCompleted }
        public var workMillisecondsCancelled: Double { total.workMillisecondsCancelled }
        /// Milliseconds the workers spent inside `work`, whatever its outcome: what the perf overlay
        /// graphs per frame.
        public var busyMilliseconds: Double { total.workMillisecondsCompleted + total.workMillisecondsCancelled }

        /// Counts one event for a job of `kind`, in the total and in `byKind`.
        mutating func count(_ kind: DisplayJobKind, _ update: (inout Counts) -> Void) {
            update(&total)
            update(&byKind[kind, default: Counts()])
        }
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

    /// How display workers share the machine with the UI thread.
    /// - Thread: any (a value)
    public struct WorkerPolicy: Sendable, Hashable, CustomStringConvertible {
        /// The scheduling class or weight of each worker thread (Linux sets it per thread).
        public enum Priority: Sendable, Hashable {
            /// Nice 0, like the UI thread.
            case normal
            /// A nice value (1...19): the kernel gives the thread that much less weight than the UI
            /// thread when they share a core.
            case nice(Int32)
            /// `SCHED_IDLE`: the thread runs only when a core has nothing else to run.
            case idle
        }
        public var priority: Priority
        /// At most this many workers run jobs at once (nil: every worker). On two cores, one keeps a
        /// core for the UI thread, as Chromium's raster threads (cores / 2) do.
        public var maximumActiveWorkers: Int?

        public init(priority: Priority = .nice(5), maximumActiveWorkers: Int? = nil) {
            self.priority = priority
            self.maximumActiveWorkers = maximumActiveWorkers.map { max(1, $0) }
        }

        /// Nice 5, every worker: the scheduler's default, which any number of workers can rely on
        /// (a caller that holds every worker at once, as tests do, needs them all active).
        public static let `default` = WorkerPolicy()

        /// Nice 5 and at most half the cores' worth of workers active (at least one): the UI thread
        /// keeps a core of its own, and no worker woken after a frame's present takes it (docs/benchmarks.md,
        /// "Workers and the UI thread's core", has the measurements). What the gallery runs with.
        public static var keepingACoreForTheUIThread: WorkerPolicy {
            WorkerPolicy(priority: .nice(5), maximumActiveWorkers: max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        }

        public var description: String {
            let priority: String
            switch self.priority {
            case .normal: priority = "nice 0"
            case .nice(let value): priority = "nice \(value)"
            case .idle: priority = "SCHED_IDLE"
            }
            return maximumActiveWorkers.map { "\(priority), at most \($0) active" } ?? "\(priority), all workers"
        }
    }

    /// How workers run; a change takes effect at each worker's next job. - Thread: any
    public var workerPolicy: WorkerPolicy {
        get { core.policy }
        set { core.setPolicy(newValue) }
    }

    /// Workers asleep waiting for work (for tests).
    var parkedWorkerCount: Int { core.parkedCount }

    /// Wakes as many parked workers as the queued jobs need, and stops holding wakeups.
    /// - Thread: any
    public func releaseWakeups() { core.setWakeupsHeld(false) }

    /// True between `holdWakeups()` and `releaseWakeups()`. - Thread: any
    public var areWakeupsHeld: Bool { core.areWakeupsHeld }

    /// Queues `work` to run once on a worker.
    ///
    /// - Parameters:
    ///   - priority: where the job goes in the queue; change it later with `DisplayJob.setPriority`.
    ///   - kind: what the job does, for `Statistics.byKind`.
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
        kind: DisplayJobKind = .draw,
        isCancelled: @escaping @Sendable () -> Bool = { false },
        onDropped: (@Sendable () -> Void)? = nil,
        work: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> DisplayJobOutcome
    ) -> DisplayJob {
        core.enqueue(priority: priority, kind: kind, isCancelled: isCancelled, onDropped: onDropped, work: work)
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

    /// Like `waitUntilIdle()`, for at most `timeout` seconds; false when the time ran out first (the
    /// jobs go on). - Thread: any but one of this scheduler's workers
    public func waitUntilIdle(timeout: Double) -> Bool { core.waitUntilIdle(timeout: timeout) }

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

extension DisplayScheduler.WorkerPolicy.Priority {
    /// Applies this priority to the calling thread (best effort: a refusal leaves it as it was).
    /// On Linux nice values and `SCHED_IDLE` are per thread.
    func applyToCurrentThread() {
        #if os(Linux)
        var parameters = sched_param()
        parameters.sched_priority = 0
        switch self {
        case .normal, .nice:
            _ = sched_setscheduler(0, SCHED_OTHER, &parameters)
            let nice: Int32
            if case .nice(let value) = self { nice = min(19, max(0, value)) } else { nice = 0 }
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
        case .idle:
            // SCHED_IDLE (5 in <sched.h>, a macro Swift does not import).
            _ = sched_setscheduler(0, 5, &parameters)
        }
        #endif
    }
}
