import Foundation
import Synchronization

/// Why a font could not be used. Every case names the file (or the folders tried), so the message in
/// a log says what to fix.
/// - Thread: any
public enum FontError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No fonts folder was configured and none was found in the usual places.
    case fontsFolderNotFound(tried: [String])
    /// The font file does not exist.
    case missingFile(path: String)
    /// The file exists but could not be read.
    case unreadableFile(path: String, reason: String)
    /// The file was read but SDL_ttf (FreeType) does not accept it as a font.
    case corruptFile(path: String, reason: String)

    public var description: String {
        switch self {
        case let .fontsFolderNotFound(tried): return "no fonts folder found (tried \(tried.joined(separator: ", ")))"
        case let .missingFile(path): return "font file \(path) does not exist"
        case let .unreadableFile(path, reason): return "font file \(path) cannot be read: \(reason)"
        case let .corruptFile(path, reason): return "font file \(path) is not a usable font: \(reason)"
        }
    }
}

/// The bytes of one font file, read once and shared by every thread's font objects (each opens its own
/// FreeType face over them, so the bytes are only ever read).
/// - Thread: any (immutable)
final class FontFile: @unchecked Sendable {
    /// Distinguishes files in per-thread caches; never reused.
    let identity: Int
    let path: String
    /// Owned; freed when the last font object made from it is gone.
    let bytes: UnsafeMutableRawBufferPointer

    private static let nextIdentity = Atomic<Int>(1)

    init(path: String, data: Data) {
        identity = FontFile.nextIdentity.add(1, ordering: .relaxed).oldValue
        self.path = path
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        data.withUnsafeBytes { source in
            if let base = source.baseAddress { storage.baseAddress!.copyMemory(from: base, byteCount: data.count) }
        }
        bytes = storage
        byteCount = data.count
    }

    /// The file's size in bytes (`bytes` may be one byte larger for an empty file).
    let byteCount: Int

    deinit { bytes.deallocate() }
}

/// A face ready to be opened by a thread: the file, and whether bold must be synthesized because the
/// family has no bold file.
struct ResolvedFace: Sendable {
    let file: FontFile
    let synthesizesBold: Bool
}

/// Knows the font families and where their files are, reads each file once, and reports bad files.
///
/// A missing or corrupt file is reported once (on standard error and in `errors`) and the text falls
/// back to the default family's regular face; if that fails too, text measures as empty rather than
/// crashing. Fonts are looked for in `fontsFolder`; by default it is found by `locateFontsFolder()`.
/// - Thread: any
public final class FontRegistry: Sendable {
    /// The registry `TextNode` and `TextLayout.measure` use unless given another.
    public static let shared = FontRegistry()

    private struct Face: Sendable {
        var regular: String
        var bold: String?
    }

    private struct State: Sendable {
        var fontsFolder: String?
        var families: [String: Face]
        var defaultFamily = TextFont.sansFamily
        /// Files read so far, by absolute path; nil records a file that failed (reported once).
        var files: [String: FontFile?] = [:]
        var errors: [FontError] = []
        var reportsToStandardError = true
        /// Set when no fonts folder could be found, so the search is not repeated for every run.
        var locateFailure: FontError?
    }

    private let state: Locked<State>
    /// Distinguishes registries in the layout cache's key.
    let identity: Int
    private static let nextIdentity = Atomic<Int>(1)

    /// A registry knowing DejaVu Sans (regular and bold) and DejaVu Sans Mono.
    /// - Parameter fontsFolder: where relative font paths are looked up; nil finds it on first use.
    public init(fontsFolder: String? = nil) {
        identity = FontRegistry.nextIdentity.add(1, ordering: .relaxed).oldValue
        state = Locked(State(fontsFolder: fontsFolder, families: [
            TextFont.sansFamily: Face(regular: "DejaVuSans.ttf", bold: "DejaVuSans-Bold.ttf"),
            TextFont.monospacedFamily: Face(regular: "DejaVuSansMono.ttf", bold: nil),
        ]))
    }

    /// The folder relative font paths are resolved in. Setting it drops the files read so far (fonts
    /// already opened by threads keep their bytes until they are closed).
    /// - Thread: any
    public var fontsFolder: String? {
        get { state.withLock { $0.fontsFolder } }
        set {
            state.withLock { state in
                state.fontsFolder = newValue
                state.files.removeAll()
                state.locateFailure = nil
            }
        }
    }

    /// Adds or replaces a family. Paths are absolute or relative to `fontsFolder`; a family without a
    /// bold file gets an emboldened regular face for bold text.
    /// - Thread: any
    public func register(family: String, regular: String, bold: String? = nil) {
        state.withLock { $0.families[family] = Face(regular: regular, bold: bold) }
    }

    /// The family used for unknown families and as the fallback for bad files.
    /// - Thread: any
    public var defaultFamily: String {
        get { state.withLock { $0.defaultFamily } }
        set { state.withLock { $0.defaultFamily = newValue } }
    }

    /// Every problem met so far, each once, in order.
    /// - Thread: any
    public var errors: [FontError] { state.withLock { $0.errors } }

    /// Whether problems are also reported through `TesseraLog.fonts` (on by default; tests that
    /// provoke them turn it off to keep logs readable). Without a logging backend bootstrapped they
    /// go to standard error.
    /// - Thread: any
    public var reportsErrorsToStandardError: Bool {
        get { state.withLock { $0.reportsToStandardError } }
        set { state.withLock { $0.reportsToStandardError = newValue } }
    }

    /// Checks that `font`'s file exists and opens as a font, without falling back.
    /// - Throws: the `FontError` naming the file.
    /// - Thread: any
    public func validate(_ font: TextFont) throws {
        let path = try filePath(for: font).path
        _ = try loadFile(at: path)
    }

    /// Where the fonts folder is found when none is configured: `$TESSERA_ASSETS/fonts`, then
    /// `Assets/fonts` in the current directory, beside the executable or up to four folders above it,
    /// then in the source tree this module was built from (for tests and `swift run`).
    /// - Throws: `FontError.fontsFolderNotFound` listing the folders tried.
    /// - Thread: any
    public static func locateFontsFolder() throws -> String {
        var candidates: [URL] = []
        if let assets = ProcessInfo.processInfo.environment["TESSERA_ASSETS"], !assets.isEmpty {
            candidates.append(URL(fileURLWithPath: assets))
        }
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Assets"))
        var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(folder.appendingPathComponent("Assets"))
            folder = folder.deletingLastPathComponent()
        }
        // Sources/NodeRuntime/Text/FontRegistry.swift → the package root.
        var source = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { source = source.deletingLastPathComponent() }
        candidates.append(source.appendingPathComponent("Assets"))
        for candidate in candidates {
            let fonts = candidate.appendingPathComponent("fonts")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: fonts.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return fonts.path
            }
        }
        throw FontError.fontsFolderNotFound(tried: candidates.map { $0.appendingPathComponent("fonts").path })
    }

    // MARK: - Resolution (any thread)

    /// The face of an installed font file at `path` (for fallback), read once like registered files.
    /// Nil when it cannot be read or opened (reported once).
    func fallbackFace(atPath path: String) -> ResolvedFace? {
        do {
            return ResolvedFace(file: try loadFile(at: path), synthesizesBold: false)
        } catch {
            record(error as? FontError)
            return nil
        }
    }

    /// The face for `font`, falling back to the default family's regular face when its file is bad.
    /// Nil only when no font can be opened at all (each problem was reported).
    func resolve(_ font: TextFont) -> ResolvedFace? {
        do {
            let (path, synthesizesBold) = try filePath(for: font)
            return ResolvedFace(file: try loadFile(at: path), synthesizesBold: synthesizesBold)
        } catch {
            record(error as? FontError)
        }
        let fallback = TextFont(family: defaultFamily, size: font.size, isBold: false)
        guard fallback.family != font.family || font.isBold else { return nil }
        do {
            let (path, _) = try filePath(for: fallback)
            return ResolvedFace(file: try loadFile(at: path), synthesizesBold: font.isBold)
        } catch {
            record(error as? FontError)
            return nil
        }
    }

    private func filePath(for font: TextFont) throws -> (path: String, synthesizesBold: Bool) {
        let (face, folder, locateFailure) = state.withLock { state in
            (state.families[font.family] ?? state.families[state.defaultFamily], state.fontsFolder, state.locateFailure)
        }
        guard let face else { throw FontError.missingFile(path: "<no file registered for \(font.family)>") }
        let name = font.isBold ? (face.bold ?? face.regular) : face.regular
        let synthesizesBold = font.isBold && face.bold == nil
        if name.hasPrefix("/") { return (name, synthesizesBold) }
        let base: String
        if let folder {
            base = folder
        } else if let locateFailure {
            throw locateFailure
        } else {
            do {
                base = try FontRegistry.locateFontsFolder()
            } catch {
                let failure = error as? FontError ?? .fontsFolderNotFound(tried: [])
                state.withLock { $0.locateFailure = failure }
                throw failure
            }
            state.withLock { if $0.fontsFolder == nil { $0.fontsFolder = base } }
        }
        return (URL(fileURLWithPath: base).appendingPathComponent(name).path, synthesizesBold)
    }

    /// Reads and checks a file once; later calls return the same bytes or throw the same error.
    private func loadFile(at path: String) throws -> FontFile {
        if let known = state.withLock({ $0.files[path] }) {
            if let file = known { return file }
            throw knownError(for: path)
        }
        let result: Result<FontFile, FontError>
        if !FileManager.default.fileExists(atPath: path) {
            result = .failure(.missingFile(path: path))
        } else if let data = FileManager.default.contents(atPath: path) {
            let file = FontFile(path: path, data: data)
            if let reason = FontLibrary.probe(file) {
                result = .failure(.corruptFile(path: path, reason: reason))
            } else {
                result = .success(file)
            }
        } else {
            result = .failure(.unreadableFile(path: path, reason: "read failed"))
        }
        // Two threads may read the same file at once; the first stored result wins so every caller
        // shares one `FontFile` (and one identity in the per-thread caches).
        let stored = state.withLock { state -> FontFile?? in
            if let existing = state.files[path] { return existing }
            switch result {
            case let .success(file): state.files[path] = file
            case let .failure(error):
                state.files[path] = .some(nil)
                appendError(error, to: &state)
            }
            return nil
        }
        if let stored {
            if let file = stored { return file }
            throw knownError(for: path)
        }
        return try result.get()
    }

    private func knownError(for path: String) -> FontError {
        state.withLock { state in
            state.errors.last { error in
                switch error {
                case let .missingFile(p), let .unreadableFile(p, _), let .corruptFile(p, _): return p == path
                case .fontsFolderNotFound: return false
                }
            } ?? .missingFile(path: path)
        }
    }

    private func record(_ error: FontError?) {
        guard let error else { return }
        state.withLock { appendError(error, to: &$0) }
    }

    private func appendError(_ error: FontError, to state: inout State) {
        guard !state.errors.contains(error) else { return }
        state.errors.append(error)
        if state.reportsToStandardError {
            TesseraLog.fonts.warning("\(error); using the fallback font")
        }
    }
}
