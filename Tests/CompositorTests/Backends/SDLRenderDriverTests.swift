import Compositor
import XCTest

/// Choosing SDL's renderer (`SDLRenderBackend.Configuration.renderDriver`) under the dummy video driver,
/// which has only the software renderer: asked for, it draws; any other is refused by name rather than
/// replaced by SDL's quiet fallback. (The OpenGL renderer in a real window is checked under Xvfb by the
/// gallery's window tests.)
@MainActor
final class SDLRenderDriverTests: XCTestCase {
    func testTheSoftwareRendererAskedForIsTheOneThatDraws() async throws {
        let backend = try SDLRenderBackend(.init(title: "software", size: Size(width: 32, height: 16), headless: true,
                                                 renderDriver: .software))
        XCTAssertEqual(backend.rendererName, "software")
        XCTAssertEqual(backend.window.videoDriverName, "dummy")
        let compositor = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0x102030)))
        let root = Layer(name: "root")
        root.frame = Rect(x: 0, y: 0, width: 32, height: 16)
        root.backgroundColor = Color(rgb: 0xFF8000)
        let pixels = try XCTUnwrap(compositor.capture(root))
        XCTAssertEqual(pixels.pixel(x: 5, y: 5), 0xFFFF_8000)
    }

    func testARendererTheVideoDriverLacksIsRefusedByName() async throws {
        for driver in [RenderDriver.opengl, .opengles2] {
            XCTAssertThrowsError(try SDLRenderBackend(.init(title: "refused", size: Size(width: 32, height: 16),
                                                            headless: true, renderDriver: driver))) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(driver.rawValue), message)
                XCTAssertTrue(message.contains("dummy"), message)
                XCTAssertTrue(message.contains("offered software"), message)
            }
        }
        // The refusal leaves SDL able to open the next window with its own choice.
        let backend = try SDLRenderBackend(.init(title: "auto", size: Size(width: 32, height: 16), headless: true))
        XCTAssertEqual(backend.rendererName, "software")
    }
}
