/// How much of the text engine's costly work the calling thread has done: shaping calls, layouts
/// measured, UTF-16 units laid out, font files read (or waited for), FreeType faces opened, fontconfig
/// queries, and UTF-16 units examined by caret steps. Each thread counts its own, so a test or a benchmark reads
/// what the UI thread did without seeing the workers' work.
///
/// Counting costs two calls to the thread's specific data per event, cheap next to what is counted.
/// - Thread: any; each thread sees its own counts.
struct TextWorkCounters: Equatable, Sendable {
    /// HarfBuzz runs, through SDL_ttf (a width measured, glyphs rendered) or directly (caret
    /// positions): width cache hits are not counted.
    var shapingCalls = 0
    /// `TextLayout.measure` calls (cache hits included) and line windows built.
    var layoutsMeasured = 0
    /// UTF-16 units of the lines laid out, and of the lines broken to find where lines start.
    var unitsLaidOut = 0
    /// Font files read from disk (each file is read once per registry).
    var fontFilesRead = 0
    /// FreeType faces opened over font bytes already read (each thread opens its own).
    var facesOpened = 0
    /// Questions asked of fontconfig (the answers are cached).
    var fontconfigQueries = 0
    /// Waits for a font file another thread was reading (`FontRegistry.prepare()`'s).
    var fontReadWaits = 0
    /// UTF-16 units read to find a grapheme or word boundary for a caret step or a snap.
    var unitsExamined = 0

    private static let shaping = ThreadLocalCounter()
    private static let layouts = ThreadLocalCounter()
    private static let laidOut = ThreadLocalCounter()
    private static let files = ThreadLocalCounter()
    private static let faces = ThreadLocalCounter()
    private static let fontconfig = ThreadLocalCounter()
    private static let waits = ThreadLocalCounter()
    private static let examined = ThreadLocalCounter()

    /// The calling thread's counts since it started.
    static var current: TextWorkCounters {
        TextWorkCounters(shapingCalls: shaping.value, layoutsMeasured: layouts.value, unitsLaidOut: laidOut.value,
                         fontFilesRead: files.value, facesOpened: faces.value, fontconfigQueries: fontconfig.value,
                         fontReadWaits: waits.value, unitsExamined: examined.value)
    }

    /// What the calling thread did since `earlier` (a value of `current`).
    static func since(_ earlier: TextWorkCounters) -> TextWorkCounters {
        let now = current
        return TextWorkCounters(shapingCalls: now.shapingCalls - earlier.shapingCalls,
                                layoutsMeasured: now.layoutsMeasured - earlier.layoutsMeasured,
                                unitsLaidOut: now.unitsLaidOut - earlier.unitsLaidOut,
                                fontFilesRead: now.fontFilesRead - earlier.fontFilesRead,
                                facesOpened: now.facesOpened - earlier.facesOpened,
                                fontconfigQueries: now.fontconfigQueries - earlier.fontconfigQueries,
                                fontReadWaits: now.fontReadWaits - earlier.fontReadWaits,
                                unitsExamined: now.unitsExamined - earlier.unitsExamined)
    }

    @inline(__always) static func countShaping() { shaping.value += 1 }
    @inline(__always) static func countLayout() { layouts.value += 1 }
    @inline(__always) static func countLaidOut(_ units: Int) { laidOut.value += units }
    @inline(__always) static func countFileRead() { files.value += 1 }
    @inline(__always) static func countFaceOpened() { faces.value += 1 }
    @inline(__always) static func countFontconfigQuery() { fontconfig.value += 1 }
    @inline(__always) static func countFontReadWait() { waits.value += 1 }
    @inline(__always) static func countExamined(_ units: Int) { examined.value += units }
}
