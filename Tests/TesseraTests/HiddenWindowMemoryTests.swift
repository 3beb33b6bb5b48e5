import Compositor
import Foundation
@testable import NodeRuntime
import XCTest
@testable import Tessera

/// Rows of text, each drawn into a bitmap of its own.
private final class TextRows: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 400 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { TextNode("Row \(row): a line of text that the list draws ahead of the scroll",
                   attributes: TextAttributes(font: .system(size: 15))) }
    }
}

/// A window out of sight (minimized, hidden) lets go of what it can rebuild, counted in bytes: its
/// renderer's textures, its lists' rows drawn ahead, the image and text layout caches. Shown again,
/// it shows the same frame.
@MainActor
final class HiddenWindowMemoryTests: XCTestCase {
    private func drawnAheadBytes(_ list: ListNode) -> Int {
        list.rowNodes.filter { $0.interfaceState.contains(.display) && !$0.interfaceState.contains(.visible) }
            .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
    }

    func testAHiddenWindowsTexturesRowsAheadAndCachesGoAndComeBackShownTheSame() async throws {
        try checkHidingAndShowing(threaded: false)
    }

    /// The same with a compositor thread: the textures go on that thread, and the statistics the UI
    /// thread reads say so without a frame drawn.
    func testOnACompositorThreadTheTexturesGoThere() async throws {
        try checkHidingAndShowing(threaded: true)
    }

    private func checkHidingAndShowing(threaded: Bool) throws {
        let list = ListNode()
        let rows = TextRows()
        list.dataSource = rows
        list.idleRangeDelay = nil
        var configuration = Application.Configuration.headless(size: Size(width: 320, height: 240))
        configuration.compositorThread = threaded
        let app = try Application(configuration: configuration, rootNode: list)
        try app.settle()
        list.setContentOffset(2000, animated: false)
        try app.settle()
        XCTAssertEqual(list.rangeMode, .full, "scrolled and visible: the full range is drawn")
        let before = try app.capture()
        let texturesBefore = app.compositor.liveTextureBytes
        let aheadBefore = drawnAheadBytes(list)
        XCTAssertGreaterThan(texturesBefore, 0)
        XCTAssertGreaterThan(aheadBefore, 0, "rows are drawn ahead of the scroll")
        XCTAssertGreaterThan(TextLayoutCache.shared.statistics.bytes, 0)
        let visibleBytes = list.rowNodes.filter { $0.interfaceState.contains(.visible) }
            .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
        // The process's caches empty only when no window is in sight: hosts of other tests may be.
        let anotherInSight = NodeHost.liveHosts.contains { $0.host !== app.host && $0.host?.isWindowVisible == true }
        let layoutBytes = TextLayoutCache.shared.statistics.bytes

        app.frame(events: [.windowVisibilityChanged(false)])
        try app.settle()
        XCTAssertFalse(app.host.isWindowVisible)
        let deadline = Date().addingTimeInterval(10)
        while app.compositor.liveTextureBytes > 0 && Date() < deadline { app.frame() }
        XCTAssertEqual(app.compositor.liveTextureBytes, 0, "the renderer's textures went")
        XCTAssertEqual(list.rangeMode, .minimum)
        XCTAssertLessThan(drawnAheadBytes(list), aheadBefore, "fewer rows drawn ahead")
        if anotherInSight {
            XCTAssertGreaterThanOrEqual(TextLayoutCache.shared.statistics.bytes, layoutBytes, "another window may use them")
        } else {
            XCTAssertEqual(TextLayoutCache.shared.statistics.bytes, 0)
            XCTAssertEqual(ImageCache.shared.byteCount, 0)
        }
        let visibleAfter = list.rowNodes.filter { $0.interfaceState.contains(.visible) }
            .compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
        XCTAssertEqual(visibleAfter, visibleBytes, "what is on screen keeps its bitmaps")

        app.frame(events: [.windowVisibilityChanged(true)])
        try app.settle()
        XCTAssertTrue(app.host.isWindowVisible)
        let after = try app.capture()
        XCTAssertEqual(after.pixels, before.pixels, "shown again, the same frame")
        XCTAssertGreaterThan(app.compositor.liveTextureBytes, 0, "uploaded again")
    }

    /// SDL's minimize and restore reach the host as `windowVisibilityChanged`.
    func testSDLsMinimizeAndRestoreAreTranslated() async throws {
        let window = try SDLWindow(.init(size: Size(width: 40, height: 30), headless: true))
        window.pushEvent(.input(.windowVisibilityChanged(true)))  // restored when not minimized: no change
        window.pushEvent(.input(.windowVisibilityChanged(false)))
        window.pushEvent(.input(.windowVisibilityChanged(false)))  // minimized twice: said once
        window.pushEvent(.input(.windowVisibilityChanged(true)))
        let events = window.pollEvents().compactMap { event -> Bool? in
            if case let .input(.windowVisibilityChanged(visible)) = event { return visible }
            return nil
        }
        XCTAssertEqual(events, [false, true])
    }
}

/// A screen pushed away lets go of its bitmaps: its list's rows, on screen and drawn ahead, are
/// released (counted in bytes); popped back, it draws them again.
@MainActor
final class PushedScreenMemoryTests: XCTestCase {
    private func drawnBytes(_ list: ListNode) -> Int {
        list.rowNodes.compactMap { $0.layerIfLoaded?.contents?.byteCount }.reduce(0, +)
    }

    func testAScreenPushedAwayReleasesItsRowsBitmaps() async throws {
        let list = ListNode()
        let rows = TextRows()
        list.dataSource = rows
        let navigation = NavigationController(rootController: NodeController(node: list))
        let app = try Application(configuration: .headless(size: Size(width: 320, height: 240)), rootController: navigation)
        try app.settle()
        list.setContentOffset(1500, animated: false)
        try app.settle()
        let shown = drawnBytes(list)
        XCTAssertGreaterThan(shown, 0)
        let liveBefore = Bitmap.liveByteCount

        let next = Node()
        next.backgroundColor = Color(rgb: 0x336699)
        navigation.push(NodeController(node: next), animated: false)
        try app.settle()
        XCTAssertEqual(drawnBytes(list), 0, "the pushed-away list keeps no row bitmap")
        XCTAssertTrue(list.rowNodes.allSatisfy { !$0.interfaceState.contains(.display) })
        XCTAssertLessThanOrEqual(Bitmap.liveByteCount, liveBefore - shown, "the process holds that many bytes fewer")

        navigation.popController(animated: false)
        try app.settle()
        XCTAssertGreaterThan(drawnBytes(list), 0, "back on screen, its rows are drawn again")
    }
}
