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
}
