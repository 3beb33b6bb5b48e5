import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Background display: sentinels, cancellation, transactions and the synchronous paths.
@MainActor
final class NodeDisplayTests: XCTestCase {
    private var time = 0.0

    private func node(_ color: Color, gate: Gate? = nil, drawn: DispatchSemaphore? = nil,
                      frame: Rect = Rect(x: 0, y: 0, width: 20, height: 20)) -> ColorNode {
        let node = ColorNode(color, gate: gate, drawn: drawn)
        node.frame = frame
        return node
    }

    private func frame(_ host: NodeHost) {
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.scheduler.serializesAllDrawing = false
            Runtime.shared.forcesSynchronousDisplay = false
        }
    }

    func testContentsArriveThroughTheMainQueue() async {
        let (host, _) = makeHost()
        let root = Node()
        let child = node(Color(rgb: 0x20C040))
        root.addSubnode(child)
        host.setRootNode(root)
        XCTAssertNil(child.layer.contents, "nothing is drawn while setting up")
        settle(host, time: &time)
        XCTAssertEqual(centreColor(child.layer), Color(rgb: 0x20C040))
        XCTAssertEqual(child.layer.contents?.width, 20)
    }

    func testARequestWhileDrawingWaitsAndTheLatestStateFollows() async throws {
        let (host, _) = makeHost()
        let gate = Gate()
        let child = node(.black, gate: gate)
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        frame(host)                 // the draw starts and blocks at the gate
        gate.waitUntilEntered()
        child.gate = nil
        child.color = .white        // a new request: it waits, the draw in flight is not cancelled
        let before = Runtime.shared.scheduler.statistics
        frame(host)
        XCTAssertEqual(Runtime.shared.scheduler.queueDepth, 0, "no second draw while one is in flight")
        gate.open()
        Runtime.shared.scheduler.waitUntilIdle()
        let after = Runtime.shared.scheduler.statistics
        XCTAssertEqual(after.cancelledWhileRunning - before.cancelledWhileRunning, 0)
        frame(host)                 // commits black (progress), starts the white draw
        XCTAssertEqual(centreColor(child.layer), .black)
        Runtime.shared.scheduler.waitUntilIdle()
        frame(host)
        XCTAssertEqual(centreColor(child.layer), .white, "the latest state follows one frame later")
        let generations = child.displayGenerations
        XCTAssertEqual(generations.committed, generations.requested)
    }

    func testStaleResultIsDroppedAtCommit() async {
        let (host, _) = makeHost()
        let drawn = DispatchSemaphore(value: 0)
        let child = node(.black, drawn: drawn)
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        frame(host)
        drawn.wait()
        Runtime.shared.scheduler.waitUntilIdle()  // finished and waiting in the main queue
        child.displaySentinel.bump()              // out of date before the commit runs
        let dropped = Runtime.shared.counters.snapshot.staleResultsDropped
        frame(host)
        XCTAssertNil(child.layer.contents)
        XCTAssertEqual(Runtime.shared.counters.snapshot.staleResultsDropped - dropped, 1)
    }

    func testThousandScheduledThenCancelledLeaveNoCommitsAndNoBitmaps() async {
        let (host, _) = makeHost()
        let scheduler = Runtime.shared.scheduler
        // Occupy every worker so the draws wait in the queue.
        let gates = occupyAllWorkers()
        let bitmapBytesBefore = Bitmap.liveByteCount
        let root = Node()
        host.setRootNode(root)
        let counter = DrawCounter()
        var children: [ColorNode] = []
        for i in 0..<1000 {
            let child = ColorNode(.white, counter: counter)
            child.frame = Rect(x: Double(i % 20) * 20, y: Double(i / 20) * 6, width: 20, height: 6)
            root.addSubnode(child)
            children.append(child)
        }
        frame(host)
        XCTAssertEqual(scheduler.queueDepth, 1000)
        let committed = Runtime.shared.counters.snapshot.contentsCommitted
        for child in children { child.removeFromSupernode() }
        gates.forEach { $0.open() }
        scheduler.waitUntilIdle()
        frame(host)
        frame(host)
        XCTAssertEqual(counter.count, 0, "no cancelled draw ran")
        XCTAssertEqual(Runtime.shared.counters.snapshot.contentsCommitted, committed)
        XCTAssertTrue(children.allSatisfy { $0.layer.contents == nil })
        XCTAssertEqual(Bitmap.liveByteCount, bitmapBytesBefore, "no bitmap outlives the cancelled draws")
    }

    func testCellOfFiveNodesCommitsInOneFrame() async {
        let (host, _) = makeHost()
        let cell = Node()
        cell.isTransactionContainer = true
        cell.frame = Rect(x: 0, y: 0, width: 200, height: 40)
        let gates = (0..<5).map { _ in Gate() }
        let drawn = (0..<5).map { _ in DispatchSemaphore(value: 0) }
        let colors = (0..<5).map { Color(red: UInt8(40 * $0), green: 100, blue: 200) }
        let parts = (0..<5).map { i -> ColorNode in
            let part = ColorNode(colors[i], gate: gates[i], drawn: drawn[i])
            part.frame = Rect(x: Double(i) * 40, y: 0, width: 40, height: 40)
            cell.addSubnode(part)
            return part
        }
        let root = Node()
        root.addSubnode(cell)
        host.setRootNode(root)
        frame(host)
        // Finish the draws one at a time, in an uneven order, with frames in between. Draws start in
        // request order as workers free up, so only an order that opens a running draw can proceed.
        let order = Runtime.shared.scheduler.workerCount >= 2 ? [1, 0, 3, 4, 2] : [0, 1, 2, 3, 4]
        for i in order.dropLast() {
            gates[i].open()
            drawn[i].wait()
            frame(host)
            XCTAssertTrue(parts.allSatisfy { $0.layer.contents == nil }, "a half-drawn cell is never shown")
        }
        gates[order.last!].open()
        Runtime.shared.scheduler.waitUntilIdle()
        let transactions = Runtime.shared.counters.snapshot.transactionsCommitted
        frame(host)
        XCTAssertEqual(parts.map { centreColor($0.layer) }, colors, "all five appear in the same frame")
        XCTAssertEqual(Runtime.shared.counters.snapshot.transactionsCommitted - transactions, 1)
    }

    func testSynchronousDisplayDrawsOnTheCallingThread() async {
        let (host, _) = makeHost()
        let child = node(Color(rgb: 0x102030))
        child.displaysAsynchronously = false
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        frame(host)
        XCTAssertEqual(centreColor(child.layer), Color(rgb: 0x102030), "drawn within the frame that started it")
    }

    func testSuspendedDisplayDoesNotDrawAndResumes() async {
        let (host, _) = makeHost()
        let child = node(.white)
        child.isDisplaySuspended = true
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertNil(child.layer.contents)
        child.isDisplaySuspended = false
        settle(host, time: &time)
        XCTAssertEqual(centreColor(child.layer), .white)
    }

    func testSuspendingCancelsADrawInFlight() async {
        let (host, _) = makeHost()
        let gate = Gate()
        let child = node(.white, gate: gate)
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        frame(host)
        gate.waitUntilEntered()
        child.isDisplaySuspended = true
        gate.open()
        settle(host, time: &time)
        XCTAssertNil(child.layer.contents)
    }

    func testZeroSizedNodeDrawsOnceItHasASize() async {
        let (host, _) = makeHost()
        let counter = DrawCounter()
        let child = ColorNode(.white, counter: counter)
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(counter.count, 0)
        XCTAssertNil(child.layer.contents)
        child.frame = Rect(x: 0, y: 0, width: 8, height: 8)
        settle(host, time: &time)
        XCTAssertEqual(counter.count, 1)
        XCTAssertEqual(centreColor(child.layer), .white)
    }

    func testDisplayNowAndWaitDrawsTheSubtreeSynchronously() async {
        let root = node(Color(rgb: 0x111111), frame: Rect(x: 0, y: 0, width: 40, height: 40))
        let child = node(Color(rgb: 0x222222))
        root.addSubnode(child)
        root.displayNowAndWait()
        XCTAssertEqual(centreColor(root.layer), Color(rgb: 0x111111))
        XCTAssertEqual(centreColor(child.layer), Color(rgb: 0x222222))
    }

    func testLeavingTheDisplayStateClearsContentsAndCancels() async {
        let (host, _) = makeHost()
        let child = node(.white)
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertNotNil(child.layer.contents)
        let sentinel = child.displaySentinel.value
        child.setInterfaceState([.measureLayout, .preload])
        XCTAssertNil(child.layer.contents)
        XCTAssertGreaterThan(child.displaySentinel.value, sentinel)
    }

    func testSerializedDrawingRunsInScheduleOrder() async {
        let (host, _) = makeHost()
        Runtime.shared.scheduler.serializesAllDrawing = true
        let order = EventLog()
        let root = Node()
        var labels: [String] = []
        for i in 0..<20 {
            let child = LabelNode("n\(i)", log: order)
            child.frame = Rect(x: 0, y: Double(i), width: 4, height: 1)
            child.displayDistance = Double(20 - i)  // priorities would reverse the order
            root.addSubnode(child)
            labels.append("n\(i)")
        }
        host.setRootNode(root)
        frame(host)
        Runtime.shared.scheduler.waitUntilIdle()
        XCTAssertEqual(order.names, labels, "one worker, in the order the draws were requested")
        XCTAssertTrue(order.all.allSatisfy { !$0.1 }, "drawn on the worker")
    }

    func testPlaceholderShowsUntilContentsArriveThenFadesOut() async throws {
        let (host, _) = makeHost()
        let gate = Gate()
        let child = node(.white, gate: gate)
        child.placeholderColor = Color(rgb: 0xDDDDDD)
        child.placeholderFadeDuration = 0.2
        let root = Node()
        root.addSubnode(child)
        host.setRootNode(root)
        frame(host)
        XCTAssertEqual(child.layer.backgroundColor, Color(rgb: 0xDDDDDD), "placeholder while pending")
        XCTAssertNil(child.layer.contents)
        gate.open()
        Runtime.shared.scheduler.waitUntilIdle()
        frame(host)  // commits; the placeholder becomes an overlay that fades
        XCTAssertEqual(centreColor(child.layer), .white)
        XCTAssertNil(child.layer.backgroundColor)
        let overlay = try XCTUnwrap(child.layer.sublayers.first { $0.name == "placeholder-fade" })
        XCTAssertEqual(overlay.backgroundColor, Color(rgb: 0xDDDDDD))
        XCTAssertGreaterThan(overlay.opacity, 0.5, "the fade has just begun")
        time += 0.1
        host.runFrame(time: time, events: [])
        XCTAssertGreaterThan(overlay.opacity, 0.05)
        XCTAssertLessThan(overlay.opacity, 0.95)
        time += 0.15
        host.runFrame(time: time, events: [])
        XCTAssertNil(overlay.superlayer, "removed when the fade ends")
    }

    func testNeverShowPlaceholdersCommitsInTheFrameThatStartsTheDraws() async {
        let (host, _) = makeHost()
        let cell = Node()
        cell.isTransactionContainer = true
        cell.neverShowPlaceholders = true
        cell.frame = Rect(x: 0, y: 0, width: 100, height: 20)
        let parts = (0..<3).map { i -> ColorNode in
            let part = node(Color(red: UInt8(60 * i), green: 200, blue: 10), frame: Rect(x: Double(i) * 30, y: 0, width: 30, height: 20))
            cell.addSubnode(part)
            return part
        }
        let root = Node()
        root.addSubnode(cell)
        host.setRootNode(root)
        let queued = Runtime.shared.mainQueue.count
        frame(host)
        XCTAssertTrue(parts.allSatisfy { $0.layer.contents != nil }, "drawn and committed before the frame ended")
        XCTAssertEqual(Runtime.shared.mainQueue.count, queued, "no round trip through the main queue")
    }
}
