import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Composed specs laid out by the host, drawn in the background and composited by the software
/// renderer, compared with goldens: what a person checks by eye that the frames above add up to.
@MainActor
final class LayoutGoldenTests: XCTestCase {
    static let background = Color(rgb: 0x1E2630)

    /// Stands in for text: one bar per wrapped line, as wide as the glyphs on it.
    final class BarText: Node, NodeDrawing, LayoutStyleDefaults, @unchecked Sendable {
        struct Parameters: Sendable {
            var metrics: FakeText.Metrics
            var color: Color
        }
        let parameters: Parameters

        class var defaultLayoutStyle: LayoutStyle {
            var style = LayoutStyle()
            style.flexShrink = 1
            return style
        }

        init(_ characters: Int, color: Color, characterWidth: Double = 4, lineHeight: Double = 10, maximumLines: Int = 0) {
            parameters = Parameters(metrics: .init(characters: characters, characterWidth: characterWidth,
                                                   lineHeight: lineHeight, maximumLines: maximumLines), color: color)
            super.init()
            // Whole-point baselines keep every edge on a pixel, so the golden does not depend on how a
            // renderer treats fractional positions.
            style.ascender = lineHeight - 3
            style.descender = 3
        }

        override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
            let lines = FakeText.lines(parameters.metrics, width: constrainedSize.width)
            return Size(width: Double(lines.max() ?? 0) * parameters.metrics.characterWidth,
                        height: Double(lines.count) * parameters.metrics.lineHeight)
        }

        func drawParameters() -> Parameters { parameters }

        static func draw(_ p: Parameters, in context: inout BitmapContext, info: DrawInfo) {
            let m = p.metrics
            for (index, glyphs) in FakeText.lines(m, width: info.bounds.width).enumerated() {
                context.fillRoundedRect(Rect(x: 0, y: Double(index) * m.lineHeight + m.lineHeight * 0.2,
                                             width: Double(glyphs) * m.characterWidth, height: m.lineHeight * 0.6),
                                        radii: CornerRadii(m.lineHeight * 0.3), color: p.color)
            }
        }
    }

    private var time = 0.0

    private func render(_ root: Node) throws -> Bitmap? {
        try OffscreenRender.render(root, size: Size(width: 320, height: 240), clearColor: Self.background, time: &time)
    }

    private func color(_ rgb: UInt32) -> ColorNode { ColorNode(Color(rgb: rgb)) }

    /// A chat row: avatar with an unread badge, title and time on one line, a two-line preview.
    private func chatCell(title: Int, preview: Int, unread: Bool) -> SpecNode {
        let avatar = color(0x5B7FE0), badge = color(0xE0483C), fill = color(0xF5F7FA)
        avatar.cornerRadius = 20
        badge.cornerRadius = 7
        let titleText = BarText(title, color: Color(rgb: 0x1C2430), lineHeight: 12)
        let time = BarText(5, color: Color(rgb: 0x8A94A6))
        let previewText = BarText(preview, color: Color(rgb: 0x8A94A6), maximumLines: 2)
        return SpecNode { _ in
            HStack(spacing: 10, alignItems: .start) {
                if unread {
                    avatar.size(Size(width: 40, height: 40)).corner(badge.size(Size(width: 14, height: 14)), at: .topRight,
                                                                    offset: Point(x: -3, y: 3))
                } else {
                    avatar.size(Size(width: 40, height: 40))
                }
                VStack(spacing: 6) {
                    HStack(spacing: 6, alignItems: .baselineFirst) { titleText; Spacer(); time.flexShrink(0) }
                    previewText
                }
                .flexGrow(1).flexShrink(1)
            }
            .inset(EdgeInsets(top: 8, left: 10, bottom: 8, right: 10))
            .background(fill)
        }
    }

    func testChatCells() async throws {
        let cells = [chatCell(title: 18, preview: 120, unread: true), chatCell(title: 60, preview: 30, unread: false),
                     chatCell(title: 30, preview: 200, unread: true)]
        let root = SpecNode { _ in VStack(spacing: 2) { cells }.inset(EdgeInsets(top: 10, left: 10, bottom: 10, right: 10)) }
        GoldenImage.assertMatches(try render(root), named: "layout-chat-cells", in: "NodeRuntimeTests")
    }

    /// Justification, alignment and wrapping, one band each.
    func testStacks() async throws {
        let palette: [UInt32] = [0xF2C14E, 0x36C2B4, 0xE0483C, 0x7B4FD6, 0x5B7FE0]
        func box(_ width: Double, _ height: Double, _ index: Int) -> any LayoutElement {
            color(palette[index % palette.count]).size(Size(width: width, height: height))
        }
        func band(_ content: any LayoutElement) -> any LayoutElement { content.background(color(0x2E3A48)) }
        let justified: [any LayoutElement] = [StackSpec.Justify.start, .center, .end, .spaceBetween, .spaceAround].map { justify in
            band(HStack(justifyContent: justify, alignItems: .center) { box(30, 8, 0); box(50, 8, 1); box(40, 8, 2) }
                .height(12))
        }
        let aligned = band(HStack(spacing: 6, alignItems: .center) {
            box(20, 24, 0); box(20, 8, 1).alignSelf(.start); box(20, 8, 2).alignSelf(.end)
            color(palette[3]).width(20).alignSelf(.stretch); box(20, 14, 4); box(40, 6, 0).flexGrow(1)
        })
        let wrapped = band(HStack(spacing: 6, justifyContent: .center, alignItems: .end, wraps: true, lineSpacing: 4) {
            for index in 0..<12 { box(Double(18 + (index * 7) % 30), Double(8 + (index * 5) % 14), index) }
        })
        let reversed = band(VStack(spacing: 4, alignItems: .end, reversed: true) { box(60, 6, 0); box(30, 6, 1); box(90, 6, 2) }
            .height(36))
        let root = SpecNode { _ in
            VStack(spacing: 4) {
                justified
                aligned
                wrapped
                reversed
            }
            .inset(10)
        }
        GoldenImage.assertMatches(try render(root), named: "layout-stacks", in: "NodeRuntimeTests")
    }

    /// Inset, background, overlay, centre, relative, ratio, corner and absolute, one tile each.
    func testSpecs() async throws {
        func node(_ rgb: UInt32, alpha: UInt8 = 255) -> ColorNode { ColorNode(Color(rgb: rgb, alpha: alpha)) }
        let tileSize = Size(width: 66, height: 66)
        func tile(_ content: any LayoutElement) -> any LayoutElement {
            content.background(node(0x2E3A48)).size(tileSize)
        }
        let yellow = node(0xF2C14E), teal = node(0x36C2B4), red = node(0xE0483C), violet = node(0x7B4FD6)
        let veil = node(0xFFFFFF, alpha: 110), small = node(0x5B7FE0), end = node(0xF2C14E), wide = node(0x36C2B4)
        let avatar = node(0x7B4FD6), badge = node(0xE0483C), teal2 = node(0x36C2B4)
        avatar.cornerRadius = 20
        badge.cornerRadius = 8
        let dots = (0..<3).map { node([0xF2C14E, 0x36C2B4, 0xE0483C][$0]) }
        let tiles: [any LayoutElement] = [
            tile(yellow.inset(EdgeInsets(top: 6, left: 12, bottom: 18, right: 4))),
            tile(teal.inset(10).overlay(veil.inset(EdgeInsets(top: 30, left: 10, bottom: 10, right: 10)))),
            tile(red.size(Size(width: 24, height: 16)).centered()),
            tile(small.size(Size(width: 20, height: 20)).relative(horizontal: .end, vertical: .end)),
            tile(wide.ratio(0.5).relative(horizontal: .start, vertical: .end)),
            tile(avatar.size(Size(width: 40, height: 40)).corner(badge.size(Size(width: 16, height: 16)), at: .topRight,
                                                                  wrapsCorner: true).centered()),
            tile(AbsoluteSpec {
                dots[0].size(Size(width: 14, height: 14)).position(Point(x: 6, y: 6))
                dots[1].size(Size(width: 20, height: 10)).position(Point(x: 30, y: 24))
                dots[2].size(Size(width: 10, height: 24)).position(Point(x: 12, y: 36))
            }),
            tile(violet.size(Size(width: 30, height: 12)).relative(horizontal: .center, vertical: .start).inset(6)),
            tile(VStack(alignItems: .center) { end.size(Size(width: 40, height: 8)); Spacer(); teal2.size(Size(width: 24, height: 8)) }
                .inset(6)),
        ]
        let root = SpecNode { _ in HStack(spacing: 8, wraps: true, lineSpacing: 8) { tiles }.inset(12) }
        GoldenImage.assertMatches(try render(root), named: "layout-specs", in: "NodeRuntimeTests")
    }
}
