import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Draws are prepared for the renderer on the workers: on SDL's software renderer (straight alpha)
/// the UI thread commits and uploads translucent and opaque contents without one pass over their
/// pixels, and the screen shows the right colours.
@MainActor
final class PreparedUploadTests: XCTestCase {
    private var time = 0.0
    static let background = Color(rgb: 0x1E2630)

    /// A translucent bubble on a clear background, with an opaque bar across its middle.
    final class BubbleNode: Node, NodeDrawing, @unchecked Sendable {
        func drawParameters() -> Color { Color(rgb: 0xE0483C, alpha: 128) }
        static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
            context.fillRoundedRect(info.bounds, radii: CornerRadii(12), color: color)
            context.fill(Rect(x: 0, y: info.bounds.height / 2 - 2, width: info.bounds.width, height: 4), color: .white)
        }
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    func testTheHostPublishesItsRenderersLayout() async throws {
        _ = makeHost()
        XCTAssertEqual(Runtime.shared.display.uploadAlphaLayout, .premultiplied, "the recording backend's")
        _ = try OffscreenRender.makeHost(title: "layout", size: Size(width: 64, height: 64))
        XCTAssertEqual(Runtime.shared.display.uploadAlphaLayout, .straight, "the software renderer's")
    }

    func testContentsCommitAndUploadWithoutPixelPassesOnTheUIThread() async throws {
        let (host, _) = try OffscreenRender.makeHost(title: "prepared", size: Size(width: 200, height: 100),
                                                     configuration: .init(clearColor: Self.background))
        let bubble = BubbleNode()
        bubble.frame = Rect(x: 10, y: 10, width: 80, height: 60)
        let opaque = ColorNode(Color(rgb: 0x40C080))
        opaque.frame = Rect(x: 110, y: 10, width: 80, height: 60)
        let root = Node()
        root.addSubnode(bubble)
        root.addSubnode(opaque)

        let passesBefore = PixelPass.uiThreadCount
        host.setRootNode(root)
        var uploads = 0
        for _ in 0..<4 {
            time += 1.0 / 60
            let record = host.runFrame(time: time, events: [])
            uploads += record.compositor.uploads
            XCTAssertEqual(record.compositor.uploadPixelPasses, 0, "frame \(record.compositor.frameIndex)")
            host.runtime.scheduler.waitUntilIdle()
        }
        XCTAssertEqual(uploads, 2, "both contents were uploaded")
        XCTAssertEqual(PixelPass.uiThreadCount, passesBefore, "no scan and no conversion on the UI thread")

        let bubbleContents = try XCTUnwrap(bubble.layer.contents)
        XCTAssertEqual(bubbleContents.alphaLayout, .straight, "converted on its worker")
        XCTAssertFalse(bubbleContents.isOpaque)
        let opaqueContents = try XCTUnwrap(opaque.layer.contents)
        XCTAssertTrue(opaqueContents.isOpaque)
        XCTAssertEqual(opaqueContents.alphaLayout, .premultiplied, "opaque pixels need no conversion")

        // On screen: the bubble's middle blends over the background, its corner shows the background,
        // its bar is white, the opaque node is its colour.
        let screen = try XCTUnwrap(OffscreenRender.capture(host))
        func color(_ x: Int, _ y: Int) -> Color { Color(premultipliedARGB: screen.pixel(x: x, y: y)) }
        XCTAssertEqual(color(11, 11), Self.background)
        let middle = color(50, 25)
        XCTAssertEqual(Double(middle.red), (224.0 + 30) / 2, accuracy: 3)
        XCTAssertEqual(Double(middle.green), (72.0 + 38) / 2, accuracy: 3)
        XCTAssertEqual(Double(middle.blue), (60.0 + 48) / 2, accuracy: 3)
        XCTAssertEqual(color(50, 40), .white)
        XCTAssertEqual(color(150, 40), Color(rgb: 0x40C080))
        host.setRootNode(nil)
    }
}
