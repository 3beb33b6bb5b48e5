import Compositor
import TestSupport
import XCTest
@testable import NodeRuntime

/// The text layout cache's bounds and order: least recently used out first, by count and by bytes.
@MainActor
final class TextLayoutCacheTests: XCTestCase {
    override func setUp() {
        MainActor.assumeIsolated { TextFixtures.useRepositoryFonts() }
    }

    private func text(_ string: String) -> AttributedText { AttributedText(string, attributes: TextFixtures.plain()) }

    /// Inside the cache's lock a key is hashed and compared by a digest of its text made once when
    /// the key was made, never by the text: a megabyte of text costs the lock what a word does.
    func testKeysAreHashedAndComparedByTheirTextsDigest() async {
        let options = TextLayoutOptions()
        let huge = text(String(repeating: "lorem ipsum ", count: 80_000))
        let key = TextLayoutCache.Key(text: huge, width: 100, options: options, scale: 1, registry: 0)
        XCTAssertEqual(key.textDigest, huge.hashValue)
        // Two keys with the same digest are the same key, whatever their texts: the text is not read.
        let forged = TextLayoutCache.Key(textDigest: key.textDigest, width: 100, options: options, scale: 1, registry: 0)
        XCTAssertEqual(key, forged)
        XCTAssertEqual(key.hashValue, forged.hashValue)
    }

    /// Two texts that share a digest never get each other's layout: the text is compared on a hit,
    /// after the lock.
    func testATextSharingAnotherTextsDigestIsAMiss() async {
        let cache = TextLayoutCache()
        let options = TextLayoutOptions()
        let first = text("first"), second = text("second")
        let key = TextLayoutCache.Key(textDigest: 42, width: 100, options: options, scale: 1, registry: 0)
        let layout = TextLayout.measure(first, width: 100, cache: nil)
        XCTAssertTrue(cache.store(layout, for: key, text: first) === layout)
        XCTAssertTrue(cache.layout(for: key, text: first) === layout)
        XCTAssertNil(cache.layout(for: key, text: second), "another text with the same digest is a miss")
        let other = TextLayout.measure(second, width: 100, cache: nil)
        XCTAssertTrue(cache.store(other, for: key, text: second) === other, "its own layout, not the kept one")
    }

    /// A layout measured before the fonts changed (a family registered again, another fonts folder)
    /// is not used after: neither from the shared cache nor as a text node's last measurement.
    func testALayoutMeasuredWithOlderFontsIsNotReused() async {
        let registry = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        registry.reportsErrorsToStandardError = false
        let sample = text("Wide words with ink")
        let before = TextLayout.measure(sample, width: 800, fonts: registry).size.width
        registry.register(family: TextFont.sansFamily, regular: "DejaVuSansMono.ttf")
        let after = TextLayout.measure(sample, width: 800, fonts: registry).size.width
        XCTAssertNotEqual(before, after, "measured again with the monospaced face")

        let shared = FontRegistry.shared
        defer { shared.register(family: TextFont.sansFamily, regular: "DejaVuSans.ttf", bold: "DejaVuSans-Bold.ttf") }
        let node = TextNode(attributedText: sample)
        let first = node.textLayout(forWidth: 800).size.width
        shared.register(family: TextFont.sansFamily, regular: "DejaVuSansMono.ttf")
        XCTAssertNotEqual(node.textLayout(forWidth: 800).size.width, first)
    }

    func testTheLeastRecentlyUsedGoesFirstWhenTheCountIsFull() async {
        let cache = TextLayoutCache(capacity: 4)
        for i in 0..<4 { _ = TextLayout.measure(text("text \(i)"), width: 200, cache: cache) }
        let first = TextLayout.measure(text("text 0"), width: 200, cache: cache)  // a hit: now the newest
        _ = TextLayout.measure(text("text 4"), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.count, 4)
        XCTAssertTrue(TextLayout.measure(text("text 0"), width: 200, cache: cache) === first, "used recently, kept")
        let hitsBefore = cache.statistics.hits
        _ = TextLayout.measure(text("text 1"), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.hits, hitsBefore, "text 1 was the least recently used, and went")
        XCTAssertEqual(cache.statistics.count, 4)
    }

    func testStatisticsCountBytesAndRemoveAllResetsThem() async {
        let cache = TextLayoutCache()
        _ = TextLayout.measure(text(TextFixtures.lorem), width: 200, cache: cache)
        _ = TextLayout.measure(text(TextFixtures.lorem), width: 200, cache: cache)
        let statistics = cache.statistics
        XCTAssertEqual([statistics.hits, statistics.misses, statistics.count], [1, 1, 1])
        XCTAssertGreaterThan(statistics.bytes, TextFixtures.lorem.utf8.count, "the key's text is counted")
        cache.removeAll()
        XCTAssertEqual(cache.statistics, TextLayoutCache.Statistics())
    }

    /// A layout larger than the whole budget is kept alone (measuring it again is a hit) until the next
    /// layout is stored.
    func testALayoutLargerThanTheBudgetIsKeptAlone() async {
        // The budget holds two short layouts but not the long one.
        let sizes = TextLayoutCache()
        _ = TextLayout.measure(text("a"), width: 200, cache: sizes)
        let short = sizes.statistics.bytes
        _ = TextLayout.measure(text(TextFixtures.lorem), width: 200, cache: sizes)
        let long = sizes.statistics.bytes - short
        XCTAssertGreaterThan(long, 2 * short)
        let budget = 2 * short
        let cache = TextLayoutCache(budgetBytes: budget)
        _ = TextLayout.measure(text("a"), width: 200, cache: cache)
        _ = TextLayout.measure(text("b"), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.count, 2)
        let big = TextLayout.measure(text(TextFixtures.lorem), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.count, 1)
        XCTAssertEqual(cache.statistics.bytes, long)
        XCTAssertTrue(TextLayout.measure(text(TextFixtures.lorem), width: 200, cache: cache) === big)
        _ = TextLayout.measure(text("c"), width: 200, cache: cache)
        XCTAssertEqual(cache.statistics.count, 1)
        XCTAssertLessThanOrEqual(cache.statistics.bytes, budget)
    }
}
