import XCTest
@testable import Compositor

/// The least-recently-used map behind the texture, corner-piece, image, text-layout and font caches.
@MainActor
final class LRUCacheTests: XCTestCase {
    /// The values in use order, least recently used first.
    private func order<Key>(_ cache: LRUCache<Key, Int>) -> [Int] { Array(cache.values) }

    func testEvictsLeastRecentlyUsedFirstAndLookupsMarkUse() async {
        var cache = LRUCache<String, Int>(budget: 3)
        XCTAssertTrue(cache.insert(1, for: "a", cost: 1).isEmpty)
        XCTAssertTrue(cache.insert(2, for: "b", cost: 1).isEmpty)
        XCTAssertTrue(cache.insert(3, for: "c", cost: 1).isEmpty)
        XCTAssertEqual(order(cache), [1, 2, 3])
        XCTAssertEqual(cache.value(for: "a"), 1)
        XCTAssertEqual(order(cache), [2, 3, 1], "a lookup makes the entry the most recently used")
        XCTAssertNil(cache.value(for: "z"))
        XCTAssertEqual(cache.peekValue(for: "b"), 2)
        XCTAssertEqual(order(cache), [2, 3, 1], "a peek leaves the order as it is")

        let evicted = cache.insert(4, for: "d", cost: 1)
        XCTAssertEqual(evicted.map(\.key), ["b"])
        XCTAssertEqual(evicted.map(\.value), [2])
        XCTAssertEqual(evicted.map(\.cost), [1])
        XCTAssertEqual(order(cache), [3, 1, 4])
        XCTAssertNil(cache.peekValue(for: "b"))
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.totalCost, 3)
    }

    func testCostBudgetEvictsAsManyAsTheNewEntryNeedsOldestFirst() async {
        var cache = LRUCache<String, Int>(budget: 100)
        _ = cache.insert(1, for: "a", cost: 30)
        _ = cache.insert(2, for: "b", cost: 30)
        _ = cache.insert(3, for: "c", cost: 30)
        XCTAssertEqual(cache.totalCost, 90)
        let evicted = cache.insert(4, for: "d", cost: 70)
        XCTAssertEqual(evicted.map(\.key), ["a", "b"], "two oldest out, and no more than needed")
        XCTAssertEqual(cache.totalCost, 100)
        XCTAssertEqual(order(cache), [3, 4])
    }

    func testCountLimitAndBudgetBothBound() async {
        var cache = LRUCache<Int, Int>(budget: 1_000, countLimit: 2)
        _ = cache.insert(0, for: 0, cost: 1)
        _ = cache.insert(1, for: 1, cost: 1)
        XCTAssertEqual(cache.insert(2, for: 2, cost: 1).map(\.key), [0], "the count limit evicts too")
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.insert(3, for: 3, cost: 999).map(\.key), [1], "and so does the budget")
        XCTAssertEqual(cache.totalCost, 1_000)
        XCTAssertEqual(cache.insert(4, for: 4, cost: 1_000).map(\.key), [2, 3])
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.totalCost, 1_000)
    }

    func testReinsertReplacesTheValueUpdatesTheCostAndReturnsTheOldEntry() async {
        var cache = LRUCache<String, Int>(budget: 100)
        _ = cache.insert(1, for: "a", cost: 10)
        _ = cache.insert(2, for: "b", cost: 10)
        let removed = cache.insert(11, for: "a", cost: 40)
        XCTAssertEqual(removed.map(\.key), ["a"])
        XCTAssertEqual(removed.map(\.value), [1], "the replaced value comes back for the owner to release")
        XCTAssertEqual(removed.map(\.cost), [10])
        XCTAssertEqual(cache.totalCost, 50, "the entry's cost is the new one")
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(order(cache), [2, 11], "a re-insert makes the entry the most recently used")
        // A cheaper re-insert lowers the total again.
        _ = cache.insert(12, for: "a", cost: 5)
        XCTAssertEqual(cache.totalCost, 15)
    }

    func testZeroCostEntriesTakeNoBudgetButCountAgainstTheLimit() async {
        var cache = LRUCache<Int, Int>(budget: 0, countLimit: 3)
        for i in 0..<3 { XCTAssertTrue(cache.insert(i, for: i, cost: 0).isEmpty) }
        XCTAssertEqual(cache.totalCost, 0)
        XCTAssertEqual(cache.insert(3, for: 3, cost: 0).map(\.key), [0])
        XCTAssertEqual(cache.count, 3)
        XCTAssertEqual(cache.insert(4, for: 4, cost: -7).map(\.key), [1], "a negative cost counts as zero")
        XCTAssertEqual(cache.totalCost, 0)
    }

    func testAnEntryLargerThanTheBudgetIsKeptAloneUntilTheNextInsert() async {
        var cache = LRUCache<String, Int>(budget: 100)
        _ = cache.insert(1, for: "a", cost: 60)
        _ = cache.insert(2, for: "b", cost: 30)
        let evicted = cache.insert(3, for: "huge", cost: 500)
        XCTAssertEqual(evicted.map(\.key), ["a", "b"], "everything older goes")
        XCTAssertEqual(order(cache), [3], "the new entry stays, alone, over the budget")
        XCTAssertEqual(cache.totalCost, 500)
        XCTAssertEqual(cache.insert(4, for: "c", cost: 10).map(\.key), ["huge"], "until the next insert")
        XCTAssertEqual(cache.totalCost, 10)
        // An empty budget keeps only the newest entry.
        var empty = LRUCache<String, Int>(budget: 0)
        _ = empty.insert(1, for: "a", cost: 1)
        XCTAssertEqual(empty.insert(2, for: "b", cost: 1).map(\.key), ["a"])
        XCTAssertEqual(order(empty), [2])
    }

    func testEvictAppliesALowerBudgetAndSparesWhatThePredicateKeeps() async {
        var cache = LRUCache<Int, Int>()  // unbounded: inserts never evict
        for i in 0..<6 { XCTAssertTrue(cache.insert(i, for: i, cost: 10).isEmpty) }
        XCTAssertEqual(cache.totalCost, 60)
        // Spare the even keys: the walk skips them and goes on to newer entries.
        let evicted = cache.evict(toBudget: 30, sparing: { key, _ in key.isMultiple(of: 2) })
        XCTAssertEqual(evicted.map(\.key), [1, 3, 5])
        XCTAssertEqual(order(cache), [0, 2, 4])
        XCTAssertEqual(cache.totalCost, 30)
        // When the spared entries alone pass the budget, the cache stays over it.
        XCTAssertTrue(cache.evict(toBudget: 0, sparing: { _, _ in true }).isEmpty)
        XCTAssertEqual(cache.totalCost, 30)
        // The cache's own budget applies when none is given; setting it evicts nothing by itself.
        cache.budget = 10
        XCTAssertEqual(cache.totalCost, 30)
        XCTAssertEqual(cache.evict().map(\.key), [0, 2])
        XCTAssertEqual(order(cache), [4])
        XCTAssertTrue(cache.evict().isEmpty, "within its bounds, nothing to do")
    }

    /// Uses noted during a pass and applied in one step: the noted entries become the newest, each group
    /// keeping its order, whichever group is moved.
    func testMarkUsedMakesTheNotedEntriesTheNewestKeepingTheirOrder() async {
        var cache = LRUCache<Int, Int>()
        for i in 0..<10 { _ = cache.insert(i, for: i, cost: 1) }
        cache.markUsed(where: { key, _ in [2, 5, 7].contains(key) })
        XCTAssertEqual(order(cache), [0, 1, 3, 4, 6, 8, 9, 2, 5, 7])
        // Most entries used: the few unused ones move instead, with the same result.
        cache.markUsed(where: { key, _ in (1...8).contains(key) })
        XCTAssertEqual(order(cache), [0, 9, 1, 3, 4, 6, 8, 2, 5, 7])
        // The used entries already the newest: nothing moves.
        cache.markUsed(where: { key, _ in [5, 7].contains(key) })
        XCTAssertEqual(order(cache), [0, 9, 1, 3, 4, 6, 8, 2, 5, 7])
        cache.markUsed(where: { _, _ in false })
        cache.markUsed(where: { _, _ in true })
        XCTAssertEqual(order(cache), [0, 9, 1, 3, 4, 6, 8, 2, 5, 7])
        XCTAssertEqual(cache.totalCost, 10)
        // Lookups still find every entry where it now is.
        for i in 0..<10 { XCTAssertEqual(cache.peekValue(for: i), i) }
    }

    /// Keys are stored with their hash values; keys whose hashes collide stay distinct.
    func testKeysWithEqualHashesStayDistinct() async {
        struct Colliding: Hashable {
            var id: Int
            func hash(into hasher: inout Hasher) { hasher.combine(0) }
        }
        var cache = LRUCache<Colliding, Int>(countLimit: 3)
        for i in 0..<4 { _ = cache.insert(i, for: Colliding(id: i), cost: 1) }
        XCTAssertNil(cache.peekValue(for: Colliding(id: 0)))
        XCTAssertEqual(cache.value(for: Colliding(id: 1)), 1)
        XCTAssertEqual(cache.remove(Colliding(id: 2))?.value, 2)
        XCTAssertEqual(order(cache), [3, 1])
    }

    func testRemoveRemoveWhereAndRemoveAllReturnWhatTheyTake() async {
        var cache = LRUCache<Int, String>(budget: 100)
        for i in 0..<5 { _ = cache.insert("v\(i)", for: i, cost: i) }
        XCTAssertEqual(cache.remove(2)?.value, "v2")
        XCTAssertNil(cache.remove(2))
        XCTAssertEqual(cache.totalCost, 0 + 1 + 3 + 4)
        let odd = cache.remove(where: { key, _ in key % 2 == 1 })
        XCTAssertEqual(odd.map(\.key), [1, 3], "oldest first")
        XCTAssertEqual(cache.totalCost, 4)
        XCTAssertTrue(cache.remove(where: { _, _ in false }).isEmpty)
        let all = cache.removeAll()
        XCTAssertEqual(all.map(\.key), [0, 4])
        XCTAssertTrue(cache.isEmpty)
        XCTAssertEqual(cache.totalCost, 0)
    }

    /// Many entries, seeded pseudo-random uses: the order always matches a plain model (a list moved on every use),
    /// and the total always matches the sum of the kept costs.
    func testMatchesASimpleModelUnderRandomUse() async {
        var cache = LRUCache<Int, Int>(budget: 500, countLimit: 40)
        var model: [(key: Int, cost: Int)] = []
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(bound))
        }
        for _ in 0..<5_000 {
            let key = next(80)
            if next(50) == 0 {
                // Mark a scattered group used, as a frame's end does.
                let modulus = 2 + next(5), remainder = next(modulus)
                cache.markUsed(where: { key, _ in key % modulus == remainder })
                model = model.filter { $0.key % modulus != remainder } + model.filter { $0.key % modulus == remainder }
            } else if next(3) == 0 {
                let cost = next(30)
                var expected: [Int] = []
                if let i = model.firstIndex(where: { $0.key == key }) { expected.append(model.remove(at: i).key) }
                model.append((key, cost))
                var total = model.reduce(0) { $0 + $1.cost }
                while (total > 500 || model.count > 40) && model.count > 1 {
                    let old = model.removeFirst()
                    total -= old.cost
                    expected.append(old.key)
                }
                XCTAssertEqual(cache.insert(key, for: key, cost: cost).map(\.key), expected)
            } else {
                let found = cache.value(for: key)
                if let i = model.firstIndex(where: { $0.key == key }) {
                    XCTAssertEqual(found, key)
                    model.append(model.remove(at: i))
                } else {
                    XCTAssertNil(found)
                }
            }
            XCTAssertEqual(Array(cache.values), model.map(\.key))
            XCTAssertEqual(cache.totalCost, model.reduce(0) { $0 + $1.cost })
        }
    }
}
