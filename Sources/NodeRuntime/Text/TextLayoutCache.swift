import Compositor

/// Layouts already measured, by (text, width, options, scale, font registry): a node measured for its
/// size and then drawn at that width measures once, and equal texts in a list share their layout.
///
/// Bounded by `capacity` entries and by `budgetBytes` (each layout's approximate size plus its key's
/// text); the least recently used go first, as many as the new one needs (a layout larger than the
/// whole budget is kept alone until the next is stored). Two threads
/// measuring the same key at once may both measure; the first result stored is the one both get
/// afterwards.
/// - Thread: any
public final class TextLayoutCache: Sendable {
    /// The cache `TextLayout.measure` uses unless given another.
    public static let shared = TextLayoutCache()

    /// What a layout is kept by. The text enters it as a digest made once, when the key is made
    /// (outside the lock), so hashing and comparing keys inside the lock costs the same for a word
    /// and for a megabyte; the text itself is compared once, after the lock, to rule out a digest
    /// shared by two texts.
    struct Key: Hashable, Sendable {
        /// A hash of the text (its runs and attributes), made once.
        let textDigest: Int
        var width: Double
        var options: TextLayoutOptions
        var scale: Double
        var registry: Int
        /// The registry's `generation` when measured: a layout made with other fonts is not reused.
        var fontsGeneration: Int

        init(text: AttributedText, width: Double, options: TextLayoutOptions, scale: Double, registry: Int,
             fontsGeneration: Int = 0) {
            self.init(textDigest: text.hashValue, width: width, options: options, scale: scale, registry: registry,
                      fontsGeneration: fontsGeneration)
        }

        init(textDigest: Int, width: Double, options: TextLayoutOptions, scale: Double, registry: Int,
             fontsGeneration: Int = 0) {
            self.textDigest = textDigest
            self.width = width
            self.options = options
            self.scale = scale
            self.registry = registry
            self.fontsGeneration = fontsGeneration
        }
    }

    /// A kept layout and the text it was measured for (checked on a hit, outside the lock).
    struct Entry: Sendable {
        let layout: TextLayout
        let text: AttributedText
    }

    /// Hit and miss counts since creation or `removeAll()`.
    /// - Thread: any (a value)
    public struct Statistics: Hashable, Sendable {
        public var hits = 0
        public var misses = 0
        public var count = 0
        /// About how many bytes the kept layouts and their keys hold.
        public var bytes = 0
    }

    private struct State: Sendable {
        /// The layouts, least recently used first, costed in approximate bytes.
        var entries: LRUCache<Key, Entry>
        /// Hits and misses; `count` and `bytes` are read from `entries`.
        var statistics = Statistics()
    }

    private let state: Locked<State>
    /// The most layouts kept.
    public let capacity: Int

    /// The most bytes kept (approximately).
    public let budgetBytes: Int

    public init(capacity: Int = 512, budgetBytes: Int = 8 << 20) {
        self.capacity = max(1, capacity)
        self.budgetBytes = max(0, budgetBytes)
        state = Locked(State(entries: LRUCache(budget: self.budgetBytes, countLimit: self.capacity)))
    }

    /// Counts so far. - Thread: any
    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.count = state.entries.count
            statistics.bytes = state.entries.totalCost
            return statistics
        }
    }

    /// Drops every layout and resets the counts. - Thread: any
    public func removeAll() {
        let removed = state.withLock { state in
            state.statistics = Statistics()
            return state.entries.removeAll()
        }
        _ = removed  // the layouts are let go here, after unlocking
    }

    /// The layout kept for `key` and `text`, or nil. The text is compared after unlocking.
    func layout(for key: Key, text: AttributedText) -> TextLayout? {
        let found = state.withLock { state -> Entry? in
            guard let entry = state.entries.value(for: key) else {
                state.statistics.misses += 1
                return nil
            }
            state.statistics.hits += 1
            return entry
        }
        guard let found else { return nil }
        // Two texts with one digest: the kept layout is another text's.
        return found.text == text ? found.layout : nil
    }

    /// Stores `layout` for `text` unless another thread stored one for `key` first; returns the stored
    /// one (this layout when the one stored was measured for another text with the same digest).
    func store(_ layout: TextLayout, for key: Key, text: AttributedText) -> TextLayout {
        let bytes = layout.approximateByteCount + text.runs.reduce(64) { $0 + 48 + $1.text.utf8.count }
        let entry = Entry(layout: layout, text: text)
        let (existing, evicted) = state.withLock { state -> (Entry?, [LRUCache<Key, Entry>.Entry]) in
            if let existing = state.entries.peekValue(for: key) { return (existing, []) }
            return (nil, state.entries.insert(entry, for: key, cost: bytes))
        }
        _ = evicted  // the layouts are let go here, after unlocking
        guard let existing, existing.text == text else { return layout }
        return existing.layout
    }
}

extension TextLayout {
    /// Measures `text` for a box `width` points wide (infinity: no wrapping) at `scale` pixels per point,
    /// or returns the cached layout for the same inputs.
    ///
    /// Fallbacks: a NaN, zero or negative width gives an empty layout (size zero, no lines) that is
    /// truncated when the text is not empty; a bad scale counts as 1. Text longer than
    /// `maximumLineCount` lines is truncated, so a megabyte of text measures in bounded time.
    /// - Thread: any; measuring uses the calling thread's own font objects.
    public static func measure(_ text: AttributedText, width: Double, options: TextLayoutOptions = TextLayoutOptions(),
                               scale: Double = 1, fonts: FontRegistry = .shared,
                               cache: TextLayoutCache? = .shared) -> TextLayout {
        TextWorkCounters.countLayout()
        let width = width.isNaN || width < 0 ? 0 : width
        let scale = scale.isFinite && scale > 0 ? min(scale, 8) : 1
        let key = TextLayoutCache.Key(text: text, width: width, options: options, scale: scale, registry: fonts.identity,
                                      fontsGeneration: fonts.generation)
        if let cache, let cached = cache.layout(for: key, text: text) { return cached }
        var builder = TextLayoutBuilder(text: text, width: width, options: options, scale: scale, registry: fonts)
        let layout = builder.build()
        return cache?.store(layout, for: key, text: text) ?? layout
    }
}
