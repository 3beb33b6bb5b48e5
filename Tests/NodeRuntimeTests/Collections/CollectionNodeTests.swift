import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// An item that fills itself with a colour from its identity and is `length` points along the axis.
final class TestItemNode: Node, @unchecked Sendable {
    let identity: Int

    static func color(_ identity: Int) -> Color {
        Color(red: UInt8(identity * 37 % 250 + 3), green: UInt8(identity * 91 % 250 + 3), blue: UInt8(200 - identity % 7))
    }

    init(identity: Int, length: Double, horizontal: Bool) {
        self.identity = identity
        super.init()
        backgroundColor = Self.color(identity)
        if horizontal {
            style.width = .points(length)
        } else {
            style.height = .points(length)
        }
    }
}

/// A data source over an array of item lengths the test edits.
@MainActor
final class TestCollectionSource: CollectionDataSource {
    var identities: [Int]
    var lengths: [Double]
    var horizontal = false
    /// Replaces the default item node (a drawn one, for tests that count bitmaps).
    var makeNode: (@Sendable (_ identity: Int, _ length: Double) -> Node)?
    private(set) var requestedItems: [Int] = []

    init(count: Int, length: Double = 40) {
        identities = Array(0..<count)
        lengths = Array(repeating: length, count: count)
    }

    func numberOfItems(in collection: CollectionNode) -> Int { identities.count }

    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock {
        requestedItems.append(item)
        let identity = identities[item], length = lengths[item], horizontal = horizontal
        if let makeNode { return { makeNode(identity, length) } }
        return { TestItemNode(identity: identity, length: length, horizontal: horizontal) }
    }
}

/// A layout of the kind an app writes itself: lines alternate between one wide item (80 points
/// long) and two items side by side (40 points long), in constant time per line.
struct MosaicLayout: CollectionLayout {
    /// Items before `line`: three every two lines.
    private func firstItem(ofLine line: Int) -> Int { (line / 2) * 3 + (line % 2) }

    func lineCount(forItemCount itemCount: Int, crossExtent: Double) -> Int {
        let pairs = itemCount / 3, rest = itemCount % 3
        return pairs * 2 + (rest == 0 ? 0 : rest == 1 ? 1 : 2)
    }

    func items(inLine line: Int, itemCount: Int, crossExtent: Double) -> Range<Int> {
        let start = firstItem(ofLine: line)
        return start..<min(itemCount, start + (line % 2 == 0 ? 1 : 2))
    }

    func line(containingItem item: Int, itemCount: Int, crossExtent: Double) -> Int {
        (item / 3) * 2 + (item % 3 == 0 ? 0 : 1)
    }

    func estimatedLength(ofLine line: Int, crossExtent: Double) -> Double? { line % 2 == 0 ? 80 : 40 }

    func arrangeLine(_ line: Int, items: Range<Int>, crossExtent: Double,
                     measure: (Int, SizeRange) -> Size) -> CollectionLineArrangement {
        if line % 2 == 0 {
            return CollectionLineArrangement(frames: [Rect(x: 0, y: 0, width: crossExtent, height: 80)], length: 80)
        }
        let half = (crossExtent / 2).rounded()
        let frames = items.enumerated().map { index, _ in
            Rect(x: index == 0 ? 0 : half, y: 0, width: index == 0 ? half : crossExtent - half, height: 40)
        }
        return CollectionLineArrangement(frames: frames, length: 40)
    }
}

/// Grids, horizontal strips and custom layouts: where items land on screen, how lines follow the
/// ranges, what updates keep still, and that memory follows the viewport, not the item count.
@MainActor
final class CollectionNodeTests: XCTestCase {
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

    private func makeCollection(size: Size = Size(width: 300, height: 200), source: TestCollectionSource,
                                configure: (CollectionNode) -> Void) throws -> (NodeHost, CollectionNode) {
        let (host, _) = try OffscreenRender.makeHost(size: size, configuration: .init(clearColor: Color(rgb: 0)))
        let collection = CollectionNode()
        configure(collection)
        host.setRootNode(collection)
        collection.dataSource = source
        try host.settle(timeout: 10)
        time = host.time
        return (host, collection)
    }

    private func frame(_ host: NodeHost, _ events: [InputEvent] = []) {
        time = max(time, host.time) + 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    private func rest(_ host: NodeHost) throws {
        try host.settle(timeout: 10)
        time = host.time
    }

    func testAGridPlacesItemsInColumnsLineByLine() async throws {
        let source = TestCollectionSource(count: 100, length: 40)
        let (host, collection) = try makeCollection(source: source) {
            $0.collectionLayout = GridLayout(columns: .fixed(3))
        }
        defer { host.setRootNode(nil) }
        XCTAssertEqual(collection.list.numberOfRows, 34, "100 items in 3 columns")
        XCTAssertEqual(collection.frameOfItem(4), Rect(x: 100, y: 40, width: 100, height: 40))
        XCTAssertEqual(collection.visibleItems, 0..<15, "five lines of three fill 200 points")
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        for item in 0..<15 {
            let x = (item % 3) * 100 + 50, y = (item / 3) * 40 + 20
            XCTAssertEqual(pixels.pixel(x: x, y: y), argb(TestItemNode.color(item)), "item \(item) at (\(x), \(y))")
        }
        // Items far below have no nodes: only lines near the viewport are made.
        XCTAssertNotNil(collection.nodeForItem(0))
        XCTAssertNil(collection.nodeForItem(99))
        XCTAssertLessThan(source.requestedItems.count, 100)
    }

    func testAdaptiveColumnsFollowTheWidthAndSpacingLeavesGaps() async throws {
        let layout = GridLayout(columns: .adaptive(minimum: 90), spacing: 10, lineSpacing: 10)
        XCTAssertEqual(layout.columnCount(crossExtent: 300), 3)
        XCTAssertEqual(layout.columnCount(crossExtent: 189), 1)
        XCTAssertEqual(layout.columnCount(crossExtent: 190), 2)
        XCTAssertEqual(GridLayout(columns: .adaptive(minimum: .nan)).columnCount(crossExtent: 300), 1, "fallback: one column")
        XCTAssertEqual(GridLayout(columns: .fixed(0)).columnCount(crossExtent: 300), 1, "fallback: one column")
        let source = TestCollectionSource(count: 30, length: 40)
        let (host, collection) = try makeCollection(size: Size(width: 300, height: 200), source: source) {
            $0.collectionLayout = layout
        }
        defer { host.setRootNode(nil) }
        // (300 + 10) / 3 = 103⅓ a column: edges at 0, 103, 207; the last column ends at 300.
        XCTAssertEqual(collection.frameOfItem(0), Rect(x: 0, y: 0, width: 93, height: 40))
        XCTAssertEqual(collection.frameOfItem(2), Rect(x: 207, y: 0, width: 93, height: 40))
        XCTAssertEqual(collection.frameOfItem(3), Rect(x: 0, y: 50, width: 93, height: 40))
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 98, y: 20), 0xFF00_0000, "the gap between columns is empty")
        XCTAssertEqual(pixels.pixel(x: 50, y: 45), 0xFF00_0000, "the gap between lines is empty")
        XCTAssertEqual(pixels.pixel(x: 150, y: 70), argb(TestItemNode.color(4)))
    }

    func testALineIsAsLongAsItsLongestItem() async throws {
        let source = TestCollectionSource(count: 12, length: 30)
        source.lengths[1] = 70
        let (host, collection) = try makeCollection(source: source) {
            $0.collectionLayout = GridLayout(columns: .fixed(3))
        }
        defer { host.setRootNode(nil) }
        XCTAssertEqual(collection.list.frameOfRow(0).height, 70)
        XCTAssertEqual(collection.frameOfItem(3)?.minY, 70)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 50, y: 50), 0xFF00_0000, "below the short item 0, within its line")
        XCTAssertEqual(pixels.pixel(x: 150, y: 60), argb(TestItemNode.color(1)))
        XCTAssertEqual(pixels.pixel(x: 50, y: 80), argb(TestItemNode.color(3)))
    }

    func testAHorizontalCollectionLaysColumnsAndScrollsByTheWheel() async throws {
        let source = TestCollectionSource(count: 40, length: 50)
        source.horizontal = true
        let (host, collection) = try makeCollection(size: Size(width: 300, height: 200), source: source) {
            $0.scrollDirection = .horizontal
            $0.collectionLayout = GridLayout(columns: .fixed(2))
        }
        defer { host.setRootNode(nil) }
        // Two rows of 100 points; lines are columns 50 points wide.
        XCTAssertEqual(collection.list.numberOfRows, 20)
        XCTAssertEqual(collection.frameOfItem(3), Rect(x: 50, y: 100, width: 50, height: 100))
        var pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 25, y: 50), argb(TestItemNode.color(0)))
        XCTAssertEqual(pixels.pixel(x: 25, y: 150), argb(TestItemNode.color(1)))
        XCTAssertEqual(pixels.pixel(x: 275, y: 150), argb(TestItemNode.color(11)))
        // The vertical wheel scrolls a horizontal collection along its axis: one step is 48 points.
        frame(host, [.pointerMoved(Point(x: 150, y: 100)), .wheel(dx: 0, dy: -1)])
        XCTAssertEqual(collection.list.contentOffset, 48)
        try rest(host)
        XCTAssertEqual(collection.list.contentOffset, 48, accuracy: 30, "the wheel's glide is short")
        let offset = collection.list.contentOffset
        pixels = try XCTUnwrap(OffscreenRender.capture(host))
        // The column under screen x 10 is the one at content x (offset + 10).
        let column = Int((offset + 10) / 50)
        XCTAssertEqual(pixels.pixel(x: 10, y: 50), argb(TestItemNode.color(column * 2)))
        XCTAssertEqual(pixels.pixel(x: 10, y: 150), argb(TestItemNode.color(column * 2 + 1)))
        // The horizontal wheel motion goes first when there is one; to the end, and it stops there.
        for _ in 0..<40 { frame(host, [.wheel(dx: 1, dy: 0)]) }
        try rest(host)
        XCTAssertEqual(collection.list.contentOffset, 1_000 - 300)
        pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 295, y: 150), argb(TestItemNode.color(39)))
    }

    func testACustomLayoutPlacesItemsWhereItSays() async throws {
        let source = TestCollectionSource(count: 10, length: 10)
        let (host, collection) = try makeCollection(source: source) {
            $0.collectionLayout = MosaicLayout()
        }
        defer { host.setRootNode(nil) }
        XCTAssertEqual(collection.list.numberOfRows, 7)
        XCTAssertEqual(collection.frameOfItem(0), Rect(x: 0, y: 0, width: 300, height: 80))
        XCTAssertEqual(collection.frameOfItem(2), Rect(x: 150, y: 80, width: 150, height: 40))
        XCTAssertEqual(collection.frameOfItem(3), Rect(x: 0, y: 120, width: 300, height: 80))
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 280, y: 70), argb(TestItemNode.color(0)), "the wide item fills its line")
        XCTAssertEqual(pixels.pixel(x: 100, y: 100), argb(TestItemNode.color(1)))
        XCTAssertEqual(pixels.pixel(x: 200, y: 100), argb(TestItemNode.color(2)))
        XCTAssertEqual(pixels.pixel(x: 10, y: 190), argb(TestItemNode.color(3)))
    }

    func testATapSelectsTheItemUnderIt() async throws {
        let source = TestCollectionSource(count: 30, length: 40)
        let (host, collection) = try makeCollection(source: source) {
            $0.collectionLayout = GridLayout(columns: .fixed(3))
        }
        defer { host.setRootNode(nil) }
        var selected: [Int] = []
        collection.onSelectItem = { selected.append($0) }
        frame(host, [.pointerDown(Point(x: 250, y: 50), button: 1), .pointerUp(Point(x: 250, y: 50), button: 1)])
        frame(host)
        XCTAssertEqual(selected, [5])
    }

    func testItemsInsertedAboveInWholeLinesLeaveTheScreenStill() async throws {
        let source = TestCollectionSource(count: 90, length: 40)
        let (host, collection) = try makeCollection(source: source) {
            $0.collectionLayout = GridLayout(columns: .fixed(3))
        }
        defer { host.setRootNode(nil) }
        collection.scroll(toItem: 30, at: .top, animated: false)
        try rest(host)
        let before = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(before.pixel(x: 50, y: 20), argb(TestItemNode.color(30)))
        // Six items (two lines) above the viewport: the items on screen stay where they were.
        for index in 0..<6 { source.identities.insert(1_000 + index, at: 0); source.lengths.insert(40, at: 0) }
        collection.insertItems(Array(0..<6))
        try rest(host)
        XCTAssertEqual(collection.numberOfItems, 96)
        XCTAssertEqual(collection.visibleItems?.lowerBound, 36, "the same items, now at 36")
        let after = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(after.pixels, before.pixels, "nothing on screen moved")
        // Deleting three items (one line) above: still nothing moves.
        for _ in 0..<3 { source.identities.remove(at: 0); source.lengths.remove(at: 0) }
        collection.deleteItems([0, 1, 2])
        try rest(host)
        XCTAssertEqual(collection.visibleItems?.lowerBound, 33)
        XCTAssertEqual(try XCTUnwrap(OffscreenRender.capture(host)).pixels, before.pixels)
        // One item inserted at the top reflows every line: the screen shows the new arrangement.
        source.identities.insert(2_000, at: 0); source.lengths.insert(40, at: 0)
        collection.insertItems([0])
        try rest(host)
        let reflowed = try XCTUnwrap(OffscreenRender.capture(host))
        let first = try XCTUnwrap(collection.visibleItems?.lowerBound)
        XCTAssertEqual(reflowed.pixel(x: 50, y: 20), argb(TestItemNode.color(source.identities[first])))
        XCTAssertEqual(reflowed.pixel(x: 150, y: 20), argb(TestItemNode.color(source.identities[first + 1])))
    }

    func testMemoryDoesNotGrowWithTheItemCount() async throws {
        func scrollThrough(items: Int) throws -> (liveLines: Int, nodesMade: Int, bitmapBytes: Int) {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            let source = TestCollectionSource(count: items, length: 4)
            // Items that draw, so their bitmaps can be counted.
            source.makeNode = { identity, length in TestRowNode(identity: identity, height: length) }
            let (host, collection) = try makeCollection(size: Size(width: 40, height: 100), source: source) {
                $0.collectionLayout = GridLayout(columns: .fixed(4))
            }
            let end = collection.list.contentHeight - 100
            var offset = 0.0
            while offset < end {
                offset = min(end, offset + 100)
                collection.list.setContentOffset(offset, animated: false)
                frame(host)
                host.runtime.scheduler.waitUntilIdle()
            }
            try rest(host)
            XCTAssertEqual(collection.visibleItems?.upperBound, items, "\(items) items: the last line is on screen")
            let alive = Bitmap.liveByteCount
            let statistics = collection.list.statistics
            host.setRootNode(nil)
            try host.settle(timeout: 10)
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            return (statistics.liveRows, statistics.nodesMade, alive - Bitmap.liveByteCount)
        }
        let small = try scrollThrough(items: 10_000)
        let large = try scrollThrough(items: 100_000)
        XCTAssertGreaterThan(large.nodesMade, 20_000, "the large collection really went through its lines")
        XCTAssertEqual(small.liveLines, large.liveLines, "lines near the viewport only")
        XCTAssertGreaterThan(small.bitmapBytes, 0)
        XCTAssertLessThanOrEqual(abs(Double(large.bitmapBytes - small.bitmapBytes)), 0.05 * Double(small.bitmapBytes),
                                 "bitmaps: \(small.bitmapBytes) after 10,000 items, \(large.bitmapBytes) after 100,000")
    }
}
