internal import CHarfBuzz
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization

/// Why a font could not be used. Every case names the file (or the folders tried), so the message in
/// a log says what to fix.
/// - Thread: any
public enum FontError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No fonts folder was configured and the bundled faces were found in none of the places tried.
    case fontsFolderNotFound(tried: [String])
    /// The font file does not exist.
    case missingFile(path: String)
    /// The file exists but could not be read.
    case unreadableFile(path: String, reason: String)
    /// The file was read but SDL_ttf (FreeType) does not accept it as a font.
    case corruptFile(path: String, reason: String)
    /// No font at all could be opened for text in `face` (a family and weight, "DejaVu Sans bold"):
    /// not its own file, not the default family's, not the system's through fontconfig. `tried` lists
    /// each step and why it failed. Such text is laid out with estimated widths and drawn as empty boxes.
    case noUsableFont(face: String, tried: [String])

    public var description: String {
        switch self {
        case let .fontsFolderNotFound(tried): return "no bundled fonts found (tried \(tried.joined(separator: ", ")))"
        case let .missingFile(path): return "font file \(path) does not exist"
        case let .unreadableFile(path, reason): return "font file \(path) cannot be read: \(reason)"
        case let .corruptFile(path, reason): return "font file \(path) is not a usable font: \(reason)"
        case let .noUsableFont(face, tried):
            return "no font can be opened for \(face) text (tried: \(tried.joined(separator: "; "))); "
                + "it is drawn as empty boxes"
        }
    }
}

extension FontError {
    var isNoUsableFont: Bool {
        if case .noUsableFont = self { return true }
        return false
    }
}

/// A font file and the face in it: collections (`.ttc`) hold several faces.
struct FontFileLocation: Hashable, Sendable {
    var path: String
    var faceIndex: Int = 0
}

/// The bytes of one font file, mapped once (read-only, shared with every other process that maps it,
/// and only the pages glyphs come from resident) and shared by every thread's font objects (each
/// opens its own FreeType face over them, so the bytes are only ever read).
/// - Thread: any (immutable)
final class FontFile: @unchecked Sendable {
    /// Distinguishes files in per-thread caches; never reused.
    let identity: Int
    let path: String
    /// Which face of the file to open (0 unless the file is a collection).
    let faceIndex: Int
    /// The file's mapping, owned: unmapped when the last font object made from it is gone.
    let bytes: UnsafeRawBufferPointer
    /// HarfBuzz's face over `bytes` (an `hb_face_t`, immutable, so any thread may use it), for the
    /// places of shaped clusters; destroyed before the bytes.
    let shapingFace: OpaquePointer

    private static let nextIdentity = Atomic<Int>(1)

    private init(path: String, faceIndex: Int, bytes: UnsafeRawBufferPointer, byteCount: Int) {
        identity = FontFile.nextIdentity.add(1, ordering: .relaxed).oldValue
        self.path = path
        self.faceIndex = faceIndex
        self.bytes = bytes
        self.byteCount = byteCount
        shapingFace = tessera_hb_face_create(bytes.baseAddress, UInt32(clamping: byteCount), UInt32(clamping: max(0, faceIndex)))
    }

    /// The largest font file opened (the largest fonts in use, colour emoji and CJK collections, are
    /// 10 to 30 MB).
    static let maximumByteCount = 512 << 20

    /// Maps the regular file at `path`, read-only; an error for anything else (a directory, a FIFO
    /// or device, which a read would wait on forever, an empty or absurdly large file).
    ///
    /// A mapped file that another program truncates while it is in use would fault on its lost
    /// pages, as it would in any program that maps its fonts (FreeType, fontconfig): font files are
    /// installed, not edited in place.
    static func mapped(path: String, faceIndex: Int) -> Result<FontFile, FontError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            return .failure(errno == ENOENT ? .missingFile(path: path) : .unreadableFile(path: path, reason: reason))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            return .failure(.unreadableFile(path: path, reason: String(cString: strerror(errno))))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(.unreadableFile(path: path, reason: "not a regular file"))
        }
        let size = Int(status.st_size)
        guard size > 0 else { return .failure(.corruptFile(path: path, reason: "empty file")) }
        guard size <= maximumByteCount else {
            return .failure(.unreadableFile(path: path, reason: "\(size) bytes, over the \(maximumByteCount >> 20) MB a font may have"))
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            return .failure(.unreadableFile(path: path, reason: "cannot map it: " + String(cString: strerror(errno))))
        }
        return .success(FontFile(path: path, faceIndex: faceIndex, bytes: UnsafeRawBufferPointer(start: base, count: size),
                                 byteCount: size))
    }

    /// The file's size in bytes.
    let byteCount: Int

    /// Gives the file's pages back: they leave the process's resident memory (not the system's page
    /// cache) and are read again, from that cache, when next used. The mapping is read-only and
    /// private, so nothing is lost. For files read ahead of their first use (`prepare()`).
    func dropResidentPages() {
        madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count, MADV_DONTNEED)
    }

    deinit {
        hb_face_destroy(shapingFace)
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
    }
}

/// A face ready to be opened by a thread: the file, and whether bold must be synthesized because the
/// family has no bold file.
struct ResolvedFace: Sendable {
    let file: FontFile
    let synthesizesBold: Bool
}

/// Where a registry looks for faces when it is given no folder. Tests replace the pieces to take
/// the bundle or fontconfig away.
struct FontSearch: Sendable {
    /// An explicit folder from the environment (`$TESSERA_FONTS`), used even when it lacks the faces.
    var environmentFolder: @Sendable () -> BundledFonts.Candidate?
    /// The folders that may hold the bundled faces, in order.
    var bundledFolders: @Sendable () -> [BundledFonts.Candidate]
    /// The system's face for the first of some family names that fontconfig has, bold or regular.
    var systemFace: @Sendable (_ families: [String], _ bold: Bool) -> SystemFace?

    static let standard = FontSearch(
        environmentFolder: { BundledFonts.environmentFolder() },
        bundledFolders: { BundledFonts.candidates() },
        systemFace: { SystemFonts.match(families: $0, bold: $1) })
}

/// Knows the font families and where their files are, reads each file once, and reports bad files.
///
/// A face is found in this order, and text is never left without one while any font can be opened:
/// 1. the family's own file: a path given to `register`, or a name in `fontsFolder`;
/// 2. the default family's regular file (emboldened for bold text);
/// 3. the system's font through fontconfig: DejaVu Sans (DejaVu Sans Mono for the monospaced
///    family) when installed, else fontconfig's "sans-serif" ("monospace"), in the weight asked for.
///
/// `fontsFolder`, when not set, is found on first use: `$TESSERA_FONTS`, else the bundled faces in
/// NodeRuntime's resource bundle beside the executable (see `BundledFonts`). Each problem is
/// reported once through `TesseraLog.fonts` (and kept in `errors`), saying what is used instead; the
/// system files chosen are logged once each with the reason. If no font can be opened at all, that
/// is reported once as an error (`FontError.noUsableFont`, naming every step tried) and the text is
/// drawn as empty boxes rather than not at all.
/// - Thread: any
public final class FontRegistry: Sendable {
    /// The registry `TextNode` and `TextLayout.measure` use unless given another.
    public static let shared = FontRegistry()

    private struct Face: Sendable {
        var regular: String
        var bold: String?
    }

    /// Where the bundled faces were found, or every folder tried.
    private enum Location: Sendable {
        case folder(BundledFonts.Candidate)
        case notFound(tried: [String])
    }

    private struct FaceKey: Hashable, Sendable {
        var family: String
        var isBold: Bool
    }

    private struct SystemKey: Hashable, Sendable {
        var families: [String]
        var isBold: Bool
    }

    private struct State: Sendable {
        /// Set through `init` or `fontsFolder`; wins over any search.
        var configuredFolder: String?
        /// The search's result, made once (until `fontsFolder` is set).
        var location: Location?
        var families: [String: Face]
        var defaultFamily = TextFont.sansFamily
        /// Files read so far; a failure is kept so it is neither retried nor reported twice.
        var files: [FontFileLocation: Result<FontFile, FontError>] = [:]
        /// What `resolve` answered, by family and weight (nil: no font at all).
        var resolved: [FaceKey: ResolvedFace?] = [:]
        /// Counts the changes that empty `resolved`, so an answer worked out before one is not stored
        /// after it.
        var generation = 0
        /// fontconfig's answers, by the names asked and the weight.
        var systemFaces: [SystemKey: SystemFace?] = [:]
        var errors: [FontError] = []
        /// System faces whose choice was logged already.
        var announcedSystemFaces: Set<SystemKey> = []
        var reportsToStandardError = true
        /// Files a thread is reading now; another thread that needs one waits for that read.
        var reading: [FontFileLocation: FontFileRead] = [:]
    }

    private let state: Locked<State>
    /// Where `prepare()` stands (see FontRegistry+Preparation.swift).
    let preparation = Locked(FontPreparation())
    private let search: FontSearch
    /// Distinguishes registries in the layout cache's key.
    let identity: Int
    /// Changes whenever what the registry resolves can change (a fonts folder, a family, the default
    /// family): a layout measured before a change is not used after it. - Thread: any
    var generation: Int { state.withLock { $0.generation } }
    private static let nextIdentity = Atomic<Int>(1)

    /// A registry knowing DejaVu Sans (regular and bold) and DejaVu Sans Mono.
    /// - Parameter fontsFolder: where relative font paths are looked up; nil finds the bundled faces
    ///   on first use (see the type's documentation).
    /// - Thread: any
    public convenience init(fontsFolder: String? = nil) {
        self.init(fontsFolder: fontsFolder, search: .standard)
    }

    /// A registry that looks for its faces through `search` when `fontsFolder` is nil.
    init(fontsFolder: String?, search: FontSearch) {
        identity = FontRegistry.nextIdentity.add(1, ordering: .relaxed).oldValue
        self.search = search
        state = Locked(State(configuredFolder: fontsFolder, families: [
            TextFont.sansFamily: Face(regular: "DejaVuSans.ttf", bold: "DejaVuSans-Bold.ttf"),
            TextFont.monospacedFamily: Face(regular: "DejaVuSansMono.ttf", bold: nil),
        ]))
    }

    /// The folder relative font paths are resolved in: the one set, else the one found (nil while
    /// none was looked for, or when none was found and the system's fonts are used). Setting it
    /// drops the files read so far and what was resolved (fonts already opened by threads keep their
    /// bytes until they are closed); setting nil searches again.
    /// - Thread: any
    public var fontsFolder: String? {
        get {
            state.withLock { state in
                if let configured = state.configuredFolder { return configured }
                if case let .folder(candidate)? = state.location { return candidate.path }
                return nil
            }
        }
        set {
            state.withLock { state in
                state.configuredFolder = newValue
                state.location = nil
                state.files.removeAll()
                state.resolved.removeAll()
                state.generation += 1
            }
        }
    }

    /// Adds or replaces a family. Paths are absolute or relative to `fontsFolder`; a family without a
    /// bold file gets an emboldened regular face for bold text.
    /// - Thread: any
    public func register(family: String, regular: String, bold: String? = nil) {
        state.withLock { state in
            state.families[family] = Face(regular: regular, bold: bold)
            state.resolved.removeAll()
            state.generation += 1
        }
    }

    /// The family used for unknown families and as the fallback for bad files.
    /// - Thread: any
    public var defaultFamily: String {
        get { state.withLock { $0.defaultFamily } }
        set {
            state.withLock { state in
                state.defaultFamily = newValue
                state.resolved.removeAll()
                state.generation += 1
            }
        }
    }

    /// Every problem met so far, each once, in order.
    /// - Thread: any
    public var errors: [FontError] { state.withLock { $0.errors } }

    /// Whether problems, and the system fonts chosen instead, are also reported through
    /// `TesseraLog.fonts` (on by default; tests that provoke them turn it off to keep logs readable).
    /// Without a logging backend bootstrapped they go to standard error.
    /// - Thread: any
    public var reportsErrorsToStandardError: Bool {
        get { state.withLock { $0.reportsToStandardError } }
        set { state.withLock { $0.reportsToStandardError = newValue } }
    }

    /// Checks that `font`'s own file exists and opens as a font, without falling back.
    /// - Throws: the `FontError` naming the file (or the folders tried when none was found).
    /// - Thread: any
    public func validate(_ font: TextFont) throws {
        _ = try loadFile(at: try filePath(for: font).location)
    }

    /// The bundled fonts folder a registry without one uses: `$TESSERA_FONTS` when set (whether or not
    /// it holds the faces), else `Fonts` in NodeRuntime's resource bundle beside the executable, else
    /// the sources that bundle is built from (see `BundledFonts`). Never traps when the bundle is
    /// missing.
    /// - Throws: `FontError.fontsFolderNotFound` listing the folders tried.
    /// - Thread: any
    public static func locateFontsFolder() throws -> String {
        switch locate(FontSearch.standard) {
        case let .folder(candidate): return candidate.path
        case let .notFound(tried): throw FontError.fontsFolderNotFound(tried: tried)
        }
    }

    private static func locate(_ search: FontSearch) -> Location {
        if let explicit = search.environmentFolder() { return .folder(explicit) }
        let candidates = search.bundledFolders()
        if let found = BundledFonts.firstHoldingFaces(candidates) { return .folder(found) }
        return .notFound(tried: candidates.map(\.path))
    }

    // MARK: - Resolution (any thread)

    /// The face of an installed font file (for fallback), read once like registered files. Nil when it
    /// cannot be read or opened (reported once).
    func fallbackFace(at location: FontFileLocation) -> ResolvedFace? {
        do {
            return ResolvedFace(file: try loadFile(at: location), synthesizesBold: false)
        } catch {
            let failure = error as? FontError ?? .missingFile(path: location.path)
            report(newFailures: recordNew([failure]), consequence: "its characters keep their own font's glyphs")
            return nil
        }
    }

    /// The face for `font`: its family's file, else the default family's regular face, else the
    /// system's through fontconfig. Nil only when no font can be opened at all (reported once).
    func resolve(_ font: TextFont) -> ResolvedFace? {
        let key = FaceKey(family: font.family, isBold: font.isBold)
        let (known, generation) = state.withLock { ($0.resolved[key], $0.generation) }
        if let known { return known }
        let resolution = findFace(for: font)

        let (stored, newFailures, announce) = state.withLock { state -> (ResolvedFace?, [FontError], Bool) in
            // Two threads may resolve at once; the first stored answer wins so both share its file.
            if let existing = state.resolved[key] { return (existing, [], false) }
            if state.generation == generation { state.resolved[key] = .some(resolution.face) }
            var new = resolution.failures.filter { !state.errors.contains($0) }
            state.errors.append(contentsOf: new)
            // Having no font at all is said once; the other faces' failures add nothing a developer
            // needs (they stay in `errors`).
            if new.contains(where: \.isNoUsableFont), state.errors.dropLast(new.count).contains(where: \.isNoUsableFont) {
                new.removeAll()
            }
            var announce = false
            if let choice = resolution.systemChoice, !state.announcedSystemFaces.contains(choice.key) {
                state.announcedSystemFaces.insert(choice.key)
                announce = true
            }
            let reports = state.reportsToStandardError
            return (resolution.face, reports ? new : [], reports && announce)
        }
        report(newFailures: newFailures, consequence: resolution.consequence)
        if announce, let choice = resolution.systemChoice {
            let weight = font.isBold ? "bold" : "regular"
            let emboldened = font.isBold && !choice.face.isBold ? ", emboldened" : ""
            TesseraLog.fonts.notice("\(font.family) \(weight) text uses \(choice.face.path) (\(choice.face.reason)\(emboldened))")
        }
        return stored
    }

    /// What one resolution found: the face, the failures on the way, and what they led to.
    private struct Resolution {
        var face: ResolvedFace?
        var failures: [FontError] = []
        /// What the failures are reported as leading to ("using DejaVu Sans instead").
        var consequence = ""
        /// The system face used, when it came to that.
        var systemChoice: (key: SystemKey, face: SystemFace)?

        mutating func note(_ error: Error, family: String) {
            let failure = error as? FontError ?? .missingFile(path: "<\(family)>")
            if !failures.contains(failure) { failures.append(failure) }
        }
    }

    /// Works through the steps of `resolve` (no lock held while files are read or fontconfig asked).
    private func findFace(for font: TextFont) -> Resolution {
        var resolution = Resolution()
        do {
            let (location, synthesizesBold) = try filePath(for: font)
            resolution.face = ResolvedFace(file: try loadFile(at: location), synthesizesBold: synthesizesBold)
            return resolution
        } catch {
            resolution.note(error, family: font.family)
        }
        let defaultFamily = self.defaultFamily
        if defaultFamily != font.family || font.isBold {
            do {
                let (location, _) = try filePath(for: TextFont(family: defaultFamily, size: font.size))
                resolution.face = ResolvedFace(file: try loadFile(at: location), synthesizesBold: font.isBold)
                resolution.consequence = "using \(defaultFamily) instead"
                return resolution
            } catch {
                resolution.note(error, family: defaultFamily)
            }
        }
        let systemKey = SystemKey(families: SystemFonts.families(for: font.family), isBold: font.isBold)
        var tried: [String] = []
        if let system = systemFace(for: systemKey) {
            do {
                let file = try loadFile(at: FontFileLocation(path: system.path, faceIndex: system.faceIndex))
                resolution.face = ResolvedFace(file: file, synthesizesBold: font.isBold && !system.isBold)
                resolution.systemChoice = (systemKey, system)
                resolution.consequence = "using the system's fonts through fontconfig"
                return resolution
            } catch {
                resolution.note(error, family: system.requestedFamily)
            }
        } else {
            tried.append("fontconfig has no font for \(systemKey.families.joined(separator: " or "))")
        }
        tried.insert(contentsOf: resolution.failures.map(\.description), at: 0)
        resolution.failures.append(.noUsableFont(face: "\(font.family) \(font.isBold ? "bold" : "regular")", tried: tried))
        return resolution
    }

    /// fontconfig's face for `key`, asked once (outside the lock) and remembered, found or not.
    private func systemFace(for key: SystemKey) -> SystemFace? {
        if let known = state.withLock({ $0.systemFaces[key] }) { return known }
        let found = search.systemFace(key.families, key.isBold)
        TextWorkCounters.countFontconfigQuery()
        return state.withLock { state in
            if let existing = state.systemFaces[key] { return existing }
            state.systemFaces[key] = .some(found)
            return found
        }
    }

    private func filePath(for font: TextFont) throws -> (location: FontFileLocation, synthesizesBold: Bool) {
        let (face, configured, location) = state.withLock { state in
            (state.families[font.family] ?? state.families[state.defaultFamily], state.configuredFolder, state.location)
        }
        guard let face else { throw FontError.missingFile(path: "<no file registered for \(font.family)>") }
        let name = font.isBold ? (face.bold ?? face.regular) : face.regular
        let synthesizesBold = font.isBold && face.bold == nil
        if name.hasPrefix("/") { return (FontFileLocation(path: name), synthesizesBold) }
        let folder: String
        if let configured {
            folder = configured
        } else {
            switch location ?? locate() {
            case let .folder(candidate): folder = candidate.path
            case let .notFound(tried): throw FontError.fontsFolderNotFound(tried: tried)
            }
        }
        return (FontFileLocation(path: URL(fileURLWithPath: folder).appendingPathComponent(name).path), synthesizesBold)
    }

    /// Searches for the bundled faces (outside the lock) and keeps the first result stored.
    private func locate() -> Location {
        let found = FontRegistry.locate(search)
        let (location, isFirst) = state.withLock { state -> (Location, Bool) in
            if let existing = state.location { return (existing, false) }
            state.location = found
            return (found, true)
        }
        if isFirst, case let .folder(candidate) = location {
            TesseraLog.fonts.debug("bundled fonts from \(candidate.path) (\(candidate.origin))")
        }
        return location
    }

    private enum LoadStep {
        case known(Result<FontFile, FontError>)
        case wait(FontFileRead)
        case read(FontFileRead)
    }

    /// Reads and checks a file once; later calls return the same bytes or throw the same error. A
    /// thread that needs a file another thread is reading (`prepare()`'s, typically) waits for that
    /// read instead of reading it again: the wait lasts what is left of one file's read.
    /// The files read so far (failures left out).
    var filesRead: [FontFileLocation: FontFile] {
        state.withLock { state in state.files.compactMapValues { try? $0.get() } }
    }

    private func loadFile(at location: FontFileLocation) throws -> FontFile {
        while true {
            let step = state.withLock { state -> LoadStep in
                if let known = state.files[location] { return .known(known) }
                if let read = state.reading[location] { return .wait(read) }
                let read = FontFileRead()
                state.reading[location] = read
                return .read(read)
            }
            switch step {
            case let .known(result):
                return try result.get()
            case let .wait(read):
                TextWorkCounters.countFontReadWait()
                read.wait()
            case let .read(read):
                let result = readFile(at: location)
                // The first stored result wins, so every caller shares one `FontFile` (and one identity
                // in the per-thread caches).
                let stored = state.withLock { state -> Result<FontFile, FontError> in
                    state.reading[location] = nil
                    if let existing = state.files[location] { return existing }
                    state.files[location] = result
                    return result
                }
                read.finish()
                return try stored.get()
            }
        }
    }

    /// Reads `location`'s file and checks that it opens as a font.
    private func readFile(at location: FontFileLocation) -> Result<FontFile, FontError> {
        let path = location.path
        return FontFile.mapped(path: path, faceIndex: location.faceIndex).flatMap { file in
            TextWorkCounters.countFileRead()
            if let reason = FontLibrary.probe(file) { return .failure(.corruptFile(path: path, reason: reason)) }
            return .success(file)
        }
    }

    /// Keeps the failures not met before and returns them (empty when reporting is off).
    private func recordNew(_ failures: [FontError]) -> [FontError] {
        state.withLock { state in
            let new = failures.filter { !state.errors.contains($0) }
            state.errors.append(contentsOf: new)
            return state.reportsToStandardError ? new : []
        }
    }

    /// Logs failures (called with no lock held): a warning when something else is used instead, an
    /// error when no font at all could be opened.
    private func report(newFailures: [FontError], consequence: String) {
        for failure in newFailures {
            if case .noUsableFont = failure {
                TesseraLog.fonts.error("\(failure)")
            } else {
                TesseraLog.fonts.warning("\(failure)\(consequence.isEmpty ? "" : "; \(consequence)")")
            }
        }
    }
}
