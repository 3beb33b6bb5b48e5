import Compositor
import Foundation
import NodeRuntime

/// The last frames' records and the figures the perf overlay and the benchmarks print.
/// - Thread: main
final class FrameHistory {
    let capacity: Int
    private(set) var records: [FrameRecord] = []
    private var next = 0
    /// Frames whose main-thread time went over the 16.7 ms budget, since the start.
    private(set) var framesOverBudget = 0
    private(set) var frameCount = 0
    /// Wall-clock start of each recent frame, for the frame rate.
    private var frameStarts: [Double] = []

    static let budgetMilliseconds = 1000.0 / 60

    init(capacity: Int = 240) { self.capacity = capacity }

    func append(_ record: FrameRecord, wallTime: Double) {
        if records.count < capacity { records.append(record) } else { records[next] = record }
        next = (next + 1) % capacity
        frameCount += 1
        if record.totalMilliseconds > Self.budgetMilliseconds { framesOverBudget += 1 }
        frameStarts.append(wallTime)
        if frameStarts.count > 61 { frameStarts.removeFirst(frameStarts.count - 61) }
    }

    /// Records oldest first.
    var ordered: [FrameRecord] {
        records.count < capacity ? records : Array(records[next...] + records[..<next])
    }

    /// Frames per second over the last second or so.
    var framesPerSecond: Double {
        guard frameStarts.count >= 2, let first = frameStarts.first, let last = frameStarts.last, last > first else { return 0 }
        return Double(frameStarts.count - 1) / (last - first)
    }

    /// The `p` quantile (0...1) of main-thread milliseconds over the kept frames.
    func percentile(_ p: Double) -> Double {
        let sorted = records.map(\.totalMilliseconds).sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
}
