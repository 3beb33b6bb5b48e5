import Compositor
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import NodeRuntime

/// An animated image at the top left and a list under it.
private final class MotionScreen: Node, @unchecked Sendable {
    let image = ImageNode()
    let list = ListNode()

    init(_ bytes: [UInt8]) {
        super.init()
        image.source = .data(bytes, name: "loop.gif")
        image.preferredSize = Size(width: 20, height: 20)
        list.style.height = .points(100)
        list.style.width = .points(100)
        addSubnode(image)
        addSubnode(list)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { image; list }
    }
}

@MainActor
private final class NumberRows: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 200 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { TextNode("Row \(row)") }
    }
}

/// Reduced motion held by the things that move by themselves: an animated image stops on its frame
/// (and goes on when motion is allowed again), an animated scroll jumps.
@MainActor
final class ReducedMotionTests: XCTestCase {
    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    func testAnimatedImagesHoldAndAnimatedScrollsJump() async throws {
        let colours = [Color(rgb: 0xFF0000), Color(rgb: 0x00FF00), Color(rgb: 0x0000FF), Color(rgb: 0xFFFFFF)]
        let gif = AnimatedTestImages.gif(width: 20, height: 20, palette: colours, loopCount: 0,
                                         frames: (0..<4).map { .filled(UInt8($0), width: 20, height: 20, delay: 25) })
        let screen = MotionScreen(gif)
        let rows = NumberRows()
        screen.list.dataSource = rows
        let app = try Application(configuration: .headless(size: Size(width: 120, height: 140)), rootNode: screen)
        defer { app.host.setRootController(nil) }
        try app.settle()
        for _ in 0..<10 where screen.image.animationStatus == nil { try app.settle() }
        XCTAssertTrue(screen.image.isAnimating)

        Runtime.shared.setAppearance(Appearance(reducedMotion: true))
        try app.settle()
        XCTAssertFalse(screen.image.isAnimating, "held on its frame")
        XCTAssertNil(app.host.nextTimerTime(after: app.host.time), "no frame of the animation is due")
        let held = try app.capture().pixel(x: 10, y: 10)
        app.frame()
        XCTAssertEqual(try app.capture().pixel(x: 10, y: 10), held)

        screen.list.scroll(to: 150, at: .top, animated: true)
        XCTAssertFalse(app.host.movesByItself, "the scroll landed at once")
        app.frame()
        XCTAssertEqual(screen.list.visibleRows?.lowerBound, 150)

        Runtime.shared.setAppearance(.standard)
        try app.settle()
        XCTAssertTrue(screen.image.isAnimating, "motion allowed again: it goes on")
        screen.list.scroll(to: 0, at: .top, animated: true)
        XCTAssertTrue(app.host.movesByItself, "an animated scroll moves by itself again")
        screen.image.isAnimationPaused = true
    }

    /// A wheel burst glides on by itself, except under reduced motion, where the list stays where
    /// the last event put it; the compositor thread is given the same physics with the list's motion.
    func testTheWheelLeavesNoGlideUnderReducedMotion() async throws {
        func glide(reduced: Bool) throws -> Double {
            Runtime.shared.setAppearance(Appearance(reducedMotion: reduced))
            let screen = MotionScreen(AnimatedTestImages.gif(width: 20, height: 20, palette: [Color(rgb: 0xFF0000)], loopCount: 0,
                                                            frames: [.filled(0, width: 20, height: 20, delay: 25)]))
            let rows = NumberRows()
            screen.list.dataSource = rows
            let app = try Application(configuration: .headless(size: Size(width: 120, height: 140)), rootNode: screen)
            defer { app.host.setRootController(nil) }
            try app.settle()
            let start = app.host.time
            for index in 0..<4 { _ = screen.list.scrollWheel(dx: 0, dy: -1, at: start + Double(index) * 0.02) }
            let track = screen.list.motionTrack()
            XCTAssertEqual(track.physics.reducesMotion, reduced, "the track the compositor runs carries it")
            XCTAssertGreaterThan(track.offset, 0, "the events moved the list")
            return track.offset(at: start + 2) - track.offset
        }
        XCTAssertGreaterThan(try glide(reduced: false), 10, "a burst glides on")
        XCTAssertEqual(try glide(reduced: true), 0, "under reduced motion it stops where the wheel left it")
    }

    /// A scroll released past an edge springs back, except under reduced motion, where it lands on
    /// the edge at once; a fling still glides.
    func testAnEdgeLandsAtOnceUnderReducedMotion() {
        for reduced in [false, true] {
            var physics = ScrollPhysics()
            physics.reducesMotion = reduced
            let release = ScrollTrack.motionAfterRelease(at: -40, velocity: 0, lower: 0, upper: 500, physics: physics, time: 0)
            var track = ScrollTrack(motion: release, offset: -40, time: 0, physics: physics, lower: 0, upper: 500)
            track.advance(to: 0.016)
            if reduced {
                XCTAssertEqual(track.offset, 0)
                XCTAssertFalse(track.isMoving(at: 0.016))
            } else {
                XCTAssertLessThan(track.offset, 0, "springing back")
                XCTAssertTrue(track.isMoving(at: 0.016))
            }
            let fling = ScrollTrack.motionAfterRelease(at: 100, velocity: 800, lower: 0, upper: 500, physics: physics, time: 0)
            let flung = ScrollTrack(motion: fling, offset: 100, time: 0, physics: physics, lower: 0, upper: 500)
            XCTAssertGreaterThan(flung.offset(at: 0.2), 100, "a fling glides either way")
        }
    }
}
