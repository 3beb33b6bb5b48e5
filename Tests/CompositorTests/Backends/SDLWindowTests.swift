import Dispatch
import Foundation
import XCTest
@testable import Compositor

/// The platform apart from rendering: an `SDLWindow` has its events, density and placement; a
/// renderer made for it only draws. Several windows share SDL's one event queue and each reads only
/// its own events; each has its own renderer and compositor and shows its own frames.
@MainActor
final class SDLWindowTests: XCTestCase {
    private func window(_ title: String, size: Double = 16) throws -> SDLWindow {
        try SDLWindow(.init(title: title, size: Size(width: size, height: size), scale: 1, headless: true))
    }

    func testEachWindowReadsOnlyItsOwnEvents() async throws {
        let a = try window("a"), b = try window("b")
        XCTAssertNotEqual(a.windowID, b.windowID)
        _ = a.pollEvents(); _ = b.pollEvents()  // their own opening events

        a.pushEvent(.input(.pointerDown(Point(x: 3, y: 4), button: 1, clicks: 1)))
        b.pushEvent(.input(.wheel(dx: 0, dy: -2)))
        b.pushEvent(.input(.pointerUp(Point(x: 5, y: 6), button: 1)))
        // A drains SDL's queue: its press is its own; B's events wait for B, in their order.
        XCTAssertEqual(a.pollEvents(), [.input(.pointerDown(Point(x: 3, y: 4), button: 1, clicks: 1))])
        XCTAssertEqual(a.pollEvents(), [])
        XCTAssertEqual(b.pollEvents(), [.input(.wheel(dx: 0, dy: -2)), .input(.pointerUp(Point(x: 5, y: 6), button: 1))])
        XCTAssertEqual(b.pollEvents(), [])

        // An event of no window (quit) is every window's, whichever reads it first.
        a.pushEvent(.input(.quit))
        XCTAssertEqual(b.pollEvents(), [.input(.quit)])
        XCTAssertEqual(a.pollEvents(), [.input(.quit)])
    }

    func testAWaitEndsAtOnceForEventsAnotherWindowReadForIt() async throws {
        let wake = UIWakeup()
        let a = try window("a")
        let b = try SDLWindow(.init(title: "b", size: Size(width: 16, height: 16), scale: 1, headless: true, eventWake: wake))
        b.waitsInSDLQueue = true
        _ = a.pollEvents(); _ = b.pollEvents()
        wake.reset()
        b.pushEvent(.input(.wheel(dx: 0, dy: 1)))
        XCTAssertEqual(a.pollEvents(), [], "A put B's wheel aside")
        // SDL's queue is empty now: a wait that looked only there would run its whole 20 s.
        let start = DispatchTime.now().uptimeNanoseconds
        let events = b.waitForEvents(timeout: 20)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        XCTAssertEqual(events, [.input(.wheel(dx: 0, dy: 1))])
        XCTAssertLessThan(waited, 10)
    }

    func testTheEventsOfAClosedWindowAreDropped() async throws {
        let a = try window("a")
        var b: SDLWindow? = try window("b")
        _ = a.pollEvents(); _ = b?.pollEvents()
        b?.pushEvent(.input(.wheel(dx: 0, dy: 1)))
        b = nil
        XCTAssertEqual(a.pollEvents(), [], "the closed window's wheel reaches no other window")
    }

    /// A drop's file name is SDL's allocation: freed once, by the window that reads it, by the
    /// routing when its window closed unread, and never copied to other windows (glibc stops the
    /// process on a double free).
    func testADropIsFreedOnceWhereverItGoes() async throws {
        let a = try window("a")
        var b: SDLWindow? = try window("b")
        _ = a.pollEvents(); _ = b?.pollEvents()
        a.pushDrop(file: "/tmp/read-by-a")
        b?.pushDrop(file: "/tmp/never-read")
        a.pushDrop(file: "/tmp/no-window", forNoWindow: true)
        XCTAssertEqual(a.pollEvents(), [], "drops are not input yet: read and let go")
        b = nil  // closed with its drop unread
        let c = try window("c")
        XCTAssertEqual(c.pollEvents(), [], "the drop of no window was A's alone")
        XCTAssertEqual(a.pollEvents(), [])
    }

    /// Two windows, each with its renderer and compositor, each showing its own tree.
    func testTwoWindowsShowTheirOwnFrames() async throws {
        let redWindow = try window("red", size: 20), blueWindow = try window("blue", size: 30)
        let red = Compositor(backend: try SDLRenderBackend(window: redWindow, renderDriver: .software))
        let blue = Compositor(backend: try SDLRenderBackend(window: blueWindow, renderDriver: .software))
        XCTAssertTrue(red.window === redWindow, "a compositor reads the events of the window its renderer draws into")
        XCTAssertTrue(blue.window === blueWindow)
        func tree(_ color: UInt32, side: Double) -> Layer {
            let layer = Layer()
            layer.frame = Rect(x: 0, y: 0, width: side, height: side)
            layer.backgroundColor = Color(rgb: color)
            return layer
        }
        let redPixels = try XCTUnwrap(red.capture(tree(0xFF0000, side: 20)))
        let bluePixels = try XCTUnwrap(blue.capture(tree(0x0000FF, side: 30)))
        XCTAssertEqual([redPixels.width, redPixels.height], [20, 20])
        XCTAssertEqual([bluePixels.width, bluePixels.height], [30, 30])
        XCTAssertEqual(Set(redPixels.pixels), [0xFFFF0000])
        XCTAssertEqual(Set(bluePixels.pixels), [0xFF0000FF])
        // Drawing one window's next frame leaves the other's as it was.
        _ = red.capture(tree(0x00FF00, side: 20))
        XCTAssertEqual(Set(try XCTUnwrap(blue.backend.readPixels()).pixels), [0xFF0000FF])
    }

    /// SDL shows one cursor for all its windows: each window keeps the shape its content asks for
    /// and shows it when the pointer comes in.
    func testEachWindowShowsItsOwnCursorWhenThePointerEntersIt() async throws {
        let a = try window("a"), b = try window("b")
        a.setCursor(.hand)
        b.setCursor(.iBeam)
        XCTAssertEqual(SDLWindow.shownCursor, .iBeam)
        a.pushPointerEntered()
        _ = a.pollEvents()
        XCTAssertEqual(SDLWindow.shownCursor, .hand, "the pointer over A shows A's shape")
        b.pushPointerEntered()
        _ = a.pollEvents()  // A reads B's entering and puts it aside: nothing changes yet
        XCTAssertEqual(SDLWindow.shownCursor, .hand)
        _ = b.pollEvents()
        XCTAssertEqual(SDLWindow.shownCursor, .iBeam, "over B, B's")
        a.setCursor(.arrow); b.setCursor(.arrow)
    }

    /// The software renderer, asked for by name, shows its frames through the window system's own
    /// surface (SDL would otherwise keep the window's surface in a texture of an OpenGL renderer:
    /// llvmpipe under Xvfb, milliseconds for every frame shown). The environment's setting wins.
    func testTheSoftwareRendererAsksForTheWindowSystemsSurface() async throws {
        let environment = ProcessInfo.processInfo.environment["SDL_FRAMEBUFFER_ACCELERATION"]
        _ = try SDLRenderBackend(.init(title: "surface", size: Size(width: 8, height: 8), scale: 1, headless: true,
                                       renderDriver: .software))
        XCTAssertEqual(SDLRenderBackend.framebufferAccelerationHint, environment ?? "0")
    }

    /// A renderer knows nothing of the window beyond where it draws: the window's members are the
    /// window's, and a compositor on a renderer without one has no events to read.
    func testACompositorWithoutAWindowReadsNoEvents() async {
        final class Bare: RenderBackend {
            let rendererName = "bare"
            var outputPixelSize: (width: Int, height: Int) { (4, 4) }
            var maximumTextureSize: Int { 64 }
            func makeTexture(from bitmap: Bitmap, region: PixelRect) -> TextureHandle? { nil }
            func destroyTexture(_ texture: TextureHandle) {}
            func beginFrame(clearColor: Color) {}
            func setClip(_ rect: PixelRect?) {}
            func fill(_ rect: Rect, color: Color) {}
            func drawTexture(_ texture: TextureHandle, source: PixelRect, destination: Rect, opacity: Double) {}
            func drawGeometry(texture: TextureHandle?, vertices: [GeometryVertex], indices: [Int32]) {}
            func readPixels() -> Bitmap? { nil }
            func present() {}
        }
        let compositor = Compositor(backend: Bare())
        XCTAssertNil(compositor.window)
        XCTAssertNil(compositor.textInputPlatform)
        XCTAssertEqual(compositor.pollEvents(), [])
        XCTAssertEqual(compositor.waitForEvents(timeout: 0), [])
        let recording = RecordingRenderBackend(width: 4, height: 4)
        recording.queuedEvents = [.input(.keyDown(.enter, modifiers: []))]
        XCTAssertEqual(Compositor(backend: recording).pollEvents(), [.keyDown(.enter, modifiers: [])])
    }
}
