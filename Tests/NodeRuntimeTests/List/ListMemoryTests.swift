import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Memory depends on the viewport, not on the number of rows.
@MainActor
final class ListMemoryTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private struct Footprint {
        var bitmapBytes: Int
        var textureBytes: Int
        var liveRows: Int
        var nodesMade: Int
    }

    /// Scrolls a screenful a frame from the first row to the last, then settles, and reads what is alive.
    /// Rows are 2 points tall in a 100-point viewport: 50 rows a screen, 1,000 frames for 50,000 rows.
    private func scrollThrough(rows: Int) -> Footprint {
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
        var harness = ListHarness(width: 20, height: 100, source: TestListSource(count: rows, height: 2))
        harness.settle()
        let end = harness.list.contentHeight - 100
        var offset = 0.0
        while offset < end {
            offset = min(end, offset + 100)
            harness.list.setContentOffset(offset, animated: false)
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
            harness.backend.reset()  // the recording backend would keep every call
        }
        harness.settle()
        XCTAssertEqual(harness.host.lastFrame.checkerboardArea, 0, "\(rows) rows: the last screen is drawn")
        XCTAssertEqual(harness.list.visibleRows, (rows - 50)...(rows - 1))
        // The list's bitmaps are what tearing it down frees (other tests' leftovers may be freed at any
        // time, so a baseline taken before the scroll would count them).
        let alive = Bitmap.liveByteCount
        let textureBytes = harness.host.compositor.liveTextureBytes
        let liveRows = harness.list.statistics.liveRows, nodesMade = harness.list.statistics.nodesMade
        harness.host.setRootNode(nil)
        harness.settle()
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
        return Footprint(bitmapBytes: alive - Bitmap.liveByteCount, textureBytes: textureBytes,
                         liveRows: liveRows, nodesMade: nodesMade)
    }

    func testBitmapAndTextureBytesDoNotGrowWithTheRowCount() async {
        // Under the sanitizers (several times slower), the same comparison over fewer rows.
        let (smallCount, largeCount) = TestEnvironment.isSanitized ? (2_000, 10_000) : (10_000, 50_000)
        let small = scrollThrough(rows: smallCount)
        let large = scrollThrough(rows: largeCount)
        XCTAssertGreaterThan(large.nodesMade, largeCount * 9 / 10, "the large list really went through its rows")
        XCTAssertGreaterThan(small.bitmapBytes, 0)
        XCTAssertGreaterThan(small.textureBytes, 0)
        XCTAssertLessThanOrEqual(abs(Double(large.bitmapBytes - small.bitmapBytes)), 0.05 * Double(small.bitmapBytes),
                                 "bitmaps: \(small.bitmapBytes) after \(smallCount) rows, \(large.bitmapBytes) after \(largeCount)")
        XCTAssertLessThanOrEqual(abs(Double(large.textureBytes - small.textureBytes)), 0.05 * Double(small.textureBytes),
                                 "textures: \(small.textureBytes) after \(smallCount) rows, \(large.textureBytes) after \(largeCount)")
        XCTAssertEqual(small.liveRows, large.liveRows, "nodes near the viewport only")
        // Display reaches 1 screen ahead and ½ behind: 2½ screens of 50 rows of 20×2 pixels, plus the
        // visible screen's textures.
        XCTAssertLessThanOrEqual(large.textureBytes, 2 * 50 * 20 * 2 * 4)
    }
}
