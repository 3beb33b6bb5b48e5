import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops a fetch from any thread, at once: the fetching thread waits on its socket and on this
/// token's pipe together, so `cancel()` ends a wait for a connection, for bytes or between retries
/// without waiting for a time-out, and the socket is closed right after.
///
/// A token is made per fetch; once cancelled it stays cancelled.
/// - Thread: any
public final class FetchCancellation: Sendable {
    /// The pipe's ends: the fetching thread polls `readEnd`; `cancel()` writes a byte to `writeEnd`.
    /// Both are set in `init`, never changed, closed in `deinit`. -1 when the pipe could not be made
    /// (no descriptors left): then waits poll the flag every 50 ms instead.
    private let readEnd: Int32
    private let writeEnd: Int32
    private let cancelled = Locked(false)

    /// A token not cancelled yet.
    /// - Thread: any
    public init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
            readEnd = ends[0]
            writeEnd = ends[1]
        } else {
            readEnd = -1
            writeEnd = -1
        }
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Whether `cancel()` was called.
    /// - Thread: any
    public var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Cancels: waits on the token end now and from now on. Repeated calls do nothing more.
    /// - Thread: any
    public func cancel() {
        let first = cancelled.withLock { state -> Bool in
            defer { state = true }
            return !state
        }
        guard first, writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Waits `seconds` (at most), or until cancelled. Returns true when the wait ran its full length,
    /// false when the token was (or became) cancelled.
    /// - Thread: any (the fetching thread in practice)
    public func wait(seconds: Double) -> Bool {
        let deadline = MonotonicTime.now + max(0, seconds)
        while !isCancelled {
            let left = deadline - MonotonicTime.now
            if left <= 0 { return true }
            if readEnd < 0 {
                usleep(UInt32(min(left, 0.05) * 1_000_000))
                continue
            }
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, MonotonicTime.milliseconds(left))
        }
        return false
    }

    /// A `pollfd` entry that becomes readable when the token is cancelled (a descriptor of -1, which
    /// `poll` ignores, when the pipe could not be made).
    var pollEntry: pollfd { pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0) }

    /// Whether `poll` may be given an unbounded wait: false when cancellation cannot wake it.
    var wakesPoll: Bool { readEnd >= 0 }
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
