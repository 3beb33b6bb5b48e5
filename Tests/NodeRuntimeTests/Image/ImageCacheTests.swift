import Compositor
import XCTest
@testable import NodeRuntime

/// The decoded-image cache: a byte budget, least recently used out first, hits and misses counted.
@MainActor
final class ImageCacheTests: XCTestCase {
    /// A key for a 10×10 image (400 bytes) from a made-up file.
    private func key(_ name: String, side: Int = 10) -> ImageCache.Key {
        ImageCache.Key(source: .file("/images/\(name)"), crop: nil, contentMode: .aspectFill, pixelWidth: side, pixelHeight: side)
    }

    private func bitmap(side: Int = 10) throws -> Bitmap { try Bitmap(width: side, height: side, filledWith: .white) }

    func testTheLeastRecentlyUsedGoesFirstAndALookupCountsAsAUse() async throws {
        let cache = ImageCache(budgetBytes: 3 * 400)
        for name in ["a", "b", "c"] { cache.store(try bitmap(), for: key(name)) }
        XCTAssertEqual(cache.byteCount, 1_200)
        XCTAssertNotNil(cache.bitmap(for: key("a")), "a is now more recent than b and c")
        cache.store(try bitmap(), for: key("d"))
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.byteCount, 1_200)
        XCTAssertNil(cache.bitmap(for: key("b")), "b was the least recently used")
        for name in ["a", "c", "d"] { XCTAssertNotNil(cache.bitmap(for: key(name)), name) }
        XCTAssertEqual([cache.hits, cache.misses], [4, 1])
    }

    func testStoringAgainReplacesTheBitmapAndItsBytes() async throws {
        let cache = ImageCache(budgetBytes: 4_000)
        cache.store(try bitmap(), for: key("a"))
        let larger = try bitmap(side: 20)
        cache.store(larger, for: key("a"))
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.byteCount, 1_600)
        XCTAssertEqual(cache.bitmap(for: key("a"))?.identity, larger.identity)
    }

    func testABitmapLargerThanTheBudgetIsNotKeptAndDropsNothing() async throws {
        let cache = ImageCache(budgetBytes: 1_000)
        cache.store(try bitmap(), for: key("a"))
        cache.store(try bitmap(side: 20), for: key("huge", side: 20))  // 1,600 bytes
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.byteCount, 400)
        XCTAssertNil(cache.bitmap(for: key("huge", side: 20)))
        XCTAssertNotNil(cache.bitmap(for: key("a")))
        // A budget of zero keeps nothing (an image node given one decodes every time).
        let none = ImageCache(budgetBytes: 0)
        none.store(try bitmap(), for: key("a"))
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(none.byteCount, 0)
    }

    func testLoweringTheBudgetEvictsAtOnceOldestFirst() async throws {
        let cache = ImageCache(budgetBytes: 4 * 400)
        for name in ["a", "b", "c", "d"] { cache.store(try bitmap(), for: key(name)) }
        cache.budgetBytes = 2 * 400
        XCTAssertEqual(cache.budgetBytes, 800)
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.byteCount, 800)
        XCTAssertNil(cache.bitmap(for: key("a")))
        XCTAssertNil(cache.bitmap(for: key("b")))
        XCTAssertNotNil(cache.bitmap(for: key("d")))
        cache.budgetBytes = -5
        XCTAssertEqual(cache.budgetBytes, 0, "a negative budget counts as zero")
        XCTAssertEqual(cache.count, 0)
    }

    func testRemoveAllEmptiesTheCacheAndZeroesTheCounts() async throws {
        let cache = ImageCache(budgetBytes: 4_000)
        cache.store(try bitmap(), for: key("a"))
        _ = cache.bitmap(for: key("a"))
        _ = cache.bitmap(for: key("b"))
        cache.removeAll()
        XCTAssertEqual([cache.count, cache.byteCount, cache.hits, cache.misses], [0, 0, 0, 0])
        XCTAssertEqual(cache.budgetBytes, 4_000, "the budget stays")
    }
}
