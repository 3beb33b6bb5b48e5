import Compositor
import Tessera
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The Thread screen's composer, driven as a person with an input method would: text and
/// composition events go through SDL's own event queue (`SDL_PushEvent`), are polled by the backend
/// and routed by the host to the focused field. Each state is compared with its golden.
@MainActor
final class ComposerTests: XCTestCase {
    private var time = 0.0
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func makeApp() throws -> (GalleryApp, ThreadController, SDLRenderBackend) {
        var options = GalleryOptions()
        options.screen = .thread
        options.headless = true
        options.size = Size(width: 640, height: 480)
        let data = try ChatData(assets: assets)
        let application = try Application(configuration: .init(title: "gallery-test", size: options.size, headless: true,
                                                                      backgroundColor: Color(rgb: 0x12161B)),
                                          rootController: nil)
        let app = try GalleryApp(options: options, data: data, application: application)
        let thread = try XCTUnwrap(app.tabs.selectedController as? ThreadController)
        thread.clock = { "2026-11-20T08:21" }
        try app.settle()
        return (app, thread, application.backend!)
    }

    private func frames(_ app: GalleryApp, _ events: [InputEvent] = [], count: Int = 1) {
        for index in 0..<count {
            time += 1.0 / 60
            app.frame(time: time, events: index == 0 ? events : [])
        }
    }

    /// Pushes events onto SDL's queue, then runs a frame with what the backend polls from it.
    private func pushThroughSDL(_ app: GalleryApp, _ backend: SDLRenderBackend, _ events: [InputEvent]) throws {
        for event in events { backend.window.pushTextEvent(event) }
        let polled = app.host.compositor.pollEvents()
        XCTAssertEqual(polled.filter { if case .textInput = $0 { return false } else { return true } }.count,
                       events.filter { if case .textInput = $0 { return false } else { return true } }.count,
                       "every composition event comes back from SDL's queue")
        frames(app, polled)
        try app.settle()
    }

    private func clickComposer(_ app: GalleryApp, _ thread: ThreadController) throws {
        let field = thread.composer
        let origin = field.convertFromRoot(.zero)
        let point = Point(x: -origin.x + 20, y: -origin.y + field.bounds.height / 2)
        frames(app, [.pointerDown(point, button: 1)])
        frames(app, [.pointerUp(point, button: 1)])
        try app.settle()
    }

    private func capture(_ app: GalleryApp) throws -> Bitmap {
        // The caret blinks: compare with it shown (half a second after the last change).
        try XCTUnwrap(OffscreenRender.capture(app.host))
    }

    func testTypingComposingSelectingAndSendingThroughSDLsQueue() async throws {
        let (app, thread, backend) = try makeApp()
        try clickComposer(app, thread)
        XCTAssertTrue(app.host.focusedNode === thread.composer, "a click focuses the composer")

        try pushThroughSDL(app, backend, [.textInput("Hello from Tessera, see you at 10:30 👋")])
        XCTAssertEqual(thread.composer.text, "Hello from Tessera, see you at 10:30 👋")
        GoldenImage.assertMatches(try capture(app), named: "composer-typed", in: "GalleryTests", tolerance: 6)

        try pushThroughSDL(app, backend, [.textInput(" "), .textEditing("にほんご", cursor: 4)])
        XCTAssertEqual(thread.composer.markedText, "にほんご")
        GoldenImage.assertMatches(try capture(app), named: "composer-marked", in: "GalleryTests", tolerance: 6)
        try pushThroughSDL(app, backend, [.textEditing("", cursor: 0), .textInput("日本語")])
        XCTAssertEqual(thread.composer.text, "Hello from Tessera, see you at 10:30 👋 日本語")

        // Shift+Home selects the line; the selection shows behind the text.
        frames(app, [.keyDown(.home, modifiers: .shift)])
        try app.settle()
        XCTAssertEqual(thread.composer.selectedRange, 0..<thread.composer.text.utf16.count)
        GoldenImage.assertMatches(try capture(app), named: "composer-selection", in: "GalleryTests", tolerance: 6)

        // Typing replaces the selection; Shift+Enter adds lines and the field grows.
        try pushThroughSDL(app, backend, [.textInput("Line one")])
        let oneLine = thread.composer.frame.height
        for line in ["two", "three"] {
            frames(app, [.keyDown(.enter, modifiers: .shift)])
            try pushThroughSDL(app, backend, [.textInput("Line \(line)")])
        }
        XCTAssertEqual(thread.composer.frame.height, 3 * oneLine, accuracy: 1, "three lines, three lines tall")

        // Enter sends: the bubble appears at the bottom, the list stays pinned, the field empties.
        let rowsBefore = thread.list.numberOfRows
        frames(app, [.keyDown(.enter, modifiers: [])])
        frames(app, count: 40)
        try app.settle()
        XCTAssertEqual(thread.sentMessages, ["Line one\nLine two\nLine three"])
        XCTAssertEqual(thread.list.numberOfRows, rowsBefore + 1)
        XCTAssertEqual(thread.composer.text, "")
        XCTAssertEqual(thread.composer.frame.height, oneLine, accuracy: 1, "the field shrinks back to one line")
        let lastRow = thread.list.frameOfRow(thread.list.numberOfRows - 1)
        XCTAssertEqual(lastRow.maxY - thread.list.contentOffset, thread.list.bounds.height, accuracy: 1,
                       "the new bubble sits at the bottom of the list")
        GoldenImage.assertMatches(try capture(app), named: "composer-sent", in: "GalleryTests", tolerance: 6)
        app.host.setRootController(nil)
    }

    /// A 60-byte composition through SDL's queue (`SDL_TEXTEDITING_EXT`, past the 32 bytes of
    /// `SDL_TEXTEDITING`) shows whole in the composer: drawn underlined from the text before it to the
    /// caret, where the input method's window is placed.
    func testALongCompositionShowsWholeUnderlinedUpToTheCaret() async throws {
        let (app, thread, backend) = try makeApp()
        try clickComposer(app, thread)
        try pushThroughSDL(app, backend, [.textInput("Hi")])
        let before = try XCTUnwrap(app.host.textInputCaret)
        let sixty = "にほんごのにゅうりょくをためすためのなが"
        XCTAssertEqual(sixty.utf8.count, 60)
        try pushThroughSDL(app, backend, [.textEditing(sixty, cursor: 20)])
        XCTAssertEqual(thread.composer.markedText, sixty, "the whole composition, not its first 32 bytes")
        XCTAssertEqual(thread.composer.text, "Hi")
        let caret = try XCTUnwrap(app.host.textInputCaret)
        XCTAssertEqual(caret.minY, before.minY)
        XCTAssertGreaterThan(caret.minX, before.minX + 200, "the caret after twenty glyphs")

        // The underline: the longest run along a row under the text of pixels far from the field's
        // background (its right end's colour).
        let bitmap = try capture(app)
        let scale = Double(bitmap.width) / 640
        let field = thread.composer
        let origin = field.convertFromRoot(.zero)
        let top = Int(-origin.y * scale), bottom = Int((-origin.y + field.bounds.height) * scale) + 3
        let left = Int(-origin.x * scale), right = Int((-origin.x + field.bounds.width) * scale)
        let background = bitmap.pixel(x: right - 4, y: (top + bottom) / 2)
        func differs(_ pixel: UInt32) -> Bool {
            let a = [(pixel >> 16) & 0xFF, (pixel >> 8) & 0xFF, pixel & 0xFF].map(Int.init)
            let b = [(background >> 16) & 0xFF, (background >> 8) & 0xFF, background & 0xFF].map(Int.init)
            return zip(a, b).map { abs($0 - $1) }.max()! > 80
        }
        var best: (y: Int, x: ClosedRange<Int>)?
        for y in top..<min(bottom, bitmap.height) {
            var start: Int?
            for x in left...right {
                let on = x < right && differs(bitmap.pixel(x: x, y: y))
                if on, start == nil { start = x }
                if !on, let first = start {
                    if x - first > (best?.x.count ?? 0) { best = (y, first...(x - 1)) }
                    start = nil
                }
            }
        }
        let underline = try XCTUnwrap(best)
        XCTAssertEqual(Double(underline.x.lowerBound) / scale, before.midX, accuracy: 3, "from where the caret was")
        XCTAssertEqual(Double(underline.x.upperBound) / scale, caret.midX, accuracy: 3, "to the caret")
        GoldenImage.assertMatches(bitmap, named: "composer-long-composition", in: "GalleryTests", tolerance: 6)
        app.host.setRootController(nil)
    }

    func testRightToLeftTypingStartsAtTheRight() async throws {
        let (app, thread, backend) = try makeApp()
        try clickComposer(app, thread)
        try pushThroughSDL(app, backend, [.textInput("שלום, נתראה ב-10:30 בתחנה")])
        let field = thread.composer
        XCTAssertEqual(field.text, "שלום, נתראה ב-10:30 בתחנה")
        let layout = try XCTUnwrap(field.shownTextLayout)
        XCTAssertTrue(layout.lines[0].isRightToLeft)
        // The caret (at the end of the text, logically) sits at the line's left end.
        let line = layout.lineRects(inWidth: field.bounds.width)[0]
        XCTAssertEqual(field.caretFrame.minX, line.minX - 1, accuracy: 1.5)
        GoldenImage.assertMatches(try capture(app), named: "composer-rtl", in: "GalleryTests", tolerance: 6)
        app.host.setRootController(nil)
    }
}
