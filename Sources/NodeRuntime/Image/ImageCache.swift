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

    private struct Entry {
        var bitmap: Bitmap
        var lastUse: UInt64
    }
    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var budgetBytes: Int
    }
    private let state: Locked<State>
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// The cache image nodes use unless given another.
    public static let shared = ImageCache(budgetBytes: 64 << 20)

    public init(budgetBytes: Int) {
        state = Locked(State(budgetBytes: max(0, budgetBytes)))
    }

    /// The budget in bytes; lowering it evicts at once.
    public var budgetBytes: Int {
        get { state.withLock { $0.budgetBytes } }
        set { state.withLock { $0.budgetBytes = max(0, newValue); Self.evict(&$0) } }
    }

    public var hits: Int { hitCount.load(ordering: .relaxed) }
    public var misses: Int { missCount.load(ordering: .relaxed) }
    public var byteCount: Int { state.withLock { $0.bytes } }
    public var count: Int { state.withLock { $0.entries.count } }

    /// The bitmap for `key`, counting a hit or a miss.
    public func bitmap(for key: Key) -> Bitmap? {
        let found = state.withLock { state -> Bitmap? in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.bitmap
        }
        if found == nil { missCount.add(1, ordering: .relaxed) } else { hitCount.add(1, ordering: .relaxed) }
        return found
    }

    /// Keeps `bitmap` for `key` (a bitmap larger than the whole budget is not kept).
    public func store(_ bitmap: Bitmap, for key: Key) {
        state.withLock { state in
            guard bitmap.byteCount <= state.budgetBytes else { return }
            state.clock += 1
            if let old = state.entries[key] { state.bytes -= old.bitmap.byteCount }
            state.entries[key] = Entry(bitmap: bitmap, lastUse: state.clock)
            state.bytes += bitmap.byteCount
            Self.evict(&state)
        }
    }

    /// Empties the cache and zeroes the counts.
    public func removeAll() {
        state.withLock { $0.entries.removeAll(); $0.bytes = 0 }
        hitCount.store(0, ordering: .relaxed)
        missCount.store(0, ordering: .relaxed)
    }

    private static func evict(_ state: inout State) {
        guard state.bytes > state.budgetBytes else { return }
        for (key, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.bytes > state.budgetBytes else { break }
            state.entries[key] = nil
            state.bytes -= entry.bitmap.byteCount
        }
    }
}
