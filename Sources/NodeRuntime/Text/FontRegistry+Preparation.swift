import Compositor
import FoundationEssentials
import Glibc
import Dispatch

// Reading fonts before the first frame needs them. A first layout asks for the default faces (a few
// hundred kilobytes each), and the first emoji or CJK character asks fontconfig for a fallback and
// reads its file (Noto Color Emoji is 10 MB): on the UI thread, in a synchronous layout, that would be
// a frame spent on the disk. `prepare()` does all of it on a thread of its own as the app starts.

/// Where a registry's preparation stands, and who waits for it to finish.
/// - Thread: any (under `FontRegistry.preparation`'s lock)
struct FontPreparation: Sendable {
    enum Phase: Sendable { case notStarted, running, finished }
    var phase = Phase.notStarted
    /// Called once the work is done, after the lock is released.
    var completions: [@Sendable () -> Void] = []
    /// How long the work took, once finished (for the documentation's figures and the benchmarks).
    var duration: Duration?
}

/// One thread's read of one font file, which other threads needing the file wait for.
/// - Thread: any
final class FontFileRead: @unchecked Sendable {
    /// Entered by the reading thread when made, left when the file's result is stored.
    private let group = DispatchGroup()

    init() { group.enter() }

    func wait() { group.wait() }
    func finish() { group.leave() }
}

extension FontRegistry {
    /// Reads, on a background thread of its own, the faces a first layout most likely needs: the
    /// default family's and the monospaced family's files (regular and bold), and the fallbacks of
    /// the default family found through fontconfig for colour emoji (every block of 128 code points
    /// that holds emoji), CJK ideographs, kana and Hangul, Devanagari and Thai — asking fontconfig
    /// those questions and reading those files. Returns at once; `completion` runs on that thread when
    /// it is done (at once, on the calling thread, when it was done before). Calling it again starts
    /// nothing new. `Application` calls it on `FontRegistry.shared` as it starts.
    ///
    /// A layout that needs a file this is still reading waits for that read, never reads it twice;
    /// one that needs a face this does not cover (another family's fallback, a rarer script) reads
    /// it on its own thread as before. Setting `fontsFolder` or registering a family afterwards drops
    /// what was read, as it drops any file read.
    /// - Thread: any
    public func prepare(completion: (@Sendable () -> Void)? = nil) {
        let (starts, runNow) = preparation.withLock { state -> (Bool, Bool) in
            switch state.phase {
            case .notStarted:
                state.phase = .running
                if let completion { state.completions.append(completion) }
                return (true, false)
            case .running:
                if let completion { state.completions.append(completion) }
                return (false, false)
            case .finished:
                return (false, true)
            }
        }
        if runNow { completion?() }
        guard starts else { return }
        PlatformThread.detach(name: "tessera.fonts") { [self] in
            let clock = ContinuousClock()
            let start = clock.now
            warmUp()
            let elapsed = clock.now - start
            // The completions leave the state under the lock and are called (and let go) after it.
            let completions = preparation.withLock { state -> [@Sendable () -> Void] in
                state.phase = .finished
                state.duration = elapsed
                defer { state.completions = [] }
                return state.completions
            }
            TesseraLog.fonts.debug("fonts prepared in \(elapsed)")
            for completion in completions { completion() }
        }
    }

    /// True once `prepare()` has been called. - Thread: any
    public var hasStartedPreparing: Bool { preparation.withLock { $0.phase != .notStarted } }

    /// How long `prepare()`'s work took, once it is done. - Thread: any
    public var preparationDuration: Duration? { preparation.withLock { $0.duration } }

    /// The work of `prepare()`, on its thread: resolving the default faces reads their files; finding
    /// the faces that draw the sample text asks fontconfig and reads the fallbacks' files.
    ///
    /// The fallbacks' pages are then given back (`FontFile.dropResidentPages`): what the read ahead
    /// keeps is fontconfig's answers, the opened faces and the system's page cache, so the first emoji
    /// costs no disk read and no fontconfig query, while an app that never shows one does not hold
    /// the hundreds of kilobytes of tables the lookup touched (0.6 MB with Noto Color Emoji and WenQuanYi).
    private func warmUp() {
        let family = defaultFamily
        for font in [TextFont(family: family, size: 15), TextFont(family: family, size: 15, isBold: true),
                     .monospaced(size: 15), .monospaced(size: 15, bold: true)] {
            _ = resolve(font)
        }
        let ownFiles = Set(filesRead.keys)
        let measurer = TextMeasurer(runs: [TextAttributes(font: TextFont(family: family, size: 15))], registry: self, scale: 1)
        _ = measurer.faceRuns(of: Self.preparedText[...], run: 0)
        for (location, file) in filesRead where !ownFiles.contains(location) { file.dropResidentPages() }
    }

    /// One character from each block of 128 code points a fallback is looked up by, for the scripts
    /// and symbols `prepare()` covers: emoji with their own presentation, symbols asked to be emoji
    /// (with VS16), CJK ideographs (the unified block), kana and CJK punctuation, Hangul syllables,
    /// halfwidth and fullwidth forms, Devanagari and Thai.
    static let preparedText: String = {
        var scalars: [String] = []
        func firstInEachBlock(_ range: ClosedRange<UInt32>, suffix: String = "", where include: (Unicode.Scalar) -> Bool) {
            var block = range.lowerBound >> 7
            while block <= range.upperBound >> 7 {
                let low = max(range.lowerBound, block << 7), high = min(range.upperBound, (block << 7) | 0x7F)
                if let scalar = (low...high).lazy.compactMap(Unicode.Scalar.init).first(where: include) {
                    scalars.append(String(Character(scalar)) + suffix)
                }
                block += 1
            }
        }
        firstInEachBlock(0x1F000...0x1FAFF) { $0.properties.isEmojiPresentation }
        firstInEachBlock(0x2000...0x2BFF) { $0.properties.isEmojiPresentation }
        firstInEachBlock(0x2000...0x2BFF, suffix: "\u{FE0F}") { $0.properties.isEmoji && !$0.properties.isEmojiPresentation }
        // A character that stands alone and is drawn (spaces and marks look nothing up).
        let standsAlone: (Unicode.Scalar) -> Bool = {
            switch $0.properties.generalCategory {
            case .unassigned, .spaceSeparator, .control, .format, .nonspacingMark, .spacingMark, .enclosingMark,
                 .surrogate, .privateUse:
                return false
            default:
                return true
            }
        }
        for range: ClosedRange<UInt32> in [0x3000...0x30FF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF00...0xFFEF,
                                           0x0900...0x097F, 0x0E00...0x0E7F] {
            firstInEachBlock(range, where: standsAlone)
        }
        // Spaces keep each sample its own cluster.
        return scalars.joined(separator: " ")
    }()
}
