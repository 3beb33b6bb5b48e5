import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// What the tests of the compositor thread's hand-off share: a headless app whose frames are drawn on
/// a compositor thread, input put on that thread's queue as the window system would, and the check
/// that the screen it drew is the UI thread's model.
@MainActor
enum CompositorThreadSupport {
    /// A headless app drawing on a compositor thread, `root` shown and settled (no screen reader bridge).
    static func makeApp(root: Node, size: Size = Size(width: 160, height: 240)) throws -> Application {
        var configuration = Application.Configuration.headless(size: size)
        configuration.compositorThread = true
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: root)
        try app.settle()
        return app
    }

    /// A list's content layer: the one the compositor thread scrolls.
    static func contentLayer(of list: ListNode) throws -> Layer {
        try XCTUnwrap(list.layer.sublayers.first { $0.name == "list-content" })
    }

    /// Puts `events` on the compositor thread's queue, as the window system would, without waiting.
    nonisolated static func push(_ events: [InputEvent], to thread: CompositorThread) {
        thread.perform { _, backend in
            for event in events {
                if case .pointerMoved = event { backend.window.pushPointerEvent(event) } else { backend.window.pushEvent(.input(event)) }
            }
        }
    }

    /// `push`, then returns once the thread has read the events (a command runs before the thread
    /// polls; the second round trip starts after that poll).
    static func send(_ events: [InputEvent], to thread: CompositorThread) {
        push(events, to: thread)
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
    }

    /// The screen as the compositor thread last presented it equals the same layers drawn now by a
    /// compositor on this thread: after quiescence they are one picture. On a difference both are
    /// written to `.test-output/compositor-thread/`.
    static func assertScreenIsTheModel(_ app: Application, name: String, file: StaticString = #filePath,
                                       line: UInt = #line) throws {
        let thread = try XCTUnwrap(app.compositorThread, file: file, line: line)
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
        let screen = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil,
                                   file: file, line: line)
        let backend = try SDLRenderBackend(.init(title: "oracle", size: app.host.viewportSize, scale: 1, headless: true,
                                                 renderDriver: .software))
        let oracle = Compositor(backend: backend, configuration: .init(clearColor: app.configuration.backgroundColor))
        let expected = try XCTUnwrap(oracle.capture(app.host.rootLayer), file: file, line: line)
        let (difference, _) = GoldenImage.compare(screen, expected, tolerance: 0)
        if difference.differingPixels > 0 {
            let folder = FileManager.default.currentDirectoryPath + "/.test-output/compositor-thread"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try? screen.writePNG(to: folder + "/\(name)-screen.png")
            try? expected.writePNG(to: folder + "/\(name)-model.png")
        }
        XCTAssertEqual(difference.differingPixels, 0,
                       "the screen is not the model: \(difference) (both in .test-output/compositor-thread)",
                       file: file, line: line)
    }
}
