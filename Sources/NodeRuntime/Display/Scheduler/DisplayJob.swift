import Synchronization

/// How a job ended.
/// - Thread: any (a value)
public enum DisplayJobOutcome: Sendable {
    case completed
    case cancelled
}

/// What a job does, for the scheduler's statistics.
/// - Thread: any (a value)
public enum DisplayJobKind: String, Sendable, CaseIterable, Hashable {
    /// A node's contents being drawn.
    case draw
    /// An image being decoded.
    case decode
    /// A list row being made and measured.
    case measure
}

/// A handle to a scheduled job.
///
/// The handle outlives the job: once the job has run or been dropped, `setPriority` and `cancel` do
/// nothing to the scheduler (a cancel still makes `isCancelled` true, and `priority` still answers
/// the last value set). Everything the scheduler changes about a waiting job (its key, its place in
/// the queue, its closures) lives inside the scheduler's lock; the handle holds only immutable values
/// and two atomics.
/// - Thread: any
public final class DisplayJob: Sendable {
    let core: DisplaySchedulerCore
    /// The job's id in the scheduler's queue.
    let id: UInt64
    /// What the job does.
    public let kind: DisplayJobKind
    /// The caller's own check (for example "the node's contents went stale"); immutable, so it is read
    /// without a lock.
    private let externalCancellationCheck: @Sendable () -> Bool
    /// Atomic rather than under the scheduler's lock because running work polls it between phases.
    private let cancelRequested = Atomic<Bool>(false)
    /// The last priority set, as (isVisible, distance bits). Written only inside the scheduler's lock,
    /// together with the queue's key, so the two always agree; read without it.
    private let recordedPriority: Atomic<WordPair>

    init(core: DisplaySchedulerCore, id: UInt64, kind: DisplayJobKind, priority: DisplayPriority,
         isCancelled: @escaping @Sendable () -> Bool) {
        self.core = core
        self.id = id
        self.kind = kind
        externalCancellationCheck = isCancelled
        recordedPriority = Atomic(Self.pack(priority))
    }

    /// The job's current priority.
    /// - Thread: any
    public var priority: DisplayPriority {
        Self.unpack(recordedPriority.load(ordering: .acquiring))
    }

    /// Changes the job's priority. A waiting job is re-ordered before the next pick; a running or
    /// finished job only records the value.
    /// - Thread: any
    public func setPriority(_ priority: DisplayPriority) {
        core.setPriority(priority, of: self)
    }

    /// Records `priority`; called by the scheduler inside its lock.
    func record(_ priority: DisplayPriority) {
        recordedPriority.store(Self.pack(priority), ordering: .releasing)
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

    private static func pack(_ priority: DisplayPriority) -> WordPair {
        WordPair(first: priority.isVisible ? 1 : 0, second: UInt(priority.distance.bitPattern))
    }

    private static func unpack(_ pair: WordPair) -> DisplayPriority {
        DisplayPriority(isVisible: pair.first != 0, distance: Double(bitPattern: UInt64(pair.second)))
    }
}
