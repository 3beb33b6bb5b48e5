import Dispatch
import Foundation
import TestSupport
import XCTest
@testable import Compositor

/// The compositor thread's windows as a careless app drives them: asked from the thread itself, closed
/// while asked from another thread, opened and closed many times over. Headless (the dummy driver).
@MainActor
final class CompositorThreadWindowsAuditTests: XCTestCase {
    private func makeWindow(_ title: String) throws -> CompositorThread {
        try CompositorThread(backend: .init(title: title, size: Size(width: 40, height: 40), scale: 1,
                                            headless: true, renderDriver: .software),
                             compositor: .init(clearColor: Color(rgb: 0x000000)))
    }

    /// A command of one window that asks another window for an answer (`performAndWait` on the
    /// compositor thread itself) gets it at once: the thread does not wait for itself, frozen with
    /// every window on it, until the time-out.
    func testPerformAndWaitOnTheCompositorThreadAnswersAtOnce() async throws {
        let a = try makeWindow("asks")
        defer { a.stop() }
        let b = try makeWindow("answers")
        defer { b.stop() }
        let bWidth = b.info.outputPixelSize.width
        let answer = a.performAndWait(timeout: 20) { _, _ -> (Int?, Double) in
            let start = MonotonicClock.nanoseconds()
            let width = b.performAndWait(timeout: 5) { compositor, _ in compositor.backend.outputPixelSize.width }
            return (width, Double(MonotonicClock.nanoseconds() &- start) / 1e9)
        }
        let (width, seconds) = try XCTUnwrap(answer)
        XCTAssertEqual(width, bWidth, "the other window's command ran and answered")
        XCTAssertLessThan(seconds, 1, "the thread did not wait for itself")
        // Its own window too.
        let own = a.performAndWait(timeout: 20) { _, _ in a.performAndWait(timeout: 5) { _, _ in 7 } }
        XCTAssertEqual(own ?? nil, 7)
    }

    /// `performAndWait` asked from other threads while the window closes returns, answered or nil,
    /// never after its time-out; the window closes; the other window goes on answering.
    func testPerformAndWaitWhileTheWindowClosesReturnsInTime() async throws {
        let other = try makeWindow("stays")
        defer { other.stop() }
        for round in 0..<20 {
            let window = try makeWindow("closes \(round)")
            let group = DispatchGroup()
            let late = Guarded(0)
            for _ in 0..<4 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<10 {
                        let start = MonotonicClock.nanoseconds()
                        _ = window.performAndWait(timeout: 2) { _, _ in 1 }
                        window.perform { _, _ in }
                        if Double(MonotonicClock.nanoseconds() &- start) / 1e9 > 4 { late.withLock { $0 += 1 } }
                    }
                }
            }
            window.stop()
            XCTAssertFalse(window.isRunning)
            XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "every performAndWait returned")
            XCTAssertEqual(late.withLock { $0 }, 0)
            let afterClose: Int? = window.performAndWait(timeout: 2) { _, _ in 1 }
            XCTAssertNil(afterClose, "a closed window answers nil at once")
            XCTAssertEqual(other.performAndWait { _, _ -> Int in 2 }, 2)
        }
    }

    /// A window closed by a command of another, and one closing itself from its own command: both
    /// close at the thread's next turn, the rest go on.
    func testAStopFromTheCompositorThreadClosesThatWindowAlone() async throws {
        let a = try makeWindow("a")
        defer { a.stop() }
        let b = try makeWindow("b")
        let c = try makeWindow("c")
        a.perform { _, _ in b.stop() }
        c.perform { _, _ in c.stop() }
        XCTAssertEqual(a.performAndWait { _, _ -> Int in 1 }, 1)
        XCTAssertEqual(a.performAndWait { _, _ -> Int in 1 }, 1)
        b.stop()
        c.stop()
        XCTAssertFalse(b.isRunning)
        XCTAssertFalse(c.isRunning)
        XCTAssertTrue(a.isRunning)
    }

    /// Windows opened and let go (no `stop()`) many times over leave no window open on the thread,
    /// and the thread ends with the last.
    func testManyWindowsOpenedAndLetGoLeaveNothingOpen() async throws {
        let before = CompositorThreadCore.liveCount
        for round in 0..<30 {
            var windows: [CompositorThread] = []
            for index in 0..<(round % 4 + 1) { windows.append(try makeWindow("window \(round).\(index)")) }
            XCTAssertEqual(CompositorThreadCore.liveCount, before + windows.count)
            windows.removeAll()
            XCTAssertEqual(CompositorThreadCore.liveCount, before, "round \(round): every window let go closed")
        }
        if before == 0 {
            CompositorThreadLoop.waitForEnd(timeout: 10)
            XCTAssertFalse(CompositorThreadLoop.isRunning, "the thread ended with the last window")
        }
    }
}
