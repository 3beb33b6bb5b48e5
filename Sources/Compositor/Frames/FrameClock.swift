#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Paces frames. The real clock waits for 60 Hz deadlines (SDL's dummy driver does not pace vsync);
/// the virtual clock is stepped by hand, so tests and benchmarks on it are deterministic.
/// - Thread: main
public protocol FrameClock: AnyObject {
    /// Seconds since the clock started.
    var now: Double { get }
    /// The target time between frames, in seconds.
    var frameInterval: Double { get }
    /// Returns at the next frame deadline (at once if it has passed) and gives that frame's time.
    @discardableResult func waitForNextFrame() -> Double
}

/// Frame deadlines from the monotonic clock, every `frameInterval` seconds. A frame that overruns its
/// deadline by more than a whole interval re-bases the schedule instead of running frames back to back.
/// - Thread: main
public final class RealFrameClock: FrameClock {
    public let frameInterval: Double
    /// Time 0 of the clock, in `MonotonicClock` nanoseconds: a compositor thread given the same
    /// origin draws animations on the same time line.
    public let origin: UInt64
    /// The next deadline in seconds since `origin`. (main thread only)
    private var nextDeadline: Double

    /// A clock at `framesPerSecond` whose time 0 is `origin` (default: now).
    public init(framesPerSecond: Double = 60, origin: UInt64 = MonotonicClock.nanoseconds()) {
        let fps = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 60
        frameInterval = 1 / fps
        self.origin = origin
        nextDeadline = frameInterval
    }

    public var now: Double { Double(MonotonicClock.nanoseconds() &- origin) / 1e9 }

    @discardableResult
    public func waitForNextFrame() -> Double {
        var current = now
        if current > nextDeadline + frameInterval { nextDeadline = current }
        // Sleeps to the deadline (no spinning: a thread waiting for its frame takes no CPU); a sleep
        // may overshoot by a scheduler quantum on a busy machine.
        while current < nextDeadline {
            usleep(UInt32(max(50, (nextDeadline - current) * 1e6)))
            current = now
        }
        let frameTime = nextDeadline
        nextDeadline += frameInterval
        return frameTime
    }

    /// Seconds until the next frame is due (0 when it is due already).
    public var secondsUntilNextFrame: Double { max(0, nextDeadline - now) }

    /// Starts the schedule again from now: after the app waited for events, its next frame is due at
    /// once rather than at a deadline long past.
    public func restart() {
        nextDeadline = now
    }
}

/// A clock that advances only when told: each `waitForNextFrame()` moves it one interval forward.
/// - Thread: main
public final class VirtualFrameClock: FrameClock {
    public let frameInterval: Double
    public private(set) var now: Double = 0

    public init(framesPerSecond: Double = 60) {
        let fps = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 60
        frameInterval = 1 / fps
    }

    @discardableResult
    public func waitForNextFrame() -> Double {
        now += frameInterval
        return now
    }

    /// Moves the clock by `seconds` (ignored unless finite and positive).
    public func advance(by seconds: Double) {
        if seconds.isFinite && seconds > 0 { now += seconds }
    }
}
