import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// The per-frame byte budget on commits (and so on uploads): on by default, visible contents first,
/// each frame within the budget but for a lone item larger than it, and everything converges.
@MainActor
final class CommitBudgetTests: XCTestCase {
    private var time = 0.0
    private let mebibyte = 1 << 20

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.commitBudgetBytes = DisplayCoordinator.defaultCommitBudgetBytes
        }
    }

    /// A node `pixels` wide and 256 high at 1x: `pixels` KiB of contents, one colour.
    private func colorNode(_ index: Int, width pixels: Int) -> ColorNode {
        let node = ColorNode(Color(red: UInt8(20 * index % 256), green: 90, blue: 200))
        node.frame = Rect(x: 0, y: Double(index) * 4, width: Double(pixels), height: 256)
        return node
    }

    /// Runs frames until every node shows its colour (at most `limit`); returns, per frame, the nodes
    /// whose contents changed in it.
    private func framesUntilShown(_ host: NodeHost, _ nodes: [ColorNode], limit: Int = 12) -> [[Int]] {
        var shown = nodes.map { $0.layer.contents?.identity }
        var frames: [[Int]] = []
        while frames.count < limit {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            let now = nodes.map { $0.layer.contents?.identity }
            frames.append(nodes.indices.filter { now[$0] != nil && now[$0] != shown[$0] })
            shown = now
            if nodes.allSatisfy({ centreColor($0.layer) == $0.color }) { break }
            host.runtime.scheduler.waitUntilIdle()
        }
        return frames
    }

    private func bytes(_ nodes: [ColorNode], _ indices: [Int]) -> Int {
        indices.reduce(0) { $0 + ($1 < nodes.count ? nodes[$1].layer.contents?.byteCount ?? 0 : 0) }
    }

    func testTheBudgetIsOnByDefault() async {
        XCTAssertEqual(DisplayCoordinator.defaultCommitBudgetBytes, 4 << 20)
        let fresh = DisplayCoordinator(scheduler: DisplayScheduler(workerCount: 1), counters: RuntimeCounters())
        XCTAssertEqual(fresh.commitBudgetBytes, DisplayCoordinator.defaultCommitBudgetBytes)
        XCTAssertEqual(Runtime.shared.commitBudgetBytes, DisplayCoordinator.defaultCommitBudgetBytes)
        fresh.scheduler.shutdown()
    }

    /// Twelve 1.5 MiB contents finish at once under the default 4 MiB budget: they commit two a frame
    /// (a third would pass the budget), over six frames; the four that are visible go first although
    /// they finished last (they were the farthest ahead when drawn), then the nearest, and every node
    /// ends up showing its colour.
    func testABurstSpreadsOverFramesWithinTheBudgetVisibleFirst() async {
        let (host, _) = makeHost()
        let root = Node()
        let nodes = (0..<12).map { colorNode($0, width: 1536) }
        nodes.forEach { root.addSubnode($0) }
        host.setRootNode(root)
        // Drawn while ahead of the screen, nearest first: the farthest four finish last.
        for (index, node) in nodes.enumerated() {
            node.setInterfaceState([.measureLayout, .preload, .display])
            node.displayDistance = Double(index) * 100
        }
        let gates = occupyAllWorkers()
        time += 1.0 / 60
        host.runFrame(time: time, events: [])  // schedules the twelve draws behind the gates
        gates.forEach { $0.open() }
        host.runtime.scheduler.waitUntilIdle()
        XCTAssertEqual(host.runtime.pendingCommitCount, 12)
        // The farthest four come on screen before their contents commit.
        for node in nodes[8...] { node.setInterfaceState(.onScreen) }

        let frames = framesUntilShown(host, nodes)
        XCTAssertEqual(frames.count, 6, "18 MiB, two 1.5 MiB contents a frame: \(frames)")
        for (index, committed) in frames.enumerated() {
            XCTAssertLessThanOrEqual(bytes(nodes, committed), 4 * mebibyte, "frame \(index): \(committed)")
            XCTAssertFalse(committed.isEmpty, "frame \(index) commits something")
        }
        XCTAssertEqual(Set(frames.prefix(2).joined()), [8, 9, 10, 11], "the visible contents commit first: \(frames)")
        XCTAssertEqual(frames.dropFirst(2).joined().map { $0 }, Array(0..<8), "then the nearest first")
        XCTAssertTrue(nodes.allSatisfy { centreColor($0.layer) == $0.color }, "all converge")
    }

    /// Results that will be dropped at their commit (their node left the display range meanwhile)
    /// cost nothing: the budget goes to contents that will show. Twelve 1.5 MiB draws finish; the six
    /// nearest leave the display range before they commit; the six that stay commit two a frame,
    /// in three frames, not behind the six dropped ones.
    func testResultsThatWillBeDroppedCostNothing() async {
        let (host, _) = makeHost()
        let root = Node()
        let nodes = (0..<12).map { colorNode($0, width: 1536) }
        nodes.forEach { root.addSubnode($0) }
        host.setRootNode(root)
        for (index, node) in nodes.enumerated() {
            node.setInterfaceState([.measureLayout, .preload, .display])
            node.displayDistance = Double(index) * 100
        }
        let gates = occupyAllWorkers()
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
        gates.forEach { $0.open() }
        host.runtime.scheduler.waitUntilIdle()
        XCTAssertEqual(host.runtime.pendingCommitCount, 12)
        // The nearest six leave the display range: their finished draws can no longer be shown.
        for node in nodes[..<6] { node.setInterfaceState([.measureLayout, .preload]) }
        let staying = Array(nodes[6...])
        var frames = 0
        while !staying.allSatisfy({ centreColor($0.layer) == $0.color }) && frames < 12 {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            frames += 1
        }
        XCTAssertEqual(frames, 3, "six 1.5 MiB contents, two a frame, none waiting behind dropped results")
        XCTAssertTrue(nodes[..<6].allSatisfy { $0.layer.contents == nil })
    }

    /// A content larger than the budget is never starved: it commits alone in its frame, and the
    /// contents around it keep to the budget. (Draws run on one worker in the order requested, so the
    /// results arrive in a known order: a small one, the large one, three more small ones.)
    func testAContentLargerThanTheBudgetCommitsAloneInItsFrame() async {
        Runtime.shared.scheduler.serializesAllDrawing = true
        defer { Runtime.shared.scheduler.serializesAllDrawing = false }
        let (host, _) = makeHost()
        let root = Node()
        // 1 MiB, 5 MiB (over the 4 MiB budget), then three of 1.5 MiB, all visible.
        let nodes = [colorNode(0, width: 1024), colorNode(1, width: 5 * 1024)]
            + (2..<5).map { colorNode($0, width: 1536) }
        nodes.forEach { root.addSubnode($0) }
        host.setRootNode(root)
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
        host.runtime.scheduler.waitUntilIdle()
        let frames = framesUntilShown(host, nodes)
        XCTAssertEqual(frames, [[0], [1], [2, 3], [4]],
                       "the large content waits for a frame of its own rather than join a started one, and goes alone")
        for (index, committed) in frames.enumerated() where committed != [1] {
            XCTAssertLessThanOrEqual(bytes(nodes, committed), 4 * mebibyte, "frame \(index): \(committed)")
        }
        XCTAssertTrue(nodes.allSatisfy { centreColor($0.layer) == $0.color }, "all converge: \(frames)")
    }

    /// Without a budget a burst commits in one frame, as before the budget existed.
    func testNoBudgetCommitsTheBurstInOneFrame() async {
        let (host, _) = makeHost()
        host.runtime.commitBudgetBytes = nil
        let root = Node()
        let nodes = (0..<6).map { colorNode($0, width: 1024) }
        nodes.forEach { root.addSubnode($0) }
        host.setRootNode(root)
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
        host.runtime.scheduler.waitUntilIdle()
        let frames = framesUntilShown(host, nodes)
        XCTAssertEqual(frames, [Array(0..<6)])
    }
}
