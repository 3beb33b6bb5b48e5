import XCTest
@testable import Compositor

/// The scrolls a compositor thread drives itself (`CompositorScrolls`), against the UI thread's
/// rules for the same events: what the thread shows and hands back is what the UI thread's scroll
/// does with them.
@MainActor
final class CompositorScrollsTests: XCTestCase {
    /// A viewport of 100 × 100 points over content bound to scroll 0…300 by 48-point wheel steps.
    private func tree(binding: ScrollBinding) -> (root: Layer, content: Layer) {
        let root = Layer(name: "root")
        root.frame = Rect(x: 0, y: 0, width: 100, height: 100)
        let viewport = Layer(name: "viewport")
        viewport.frame = Rect(x: 0, y: 0, width: 100, height: 100)
        viewport.clipsToBounds = true
        let content = Layer(name: "content")
        content.scrollBinding = binding
        for index in 0..<8 {
            let row = Layer(name: "row \(index)")
            row.frame = Rect(x: 0, y: Double(index) * 50, width: 100, height: 50)
            row.backgroundColor = Color(rgb: index % 2 == 0 ? 0xFF0000 : 0x00FF00)
            content.addSublayer(row)
        }
        viewport.addSublayer(content)
        root.addSublayer(viewport)
        return (root, content)
    }

    private func binding(track: ScrollTrack? = nil, handoff: Int = 0) -> ScrollBinding {
        ScrollBinding(viewport: Rect(x: 0, y: 0, width: 100, height: 100), lower: 0, upper: 300, wheelStep: 48,
                      track: track, handoff: handoff)
    }

    /// FOUND (seeded interaction stress, seed 0xA19942868D0853F6: a scroll node never came to rest).
    /// The thread moved a scroll for a wheel event; before the UI thread took that event in, a drag
    /// began on the scroll (a new motion: a new `handoff`). The thread applied the event again on the
    /// drag's motion, turning it into the wheel's, and went on driving the scroll; the next wheel
    /// event moved it and was handed back under the new `handoff`, which the UI thread took over —
    /// in the middle of its drag, which the UI thread's wheel never moves. A scroll node left
    /// dragging along one axis and wheeling along the other never ended that drag.
    func testADragTheUIThreadBeganTakesTheScrollBackAndTheWheelLeavesIt() async throws {
        var scrolls = CompositorScrolls()
        scrolls.pointer = Point(x: 50, y: 50)
        let first = tree(binding: binding())
        let moved = scrolls.wheel(dx: 0, dy: -1, sequence: 1, at: 1.0, shown: first.root.snapshot())
        XCTAssertNotNil(moved, "the thread moved the scroll at rest")
        XCTAssertFalse(scrolls.isEmpty)

        // The UI thread's commit, made after a drag began and before it took the wheel event in.
        let dragging = ScrollTrack(motion: .dragging(origin: 0), offset: 0, time: 1.01, lower: 0, upper: 300)
        first.content.scrollBinding = binding(track: dragging, handoff: 1)
        let snapshot = first.root.snapshot()
        scrolls.commit(snapshot, consumedInput: 0)
        XCTAssertTrue(scrolls.isEmpty, "the drag holds the scroll on the UI thread, which applies no wheel to it")
        XCTAssertNil(scrolls.wheel(dx: 0, dy: -1, sequence: 2, at: 1.02, shown: snapshot),
                     "the next wheel event goes to the UI thread, which leaves the dragged scroll alone")
    }

    /// FOUND (by the audit of the test above). The UI thread began a motion of its own past the end (a
    /// drag released there: a bounce back) before it took in a wheel event the thread had applied. The
    /// thread applied that event again on the bounce: at the end, it moved nothing, but it cut the
    /// bounce short into the wheel's motion, frozen at the end on screen — while the UI thread's scroll
    /// node, which passes the wheel outwards at an edge, moves nothing and lets the bounce go on.
    func testAnUntakenEventTheNewMotionPassesOnAtItsEdgeLeavesThatMotionAlone() async throws {
        var scrolls = CompositorScrolls()
        scrolls.pointer = Point(x: 50, y: 50)
        func edge(_ track: ScrollTrack?, _ handoff: Int) -> ScrollBinding {
            ScrollBinding(viewport: Rect(x: 0, y: 0, width: 100, height: 100), lower: 0, upper: 300, wheelStep: 48,
                          track: track, handoff: handoff, passesWheelAtEdges: true)
        }
        let first = tree(binding: edge(nil, 0))
        let moved = try XCTUnwrap(scrolls.wheel(dx: 0, dy: -1, sequence: 6, at: 1.0, shown: first.root.snapshot()))
        // The UI thread's release past the end, before it took the event in.
        let bouncing = ScrollTrack(motion: .bouncing(start: 1.0, origin: 330, velocity: 0, towardsEnd: true),
                                   offset: 330, time: 1.0, lower: 0, upper: 300)
        first.content.scrollBinding = edge(bouncing, 1)
        scrolls.commit(first.root.snapshot(), consumedInput: 5)
        let drawn = scrolls.offsets(at: 1.02)[moved.layer] ?? bouncing.offset(at: 1.02)
        XCTAssertEqual(drawn, bouncing.offset(at: 1.02), accuracy: 0.5, "the bounce goes on as the UI thread has it")
        XCTAssertGreaterThan(drawn, 300, "past the end still, on its way back")
    }
}
