import Compositor
import Foundation
@testable import NodeRuntime
import XCTest
@testable import Tessera

/// Rows of text, each drawn into a bitmap of its own.
private final class WarningRows: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 400 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { TextNode("Row \(row): a line of text drawn ahead of the scroll", attributes: TextAttributes(font: .system(size: 15))) }
    }
}

/// The system short of memory (the desktop's memory monitor warns): the caches go at every level,
/// the rows drawn ahead of the scroll at `medium` and above, and the screen stays the same; scrolling
/// again draws ahead again.
@MainActor
final class MemoryWarningTests: XCTestCase {
    private func drawnAheadBytes(_ list: ListNode) -> Int {
        list.rowNodes.filter { $0.interfaceState.contains(.display) && !$0.interfaceState.contains(.visible) }
            .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
    }

    /// The list's data source (a list holds it weakly).
    private let rows = WarningRows()

    private func makeScrolledList() throws -> (Application, ListNode) {
        let list = ListNode()
        list.dataSource = rows
        list.idleRangeDelay = nil
        let app = try Application(configuration: .headless(size: Size(width: 320, height: 240)), rootNode: list)
        try app.settle()
        list.setContentOffset(2000, animated: false)
        try app.settle()
        return (app, list)
    }

    func testTheLevelsSayWhatTheyLetGoAndTheScreenStaysTheSame() async throws {
        let (app, list) = try makeScrolledList()
        defer { app.host.setRootController(nil) }
        XCTAssertEqual(list.rangeMode, .full)
        let before = try app.capture()
        let ahead = drawnAheadBytes(list)
        XCTAssertGreaterThan(ahead, 0, "rows are drawn ahead of the scroll")
        XCTAssertGreaterThan(TextLayoutCache.shared.statistics.bytes, 0)

        NodeHost.releaseMemory(for: .low)
        XCTAssertEqual(TextLayoutCache.shared.statistics.bytes, 0, "low: the caches go")
        XCTAssertEqual(ImageCache.shared.byteCount, 0)
        XCTAssertEqual(list.rangeMode, .full, "low: the rows drawn ahead stay")
        XCTAssertEqual(drawnAheadBytes(list), ahead)

        NodeHost.releaseMemory(for: .medium)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .minimum, "medium: the minimum range until the next scroll")
        XCTAssertLessThan(drawnAheadBytes(list), ahead / 2, "the rows drawn ahead let their bitmaps go")
        let after = try app.capture()
        XCTAssertEqual(after.pixels, before.pixels, "the screen is the same")

        list.setContentOffset(2040, animated: false)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .full, "scrolled again: the full range")
        XCTAssertGreaterThan(drawnAheadBytes(list), ahead / 2)
    }

    func testThePortalsByteGivesTheLevel() {
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 0), .low)
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 50), .low)
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 99), .low)
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 100), .medium)
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 254), .medium)
        XCTAssertEqual(MemoryWarningLevel(portalLevel: 255), .critical)
    }
}
