import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// One row of a solid colour. - Thread: any
private final class BandNode: Node, @unchecked Sendable {
    init(_ color: Color, width: Double = 100, height: Double) {
        super.init()
        backgroundColor = color
        preferredSize = Size(width: width, height: height)
    }
}

/// Rows of colours that differ from row to row; row 0 may be another node (a carousel). - Thread: main
@MainActor
private final class BandSource: ListDataSource {
    let count: Int
    let first: (@Sendable () -> Node)?
    init(count: Int, first: (@Sendable () -> Node)? = nil) {
        self.count = count
        self.first = first
    }
    func numberOfRows(in list: ListNode) -> Int { count }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        if row == 0, let first { return first }
        let color = Color(red: UInt8(row * 37 % 256), green: UInt8(row * 91 % 256), blue: UInt8(row * 53 % 256))
        return { BandNode(color, height: 40) }
    }
}

/// A list under an overlay that takes the pointer (a toolbar, a banner). - Thread: any
private final class OverlaidList: Node, @unchecked Sendable {
    let list: ListNode
    let overlay = BandNode(Color(rgb: 0x2040C0), height: 100)
    init(list: ListNode) {
        self.list = list
        super.init()
        overlay.isUserInteractionEnabled = true
        addSubnode(list)
        addSubnode(overlay)
    }
    override func layout() {
        super.layout()
        list.frame = bounds
        overlay.frame = Rect(x: 0, y: 0, width: bounds.width, height: 100)
    }
}

/// A paging carousel for a feed's first row: three pages side by side, turned by the wheel on the UI
/// thread. - Thread: any
private func makeCarousel() -> ScrollNode {
    let pages = Node()
    pages.automaticallyManagesSubnodes = false
    let colors: [UInt32] = [0xE04040, 0x40E040, 0x4040E0]
    for (index, color) in colors.enumerated() {
        let page = BandNode(Color(rgb: color), width: 160, height: 120)
        page.frame = Rect(x: Double(index) * 160, y: 0, width: 160, height: 120)
        pages.addSubnode(page)
    }
    pages.preferredSize = Size(width: 480, height: 120)
    let carousel = ScrollNode(content: pages)
    carousel.axes = .horizontal
    carousel.isPagingEnabled = true
    carousel.showsScrollIndicators = false
    carousel.preferredSize = Size(width: 160, height: 120)
    return carousel
}

/// The hand-off between the UI thread and the compositor thread, tried as an app's user would:
/// the wheel over an overlay and over a carousel inside a feed, a burst of wheel events while the UI
/// thread is stalled, a press on a list moving during a stall. In each, what the screen shows and
/// what the UI thread holds must be one truth: the compositor thread moves a scroll only where the UI
/// thread would, goes on moving it as the UI thread would (the glide), stops it where the press
/// lands, and the UI thread takes its motion over where the screen shows it.
@MainActor
final class ScrollHandOffTests: XCTestCase {
    /// What each presented frame showed of one content layer.
    final class Shown: Sendable {
        struct Frame: Sendable {
            let time: Double
            let y: Double
            let animating: Bool
            let drivenByCompositor: Bool
            /// The content layer as drawn: its animation gives where the screen has it at any time.
            let layer: LayerSnapshot
        }
        private let frames = Locked<[Frame]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ frame: Frame) {
            frames.withLock { $0.append(frame) }
            arrived.signal()
        }

        var all: [Frame] { frames.withLock { $0 } }

        /// Blocks the calling (UI) thread until `condition` holds for the frames, at most `timeout` s.
        @discardableResult
        func block(timeout: Double = 5, until condition: ([Frame]) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + timeout
            while !condition(all) {
                guard arrived.wait(timeout: deadline) == .success else { return condition(all) }
            }
            return true
        }
    }

    private var source: BandSource?

    private func makeList(count: Int = 400, first: (@Sendable () -> Node)? = nil) -> ListNode {
        let list = ListNode()
        let source = BandSource(count: count, first: first)
        self.source = source
        list.dataSource = source
        return list
    }

    private func watch(_ app: Application, content: Layer) throws -> Shown {
        let shown = Shown()
        let serial = content.serial
        try XCTUnwrap(app.compositorThread).setFrameObserver { frame in
            guard let layer = frame.snapshot?.layer(serial: serial) else { return }
            shown.record(.init(time: frame.time, y: layer.presentedFrame(at: frame.time).minY,
                               animating: layer.isAnimating(at: frame.time),
                               drivenByCompositor: frame.wheelOffsets[serial] != nil, layer: layer))
        }
        return shown
    }

    private func makeApp(root: Node) throws -> Application { try CompositorThreadSupport.makeApp(root: root) }
    private func contentLayer(of list: ListNode) throws -> Layer { try CompositorThreadSupport.contentLayer(of: list) }
    private func send(_ events: [InputEvent], to thread: CompositorThread) { CompositorThreadSupport.send(events, to: thread) }
    private func assertScreenIsTheModel(_ app: Application, file: StaticString = #filePath, line: UInt = #line) throws {
        try CompositorThreadSupport.assertScreenIsTheModel(app, name: name, file: file, line: line)
    }

    // MARK: Where the compositor thread may scroll

    func testTheWheelOverAnOverlayThatTakesThePointerMovesNothingOnScreen() async throws {
        let list = makeList()
        let root = OverlaidList(list: list)
        let app = try makeApp(root: root)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try contentLayer(of: list)
        let shown = try watch(app, content: content)
        send([.pointerMoved(Point(x: 80, y: 50))], to: thread)
        app.frame()

        // The UI thread is busy while the wheel turns over the overlay, twice.
        send([.wheel(dx: 0, dy: -1), .wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertFalse(shown.all.contains { $0.drivenByCompositor || $0.y != 0 },
                       "the compositor thread left the list alone: the overlay takes the wheel on the UI thread")
        // The UI thread sends the wheel to the overlay, which takes it: the list stays.
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, 0)
        try assertScreenIsTheModel(app)
        XCTAssertEqual(shown.all.last.map { $0.y } ?? 0, 0, "the screen shows the list where the UI thread holds it")

        // Below the overlay the wheel is the list's: it moves at once, and the UI thread agrees.
        send([.pointerMoved(Point(x: 80, y: 180)), .wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertTrue(shown.block { $0.contains { $0.drivenByCompositor && $0.y == -list.wheelStep } },
                      "the list moved on the compositor thread")
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, list.wheelStep, accuracy: 0.001)
        try assertScreenIsTheModel(app)
    }

    func testTheWheelOverAPagingCarouselInAFeedTurnsThePageAndLeavesTheFeed() async throws {
        let carouselBox = Locked<ScrollNode?>(nil)
        let list = makeList(first: {
            let carousel = makeCarousel()
            carouselBox.withLock { $0 = carousel }
            return carousel
        })
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try contentLayer(of: list)
        let shown = try watch(app, content: content)
        let carousel = try XCTUnwrap(carouselBox.withLock { $0 })
        XCTAssertEqual(carousel.currentPage, 0)
        send([.pointerMoved(Point(x: 80, y: 60))], to: thread)
        app.frame()

        // Over the carousel the wheel turns its page (on the UI thread), never the feed.
        send([.wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertFalse(shown.all.contains { $0.drivenByCompositor || $0.y != 0 },
                       "the compositor thread did not scroll the feed under the carousel")
        app.frame()
        try app.settle()
        XCTAssertEqual(carousel.currentPage, 1, "the carousel turned a page")
        XCTAssertEqual(list.contentOffset, 0, "the feed stayed")
        XCTAssertFalse(shown.all.contains { $0.y != 0 }, "the feed never moved on screen")
        try assertScreenIsTheModel(app)

        // Below the carousel the wheel is the feed's: it moves on the compositor thread at once.
        send([.pointerMoved(Point(x: 80, y: 200)), .wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertTrue(shown.block { $0.contains { $0.drivenByCompositor && $0.y == -list.wheelStep } },
                      "the feed moved on the compositor thread: \(shown.all.map(\.y))")
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, list.wheelStep, accuracy: 0.001)
        XCTAssertEqual(carousel.currentPage, 1)
        try assertScreenIsTheModel(app)
    }

    // MARK: Motion the compositor thread drives

    func testAWheelBurstDuringAStallGlidesOnScreenAndTheUIThreadTakesItOver() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try contentLayer(of: list)
        let shown = try watch(app, content: content)
        send([.pointerMoved(Point(x: 80, y: 120))], to: thread)
        app.frame()
        let step = list.wheelStep

        // The UI thread is stalled while the wheel turns four notches in quick succession (as a
        // hand spins it: each notch read at its own time).
        for _ in 0..<4 {
            send([.wheel(dx: 0, dy: -1)], to: thread)
            usleep(12_000)
        }
        // The screen glides on past the four notches, without the UI thread (as far as rows were
        // drawn before the stall).
        XCTAssertTrue(shown.block { frames in frames.contains { -$0.y > 4 * step + 20 } },
                      "the list glided on after the wheel: \(shown.all.map(\.y))")
        let ys = shown.all.map(\.y)
        XCTAssertEqual(ys, ys.sorted(by: >), "one way only: \(ys)")
        let last = try XCTUnwrap(shown.all.last)
        XCTAssertTrue(last.drivenByCompositor)

        // The UI thread comes back and takes the list over where the screen has it at its frame's
        // time (the compositor thread's motion, drawn on as an animation, says where that is).
        XCTAssertEqual(list.contentOffset, 0, "the UI thread has not run meanwhile")
        app.frame()
        let time = app.host.time
        let onScreen = -last.layer.presentedFrame(at: time).minY
        XCTAssertGreaterThan(onScreen, 4 * step + 20)
        XCTAssertEqual(list.contentOffset, onScreen, accuracy: 0.5, "the UI thread holds what the screen shows")
        // The UI thread's motion and the screen's stay one from here: at the next presented frame too.
        XCTAssertTrue(shown.block { $0.last.map { $0.time > time } ?? false })
        let next = try XCTUnwrap(shown.all.first { $0.time > time })
        var track = list.motionTrack()
        _ = track.advance(to: next.time)
        XCTAssertEqual(-next.y, track.offset, accuracy: 0.5, "the next frame agrees")
        XCTAssertGreaterThanOrEqual(-next.y, onScreen - 0.5, "and the screen never went back")
        try app.settle()
        XCTAssertFalse(list.isScrolling)
        try assertScreenIsTheModel(app)
    }

    func testAPressOnAListMovingDuringAStallStopsItOnScreenWhereTheUIThreadStopsIt() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try contentLayer(of: list)
        var selected: [Int] = []
        list.onSelectRow = { selected.append($0) }
        send([.pointerMoved(Point(x: 80, y: 120))], to: thread)
        app.frame()
        let shown = try watch(app, content: content)
        list.fling(velocity: 2_000)
        app.frame()  // the fling goes to the compositor thread
        XCTAssertTrue(shown.block { $0.count >= 3 }, "the fling runs on the compositor thread")

        // The UI thread is stalled; the user presses on the moving list. What the compositor thread
        // drew last (presented, or found to show nothing new) holds the list still where it stopped.
        send([.pointerDown(Point(x: 80, y: 120), button: 1, clicks: 1)], to: thread)
        let serial = content.serial
        let drawn = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.drawnSnapshot?.layer(serial: serial) } ?? nil)
        let now = thread.now
        XCTAssertFalse(drawn.isAnimating(at: now), "the press stopped the list on screen at once")
        let rest = drawn.presentedFrame(at: now).minY
        XCTAssertEqual(drawn.presentedFrame(at: now + 1).minY, rest, "and it stays there")
        XCTAssertLessThan(rest, 0, "it had moved")

        // The UI thread takes the press in: the list stops where the screen stopped it.
        app.frame()
        XCTAssertFalse(list.isScrolling)
        XCTAssertEqual(list.contentOffset, -rest, accuracy: 0.5, "stopped where the screen shows it")
        send([.pointerUp(Point(x: 80, y: 120), button: 1)], to: thread)
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, -rest, accuracy: 0.5, "no jump after the press")
        XCTAssertEqual(selected, [], "the press that stopped the list selects nothing")
        try assertScreenIsTheModel(app)
    }
}
