import Dispatch
import Foundation
import TestSupport
import XCTest
@testable import Compositor

/// Several windows on the process's one compositor thread: each shows its own snapshot, reads its own
/// events, closes without disturbing the others, and rests without presenting; the thread ends with
/// the last window and starts again with the next.
@MainActor
final class CompositorThreadWindowsTests: XCTestCase {
    private typealias Frames = CompositorThreadTests.Frames

    private func makeWindow(_ frames: Frames, title: String, size: Double = 60) throws -> CompositorThread {
        try CompositorThread(backend: .init(title: title, size: Size(width: size, height: size), scale: 1,
                                            headless: true, renderDriver: .software),
                             compositor: .init(clearColor: Color(rgb: 0x000000)),
                             frameObserver: { frames.record($0) })
    }

    private func solid(_ color: UInt32, size: Double = 60) -> LayerSnapshot {
        let layer = Layer(name: String(color, radix: 16))
        layer.frame = Rect(x: 0, y: 0, width: size, height: size)
        layer.backgroundColor = Color(rgb: color)
        return layer.snapshot()
    }

    /// What the window's renderer shows now, read back on the compositor thread.
    private func screen(of window: CompositorThread) throws -> Bitmap {
        _ = window.performAndWait { _, _ in 0 }
        return try XCTUnwrap(window.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil)
    }

    /// The compositor thread's id, asked through `window`.
    private func threadID(of window: CompositorThread) -> pthread_t? {
        window.performAndWait { _, _ in pthread_self() }
    }

    func testTwoWindowsOnOneThreadEachShowTheirOwnSnapshot() async throws {
        let framesA = Frames(), framesB = Frames()
        let a = try makeWindow(framesA, title: "window a")
        defer { a.stop() }
        let b = try makeWindow(framesB, title: "window b", size: 80)
        defer { b.stop() }
        XCTAssertNotEqual(a.info.windowID, b.info.windowID)
        XCTAssertEqual(threadID(of: a), threadID(of: b), "one thread serves both windows")
        XCTAssertEqual(b.info.outputPixelSize.width, 80, "each window its own size")

        a.commit(solid(0xFF0000), inputSequence: 0)
        b.commit(solid(0x0000FF, size: 80), inputSequence: 0)
        XCTAssertNotNil(framesA.waitFor { $0.snapshot?.backgroundColor == Color(rgb: 0xFF0000) })
        XCTAssertNotNil(framesB.waitFor { $0.snapshot?.backgroundColor == Color(rgb: 0x0000FF) })
        XCTAssertTrue(framesA.all.allSatisfy { $0.snapshot?.backgroundColor != Color(rgb: 0x0000FF) }, "a never drew b's")
        XCTAssertEqual(try screen(of: a).pixel(x: 30, y: 30), 0xFFFF_0000)
        XCTAssertEqual(try screen(of: b).pixel(x: 70, y: 70), 0xFF00_00FF)
        XCTAssertEqual(a.lateWakeups + b.lateWakeups, 0, "no wake-up lost between the look and the wait")
    }

    func testEachWindowReadsOnlyItsOwnEvents() async throws {
        let frames = Frames()
        let a = try makeWindow(frames, title: "window a")
        defer { a.stop() }
        let b = try makeWindow(frames, title: "window b")
        defer { b.stop() }
        // Both are put on SDL's one queue before either window reads it.
        a.perform { _, backend in backend.window.pushEvent(.input(.keyDown(.character("a"), modifiers: []))) }
        b.perform { _, backend in
            backend.window.pushEvent(.input(.keyDown(.character("b"), modifiers: [])))
            backend.window.pushEvent(.input(.closeRequested))
        }
        for window in [a, b, a, b] { _ = window.performAndWait { _, _ in 0 } }
        XCTAssertEqual(a.takeEvents().map(\.event), [.keyDown(.character("a"), modifiers: [])])
        XCTAssertEqual(b.takeEvents().map(\.event), [.keyDown(.character("b"), modifiers: []), .closeRequested],
                       "the close button of one window is that window's")
    }

    func testClosingOneWindowLeavesTheOtherDrawingAndTheThreadEndsAfterTheLast() async throws {
        let framesA = Frames(), framesB = Frames()
        let liveBefore = CompositorThreadCore.liveCount
        let a = try makeWindow(framesA, title: "window a")
        let b = try makeWindow(framesB, title: "window b")
        XCTAssertEqual(CompositorThreadCore.liveCount, liveBefore + 2)
        a.commit(solid(0xFF0000), inputSequence: 0)
        b.commit(solid(0x00FF00), inputSequence: 0)
        XCTAssertNotNil(framesB.waitFor { $0.snapshot?.backgroundColor == Color(rgb: 0x00FF00) })

        a.stop()
        XCTAssertFalse(a.isRunning, "its window closed before stop() returned")
        XCTAssertNil(a.performAndWait { _, _ in 1 } as Int?, "a closed window runs nothing")
        XCTAssertTrue(b.isRunning)
        XCTAssertTrue(CompositorThreadLoop.isRunning, "the thread stays for the other window")
        b.commit(solid(0xFFFF00), inputSequence: 0)
        XCTAssertNotNil(framesB.waitFor { $0.snapshot?.backgroundColor == Color(rgb: 0xFFFF00) }, "b goes on drawing")
        XCTAssertEqual(try screen(of: b).pixel(x: 30, y: 30), 0xFFFF_FF00)

        b.stop()
        XCTAssertEqual(CompositorThreadCore.liveCount, liveBefore)
        if liveBefore == 0 {
            CompositorThreadLoop.waitForEnd(timeout: 10)
            XCTAssertFalse(CompositorThreadLoop.isRunning, "the thread ended with the last window")
        }

        // A window opened afterwards starts the thread again.
        let framesC = Frames()
        let c = try makeWindow(framesC, title: "window c")
        defer { c.stop() }
        c.commit(solid(0x00FFFF), inputSequence: 0)
        XCTAssertNotNil(framesC.waitFor { $0.snapshot?.backgroundColor == Color(rgb: 0x00FFFF) })
        XCTAssertEqual(try screen(of: c).pixel(x: 30, y: 30), 0xFF00_FFFF)
    }

    func testTwoWindowsAtRestPresentNothing() async throws {
        let framesA = Frames(), framesB = Frames()
        let a = try makeWindow(framesA, title: "window a")
        defer { a.stop() }
        let b = try makeWindow(framesB, title: "window b")
        defer { b.stop() }
        a.commit(solid(0x336699), inputSequence: 0)
        b.commit(solid(0x996633), inputSequence: 0)
        XCTAssertNotNil(framesA.waitFor { $0.snapshot != nil })
        XCTAssertNotNil(framesB.waitFor { $0.snapshot != nil })
        let presentsA = a.presentCount, presentsB = b.presentCount
        // Turns of the loop with nothing new: commands run, nothing is drawn or presented. The same
        // snapshot committed again changes nothing either.
        for _ in 0..<3 {
            _ = a.performAndWait { _, _ in 0 }
            _ = b.performAndWait { _, _ in 0 }
        }
        a.commit(a.shownSnapshot, inputSequence: 0)
        _ = b.performAndWait { _, _ in 0 }
        XCTAssertEqual(a.presentCount, presentsA, "a at rest presents nothing")
        XCTAssertEqual(b.presentCount, presentsB, "b at rest presents nothing")

        // An animation in one window is drawn frame after frame; the other still presents nothing.
        let moving = Layer(name: "moving")
        moving.frame = Rect(x: 0, y: 0, width: 60, height: 60)
        moving.backgroundColor = Color(rgb: 0xFFFFFF)
        let start = a.now
        moving.animations = [.interpolating(.opacity, from: 0, to: 1, start: start, duration: 0.2, curve: .linear)]
        a.commit(moving.snapshot(), inputSequence: 0)
        XCTAssertNotNil(framesA.waitFor { $0.time >= start + 0.2 }, "a drew its animation to the end")
        XCTAssertGreaterThanOrEqual(a.presentCount - presentsA, 3)
        _ = b.performAndWait { _, _ in 0 }
        XCTAssertEqual(b.presentCount, presentsB, "b presented nothing while a moved")
    }

    /// Two windows animating at once each keep the display's pace, as one window alone does: the
    /// loop draws both in one turn, not one after the other's interval.
    func testTwoWindowsMovingAtOnceEachKeepTheDisplaysPace() async throws {
        func animate(_ windows: [(CompositorThread, Frames)], seconds: Double) -> [Int] {
            let start = windows[0].0.now + 0.05
            for (window, _) in windows {
                let moving = Layer(name: "moving")
                moving.frame = Rect(x: 0, y: 0, width: 60, height: 60)
                moving.backgroundColor = Color(rgb: 0xFFFFFF)
                moving.animations = [.interpolating(.opacity, from: 0, to: 1, start: start, duration: seconds, curve: .linear)]
                window.commit(moving.snapshot(), inputSequence: 0)
            }
            for (_, frames) in windows { _ = frames.waitFor { $0.time >= start + seconds } }
            return windows.map { _, frames in frames.all.filter { $0.time >= start && $0.time <= start + seconds }.count }
        }
        let framesA = Frames(), framesB = Frames()
        let a = try makeWindow(framesA, title: "window a")
        defer { a.stop() }
        let alone = animate([(a, framesA)], seconds: 0.5)[0]
        let b = try makeWindow(framesB, title: "window b")
        defer { b.stop() }
        let framesA2 = Frames()
        a.setFrameObserver { framesA2.record($0) }
        let together = animate([(a, framesA2), (b, framesB)], seconds: 0.5)
        print("frames in 0.5 s at 60 Hz: one window alone \(alone); two windows at once \(together)")
        XCTAssertGreaterThanOrEqual(alone, 20, "one window alone keeps about 30 frames")
        for count in together {
            XCTAssertGreaterThanOrEqual(Double(count), Double(alone) * 0.75, "each of two windows keeps the pace: \(together) vs \(alone)")
        }
    }
}
