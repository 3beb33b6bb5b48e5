public import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization

/// Decoded images kept for reuse, keyed by source and the pixel size they were prepared at, within a
/// byte budget (least recently used out first). Avatars that repeat down a list decode once.
///
/// The budget bounds what the cache keeps alive: each entry costs its bitmap's bytes and its key's,
/// and a key holds no source — a path, a digest of in-memory bytes, or a bitmap's identity — so
/// neither encoded bytes nor a source bitmap stay alive because an image of them was cached. Keys
/// hash and compare in constant time, so the lock is held for a few operations whatever the sources.
/// - Thread: any
public final class ImageCache: Sendable {
    /// What an entry is keyed by: the source's identity, the crop and content mode, and the target
    /// pixel size.
    /// - Thread: any (a value)
    public struct Key: Hashable, Sendable {
        /// The source's identity (see `ImageSource.Identity`): never the source itself.
        public var source: ImageSource.Identity
        public var crop: Rect?
        public var contentMode: ContentMode
        public var pixelWidth: Int
        public var pixelHeight: Int
        public init(source: ImageSource, crop: Rect?, contentMode: ContentMode, pixelWidth: Int, pixelHeight: Int) {
            self.source = source.identity; self.crop = crop; self.contentMode = contentMode
            self.pixelWidth = pixelWidth; self.pixelHeight = pixelHeight
        }

        /// Bytes the key keeps alive besides itself (a path's characters), counted in its entry's cost.
        public var retainedBytes: Int { source.retainedBytes }
    }

    /// The bitmaps, least recently used first, each costed at its bytes plus its key's, bounded by
    /// the budget. (guarded by its lock)
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
    /// What the cache keeps alive, in bytes: its bitmaps and what their keys hold. Never more than
    /// `budgetBytes`.
    public var byteCount: Int { entries.withLock { $0.totalCost } }
    public var count: Int { entries.withLock { $0.count } }

    /// The bitmap for `key`, counting a hit or a miss.
    public func bitmap(for key: Key) -> Bitmap? {
        let found = entries.withLock { $0.value(for: key) }
        if found == nil { missCount.add(1, ordering: .relaxed) } else { hitCount.add(1, ordering: .relaxed) }
        return found
    }

    /// Keeps `bitmap` for `key` (an entry costing more than the whole budget is not kept).
    public func store(_ bitmap: Bitmap, for key: Key) {
        let cost = ByteCount.sum(bitmap.byteCount, key.retainedBytes)
        let removed = entries.withLock { entries -> [LRUCache<Key, Bitmap>.Entry] in
            guard cost <= entries.budget else { return [] }
            return entries.insert(bitmap, for: key, cost: cost)
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
