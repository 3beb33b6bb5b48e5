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
}
