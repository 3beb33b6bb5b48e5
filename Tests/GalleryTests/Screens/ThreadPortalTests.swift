import Compositor
import Tessera
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The Thread screen and the desktop: the composer's "+" asks for a photo through the file chooser
/// and the chosen image shows as a new message (pixels); a message that arrives while the window
/// does not have the focus is posted as a notification, and not while it has it. The file chooser
/// and the notification go through the thread's seams here (`chooseFiles`, `notify`); the portal
/// behind them is tested in `TesseraTests` (`DesktopPortalTests`).
@MainActor
final class ThreadPortalTests: XCTestCase {
    private var time = 0.0
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func makeApp() throws -> (GalleryApp, ThreadController) {
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
        return (app, thread)
    }

    private func frames(_ app: GalleryApp, _ events: [InputEvent] = [], count: Int = 1) {
        for index in 0..<count {
            time += 1.0 / 60
            app.frame(time: time, events: index == 0 ? events : [])
        }
    }

    func testThePlusButtonAttachesTheChosenPhotoAsAMessage() async throws {
        let (app, thread) = try makeApp()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("magenta.png")
        try Bitmap(width: 64, height: 48, filledWith: Color(rgb: 0xFF00FF)).writePNG(to: photo.path)
        var asked: [FileChooserOptions] = []
        thread.chooseFiles = { options, completion in
            asked.append(options)
            completion(.success([photo]))
        }
        let rowsBefore = thread.numberOfRows(in: thread.list)
        let plus = thread.screen.bar.attach
        let origin = plus.convertFromRoot(.zero)
        let point = Point(x: -origin.x + plus.frame.width / 2, y: -origin.y + plus.frame.height / 2)
        frames(app, [.pointerDown(point, button: 1)])
        frames(app, [.pointerUp(point, button: 1)])
        XCTAssertEqual(asked.count, 1, "the + asked for a file")
        XCTAssertEqual(asked.first?.filters, [.images])
        XCTAssertEqual(thread.numberOfRows(in: thread.list), rowsBefore + 1, "one new message (same day)")
        try app.settle()
        let shot = try XCTUnwrap(OffscreenRender.capture(app.host))
        let output = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("portals")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try shot.writePNG(to: output.appendingPathComponent("gallery-attached-photo.png").path)
        // The photo fills its 180-point-high frame in the new bubble at the bottom right.
        var magenta = 0, rightHalf = 0
        for y in 0..<shot.height {
            for x in 0..<shot.width {
                let pixel = shot.pixel(x: x, y: y)
                if (pixel >> 16) & 0xFF > 0xF0 && (pixel >> 8) & 0xFF < 0x10 && pixel & 0xFF > 0xF0 {
                    magenta += 1
                    if x > shot.width / 2 { rightHalf += 1 }
                }
            }
        }
        XCTAssertGreaterThan(magenta, 150 * 100, "the attached photo shows")
        XCTAssertGreaterThan(rightHalf, magenta / 2, "in an outgoing bubble, on the right")
    }

    func testAMessageArrivingWhileUnfocusedIsNotified() async throws {
        let (app, thread) = try makeApp()
        var posted: [DesktopNotification] = []
        thread.notify = { posted.append($0) }
        var focused = true
        thread.windowIsActive = { focused }
        let rows = thread.numberOfRows(in: thread.list)
        thread.receive("While you are here")
        XCTAssertTrue(posted.isEmpty, "the window has the focus: no notification")
        focused = false
        thread.receive("Are you there?")
        XCTAssertEqual(thread.numberOfRows(in: thread.list), rows + 2)
        let notification = try XCTUnwrap(posted.first)
        XCTAssertEqual(posted.count, 1)
        XCTAssertEqual(notification.id, "chat-\(thread.chat.id)")
        XCTAssertEqual(notification.body, "Are you there?")
        XCTAssertEqual(notification.defaultAction, "open")
        XCTAssertFalse(notification.title.isEmpty)
        try app.settle()

        // A sent message is answered after `replyDelay` (the answer is awaited, not slept for).
        thread.replyDelay = 0
        thread.send("Ping")
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while posted.count < 2 && MonotonicClock.nanoseconds() < deadline {
            await Task.yield()
            _ = UIWakeup.shared.wait(timeout: 0.05)
            UIWakeup.shared.reset()
            frames(app)
        }
        XCTAssertEqual(posted.last?.body, "Got it: “Ping”")
    }
}
