internal import CAllocationCount
import Compositor
import TestSupport
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

    /// What one entry of a 10×10 bitmap costs: its 400 bytes and its key's path ("/images/a": 9 bytes).
    private let unit = 400 + 9

    func testTheLeastRecentlyUsedGoesFirstAndALookupCountsAsAUse() async throws {
        let cache = ImageCache(budgetBytes: 3 * unit)
        for name in ["a", "b", "c"] { cache.store(try bitmap(), for: key(name)) }
        XCTAssertEqual(cache.byteCount, 3 * unit, "the bitmaps and their keys' paths")
        XCTAssertNotNil(cache.bitmap(for: key("a")), "a is now more recent than b and c")
        cache.store(try bitmap(), for: key("d"))
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.byteCount, 3 * unit)
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
        XCTAssertEqual(cache.byteCount, 1_600 + 9)
        XCTAssertEqual(cache.bitmap(for: key("a"))?.identity, larger.identity)
    }

    func testABitmapLargerThanTheBudgetIsNotKeptAndDropsNothing() async throws {
        let cache = ImageCache(budgetBytes: 1_000)
        cache.store(try bitmap(), for: key("a"))
        cache.store(try bitmap(side: 20), for: key("huge", side: 20))  // 1,600 bytes
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.byteCount, unit)
        XCTAssertNil(cache.bitmap(for: key("huge", side: 20)))
        XCTAssertNotNil(cache.bitmap(for: key("a")))
        // A budget of zero keeps nothing (an image node given one decodes every time).
        let none = ImageCache(budgetBytes: 0)
        none.store(try bitmap(), for: key("a"))
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(none.byteCount, 0)
    }

    func testLoweringTheBudgetEvictsAtOnceOldestFirst() async throws {
        let cache = ImageCache(budgetBytes: 4 * unit)
        for name in ["a", "b", "c", "d"] { cache.store(try bitmap(), for: key(name)) }
        cache.budgetBytes = 2 * unit
        XCTAssertEqual(cache.budgetBytes, 2 * unit)
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.byteCount, 2 * unit)
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

    // MARK: What the cache keeps alive

    /// Bytes the process's allocator holds in use now (every arena, mapped blocks included).
    private func allocatedBytes() throws -> Int {
        let bytes = Int(tessera_allocated_bytes())
        guard bytes >= 0 else { throw XCTSkip("the allocator does not report what it holds") }
        return bytes
    }

    /// An 8×8 PNG followed by a megabyte of `filler` after its end chunk: a distinct 1 MB source per
    /// filler byte, which decodes to an 8×8 thumbnail of 256 bytes.
    private func megabyteSource(_ filler: UInt8) -> ImageSource {
        let png = TestImageFiles.png(width: 8, height: 8, colourType: 2, bitDepth: 8) { x, y in [x * 30, y * 30, 90] }
        return .data(png + [UInt8](repeating: filler, count: 1 << 20), name: "thumb-\(filler).png")
    }

    private let thumbnail = ImageDecoder.Target(width: 8, height: 8, mode: .aspectFill)

    private func thumbnailKey(_ source: ImageSource) -> ImageCache.Key {
        ImageCache.Key(source: source, crop: nil, contentMode: .aspectFill, pixelWidth: 8, pixelHeight: 8)
    }

    /// Twenty-four distinct 1 MB in-memory sources decoded to 8×8 thumbnails and cached, each source
    /// dropped after: what stays allocated is the thumbnails and their keys, within the budget, not
    /// the encoded megabytes.
    func testInMemorySourcesAreNotKeptAliveByTheirCacheKeys() async throws {
        let cache = ImageCache(budgetBytes: 64 << 10)
        let before = try allocatedBytes()
        for filler in 0..<24 {
            let source = megabyteSource(UInt8(filler))
            let bitmap = try XCTUnwrap(try ImageDecoder.decode(source, for: thumbnail))
            cache.store(bitmap, for: thumbnailKey(source))
        }
        XCTAssertEqual(cache.count, 24)
        XCTAssertLessThanOrEqual(cache.byteCount, cache.budgetBytes)
        let kept = try allocatedBytes() - before
        XCTAssertLessThan(kept, cache.budgetBytes + (1 << 20),
                          "the cache keeps \(kept) bytes alive for \(cache.byteCount) bytes counted")
        // The same bytes made into a source again (another name, another array) find the entry.
        XCTAssertNotNil(cache.bitmap(for: thumbnailKey(megabyteSource(3))))
        XCTAssertNil(cache.bitmap(for: thumbnailKey(megabyteSource(200))))
    }

    /// Bitmap sources shrunk to thumbnails: the cache holds the thumbnails, never the 1 MB originals
    /// (counted by the bitmaps' own live-byte count).
    func testBitmapSourcesAreNotKeptAliveByTheirCacheKeys() async throws {
        let cache = ImageCache(budgetBytes: 64 << 10)
        let before = Bitmap.liveByteCount
        for shade in 0..<16 {
            let original = try Bitmap(width: 512, height: 512, filledWith: Color(red: UInt8(shade * 15), green: 0, blue: 0))
            let source = ImageSource.bitmap(original)
            let bitmap = try XCTUnwrap(try ImageDecoder.decode(source, for: thumbnail))
            cache.store(bitmap, for: thumbnailKey(source))
        }
        XCTAssertEqual(cache.count, 16)
        let kept = Bitmap.liveByteCount - before
        XCTAssertLessThanOrEqual(kept, cache.byteCount, "only the thumbnails stay alive")
        XCTAssertLessThanOrEqual(cache.byteCount, cache.budgetBytes)
    }

    /// The natural-size cache (one entry per source an image node measured) keeps sizes, not bytes.
    func testTheHeaderCacheDoesNotKeepInMemorySourcesAlive() async throws {
        let headers = ImageHeaderCache(countLimit: 100)
        let before = try allocatedBytes()
        for filler in 0..<24 {
            let size = try headers.size(of: megabyteSource(UInt8(filler)), limits: .init())
            XCTAssertEqual([size.width, size.height], [8, 8])
        }
        let kept = try allocatedBytes() - before
        XCTAssertLessThan(kept, 1 << 20, "24 sizes keep \(kept) bytes alive")
        XCTAssertNotNil(headers.cachedSize(of: megabyteSource(5)))
    }
}
