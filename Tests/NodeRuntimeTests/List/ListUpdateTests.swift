import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Batch updates, anchoring, estimated heights and stack-from-bottom lists.
@MainActor
final class ListUpdateTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    /// The window frames of the rows on screen, by identity.
    private func visibleFrames(_ harness: ListHarness) -> [Int: Rect] {
        var frames: [Int: Rect] = [:]
        guard let visible = harness.list.visibleRows else { return frames }
        for row in visible {
            if let frame = harness.windowFrame(ofRow: row), let node = harness.rowNode(row) { frames[node.identity] = frame }
        }
        return frames
    }

    /// Row nodes handed to another thread, which only resizes them.
    private struct ResizableRows: @unchecked Sendable { let nodes: [ResizableRowNode] }

    /// A row that changes size from any thread: its height under a lock, `setNeedsLayout` on change.
    final class ResizableRowNode: Node, @unchecked Sendable {
        private let height: Locked<Double>
        init(height: Double) {
            self.height = Locked(height)
            super.init()
        }
        func resize(to newHeight: Double) {
            height.withLock { $0 = newHeight }
            setNeedsLayout()
        }
        override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
            Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0, height: height.withLock { $0 })
        }
    }

    /// A row whose contents change size (`setNeedsLayout` on any node of it, from any thread) is
    /// measured again in the background and takes its new height; rows below move, the first
    /// visible row stays where it is on screen, and a settled list measures nothing more.
    func testARowThatChangesSizeIsMeasuredAgainAndTheAnchorStays() async throws {
        let source = TestListSource(count: 100, height: 20)
        source.makeNode = { _, height in ResizableRowNode(height: height) }
        var harness = ListHarness(source: source)
        harness.settle()
        harness.list.setContentOffset(1000, animated: false)
        harness.settle()
        let firstVisible = try XCTUnwrap(harness.windowFrame(ofRow: 50))
        let below = try XCTUnwrap(harness.windowFrame(ofRow: 53))
        let before = harness.list.statistics.rowsRemeasured
        let above = try XCTUnwrap(harness.list.nodeForRow(48) as? ResizableRowNode)
        let visible = try XCTUnwrap(harness.list.nodeForRow(52) as? ResizableRowNode)
        // Off the UI thread, as a model update would.
        let nodes = ResizableRows(nodes: [above, visible])
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            nodes.nodes[0].resize(to: 40)
            nodes.nodes[1].resize(to: 60)
            done.signal()
        }
        done.wait()
        harness.settle()
        // The rows below the grown row slide there (ListRowHeightTests); a quarter second later they are.
        for _ in 0..<20 { harness.frame() }
        XCTAssertEqual(harness.list.frameOfRow(48).height, 40)
        XCTAssertEqual(harness.list.frameOfRow(52).height, 60)
        XCTAssertEqual(harness.windowFrame(ofRow: 50), firstVisible, "the first visible row stays put")
        XCTAssertEqual(harness.windowFrame(ofRow: 53)?.minY, below.minY + 40, "rows below the grown row move down")
        XCTAssertEqual(harness.list.statistics.rowsRemeasured, before + 2)
        for _ in 0..<10 { harness.frame() }
        XCTAssertEqual(harness.list.statistics.rowsRemeasured, before + 2, "a settled list measures nothing again")
    }

    func testInsertingAboveTheViewportDoesNotMoveVisibleRows() async {
        var harness = ListHarness(source: TestListSource(count: 100, height: 20))
        harness.settle()
        harness.list.setContentOffset(1000, animated: false)
        harness.settle()
        let before = visibleFrames(harness)
        XCTAssertEqual(before.keys.sorted(), Array(50...54))

        // Five rows far above, one just above the viewport, estimated at 10 points but 30 tall.
        harness.source.estimate = 10
        for index in 0..<5 { harness.source.insert(1000 + index, height: 30, at: 10) }
        harness.source.insert(2000, height: 30, at: 54)
        harness.list.insertRows(Array(10..<15) + [54])
        XCTAssertEqual(harness.list.contentOffset, 1000 + 6 * 10, "the offset grows by the estimates above")
        harness.frame()
        XCTAssertEqual(visibleFrames(harness), before)
        harness.settle()
        XCTAssertTrue(harness.list.isRowMeasured(54), "the row above the viewport got measured")
        XCTAssertEqual(visibleFrames(harness), before, "…and its real height moved nothing on screen")
        XCTAssertEqual(harness.list.statistics.heightCorrections, 1)
    }

    func testAnchoringOnTheContentOffsetLetsRowsMove() async {
        var harness = ListHarness(source: TestListSource(count: 100, height: 20))
        harness.settle()
        harness.list.setContentOffset(1000, animated: false)
        harness.settle()
        harness.source.insert(1000, height: 20, at: 10)
        harness.list.insertRows([10], anchor: .contentOffset)
        harness.settle()
        XCTAssertEqual(harness.list.contentOffset, 1000)
        XCTAssertEqual(harness.rowNode(50)?.identity, 49, "the rows on screen moved down by one")
    }

    func testMeasuredHeightsKeepTheFirstVisibleRowInPlace() async {
        // Estimated at 10, really 30: scrolling up through unmeasured rows must not make them jump.
        let source = TestListSource(count: 200, height: 30, estimate: 10)
        var harness = ListHarness(source: source)
        harness.list.scroll(to: 150, at: .top, animated: false)
        harness.settle()
        XCTAssertEqual(harness.windowFrame(ofRow: 150)?.minY, 0, "the target row stays at the top as heights arrive")
        for _ in 0..<10 {
            let anchorRow = harness.list.visibleRows!.lowerBound
            let anchorY = harness.windowFrame(ofRow: anchorRow)?.minY
            XCTAssertTrue(harness.list.scrollWheel(dx: 0, dy: 1))
            harness.frame()
            let movedTo = harness.windowFrame(ofRow: anchorRow)?.minY
            harness.host.runtime.scheduler.waitUntilIdle()
            harness.frame()
            XCTAssertEqual(harness.windowFrame(ofRow: anchorRow)?.minY, movedTo, "row \(anchorRow) did not jump")
            XCTAssertEqual(movedTo.map { $0 - (anchorY ?? 0) }, 48, "one wheel step")
        }
    }

    func testScrollToAnUnmeasuredRowHoldsItInPlace() async {
        for position in ListScrollPosition.allCases {
            var harness = ListHarness(source: TestListSource(count: 1_000, height: 30, estimate: 10))
            harness.list.scroll(to: 500, at: position, animated: false)
            harness.settle()
            let frame = harness.windowFrame(ofRow: 500)
            switch position {
            case .top: XCTAssertEqual(frame?.minY, 0, "\(position)")
            case .center: XCTAssertEqual(frame?.midY, 50, "\(position)")
            case .bottom, .visible: XCTAssertEqual(frame?.maxY, 100, "\(position): the least movement from above")
            }
        }
    }

    func testAnimatedScrollReachesAnUnmeasuredRow() async {
        var harness = ListHarness(source: TestListSource(count: 1_000, height: 30, estimate: 10))
        harness.settle()
        harness.list.scroll(to: 300, at: .top, animated: true)
        for _ in 0..<40 {
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
        }
        harness.settle()
        XCTAssertFalse(harness.list.isScrolling)
        XCTAssertEqual(harness.windowFrame(ofRow: 300)?.minY, 0)
    }

    func testABatchOfDeletesInsertsMovesAndReloadsLandsWhereTheDataSaysSo() async {
        var harness = ListHarness(source: TestListSource(count: 10, height: 20))
        harness.settle()
        let reloadedBefore = harness.rowNode(4)
        // Before: 0 1 2 3 4 5 6 7 8 9. Delete 1 and 3, move 0 to the end, reload 4, insert 100 at 2.
        let source = harness.source
        source.identities = [2, 100, 4, 5, 6, 7, 8, 9, 0]
        source.heights = Array(repeating: 20, count: 9)
        harness.list.performBatchUpdates(ListUpdate(deletions: [1, 3], insertions: [1], reloads: [4],
                                                    moves: [.init(from: 0, to: 8)]))
        XCTAssertEqual(harness.list.numberOfRows, 9)
        XCTAssertTrue(harness.rowNode(2) === reloadedBefore, "the reloaded row shows its old node until the new one is ready")
        harness.settle()
        let shown = (0..<9).compactMap { harness.rowNode($0)?.identity }
        XCTAssertEqual(shown, [2, 100, 4, 5, 6, 7, 8, 9, 0])
        XCTAssertFalse(harness.rowNode(2) === reloadedBefore, "the reload made a new node")
        XCTAssertNil(reloadedBefore?.layerIfLoaded?.superlayer, "and the old one left the list")
        for row in 0..<5 { XCTAssertEqual(harness.windowFrame(ofRow: row)?.minY, Double(row) * 20, "row \(row)") }
    }

    func testAnimatedUpdatesSlideFadeAndSettle() async {
        var harness = ListHarness(source: TestListSource(count: 10, height: 20))
        harness.settle()
        harness.source.remove(at: 1)
        harness.list.deleteRows([1], animated: true)
        // Row 2 (now 1) starts where it was and slides up; the deleted row fades where it was.
        harness.frame(advance: 0)
        XCTAssertEqual(harness.windowFrame(ofRow: 1)?.minY, 40)
        XCTAssertEqual(harness.list.disappearingRows.count, 1)
        harness.frame(advance: 0.1)
        let midway = harness.windowFrame(ofRow: 1)?.minY ?? 0
        XCTAssertTrue(midway > 20 && midway < 40, "sliding: \(midway)")
        XCTAssertLessThan(harness.list.disappearingRows.first?.node.opacity ?? 1, 1)
        harness.frame(advance: 0.2)
        XCTAssertEqual(harness.windowFrame(ofRow: 1)?.minY, 20)
        XCTAssertTrue(harness.list.disappearingRows.isEmpty)

        harness.source.insert(50, height: 20, at: 0)
        harness.list.insertRows([0], anchor: .contentOffset, animated: true)
        harness.frame(advance: 0)
        harness.host.runtime.scheduler.waitUntilIdle()
        harness.frame(advance: 0.05)
        XCTAssertLessThan(harness.list.nodeForRow(0)?.opacity ?? 1, 1, "the inserted row fades in")
        harness.frame(advance: 0.3)
        XCTAssertEqual(harness.list.nodeForRow(0)?.opacity, 1)
    }

    func testANewWidthMeasuresTheRowsAgainAndKeepsTheFirstVisibleRow() async {
        /// A row whose height depends on its width, like wrapped text: 2,000 square points.
        final class WrappingRow: Node, NodeDrawing, @unchecked Sendable {
            override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
                Size(width: constrainedSize.width, height: (2000 / max(1, constrainedSize.width)).rounded())
            }
            func drawParameters() -> Color { .white }
            static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
                context.fill(info.bounds, color: color)
            }
        }
        let source = TestListSource(count: 200, height: 20)
        source.makeNode = { _, _ in WrappingRow() }
        var harness = ListHarness(source: source)
        harness.settle()
        harness.list.setContentOffset(1000, animated: false)  // row 50 at the top
        harness.settle()
        let before = harness.list.nodeForRow(50)

        // Workers held: the new width's rows cannot arrive in the same frame.
        let scheduler = harness.host.runtime.scheduler
        let gates = (0..<scheduler.workerCount).map { _ in Gate() }
        for gate in gates {
            scheduler.schedule(priority: .visible) { _ in gate.pass(); return .completed }
            gate.waitUntilEntered()
        }
        harness.list.frame = Rect(x: 0, y: 0, width: 50, height: 100)
        harness.frame()
        XCTAssertFalse(harness.list.isRowMeasured(50), "every height is an estimate again")
        XCTAssertNotNil(before?.layerIfLoaded?.superlayer, "the old node shows until the new one is ready")
        XCTAssertEqual(harness.host.lastFrame.checkerboardArea, 0)

        gates.forEach { $0.open() }
        harness.settle()
        XCTAssertFalse(harness.list.nodeForRow(50) === before, "a new node at the new width")
        XCTAssertEqual(harness.list.frameOfRow(50).height, 40)
        XCTAssertEqual(harness.list.nodeForRow(50)?.layerIfLoaded?.frameInRoot.minY, 0, "row 50 stays at the top")
        XCTAssertNil(before?.layerIfLoaded?.superlayer, "and the old node left")
    }

    // MARK: Stack from bottom

    func testShortContentStacksFromTheBottom() async {
        var harness = ListHarness(source: TestListSource(count: 3, height: 20)) { $0.stacksFromBottom = true }
        harness.settle()
        XCTAssertEqual(harness.list.contentOffset, -40)
        XCTAssertEqual((0..<3).map { harness.windowFrame(ofRow: $0)?.minY }, [40, 60, 80])
        // A new message at the bottom pushes the others up.
        harness.source.insert(3, height: 20, at: 3)
        harness.list.insertRows([3])
        harness.settle()
        XCTAssertEqual((0..<4).map { harness.windowFrame(ofRow: $0)?.minY }, [20, 40, 60, 80])
    }

    func testANewRowAtTheBottomKeepsAPinnedListPinned() async {
        // Estimated 10, really 30: the list stays pinned as the real heights arrive.
        let source = TestListSource(count: 50, height: 30, estimate: 10)
        var harness = ListHarness(source: source) { $0.stacksFromBottom = true }
        harness.settle()
        XCTAssertEqual(harness.windowFrame(ofRow: 49)?.maxY, 100, "opens at the end")
        for message in 0..<3 {
            source.insert(100 + message, height: 30, at: source.identities.count)
            harness.list.insertRows([source.identities.count - 1])
            harness.settle()
            XCTAssertEqual(harness.windowFrame(ofRow: source.identities.count - 1)?.maxY, 100, "pinned after message \(message)")
        }
        // Animated: the list eases to the new end.
        source.insert(200, height: 30, at: source.identities.count)
        harness.list.insertRows([source.identities.count - 1], animated: true)
        harness.frame()
        XCTAssertTrue(harness.list.isScrolling)
        for _ in 0..<30 {
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
        }
        harness.settle()
        XCTAssertEqual(harness.windowFrame(ofRow: source.identities.count - 1)?.maxY, 100)
    }

    func testANewRowAtTheBottomLeavesAListScrolledUpAlone() async {
        let source = TestListSource(count: 50, height: 20)
        var harness = ListHarness(source: source) { $0.stacksFromBottom = true }
        harness.settle()
        harness.list.setContentOffset(500, animated: false)
        harness.settle()
        let before = visibleFrames(harness)
        source.insert(100, height: 20, at: 50)
        harness.list.insertRows([50])
        harness.settle()
        XCTAssertEqual(harness.list.contentOffset, 500)
        XCTAssertEqual(visibleFrames(harness), before)
    }
}
