import Compositor
import XCTest

/// SDL's mouse events as the backend translates them, and system cursors under the dummy driver.
@MainActor
final class SDLPointerEventTests: XCTestCase {
    func testButtonsClickCountsWheelAndLeavingArriveInPoints() async throws {
        let backend = try SDLRenderBackend(.init(title: "pointer", size: Size(width: 200, height: 100), scale: 2,
                                                 headless: true))
        let compositor = Compositor(backend: backend, scale: 2)
        _ = compositor.pollEvents()  // the window's own events
        backend.window.pushEvent(.input(.pointerDown(Point(x: 10, y: 20), button: 3, clicks: 2)))
        backend.window.pushEvent(.input(.pointerUp(Point(x: 10.5, y: 20), button: 3)))
        backend.window.pushEvent(.input(.pointerDown(Point(x: 4, y: 4), button: 1)))
        backend.window.pushEvent(.input(.wheel(dx: 0, dy: -0.25)))
        backend.window.pushEvent(.input(.pointerLeftWindow))
        XCTAssertEqual(compositor.pollEvents(), [
            .pointerDown(Point(x: 10, y: 20), button: 3, clicks: 2),
            .pointerUp(Point(x: 10.5, y: 20), button: 3),
            .pointerDown(Point(x: 4, y: 4), button: 1, clicks: 1),
            .wheel(dx: 0, dy: -0.25),
            .pointerLeftWindow,
        ])
    }

    func testSettingEveryCursorUnderTheDummyDriverIsHarmless() async throws {
        let backend = try SDLRenderBackend(.init(title: "cursor", size: Size(width: 64, height: 64), headless: true))
        XCTAssertEqual(backend.window.videoDriverName, "dummy")
        for cursor in Cursor.allCases + Cursor.allCases.reversed() { backend.window.setCursor(cursor) }
        let compositor = Compositor(backend: backend)
        let root = Layer(name: "root")
        root.frame = Rect(x: 0, y: 0, width: 64, height: 64)
        root.backgroundColor = Color(rgb: 0x336699)
        let pixels = try XCTUnwrap(compositor.capture(root))
        XCTAssertEqual(pixels.pixels[32 * 64 + 32], 0xFF33_6699, "the backend still draws")
    }
}
