import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

// An audit of the scroll hand-off between the UI thread and the compositor thread (see
// docs/display-pipeline.md, "One owner of each scroll"), tried adversarially: each test states the
// promise it checks; most reproduced a defect of the first version of the hand-off.

/// One row of a solid colour. - Thread: any
private final class AuditBand: Node, @unchecked Sendable {
    init(_ color: Color, width: Double = 100, height: Double) {
        super.init()
        backgroundColor = color
        preferredSize = Size(width: width, height: height)
    }
}

/// Rows of colours that differ from row to row; `make` may give a row another node. - Thread: main
@MainActor
private final class AuditSource: ListDataSource {
    let count: Int
    let make: (@Sendable (Int) -> Node?)?
    init(count: Int, make: (@Sendable (Int) -> Node?)? = nil) {
        self.count = count
        self.make = make
    }
    func numberOfRows(in list: ListNode) -> Int { count }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let make = self.make
        let color = Color(red: UInt8(row * 37 % 256), green: UInt8(row * 91 % 256), blue: UInt8(row * 53 % 256))
        return { make?(row) ?? AuditBand(color, height: 40) }
    }
}

/// A list with another node over its top `overlayHeight` points. - Thread: any
private final class AuditOverlaid: Node, @unchecked Sendable {
    let list: ListNode
    let overlay: Node
    let overlayHeight: Double
    init(list: ListNode, overlay: Node, overlayHeight: Double = 100) {
        self.list = list
        self.overlay = overlay
        self.overlayHeight = overlayHeight
        super.init()
        addSubnode(list)
        addSubnode(overlay)
    }
    override func layout() {
        super.layout()
        list.frame = bounds
        overlay.frame = Rect(x: 0, y: 0, width: bounds.width, height: overlayHeight)
    }
}

/// A node that rasterizes its one child (a label with a tap target, say) into its own bitmap.
/// - Thread: any
private final class AuditRasterized: Node, @unchecked Sendable {
    let child = AuditBand(Color(rgb: 0xC02020), height: 40)
    /// Where the child sits, in this node (it may reach outside).
    let childFrame: Rect?
    init(childFrame: Rect? = nil, childInteractive: Bool) {
        self.childFrame = childFrame
        super.init()
        child.isUserInteractionEnabled = childInteractive
        backgroundColor = Color(rgb: 0x2040C0)
        addSubnode(child)
        shouldRasterizeDescendants = true
    }
    override func layout() {
        super.layout()
        child.frame = childFrame ?? bounds
    }
}

/// A carousel of three pages side by side (paging: turned by the wheel on the UI thread; else bound
/// to the compositor thread along x). - Thread: any
private func auditCarousel(paging: Bool) -> ScrollNode {
    let pages = Node()
    pages.automaticallyManagesSubnodes = false
    let colors: [UInt32] = [0xE04040, 0x40E040, 0x4040E0]
    for (index, color) in colors.enumerated() {
        let page = AuditBand(Color(rgb: color), width: 160, height: 120)
        page.frame = Rect(x: Double(index) * 160, y: 0, width: 160, height: 120)
        pages.addSubnode(page)
    }
    pages.preferredSize = Size(width: 480, height: 120)
    let carousel = ScrollNode(content: pages)
    carousel.axes = .horizontal
    carousel.isPagingEnabled = paging
    carousel.showsScrollIndicators = false
    carousel.preferredSize = Size(width: 160, height: 120)
    return carousel
}

@MainActor
final class HandOffAuditTests: XCTestCase {
    /// Every frame the compositor thread presented.
    final class Frames: Sendable {
        private let frames = Locked<[CompositorThread.PresentedFrame]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ frame: CompositorThread.PresentedFrame) {
            frames.withLock { $0.append(frame) }
            arrived.signal()
        }

        var all: [CompositorThread.PresentedFrame] { frames.withLock { $0 } }

        @discardableResult
        func block(timeout: Double = 3, until condition: ([CompositorThread.PresentedFrame]) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + timeout
            while !condition(all) {
                guard arrived.wait(timeout: deadline) == .success else { return condition(all) }
            }
            return true
        }
    }

    private var sources: [AuditSource] = []

    private func makeApp(root: Node) throws -> Application { try CompositorThreadSupport.makeApp(root: root) }

    private func makeList(count: Int = 400, make: (@Sendable (Int) -> Node?)? = nil) -> ListNode {
        let list = ListNode()
        let source = AuditSource(count: count, make: make)
        sources.append(source)
        list.dataSource = source
        return list
    }

    private func watch(_ app: Application) throws -> Frames {
        let frames = Frames()
        try XCTUnwrap(app.compositorThread).setFrameObserver { frames.record($0) }
        return frames
    }

    private func contentLayer(of list: ListNode) throws -> Layer { try CompositorThreadSupport.contentLayer(of: list) }
    private func send(_ events: [InputEvent], to thread: CompositorThread) { CompositorThreadSupport.send(events, to: thread) }
    private func assertScreenIsTheModel(_ app: Application, file: StaticString = #filePath, line: UInt = #line) throws {
        try CompositorThreadSupport.assertScreenIsTheModel(app, name: name, file: file, line: line)
    }

    /// The offset of the content layer `serial` as `frame` drew it.
    private func drawnOffset(_ frame: CompositorThread.PresentedFrame, _ serial: Int, horizontal: Bool = false) -> Double? {
        guard let layer = frame.snapshot?.layer(serial: serial) else { return nil }
        let presented = layer.presentedFrame(at: frame.time)
        return -(horizontal ? presented.minX : presented.minY)
    }

    // MARK: Routing: the compositor thread moves only a scroll the UI thread would send the wheel to

    /// A list the app made non-interactive (`isUserInteractionEnabled = false`, e.g. frozen under an
    /// editing mode) is not hit by the UI thread's hit test over its plain rows, so the UI thread
    /// sends the wheel nowhere; the compositor thread must leave it alone.
    func testANonInteractiveListIsNotScrolledByTheCompositorThread() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        list.isUserInteractionEnabled = false
        app.frame()
        try app.settle()
        let point = Point(x: 80, y: 120)
        XCTAssertNil(list.hitTest(point), "reference: the UI thread's hit test finds nothing there")
        let serial = try contentLayer(of: list).serial
        let frames = try watch(app)
        send([.pointerMoved(point)], to: thread)
        app.frame()

        send([.wheel(dx: 0, dy: -1)], to: thread)
        frames.block(timeout: 0.5) { $0.contains { $0.wheelOffsets[serial] != nil } }
        XCTAssertFalse(frames.all.contains { $0.wheelOffsets[serial] != nil },
                       "the compositor thread drove the list the UI thread would not send the wheel to")
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, 0, "the UI thread would not have scrolled the list")
        try assertScreenIsTheModel(app)
    }

    /// An overlay sliding in (the `Animator`'s origin animation, as a navigation push slides the new
    /// screen in) is hit by the UI thread at its node frame (where it ends), so the UI thread sends
    /// the wheel to it; the compositor thread hit-tests the node's frame too (`LayerInputRole.frame`),
    /// not the animated one, and leaves the list under it alone.
    func testTheWheelOverAnOverlaySlidingInLeavesTheListUnderIt() async throws {
        let list = makeList()
        let overlay = AuditBand(Color(rgb: 0x2040C0), height: 100)
        overlay.isUserInteractionEnabled = true
        let root = AuditOverlaid(list: list, overlay: overlay)
        let app = try makeApp(root: root)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let serial = try contentLayer(of: list).serial
        app.host.runtime.animator.animate(overlay.layer, .origin(from: Point(x: 0, y: 400), to: .zero), duration: 30)
        // The animator is the process's: the slide goes with this test.
        defer { app.host.runtime.animator.stop(overlay.layer, .origin(from: Point(x: 0, y: 400), to: .zero)) }
        app.frame()
        let point = Point(x: 80, y: 50)
        XCTAssertTrue(root.hitTest(point) === overlay, "reference: the UI thread's hit test finds the overlay")
        let frames = try watch(app)
        send([.pointerMoved(point)], to: thread)
        app.frame()

        send([.wheel(dx: 0, dy: -1)], to: thread)
        frames.block(timeout: 0.5) { $0.contains { $0.wheelOffsets[serial] != nil } }
        XCTAssertFalse(frames.all.contains { $0.wheelOffsets[serial] != nil },
                       "the compositor thread scrolled the list under the sliding overlay")
        app.frame()
        XCTAssertEqual(list.contentOffset, 0, "the UI thread sends this wheel to the overlay, not the list")
    }

    /// A rasterizing overlay whose child becomes interactive after the overlay loaded: the child has
    /// no layer, so the rasterizing node's layer takes the change into its input role.
    func testAChildOfARasterizedOverlayMadeInteractiveLaterShieldsTheList() async throws {
        let overlay = AuditRasterized(childInteractive: false)
        try assertTheChildTakesTheWheel(of: overlay, at: Point(x: 80, y: 50)) { app in
            overlay.child.isUserInteractionEnabled = true
            app.frame()
            try app.settle()
        }
    }

    /// A rasterizing overlay whose interactive child reaches outside the overlay's bounds: the UI
    /// thread hits the child there, and the rasterizing layer's hit area reaches there too.
    func testAnInteractiveChildOutsideItsRasterizingParentShieldsTheList() async throws {
        let overlay = AuditRasterized(childFrame: Rect(x: 0, y: 0, width: 160, height: 160), childInteractive: true)
        try assertTheChildTakesTheWheel(of: overlay, at: Point(x: 80, y: 130))
    }

    /// With `overlay` over a list (and `prepare` run), a wheel at `point`, where the UI thread's hit
    /// test finds the overlay's interactive child, moves the list on neither thread.
    private func assertTheChildTakesTheWheel(of overlay: AuditRasterized, at point: Point,
                                            prepare: (Application) throws -> Void = { _ in }) throws {
        let list = makeList()
        let root = AuditOverlaid(list: list, overlay: overlay)
        let app = try makeApp(root: root)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let serial = try contentLayer(of: list).serial
        try prepare(app)
        XCTAssertTrue(root.hitTest(point) === overlay.child, "reference: the UI thread's hit test finds the child")
        let frames = try watch(app)
        send([.pointerMoved(point)], to: thread)
        app.frame()

        send([.wheel(dx: 0, dy: -1)], to: thread)
        frames.block(timeout: 0.5) { $0.contains { $0.wheelOffsets[serial] != nil } }
        XCTAssertFalse(frames.all.contains { $0.wheelOffsets[serial] != nil },
                       "the compositor thread scrolled the list under the child")
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, 0, "the UI thread sends this wheel to the child, not the list")
    }

    /// Hidden and transparent overlays let the wheel through on both threads.
    func testHiddenAndTransparentOverlaysLetTheWheelThroughOnBothThreads() async throws {
        for hide in [true, false] {
            let list = makeList()
            let overlay = AuditBand(Color(rgb: 0x2040C0), height: 100)
            overlay.isUserInteractionEnabled = true
            if hide { overlay.isHidden = true } else { overlay.opacity = 0 }
            let root = AuditOverlaid(list: list, overlay: overlay)
            let app = try makeApp(root: root)
            let thread = try XCTUnwrap(app.compositorThread)
            let serial = try contentLayer(of: list).serial
            let frames = try watch(app)
            send([.pointerMoved(Point(x: 80, y: 50))], to: thread)
            app.frame()
            send([.wheel(dx: 0, dy: -1)], to: thread)
            XCTAssertTrue(frames.block { $0.contains { $0.wheelOffsets[serial] != nil } }, "hidden \(hide): moved at once")
            app.frame()
            try app.settle()
            XCTAssertEqual(list.contentOffset, list.wheelStep, accuracy: 0.001, "hidden \(hide)")
            try assertScreenIsTheModel(app)
            app.close()
        }
    }

    // MARK: Drawing what the compositor thread drives

    /// The wheel over a horizontal scroll inside a vertical list the compositor thread already drives:
    /// both scrolls are the thread's, and the inner one's move is drawn at once inside the moved outer.
    func testAScrollInsideADrivenScrollIsDrawnWhereTheThreadMovedIt() async throws {
        let carouselBox = Locked<ScrollNode?>(nil)
        let list = makeList(make: { row in
            guard row == 0 else { return nil }
            let carousel = auditCarousel(paging: false)
            carouselBox.withLock { $0 = carousel }
            return carousel
        })
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let outer = try contentLayer(of: list).serial
        let carousel = try XCTUnwrap(carouselBox.withLock { $0 })
        let inner = carousel.contentNode.layer.serial
        let frames = try watch(app)
        send([.pointerMoved(Point(x: 80, y: 200))], to: thread)
        app.frame()

        // The UI thread is stalled: the feed moves a notch, then the wheel turns the carousel.
        send([.wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertTrue(frames.block { $0.contains { $0.wheelOffsets[outer] != nil } })
        send([.pointerMoved(Point(x: 80, y: 60)), .wheel(dx: 1, dy: 0)], to: thread)
        usleep(150_000)
        _ = thread.performAndWait { _, _ in 0 }
        // What the screen shows now (drawn, or found to show nothing new: no frame is presented at
        // all, since the carousel's move is not in the tree the thread draws).
        let shown = try XCTUnwrap(thread.shownSnapshot)
        let x = try XCTUnwrap(shown.layer(serial: inner)).presentedFrame(at: thread.now).minX
        // The events as the UI thread gets them: the compositor thread did move the carousel itself.
        let events = app.compositor.pollEvents()
        let updates = app.compositor.lastScrollUpdates
        let update = try XCTUnwrap(updates.compactMap { $0 }.first { $0.layer == inner },
                                   "the compositor thread took the carousel's wheel: \(updates)")
        XCTAssertEqual(update.track.offset, carousel.wheelStep, accuracy: 0.5)
        XCTAssertEqual(-x, update.track.offset, accuracy: 0.5,
                       "the screen shows the carousel where the compositor thread moved it (\(update.track.offset))")
        app.frame(events: events)
        app.frame()
        try app.settle()
        XCTAssertEqual(carousel.contentOffset.x, carousel.wheelStep, accuracy: 0.5)
        try assertScreenIsTheModel(app)
    }

    // MARK: Presses

    /// A press on a feed gliding during a stall, over a still paging carousel (a row): the UI thread
    /// stops the feed (the carousel does not intercept the touch while still), and so does the
    /// compositor thread on screen, at once: a scroll only the UI thread moves stops the walk
    /// outwards only while it moves by itself.
    func testAPressOverAStillPagingCarouselStopsTheGlidingFeedOnScreen() async throws {
        let list = makeList(count: 60, make: { _ in auditCarousel(paging: true) })
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try contentLayer(of: list)
        let serial = content.serial
        let point = Point(x: 80, y: 120)
        send([.pointerMoved(point)], to: thread)
        app.frame()
        let frames = try watch(app)
        list.fling(velocity: 1_500)
        app.frame()
        XCTAssertTrue(frames.block { $0.count >= 3 }, "the fling runs on the compositor thread")

        send([.pointerDown(point, button: 1, clicks: 1)], to: thread)
        let drawn = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.drawnSnapshot?.layer(serial: serial) } ?? nil)
        let now = thread.now
        let pressedAt = -drawn.presentedFrame(at: now).minY
        let later = -drawn.presentedFrame(at: now + 0.5).minY
        XCTAssertEqual(later, pressedAt, accuracy: 0.5, "the press stopped the feed on screen at once")

        app.frame()
        XCTAssertFalse(list.isScrolling, "reference: the UI thread stops the feed")
        send([.pointerUp(point, button: 1)], to: thread)
        app.frame()
        try app.settle()
        try assertScreenIsTheModel(app)
    }

    // MARK: Races with the UI thread's own motion

    /// A scroll from code on the UI thread (a new `handoff`) committed before the UI thread
    /// took in a wheel event the compositor thread applied: the thread replays the untaken event on
    /// the new motion, the UI thread applies it itself, and both land on the same offset.
    func testAScrollFromCodeBeforeTheWheelIsTakenInReplaysTheWheelOnTheNewOffset() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let serial = try contentLayer(of: list).serial
        let frames = try watch(app)
        send([.pointerMoved(Point(x: 80, y: 120))], to: thread)
        app.frame()

        send([.wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertTrue(frames.block { $0.contains { $0.wheelOffsets[serial] != nil } })
        // A frame of the UI thread that has not taken the event in (as one already under way).
        list.setContentOffset(400, animated: false)
        app.host.runFrame(time: thread.now, events: [])
        let replayed = frames.block { $0.contains { frame in
            frame.wheelOffsets[serial].map { abs($0 - (400 + list.wheelStep)) < 0.5 } ?? false } }
        XCTAssertTrue(replayed, "the untaken wheel is replayed on the new offset: \(frames.all.suffix(3).map(\.wheelOffsets))")
        app.frame()
        try app.settle()
        XCTAssertEqual(list.contentOffset, 400 + list.wheelStep, accuracy: 0.5)
        try assertScreenIsTheModel(app)
    }

    /// A list taken out of the tree while the compositor thread drives its scroll: no crash,
    /// and the screen is the model again once quiet.
    func testAListRemovedWhileTheCompositorThreadDrivesItLeavesTheScreenTheModel() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let serial = try contentLayer(of: list).serial
        let frames = try watch(app)
        send([.pointerMoved(Point(x: 80, y: 120))], to: thread)
        app.frame()
        for _ in 0..<3 {
            send([.wheel(dx: 0, dy: -1)], to: thread)
            usleep(10_000)
        }
        XCTAssertTrue(frames.block { $0.contains { $0.wheelOffsets[serial] != nil } })
        let other = makeList()
        app.host.setRootNode(other)
        app.host.runFrame(time: thread.now, events: [])
        app.frame()
        try app.settle()
        try assertScreenIsTheModel(app)
        XCTAssertNil(thread.shownSnapshot?.layer(serial: serial))
    }

    /// `Application.settle()` takes in the input the compositor thread read and applied itself (a wheel
    /// it moved a list for): once settled, the UI thread holds what the screen shows.
    func testSettleTakesInTheInputTheCompositorThreadHolds() async throws {
        let list = makeList()
        let app = try makeApp(root: list)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        let serial = try contentLayer(of: list).serial
        let frames = try watch(app)
        send([.pointerMoved(Point(x: 80, y: 120))], to: thread)
        app.frame()
        send([.wheel(dx: 0, dy: -1)], to: thread)
        XCTAssertTrue(frames.block { $0.contains { $0.wheelOffsets[serial] != nil } })
        try app.settle()
        XCTAssertEqual(list.contentOffset, list.wheelStep, accuracy: 0.5, "settled: the wheel on screen was taken in")
        try assertScreenIsTheModel(app)
    }

    // MARK: Stopping the thread

    private func makeBareThread() throws -> CompositorThread {
        try CompositorThread(backend: .init(title: "audit", size: Size(width: 64, height: 64), scale: 1,
                                            headless: true, renderDriver: .software))
    }

    /// `stop()` called on the compositor thread itself (from a command or a frame observer) does not
    /// wait for the thread to end, which it could not while waiting: the thread stops when it is back
    /// in its loop.
    func testStopCalledOnTheCompositorThreadDoesNotWaitForItself() async throws {
        let thread = try makeBareThread()
        let took = Locked<Double?>(nil)
        thread.perform { _, _ in
            let start = MonotonicClock.nanoseconds()
            thread.stop()
            took.withLock { $0 = MonotonicClock.milliseconds(since: start) / 1000 }
        }
        let start = MonotonicClock.nanoseconds()
        thread.stop()
        let waited = MonotonicClock.milliseconds(since: start) / 1000
        XCTAssertFalse(thread.isRunning)
        XCTAssertLessThan(took.withLock { $0 } ?? .infinity, 1, "stop() on the compositor thread returned at once")
        XCTAssertLessThan(waited, 1, "the UI thread's stop() was not held up")
    }

    /// The last reference to a `CompositorThread` let go on the compositor thread (a command or a
    /// frame observer held it): `deinit` stops the thread without waiting for itself.
    func testTheLastReferenceLetGoOnTheCompositorThreadDoesNotStallIt() async throws {
        let box = Locked<CompositorThread?>(try makeBareThread())
        let before = CompositorThreadCore.liveCount
        box.withLock { $0 }!.perform { _, _ in
            // The only reference moves here and goes at the end of this command: on the compositor thread.
            let last = box.withLock { thread -> CompositorThread? in
                defer { thread = nil }
                return thread
            }
            withExtendedLifetime(last) {}
        }
        let start = MonotonicClock.nanoseconds()
        while CompositorThreadCore.liveCount >= before && MonotonicClock.milliseconds(since: start) / 1000 < 15 { usleep(10_000) }
        let waited = MonotonicClock.milliseconds(since: start) / 1000
        XCTAssertLessThan(waited, 1, "the thread let go on itself stopped at once (took \(waited) s)")
    }
}
