import FoundationEssentials
import Glibc
import Dispatch

/// Where NodeRuntime's own faces (DejaVu Sans, Sans Bold, Sans Mono) are found when no fonts folder is
/// configured.
///
/// They ship as the resources of the package's `CTessera` target, the bundle
/// `Tessera_CTessera.resources`, which SwiftPM builds into the products folder beside every executable
/// that links NodeRuntime (an app, the gallery, a test runner). They belong to a C target so that no
/// `Bundle.module` accessor is generated: it would link Foundation into every app, and when the bundle
/// is neither beside the executable nor at the build folder's path it was compiled with, it ends the
/// process with `fatalError` (a missing font must never do that). The folders are tried in order:
///
/// 1. `$TESSERA_FONTS`, a folder holding the faces (an explicit choice: used even when it lacks them,
///    so a wrong path is reported rather than skipped);
/// 2. `Fonts` in the resource bundle beside the running executable (the real file, links resolved);
/// 3. the folder the bundle is copied from, `Sources/CTessera/Fonts` of the checkout
///    this module was compiled from, for a binary moved away from its bundle on the machine that
///    built it. (The build folder's own path is compiled only into `Bundle.module`'s trapping
///    accessor, so the sources the bundle is made from stand in for it.)
///
/// A folder counts only when it holds `DejaVuSans.ttf`. With none found, `FontRegistry` uses the
/// system's fonts through fontconfig (see `SystemFonts`).
/// - Thread: any
enum BundledFonts {
    /// SwiftPM's name for the fonts' resource bundle on Linux: the package's `name` in Package.swift,
    /// an underscore, the target's name.
    static let bundleName = "Tessera_CTessera.resources"
    /// The folder inside the bundle (`.copy("Resources/Fonts")` keeps the last path component).
    static let folderName = "Fonts"
    /// The file whose presence makes a folder the bundled fonts folder.
    static let markerFile = "DejaVuSans.ttf"
    /// The environment variable naming an explicit fonts folder.
    static let environmentVariable = "TESSERA_FONTS"

    /// A folder that may hold the faces, and how it was arrived at (for the log).
    struct Candidate: Sendable, Hashable {
        var path: String
        var origin: String
    }

    /// The explicit folder from the environment, if one is set.
    static func environmentFolder(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Candidate? {
        guard let value = environment[environmentVariable], !value.isEmpty else { return nil }
        return Candidate(path: value, origin: "$\(environmentVariable)")
    }

    /// The folders tried, in order, after the environment's.
    static func candidates() -> [Candidate] {
        var result: [Candidate] = []
        func add(_ folder: URL?, origin: String) {
            guard let folder else { return }
            let path = folder.appendingPathComponent(bundleName).appendingPathComponent(folderName).standardizedFileURL.path
            if !result.contains(where: { $0.path == path }) { result.append(Candidate(path: path, origin: origin)) }
        }
        add(executableFolder(), origin: "the resource bundle beside the executable")
        let sources = URL(fileURLWithPath: sourceFolder).standardizedFileURL.path
        if !result.contains(where: { $0.path == sources }) {
            result.append(Candidate(path: sources, origin: "the sources the resource bundle is built from"))
        }
        return result
    }

    /// The first candidate holding the faces, or nil.
    static func firstHoldingFaces(_ candidates: [Candidate]) -> Candidate? {
        candidates.first { holdsFaces($0.path) }
    }

    /// Whether `folder` holds the bundled faces (judged by `markerFile`).
    static func holdsFaces(_ folder: String) -> Bool {
        FileManager.default.fileExists(atPath: URL(fileURLWithPath: folder).appendingPathComponent(markerFile).path)
    }

    /// The folder of the running executable's real file: `/proc/self/exe` on Linux, else the first
    /// argument.
    static func executableFolder() -> URL? {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: target).deletingLastPathComponent()
        }
        guard let first = CommandLine.arguments.first, !first.isEmpty else { return nil }
        return URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// `Sources/CTessera/Fonts` of the checkout this file was compiled from
    /// (`Sources/NodeRuntime/Text/BundledFonts.swift` → `Sources`).
    static let sourceFolder: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CTessera").appendingPathComponent(folderName).path
}
