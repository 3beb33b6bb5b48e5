import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Image nodes as pictures: content modes, corners, bubble tails, the error placeholder.
@MainActor
final class ImageNodeGoldenTests: XCTestCase {
    private var time = 0.0
    static let background = Color(rgb: 0x1E2630)

    /// The nodes on a plain root, captured a second after settling so that cross-fades have finished.
    private func render(_ nodes: [ImageNode], scale: Double = 1) throws -> Bitmap? {
        let root = Node()
        for node in nodes { root.addSubnode(node) }
        return try OffscreenRender.render(root, size: Size(width: 320, height: 240), scale: scale,
                                          clearColor: Self.background, time: &time, finalFrameAfter: 1)
    }

    private func node(_ name: String?, _ frame: Rect, mode: ContentMode = .aspectFill) -> ImageNode {
        let node = ImageNode()
        node.frame = frame
        node.contentMode = mode
        node.imageCache = ImageCache(budgetBytes: 0)
        if let name { node.source = .file(GoldenImage.asset("photos/\(name)")) }
        node.emptyColor = Color(rgb: 0x3A4658)
        return node
    }

    func testContentModes() async throws {
        // A wide photo in a tall box and the same in a wide box, for each mode.
        var nodes: [ImageNode] = []
        for (i, mode) in ContentMode.allCases.enumerated() {
            nodes.append(node("rocket.jpg", Rect(x: 10 + Double(i) * 77, y: 10, width: 70, height: 100), mode: mode))
            nodes.append(node("horse.png", Rect(x: 10 + Double(i) * 77, y: 125, width: 70, height: 100), mode: mode))
        }
        GoldenImage.assertMatches(try render(nodes), named: "image-content-modes", in: "NodeRuntimeTests")
    }

    func testCornersTailsAndPlaceholders() async throws {
        for scale in [1.0, 2.0] {
            let perCorner = node("chelsea.jpg", Rect(x: 10, y: 10, width: 140, height: 100))
            perCorner.imageCornerRadii = CornerRadii(topLeft: 30, topRight: 4, bottomLeft: 12, bottomRight: 50)
            let incoming = node("coffee.jpg", Rect(x: 165, y: 10, width: 140, height: 100))
            incoming.imageCornerRadii = CornerRadii(14)
            incoming.bubbleTail = BubbleTail(side: .left, width: 7)
            let outgoing = node("astronaut.png", Rect(x: 10, y: 125, width: 100, height: 100))
            outgoing.imageCornerRadii = CornerRadii(14)
            outgoing.bubbleTail = BubbleTail(side: .right, width: 7)
            let broken = node(nil, Rect(x: 120, y: 125, width: 90, height: 100))
            broken.source = .data([0x00, 0x01, 0x02], name: "garbage")
            broken.imageCornerRadii = CornerRadii(10)
            let empty = node(nil, Rect(x: 220, y: 125, width: 90, height: 100))
            empty.imageCornerRadii = CornerRadii(45)
            GoldenImage.assertMatches(try render([perCorner, incoming, outgoing, broken, empty], scale: scale),
                                      named: "image-corners-tails@\(Int(scale))x", in: "NodeRuntimeTests")
            XCTAssertEqual(broken.loadState, .failed(.unsupportedFormat("garbage (3 bytes)")))
        }
    }
}
