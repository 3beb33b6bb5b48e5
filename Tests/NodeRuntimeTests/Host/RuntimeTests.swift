import XCTest
@testable import NodeRuntime

@MainActor
final class RuntimeTests: XCTestCase {
    /// `TESSERA_SERIALIZE_DISPLAY=1` starts a runtime whose scheduler runs every draw on one worker in
    /// order; anything else, or nothing, leaves it off.
    func testSerializeDisplayEnvironmentVariable() async {
        XCTAssertTrue(Runtime(workerCount: 2, environment: ["TESSERA_SERIALIZE_DISPLAY": "1"]).scheduler.serializesAllDrawing)
        XCTAssertFalse(Runtime(workerCount: 2, environment: ["TESSERA_SERIALIZE_DISPLAY": "0"]).scheduler.serializesAllDrawing)
        XCTAssertFalse(Runtime(workerCount: 2, environment: [:]).scheduler.serializesAllDrawing)
    }

    /// The placeholder wait budget takes any finite value from zero to a second; anything else is zero.
    func testPlaceholderWaitBudgetIsClamped() async {
        let runtime = Runtime(workerCount: 1, environment: [:])
        XCTAssertEqual(runtime.display.placeholderWaitBudget, 0.008)
        runtime.display.placeholderWaitBudget = .nan
        XCTAssertEqual(runtime.display.placeholderWaitBudget, 0)
        runtime.display.placeholderWaitBudget = -1
        XCTAssertEqual(runtime.display.placeholderWaitBudget, 0)
        runtime.display.placeholderWaitBudget = 60
        XCTAssertEqual(runtime.display.placeholderWaitBudget, 1)
    }

    /// Draws, decodes and list measures are counted apart, and the totals are their sums.
    func testStatisticsAreCountedPerJobKind() async {
        let scheduler = DisplayScheduler(workerCount: 1, name: "kinds")
        defer { scheduler.shutdown() }
        for _ in 0..<3 { scheduler.schedule(priority: .visible, kind: .draw) { _ in .completed } }
        scheduler.schedule(priority: .visible, kind: .decode) { _ in .cancelled }
        let gate = DispatchSemaphore(value: 0)
        scheduler.schedule(priority: .visible, kind: .measure) { _ in gate.wait(); return .completed }
        let dropped = scheduler.schedule(priority: .offscreen(distance: 1), kind: .measure) { _ in .completed }
        dropped.cancel()
        gate.signal()
        scheduler.waitUntilIdle()
        let stats = scheduler.statistics
        XCTAssertEqual(stats.byKind[.draw]?.scheduled, 3)
        XCTAssertEqual(stats.byKind[.draw]?.completed, 3)
        XCTAssertEqual(stats.byKind[.decode]?.cancelledWhileRunning, 1)
        XCTAssertEqual(stats.byKind[.measure]?.scheduled, 2)
        XCTAssertEqual(stats.byKind[.measure]?.completed, 1)
        XCTAssertEqual(stats.byKind[.measure]?.cancelledBeforeStart, 1)
        XCTAssertEqual(stats.scheduled, 6)
        XCTAssertEqual(stats.completed, 4)
        XCTAssertEqual(stats.started, 5)
        XCTAssertEqual(stats.busyMilliseconds, stats.workMillisecondsCompleted + stats.workMillisecondsCancelled)
        let kinds = stats.byKind.values
        XCTAssertEqual(kinds.map(\.scheduled).reduce(0, +), stats.scheduled)
        XCTAssertEqual(kinds.map(\.workMillisecondsCompleted).reduce(0, +), stats.workMillisecondsCompleted, accuracy: 1e-9)
    }
}
