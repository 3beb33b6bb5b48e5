public import Compositor
import Foundation
import Synchronization

/// Decoded images kept for reuse, keyed by source and the pixel size they were prepared at, within a
/// byte budget (least recently used out first). Avatars that repeat down a list decode once.
/// - Thread: any
public final class ImageCache: Sendable {
    /// What an entry is keyed by: the source, the crop and content mode, and the target pixel size.
    /// Sources match as `ImageSource` does: byte sources only when their bytes are equal, never on a
    /// matching digest alone.
    public struct Key: Hashable, Sendable {
        public var source: ImageSource
        public var crop: Rect?
        public var contentMode: ContentMode
        public var pixelWidth: Int
        public var pixelHeight: Int
        public init(source: ImageSource, crop: Rect?, contentMode: ContentMode, pixelWidth: Int, pixelHeight: Int) {
            self.source = source; self.crop = crop; self.contentMode = contentMode
            self.pixelWidth = pixelWidth; self.pixelHeight = pixelHeight
        }
    }

    /// The bitmaps, least recently used first, costed in bytes and bounded by the budget.
    private let entries: Locked<LRUCache<Key, Bitmap>>
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// The cache image nodes use unless given another.
    public static let shared = ImageCache(budgetBytes: 64 << 20)

    public init(budgetBytes: Int) {
        entries = Locked(LRUCache(budget: max(0, budgetBytes)))
    }

    /// The budget in bytes; lowering it evicts at once.
    public var budgetBytes: Int {
        get { entries.withLock { $0.budget } }
        set {
            let evicted = entries.withLock { entries in
                entries.budget = max(0, newValue)
                return entries.evict()
            }
            _ = evicted  // the bitmaps are let go here, after unlocking
        }
    }

    public var hits: Int { hitCount.load(ordering: .relaxed) }
    public var misses: Int { missCount.load(ordering: .relaxed) }
    public var byteCount: Int { entries.withLock { $0.totalCost } }
    public var count: Int { entries.withLock { $0.count } }

    /// The bitmap for `key`, counting a hit or a miss.
    public func bitmap(for key: Key) -> Bitmap? {
        let found = entries.withLock { $0.value(for: key) }
        if found == nil { missCount.add(1, ordering: .relaxed) } else { hitCount.add(1, ordering: .relaxed) }
        return found
    }

    /// Keeps `bitmap` for `key` (a bitmap larger than the whole budget is not kept).
    public func store(_ bitmap: Bitmap, for key: Key) {
        let removed = entries.withLock { entries -> [LRUCache<Key, Bitmap>.Entry] in
            guard bitmap.byteCount <= entries.budget else { return [] }
            return entries.insert(bitmap, for: key, cost: bitmap.byteCount)
        }
        _ = removed  // the bitmaps are let go here, after unlocking
    }

    /// Empties the cache and zeroes the counts.
    public func removeAll() {
        let removed = entries.withLock { $0.removeAll() }
        _ = removed  // the bitmaps are let go here, after unlocking
        hitCount.store(0, ordering: .relaxed)
        missCount.store(0, ordering: .relaxed)
    }
}
