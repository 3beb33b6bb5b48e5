import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The font registry: finding the fonts, bad font files, and each thread's own font objects.
@MainActor
final class TextFontTests: XCTestCase {
    nonisolated(unsafe) private var temporaryFolder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        TextFixtures.useRepositoryFonts()
        temporaryFolder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-fonts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporaryFolder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporaryFolder)
        try super.tearDownWithError()
    }

    private func registry() -> FontRegistry {
        let registry = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        registry.reportsErrorsToStandardError = false
        return registry
    }

    private func width(of string: String, family: String, in registry: FontRegistry) -> Double {
        TextLayout.measure(AttributedText(string, attributes: TextAttributes(font: TextFont(family: family, size: 15))),
                           width: 500, fonts: registry, cache: nil).size.width
    }

    func testFindsTheRepositoryFonts() async throws {
        let folder = try FontRegistry.locateFontsFolder()
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/DejaVuSans.ttf"), folder)
        let registry = registry()
        XCTAssertNoThrow(try registry.validate(TextFont()))
        XCTAssertNoThrow(try registry.validate(.monospaced(size: 12, bold: true)))
        XCTAssertTrue(registry.errors.isEmpty)
    }

    func testMissingFileNamesTheFileAndFallsBack() async throws {
        let registry = registry()
        let path = temporaryFolder.appendingPathComponent("Nowhere.ttf").path
        registry.register(family: "Missing", regular: path)
        XCTAssertThrowsError(try registry.validate(TextFont(family: "Missing"))) { error in
            XCTAssertEqual(error as? FontError, .missingFile(path: path))
            XCTAssertTrue("\(error)".contains(path), "the message names the file: \(error)")
        }
        XCTAssertEqual(width(of: "fallback text", family: "Missing", in: registry),
                       width(of: "fallback text", family: TextFont.sansFamily, in: registry))
        XCTAssertEqual(registry.errors, [.missingFile(path: path)], "reported once")
    }

    func testCorruptAndEmptyFilesNameTheFileAndFallBack() async throws {
        let registry = registry()
        let corrupt = temporaryFolder.appendingPathComponent("Corrupt.ttf")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: corrupt)
        let empty = temporaryFolder.appendingPathComponent("Empty.ttf")
        try Data().write(to: empty)
        registry.register(family: "Corrupt", regular: corrupt.path)
        registry.register(family: "Empty", regular: empty.path, bold: corrupt.path)

        for (family, path) in [("Corrupt", corrupt.path), ("Empty", empty.path)] {
            XCTAssertThrowsError(try registry.validate(TextFont(family: family))) { error in
                guard case let .corruptFile(reportedPath, reason)? = error as? FontError else {
                    return XCTFail("expected corruptFile, got \(error)")
                }
                XCTAssertEqual(reportedPath, path)
                XCTAssertFalse(reason.isEmpty)
                XCTAssertTrue("\(error)".contains(path))
            }
            XCTAssertGreaterThan(width(of: "still readable", family: family, in: registry), 50)
        }
        // Bold of a family whose bold file is corrupt falls back too.
        let bold = TextLayout.measure(AttributedText("bold", attributes: TextAttributes(font: TextFont(family: "Empty", isBold: true))),
                                      width: 300, fonts: registry, cache: nil)
        XCTAssertGreaterThan(bold.size.width, 10)
        XCTAssertEqual(registry.errors.count, 2)
    }

    /// A "font" that is a FIFO (a read would wait forever for a writer), a folder, or a file larger
    /// than any font is refused with its reason and the text falls back; none of it hangs or is read.
    func testNonRegularAndAbsurdlyLargeFilesAreRefusedAndFallBack() async throws {
        let registry = registry()
        let fifo = temporaryFolder.appendingPathComponent("Pipe.ttf").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let folder = temporaryFolder.appendingPathComponent("Folder.ttf")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Sparse: the size is there, no disk blocks are.
        let huge = temporaryFolder.appendingPathComponent("Huge.ttf").path
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: nil))
        XCTAssertEqual(truncate(huge, off_t(FontFile.maximumByteCount + 1)), 0)
        for (family, path, words) in [("Pipe", fifo, "not a regular file"), ("Folder", folder.path, "not a regular file"),
                                      ("Huge", huge, "over the 512 MB")] {
            registry.register(family: family, regular: path)
            XCTAssertThrowsError(try registry.validate(TextFont(family: family))) { error in
                guard case let .unreadableFile(reportedPath, reason)? = error as? FontError else {
                    return XCTFail("\(family): expected unreadableFile, got \(error)")
                }
                XCTAssertEqual(reportedPath, path)
                XCTAssertTrue(reason.contains(words), "\(family): \(reason)")
            }
            XCTAssertEqual(width(of: "fallback text", family: family, in: registry),
                           width(of: "fallback text", family: TextFont.sansFamily, in: registry), family)
        }
    }

    /// Font files are mapped, not read into the process's own memory: after a layout in an emoji
    /// and a CJK face the process holds no anonymous copy of them (their bytes are file pages, shared).
    func testFontFilesAreMappedNotCopied() async throws {
        let registry = registry()
        let face = try XCTUnwrap(registry.resolve(TextFont()))
        // Read to its end: /proc files say they are empty, and a sized read stops short.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try handle.close()
        XCTAssertTrue(maps.contains(face.file.path), "\(face.file.path) is a mapping of the process")
        let base = UInt(bitPattern: face.file.bytes.baseAddress)
        let mapping = maps.split(separator: "\n").first { line in
            let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            return range.count == 2 && range[0] <= base && base < range[1]
        }
        XCTAssertTrue(mapping?.hasSuffix(face.file.path) == true, "the bytes HarfBuzz and FreeType read are the file's pages: \(mapping ?? "none")")
        XCTAssertTrue(mapping?.contains(" r--p ") == true, "read-only: \(mapping ?? "none")")
    }

    func testAFolderWithoutTheFilesFallsBackToTheSystemsFonts() async throws {
        let registry = FontRegistry(fontsFolder: temporaryFolder.path)
        registry.reportsErrorsToStandardError = false
        let face = try XCTUnwrap(registry.resolve(TextFont()), "fontconfig's font stands in")
        XCTAssertFalse(face.file.path.hasPrefix(temporaryFolder.path), face.file.path)
        XCTAssertEqual(registry.errors, [.missingFile(path: temporaryFolder.appendingPathComponent("DejaVuSans.ttf").path)])
        let text = AttributedText("no fonts in the folder", attributes: TextFixtures.plain())
        let layout = TextLayout.measure(text, width: 300, fonts: registry, cache: nil)
        XCTAssertEqual(layout.lineCount, 1)
        XCTAssertGreaterThan(layout.size.width, 100)
        var context = try BitmapContext(size: Size(width: 300, height: 30))
        context.fill(context.bounds, color: .white)
        TextRenderer.draw(layout, in: &context, fonts: registry)
        XCTAssertGreaterThan(InkPixels.count(in: context.makeBitmap()), 100)
    }

    func testEachThreadHasItsOwnFontObjects() async throws {
        let registry = registry()
        let face = try XCTUnwrap(registry.resolve(TextFont()))
        let here = try XCTUnwrap(ThreadFontCache.current.handle(for: face, pixelSize: 15))
        XCTAssertTrue(ThreadFontCache.current.handle(for: face, pixelSize: 15) === here, "one per thread and size")
        let elsewhere = onBackgroundThread { () -> UInt in
            guard let handle = ThreadFontCache.current.handle(for: face, pixelSize: 15) else { return 0 }
            return UInt(bitPattern: ObjectIdentifier(handle).hashValue)
        }
        XCTAssertNotEqual(elsewhere, 0)
        XCTAssertNotEqual(elsewhere, UInt(bitPattern: ObjectIdentifier(here).hashValue))
        XCTAssertTrue(here.file === face.file, "the file's bytes are shared, the face objects are not")
    }

    func testThreadCacheClosesTheLeastRecentlyUsedFaces() async throws {
        let face = try XCTUnwrap(registry().resolve(TextFont()))
        let count = onBackgroundThread { () -> Int in
            let cache = ThreadFontCache.current
            for size in 8..<(8 + ThreadFontCache.capacity + 10) { _ = cache.handle(for: face, pixelSize: size) }
            return cache.openCount
        }
        XCTAssertEqual(count, ThreadFontCache.capacity)
    }
}
