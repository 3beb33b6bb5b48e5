import Foundation
import XCTest
@testable import Compositor

/// When windows appear: an app window at once; a popup window (a menu's, a tooltip's) only with its
/// first frame, so no empty window shows before it; a dialog window once its renderer is made.
/// Headless, through SDL's own window state.
@MainActor
final class WindowShowingTests: XCTestCase {
    private func configuration(_ title: String, popup: PopupWindowKind? = nil) -> SDLRenderBackend.Configuration {
        var configuration = SDLRenderBackend.Configuration(title: title, size: Size(width: 40, height: 30), scale: 1,
                                                           headless: true, renderDriver: .software)
        configuration.window.popup = popup
        return configuration
    }

    func testAPopupWindowAppearsWithItsFirstFrame() async throws {
        for kind in [PopupWindowKind.menu, .tooltip] {
            let backend = try SDLRenderBackend(configuration("popup", popup: kind))
            XCTAssertFalse(backend.window.isShown, "\(kind): hidden before its first frame")
            let compositor = Compositor(backend: backend, scale: 1)
            let layer = Layer()
            layer.frame = Rect(x: 0, y: 0, width: 40, height: 30)
            layer.backgroundColor = Color(rgb: 0x3050D0)
            _ = compositor.render(layer)
            XCTAssertTrue(backend.window.isShown, "\(kind): shown as its first frame is presented")
            XCTAssertEqual(Color(premultipliedARGB: try XCTUnwrap(backend.readPixels()).pixel(x: 20, y: 15)),
                           Color(rgb: 0x3050D0), "with that frame")
        }
    }

    func testAnAppWindowIsShownAtOnceAndADialogOnceItsRendererIsMade() async throws {
        let main = try SDLRenderBackend(configuration("main"))
        XCTAssertTrue(main.window.isShown)
        var dialog = configuration("dialog")
        dialog.modalFor = main.window.windowID
        let window = try SDLWindow(dialog.window)
        XCTAssertFalse(window.isShown, "a dialog waits for its renderer")
        let backend = try SDLRenderBackend(window: window, renderDriver: .software)
        XCTAssertTrue(backend.window.isShown, "shown once its renderer is made")
    }
}
