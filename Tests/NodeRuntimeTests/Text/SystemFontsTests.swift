import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Without the bundled faces, text is set in the system's fonts through fontconfig (DejaVu when
/// installed, else the generic family), in the right weight; with no font at all it is one clear
/// error and boxes, never a blank. Checked on the pixels drawn.
@MainActor
final class SystemFontsTests: XCTestCase {
    private var noBundle: [BundledFonts.Candidate] {
        [BundledFonts.Candidate(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("tessera-no-bundle-\(UUID().uuidString)").path, origin: "test")]
    }

    /// A registry for which no bundled folder exists; fontconfig as given.
    private func registryWithoutBundle(system: @escaping @Sendable ([String], Bool) -> SystemFace?
                                           = FontSearch.standard.systemFace) -> (FontRegistry, [String]) {
        let candidates = noBundle
        let registry = FontRegistry(fontsFolder: nil, search: FontSearch(environmentFolder: { nil },
                                                                         bundledFolders: { candidates }, systemFace: system))
        registry.reportsErrorsToStandardError = false
        return (registry, candidates.map(\.path))
    }

    private func render(_ text: String, bold: Bool = false, with registry: FontRegistry) throws -> Bitmap {
        let bitmap = try TextGoldenRenderer().render({
            let node = TextNode(attributedText: AttributedText(text, attributes: TextFixtures.plain(18, bold: bold)))
            node.fontRegistry = registry
            return [node]
        }, width: 320)
        return try XCTUnwrap(bitmap)
    }

    func testDejaVuIsMatchedByNameInEachWeight() async throws {
        let regular = try XCTUnwrap(SystemFonts.match(families: SystemFonts.families(for: TextFont.sansFamily), bold: false),
                                    "fontconfig has a sans-serif font")
        guard regular.requestedFamily == TextFont.sansFamily else {
            throw XCTSkip("DejaVu Sans is not installed here (fontconfig chose \(regular.path))")
        }
        XCTAssertFalse(regular.isBold)
        XCTAssertTrue(FileManager.default.fileExists(atPath: regular.path), regular.path)
        let bold = try XCTUnwrap(SystemFonts.match(families: SystemFonts.families(for: TextFont.sansFamily), bold: true))
        XCTAssertTrue(bold.isBold, "a bold file, not an emboldened regular: \(bold.path)")
        XCTAssertNotEqual(bold.path, regular.path)
        let mono = try XCTUnwrap(SystemFonts.match(families: SystemFonts.families(for: TextFont.monospacedFamily), bold: false))
        XCTAssertEqual(mono.requestedFamily, TextFont.monospacedFamily, mono.reason)
        XCTAssertEqual(SystemFonts.families(for: "Some App Family"), [TextFont.sansFamily, "sans-serif"])
    }

    func testAFamilyThatIsNotInstalledGivesWayToTheGenericName() async throws {
        let face = try XCTUnwrap(SystemFonts.match(families: ["Tessera No Such Family", "sans-serif"], bold: false))
        XCTAssertEqual(face.requestedFamily, "sans-serif")
        XCTAssertTrue(face.reason.contains("Tessera No Such Family is not installed"), face.reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: face.path), face.path)
    }

    func testWithoutBundledFontsTextIsDrawnInTheSystemsFonts() async throws {
        let (registry, tried) = registryWithoutBundle()
        let regular = try XCTUnwrap(registry.resolve(TextFont()), "the system's font stands in")
        let expected = try XCTUnwrap(SystemFonts.match(families: SystemFonts.families(for: TextFont.sansFamily), bold: false))
        XCTAssertEqual(regular.file.path, expected.path)
        let bold = try XCTUnwrap(registry.resolve(TextFont(isBold: true)))
        let expectedBold = try XCTUnwrap(SystemFonts.match(families: SystemFonts.families(for: TextFont.sansFamily), bold: true))
        XCTAssertEqual(bold.file.path, expectedBold.path)
        XCTAssertEqual(bold.synthesizesBold, !expectedBold.isBold)
        let mono = try XCTUnwrap(registry.resolve(.monospaced(size: 12)))
        XCTAssertEqual(mono.file.path, SystemFonts.match(families: SystemFonts.families(for: TextFont.monospacedFamily), bold: false)?.path)
        XCTAssertEqual(registry.errors, [.fontsFolderNotFound(tried: tried)], "the missing bundle, once; nothing else failed")

        // The pixels: as much ink as the same words in the bundled faces give (the same design when
        // DejaVu is installed, another sans-serif otherwise), in both weights.
        let bundled = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        for isBold in [false, true] {
            let system = InkPixels.count(in: try render("Hamburgefonstiv 0123", bold: isBold, with: registry))
            let reference = InkPixels.count(in: try render("Hamburgefonstiv 0123", bold: isBold, with: bundled))
            XCTAssertGreaterThan(system, 200, "text drawn (bold: \(isBold))")
            XCTAssertGreaterThan(Double(system), Double(reference) * 0.5, "bold: \(isBold), \(system) vs \(reference)")
            XCTAssertLessThan(Double(system), Double(reference) * 2, "bold: \(isBold), \(system) vs \(reference)")
        }
    }

    func testWithNoFontAtAllItIsOneErrorAndTextIsDrawnAsBoxes() async throws {
        let (registry, tried) = registryWithoutBundle(system: { _, _ in nil })
        XCTAssertNil(registry.resolve(TextFont()))
        XCTAssertNil(registry.resolve(TextFont()), "asked again: the same answer, nothing new reported")
        let expected = FontError.noUsableFont(face: "DejaVu Sans regular", tried: [
            FontError.fontsFolderNotFound(tried: tried).description,
            "fontconfig has no font for DejaVu Sans or sans-serif",
        ])
        XCTAssertEqual(registry.errors, [.fontsFolderNotFound(tried: tried), expected])
        XCTAssertTrue(expected.description.contains(tried[0]) && expected.description.contains("sans-serif"),
                      "the error names what was tried: \(expected)")

        let text = AttributedText("Boxes, not blank", attributes: TextFixtures.plain(18))
        let layout = TextLayout.measure(text, width: 300, fonts: registry, cache: nil)
        XCTAssertEqual(layout.lineCount, 1)
        // 14 characters a box advance wide (0.6 em), two spaces half that.
        XCTAssertEqual(layout.size.width, 18 * 0.6 * 14 + 18 * 0.3 * 2, accuracy: 3)
        let ink = InkPixels.count(in: try render("Boxes, not blank", with: registry))
        XCTAssertGreaterThan(ink, 14 * 20, "an outlined box for each of the 14 characters")
    }
}
