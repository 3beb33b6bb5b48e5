internal import CHarfBuzz
internal import CSDL
import Compositor
import FoundationEssentials
import Glibc
import Dispatch

// SDL_ttf keeps one FreeType library for the process, and FreeType's library object is not locked:
// creating and destroying faces from two threads at once corrupts it. Using one face from two threads
// at once is just as unsafe. So:
//   - every open and close goes through `FontLibrary`, under one process-wide lock;
//   - every thread measures and draws with its own `TTF_Font` objects, kept in a per-thread cache
//     (`ThreadFontCache`) and closed, under the lock, when the thread ends or the cache evicts them.
// Measuring and rendering themselves need no lock: they touch only the calling thread's face.

/// The process's SDL_ttf library: initialised once, and the lock around opening and closing faces.
/// - Thread: any
enum FontLibrary {
    private struct State {
        var isInitialized = false
        var initializationFailed = false
    }
    /// Guards SDL_ttf's global FreeType library: `TTF_Init`, `TTF_OpenFont*`, `TTF_CloseFont`.
    private static let lock = Locked(State())

    /// Runs `body` with the library initialised, under the lock. Nil when SDL_ttf cannot start.
    private static func withLibrary<T>(_ body: () -> T?) -> T? {
        lock.withLock { state in
            if !state.isInitialized && !state.initializationFailed {
                // TTF_Init exactly once for the process; it is never balanced by TTF_Quit because fonts
                // may live until their threads end.
                if TTF_Init() == 0 { state.isInitialized = true } else { state.initializationFailed = true }
            }
            guard state.isInitialized else { return nil }
            return body()
        }
    }

    /// Opens `file`'s face (its `faceIndex`) over its bytes at `pixelSize` pixels per em. The caller
    /// owns the result and must hand it back to `close`.
    static func open(_ file: FontFile, pixelSize: Int) -> OpaquePointer? {
        withLibrary {
            guard let stream = SDL_RWFromConstMem(file.bytes.baseAddress, Int32(clamping: file.byteCount)) else { return nil }
            // freesrc = 1: the stream is closed with the font (or now, if opening fails).
            return TTF_OpenFontIndexRW(stream, 1, Int32(clamping: pixelSize), file.faceIndex)
        }
    }

    static func close(_ font: OpaquePointer) {
        _ = withLibrary { TTF_CloseFont(font) }
    }

    /// Checks that `file`'s face opens as a font. Returns SDL_ttf's reason when it does not.
    static func probe(_ file: FontFile) -> String? {
        let reason: String?? = withLibrary {
            guard file.byteCount > 0 else { return .some("the file is empty") }
            guard let stream = SDL_RWFromConstMem(file.bytes.baseAddress, Int32(clamping: file.byteCount)),
                  let font = TTF_OpenFontIndexRW(stream, 1, 12, file.faceIndex) else {
                return .some(String(cString: SDL_GetError()))
            }
            TTF_CloseFont(font)
            return .some(nil)
        }
        return reason ?? "SDL_ttf could not be initialised"
    }
}

/// The vertical metrics of a face, in pixels.
struct FontMetrics: Sendable, Hashable {
    var ascent: Int
    /// Below the baseline, positive.
    var descent: Int
    var lineSkip: Int
}

/// One thread's open face at one pixel size. Only the thread that made it may use it.
/// - Thread: the owning thread only
final class FontHandle {
    let file: FontFile
    let pixelSize: Int
    private let font: OpaquePointer
    let metrics: FontMetrics
    /// For a face of fixed-size bitmaps (colour emoji) that opens far larger than asked: the factor
    /// that brings its glyphs to the text's size. 1 for scalable faces.
    let glyphScale: Double
    /// What the face's shaping settings currently are, so they are set only when they change.
    private var direction: TTF_Direction = TTF_DIRECTION_LTR
    private var script: TextScript?
    /// HarfBuzz's font of the file at this size (`hb_font_t`), and the buffer it shapes into: for the
    /// places of clusters (`clusterAdvances`).
    private let shapingFont: OpaquePointer
    private var shapingBuffer: OpaquePointer?
    /// Widths already measured, by text and shaping settings; bounded by `widthCacheLimit`.
    private var widths: [WidthKey: Int32] = [:]
    private static let widthCacheLimit = 8_192

    private struct WidthKey: Hashable {
        // A copy, so a cached width never keeps a large source string alive.
        var text: String
        var rightToLeft: Bool
        var script: TextScript
    }

    init?(file: FontFile, pixelSize: Int, synthesizesBold: Bool) {
        guard let font = FontLibrary.open(file, pixelSize: pixelSize) else { return nil }
        TextWorkCounters.countFaceOpened()
        self.file = file
        self.pixelSize = pixelSize
        self.font = font
        if synthesizesBold { TTF_SetFontStyle(font, TTF_STYLE_BOLD) }
        TTF_SetFontHinting(font, TTF_HINTING_LIGHT)
        TTF_SetFontDirection(font, TTF_DIRECTION_LTR)
        let ascent = Int(TTF_FontAscent(font))
        let descent = Int(-TTF_FontDescent(font))
        metrics = FontMetrics(ascent: ascent, descent: max(0, descent),
                              lineSkip: max(Int(TTF_FontLineSkip(font)), ascent + max(0, descent)))
        let height = Int(TTF_FontHeight(font))
        glyphScale = height > 2 * pixelSize ? Double(pixelSize) * 1.17 / Double(height) : 1
        shapingFont = tessera_hb_font_create(file.shapingFace, Int32(clamping: pixelSize))
    }

    /// Which face draws each character this face lacks (nil: this one), by scalar with bit 31 set when
    /// a VS16 or keycap follows; kept with the face so later layouts on this thread skip the lookups.
    var fallbackDecisions: [UInt32: ResolvedFace?] = [:]
    /// For the first 2,048 code points (Latin to Arabic, most chat text): 1 when this face draws the
    /// character itself, 0 when not known yet or drawn by a fallback (see `fallbackDecisions`).
    var drawsOwnCharacter = [UInt8](repeating: 0, count: 0x800)
    /// Colour-bitmap text (emoji) already rendered and scaled to this face's size, by text and
    /// contents scale; emoji repeat, and rendering one at its 128-pixel strike costs far more than a
    /// copy. Bounded by `scaledGlyphLimit` entries.
    var scaledGlyphs: [String: Bitmap] = [:]
    static let scaledGlyphLimit = 256

    /// Whether the face has a glyph for `scalar`.
    func provides(_ scalar: Unicode.Scalar) -> Bool { TTF_GlyphIsProvided32(font, scalar.value) != 0 }

    deinit {
        if let shapingBuffer { hb_buffer_destroy(shapingBuffer) }
        hb_font_destroy(shapingFont)
        FontLibrary.close(font)
    }

    private func configure(rightToLeft: Bool, script: TextScript) {
        let wanted = rightToLeft ? TTF_DIRECTION_RTL : TTF_DIRECTION_LTR
        if wanted != direction {
            TTF_SetFontDirection(font, wanted)
            direction = wanted
        }
        if script != self.script {
            TTF_SetFontScriptName(font, script.tag)
            self.script = script
        }
    }

    /// The advance width of `text` in pixels, shaped in the given direction and script.
    func width(of text: Substring, rightToLeft: Bool, script: TextScript) -> Int {
        guard !text.isEmpty else { return 0 }
        let key = WidthKey(text: String(text), rightToLeft: rightToLeft, script: script)
        if let known = widths[key] { return Int(known) }
        configure(rightToLeft: rightToLeft, script: script)
        TextWorkCounters.countShaping()
        var width: Int32 = 0, height: Int32 = 0
        let status = key.text.withCString { TTF_SizeUTF8(font, $0, &width, &height) }
        let result = status == 0 ? max(0, width) : 0
        if widths.count >= FontHandle.widthCacheLimit { widths.removeAll(keepingCapacity: true) }
        widths[key] = result
        return Int(result)
    }

    /// Where each cluster of `units` starts when they are shaped as one piece, as SDL_ttf shapes them
    /// (HarfBuzz, in the given direction and script): the first UTF-16 offset of each cluster in
    /// logical order, with the advance of the clusters before it, and the advance of the whole piece,
    /// in 26.6 fixed-point pixels. A cluster is a grapheme or more (a ligature), never less.
    func clusterAdvances(of units: [UInt16], rightToLeft: Bool, script: TextScript) -> (starts: [Int], advances: [Int], total: Int) {
        guard !units.isEmpty else { return ([], [], 0) }
        if shapingBuffer == nil { shapingBuffer = hb_buffer_create() }
        TextWorkCounters.countShaping()
        var capacity = units.count + 8
        var clusters = [Int32](repeating: 0, count: capacity), advances = [Int32](repeating: 0, count: capacity)
        var count = 0
        while true {
            count = Int(units.withUnsafeBufferPointer { text in
                script.tag.withCString { tag in
                    tessera_hb_shape_clusters(shapingFont, shapingBuffer, text.baseAddress, Int32(units.count),
                                              rightToLeft ? 1 : 0, tag, &clusters, &advances, Int32(capacity))
                }
            })
            guard count > capacity else { break }
            capacity = count
            clusters = [Int32](repeating: 0, count: capacity)
            advances = [Int32](repeating: 0, count: capacity)
        }
        // Glyphs come in visual order; a right-to-left piece's clusters descend.
        var glyphs = Array(zip(clusters.prefix(count), advances.prefix(count)))
        if rightToLeft { glyphs.reverse() }
        var starts: [Int] = [], prefix: [Int] = []
        var total = 0
        for (cluster, advance) in glyphs {
            let start = Int(cluster)
            if starts.last != start {
                starts.append(start)
                prefix.append(total)
            }
            total += Int(advance)
        }
        return (starts, prefix, total)
    }

    /// Renders `text` as antialiased glyphs in `color` on a transparent surface whose top is `ascent`
    /// above the baseline. The caller frees the surface (`SDL_FreeSurface`).
    func render(_ text: String, color: Color, rightToLeft: Bool, script: TextScript) -> UnsafeMutablePointer<SDL_Surface>? {
        guard !text.isEmpty else { return nil }
        configure(rightToLeft: rightToLeft, script: script)
        TextWorkCounters.countShaping()
        let sdlColor = SDL_Color(r: color.red, g: color.green, b: color.blue, a: color.alpha)
        return text.withCString { TTF_RenderUTF8_Blended(font, $0, sdlColor) }
    }
}

/// The calling thread's open faces, by (file, pixel size, synthesized bold). Faces are opened on first
/// use and closed when the thread ends; the least recently used is closed beyond `capacity`.
/// - Thread: the owning thread only (reached through `current`)
final class ThreadFontCache {
    struct Key: Hashable {
        var file: Int
        var pixelSize: Int
        var synthesizesBold: Bool
    }
    /// The open faces, least recently used first; one beyond `capacity` closes the oldest.
    private var handles = LRUCache<Key, FontHandle>(countLimit: ThreadFontCache.capacity)
    /// Keys whose face failed to open, so a bad size is not retried on every call.
    private var failed: Set<Key> = []
    static let capacity = 24

    /// The cache of the calling thread, made on first use.
    static var current: ThreadFontCache {
        if let existing = pthread_getspecific(threadFontCacheKey) {
            return Unmanaged<ThreadFontCache>.fromOpaque(existing).takeUnretainedValue()
        }
        let cache = ThreadFontCache()
        // Released (and its faces closed) by the key's destructor when the thread exits.
        pthread_setspecific(threadFontCacheKey, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }

    /// The thread's face for `face` at `pixelSize`, opening it if needed. Nil when it cannot be opened.
    func handle(for face: ResolvedFace, pixelSize: Int) -> FontHandle? {
        let key = Key(file: face.file.identity, pixelSize: pixelSize, synthesizesBold: face.synthesizesBold)
        if let handle = handles.value(for: key) { return handle }
        guard !failed.contains(key) else { return nil }
        guard let handle = FontHandle(file: face.file, pixelSize: pixelSize, synthesizesBold: face.synthesizesBold) else {
            failed.insert(key)
            return nil
        }
        // A face evicted to make room is released here, which closes it under the library's lock.
        _ = handles.insert(handle, for: key, cost: 1)
        return handle
    }

    /// Faces this thread holds open. For tests.
    var openCount: Int { handles.count }
}

/// The per-thread slot of `ThreadFontCache.current`. Its destructor releases the thread's cache,
/// which closes that thread's faces under the library lock.
private let threadFontCacheKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<ThreadFontCache>.fromOpaque(pointer).release()
    }
    Contract.require(status == 0, "pthread_key_create failed (\(status)) for the per-thread font cache")
    return key
}()
