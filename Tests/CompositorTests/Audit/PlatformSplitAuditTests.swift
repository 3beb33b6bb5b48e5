import Dispatch
import XCTest
@testable import Compositor

/// Defects found by an audit of the split of the window from the renderer: each test failed before its fix.
@MainActor
final class PlatformSplitAuditTests: XCTestCase {
    private func window(_ title: String) throws -> SDLWindow {
        try SDLWindow(.init(title: title, size: Size(width: 16, height: 16), scale: 1, headless: true))
    }

    /// `SDLWindow.init` calls `SDL_StopTextInput()` (process-wide in SDL 2, and it flushes queued text
    /// events): opening a second window ends the text input a text field of the first started, and
    /// the text already typed into it is lost.
    func testOpeningAnotherWindowKeepsTheFirstWindowsTextInput() async throws {
        let a = try window("a")
        _ = a.pollEvents()
        a.startTextInput(caret: Rect(x: 2, y: 2, width: 1, height: 10))
        a.pushTextEvent(.textInput("typed"))
        XCTAssertTrue(a.isTextInputActive)
        let b = try window("b")
        _ = b
        XCTAssertTrue(a.isTextInputActive,
                       "text input (which SDL 2 keeps for the process) is still on for A's text field")
        XCTAssertEqual(a.pollEvents(), [.input(.textInput("typed"))],
                       "the text typed into A before B opened reaches A")
        a.pushTextEvent(.textInput("more"))
        XCTAssertEqual(a.pollEvents(), [.input(.textInput("more"))],
                       "A's text field still takes text after B opened")
        // B stopping its own text input leaves A's on; A stopping its own ends it.
        b.stopTextInput()
        XCTAssertTrue(a.isTextInputActive, "B's stop is B's alone")
        a.stopTextInput()
        XCTAssertFalse(a.isTextInputActive)
    }

    /// A scale change on the UI side of a compositor thread sends the UI compositor's configuration
    /// too (`ThreadedDelivery.settingsChanged`): the thread's own compositor configuration (here its
    /// clear colour) is replaced by the UI compositor's, which the old code never did on a scale change.
    func testAScaleChangeLeavesTheCompositorThreadsConfigurationAlone() async throws {
        let red = Color(rgb: 0xFF0000)
        let thread = try CompositorThread(backend: .init(title: "audit", size: Size(width: 32, height: 32), scale: 1,
                                                         headless: true, renderDriver: .software),
                                          compositor: .init(clearColor: red))
        defer { thread.stop() }
        let compositor = Compositor(thread: thread)  // its own configuration: the default (black)
        compositor.scale = 2
        let drawn = thread.performAndWait { drawer, _ in [drawer.scale, Double(drawer.configuration.clearColor.red)] }
        XCTAssertEqual(drawn?[0], 2, "the scale went to the thread")
        XCTAssertEqual(drawn?[1], 255, "the thread's compositor still clears to its own colour")
    }
}
