import Dispatch
import Foundation
import Tessera
import TestSupport
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// One row of a solid colour. - Thread: any
private final class StripeNode: Node, @unchecked Sendable {
    init(_ color: Color, height: Double) {
        super.init()
        backgroundColor = color
        preferredSize = Size(width: 100, height: height)
    }
}

/// Rows of colours that differ from row to row. - Thread: main
@MainActor
private final class StripeSource: ListDataSource {
    let count: Int
    init(count: Int) { self.count = count }
    func numberOfRows(in list: ListNode) -> Int { count }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let color = Color(red: UInt8(row * 37 % 256), green: UInt8(row * 91 % 256), blue: UInt8(row * 53 % 256))
        return { StripeNode(color, height: 40) }
    }
}

/// An application whose frames are drawn on a compositor thread: a flung list goes on moving while
/// the UI thread is blocked, and the UI thread takes it up where the screen shows it; the wheel
/// turned during a block reaches the screen without the UI thread, which then agrees with it; and the
/// screen after quiescence equals a synchronous render of the same layers.
@MainActor
final class CompositorThreadAppTests: XCTestCase {
    /// The content y each presented frame showed, and a wait for frames to come.
    final class Presented: Sendable {
        struct Frame: Sendable {
            let time: Double
            let y: Double
            let wheelAhead: Bool
        }
        private let frames = Locked<[Frame]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ frame: Frame) {
            frames.withLock { $0.append(frame) }
            arrived.signal()
        }

        var all: [Frame] { frames.withLock { $0 } }

        /// Blocks the calling (UI) thread until `condition` holds for the frames, at most 10 s.
        @discardableResult
        func block(until condition: ([Frame]) -> Bool) -> Bool {
            let deadline = DispatchTime.now() + 10
            while !condition(all) {
                guard arrived.wait(timeout: deadline) == .success else { return condition(all) }
            }
            return true
        }
    }

    /// The list's data source (a list holds its data source weakly).
    private var source: StripeSource?

    private func makeApp() throws -> (Application, ListNode, Layer, Presented) {
        let list = ListNode()
        let source = StripeSource(count: 2_000)
        self.source = source
        list.dataSource = source
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 240))
        configuration.compositorThread = true
        let app = try Application(configuration: configuration, rootNode: list)
        try app.settle()
        let content = try XCTUnwrap(list.layer.sublayers.first { $0.name == "list-content" })
        let presented = Presented()
        let serial = content.serial
        try XCTUnwrap(app.compositorThread).setFrameObserver { frame in
            guard let layer = frame.snapshot?.layer(serial: serial) else { return }
            presented.record(.init(time: frame.time, y: layer.presentedFrame(at: frame.time).minY,
                                   wheelAhead: frame.wheelOffsets[serial] != nil))
        }
        return (app, list, content, presented)
    }

    /// Returns once the compositor thread has drawn the snapshot the UI thread last handed over
    /// (true), or after 10 s (false).
    private func waitUntilDrawn(_ app: Application) throws -> Bool {
        let thread = try XCTUnwrap(app.compositorThread)
        let handed = try XCTUnwrap(app.compositor.drawnSnapshot)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if thread.performAndWait({ drawer, _ in drawer.drawnSnapshot === handed }) == true { return true }
        }
        return false
    }

    /// A headless app on a compositor thread whose window follows its display's scale.
    private func makeScaleFollowingApp(root: Node?) throws -> Application {
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 240))
        configuration.scale = nil
        configuration.compositorThread = true
        configuration.accessibility = false
        let app = try root.map { try Application(configuration: configuration, rootNode: $0) }
            ?? Application(configuration: configuration, rootController: nil)
        try app.settle()
        return app
    }

    /// The window's scale changes under an app with no root yet: the UI thread's frame has nothing
    /// to draw for it, yet it answers the change (a compositor thread waiting for the answer draws
    /// nothing meanwhile); the root shown later is drawn.
    func testAScaleChangeUnderAnAppWithNoRootIsAnsweredAndWhatComesNextIsDrawn() async throws {
        let app = try makeScaleFollowingApp(root: nil)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        CompositorThreadSupport.send([.contentsScaleChanged(2)], to: thread)
        app.frame()
        XCTAssertEqual(app.host.contentsScale, 2, "the UI thread took the new scale")
        let root = Node()
        root.backgroundColor = Color(rgb: 0x3366CC)
        app.host.setRootNode(root)
        try app.settle()
        XCTAssertTrue(try waitUntilDrawn(app), "the root shown after the scale change is drawn")
    }

    /// A scale change the UI thread's frame answers with nothing new to show (the app had taken that
    /// scale already; the frame only acknowledges the input): the compositor thread draws again with
    /// no UI frame after.
    func testAScaleChangeThatChangesNothingIsAnsweredAndWhatComesNextIsDrawn() async throws {
        let root = Node()
        root.backgroundColor = Color(rgb: 0x3366CC)
        let app = try makeScaleFollowingApp(root: root)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        // The app took scale 2 already: the window's move to an output of scale 2 changes nothing.
        app.host.setContentsScale(2)
        try app.settle()
        XCTAssertTrue(try waitUntilDrawn(app))
        let handed = app.compositor.drawnSnapshot
        CompositorThreadSupport.send([.contentsScaleChanged(2)], to: thread)
        app.frame()
        XCTAssertTrue(app.compositor.drawnSnapshot === handed, "nothing new handed over: the frame acknowledged the input")
        // From here the UI thread runs no frame: a frame the thread is asked for is drawn.
        let presents = thread.presentCount
        thread.perform { drawer, _ in drawer.setNeedsWholeFrame() }
        let deadline = Date().addingTimeInterval(10)
        while thread.presentCount == presents && Date() < deadline { _ = thread.performAndWait { _, _ in true } }
        XCTAssertGreaterThan(thread.presentCount, presents, "the thread draws again without another UI frame")
    }

    /// The window's scale changes while it is minimized (its textures let go, nothing drawn): the
    /// UI thread answers it out of sight, and the window shown again is drawn at once, whole, with
    /// what changed meanwhile.
    func testAScaleChangeWhileMinimizedIsDrawnOnceTheWindowIsShownAgain() async throws {
        let root = Node()
        root.backgroundColor = Color(rgb: 0x3366CC)
        let app = try makeScaleFollowingApp(root: root)
        defer { app.close() }
        let thread = try XCTUnwrap(app.compositorThread)
        CompositorThreadSupport.send([.windowVisibilityChanged(false)], to: thread)
        app.frame()
        XCTAssertFalse(app.host.isWindowVisible)
        CompositorThreadSupport.send([.contentsScaleChanged(2)], to: thread)
        app.frame()
        XCTAssertEqual(app.host.contentsScale, 2)
        root.backgroundColor = Color(rgb: 0xCC6633)
        app.frame()
        let presents = thread.presentCount
        CompositorThreadSupport.send([.windowVisibilityChanged(true)], to: thread)
        app.frame()
        XCTAssertTrue(app.host.isWindowVisible)
        XCTAssertTrue(try waitUntilDrawn(app), "the snapshot of the new scale is drawn once shown")
        XCTAssertGreaterThan(thread.presentCount, presents, "and presented")
    }

    /// A list flung when the window's scale changes: once the UI thread has answered, the
    /// compositor thread goes on moving it on its own, one way, and the UI thread agrees with it.
    func testAFlingGoesOnAfterAScaleChangeIsAnswered() async throws {
        let list = ListNode()
        let source = StripeSource(count: 2_000)
        self.source = source
        list.dataSource = source
        let app = try makeScaleFollowingApp(root: list)
        defer {
            app.host.setRootController(nil)
            app.close()
        }
        let thread = try XCTUnwrap(app.compositorThread)
        let content = try XCTUnwrap(list.layer.sublayers.first { $0.name == "list-content" })
        let presented = Presented()
        let serial = content.serial
        thread.setFrameObserver { frame in
            guard let layer = frame.snapshot?.layer(serial: serial) else { return }
            presented.record(.init(time: frame.time, y: layer.presentedFrame(at: frame.time).minY,
                                   wheelAhead: frame.wheelOffsets[serial] != nil))
        }
        list.fling(velocity: 1_500)
        app.frame()
        CompositorThreadSupport.send([.contentsScaleChanged(2)], to: thread)
        app.frame()  // the answer
        XCTAssertEqual(app.host.contentsScale, 2)
        let before = presented.all.count
        XCTAssertTrue(presented.block { $0.count >= before + 6 }, "frames presented after the answer, the UI thread blocked")
        let ys = presented.all.dropFirst(before).map(\.y)
        XCTAssertEqual(ys, ys.sorted(by: >), "the content moves one way: \(ys)")
        XCTAssertLessThan(ys.last!, ys.first!, "and it moved")
        app.frame()
        let time = app.host.time
        XCTAssertTrue(presented.block { $0.last!.time >= time })
        let next = try XCTUnwrap(presented.all.first { $0.time >= time })
        var track = list.motionTrack()
        _ = track.advance(to: next.time)
        XCTAssertEqual(next.y, -track.offset, accuracy: 0.5, "the UI thread agrees with the screen")
    }

    func testAFlungListKeepsMovingWhileTheUIThreadIsBlocked() async throws {
        let (app, list, _, presented) = try makeApp()
        defer {
            app.host.setRootController(nil)
            app.close()
        }
        list.fling(velocity: 1_500)
        app.frame()  // the list hands its motion to the compositor thread
        let before = presented.all.count
        // The UI thread is blocked (it waits here) until the compositor thread has presented six
        // more frames on its own.
        XCTAssertTrue(presented.block { $0.count >= before + 6 }, "frames presented while the UI thread was blocked")
        let during = Array(presented.all.dropFirst(before))
        let ys = during.map(\.y)
        XCTAssertEqual(ys, ys.sorted(by: >), "the content moves one way: \(ys)")
        XCTAssertLessThan(ys.last!, ys.first!, "and it moved")
        XCTAssertTrue(list.isScrolling, "the UI thread has not seen the motion end")

        // The UI thread's next frame takes the list up where the compositor thread's motion is.
        app.frame()
        let time = app.host.time
        let last = try XCTUnwrap(presented.all.last)
        XCTAssertGreaterThanOrEqual(time, last.time)
        // The frame the thread draws next shows the UI thread's motion at that frame's time: both
        // run the same function of time, so they agree to the pixel.
        XCTAssertTrue(presented.block { $0.last!.time >= time })
        let next = try XCTUnwrap(presented.all.first { $0.time >= time })
        var track = list.motionTrack()
        _ = track.advance(to: next.time)
        XCTAssertEqual(next.y, -track.offset, accuracy: 0.5, "the UI thread agrees with the screen")
        XCTAssertLessThanOrEqual(next.y, ys.last! + 0.5, "and the screen never went back")
    }

    func testTheWheelDuringABlockReachesTheScreenAndTheUIThreadAgrees() async throws {
        let (app, list, _, presented) = try makeApp()
        defer {
            app.host.setRootController(nil)
            app.close()
        }
        let thread = try XCTUnwrap(app.compositorThread)
        thread.perform { _, backend in backend.window.pushPointerEvent(.pointerMoved(Point(x: 80, y: 120))) }
        app.frame(events: app.compositor.waitForEvents(timeout: 5))
        XCTAssertEqual(list.contentOffset, 0)
        // The UI thread blocks while the wheel turns twice towards the end.
        thread.perform { _, backend in
            backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1))
            backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1))
        }
        let step = list.wheelStep
        XCTAssertTrue(presented.block { frames in frames.contains { $0.wheelAhead && $0.y == -2 * step } },
                      "the wheel moved the list on screen without the UI thread")
        // Then the UI thread takes the events in: the list is where the screen shows it.
        app.frame()
        XCTAssertEqual(list.contentOffset, 2 * step)
        try app.settle()
        XCTAssertEqual(list.contentOffset, 2 * step)
        XCTAssertTrue(presented.block { $0.last.map { !$0.wheelAhead && $0.y == -2 * step } ?? false },
                      "the thread follows the UI thread's commit again")
    }

    /// A settled window shows its latest state: `settle` returns once the compositor thread has drawn
    /// the last commit, even when that thread was busy while the UI thread's frames went by.
    func testSettleWaitsForTheCompositorThreadToShowTheLastCommit() async throws {
        let node = Node()
        node.backgroundColor = Color(rgb: 0xCC2222)
        var configuration = Application.Configuration.headless(size: Size(width: 120, height: 90))
        configuration.compositorThread = true
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: node)
        defer { app.close() }
        try app.settle()
        let thread = try XCTUnwrap(app.compositorThread)
        let presents = thread.presentCount
        // The thread held up (as a slow present or a busy machine would) while the UI thread commits.
        thread.perform { _, _ in usleep(300_000) }
        node.backgroundColor = Color(rgb: 0x2244CC)
        try app.settle()
        XCTAssertTrue(thread.shownSnapshot === app.compositor.drawnSnapshot, "the screen shows the last commit")
        XCTAssertEqual(thread.presentCount, presents + 1, "the change presented once, before settle returned")
    }

    func testTheScreenAfterQuiescenceEqualsASynchronousRender() async throws {
        let (app, list, _, _) = try makeApp()
        defer {
            app.host.setRootController(nil)
            app.close()
        }
        list.fling(velocity: 2_500)
        try app.settle()
        let onThread = try app.capture()
        // The same layers drawn on this thread by a compositor of its own.
        let backend = try SDLRenderBackend(.init(title: "oracle", size: Size(width: 160, height: 240), scale: 1,
                                                 headless: true, renderDriver: .software))
        let oracle = Compositor(backend: backend, configuration: .init(clearColor: app.configuration.backgroundColor))
        let expected = try XCTUnwrap(oracle.capture(app.host.rootLayer))
        let (difference, _) = GoldenImage.compare(onThread, expected, tolerance: 0)
        XCTAssertEqual(difference.differingPixels, 0, "\(difference)")
        XCTAssertGreaterThan(list.contentOffset, 100, "the list had moved")
    }
}
