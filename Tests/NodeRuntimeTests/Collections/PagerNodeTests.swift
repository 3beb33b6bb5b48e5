import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Pages of one colour each, from a count the test sets.
@MainActor
private final class PageSource: ListDataSource {
    var count: Int
    private(set) var made = 0
    init(count: Int) { self.count = count }

    nonisolated static func color(_ page: Int) -> Color { TestItemNode.color(page) }

    func numberOfRows(in list: ListNode) -> Int { count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        made += 1
        return {
            let page = Node()
            page.backgroundColor = PageSource.color(row)
            return page
        }
    }
}

/// A pager: pages fill it, a release rests on a page, the wheel and keys turn pages, and only the
/// pages near the current one exist.
@MainActor
final class PagerNodeTests: XCTestCase {
    private var time = 0.0

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func argb(_ color: Color) -> UInt32 {
        0xFF00_0000 | UInt32(color.red) << 16 | UInt32(color.green) << 8 | UInt32(color.blue)
    }

    private func makePager(pages: Int, size: Size = Size(width: 200, height: 150)) throws -> (NodeHost, PagerNode, PageSource) {
        let (host, _) = try OffscreenRender.makeHost(size: size, configuration: .init(clearColor: Color(rgb: 0)))
        let pager = PagerNode()
        let source = PageSource(count: pages)
        host.setRootNode(pager)
        pager.dataSource = source
        try rest(host)
        return (host, pager, source)
    }

    private func frame(_ host: NodeHost, _ events: [InputEvent] = []) {
        time = max(time, host.time) + 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    private func rest(_ host: NodeHost) throws {
        try host.settle(timeout: 10)
        time = host.time
    }

    private func dragLeft(_ host: NodeHost, by distance: Double, pause: Bool = true) {
        frame(host, [.pointerDown(Point(x: 150, y: 75), button: 1, clicks: 1)])
        var x = 150.0
        while x > 150 - distance {
            x -= 10
            frame(host, [.pointerMoved(Point(x: x, y: 75))])
        }
        if pause { for _ in 0..<12 { frame(host, [.pointerMoved(Point(x: x, y: 75))]) } }
        frame(host, [.pointerUp(Point(x: x, y: 75), button: 1)])
    }

    /// Which page fills the screen, read from its pixels (both edges must agree).
    private func pageOnScreen(_ host: NodeHost, pages: Int) throws -> Int? {
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        let left = pixels.pixel(x: 1, y: 75), right = pixels.pixel(x: 198, y: 75)
        return (0..<pages).first { argb(PageSource.color($0)) == left && argb(PageSource.color($0)) == right }
    }

    func testPagesFillThePagerAndAReleaseRestsOnAPage() async throws {
        let (host, pager, source) = try makePager(pages: 5)
        defer { withExtendedLifetime(source) {} }  // the list holds its data source weakly
        defer { host.setRootNode(nil) }
        XCTAssertEqual(pager.pageCount, 5)
        XCTAssertEqual(pager.frameOfRow(1), Rect(x: 200, y: 0, width: 200, height: 150))
        XCTAssertEqual(try pageOnScreen(host, pages: 5), 0)
        // A slow drag under half a page springs back.
        dragLeft(host, by: 70)
        try rest(host)
        XCTAssertEqual(pager.contentOffset, 0)
        // Past half a page it turns.
        dragLeft(host, by: 130)
        try rest(host)
        XCTAssertEqual(pager.contentOffset, 200)
        XCTAssertEqual(pager.currentPage, 1)
        XCTAssertEqual(try pageOnScreen(host, pages: 5), 1)
        // A quick flick turns it however short.
        dragLeft(host, by: 30, pause: false)
        try rest(host)
        XCTAssertEqual(pager.currentPage, 2)
        XCTAssertEqual(pager.contentOffset, 400)
        XCTAssertEqual(try pageOnScreen(host, pages: 5), 2)
    }

    func testTheWheelAndTheKeysTurnOnePageAndStopAtTheEnds() async throws {
        let (host, pager, source) = try makePager(pages: 4)
        defer { withExtendedLifetime(source) {} }  // the list holds its data source weakly
        defer { host.setRootNode(nil) }
        frame(host, [.pointerMoved(Point(x: 100, y: 75)), .wheel(dx: 0, dy: -1)])
        try rest(host)
        XCTAssertEqual(pager.currentPage, 1)
        XCTAssertTrue(pager.handleKey(.right))
        XCTAssertTrue(pager.handleKey(.right), "a second key goes on from where the first is heading")
        try rest(host)
        XCTAssertEqual(pager.contentOffset, 600)
        XCTAssertEqual(try pageOnScreen(host, pages: 4), 3)
        XCTAssertTrue(pager.handleKey(.right))
        try rest(host)
        XCTAssertEqual(pager.currentPage, 3, "no page after the last")
        XCTAssertTrue(pager.handleKey(.left))
        try rest(host)
        XCTAssertEqual(pager.currentPage, 2)
        XCTAssertTrue(pager.handleKey(.home))
        try rest(host)
        XCTAssertEqual(pager.contentOffset, 0)
        pager.scrollToPage(99, animated: false)
        try rest(host)
        XCTAssertEqual(pager.currentPage, 3, "clamped to the last page")
        XCTAssertEqual(try pageOnScreen(host, pages: 4), 3)
    }

    func testOnlyPagesNearTheCurrentOneExistAndANewSizeRefitsThem() async throws {
        let (host, pager, source) = try makePager(pages: 10_000)
        defer { host.setRootNode(nil) }
        pager.scrollToPage(5_000, animated: false)
        try rest(host)
        XCTAssertEqual(pager.currentPage, 5_000)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 1, y: 75), argb(PageSource.color(5_000)))
        XCTAssertEqual(pixels.pixel(x: 198, y: 75), argb(PageSource.color(5_000)))
        XCTAssertNotNil(pager.nodeForPage(5_000))
        XCTAssertNil(pager.nodeForPage(0), "pages far behind are released")
        XCTAssertLessThan(pager.statistics.liveRows, 12)
        XCTAssertLessThan(source.made, 30)
        // A wider pager: pages measured again at its width, the current page still on screen.
        pager.frame = Rect(x: 0, y: 0, width: 160, height: 150)
        try rest(host)
        XCTAssertEqual(pager.frameOfRow(5_000).width, 160)
        XCTAssertEqual(pager.contentOffset, pager.frameOfRow(5_000).minX)
    }
}
