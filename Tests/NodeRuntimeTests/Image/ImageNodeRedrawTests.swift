import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// An image node redraws whenever what it would draw differs from what was last asked for, even when
/// a value is changed back while the draw of another value is being captured.
@MainActor
final class ImageNodeRedrawTests: XCTestCase {
    private func solid(_ rgb: UInt32) throws -> Bitmap {
        let pixel = Color(rgb: rgb).premultipliedARGB
        return try Bitmap(width: 20, height: 20, premultipliedARGB: Array(repeating: pixel, count: 400))
    }

    override func tearDown() {
        MainActor.assumeIsolated { ImageNode.parametersCapturedForTesting = nil }
    }

    /// A, then B, then A again while B's parameters are being captured (as another thread would set
    /// it): the screen ends on A.
    func testASourceFlippedBackWhileTheOtherIsCapturedIsDrawn() async throws {
        let a = ImageSource.bitmap(try solid(0xD03030)), b = ImageSource.bitmap(try solid(0x3050D0))
        let image = ImageNode()
        image.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        image.source = a
        let root = Node()
        root.addSubnode(image)
        let host = try PixelOracle.makeHost(size: Size(width: 40, height: 40))
        host.setRootNode(root)
        try host.settle()
        image.source = b
        try host.settle()  // B is shown; A and B are both in the decoded-image cache now
        image.source = a
        try host.settle()
        image.source = b
        var flipped = false
        ImageNode.parametersCapturedForTesting = { node in
            guard node === image, !flipped else { return }
            flipped = true
            node.source = a  // back to A, from the cache, while B's draw is captured
        }
        try host.settle()
        XCTAssertTrue(flipped)
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(Color(premultipliedARGB: shown.pixel(x: 20, y: 20)), Color(rgb: 0xD03030), "the screen ends on A")
        host.setRootNode(nil)
    }

    /// The empty colour changed and changed back across a capture: the same.
    func testAnEmptyColourFlippedBackWhileTheOtherIsCapturedIsDrawn() async throws {
        let image = ImageNode()
        image.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        image.emptyColor = Color(rgb: 0x2E7D32)
        let root = Node()
        root.addSubnode(image)
        let host = try PixelOracle.makeHost(size: Size(width: 40, height: 40))
        host.setRootNode(root)
        try host.settle()
        image.emptyColor = Color(rgb: 0x8E24AA)
        var flipped = false
        ImageNode.parametersCapturedForTesting = { node in
            guard node === image, !flipped else { return }
            flipped = true
            node.emptyColor = Color(rgb: 0x2E7D32)
        }
        try host.settle()
        XCTAssertTrue(flipped)
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(Color(premultipliedARGB: shown.pixel(x: 20, y: 20)), Color(rgb: 0x2E7D32))
        host.setRootNode(nil)
    }
}
