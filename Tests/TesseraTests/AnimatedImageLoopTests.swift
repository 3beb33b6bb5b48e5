import Foundation
import Tessera
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen of one animated image, placed at the top left.
private final class AnimationScreenNode: Node, @unchecked Sendable {
    let image = ImageNode()

    init(_ bytes: [UInt8]) {
        super.init()
        image.source = .data(bytes, name: "loop.gif")
        image.preferredSize = Size(width: 20, height: 20)
        addSubnode(image)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { image }
    }
}

/// The event loop with an animated image on screen: it runs a frame when a frame of the animation is
/// due (and the few that commit its draw), not sixty a second; paused, it runs none at all; resumed,
/// it goes on without another event.
@MainActor
final class AnimatedImageLoopTests: XCTestCase {
    func testTheLoopWakesForTheAnimationsFramesAndNotAtAllOncePaused() async throws {
        let colours = [Color(rgb: 0xFF0000), Color(rgb: 0x00FF00), Color(rgb: 0x0000FF), Color(rgb: 0xFFFFFF)]
        // Four frames of 250 ms, for ever.
        let gif = AnimatedTestImages.gif(width: 20, height: 20, palette: colours, loopCount: 0,
                                         frames: (0..<4).map { .filled(UInt8($0), width: 20, height: 20, delay: 25) })
        let screen = AnimationScreenNode(gif)
        let app = try Application(configuration: .headless(size: Size(width: 40, height: 40)), rootNode: screen)
        defer { app.host.setRootController(nil) }
        try app.settle()
        // The first frame is decoded once the still image shows: settle again for it.
        for _ in 0..<10 where screen.image.animationStatus == nil { try app.settle() }
        XCTAssertTrue(screen.image.isAnimating)
        XCTAssertFalse(app.host.needsFrame, "between two frames of the animation there is nothing to do: \(app.host.pendingWork)")
        XCTAssertNotNil(app.host.nextTimerTime(after: app.host.time), "the next frame is a timer")

        func position() -> Int {
            screen.image.animationStatus.map { $0.completedPlays * 4 + $0.frameIndex } ?? -1
        }
        let frames = app.frameCount, presents = app.compositor.presentCount
        let before = position()
        app.runEventLoop(forSeconds: 1.2)
        let ran = app.frameCount - frames, presented = app.compositor.presentCount - presents
        // About five frames of the animation in 1.2 s: each is a frame that shows it and the few that
        // run while the next one is decoded and committed (more on a loaded machine, where a decode
        // takes longer), well under the 72 frames of a loop running at 60 Hz.
        let advanced = position() - before
        XCTAssertGreaterThanOrEqual(presented, 2, "the animation reached the screen")
        XCTAssertGreaterThanOrEqual(advanced, 3, "the animation moved on by its own delays")
        XCTAssertLessThanOrEqual(ran, 54, "\(ran) frames ran for \(advanced) frames of the animation")
        XCTAssertLessThanOrEqual(ran, 12 * max(1, advanced), "\(ran) frames ran for \(advanced) frames of the animation")

        screen.image.isAnimationPaused = true
        try app.settle()
        XCTAssertNil(app.host.nextTimerTime(after: app.host.time))
        let pausedFrames = app.frameCount, pausedPresents = app.compositor.presentCount
        let wakes = UIWakeup.shared.wakeCount
        app.runEventLoop(forSeconds: 0.6)
        XCTAssertEqual(app.frameCount, pausedFrames, "no frame ran while paused")
        XCTAssertEqual(app.compositor.presentCount, pausedPresents, "nothing presented while paused")
        XCTAssertEqual(UIWakeup.shared.wakeCount, wakes, "nothing woke the loop")

        // Resumed between two frames, from the UI thread: the loop picks it up by itself.
        let paused = position()
        screen.image.isAnimationPaused = false
        app.runEventLoop(forSeconds: 0.6)
        XCTAssertGreaterThanOrEqual(position() - paused, 1, "the animation went on")
    }
}
