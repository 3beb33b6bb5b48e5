import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// A row estimate that is no estimate (0, NaN) or not a height (negative, infinite): the list assumes
/// `defaultEstimatedRowHeight` until rows are measured, so it fills the viewport and scrolls; the
/// values that are not heights are reported once.
@MainActor
final class ListEstimateTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// 100 rows of 20 points in a 100-point viewport, with `listEstimate` on the list and
    /// `sourceEstimate` from the data source.
    private func makeHarness(listEstimate: Double, sourceEstimate: Double?) -> ListHarness {
        let source = TestListSource(count: 100, height: 20)
        source.estimate = sourceEstimate
        var harness = ListHarness(source: source) { $0.estimatedRowHeight = listEstimate }
        harness.settle()
        return harness
    }

    /// Every row overlapping the viewport has its node, measured, placed at its own offset.
    private func assertViewportFilled(_ harness: ListHarness, from first: Int, _ label: String,
                                      file: StaticString = #filePath, line: UInt = #line) {
        let list = harness.list
        XCTAssertEqual(list.visibleRows, first...(first + 4), label, file: file, line: line)
        for row in first...(first + 4) {
            XCTAssertNotNil(harness.rowNode(row), "\(label): row \(row) has a node", file: file, line: line)
            XCTAssertTrue(list.isRowMeasured(row), "\(label): row \(row) measured", file: file, line: line)
            XCTAssertEqual(harness.windowFrame(ofRow: row)?.minY, Double(row - first) * 20,
                           "\(label): row \(row) placed", file: file, line: line)
        }
    }

    func testNoEstimateFillsTheViewportAndScrolls() async throws {
        for estimate in [0.0, .nan] {
            var harness = makeHarness(listEstimate: estimate, sourceEstimate: nil)
            assertViewportFilled(harness, from: 0, "estimatedRowHeight \(estimate)")
            XCTAssertEqual(harness.list.frameOfRow(99).height, ListNode.defaultEstimatedRowHeight,
                           "a row far away is assumed the default height until measured")
            XCTAssertEqual(harness.list.diagnostics, [], "0 and NaN mean no estimate: nothing to report")
            // Scrolls: the wheel moves it, and the rows it reaches are made and placed.
            for _ in 0..<10 { _ = harness.list.scrollWheel(dx: 0, dy: -1) }
            harness.settle()
            let list = harness.list
            let visible = try XCTUnwrap(list.visibleRows)
            XCTAssertGreaterThan(visible.lowerBound, 10, "estimatedRowHeight \(estimate): scrolled down")
            for row in visible {
                XCTAssertNotNil(harness.rowNode(row), "row \(row)")
                XCTAssertEqual(harness.windowFrame(ofRow: row)?.minY, list.frameOfRow(row).minY - list.contentOffset, "row \(row)")
            }
            harness.list.scroll(to: 50, at: .top, animated: false)
            harness.settle()
            assertViewportFilled(harness, from: 50, "estimatedRowHeight \(estimate), scrolled")
        }
    }

    func testTheDataSourcesNoEstimateFallsBackToTheListsEstimate() async {
        for estimate in [0.0, .nan] {
            let harness = makeHarness(listEstimate: 30, sourceEstimate: estimate)
            assertViewportFilled(harness, from: 0, "data source \(estimate)")
            XCTAssertEqual(harness.list.frameOfRow(99).height, 30)
        }
    }

    func testAnEstimateThatIsNotAHeightIsNoEstimateAndIsReportedOnce() async {
        for estimate in [-20.0, .infinity, -.infinity] {
            let harness = makeHarness(listEstimate: estimate, sourceEstimate: nil)
            assertViewportFilled(harness, from: 0, "estimatedRowHeight \(estimate)")
            XCTAssertEqual(harness.list.diagnostics.map(\.kind), [.invalidProperty])
            XCTAssertEqual(harness.list.diagnostics.first?.message,
                           "estimatedRowHeight is \(estimate), not a height; rows without an estimate are assumed 44.0 points tall until measured")
        }
        let fromSource = makeHarness(listEstimate: 25, sourceEstimate: -1)
        assertViewportFilled(fromSource, from: 0, "data source −1")
        XCTAssertEqual(fromSource.list.diagnostics.map(\.message),
                       ["the data source's estimated height for row 0 is -1.0, not a height; rows without an estimate are assumed 25.0 points tall until measured"],
                       "one report for the list, not one per row")
    }
}
