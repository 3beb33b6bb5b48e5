import XCTest
@testable import NodeRuntime

/// The Fenwick tree of row heights against plain sums.
@MainActor
final class ListGeometryTests: XCTestCase {
    private func naiveOffset(_ heights: [Double], _ row: Int) -> Double { heights.prefix(row).reduce(0, +) }

    private func naiveRow(_ heights: [Double], containing y: Double) -> Int {
        var top = 0.0
        for (row, height) in heights.enumerated() {
            if y < top + height && height > 0 && y >= top { return row }
            top += height
        }
        return y <= 0 ? heights.firstIndex { $0 > 0 } ?? 0 : heights.count - 1
    }

    func testOffsetsAndLookupsMatchPlainSumsThroughRandomEdits() async {
        var random = SystemRandomNumberGenerator()
        // Heights on a half-point grid, some zero, as the list rounds them.
        var heights = (0..<257).map { _ in Double(Int.random(in: 0...80, using: &random)) / 2 }
        var geometry = RowGeometry()
        geometry.replaceAll(heights: heights, measured: Array(repeating: false, count: heights.count))
        for round in 0..<200 {
            let row = Int.random(in: 0..<heights.count, using: &random)
            let height = Double(Int.random(in: 0...80, using: &random)) / 2
            let delta = geometry.setHeight(height, ofRow: row, measured: true)
            XCTAssertEqual(delta, height - heights[row])
            heights[row] = height
            XCTAssertTrue(geometry.isMeasured(row))
            XCTAssertEqual(geometry.totalHeight, heights.reduce(0, +), "round \(round)")
            for probe in [0, 1, row, heights.count / 2, heights.count] {
                XCTAssertEqual(geometry.offset(ofRow: probe), naiveOffset(heights, probe), "offset of \(probe)")
            }
            for _ in 0..<5 {
                let y = Double.random(in: -10...(geometry.totalHeight + 10), using: &random).rounded()
                XCTAssertEqual(geometry.row(containing: y), naiveRow(heights, containing: y), "row at \(y)")
            }
        }
    }

    func testRowsOverlappingAnInterval() async {
        var geometry = RowGeometry()
        geometry.replaceAll(heights: [10, 10, 0, 10, 10], measured: Array(repeating: true, count: 5))
        XCTAssertEqual(geometry.rows(overlapping: 0, 10), 0...0)
        XCTAssertEqual(geometry.rows(overlapping: 5, 15), 0...1)
        XCTAssertEqual(geometry.rows(overlapping: 10, 30), 1...3, "the empty row between counts when inside")
        XCTAssertEqual(geometry.rows(overlapping: -100, 1000), 0...4)
        XCTAssertNil(geometry.rows(overlapping: 40, 50), "below the content")
        XCTAssertNil(geometry.rows(overlapping: -20, 0), "above the content")
        XCTAssertNil(RowGeometry().rows(overlapping: 0, 100))
    }

    func testMeasuredFlagsSurviveUntilMarkedUnmeasured() async {
        var geometry = RowGeometry()
        geometry.replaceAll(heights: Array(repeating: 10, count: 130), measured: (0..<130).map { $0 % 3 == 0 })
        XCTAssertEqual(geometry.measuredFlags.filter { $0 }.count, 44)
        XCTAssertTrue(geometry.isMeasured(129))
        geometry.markAllUnmeasured()
        XCTAssertFalse(geometry.measuredFlags.contains(true))
        XCTAssertEqual(geometry.totalHeight, 1300, "heights stay as estimates")
    }
}
