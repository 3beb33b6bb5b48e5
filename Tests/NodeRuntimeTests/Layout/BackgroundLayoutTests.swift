import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen with a label whose text an app changes, and a clock that ticks every frame.
private final class TickingScreenNode: Node, @unchecked Sendable {
    let ticker = TextNode("0", attributes: TextFixtures.plain())
    let label = TextNode("short", attributes: TextFixtures.plain())

    override init() {
        super.init()
        backgroundColor = .white
        addSubnode(ticker)
        addSubnode(label)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 8, alignItems: .start) { ticker; label }.inset(EdgeInsets(all: 10))
    }
}

/// Layout measured off the UI thread: a result is never starved by a tree that keeps changing, and new
/// text is never shown in a frame measured for the old one.
@MainActor
final class BackgroundLayoutTests: XCTestCase {
    private var time = 0.0

    override func setUp() {
        MainActor.assumeIsolated { TextFixtures.useRepositoryFonts() }
    }

    /// One frame, after the workers and the background measurements have finished, as a frame that
    /// starts after their work would.
    private func frame(_ host: NodeHost) {
        Runtime.shared.scheduler.waitUntilIdle()
        Node.backgroundLayouts.wait()
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
    }

    func testALabelGetsItsNewSizeWhileAnotherNodeChangesEveryFrame() async throws {
        let screen = TickingScreenNode()
        let host = try PixelOracle.makeHost(size: Size(width: 300, height: 120))
        XCTAssertTrue(host.measuresLayoutInBackground)
        host.setRootNode(screen)
        try host.settle()
        let before = screen.label.frame.width
        screen.label.attributedText = AttributedText("a much longer label than before", attributes: TextFixtures.plain())
        var frames = 0
        while screen.label.frame.width <= before && frames < 30 {
            frames += 1
            // The clock ticks before every frame, after the measurement the last frame started has
            // read the tree: the root's layout is invalidated while every result is on its way.
            Node.backgroundLayouts.wait()
            screen.ticker.attributedText = AttributedText("\(frames)", attributes: TextFixtures.plain())
            frame(host)
        }
        XCTAssertGreaterThan(screen.label.frame.width, before, "the label took its new width within \(frames) frames")
        XCTAssertLessThanOrEqual(frames, 4)
        host.setRootNode(nil)
    }

    func testNewTextIsNeverShownStretchedIntoAFrameMeasuredForOtherText() async throws {
        let screen = TickingScreenNode()
        let host = try PixelOracle.makeHost(size: Size(width: 300, height: 120))
        host.setRootNode(screen)
        try host.settle()
        screen.label.attributedText = AttributedText("a much longer label than before", attributes: TextFixtures.plain())
        for index in 0..<8 {
            frame(host)
            let layer = try XCTUnwrap(screen.label.layerIfLoaded)
            guard let contents = layer.contents else { continue }
            XCTAssertEqual(Double(contents.width), (layer.frame.width * contents.scale).rounded(.up), accuracy: 1,
                           "frame \(index): \(contents.width) px of contents in a \(layer.frame.width) pt layer")
            XCTAssertEqual(Double(contents.height), (layer.frame.height * contents.scale).rounded(.up), accuracy: 1,
                           "frame \(index)")
        }
        // And what settles is the new text at its new size.
        try host.settle()
        let shown = try XCTUnwrap(OffscreenRender.capture(host))
        host.setRootNode(nil)
        let expected = TickingScreenNode()
        expected.label.attributedText = AttributedText("a much longer label than before", attributes: TextFixtures.plain())
        PixelOracle.assertSame(shown, try PixelOracle.synchronousRender(expected, size: Size(width: 300, height: 120)),
                               "new-text-size")
    }

    func testAMeasurementForTheOldSizeIsNotAppliedAfterAResize() async {
        let screen = TickingScreenNode()
        screen.frame = Rect(x: 0, y: 0, width: 300, height: 120)
        screen.layoutIfNeeded()
        screen.layoutInBackground()
        Node.backgroundLayouts.wait()
        // The window shrinks (and lays the tree out) while the 300×120 result waits in the main queue.
        screen.frame = Rect(x: 0, y: 0, width: 200, height: 90)
        screen.layoutIfNeeded()
        Runtime.shared.mainQueue.drain()
        XCTAssertEqual(screen.frame.size, Size(width: 200, height: 90), "the old size's result is not applied")
        Node.backgroundLayouts.wait()
        Runtime.shared.mainQueue.drain()
        XCTAssertEqual(screen.frame.size, Size(width: 200, height: 90), "measured again at the new size")
        XCTAssertTrue(screen.hasCachedLayout(for: .exactly(Size(width: 200, height: 90))))
    }
}
