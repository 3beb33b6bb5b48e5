import XCTest
import Compositor
import TestSupport

/// The one percentile definition the overlay and the benchmarks share: nearest rank, defined (and
/// never NaN) for every input.
@MainActor
final class PercentilesTests: XCTestCase {
    func testNearestRankOfOneToTen() async {
        let percentiles = Percentiles((1...10).map(Double.init).shuffled())
        XCTAssertEqual(percentiles.sorted, (1...10).map(Double.init))
        XCTAssertEqual(percentiles.percentile(0), 1, "p0 is the minimum")
        XCTAssertEqual(percentiles.percentile(0.10), 1, "rank ⌈1.0⌉ = 1")
        XCTAssertEqual(percentiles.percentile(0.11), 2, "rank ⌈1.1⌉ = 2")
        XCTAssertEqual(percentiles.percentile(0.5), 5, "rank ⌈5.0⌉ = 5: the lower middle of an even count")
        XCTAssertEqual(percentiles.percentile(0.9), 9)
        XCTAssertEqual(percentiles.percentile(0.91), 10)
        XCTAssertEqual(percentiles.percentile(0.99), 10)
        XCTAssertEqual(percentiles.percentile(1), 10, "p100 is the maximum")
        XCTAssertEqual(percentiles.median, 5)
        XCTAssertEqual(percentiles.minimum, 1)
        XCTAssertEqual(percentiles.maximum, 10)
    }

    func testP99OfAHundredAndOfTwoHundredFortyFrames() async {
        let hundred = Percentiles((1...100).map(Double.init))
        XCTAssertEqual(hundred.percentile(0.99), 99)
        XCTAssertEqual(hundred.percentile(0.95), 95)
        XCTAssertEqual(hundred.median, 50)
        XCTAssertEqual(hundred.percentile(0.07), 7, "0.07 × 100 is 7.000000000000001 in binary; the rank is still 7")
        // The overlay keeps 240 frames: its p99 is the third slowest.
        XCTAssertEqual(Percentiles.nearestRank(0.99, count: 240), 238)
        XCTAssertEqual(Percentiles((1...240).map(Double.init)).percentile(0.99), 238)
    }

    func testOddCountMedianIsTheMiddleValue() async {
        XCTAssertEqual(Percentiles([9, 1, 5, 3, 7]).median, 5)
        XCTAssertEqual([4.0, 1, 3, 2].median(), 2, "even count: the lower middle")
    }

    func testEmptyInputGivesZeroNotATrapOrNaN() async {
        let empty = Percentiles([Double]())
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty.count, 0)
        for p in [0, 0.5, 0.99, 1] { XCTAssertEqual(empty.percentile(p), 0) }
        XCTAssertEqual(empty.median, 0)
        XCTAssertEqual(empty.minimum, 0)
        XCTAssertEqual(empty.maximum, 0)
        XCTAssertEqual([Double]().percentile(0.99), 0)
        XCTAssertEqual(Percentiles.nearestRank(0.5, count: 0), 0)
    }

    func testNaNValuesAreLeftOutAndInfinitiesRank() async {
        let mixed = Percentiles([.nan, 3, .nan, 1, 2])
        XCTAssertEqual(mixed.count, 3)
        XCTAssertEqual(mixed.sorted, [1, 2, 3])
        XCTAssertEqual(mixed.median, 2)
        let onlyNaN = Percentiles([Double.nan, .nan])
        XCTAssertTrue(onlyNaN.isEmpty)
        XCTAssertFalse(onlyNaN.median.isNaN)
        XCTAssertEqual(onlyNaN.percentile(0.99), 0)
        let infinite = Percentiles([1, .infinity, -.infinity])
        XCTAssertEqual(infinite.percentile(1), .infinity)
        XCTAssertEqual(infinite.percentile(0), -.infinity)
        XCTAssertEqual(infinite.median, 1)
    }

    func testOutOfRangeAndNaNPercentsAreClamped() async {
        let percentiles = Percentiles([10, 20, 30])
        XCTAssertEqual(percentiles.percentile(-1), 10)
        XCTAssertEqual(percentiles.percentile(2), 30)
        XCTAssertEqual(percentiles.percentile(.nan), 10, "a NaN percent reads as 0")
        XCTAssertEqual(percentiles.percentile(.infinity), 30)
    }

    /// The definition itself, on random samples: the answer is a value of the sample, at least
    /// ⌈p·n⌉ values are at or below it, and fewer than ⌈p·n⌉ are strictly below it.
    func testEveryAnswerIsTheNearestRankValueOnRandomSamples() async {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        // Under the sanitizers (several times slower) a fifth of the samples, from the same seed.
        for _ in 0..<(TestEnvironment.isSanitized ? 100 : 500) {
            let count = Int(next() % 300) + 1
            // Few distinct values, so ties are common.
            let values = (0..<count).map { _ in Double(next() % 12) / 4 }
            let percentiles = Percentiles(values)
            for percent in [0, 1, 7, 25, 50, 75, 90, 95, 99, 100] {
                let p = Double(percent) / 100
                let answer = percentiles.percentile(p)
                let rank = max(1, (percent * count + 99) / 100)  // ⌈p·n⌉ in whole numbers
                XCTAssertTrue(values.contains(answer))
                XCTAssertGreaterThanOrEqual(values.filter { $0 <= answer }.count, rank, "p \(p) of \(values)")
                XCTAssertLessThan(values.filter { $0 < answer }.count, rank, "p \(p) of \(values)")
                XCTAssertEqual(values.percentile(p), answer, "the sequence shorthand agrees")
            }
        }
    }
}
