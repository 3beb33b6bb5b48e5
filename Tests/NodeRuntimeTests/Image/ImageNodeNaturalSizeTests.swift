import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// An image node whose layout gives it no size takes its natural size from the image's header: header
/// pixels over the node's contents scale, read once per source, off the UI thread.
@MainActor
final class ImageNodeNaturalSizeTests: XCTestCase {
    private var time = 0.0
    private let photos = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos")
    private let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/image-natural-size")

    private func photo(_ name: String) -> String { photos.appendingPathComponent(name).path }

    override func setUpWithError() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func imageNode(_ source: ImageSource, _ name: String) -> ImageNode {
        let node = ImageNode()
        node.source = source
        node.debugName = name
        return node
    }

    /// Measures `node` for `range` on another thread, as a list's worker or a background layout does.
    private func measureOffTheUIThread(_ node: ImageNode, _ range: SizeRange) -> Size {
        let box = UncheckedNode(node)
        return onBackgroundThread { box.node.layoutThatFits(range).size }
    }

    func testTheNaturalSizeIsTheHeaderOverTheContentsScale() async throws {
        let horse = imageNode(.file(photo("horse.png")), "horse")  // 400 × 328
        XCTAssertEqual(measureOffTheUIThread(horse, upTo(1000, 1000)), Size(width: 400, height: 328))
        let sharp = imageNode(.file(photo("coffee.jpg")), "coffee")  // 600 × 400
        sharp.contentsScale = 2
        XCTAssertEqual(measureOffTheUIThread(sharp, upTo(1000, 1000)), Size(width: 300, height: 200),
                       "one image pixel to one screen pixel at 2x")
        let bitmap = try Bitmap(width: 30, height: 10, scale: 2, premultipliedARGB: Array(repeating: 0xFF00_00FF, count: 300))
        XCTAssertEqual(measureOffTheUIThread(imageNode(.bitmap(bitmap), "bitmap"), upTo(1000, 1000)),
                       Size(width: 15, height: 5), "a bitmap source is its own point size")
        XCTAssertEqual(horse.diagnostics, [])
    }

    func testTheHeaderSizeIsTurnedByTheEXIFOrientation() async throws {
        let coffee = [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo("coffee.jpg"))))
        let turned = imageNode(.data(TestImageFiles.jpeg(coffee, withOrientation: 6), name: "turned"), "turned")
        XCTAssertEqual(measureOffTheUIThread(turned, upTo(1000, 1000)), Size(width: 400, height: 600))
        let mirrored = imageNode(.data(TestImageFiles.jpeg(coffee, withOrientation: 2), name: "mirrored"), "mirrored")
        XCTAssertEqual(measureOffTheUIThread(mirrored, upTo(1000, 1000)), Size(width: 600, height: 400))
    }

    func testTheNaturalSizeShrinksToFitAndOneSetSideKeepsTheAspect() async {
        let narrow = imageNode(.file(photo("coffee.jpg")), "narrow")
        XCTAssertEqual(measureOffTheUIThread(narrow, upTo(300, 1000)), Size(width: 300, height: 200), "scaled down, aspect kept")
        let small = imageNode(.file(photo("horse.png")), "small")
        XCTAssertEqual(measureOffTheUIThread(small, upTo(1000, 82)), Size(width: 100, height: 82))
        let wide = imageNode(.file(photo("horse.png")), "wide")
        wide.style.width = .points(800)
        XCTAssertEqual(measureOffTheUIThread(wide, upTo(1000, 1000)), Size(width: 800, height: 656),
                       "a width alone gets the height from the image's aspect")
        let tall = imageNode(.file(photo("coffee.jpg")), "tall")
        tall.style.height = .points(100)
        XCTAssertEqual(measureOffTheUIThread(tall, upTo(1000, 1000)), Size(width: 150, height: 100))
        let sized = imageNode(.file(photo("coffee.jpg")), "sized")
        sized.preferredSize = Size(width: 40, height: 40)
        XCTAssertEqual(measureOffTheUIThread(sized, upTo(1000, 1000)), Size(width: 40, height: 40), "a size in the layout wins")
    }

    func testTheHeaderIsReadOncePerSource() async throws {
        let copy = folder.appendingPathComponent("once.png")
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(atPath: photo("horse.png"), toPath: copy.path)
        let first = imageNode(.file(copy.path), "first")
        XCTAssertEqual(measureOffTheUIThread(first, upTo(1000, 1000)), Size(width: 400, height: 328))
        // Gone from disk: a second node showing the same source still knows its size.
        try FileManager.default.removeItem(at: copy)
        let second = imageNode(.file(copy.path), "second")
        XCTAssertEqual(measureOffTheUIThread(second, upTo(1000, 1000)), Size(width: 400, height: 328))
    }

    func testAHeaderThatCannotBeReadMeasuresZeroAndIsReportedOnce() async throws {
        let directory = folder.appendingPathComponent("not-a-photo.png").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let sources: [(ImageSource, String)] = [
            (.file("/nonexistent/natural.png"), "/nonexistent/natural.png: no such file"),
            (.file(directory), "\(directory): a directory, not a file"),
            (.data([1, 2, 3, 4], name: "noise"), "noise (4 bytes): not an image format Tessera decodes"),
        ]
        for (source, reason) in sources {
            let node = imageNode(source, "unreadable")
            XCTAssertEqual(measureOffTheUIThread(node, upTo(1000, 1000)), .zero)
            _ = measureOffTheUIThread(node, upTo(500, 500))
            XCTAssertEqual(node.diagnostics.map(\.kind), [.noNaturalSize], "\(source)")
            XCTAssertEqual(node.diagnostics.first?.message,
                           "its layout gives it no size and the image header cannot be read (\(reason)); it measures as zero")
        }
    }

    /// A layout that gives the node its size needs no header: none is read, so a source that cannot be
    /// read is no layout problem (the decode reports it, as `loadState`).
    func testAnExactSizeReadsNoHeader() async {
        let node = imageNode(.file("/nonexistent/exact.png"), "exact")
        XCTAssertEqual(measureOffTheUIThread(node, exactly(40, 30)), Size(width: 40, height: 30))
        XCTAssertEqual(node.layoutThatFits(exactly(40, 30)).size, Size(width: 40, height: 30), "on the UI thread too")
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
        XCTAssertEqual(node.diagnostics, [])
    }

    /// Measured on the UI thread before the header is known: zero at first, the header read on a
    /// worker, then the node is measured again and shows the whole image.
    func testOnTheUIThreadTheHeaderIsReadOnAWorkerAndTheNodeLaidOutAgain() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 500, height: 400),
                                                     configuration: .init(clearColor: Color(rgb: 0xFF00FF)))
        host.measuresLayoutInBackground = false
        let copy = folder.appendingPathComponent("ui-thread.png")
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(atPath: photo("horse.png"), toPath: copy.path)
        let image = imageNode(.file(copy.path), "ui-thread")
        let caption = Node()
        caption.preferredSize = Size(width: 100, height: 20)
        let root = ColumnNode([image, caption])
        host.setRootNode(root)  // lays the tree out now, on this (the UI) thread
        XCTAssertEqual(image.frame.size, .zero, "the first layout, on the UI thread, does not read the file")
        XCTAssertEqual(caption.frame.minY, 0)
        settle(host, time: &time)
        XCTAssertEqual(image.frame, Rect(x: 0, y: 0, width: 400, height: 328))
        XCTAssertEqual(caption.frame.minY, 328, "what follows moved down")
        XCTAssertEqual(image.loadState, .loaded)
        time += 0.5  // past the image's cross-fade
        host.runFrame(time: time, events: [])
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        let clear = Color(rgb: 0xFF00FF)
        var covered = 0
        for y in stride(from: 0, to: 328, by: 4) {
            for x in stride(from: 0, to: 400, by: 4) where Color(premultipliedARGB: pixels.pixel(x: x, y: y)) != clear { covered += 1 }
        }
        XCTAssertEqual(covered, 100 * 82, "the photo covers its whole natural size")
        XCTAssertEqual(Color(premultipliedARGB: pixels.pixel(x: 450, y: 350)), clear, "and nothing beyond")
        host.setRootNode(nil)
    }

    // MARK: Corner radii

    func testBadImageCornerRadiiAreReportedAndDrawSquare() async {
        let node = imageNode(.file(photo("horse.png")), "corners")
        node.imageCornerRadii = CornerRadii(topLeft: .nan, topRight: 4, bottomLeft: -2, bottomRight: .infinity)
        node.imageCornerRadii = CornerRadii(-1)
        XCTAssertEqual(node.diagnostics.map(\.message),
                       ["image corner radii set to [nan, 4.0, -2.0, inf]; a NaN, negative or infinite corner is drawn square (0)"])
        let fine = imageNode(.file(photo("horse.png")), "fine-corners")
        fine.imageCornerRadii = CornerRadii(1e6)
        XCTAssertEqual(fine.diagnostics, [])
    }
}

/// A vertical stack of its subnodes, each at its own measured size, left-aligned.
private final class ColumnNode: Node, @unchecked Sendable {
    init(_ nodes: [Node]) {
        super.init()
        for node in nodes { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let children = subnodes
        return VStack(alignItems: .start) { children }
    }
}

/// Hands a node to another thread for measuring, which nodes allow.
private final class UncheckedNode: @unchecked Sendable {
    let node: ImageNode
    init(_ node: ImageNode) { self.node = node }
}
