import FoundationEssentials
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops a fetch from any thread, at once: a wait between retries (`wait(seconds:)`) ends the moment
/// `cancel()` is called. It holds no descriptor: a queued fetch costs memory only.
///
/// A token is made per fetch; once cancelled it stays cancelled.
/// - Thread: any
public final class FetchCancellation: Sendable {
    private let cancelled = ConditionLocked(false)

    /// A token not cancelled yet.
    /// - Thread: any
    public init() {}

    /// Whether `cancel()` was called.
    /// - Thread: any
    public var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Cancels: ends every wait now and from now on. Repeated calls do nothing more.
    /// - Thread: any
    public func cancel() {
        cancelled.withLockBroadcasting { $0 = true }
    }

    /// Waits `seconds` (at most), or until cancelled. Returns true when the wait ran its full length,
    /// false when the token was (or became) cancelled.
    /// - Thread: any
    public func wait(seconds: Double) -> Bool {
        let wait = seconds.isFinite ? max(0, seconds) : 365 * 86_400
        let cancelledFirst = cancelled.wait(until: { $0 }, timeout: wait) { _ in true }
        return cancelledFirst == nil
    }
}

/// Seconds on a clock that never jumps (CLOCK_MONOTONIC), for deadlines.
enum MonotonicTime {
    static var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// `seconds` as a `poll` time-out in whole milliseconds, rounded up, at least 0.
    static func milliseconds(_ seconds: Double) -> Int32 {
        guard seconds > 0 else { return 0 }
        return Int32(min(Double(Int32.max), (seconds * 1000).rounded(.up)))
    }
}
