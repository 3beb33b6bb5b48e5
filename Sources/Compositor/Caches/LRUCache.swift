public import OrderedCollections

/// A map that keeps its entries within a cost budget and a count limit, dropping the least recently
/// used first: the one eviction order behind Tessera's caches (content textures, corner pieces, decoded
/// images, text layouts, each thread's open fonts).
///
/// Entries are kept in use order, oldest first. `value(for:)` and `insert(_:for:cost:)` make an entry the
/// most recently used; `peekValue(for:)` reads without doing so. An owner that uses many entries in a
/// pass (a frame's draws) can instead note each use itself and apply them in one step afterwards with
/// `markUsed(where:)`. Each entry has a cost (bytes, or 1 to count entries) fixed when it is inserted;
/// `totalCost` is their sum.
///
/// The cache releases nothing itself: `insert`, `evict`, `remove` and `removeAll` return the entries they
/// take out, so the owner releases them where it must (destroys textures on the UI thread, lets large
/// bitmaps go after unlocking). An owner that must spare some entries (a texture the current frame
/// draws) names them with the `sparing` predicate of `evict`, and one that evicts only at set times (the
/// end of a frame) keeps the cache's own bounds unlimited and passes its budget to `evict`.
///
/// Cost: the order lives in an `OrderedDictionary`, whose hash table stores positions. Looking up the
/// newest entry, appending, and evicting the oldest entries are cheap; moving an older entry to the
/// newest end re-indexes the entries on the shorter side of it, so it grows with the distance from
/// either end (none for the oldest). Keys are stored with their hash value, so re-indexing never hashes
/// a long key (a text) again. The code is inlinable, so each cache gets a version specialised to its
/// key and value types; that is also why the type is public rather than `package`: this toolchain does
/// not specialise a `package` generic in the modules that use it, and every call would go through
/// generic metadata.
/// - Thread: a value with no lock of its own; its owner guards it (a lock, or one thread).
public struct LRUCache<Key: Hashable, Value> {
    /// One entry: its key, its value and the cost it was inserted with.
    /// - Thread: any (a value)
    public struct Entry {
        public let key: Key
        public let value: Value
        public let cost: Int

        @inlinable
        init(key: Key, value: Value, cost: Int) { self.key = key; self.value = value; self.cost = cost }
    }

    @usableFromInline
    struct Slot {
        @usableFromInline var value: Value
        @usableFromInline var cost: Int

        @inlinable
        init(value: Value, cost: Int) { self.value = value; self.cost = cost }
    }

    /// A key with its hash value, computed once: the hash table re-hashes the keys it re-indexes.
    @usableFromInline
    struct StoredKey: Hashable {
        @usableFromInline let key: Key
        @usableFromInline let hash: Int

        @inlinable
        init(_ key: Key) { self.key = key; self.hash = key.hashValue }

        @inlinable
        static func == (a: StoredKey, b: StoredKey) -> Bool { a.hash == b.hash && a.key == b.key }

        @inlinable
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// The entries, least recently used first.
    @usableFromInline var slots: OrderedDictionary<StoredKey, Slot> = [:]

    /// The sum of the entries' costs (`totalCost`).
    @usableFromInline var costSum = 0

    /// The most `totalCost` may reach once `insert` or `evict` returns (but see `insert`). Setting it
    /// evicts nothing; call `evict()` to apply a lower one.
    public var budget: Int

    /// The most entries kept once `insert` or `evict` returns. Setting it evicts nothing.
    public var countLimit: Int

    /// A cache bounded by `budget` (in the entries' cost unit) and by `countLimit` entries; negative
    /// bounds count as zero. The defaults leave it unbounded.
    @inlinable
    public init(budget: Int = .max, countLimit: Int = .max) {
        self.budget = max(0, budget)
        self.countLimit = max(0, countLimit)
    }

    /// The sum of the costs of the entries kept.
    @inlinable
    public var totalCost: Int { costSum }

    /// How many entries are kept.
    @inlinable
    public var count: Int { slots.count }

    /// True when no entry is kept.
    @inlinable
    public var isEmpty: Bool { slots.isEmpty }

    /// The values, least recently used first, without changing their order.
    @inlinable
    public var values: some RandomAccessCollection<Value> { slots.values.lazy.map(\.value) }

    /// The value for `key`, which becomes the most recently used entry; nil when there is none.
    @inlinable
    public mutating func value(for key: Key) -> Value? {
        guard let index = slots.index(forKey: StoredKey(key)) else { return nil }
        let value = slots.elements[index].value.value
        markUsed(at: index)
        return value
    }

    /// The value for `key`, leaving the use order as it is.
    @inlinable
    public func peekValue(for key: Key) -> Value? { slots[StoredKey(key)]?.value }

    /// Keeps `value` for `key` as the most recently used entry, then evicts least recently used entries
    /// until the cache is within its budget and count limit. Returns what left the cache: the entry `key`
    /// had before, if any, then the evicted entries, oldest first.
    ///
    /// The new entry is never evicted by its own insert: one whose cost alone passes the budget is kept,
    /// alone, until the next insert or eviction. An owner that refuses such entries checks the cost
    /// before inserting. A negative cost counts as zero; an entry of cost zero takes no budget but
    /// still counts against `countLimit`.
    @inlinable
    public mutating func insert(_ value: Value, for key: Key, cost: Int) -> [Entry] {
        let cost = max(0, cost)
        var removed: [Entry] = []
        let storedKey = StoredKey(key)
        if let index = slots.index(forKey: storedKey) {
            let old = slots.remove(at: index).value
            costSum -= old.cost
            removed.append(Entry(key: key, value: old.value, cost: old.cost))
        }
        slots.updateValue(Slot(value: value, cost: cost), forKey: storedKey, insertingAt: slots.count)
        costSum += cost
        if costSum > budget || slots.count > countLimit {
            removed += evict(toBudget: budget, countLimit: countLimit, sparingNewest: true, sparing: nil)
        }
        return removed
    }

    /// Makes every entry `isUsed` accepts more recently used than every entry it rejects, each group
    /// keeping its order: the uses an owner noted during a pass (entries stamped with the current frame),
    /// applied in one step. Costs a scan, plus a move of the smaller group when the used entries are not
    /// already the newest; nothing moves when the same entries are used pass after pass.
    @inlinable
    public mutating func markUsed(where isUsed: (Key, Value) -> Bool) {
        var used: [Int] = []
        var unusedAfterFirstUsed: [Int] = []
        for (index, (key, slot)) in slots.elements.enumerated() {
            if isUsed(key.key, slot.value) {
                used.append(index)
            } else if !used.isEmpty {
                unusedAfterFirstUsed.append(index)
            }
        }
        guard let firstUsed = used.first, !unusedAfterFirstUsed.isEmpty else { return }
        if used.count <= unusedAfterFirstUsed.count {
            slots.move(indices: used, to: slots.count)
        } else {
            slots.move(indices: unusedAfterFirstUsed, to: firstUsed)
        }
    }

    /// Evicts least recently used entries until the total cost is within `budget` (the cache's own unless
    /// given) and the count within `countLimit` (likewise), skipping the entries `sparing` returns true
    /// for. Returns the evicted entries, oldest first. When the spared entries alone pass a bound, the
    /// cache stays over it.
    @inlinable
    public mutating func evict(toBudget budget: Int? = nil, countLimit: Int? = nil,
                                sparing: ((Key, Value) -> Bool)? = nil) -> [Entry] {
        evict(toBudget: max(0, budget ?? self.budget), countLimit: max(0, countLimit ?? self.countLimit),
              sparingNewest: false, sparing: sparing)
    }

    /// Removes the entry for `key` and returns it; nil when there is none.
    @inlinable
    @discardableResult
    public mutating func remove(_ key: Key) -> Entry? {
        guard let slot = slots.removeValue(forKey: StoredKey(key)) else { return nil }
        costSum -= slot.cost
        return Entry(key: key, value: slot.value, cost: slot.cost)
    }

    /// Removes every entry `shouldBeRemoved` returns true for, whatever its age; returns them, oldest
    /// first. The predicate is asked once for each entry, so it may read state that other threads
    /// change (a weak reference): what it answered is what is removed and returned.
    @inlinable
    public mutating func remove(where shouldBeRemoved: (Key, Value) -> Bool) -> [Entry] {
        var indices: [Int] = []
        for (index, (key, slot)) in slots.elements.enumerated() where shouldBeRemoved(key.key, slot.value) {
            indices.append(index)
        }
        return removeEntries(at: indices)
    }

    /// Removes every entry and returns them, oldest first.
    @inlinable
    @discardableResult
    public mutating func removeAll() -> [Entry] {
        let removed = slots.map { Entry(key: $0.key.key, value: $0.value.value, cost: $0.value.cost) }
        slots.removeAll()
        costSum = 0
        return removed
    }

    // MARK: Internals

    /// Makes the entry at `index` the most recently used.
    @inlinable
    mutating func markUsed(at index: Int) {
        guard index != slots.count - 1 else { return }
        // Removing and appending, rather than `move(indices:to:)`: OrderedDictionary re-indexes only the
        // entries on the shorter side of the removed one, where a move re-indexes every entry it passes
        // or scans the whole hash table.
        let (key, slot) = slots.remove(at: index)
        slots.updateValue(slot, forKey: key, insertingAt: slots.count)
    }

    /// Walks from the least recently used entry, evicting until both bounds hold; spared entries are
    /// skipped, not a stop. The newest entry is left out of the walk when `sparingNewest` (the one an
    /// insert just made).
    @inlinable
    mutating func evict(toBudget budget: Int, countLimit: Int, sparingNewest: Bool,
                        sparing: ((Key, Value) -> Bool)?) -> [Entry] {
        var excessCost = costSum - budget
        var excessCount = slots.count - countLimit
        guard excessCost > 0 || excessCount > 0 else { return [] }
        let end = sparingNewest ? slots.count - 1 : slots.count
        var victims: [Int] = []
        var index = 0
        while index < end && (excessCost > 0 || excessCount > 0) {
            let (key, slot) = slots.elements[index]
            if sparing?(key.key, slot.value) != true {
                victims.append(index)
                excessCost -= slot.cost
                excessCount -= 1
            }
            index += 1
        }
        return removeEntries(at: victims)
    }

    /// Removes the entries at `indices` (ascending) and returns them in that order.
    @inlinable
    mutating func removeEntries(at indices: [Int]) -> [Entry] {
        guard !indices.isEmpty else { return [] }
        let removed = indices.map { index -> Entry in
            let (key, slot) = slots.elements[index]
            return Entry(key: key.key, value: slot.value, cost: slot.cost)
        }
        if indices.last == indices.count - 1 {
            // The usual case: a run of the oldest entries.
            slots.removeFirst(indices.count)
        } else {
            // Anywhere else: one pass that keeps the rest in order, rather than a shift per entry.
            var isRemoved = [Bool](repeating: false, count: slots.count)
            for index in indices { isRemoved[index] = true }
            var kept = OrderedDictionary<StoredKey, Slot>(minimumCapacity: slots.count - indices.count)
            for (index, (key, slot)) in slots.elements.enumerated() where !isRemoved[index] {
                kept[key] = slot
            }
            slots = kept
        }
        costSum -= removed.reduce(0) { $0 + $1.cost }
        return removed
    }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
extension LRUCache.Entry: Sendable where Key: Sendable, Value: Sendable {}
extension LRUCache.Slot: Sendable where Value: Sendable {}
extension LRUCache.StoredKey: Sendable where Key: Sendable {}
