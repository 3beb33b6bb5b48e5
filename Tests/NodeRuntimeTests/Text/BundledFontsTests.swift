import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The bundled faces travel as NodeRuntime's resource bundle and are found beside the executable, an
/// explicit folder wins, a folder without the faces is passed over, and a missing bundle is reported
/// (never a trap: the generated `Bundle.module` is not used).
@MainActor
final class BundledFontsTests: XCTestCase {
    nonisolated(unsafe) private var temporaryFolder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporaryFolder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bundled-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporaryFolder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporaryFolder)
        try super.tearDownWithError()
    }

    private func search(bundled: [String], environment: String? = nil,
                        system: @escaping @Sendable ([String], Bool) -> SystemFace? = { _, _ in nil }) -> FontSearch {
        let candidates = bundled.map { BundledFonts.Candidate(path: $0, origin: "test") }
        return FontSearch(environmentFolder: { environment.map { BundledFonts.Candidate(path: $0, origin: "test environment") } },
                          bundledFolders: { candidates }, systemFace: system)
    }

    private func quietRegistry(_ search: FontSearch, folder: String? = nil) -> FontRegistry {
        let registry = FontRegistry(fontsFolder: folder, search: search)
        registry.reportsErrorsToStandardError = false
        return registry
    }

    func testTheResourceBundleBesideTheTestRunnerHoldsTheFacesAndIsFoundFirst() async throws {
        let runnerFolder = try XCTUnwrap(BundledFonts.executableFolder())
        let fonts = runnerFolder.appendingPathComponent(BundledFonts.bundleName).appendingPathComponent(BundledFonts.folderName)
        for name in ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf", "DejaVu-LICENSE.txt"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: fonts.appendingPathComponent(name).path),
                          "SwiftPM copied \(name) into \(fonts.path)")
        }
        let candidates = BundledFonts.candidates()
        XCTAssertEqual(candidates.first?.path, fonts.standardizedFileURL.path, "the bundle beside the executable comes first")
        XCTAssertEqual(candidates.last?.path, GoldenImage.bundledFontsFolder, "the sources the bundle is built from come last")

        if ProcessInfo.processInfo.environment[BundledFonts.environmentVariable] == nil {
            XCTAssertEqual(try FontRegistry.locateFontsFolder(), fonts.standardizedFileURL.path)
            let registry = FontRegistry()
            registry.reportsErrorsToStandardError = false
            XCTAssertEqual(registry.resolve(TextFont())?.file.path, fonts.standardizedFileURL.appendingPathComponent("DejaVuSans.ttf").path)
            XCTAssertEqual(registry.fontsFolder, fonts.standardizedFileURL.path)
            XCTAssertEqual(registry.errors, [])
        }
    }

    func testAFolderWithoutTheFacesIsPassedOver() async throws {
        // An app's own `Assets/fonts` with other fonts in it must not stand in for the bundle.
        let unrelated = temporaryFolder.appendingPathComponent("Assets/fonts")
        try FileManager.default.createDirectory(at: unrelated, withIntermediateDirectories: true)
        try Data("not DejaVu".utf8).write(to: unrelated.appendingPathComponent("Other.ttf"))
        let registry = quietRegistry(search(bundled: [unrelated.path, GoldenImage.bundledFontsFolder]))
        XCTAssertEqual(registry.resolve(TextFont(isBold: true))?.file.path, GoldenImage.bundledFontsFolder + "/DejaVuSans-Bold.ttf")
        XCTAssertEqual(registry.errors, [])
    }

    func testAnExplicitFolderWinsAndIsUsedEvenWithoutTheFaces() async throws {
        // Configured through the API: wins over the bundle.
        let copy = temporaryFolder.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: GoldenImage.bundledFontsFolder + "/DejaVuSansMono.ttf",
                                         toPath: copy.appendingPathComponent("DejaVuSans.ttf").path)
        let configured = quietRegistry(search(bundled: [GoldenImage.bundledFontsFolder]), folder: copy.path)
        XCTAssertEqual(configured.resolve(TextFont())?.file.path, copy.appendingPathComponent("DejaVuSans.ttf").path)

        // From the environment: wins too, and a folder lacking the faces is reported, not skipped.
        let empty = temporaryFolder.appendingPathComponent("empty").path
        let fromEnvironment = quietRegistry(search(bundled: [GoldenImage.bundledFontsFolder], environment: empty))
        XCTAssertNil(fromEnvironment.resolve(TextFont()), "no system fonts in this search: nothing opens")
        XCTAssertEqual(fromEnvironment.errors.first, .missingFile(path: empty + "/DejaVuSans.ttf"))
        XCTAssertEqual(BundledFonts.environmentFolder(["TESSERA_FONTS": "/somewhere"])?.path, "/somewhere")
        XCTAssertNil(BundledFonts.environmentFolder(["TESSERA_FONTS": ""]))
    }

    func testAMissingBundleIsReportedWithTheFoldersTriedAndNeverTraps() async throws {
        let missing = [temporaryFolder.appendingPathComponent("gone/\(BundledFonts.bundleName)/Fonts").path,
                       temporaryFolder.appendingPathComponent("also-gone").path]
        let registry = quietRegistry(search(bundled: missing))
        XCTAssertThrowsError(try registry.validate(TextFont())) { error in
            XCTAssertEqual(error as? FontError, .fontsFolderNotFound(tried: missing))
            XCTAssertTrue("\(error)".contains(missing[0]), "the message names the folders tried: \(error)")
        }
        XCTAssertNil(registry.fontsFolder)
        // Measuring and drawing go on (as boxes here, with fontconfig taken away too).
        let layout = TextLayout.measure(AttributedText("still here", attributes: TextFixtures.plain()), width: 300,
                                        fonts: registry, cache: nil)
        XCTAssertGreaterThan(layout.size.width, 0)
        XCTAssertEqual(registry.errors.first, .fontsFolderNotFound(tried: missing))
    }

    func testTheRuntimeNeverReachesForTheGeneratedBundleAccessor() async throws {
        // `Bundle.module` ends the process with fatalError when its bundle is missing.
        let root = GoldenImage.repositoryRoot.appendingPathComponent("Sources/NodeRuntime")
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var offenders: [String] = []
        var files = 0
        while let url = walker?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            files += 1
            let text = try String(contentsOf: url, encoding: .utf8)
            let code = text.components(separatedBy: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            if code.contains(where: { $0.contains("Bundle.module") || $0.contains(".module.") }) { offenders.append(url.lastPathComponent) }
        }
        XCTAssertGreaterThan(files, 50)
        XCTAssertEqual(offenders, [])
    }
}
