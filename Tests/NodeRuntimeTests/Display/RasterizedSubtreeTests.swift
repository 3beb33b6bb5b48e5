import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A row drawn whole into one bitmap (`shouldRasterizeDescendants`): two swatches and a badge whose
/// count is a text, laid out by a spec, as the gallery's chat row is.
private final class RasterRowNode: Node, @unchecked Sendable {
    let left = ColorNode(Color(rgb: 0xD03030))
    let right = ColorNode(Color(rgb: 0x3050D0))
    let capsule = Node()
    let count: TextNode

    init(count text: String) {
        count = TextNode(text, attributes: TextFixtures.plain(color: .white))
        super.init()
        shouldRasterizeDescendants = true
        isTransactionContainer = true
        backgroundColor = .white
        capsule.backgroundColor = Color(rgb: 0x2E7D32)
        capsule.addSubnode(count)
        for node in [left, capsule, right] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(spacing: 6, alignItems: .center) {
            left.size(Size(width: 24, height: 24))
            count.inset(EdgeInsets(top: 2, left: 6, bottom: 2, right: 6)).background(capsule)
            right.size(Size(width: 24, height: 24))
        }
        .inset(EdgeInsets(top: 8, left: 8, bottom: 8, right: 8))
    }
}

/// Children of a rasterizing node have no layers: every change to one must reach the screen as a
/// redraw of the rasterizing ancestor, from any thread, including frames set by a later layout.
@MainActor
final class RasterizedSubtreeTests: XCTestCase {
    private let size = Size(width: 160, height: 60)

    override func setUp() {
        MainActor.assumeIsolated { TextFixtures.useRepositoryFonts() }
    }

    /// Shows `row` in a settled host and returns the host.
    private func show(_ row: RasterRowNode) throws -> NodeHost {
        let host = try PixelOracle.makeHost(size: size)
        host.setRootNode(row)
        try host.settle()
        return host
    }

    /// The settled screen of `host` against a synchronous render of a fresh row built by `expected`.
    private func assertConverged(_ host: NodeHost, expected: () -> RasterRowNode, _ name: String,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        try host.settle()
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        host.setRootNode(nil)
        let reference = try PixelOracle.synchronousRender(expected(), size: size)
        PixelOracle.assertSame(shown, reference, name, file: file, line: line)
    }

    func testABadgeCountChangedOnAWorkerRedrawsWithItsNewFrames() async throws {
        let row = RasterRowNode(count: "9")
        let host = try show(row)
        onBackgroundThread { row.count.attributedText = AttributedText("10", attributes: TextFixtures.plain(color: .white)) }
        try assertConverged(host, expected: { RasterRowNode(count: "10") }, "raster-badge-count")
    }

    func testOpacityHiddenBackgroundAndPositionOfAChildRedrawTheRow() async throws {
        let row = RasterRowNode(count: "3")
        let host = try show(row)
        onBackgroundThread {
            row.left.opacity = 0.4
            row.right.isHidden = true
            row.capsule.backgroundColor = Color(rgb: 0x8E24AA)
        }
        try assertConverged(host, expected: {
            let expected = RasterRowNode(count: "3")
            expected.left.opacity = 0.4
            expected.right.isHidden = true
            expected.capsule.backgroundColor = Color(rgb: 0x8E24AA)
            return expected
        }, "raster-child-properties")
    }

    func testAChildMovedByItsFrameAloneRedrawsTheRow() async throws {
        let row = RasterRowNode(count: "3")
        let host = try show(row)
        // A frame set by hand (no layout involved): the row takes its children where they are now.
        let moved = Rect(x: 120, y: 30, width: 24, height: 24)
        onBackgroundThread { row.left.frame = moved }
        try host.settle()
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(Color(premultipliedARGB: shown.pixel(x: 130, y: 40)), Color(rgb: 0xD03030), "the swatch's new place")
        XCTAssertNotEqual(Color(premultipliedARGB: shown.pixel(x: 18, y: 30)), Color(rgb: 0xD03030), "its old place is empty")
        host.setRootNode(nil)
    }

    func testASubnodeAddedToARasterizedChildRedrawsTheRow() async throws {
        let row = RasterRowNode(count: "3")
        let host = try show(row)
        let dot = Node()
        dot.backgroundColor = .black
        dot.frame = Rect(x: 8, y: 8, width: 8, height: 8)
        onBackgroundThread { row.right.addSubnode(dot) }
        try host.settle()
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        let right = row.right.frame
        XCTAssertEqual(Color(premultipliedARGB: shown.pixel(x: Int(right.minX) + 12, y: Int(right.minY) + 12)), .black)
        onBackgroundThread { dot.removeFromSupernode() }
        try assertConverged(host, expected: { RasterRowNode(count: "3") }, "raster-subnode-removed")
    }
}

/// A node that leaves a rasterized subtree draws its own contents again: what it asked its
/// rasterizing ancestor to draw it now draws itself, from its latest state. (Found by the stress
/// model's pixel oracle.)
@MainActor
final class RasterizedSubtreeMoveTests: XCTestCase {
    private func scene() throws -> (NodeHost, rasterized: Node, free: Node) {
        let root = Node()
        let rasterized = Node(), free = Node()
        rasterized.shouldRasterizeDescendants = true
        rasterized.frame = Rect(x: 0, y: 0, width: 40, height: 20)
        free.frame = Rect(x: 0, y: 20, width: 40, height: 20)
        root.addSubnode(rasterized)
        root.addSubnode(free)
        let host = try PixelOracle.makeHost(size: Size(width: 40, height: 40))
        host.setRootNode(root)
        try host.settle()
        return (host, rasterized, free)
    }

    private func colour(_ host: NodeHost, x: Int, y: Int) throws -> Color {
        Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: x, y: y))
    }

    func testANodeMovedOutOfARasterizedRowDrawsItself() async throws {
        let (host, rasterized, free) = try scene()
        let node = ColorNode(Color(rgb: 0xD03030))
        node.frame = Rect(x: 5, y: 5, width: 10, height: 10)
        rasterized.addSubnode(node)
        try host.settle()
        XCTAssertEqual(try colour(host, x: 10, y: 10), Color(rgb: 0xD03030), "drawn into the row's bitmap")
        node.color = Color(rgb: 0x3050D0)
        onBackgroundThread { free.addSubnode(node) }
        try host.settle()
        XCTAssertEqual(try colour(host, x: 10, y: 30), Color(rgb: 0x3050D0), "drawn on its own, with its latest colour")
        host.setRootNode(nil)
    }

    func testANodeThatVisitedARasterizedRowShowsWhatChangedThere() async throws {
        let (host, rasterized, free) = try scene()
        let node = ColorNode(Color(rgb: 0xD03030))
        node.frame = Rect(x: 5, y: 5, width: 10, height: 10)
        free.addSubnode(node)
        try host.settle()
        XCTAssertEqual(try colour(host, x: 10, y: 30), Color(rgb: 0xD03030))
        rasterized.addSubnode(node)
        try host.settle()
        node.color = Color(rgb: 0x2E7D32)  // while drawn by the row
        try host.settle()
        free.addSubnode(node)
        try host.settle()
        XCTAssertEqual(try colour(host, x: 10, y: 30), Color(rgb: 0x2E7D32), "not the contents it had before it left")
        host.setRootNode(nil)
    }

    func testANodeThatVisitedARasterizedRowIsPlacedWhereItWasMovedThere() async throws {
        let (host, rasterized, free) = try scene()
        let node = ColorNode(Color(rgb: 0xD03030))
        node.frame = Rect(x: 5, y: 5, width: 10, height: 10)
        free.addSubnode(node)
        try host.settle()
        XCTAssertEqual(try colour(host, x: 10, y: 30), Color(rgb: 0xD03030))
        rasterized.addSubnode(node)
        try host.settle()
        // While the row draws it, it moves and fades: its own layer, kept aside, is not told.
        node.frame = Rect(x: 25, y: 5, width: 10, height: 10)
        onBackgroundThread { node.opacity = 0.5 }
        try host.settle()
        free.addSubnode(node)
        try host.settle()
        let layer = try XCTUnwrap(node.layerIfLoaded)
        XCTAssertEqual(layer.frame, Rect(x: 25, y: 5, width: 10, height: 10), "its layer where the node is")
        XCTAssertEqual(layer.opacity, 0.5)
        XCTAssertEqual(try colour(host, x: 10, y: 30), Color(rgb: 0x202020), "nothing left where it was")
        XCTAssertNotEqual(try colour(host, x: 30, y: 30), Color(rgb: 0x202020), "drawn where it is")
        host.setRootNode(nil)
    }
}
