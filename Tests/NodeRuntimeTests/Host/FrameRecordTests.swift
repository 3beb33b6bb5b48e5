import Compositor
import XCTest
@testable import NodeRuntime

/// The frame record's phase list is the one the overlay stacks and the benchmarks total.
@MainActor
final class FrameRecordTests: XCTestCase {
    private func record() -> FrameRecord {
        var record = FrameRecord()
        record.eventsMilliseconds = 1
        record.commitsMilliseconds = 2
        record.layoutMilliseconds = 3
        record.rangesMilliseconds = 4
        record.displayMilliseconds = 5
        record.compositor.uploadMilliseconds = 6
        record.compositor.drawMilliseconds = 13  // the uploads happen inside the draw
        record.compositor.presentMilliseconds = 8
        return record
    }

    func testPhasesComeInTheOrderTheyRunWithUploadsOutOfTheDraw() async {
        XCTAssertEqual(FramePhase.allCases.map(\.rawValue),
                       ["events", "commits", "layout", "ranges", "display", "upload", "draw", "present"])
        XCTAssertEqual(record().phaseMilliseconds, [1, 2, 3, 4, 5, 6, 7, 8])
    }

    func testTotalsAreSumsOfThePhases() async {
        let r = record()
        XCTAssertEqual(r.totalMilliseconds, 36)
        XCTAssertEqual(r.runtimeMilliseconds, 15)
        XCTAssertEqual(FramePhase.runtimePhases, [.events, .commits, .layout, .ranges, .display])
    }

    func testADrawShorterThanItsUploadsCountsAsNoDrawTime() async {
        var r = record()
        r.compositor.drawMilliseconds = 5
        XCTAssertEqual(r.milliseconds(in: .draw), 0)
    }
}
