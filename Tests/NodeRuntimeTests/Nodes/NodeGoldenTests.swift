import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Nodes drawn in the background and composited by the software renderer, compared with goldens.
@MainActor
final class NodeGoldenTests: XCTestCase {
    static let background = Color(rgb: 0x1E2630)

    /// Draws a diagonal two-colour gradient with a light frame: shows scaling, corners and placement.
    final class GradientNode: Node, NodeDrawing, @unchecked Sendable {
        struct Parameters: Sendable { var from: Color; var to: Color }
        let parameters: Parameters
        init(from: Color, to: Color) {
            parameters = Parameters(from: from, to: to)
            super.init()
        }
        func drawParameters() -> Parameters { parameters }
        static func draw(_ p: Parameters, in context: inout BitmapContext, info: DrawInfo) {
            let bounds = info.bounds
            let steps = 12
            for i in 0..<steps {
                let t = Double(i) / Double(steps - 1)
                func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8(Double(a) + (Double(b) - Double(a)) * t) }
                let color = Color(red: mix(p.from.red, p.to.red), green: mix(p.from.green, p.to.green),
                                  blue: mix(p.from.blue, p.to.blue))
                context.fill(Rect(x: bounds.width * Double(i) / Double(steps), y: 0,
                                  width: bounds.width / Double(steps) + 0.5, height: bounds.height), color: color)
            }
            context.fill(Rect(x: 0, y: bounds.height * 0.45, width: bounds.width, height: bounds.height * 0.1),
                         color: Color(rgb: 0xFFFFFF, alpha: 160))
        }
    }

    private var time = 0.0

    private func render(_ root: Node, scale: Double = 1) throws -> Bitmap? {
        try OffscreenRender.render(root, size: Size(width: 320, height: 240), scale: scale, clearColor: Self.background,
                                   time: &time)
    }

    func testCornerModesOnNodes() async throws {
        for scale in [1.0, 2.0] {
            let root = Node()
            root.backgroundColor = Self.background
            for (row, mode) in CornerRoundingMode.allCases.enumerated() {
                for (column, radius) in [0.0, 8, 24, 30].enumerated() {
                    let node = GradientNode(from: Color(rgb: 0x2D6CDF), to: Color(rgb: 0xE0483C))
                    node.frame = Rect(x: 12 + Double(column) * 76, y: 12 + Double(row) * 76, width: 68, height: 60)
                    node.backgroundColor = Color(rgb: 0xF2C14E)
                    node.cornerRadius = radius
                    node.cornerRoundingMode = mode
                    node.cornerClipColor = Self.background
                    root.addSubnode(node)
                }
            }
            GoldenImage.assertMatches(try render(root, scale: scale), named: "node-corners@\(Int(scale))x",
                                      in: "NodeRuntimeTests")
        }
    }

    /// A chat-row-like card: background, avatar, two bars of "text", a badge with half opacity.
    private func card(rasterized: Bool) -> Node {
        let card = Node()
        card.frame = Rect(x: 20, y: 20, width: 280, height: 90)
        card.backgroundColor = Color(rgb: 0xF5F7FA)
        card.shouldRasterizeDescendants = rasterized
        let avatar = GradientNode(from: Color(rgb: 0x7B4FD6), to: Color(rgb: 0x36C2B4))
        avatar.frame = Rect(x: 12, y: 13, width: 64, height: 64)
        avatar.cornerRadius = 32
        avatar.cornerRoundingMode = .precomposited
        let title = Node()
        title.frame = Rect(x: 90, y: 18, width: 150, height: 14)
        title.backgroundColor = Color(rgb: 0x1C2430)
        let preview = ColorNode(Color(rgb: 0x8A94A6))
        preview.frame = Rect(x: 90, y: 44, width: 176, height: 10)
        let badge = ColorNode(Color(rgb: 0xE0483C))
        badge.frame = Rect(x: 244, y: 16, width: 24, height: 18)
        badge.opacity = 0.5
        for node in [avatar, title, preview, badge] { card.addSubnode(node) }
        return card
    }

    func testRasterizedSubtreeMatchesTheLayeredOneInOneLayer() async throws {
        let rasterizedRoot = Node()
        let rasterizedCard = card(rasterized: true)
        rasterizedRoot.addSubnode(rasterizedCard)
        let rasterized = try XCTUnwrap(try render(rasterizedRoot))
        XCTAssertTrue(rasterizedCard.layer.sublayers.isEmpty, "descendants get no layers")
        XCTAssertTrue(rasterizedCard.subnodes.allSatisfy { !$0.isNodeLoaded })
        GoldenImage.assertMatches(rasterized, named: "node-rasterized", in: "NodeRuntimeTests")

        let layeredRoot = Node()
        layeredRoot.addSubnode(card(rasterized: false))
        let layered = try XCTUnwrap(try render(layeredRoot))
        let (difference, _) = GoldenImage.compare(rasterized, layered, tolerance: 8)
        // Only anti-aliased edge pixels of the avatar may differ between the two paths.
        XCTAssertLessThan(difference.differingPixels, 60, "max delta \(difference.maximumChannelDelta)")
    }
}
