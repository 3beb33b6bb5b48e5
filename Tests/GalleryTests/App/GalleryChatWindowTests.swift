import Compositor
import Tessera
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// A chat opened in a window of its own: by Ctrl+Enter on the focused chat row, or at start by
/// `--open-chat-window N`. The chat list stays where it was; closing the chat window leaves the
/// gallery's window open.
@MainActor
final class GalleryChatWindowTests: XCTestCase {
    private var time = 0.0
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    private func makeApp(chatWindowRow: Int? = nil) throws -> GalleryApp {
        var options = GalleryOptions()
        options.rows = 300
        options.headless = true
        options.size = Size(width: 640, height: 480)
        options.chatWindowRow = chatWindowRow
        let data = try ChatData(assets: assets)
        var configuration = Application.Configuration(title: "gallery-test", size: options.size, headless: true,
                                                      backgroundColor: Color(rgb: 0x12161B))
        configuration.accessibility = false
        let application = try Application(configuration: configuration, rootController: nil)
        return try GalleryApp(options: options, data: data, application: application)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func frames(_ app: GalleryApp, _ events: [InputEvent] = []) {
        time += 1.0 / 60
        app.frame(time: time, events: events)
    }

    /// The chat a window shows, through its root controller.
    private func chat(in window: Application.Window) -> ChatData.Chat? {
        (window.rootController as? ThreadController)?.chat
    }

    func testTheOptionOpensTheChatAtThatRowInAWindowOfItsOwn() async throws {
        let app = try makeApp(chatWindowRow: 3)
        defer { app.application.close() }
        let windows = app.application.windows
        XCTAssertEqual(windows.count, 2)
        let window = try XCTUnwrap(windows.last)
        let expected = app.data.chat(forRow: 3)
        XCTAssertEqual(chat(in: window)?.id, expected.id)
        XCTAssertEqual(window.title, expected.title)
        XCTAssertEqual(window.size, Size(width: 480, height: 640))
        try app.settle()
        // The thread's screen is drawn in that window: not one flat colour.
        let pixels = try window.capture()
        let samples = Set(stride(from: 10, to: 630, by: 40).map { pixels.pixel(x: 240, y: $0) })
        XCTAssertGreaterThan(samples.count, 2, "the thread's messages are drawn in the window")
        XCTAssertTrue(app.chatsNavigation.viewControllers.count == 1, "the chat list stays in the main window")

        window.close()
        XCTAssertTrue(app.chatWindows.isEmpty)
        XCTAssertEqual(app.application.windows.count, 1)
        XCTAssertFalse(app.application.isQuitting, "the gallery's own window is still open")
    }

    func testControlEnterOnAFocusedChatOpensItInANewWindow() async throws {
        let app = try makeApp()
        defer { app.application.close() }
        try app.settle()
        var focused: ChatRowNode?
        for _ in 0..<12 {
            frames(app, [.keyDown(.tab, modifiers: [])])
            if let row = app.host.focusedNode as? ChatRowNode { focused = row; break }
        }
        let row = try XCTUnwrap(focused, "Tab reaches the chat rows")
        let list = app.chats.list
        let expected = app.data.chat(forRow: app.chats.dataRow(try XCTUnwrap(list.row(of: row))))
        frames(app, [.keyDown(.enter, modifiers: .control)])
        XCTAssertEqual(app.application.windows.count, 2, "Ctrl+Enter opened a window")
        XCTAssertEqual(app.chatWindows.count, 1)
        XCTAssertEqual(app.chatWindows.first.flatMap(chat(in:))?.id, expected.id)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 1, "and did not open the chat in the list's stack")

        // Ctrl+W in the chat window closes it alone.
        let window = try XCTUnwrap(app.chatWindows.first)
        try window.settle()
        window.frame(events: [.keyDown(.character("w"), modifiers: .control)])
        XCTAssertFalse(window.isOpen)
        XCTAssertTrue(app.chatWindows.isEmpty)
        XCTAssertEqual(app.application.windows.count, 1)
        XCTAssertFalse(app.application.isQuitting)
    }
}
