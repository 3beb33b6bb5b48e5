import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A row whose height is its preferred size, changed from the test.
private final class ResizableRowNode: Node, @unchecked Sendable {}

/// A row on screen measured again at another height: the rows below slide to their new places over
/// the batch updates' duration (and jump without the animation), and the list is not settled until
/// they are there.
@MainActor
final class ListRowHeightTests: XCTestCase {
    private func harness(animated: Bool) -> ListHarness {
        let source = TestListSource(count: 30, height: 20)
        source.makeNode = { identity, height in
            let node = ResizableRowNode()
            node.backgroundColor = Color(red: UInt8(identity * 40 % 256), green: 90, blue: 200)
            node.preferredSize = Size(width: 100, height: height)
            return node
        }
        var harness = ListHarness(width: 100, height: 200, source: source) { $0.animatesRowHeightChanges = animated }
        harness.settle()
        return harness
    }

    /// Grows row 1 by 40 points and follows row 3's place, frame by frame.
    private func growRowOne(_ harness: inout ListHarness) throws -> (before: Double, ys: [Double]) {
        let before = try XCTUnwrap(harness.windowFrame(ofRow: 3)).minY
        let grown = try XCTUnwrap(harness.list.nodeForRow(1))
        grown.preferredSize = Size(width: 100, height: 60)
        var ys: [Double] = []
        for _ in 0..<40 {
            harness.frame()
            harness.host.runtime.scheduler.waitUntilIdle()
            ys.append(try XCTUnwrap(harness.windowFrame(ofRow: 3)).minY)
        }
        return (before, ys)
    }

    func testTheRowsBelowARowThatGrowsSlideToTheirNewPlaces() async throws {
        var harness = harness(animated: true)
        defer { harness.host.setRootNode(nil) }
        let (before, ys) = try growRowOne(&harness)
        XCTAssertEqual(before, 60)
        XCTAssertEqual(ys.last, before + 40, "row 3 ends 40 points lower")
        XCTAssertEqual(ys, ys.sorted(), "it only moves down")
        XCTAssertTrue(ys.contains { $0 > before + 2 && $0 < before + 38 }, "and passes through the places between: \(ys)")
        XCTAssertTrue(harness.list.isSettled)
        // The compositor got the slide as data while it ran, and nothing once it ended.
        XCTAssertTrue(try XCTUnwrap(harness.list.nodeForRow(3)?.layerIfLoaded).animations.isEmpty)
    }

    func testWithoutTheAnimationTheyJump() async throws {
        var harness = harness(animated: false)
        defer { harness.host.setRootNode(nil) }
        let (before, ys) = try growRowOne(&harness)
        XCTAssertEqual(ys.last, before + 40)
        XCTAssertFalse(ys.contains { $0 > before && $0 < before + 40 }, "no place in between: \(ys)")
    }
}
