/// The percentiles of a sample of measurements (frame times, ratios, run figures), by the nearest-rank
/// definition: every figure the perf overlay and the benchmarks print comes from here.
///
/// Nearest rank: of `n` values in ascending order, the `p` percentile (`p` in 0...1) is the value of
/// rank `⌈p·n⌉` (ranks from 1), taken as rank 1 when `p·n` is 0. So the 0.5 percentile of an even
/// count is the lower of the two middle values, 1 is the maximum, 0 the minimum, and every answer is
/// one of the values measured (no interpolation between two frames that each happened).
///
/// Defined for every input, and never NaN:
/// - NaN values are left out (they have no rank); infinities are kept and rank as they compare.
/// - With no values left, every percentile, `minimum` and `maximum` are 0; `isEmpty` tells.
/// - `p` is clamped to 0...1; a NaN `p` reads as 0.
/// - Thread: any (a value)
public struct Percentiles: Sendable, Equatable {
    /// The values kept, in ascending order.
    public let sorted: [Double]

    /// Sorts `values` once; each percentile is then an index.
    public init<Values: Sequence>(_ values: Values) where Values.Element == Double {
        sorted = values.filter { !$0.isNaN }.sorted()
    }

    /// The number of values kept (NaN left out).
    public var count: Int { sorted.count }
    public var isEmpty: Bool { sorted.isEmpty }

    /// The 1-based nearest rank of percentile `p` among `count` values; 0 when `count` is 0.
    public static func nearestRank(_ p: Double, count: Int) -> Int {
        guard count > 0 else { return 0 }
        let clamped = p.isNaN ? 0 : min(1, max(0, p))
        // p·n is a whole number whenever the rank is exact (0.07 · 100 = 7), but the product in binary
        // can land just above it (7.000000000000001); the margin keeps such products on their rank.
        let rank = (clamped * Double(count) - 1e-9).rounded(.up)
        return min(count, max(1, Int(rank)))
    }

    /// The `p` percentile (`p` in 0...1; 0.99 is p99); 0 when there are no values.
    public func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[Self.nearestRank(p, count: sorted.count) - 1]
    }

    /// The 0.5 percentile: the lower middle value of an even count.
    public var median: Double { percentile(0.5) }
    /// The smallest value; 0 when there are none.
    public var minimum: Double { sorted.first ?? 0 }
    /// The largest value; 0 when there are none.
    public var maximum: Double { sorted.last ?? 0 }
}

extension Sequence where Element == Double {
    /// The nearest-rank `p` percentile of these values (see `Percentiles`); 0 when there are none.
    /// Sorts on every call: use `Percentiles` to ask several.
    /// - Thread: any
    public func percentile(_ p: Double) -> Double { Percentiles(self).percentile(p) }

    /// The nearest-rank median of these values (see `Percentiles`); 0 when there are none.
    /// - Thread: any
    public func median() -> Double { Percentiles(self).median }
}
