import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// The wall and CPU time `NodeHost.runFrame` records for its frame, and the interference between them.
@MainActor
final class NodeHostFrameTimingTests: XCTestCase {
    /// Work the frame does on its own thread shows as CPU time, inside the wall time.
    func testAFrameThatComputesRecordsItsCPUTime() async {
        let (host, _) = makeHost()
        host.frameObservers = [{ _ in
            // Two milliseconds of this thread's CPU time, however long the wall clock takes to give it.
            let start = ThreadCPUClock.nanoseconds()
            var spin = 0
            while ThreadCPUClock.nanoseconds() &- start < 2_000_000 { spin &+= 1 }
            XCTAssertGreaterThan(spin, 0)
        }]
        let record = host.runFrame(time: 1.0 / 60, events: [])
        XCTAssertGreaterThanOrEqual(record.cpuMilliseconds, 2)
        XCTAssertGreaterThanOrEqual(record.wallMilliseconds, record.cpuMilliseconds)
        XCTAssertEqual(record.interferenceMilliseconds, record.wallMilliseconds - record.cpuMilliseconds, accuracy: 1e-9)
        XCTAssertGreaterThanOrEqual(record.rangesMilliseconds, 2, "the observer runs in the ranges phase")
        XCTAssertLessThanOrEqual(record.totalMilliseconds, record.wallMilliseconds + 1e-6,
                                 "the phases lie inside the frame's wall time")
        XCTAssertEqual(host.lastFrame, record)
    }

    /// Time the UI thread does not run shows as interference: here the frame blocks for 5 ms. The
    /// block is what is measured, not a wait for another thread, and the kernel blocks at least that long.
    func testAFrameThatDoesNotRunRecordsInterference() async {
        let (host, _) = makeHost()
        host.frameObservers = [{ _ in
            var interval = timespec(tv_sec: 0, tv_nsec: 5_000_000), remaining = timespec()
            while nanosleep(&interval, &remaining) != 0 { interval = remaining }
        }]
        let record = host.runFrame(time: 1.0 / 60, events: [])
        XCTAssertGreaterThanOrEqual(record.wallMilliseconds, 5)
        XCTAssertGreaterThanOrEqual(record.interferenceMilliseconds, 5)
        XCTAssertLessThanOrEqual(record.cpuMilliseconds, record.wallMilliseconds - 5)
    }

    /// Interference is never negative, whatever the two figures say.
    func testInterferenceIsWallMinusCPUAndNeverNegative() async {
        var record = FrameRecord()
        record.wallMilliseconds = 3
        record.cpuMilliseconds = 1.25
        XCTAssertEqual(record.interferenceMilliseconds, 1.75)
        record.cpuMilliseconds = 3.001
        XCTAssertEqual(record.interferenceMilliseconds, 0)
    }
}
