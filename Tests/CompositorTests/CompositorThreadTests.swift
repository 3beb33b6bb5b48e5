import Dispatch
import Foundation
import TestSupport
import XCTest
@testable import Compositor

/// A compositor on a thread of its own: it draws what the UI thread committed, goes on drawing
/// animations while the UI thread commits nothing, moves a bound scroll by the wheel before the UI
/// thread has seen the event, and draws the same pixels a compositor on the UI thread draws.
@MainActor
final class CompositorThreadTests: XCTestCase {
    /// The frames a thread presented, and a way to wait for one that meets a condition.
    final class Frames: Sendable {
        private let frames = Guarded<[CompositorThread.PresentedFrame]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ frame: CompositorThread.PresentedFrame) {
            frames.withLock { $0.append(frame) }
            arrived.signal()
        }

        var all: [CompositorThread.PresentedFrame] { frames.withLock { $0 } }

        /// Waits (at most `timeout` seconds) until a presented frame meets `condition`.
        func waitFor(timeout: Double = 10, _ condition: (CompositorThread.PresentedFrame) -> Bool) -> CompositorThread.PresentedFrame? {
            let deadline = DispatchTime.now() + timeout
            while true {
                if let found = all.first(where: condition) { return found }
                guard arrived.wait(timeout: deadline) == .success else { return all.first(where: condition) }
            }
        }
    }

    private func makeThread(_ frames: Frames, size: Double = 100) throws -> CompositorThread {
        try CompositorThread(backend: .init(title: "compositor thread", size: Size(width: size, height: size), scale: 1,
                                            headless: true, renderDriver: .software),
                             compositor: .init(clearColor: Color(rgb: 0x000000)),
                             frameObserver: { frames.record($0) })
    }

    private func box(_ color: UInt32, _ frame: Rect) -> Layer {
        let layer = Layer(name: String(color, radix: 16))
        layer.frame = frame
        layer.backgroundColor = Color(rgb: color)
        return layer
    }

    func testAnAnimationGoesOnWhileTheUIThreadCommitsNothing() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        defer { thread.stop() }
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let moving = box(0xFF0000, Rect(x: 0, y: 80, width: 20, height: 20))
        let start = thread.now
        moving.animations = [.interpolating(.originY, from: 0, to: 80, start: start, duration: 0.3, curve: .linear)]
        root.addSublayer(moving)
        // One commit; from here the UI thread does nothing at all.
        thread.commit(root.snapshot(), inputSequence: 0)
        // (The thread's very first frame, before any commit, draws nothing; every frame after shows
        // the box where the animation has it, to the last at its end.)
        func presentedYs() -> [Double] {
            frames.all.compactMap { frame in frame.snapshot.map { $0.sublayers[0].presentedFrame(at: frame.time).minY } }
        }
        let last = frames.waitFor { frame in frame.time >= start + 0.3 }
        XCTAssertNotNil(last, "the thread drew the animation to its end without the UI thread")
        let ys = presentedYs()
        XCTAssertGreaterThanOrEqual(ys.count, 3, "frames drawn along the way: \(ys)")
        XCTAssertEqual(ys, ys.sorted(), "the box only moves down")
        XCTAssertEqual(ys.last ?? 0, 80, "the last frame at the animation's end")
        XCTAssertTrue(ys.contains { $0 > 0 && $0 < 80 }, "drawn in between: \(ys)")

        // At its end the thread rests: two round trips through its loop present nothing.
        let presents = thread.presentCount
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
        XCTAssertEqual(thread.presentCount, presents, "nothing is drawn once nothing moves")

        let snapshot = root.snapshot()
        let time = thread.now
        let pixels = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.capture(snapshot: snapshot, at: time) } ?? nil)
        XCTAssertEqual(pixels.pixel(x: 10, y: 90), 0xFFFF_0000, "the box where the animation ended")
        XCTAssertEqual(pixels.pixel(x: 10, y: 10), 0xFF00_0000)
    }

    func testTheThreadDrawsWhatACompositorOnTheUIThreadDraws() async throws {
        let frames = Frames()
        let thread = try makeThread(frames, size: 120)
        defer { thread.stop() }
        let local = try SDLRenderBackend(.init(title: "oracle", size: Size(width: 120, height: 120), scale: 1,
                                               headless: true, renderDriver: .software))
        let oracle = Compositor(backend: local, configuration: .init(clearColor: Color(rgb: 0x000000)))
        let root = box(0x203040, Rect(x: 0, y: 0, width: 120, height: 120))
        let card = box(0xE0E0E0, Rect(x: 10, y: 10, width: 100, height: 60))
        card.cornerRadius = 12
        let fading = box(0x3080FF, Rect(x: 20, y: 80, width: 80, height: 30))
        fading.opacity = 0.5
        fading.animations = [.interpolating(.opacity, from: 0, to: 1, start: 0, duration: 1, curve: .easeOutCubic)]
        let image = try BitmapContext(pixelWidth: 40, pixelHeight: 20, scale: 1)
        var drawing = image
        drawing.fill(Rect(x: 0, y: 0, width: 40, height: 20), color: Color(rgb: 0x40C040))
        let picture = box(0xFFFFFF, Rect(x: 30, y: 20, width: 40, height: 20))
        picture.contents = drawing.makeBitmap()
        card.addSublayer(picture)
        root.addSublayer(card)
        root.addSublayer(fading)
        let snapshot = root.snapshot()
        for time in [0.0, 0.25, 0.5, 2.0] {
            let drawn = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.capture(snapshot: snapshot, at: time) } ?? nil)
            let expected = try XCTUnwrap(oracle.capture(snapshot: snapshot, at: time))
            let (difference, _) = GoldenImage.compare(drawn, expected, tolerance: 0)
            XCTAssertEqual(difference.differingPixels, 0, "at \(time) s: \(difference)")
            XCTAssertFalse(difference.sizesDiffer)
        }
    }

    /// The window's scale changes (moved to an output of another scale): from the moment the thread
    /// reads it, it draws nothing of the snapshot laid out at the old scale, however much commits
    /// change, until the UI thread has answered the change (a commit that consumed it); then it draws.
    func testAfterTheWindowsScaleChangesNothingIsDrawnUntilTheUIThreadAnswered() async throws {
        let frames = Frames()
        let thread = try CompositorThread(backend: .init(title: "compositor thread", size: Size(width: 100, height: 100),
                                                         headless: true, renderDriver: .software),
                                          compositor: .init(clearColor: Color(rgb: 0x000000)),
                                          frameObserver: { frames.record($0) })
        defer { thread.stop() }
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let card = box(0xFF0000, Rect(x: 10, y: 10, width: 30, height: 30))
        root.addSublayer(card)
        thread.commit(root.snapshot(), inputSequence: 0)
        XCTAssertNotNil(frames.waitFor { $0.snapshot != nil }, "the first frame")
        XCTAssertEqual(thread.info.scale, 1)

        thread.perform { _, backend in backend.window.pushEvent(.input(.contentsScaleChanged(2))) }
        var scaleEvent: CompositorThread.TimedEvent?
        let deadline = Date().addingTimeInterval(10)
        while scaleEvent == nil && Date() < deadline {
            _ = thread.performAndWait { _, _ in 0 }
            scaleEvent = thread.takeEvents().first { if case .contentsScaleChanged(2) = $0.event { true } else { false } }
        }
        let sequence = try XCTUnwrap(scaleEvent, "the thread read the new scale and handed it over").sequence
        XCTAssertEqual(thread.info.scale, 2, "published")

        // A commit that has not consumed it (laid out at the old scale): nothing presented.
        let presents = thread.presentCount
        card.backgroundColor = Color(rgb: 0x00FF00)
        thread.commit(root.snapshot(), inputSequence: sequence - 1)
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
        XCTAssertEqual(thread.presentCount, presents, "no frame of the old scale's snapshot after the scale changed")

        // The UI thread's answer: drawn at once.
        card.backgroundColor = Color(rgb: 0x0000FF)
        thread.commit(root.snapshot(), inputSequence: sequence)
        XCTAssertNotNil(frames.waitFor { $0.snapshot?.sublayers[0].backgroundColor == Color(rgb: 0x0000FF) },
                        "the answer is drawn")
    }

    /// A thread whose window follows its display's scale, its first frame presented.
    private func makeScaledThread(_ frames: Frames) throws -> (CompositorThread, Layer, Layer) {
        let thread = try CompositorThread(backend: .init(title: "compositor thread", size: Size(width: 100, height: 100),
                                                         headless: true, renderDriver: .software),
                                          compositor: .init(clearColor: Color(rgb: 0x000000)),
                                          frameObserver: { frames.record($0) })
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let card = box(0xFF0000, Rect(x: 10, y: 10, width: 30, height: 30))
        root.addSublayer(card)
        thread.commit(root.snapshot(), inputSequence: 0)
        XCTAssertNotNil(frames.waitFor { $0.snapshot != nil }, "the first frame")
        return (thread, root, card)
    }

    /// Puts `events` on the thread's window queue (one read) and returns what the thread handed over
    /// for them, once it has.
    private func read(_ events: [BackendEvent], on thread: CompositorThread,
                      until done: ([CompositorThread.TimedEvent]) -> Bool) -> [CompositorThread.TimedEvent] {
        thread.perform { _, backend in events.forEach { backend.window.pushEvent($0) } }
        var taken: [CompositorThread.TimedEvent] = []
        let deadline = Date().addingTimeInterval(10)
        while !done(taken) && Date() < deadline {
            _ = thread.performAndWait { _, _ in 0 }
            taken += thread.takeEvents()
        }
        return taken
    }

    /// Two round trips through the thread's loop: whatever it would draw for a commit made before
    /// is drawn by the time this returns.
    private func settleThread(_ thread: CompositorThread) {
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }
    }

    private static func isScaleChange(_ event: CompositorThread.TimedEvent) -> Bool {
        if case .contentsScaleChanged = event.event { true } else { false }
    }

    /// The UI thread's answer to a scale change may change nothing on screen: it only acknowledges
    /// the input (the same snapshot committed again with a newer sequence, as a frame with nothing
    /// to draw does). That answer is enough: the snapshot committed meanwhile is drawn then.
    func testAScaleChangeAnsweredWithoutANewSnapshotLetsTheThreadDrawAgain() async throws {
        let frames = Frames()
        let (thread, root, card) = try makeScaledThread(frames)
        defer { thread.stop() }
        let taken = read([.input(.contentsScaleChanged(2))], on: thread) { $0.contains(where: Self.isScaleChange) }
        let sequence = try XCTUnwrap(taken.first(where: Self.isScaleChange)).sequence

        card.backgroundColor = Color(rgb: 0x00FF00)
        let changed = root.snapshot()
        thread.commit(changed, inputSequence: sequence - 1)
        settleThread(thread)
        XCTAssertNil(frames.all.first { $0.snapshot === changed }, "not drawn before the answer")

        // The same snapshot again, the scale change now consumed: an acknowledgement only.
        thread.commit(changed, inputSequence: sequence)
        XCTAssertNotNil(frames.waitFor { $0.snapshot === changed }, "drawn once the change is acknowledged")
    }

    /// Two scale changes read one after the other (1 → 2 → 1): the thread waits for the answer to
    /// the last; an answer to the first only draws nothing, the answer to the last draws.
    func testAfterTwoScaleChangesTheThreadWaitsForTheAnswerToTheLast() async throws {
        let frames = Frames()
        let (thread, root, card) = try makeScaledThread(frames)
        defer { thread.stop() }
        let first = read([.input(.contentsScaleChanged(2))], on: thread) { $0.contains(where: Self.isScaleChange) }
        let second = read([.input(.contentsScaleChanged(1))], on: thread) { $0.contains(where: Self.isScaleChange) }
        let firstSequence = try XCTUnwrap(first.first(where: Self.isScaleChange)).sequence
        let secondSequence = try XCTUnwrap(second.first(where: Self.isScaleChange)).sequence
        XCTAssertGreaterThan(secondSequence, firstSequence)
        XCTAssertEqual(thread.info.scale, 1, "the last scale published")

        card.backgroundColor = Color(rgb: 0x00FF00)
        let atTheFirst = root.snapshot()
        thread.commit(atTheFirst, inputSequence: firstSequence)
        settleThread(thread)
        XCTAssertNil(frames.all.first { $0.snapshot === atTheFirst }, "the answer to the first change only: not drawn")

        card.backgroundColor = Color(rgb: 0x0000FF)
        let atTheLast = root.snapshot()
        thread.commit(atTheLast, inputSequence: secondSequence)
        XCTAssertNotNil(frames.waitFor { $0.snapshot === atTheLast }, "the answer to the last is drawn")
    }

    /// A scale change read with other input in the same read (handed over after it, as the window
    /// reads its scale once its events are read): the thread waits for the answer to the scale
    /// change itself; the input read with it answered is not enough.
    func testAScaleChangeReadWithOtherInputWaitsForItsOwnSequence() async throws {
        let frames = Frames()
        let (thread, root, card) = try makeScaledThread(frames)
        defer { thread.stop() }
        let point = Point(x: 50, y: 50)
        let taken = read([.input(.pointerDown(point, button: 1, clicks: 1)), .input(.contentsScaleChanged(2)), .input(.pointerUp(point, button: 1))],
                         on: thread) { taken in
            taken.contains(where: Self.isScaleChange) && taken.contains { if case .pointerUp = $0.event { true } else { false } }
        }
        let scaleChange = try XCTUnwrap(taken.first(where: Self.isScaleChange))
        let before = try XCTUnwrap(taken.filter { $0.sequence < scaleChange.sequence }.last, "input read before it").sequence

        card.backgroundColor = Color(rgb: 0x00FF00)
        let early = root.snapshot()
        thread.commit(early, inputSequence: before)
        settleThread(thread)
        XCTAssertNil(frames.all.first { $0.snapshot === early }, "the input before the change answered only: not drawn")

        card.backgroundColor = Color(rgb: 0x0000FF)
        let answer = root.snapshot()
        thread.commit(answer, inputSequence: scaleChange.sequence)
        XCTAssertNotNil(frames.waitFor { $0.snapshot === answer }, "the answer to the change itself is drawn")
    }

    /// The scale changes while the window is out of sight (its textures released): the answer comes
    /// while it is still out of sight, and the window shown again is drawn whole at once; and a
    /// change shown again before its answer is drawn once the answer comes.
    func testAScaleChangeOutOfSightIsDrawnOnceShownAndAnswered() async throws {
        let frames = Frames()
        let (thread, root, card) = try makeScaledThread(frames)
        defer { thread.stop() }
        thread.releaseTextures()
        let first = read([.input(.contentsScaleChanged(2))], on: thread) { $0.contains(where: Self.isScaleChange) }
        card.backgroundColor = Color(rgb: 0x00FF00)
        let answered = root.snapshot()
        thread.commit(answered, inputSequence: try XCTUnwrap(first.first(where: Self.isScaleChange)).sequence)
        settleThread(thread)
        XCTAssertNil(frames.all.first { $0.snapshot === answered }, "out of sight: nothing drawn")
        thread.perform { drawer, _ in drawer.setNeedsWholeFrame() }
        XCTAssertNotNil(frames.waitFor { $0.snapshot === answered }, "shown again: drawn")

        // Out of sight again; the scale changes back; shown before the UI thread answered.
        thread.releaseTextures()
        let second = read([.input(.contentsScaleChanged(1))], on: thread) { $0.contains(where: Self.isScaleChange) }
        thread.perform { drawer, _ in drawer.setNeedsWholeFrame() }
        card.backgroundColor = Color(rgb: 0x0000FF)
        let early = root.snapshot()
        thread.commit(early, inputSequence: try XCTUnwrap(second.first(where: Self.isScaleChange)).sequence - 1)
        settleThread(thread)
        XCTAssertNil(frames.all.first { $0.snapshot === early }, "shown, the change not yet answered: not drawn")
        thread.commit(early, inputSequence: try XCTUnwrap(second.first(where: Self.isScaleChange)).sequence)
        XCTAssertNotNil(frames.waitFor { $0.snapshot === early }, "answered: drawn")
    }

    /// A window waiting for the answer to a scale change still closes: `stop()` returns with the
    /// window gone (no command is taken after it), long before its 10 s limit.
    func testAWindowWaitingForAScaleAnswerStops() async throws {
        let frames = Frames()
        let (thread, _, _) = try makeScaledThread(frames)
        let taken = read([.input(.contentsScaleChanged(2))], on: thread) { $0.contains(where: Self.isScaleChange) }
        XCTAssertNotNil(taken.first(where: Self.isScaleChange))
        let start = Date()
        thread.stop()
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "stop() did not wait out its limit")
        let answer: Bool? = thread.performAndWait { _, _ in true }
        XCTAssertNil(answer, "the window is closed")
    }

    func testTheWheelMovesABoundScrollBeforeTheUIThreadSeesIt() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        defer { thread.stop() }
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let viewport = box(0x101010, Rect(x: 0, y: 0, width: 100, height: 100))
        viewport.clipsToBounds = true
        let content = Layer(name: "content")
        content.frame = Rect(x: 0, y: 0, width: 0, height: 0)
        content.scrollBinding = ScrollBinding(viewport: Rect(x: 0, y: 0, width: 100, height: 100), lower: 0, upper: 300,
                                              wheelStep: 48)
        for index in 0..<8 {
            content.addSublayer(box(index % 2 == 0 ? 0xFF0000 : 0x00FF00, Rect(x: 0, y: Double(index) * 50, width: 100, height: 50)))
        }
        viewport.addSublayer(content)
        root.addSublayer(viewport)
        thread.commit(root.snapshot(), inputSequence: 0)
        XCTAssertNotNil(frames.waitFor { _ in true }, "the first frame")

        // The user turns the wheel towards the end, once, over the content.
        thread.perform { _, backend in
            backend.window.pushPointerEvent(.pointerMoved(Point(x: 50, y: 50)))
            backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1))
        }
        let moved = frames.waitFor { $0.wheelOffsets[content.serial] == 48 }
        XCTAssertNotNil(moved, "the wheel moved the content before any commit")
        let events = thread.takeEvents()
        let wheel = try XCTUnwrap(events.first { if case .wheel = $0.event { true } else { false } })
        XCTAssertEqual(events.map(\.sequence), events.map(\.sequence).sorted())
        let ahead = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil)
        XCTAssertEqual(ahead.pixel(x: 50, y: 1), 0xFFFF_0000, "row 0 still shows at the top (moved by 48)")
        XCTAssertEqual(ahead.pixel(x: 50, y: 3), 0xFF00_FF00, "row 1 starts 2 points down")

        // The UI thread takes the event in and commits the content where it put it: the thread
        // follows the commit from then on, with nothing of its own left ahead.
        // (Something else changes too, so that the commit shows in a frame of its own.)
        content.frame = Rect(x: 0, y: -48, width: 0, height: 0)
        content.sublayers[0].backgroundColor = Color(rgb: 0x0000FF)
        thread.commit(root.snapshot(), inputSequence: wheel.sequence)
        let caughtUp = frames.waitFor { frame in
            frame.wheelOffsets.isEmpty && frame.snapshot?.sublayers[0].sublayers[0].frame.minY == -48
                && frame.snapshot?.sublayers[0].sublayers[0].sublayers[0].backgroundColor == Color(rgb: 0x0000FF)
        }
        XCTAssertNotNil(caughtUp, "the committed offset replaces the thread's own")
    }

    func testTheWheelMovesAHorizontalBoundScrollAlongX() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        defer { thread.stop() }
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let viewport = box(0x101010, Rect(x: 0, y: 0, width: 100, height: 100))
        viewport.clipsToBounds = true
        let content = Layer(name: "content")
        content.scrollBinding = ScrollBinding(viewport: Rect(x: 0, y: 0, width: 100, height: 100), lower: 0, upper: 300,
                                              wheelStep: 48, isHorizontal: true)
        for index in 0..<8 {
            content.addSublayer(box(index % 2 == 0 ? 0xFF0000 : 0x00FF00, Rect(x: Double(index) * 50, y: 0, width: 50, height: 100)))
        }
        viewport.addSublayer(content)
        root.addSublayer(viewport)
        thread.commit(root.snapshot(), inputSequence: 0)
        XCTAssertNotNil(frames.waitFor { _ in true }, "the first frame")

        // The horizontal motion moves it to the right's content; a vertical notch then moves it on.
        thread.perform { _, backend in
            backend.window.pushPointerEvent(.pointerMoved(Point(x: 50, y: 50)))
            backend.window.pushPointerEvent(.wheel(dx: 1, dy: 0))
        }
        XCTAssertNotNil(frames.waitFor { $0.wheelOffsets[content.serial] == 48 }, "dx moved it along x")
        var pixels = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil)
        XCTAssertEqual(pixels.pixel(x: 1, y: 50), 0xFFFF_0000, "column 0 still at the left edge (moved by 48)")
        XCTAssertEqual(pixels.pixel(x: 3, y: 50), 0xFF00_FF00, "column 1 starts 2 points in")
        thread.perform { _, backend in backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1)) }
        XCTAssertNotNil(frames.waitFor { $0.wheelOffsets[content.serial] == 96 }, "dy moves it along x where there is no dx")
        pixels = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil)
        XCTAssertEqual(pixels.pixel(x: 3, y: 50), 0xFF00_FF00, "column 1 (50..100) at 96 − 96 + 3")
        XCTAssertEqual(pixels.pixel(x: 5, y: 50), 0xFFFF_0000, "column 2 starts 4 points in")
        _ = thread.takeEvents()
    }

    /// A scroll whose binding alone changed (a new wheel step, new bounds, a moved viewport) is
    /// committed to the compositor thread: nothing shows, but the thread routes and moves the wheel
    /// by it.
    func testAChangedScrollBindingAloneIsCommitted() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        defer { thread.stop() }
        let compositor = Compositor(thread: thread)
        let root = box(0x000000, Rect(x: 0, y: 0, width: 100, height: 100))
        let viewport = box(0x101010, Rect(x: 0, y: 0, width: 100, height: 100))
        viewport.clipsToBounds = true
        let content = Layer(name: "content")
        content.scrollBinding = ScrollBinding(viewport: Rect(x: 0, y: 0, width: 100, height: 100), lower: 0, upper: 300,
                                              wheelStep: 48)
        for index in 0..<8 {
            content.addSublayer(box(index % 2 == 0 ? 0xFF0000 : 0x00FF00, Rect(x: 0, y: Double(index) * 50, width: 100, height: 50)))
        }
        viewport.addSublayer(content)
        root.addSublayer(viewport)
        compositor.renderIfChanged(root, at: thread.now)
        XCTAssertNotNil(frames.waitFor { _ in true }, "the first frame")

        // Only the wheel step changes: nothing on screen does.
        content.scrollBinding?.wheelStep = 96
        XCTAssertTrue(compositor.needsRender(root), "a snapshot to hand over")
        compositor.renderIfChanged(root, at: thread.now)
        thread.perform { _, backend in
            backend.window.pushPointerEvent(.pointerMoved(Point(x: 50, y: 50)))
            backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1))
        }
        let moved = frames.waitFor { $0.wheelOffsets[content.serial] != nil }
        XCTAssertEqual(moved?.wheelOffsets[content.serial], 96, "the thread moved it by the new step")
        _ = thread.takeEvents()
    }

    /// The UI thread's compositor for a compositor thread has the whole window, not a stand-in that
    /// traps: its id, density and placement are the thread's window's, and what it asks of it (the
    /// clipboard, text input, the cursor, a pointer warp) is done there.
    func testTheUIThreadsWindowOfACompositorThreadDoesWhatTheWindowDoes() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        defer { thread.stop() }
        let compositor = Compositor(thread: thread)
        let window = try XCTUnwrap(compositor.window)
        XCTAssertNil(compositor.backend, "the frames are drawn there, with the thread's renderer")
        let ids = thread.performAndWait { _, backend in backend.window.windowID }
        XCTAssertEqual(window.windowID, ids)
        XCTAssertEqual(window.windowID, thread.info.windowID)
        XCTAssertEqual(window.scale, 1)
        XCTAssertEqual(window.videoDriverName, "dummy")
        XCTAssertTrue(window.windowPlacement === thread.info.windowPlacement)
        XCTAssertTrue(compositor.textInputPlatform === window)
        XCTAssertEqual(compositor.rendererName, "software")
        XCTAssertEqual(compositor.outputPixelSize.width, 100)

        window.setClipboardText("from the UI thread")
        XCTAssertEqual(window.clipboardText(), "from the UI thread", "set and read on the thread that owns the window")
        window.startTextInput(caret: Rect(x: 4, y: 4, width: 1, height: 12))
        window.setCursor(.iBeam)
        window.warpPointer(to: Point(x: 10, y: 10))
        window.stopTextInput()
        // The commands ran in order, before this one.
        XCTAssertEqual(thread.performAndWait { _, backend in backend.window.clipboardText() }, "from the UI thread")
    }

    /// A compositor thread nobody holds stops: its thread does not keep it alive, and its window and
    /// renderer are gone when the last reference goes.
    func testACompositorThreadLetGoStops() async throws {
        let frames = Frames()
        weak var weakThread: CompositorThread?
        let before = CompositorThreadCore.liveCount
        do {
            let thread = try makeThread(frames)
            weakThread = thread
            XCTAssertTrue(thread.isRunning)
            XCTAssertEqual(CompositorThreadCore.liveCount, before + 1)
            let root = box(0x336699, Rect(x: 0, y: 0, width: 100, height: 100))
            thread.commit(root.snapshot(), inputSequence: 0)
            XCTAssertNotNil(frames.waitFor { _ in true })
        }
        XCTAssertNil(weakThread, "nothing but the app held it")
        XCTAssertEqual(CompositorThreadCore.liveCount, before, "its thread ended with it")
    }

    /// Every compositor thread still running is stopped before the process exits, so none is
    /// presenting while the libraries it draws with are torn down.
    func testThreadsStillRunningAtExitAreStopped() async throws {
        let frames = Frames()
        let thread = try makeThread(frames)
        XCTAssertTrue(thread.isRunning)
        CompositorThreadCore.stopAll()
        XCTAssertFalse(thread.isRunning, "stopped, as at exit")
        let answer: Int? = thread.performAndWait { _, _ in 1 }
        XCTAssertNil(answer, "a stopped thread runs nothing")
    }
}
