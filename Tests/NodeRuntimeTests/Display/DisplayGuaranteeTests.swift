import Compositor
import Foundation
import TesseraRandom
import TestSupport
import XCTest
@testable import NodeRuntime

/// A node whose parameter capture lets a test run something in the middle of it, to stand for another
/// thread's write landing while the UI thread captures.
private final class CaptureWindowNode: Node, NodeDrawing, @unchecked Sendable {
    private let value = Locked(Color.black)
    /// Runs once, inside the next `drawParameters()`, after the value has been read.
    let duringCapture = Locked(CaptureHook())
    struct CaptureHook { var run: (@Sendable () -> Void)? }

    var color: Color {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue }; setNeedsDisplay() }
    }

    func drawParameters() -> Color {
        let captured = value.withLock { $0 }
        let hook = duringCapture.withLock { hook -> (@Sendable () -> Void)? in defer { hook.run = nil }; return hook.run }
        hook?()
        return captured
    }

    static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: color)
    }
}

/// The pipeline's guarantees, one defect each: every test here failed on the pipeline that cancelled
/// on every request and captured parameters before claiming the request.
@MainActor
final class DisplayGuaranteeTests: XCTestCase {
    private var time = 0.0

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.display.placeholderWaitBudget = DisplayCoordinator.defaultPlaceholderWaitBudget
        }
    }

    private func frame(_ host: NodeHost) {
        time += 1.0 / 60
        host.runFrame(time: time, events: [])
    }

    /// A host whose root holds `node`, shown (the root is on screen).
    private func host(showing node: Node) -> NodeHost {
        let (host, _) = makeHost()
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        return host
    }

    private func colorNode(_ color: Color, gate: Gate? = nil) -> ColorNode {
        let node = ColorNode(color, gate: gate)
        node.frame = Rect(x: 0, y: 0, width: 16, height: 16)
        return node
    }

    /// Never stale: a write (with its request) from another thread that lands while the UI thread
    /// captures parameters is drawn next; it is not erased by the capture.
    func testAWriteDuringCaptureIsDrawnNotErased() async {
        let node = CaptureWindowNode()
        node.frame = Rect(x: 0, y: 0, width: 16, height: 16)
        let host = host(showing: node)
        settle(host, time: &time)
        XCTAssertEqual(centreColor(node.layer), .black)

        node.color = .white
        let box = UncheckedSendable(node)
        node.duringCapture.withLock {
            $0.run = { onBackgroundThread { box.value.color = Color(rgb: 0x3060C0) } }
        }
        settle(host, time: &time)
        XCTAssertEqual(centreColor(node.layer), Color(rgb: 0x3060C0), "the write made during the capture is shown")
        XCTAssertTrue(node.showsCurrentContents)
        let generations = node.displayGenerations
        XCTAssertEqual(generations.committed, generations.requested)
    }

    /// Nothing lost: suspending a node while its draw runs, then resuming, draws its latest state.
    /// A host showing one node whose first draw is running, held at the returned gate.
    private func nodeHeldInItsFirstDraw() -> (NodeHost, ColorNode, Gate) {
        let gate = Gate()
        let node = colorNode(.black, gate: gate)
        let host = host(showing: node)
        frame(host)
        gate.waitUntilEntered()
        return (host, node, gate)
    }

    func testSuspendDuringADrawThenResumeDrawsAgain() async {
        let (host, node, gate) = nodeHeldInItsFirstDraw()
        node.isDisplaySuspended = true  // cancels the draw; no new request follows
        node.gate = nil
        gate.open()
        settle(host, time: &time)
        XCTAssertNil(node.layer.contents, "nothing is drawn while suspended")
        node.isDisplaySuspended = false
        settle(host, time: &time)
        XCTAssertEqual(centreColor(node.layer), .black, "the cancelled draw's request was kept")
        XCTAssertTrue(node.showsCurrentContents, "no draw is left counted as in flight")
    }

    /// Nothing lost: leaving the display range mid-draw and coming back draws the latest state.
    func testLeavingAndReenteringDisplayDuringADrawDrawsAgain() async {
        let (host, node, gate) = nodeHeldInItsFirstDraw()
        node.setInterfaceState([.measureLayout, .preload])
        node.gate = nil
        node.color = .white
        gate.open()
        settle(host, time: &time)
        XCTAssertNil(node.layer.contents)
        node.setInterfaceState(.onScreen)
        settle(host, time: &time)
        XCTAssertEqual(centreColor(node.layer), .white)
        XCTAssertTrue(node.showsCurrentContents)
    }

    /// Nothing lost: a node moved to another parent from another thread while its draw runs keeps its
    /// interface state, so nothing re-enters display; the cancelled draw's request must still be drawn.
    /// (Found by the stress model, seed 0x49660D0AAD0EFDA2.)
    func testMovingANodeFromAnotherThreadDuringItsDrawDrawsAgain() async {
        let (host, _) = makeHost()
        let gate = Gate()
        let node = colorNode(.black, gate: gate)
        let first = Node(), second = Node()
        let root = Node()
        root.addSubnode(first)
        root.addSubnode(second)
        first.addSubnode(node)
        host.setRootNode(root)
        frame(host)
        gate.waitUntilEntered()
        let box = UncheckedSendable((node, second))
        onBackgroundThread { box.value.1.addSubnode(box.value.0) }  // removal cancels the draw
        node.gate = nil
        gate.open()
        settle(host, time: &time)
        XCTAssertTrue(node.layer.superlayer === second.layer)
        XCTAssertEqual(centreColor(node.layer), .black, "the cancelled draw's request was drawn")
        XCTAssertTrue(node.showsCurrentContents)
    }

    /// Nothing lost: a request made from another thread just as its node leaves a rasterized subtree
    /// for a plain parent. The request looks for the rasterizing ancestor and finds the one the node
    /// is leaving; the move, landing before the request is recorded, finds nothing to register. The
    /// node must still draw the request itself, in its new place.
    func testARequestRacingAMoveOutOfARasterizedSubtreeIsDrawn() async {
        let node = colorNode(.black)
        let plain = Node(), rasterized = Node()
        plain.frame = Rect(x: 0, y: 0, width: 32, height: 32)
        rasterized.frame = Rect(x: 0, y: 40, width: 32, height: 32)
        rasterized.shouldRasterizeDescendants = true
        let root = Node()
        root.addSubnode(plain)
        root.addSubnode(rasterized)
        plain.addSubnode(node)
        let (host, _) = makeHost()
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(centreColor(node.layer), .black)
        rasterized.addSubnode(node)  // drawn into the container's bitmap now, with no request of its own
        settle(host, time: &time)
        XCTAssertEqual(node.displayGenerations.committed, node.displayGenerations.requested)

        // The request, from another thread, stops once it has found the rasterizing container; the
        // UI thread moves the node out meanwhile (its layer joins the plain parent at once).
        let found = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let watched = ObjectIdentifier(node)
        let fired = Locked(false)
        Node.rasterizingAncestorFoundForTesting = { asking in
            guard ObjectIdentifier(asking) == watched, !UIThread.isCurrent,
                  !fired.withLock({ was in defer { was = true }; return was }) else { return }
            found.signal()
            proceed.wait()
        }
        defer { Node.rasterizingAncestorFoundForTesting = nil }
        let box = UncheckedSendable(node)
        let requested = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.value.color = .white
            requested.signal()
        }
        found.wait()
        plain.addSubnode(node)
        proceed.signal()
        requested.wait()

        settle(host, time: &time)
        XCTAssertTrue(node.layer.superlayer === plain.layer)
        XCTAssertEqual(centreColor(node.layer), .white, "the request is drawn by the node in its new place")
        XCTAssertTrue(node.showsCurrentContents)
        XCTAssertEqual(node.displayGenerations.committed, node.displayGenerations.requested)
    }

    /// No starvation: a node asked to redraw every frame commits every frame while its draws fit in a
    /// frame (here the workers finish between frames), and shows its latest state once the changes stop.
    func testANodeChangingEveryFrameCommitsEveryFrame() async {
        let node = colorNode(.black)
        let host = host(showing: node)
        settle(host, time: &time)
        let commits = Locked(0)
        let watched = ObjectIdentifier(node)
        Runtime.shared.display.commitObserver = { committed, _ in
            if ObjectIdentifier(committed) == watched { commits.withLock { $0 += 1 } }
        }
        defer { Runtime.shared.display.commitObserver = nil }
        for step in 0..<60 {
            node.color = Color(red: UInt8(step * 4), green: 80, blue: 160)
            frame(host)
            Runtime.shared.scheduler.waitUntilIdle()
        }
        XCTAssertGreaterThanOrEqual(commits.withLock { $0 }, 59, "one commit a frame")
        frame(host)
        Runtime.shared.scheduler.waitUntilIdle()
        frame(host)
        XCTAssertEqual(centreColor(node.layer), Color(red: 236, green: 80, blue: 160), "the last state, two frames later")
    }

    /// No starvation with slow draws: while every draw is still running when the next request comes, a
    /// node still commits each draw as it finishes, instead of cancelling it for the newer request.
    func testANodeChangingWhileItsDrawsRunStillCommits() async {
        let node = colorNode(.black)
        let host = host(showing: node)
        settle(host, time: &time)
        let before = Runtime.shared.counters.snapshot.contentsCommitted
        for step in 0..<20 {
            let gate = Gate()
            node.gate = gate
            node.color = Color(red: UInt8(step * 10), green: 0, blue: 0)
            frame(host)            // commits the previous draw; starts this one, which blocks at the gate
            node.color = Color(red: UInt8(step * 10), green: 1, blue: 0)  // arrives while it draws
            gate.open()
            Runtime.shared.scheduler.waitUntilIdle()
        }
        frame(host)
        XCTAssertGreaterThanOrEqual(Runtime.shared.counters.snapshot.contentsCommitted - before, 19,
                                    "every draw overtaken by a request still commits")
    }

    /// Bounded waits: never-show-placeholders waits at most the frame's budget for a draw that does not
    /// come, then shows what it has; the draw commits at a later frame.
    func testNeverShowPlaceholdersWaitsAtMostTheBudget() async {
        let (host, _) = makeHost()
        Runtime.shared.display.placeholderWaitBudget = 0.004
        let gate = Gate()
        let node = colorNode(.white, gate: gate)
        node.neverShowPlaceholders = true
        let root = Node()
        root.addSubnode(node)
        let timedOut = Runtime.shared.counters.snapshot.placeholderWaitsTimedOut
        host.setRootNode(root)
        frame(host)                                  // returns although the draw is held at the gate
        XCTAssertNil(node.layer.contents)
        XCTAssertEqual(Runtime.shared.counters.snapshot.placeholderWaitsTimedOut - timedOut, 1)
        gate.open()
        Runtime.shared.scheduler.waitUntilIdle()
        frame(host)
        XCTAssertEqual(centreColor(node.layer), .white, "committed at the next frame")
    }

    /// The frame holds worker wake-ups so that workers do not take its core mid-frame; a placeholder
    /// wait lets them go for the wait only, and holds them again for the rest of the frame.
    func testAPlaceholderWaitHoldsWakeupsAgainAfterIt() async {
        let (host, _) = makeHost()
        Runtime.shared.display.placeholderWaitBudget = 0.002
        let gate = Gate()
        let node = colorNode(.white, gate: gate)
        node.neverShowPlaceholders = true
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        Runtime.shared.scheduler.holdWakeups()  // as the frame loop does for its whole frame
        Runtime.shared.startPendingDisplays()    // the wait for `node` runs out at the gate
        XCTAssertTrue(Runtime.shared.scheduler.areWakeupsHeld, "held again after the wait")
        Runtime.shared.scheduler.releaseWakeups()
        gate.open()
        Runtime.shared.scheduler.waitUntilIdle()
    }

    /// A draw a frame waits for is scheduled ahead of everything; a new display distance (a list
    /// scrolling) orders offscreen work and must not move it back.
    func testAnUrgentDrawKeepsItsPlaceWhenItsDistanceChanges() async {
        let (host, _) = makeHost()
        Runtime.shared.display.placeholderWaitBudget = 0
        let gates = occupyAllWorkers()
        let node = colorNode(.white)
        node.neverShowPlaceholders = true
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        frame(host)  // the urgent draw waits in the queue behind the gates
        let job = node.state.withLock { $0.display.inFlight?.job }
        XCTAssertEqual(job?.priority, .urgent)
        node.displayDistance = 500
        XCTAssertEqual(job?.priority, .urgent, "still ahead of everything")
        gates.forEach { $0.open() }
        Runtime.shared.scheduler.waitUntilIdle()
    }

    /// Bounded waits: a never-show-placeholders node a screen ahead (in display, not visible) is not
    /// waited for at all.
    func testNeverShowPlaceholdersDoesNotWaitForDrawsAhead() async {
        let (host, _) = makeHost()
        let gate = Gate()
        let node = colorNode(.white, gate: gate)
        node.neverShowPlaceholders = true
        let root = Node()
        host.setRootNode(root)
        root.addSubnode(node)
        node.setInterfaceState([.measureLayout, .preload, .display])
        let before = Runtime.shared.counters.snapshot
        frame(host)
        let after = Runtime.shared.counters.snapshot
        XCTAssertEqual(after.placeholderWaitsTimedOut, before.placeholderWaitsTimedOut)
        XCTAssertEqual(after.placeholderWaitsMet, before.placeholderWaitsMet)
        gate.open()
    }

    /// The waited-for draws go to the front of the queue: ahead of offscreen work queued earlier.
    func testNeverShowPlaceholderDrawsJumpTheQueue() async {
        let (host, _) = makeHost()
        Runtime.shared.display.placeholderWaitBudget = 1  // a bound, not a timing: this test waits
        let root = Node()
        host.setRootNode(root)
        let gates = occupyAllWorkers()
        let log = EventLog()
        for i in 0..<6 {
            let node = LabelNode("ahead\(i)", log: log)
            node.frame = Rect(x: 0, y: Double(i), width: 4, height: 1)
            root.addSubnode(node)
            node.setInterfaceState([.measureLayout, .preload, .display])
        }
        frame(host)                                   // six offscreen draws wait in the queue
        XCTAssertEqual(Runtime.shared.scheduler.queueDepth, 6)
        let urgent = LabelNode("urgent", log: log)
        urgent.frame = Rect(x: 10, y: 10, width: 4, height: 4)
        urgent.neverShowPlaceholders = true
        root.addSubnode(urgent)
        // The next frame waits for `urgent`. Once it is queued, another thread frees one worker: that
        // worker alone picks jobs, so the order it draws in is the order it picked in.
        let release = UncheckedSendable(gates)
        Thread.detachNewThread {
            while Runtime.shared.scheduler.queueDepth < 7 { sched_yield() }
            release.value[0].open()
        }
        frame(host)
        XCTAssertNotNil(urgent.layer.contents, "waited for and committed in its frame")
        XCTAssertEqual(log.names.first, "urgent", "picked first, before the draws queued earlier: \(log.names)")
        for gate in gates { gate.open() }
        Runtime.shared.scheduler.waitUntilIdle()
        XCTAssertEqual(Set(log.names).count, 7, "the draws queued earlier still run: \(log.names)")
    }

    /// The image node: a decode that finishes around a source change never stores the old image.
    func testImageSourceChangesEndWithTheLastSourcesImage() async {
        let (host, _) = makeHost()
        let root = Node()
        host.setRootNode(root)
        let red = try! Bitmap(width: 4, height: 4, premultipliedARGB: Array(repeating: 0xFFFF_0000, count: 16))
        let blue = try! Bitmap(width: 4, height: 4, premultipliedARGB: Array(repeating: 0xFF00_00FF, count: 16))
        let image = ImageNode()
        image.frame = Rect(x: 0, y: 0, width: 4, height: 4)
        image.imageCache = ImageCache(budgetBytes: 0)
        root.addSubnode(image)
        var random = SeededRandom(seed: 0x5EED_1234)
        for round in 0..<100 {
            let box = UncheckedSendable(image)
            let flips = Int.random(in: 1...7, using: &random)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for flip in 0..<flips { box.value.source = .bitmap(flip % 2 == 0 ? red : blue) }
                done.signal()
            }
            while done.wait(timeout: .now()) != .success { frame(host) }
            settle(host, time: &time)
            let expected = (flips - 1) % 2 == 0 ? red : blue
            XCTAssertEqual(image.loadState, .loaded, "round \(round)")
            XCTAssertEqual(image.image.map { $0.pixel(x: 1, y: 1) }, expected.pixel(x: 1, y: 1), "round \(round), seed 0x5EED1234")
            XCTAssertTrue(image.showsCurrentContents, "round \(round)")
        }
    }
}
