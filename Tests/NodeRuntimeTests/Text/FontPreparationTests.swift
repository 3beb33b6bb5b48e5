import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// `FontRegistry.prepare()` reads the default faces and the common fallbacks' files, and asks
/// fontconfig its questions, on a background thread: a layout on the UI thread afterwards reads no
/// font file and asks fontconfig nothing.
@MainActor
final class FontPreparationTests: XCTestCase {
    private func prepared(_ registry: FontRegistry) {
        let done = DispatchSemaphore(value: 0)
        let start = TextWorkCounters.current
        registry.prepare { done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "preparing finishes")
        XCTAssertEqual(TextWorkCounters.since(start).fontFilesRead, 0, "prepare() reads nothing on the calling thread")
        XCTAssertEqual(TextWorkCounters.since(start).fontconfigQueries, 0)
    }

    func testAfterPreparingALayoutOfLatinAndEmojiReadsNoFontFile() async throws {
        let registry = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        prepared(registry)
        let text = AttributedText("Hello 😀 world 👍🏽, see you at 10 ❤️ 🎉", attributes: TextFixtures.plain())
        var bold = TextFixtures.plain(bold: true)
        bold.font.size = 17
        var styled = text
        styled.append(" bold too", attributes: bold)
        let before = TextWorkCounters.current
        let clock = ContinuousClock()
        let start = clock.now
        let layout = TextLayout.measure(styled, width: 300, fonts: registry, cache: nil)
        let elapsed = clock.now - start
        let work = TextWorkCounters.since(before)
        print("prepare() took \(registry.preparationDuration ?? .zero); the layout after it \(elapsed), "
              + "opening \(work.facesOpened) faces over bytes read before")
        XCTAssertEqual(work.fontFilesRead, 0, "every face this text needs was read by prepare()")
        XCTAssertEqual(work.fontconfigQueries, 0, "every fallback this text needs was looked up by prepare()")
        XCTAssertEqual(work.fontReadWaits, 0)
        let emoji = layout.lines.flatMap(\.fragments).filter { $0.face != nil }
        XCTAssertFalse(emoji.isEmpty, "the emoji are drawn by their fallback face")
        XCTAssertTrue(emoji.allSatisfy { $0.face?.file.path.contains("NotoColorEmoji") == true })
    }

    /// Preparing twice does the work once; a second caller's completion runs when it is done.
    func testPreparingTwiceReadsOnce() async throws {
        let registry = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        prepared(registry)
        XCTAssertTrue(registry.hasStartedPreparing)
        prepared(registry)
    }

    /// What the read ahead keeps is the lookups and the opened faces, not the fallbacks' pages: an app
    /// that never shows an emoji or a CJK character does not hold the tables the lookup touched. The
    /// registry's own faces stay resident (the first layout needs them). Byte counts from
    /// `/proc/self/smaps`, for the exact mappings this registry made.
    func testTheFallbacksPagesAreGivenBackOnceReadAhead() async throws {
        let registry = FontRegistry(fontsFolder: GoldenImage.bundledFontsFolder)
        prepared(registry)
        let files = registry.filesRead.values
        let fallbacks = files.filter { !$0.path.hasPrefix(GoldenImage.bundledFontsFolder) }
        let own = files.filter { $0.path.hasPrefix(GoldenImage.bundledFontsFolder) }
        XCTAssertFalse(fallbacks.isEmpty, "prepare() read the system's fallbacks (emoji, CJK)")
        XCTAssertEqual(own.count, 3)
        for file in fallbacks {
            XCTAssertEqual(try Self.residentBytes(of: file), 0, "\(file.path) is still resident after prepare()")
        }
        XCTAssertGreaterThan(try own.map(Self.residentBytes).reduce(0, +), 0, "the registry's own faces stay resident")

        // Used again, the pages come back (from the page cache) and the emoji are drawn by their face.
        let layout = TextLayout.measure(AttributedText("😀", attributes: TextFixtures.plain()), width: 300, fonts: registry, cache: nil)
        let face = try XCTUnwrap(layout.lines.flatMap(\.fragments).compactMap(\.face).first)
        XCTAssertTrue(face.file.path.contains("NotoColorEmoji"))
        XCTAssertGreaterThan(try Self.residentBytes(of: face.file), 0)
    }

    /// The resident bytes of `file`'s mapping, from `/proc/self/smaps`.
    static func residentBytes(of file: FontFile) throws -> Int {
        let start = UInt(bitPattern: file.bytes.baseAddress)
        // Read to the end: a single read of a /proc file (which has no size) gets only its first page.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let low = UInt(line[..<dash], radix: 16), line.contains(" ") {
                inMapping = low == start
            } else if inMapping, line.hasPrefix("Rss:") {
                return (Int(line.split(separator: " ")[1]) ?? 0) * 1024
            }
        }
        throw CocoaError(.fileReadUnknown, userInfo: ["mapping": "\(file.path) at \(start) is not in smaps"])
    }
}
