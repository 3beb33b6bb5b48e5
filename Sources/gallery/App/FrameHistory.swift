import Tessera
import Foundation

/// The last frames' records and the figures the perf overlay and the benchmarks print.
/// - Thread: main
@MainActor
final class FrameHistory {
    /// One frame: the UI thread's record and the display workers' busy time.
    struct Sample {
        var record: FrameRecord
        /// Milliseconds the display workers spent drawing (all workers added up) in draws that ended
        /// since the previous frame.
        var workerMilliseconds: Double
    }

    let capacity: Int
    private(set) var samples: [Sample] = []
    private var next = 0
    /// Frames whose main-thread time went over the 16.7 ms budget, since the start.
    private(set) var framesOverBudget = 0
    private(set) var frameCount = 0
    /// Wall-clock start of each recent frame, for the frame rate.
    private var frameStarts: [Double] = []

    nonisolated static let budgetMilliseconds = 1000.0 / 60

    init(capacity: Int = 240) { self.capacity = capacity }

    func append(_ record: FrameRecord, workerMilliseconds: Double = 0, wallTime: Double) {
        let sample = Sample(record: record, workerMilliseconds: workerMilliseconds)
        if samples.count < capacity { samples.append(sample) } else { samples[next] = sample }
        next = (next + 1) % capacity
        frameCount += 1
        if record.totalMilliseconds > Self.budgetMilliseconds { framesOverBudget += 1 }
        frameStarts.append(wallTime)
        if frameStarts.count > 61 { frameStarts.removeFirst(frameStarts.count - 61) }
    }

    /// The kept frames' records, in no particular order.
    var records: [FrameRecord] { samples.map(\.record) }

    /// Samples oldest first.
    var ordered: [Sample] {
        samples.count < capacity ? samples : Array(samples[next...] + samples[..<next])
    }

    /// Frames per second over the last second or so.
    var framesPerSecond: Double {
        guard frameStarts.count >= 2, let first = frameStarts.first, let last = frameStarts.last, last > first else { return 0 }
        return Double(frameStarts.count - 1) / (last - first)
    }

    /// The percentiles of one figure of the kept frames' records (nearest rank; all 0 with no frames).
    func percentiles(_ figure: KeyPath<FrameRecord, Double>) -> Percentiles {
        Percentiles(samples.lazy.map { $0.record[keyPath: figure] })
    }

    /// The `p` percentile (0...1) of main-thread milliseconds over the kept frames (nearest rank; 0
    /// with no frames).
    func percentile(_ p: Double) -> Double { percentiles(\.totalMilliseconds).percentile(p) }
}

/// Turns the scheduler's cumulative work time into time per frame: each reading returns the display
/// workers' milliseconds (completed and cancelled draws alike) since the previous reading.
///
/// A draw counts when it ends, so one that spans frames lands whole in the frame it ended in. When the
/// statistics were reset between two readings the total goes down; that reading counts the new total.
/// - Thread: main (a value the frame loop owns)
struct WorkerTimeMeter {
    /// The cumulative total at the previous reading.
    private var lastTotal: Double?

    init() {}

    /// Milliseconds of worker time in `statistics` since the previous call (0 on the first call, which
    /// only takes the starting point).
    mutating func millisecondsSinceLastReading(_ statistics: DisplayScheduler.Statistics) -> Double {
        let total = statistics.busyMilliseconds
        defer { lastTotal = total }
        guard let lastTotal else { return 0 }
        return total >= lastTotal ? total - lastTotal : total
    }
}
