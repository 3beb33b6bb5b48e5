import TesseraRandom
import XCTest
@testable import NodeRuntime

/// The scheduler's queue against a plain model: every pop is the most urgent element the model holds,
/// whatever mix of pushes, removals at any slot, key changes in both directions and stale rebuilds
/// came before.
@MainActor
final class IndexedHeapTests: XCTestCase {
    private struct Item: Equatable {
        let id: UInt64
        var key: Int
    }

    /// Larger key first; ties by id, so the order is total and the model's choice is unique.
    private static func precedes(_ a: Item, _ b: Item) -> Bool { a.key != b.key ? a.key > b.key : a.id < b.id }

    private func check(seed: UInt64, operations: Int, keyChangesPerPop: Int) {
        var random = SeededRandom(seed: seed)
        var heap = IndexedHeap<Item>(id: { $0.id }, precedes: Self.precedes)
        var model: [UInt64: Item] = [:]
        var nextID: UInt64 = 0
        var sawStale = false
        for step in 0..<operations {
            switch Int.random(in: 0..<(10 + keyChangesPerPop), using: &random) {
            case 0..<4:
                let item = Item(id: nextID, key: Int.random(in: -50...50, using: &random))
                nextID += 1
                heap.push(item)
                model[item.id] = item
            case 4..<6:
                let popped = heap.popFirst()
                let expected = model.values.sorted(by: Self.precedes).first
                XCTAssertEqual(popped, expected, "seed \(seed), step \(step): pop")
                if let popped { model[popped.id] = nil }
            case 6..<8:
                guard let id = model.keys.randomElement(using: &random) else { continue }
                XCTAssertEqual(heap.remove(id), model[id], "seed \(seed), step \(step): remove")
                model[id] = nil
            default:
                guard let id = model.keys.randomElement(using: &random) else { continue }
                let key = Int.random(in: -50...50, using: &random)
                XCTAssertTrue(heap.update(id) { $0.key = key })
                model[id]?.key = key
                sawStale = sawStale || heap.isStale
            }
            XCTAssertEqual(heap.count, model.count, "seed \(seed), step \(step): count")
        }
        var drained: [Item] = []
        while let item = heap.popFirst() { drained.append(item) }
        XCTAssertEqual(drained, model.values.sorted(by: Self.precedes), "seed \(seed): drain order")
        if keyChangesPerPop > 100 { XCTAssertTrue(sawStale, "seed \(seed): many changes between pops rebuild") }
    }

    func testRandomOperationsMatchTheModel() async {
        for seed in UInt64(1)...20 { check(seed: seed, operations: 2_000, keyChangesPerPop: 4) }
    }

    func testManyKeyChangesBetweenPopsMarkItStaleAndStillPopInOrder() async {
        for seed in UInt64(100)...105 { check(seed: seed, operations: 3_000, keyChangesPerPop: 400) }
    }

    func testRemovingAnAbsentIDAndUpdatingItDoNothing() async {
        var heap = IndexedHeap<Item>(id: { $0.id }, precedes: Self.precedes)
        heap.push(Item(id: 1, key: 5))
        XCTAssertNil(heap.remove(7))
        XCTAssertFalse(heap.update(7) { $0.key = 1 })
        XCTAssertEqual(heap.count, 1)
        XCTAssertEqual(heap[1], Item(id: 1, key: 5))
        XCTAssertEqual(heap.removeAll(), [Item(id: 1, key: 5)])
        XCTAssertTrue(heap.isEmpty)
        XCTAssertNil(heap.popFirst())
    }

    func testChangingTheOrderReordersAtTheNextPop() async {
        var heap = IndexedHeap<Item>(id: { $0.id }, precedes: Self.precedes)
        for id in UInt64(0)..<10 { heap.push(Item(id: id, key: Int(id))) }
        heap.precedes = { $0.id < $1.id }  // now in id order
        XCTAssertTrue(heap.isStale)
        XCTAssertEqual((0..<10).compactMap { _ in heap.popFirst()?.id }, Array(0..<10))
    }
}
