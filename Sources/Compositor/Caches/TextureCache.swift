/// The textures made from layer contents, keyed by bitmap identity, with a byte budget.
///
/// An entry holds its bitmap's storage weakly: the cache never keeps pixels alive. When the last copy of
/// a bitmap goes away (on any thread), the next frame finds the entry dead and destroys its textures on
/// the UI thread. Entries over the budget are evicted least-recently-drawn first; an evicted bitmap that
/// is drawn again is simply uploaded again from the layer's committed contents.
///
/// A draw only stamps its entry with the frame; `finishFrame` applies the frame's draws to the order in
/// one step, so drawing a layer costs one lookup however many textures are resident.
/// - Thread: main
final class TextureCache {
    struct Tile {
        let texture: TextureHandle
        /// The part of the bitmap this tile holds, in the bitmap's pixels.
        let region: PixelRect
    }

    final class Entry {
        weak var storage: Bitmap.Storage?
        let tiles: [Tile]
        let byteCount: Int
        /// The last frame that drew the entry: `finishFrame` orders entries by it, and that frame spares
        /// the entry from eviction.
        var lastDrawnFrame: Int
        init(storage: Bitmap.Storage, tiles: [Tile], byteCount: Int, frame: Int) {
            self.storage = storage; self.tiles = tiles; self.byteCount = byteCount; self.lastDrawnFrame = frame
        }
    }

    /// The budget in bytes. The textures drawn in the current frame are never evicted, so one frame that
    /// needs more than the budget goes over it rather than drop what it shows.
    /// Eviction happens at the end of a frame (`finishFrame`).
    var budgetBytes: Int
    /// The entries in least-recently-drawn order as of the last `finishFrame`, costed in bytes. Unbounded
    /// itself: a frame's draws never evict, and `finishFrame` applies `budgetBytes` once the frame is
    /// drawn.
    private var entries = LRUCache<BitmapIdentity, Entry>()

    init(budgetBytes: Int) { self.budgetBytes = budgetBytes }

    /// Bytes of the bitmaps that have textures.
    var liveBytes: Int { entries.totalCost }

    var liveTextureCount: Int { entries.values.reduce(0) { $0 + $1.tiles.count } }

    /// The tiles of `bitmap` for drawing in `frame`, uploading them if they are not resident.
    /// Returns nil when the backend refused to make a texture (nothing is drawn for that layer).
    func tiles(for bitmap: Bitmap, frame: Int, tileSide: Int, backend: RenderBackend,
               statistics: inout FrameStatistics) -> [Tile]? {
        if let entry = entries.peekValue(for: bitmap.identity), entry.storage != nil {
            entry.lastDrawnFrame = frame
            return entry.tiles
        }
        let start = MonotonicClock.nanoseconds()
        let passesBefore = PixelPass.uiThreadCount
        defer {
            statistics.uploadMilliseconds += MonotonicClock.milliseconds(since: start)
            statistics.uploadPixelPasses += PixelPass.uiThreadCount - passesBefore
        }
        let side = max(1, tileSide)
        var tiles: [Tile] = []
        var y = 0
        while y < bitmap.height {
            let height = min(side, bitmap.height - y)
            var x = 0
            while x < bitmap.width {
                let width = min(side, bitmap.width - x)
                let region = PixelRect(x: x, y: y, width: width, height: height)
                guard let texture = backend.makeTexture(from: bitmap, region: region) else {
                    tiles.forEach { backend.destroyTexture($0.texture) }
                    return nil
                }
                tiles.append(Tile(texture: texture, region: region))
                statistics.uploads += 1
                statistics.uploadBytes += width * height * 4
                x += width
            }
            y += height
        }
        let entry = Entry(storage: bitmap.storage, tiles: tiles, byteCount: bitmap.byteCount, frame: frame)
        // Unbounded, so this evicts nothing; it returns the dead entry the identity had, if any.
        destroyTextures(of: entries.insert(entry, for: bitmap.identity, cost: entry.byteCount), backend: backend)
        return tiles
    }

    /// Ends `frame`: makes the entries it drew the most recently drawn, destroys the textures of bitmaps
    /// that no longer exist, then evicts over the budget. Runs once, after the frame's walk: evicting
    /// during the walk could drop a texture that a later layer of the same frame draws, and upload it
    /// again.
    func finishFrame(_ frame: Int, backend: RenderBackend, statistics: inout FrameStatistics) {
        entries.markUsed(where: { $1.lastDrawnFrame == frame })
        releaseDeadEntries(backend: backend, statistics: &statistics)
        if liveBytes > budgetBytes { evictOverBudget(keepingFrame: frame, backend: backend, statistics: &statistics) }
    }

    /// Drops least-recently-drawn entries until the cache fits its budget, sparing this frame's.
    private func evictOverBudget(keepingFrame frame: Int, backend: RenderBackend, statistics: inout FrameStatistics) {
        let evicted = entries.evict(toBudget: budgetBytes, sparing: { $1.lastDrawnFrame >= frame })
        destroyTextures(of: evicted, backend: backend)
        statistics.evictions += evicted.count
    }

    /// Destroys the textures of bitmaps that no longer exist.
    private func releaseDeadEntries(backend: RenderBackend, statistics: inout FrameStatistics) {
        let dead = entries.remove(where: { $1.storage == nil })
        destroyTextures(of: dead, backend: backend)
        statistics.texturesReleased += dead.count
    }

    /// Destroys every texture (renderer reset, teardown).
    func removeAll(backend: RenderBackend) {
        destroyTextures(of: entries.removeAll(), backend: backend)
    }

    private func destroyTextures(of removed: [LRUCache<BitmapIdentity, Entry>.Entry], backend: RenderBackend) {
        for entry in removed { entry.value.tiles.forEach { backend.destroyTexture($0.texture) } }
    }

    /// True when `bitmap` has resident textures.
    func isResident(_ bitmap: Bitmap) -> Bool { entries.peekValue(for: bitmap.identity)?.storage != nil }
}
