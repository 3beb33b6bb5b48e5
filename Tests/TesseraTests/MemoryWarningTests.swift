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

    /// Every row on screen has its bitmap.
    private func assertNothingBlank(_ list: ListNode, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        let visible = list.rowNodes.filter { $0.interfaceState.contains(.visible) }
        XCTAssertFalse(visible.isEmpty, message, file: file, line: line)
        for row in visible where row.layerIfLoaded?.contents == nil {
            XCTFail("\(message): a row on screen has no bitmap \(row.interfaceState) loaded=\(row.isNodeLoaded) \(row.frame) \(list.rowNodes.firstIndex(where: { $0 === row }) ?? -1)", file: file, line: line)
        }
    }

    /// The same steps twice, in two apps: with the warning at `level` between the steps' frames, and
    /// without; the captures of the frame after the warning and of the list at rest.
    private func captures(compositorThread: Bool = false, level: MemoryWarningLevel?, start: (ListNode) -> Void)
        throws -> (after: Bitmap, rowsDrawnAfter: Bool, atRest: Bitmap, list: ListNode, app: Application) {
        var configuration = Application.Configuration.headless(size: Size(width: 320, height: 240))
        configuration.compositorThread = compositorThread
        let list = ListNode()
        list.dataSource = rows
        list.idleRangeDelay = nil
        let app = try Application(configuration: configuration, rootNode: list)
        try app.settle()
        list.setContentOffset(2000, animated: false)
        try app.settle()
        start(list)
        for _ in 0..<3 { _ = app.frame() }
        if let level { NodeHost.releaseMemory(for: level) }
        _ = app.frame()
        let after = try app.capture()
        let onScreen = list.rowNodes.filter { $0.interfaceState.contains(.visible) }
        let drawn = !onScreen.isEmpty && onScreen.allSatisfy { $0.layerIfLoaded?.contents != nil }
        try app.settle()
        return (after, drawn, try app.capture(), list, app)
    }

    /// `midMotion`: the frame after the warning is compared too (where the motion runs on the frame
    /// clock alone), and its rows on screen must have their bitmaps (`rowsDrawn`; an update's crossfade
    /// shows the old row meanwhile).
    private func assertSameScreen(compositorThread: Bool = false, midMotion: Bool = true, rowsDrawn: Bool = true,
                                  _ start: (ListNode) -> Void,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        let plain = try captures(compositorThread: compositorThread, level: nil, start: start)
        defer { plain.app.host.setRootController(nil) }
        let warned = try captures(compositorThread: compositorThread, level: .critical, start: start)
        defer { warned.app.host.setRootController(nil) }
        if midMotion {
            XCTAssertTrue(warned.after.pixels == plain.after.pixels, "the frame after the warning shows what it shows without one",
                          file: file, line: line)
        }
        if rowsDrawn { XCTAssertTrue(warned.rowsDrawnAfter, "every row on screen drawn in the frame after the warning", file: file, line: line) }
        XCTAssertEqual(warned.list.contentOffset, plain.list.contentOffset, file: file, line: line)
        XCTAssertTrue(warned.atRest.pixels == plain.atRest.pixels, "at rest, the same screen", file: file, line: line)
        assertNothingBlank(warned.list, "at rest", file: file, line: line)
        // Scrolled again, the rows come back.
        warned.list.setContentOffset(warned.list.contentOffset - 700, animated: false)
        plain.list.setContentOffset(plain.list.contentOffset - 700, animated: false)
        try warned.app.settle()
        try plain.app.settle()
        XCTAssertTrue(try warned.app.capture().pixels == plain.app.capture().pixels, "scrolled again", file: file, line: line)
    }

    /// A warning in the middle of a fling: the screen is what it is without the warning, frame by frame
    /// and at rest.
    func testAWarningMidFlingLeavesTheScreenWhole() async throws {
        try assertSameScreen { $0.fling(velocity: 2_500) }
    }

    /// A warning in the middle of an animated scroll.
    func testAWarningMidAnimatedScrollLeavesTheScreenWhole() async throws {
        // The animation runs on the clock: only the end compares (rows it reaches are drawn as it goes,
        // with or without a warning).
        try assertSameScreen(midMotion: false, rowsDrawn: false) { $0.setContentOffset(2900, animated: true) }
    }

    /// A warning while an animated batch update runs (every row reloaded).
    func testAWarningDuringAnAnimatedBatchUpdateLeavesTheScreenWhole() async throws {
        try assertSameScreen(rowsDrawn: false) { $0.performBatchUpdates(ListUpdate(reloads: Array(0..<400)), animated: true) }
    }

    /// A list in a popup: narrowed like the window's own, and the screen stays the same.
    func testAListInAPopupIsNarrowedAndTheScreenStaysTheSame() async throws {
        let app = try Application(configuration: .headless(size: Size(width: 320, height: 240)), rootNode: Node())
        defer { app.host.setRootController(nil) }
        let list = ListNode()
        list.dataSource = rows
        list.idleRangeDelay = nil
        list.frame = Rect(x: 0, y: 0, width: 320, height: 240)
        let overlay = app.host.presentOverlay(list, kind: .popup)
        defer { overlay.dismiss() }
        try app.settle()
        list.setContentOffset(2000, animated: false)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .full)
        let ahead = drawnAheadBytes(list)
        XCTAssertGreaterThan(ahead, 0)
        let before = try app.capture()
        NodeHost.releaseMemory(for: .medium)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .minimum, "the popup's list is narrowed")
        XCTAssertLessThan(drawnAheadBytes(list), ahead / 2)
        assertNothingBlank(list, "in the popup")
        XCTAssertTrue(try app.capture().pixels == before.pixels, "the screen equals a synchronous render")
        list.setContentOffset(4000, animated: false)
        try app.settle()
        assertNothingBlank(list, "scrolled again")
    }

    /// A window composited on a thread of its own, mid-fling.
    func testAWarningWithACompositorThreadLeavesTheScreenWhole() async throws {
        // The thread draws the motion on its own clock: only the end compares.
        try assertSameScreen(compositorThread: true, midMotion: false) { $0.fling(velocity: 2_500) }
    }

    /// A second window with a scrolled list, closed (its list still held by the app): the warning
    /// passes it by without a trap, and the open window's list is narrowed with its screen unchanged.
    func testAClosedWindowIsPassedBy() async throws {
        let (app, list) = try makeScrolledList()
        defer { app.host.setRootController(nil) }
        let closedList = ListNode()
        closedList.dataSource = rows
        closedList.idleRangeDelay = nil
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 200, height: 160), scale: 1),
                                        rootController: NodeController(node: closedList))
        try app.settle()
        closedList.setContentOffset(1500, animated: false)
        try app.settle()
        second.close()
        try app.settle()
        let before = try app.capture()
        NodeHost.releaseMemory(for: .critical)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .minimum)
        XCTAssertTrue(try app.capture().pixels == before.pixels)
        XCTAssertEqual(app.windows.count, 1)
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
