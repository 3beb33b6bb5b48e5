import Compositor
@testable import NodeRuntime
import XCTest

/// A host on a recording backend, driven by a virtual clock: every frame names its time.
@MainActor
private final class GestureTestHost {
    let host: NodeHost
    let root = Node()
    /// Whole seconds past anything earlier tests left on the shared animator, so offsets stay exact.
    let base: Double

    init() {
        let compositor = Compositor(backend: RecordingRenderBackend(width: 400, height: 300))
        host = NodeHost(compositor: compositor)
        base = (host.runtime.animator.now + 10).rounded(.down)
        root.debugName = "root"
    }

    func show() {
        host.setRootNode(root)
        frame(at: 0)
    }

    @discardableResult
    func frame(at offset: Double, _ events: [InputEvent] = []) -> FrameRecord {
        host.runFrame(time: base + offset, events: events)
    }

    func down(_ x: Double, _ y: Double, at offset: Double) { frame(at: offset, [.pointerDown(Point(x: x, y: y), button: 1)]) }
    func move(_ x: Double, _ y: Double, at offset: Double) { frame(at: offset, [.pointerMoved(Point(x: x, y: y))]) }
    func up(_ x: Double, _ y: Double, at offset: Double) { frame(at: offset, [.pointerUp(Point(x: x, y: y), button: 1)]) }
}

/// A node that records the touches it is given.
private final class TouchRecordingNode: Node, @unchecked Sendable {
    var touches: [Touch.Phase] = []
    var locations: [Point] = []

    init(frame: Rect, interactive: Bool = true) {
        super.init()
        self.frame = frame
        isUserInteractionEnabled = interactive
    }

    override func touchesBegan(_ touch: Touch) { record(touch) }
    override func touchesMoved(_ touch: Touch) { record(touch) }
    override func touchesEnded(_ touch: Touch) { record(touch) }
    override func touchesCancelled(_ touch: Touch) { record(touch) }

    private func record(_ touch: Touch) {
        touches.append(touch.phase)
        locations.append(touch.location)
    }
}

/// Records every state a recognizer reports through its action.
@MainActor
private final class ActionLog {
    var states: [GestureRecognizer.State] = []
    func attach(to recognizer: GestureRecognizer) {
        recognizer.action = { [unowned self] in self.states.append($0.state) }
    }
}

/// A shown host with one interactive node at (100, 100, 100×50) carrying `recognizer`, whose actions
/// are logged.
@MainActor
private func showTarget<Recognizer: GestureRecognizer>(with recognizer: Recognizer)
    -> (GestureTestHost, TouchRecordingNode, Recognizer, ActionLog) {
    let host = GestureTestHost()
    let target = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 100, height: 50))
    host.root.addSubnode(target)
    host.show()
    let log = ActionLog()
    log.attach(to: recognizer)
    target.addGestureRecognizer(recognizer)
    return (host, target, recognizer, log)
}

@MainActor
final class GestureRecognizerTests: XCTestCase {
    // MARK: Tap

    func testTapRecognizedOnQuickDownUp() async {
        let (t, target, tap, log) = showTarget(with: TapGestureRecognizer())

        t.down(120, 120, at: 0.1)
        XCTAssertEqual(tap.state, .possible)
        t.move(123, 124, at: 0.15)
        t.up(124, 125, at: 0.2)

        XCTAssertEqual(log.states, [.recognized])
        XCTAssertEqual(tap.state, .possible, "back to possible once the sequence is over")
        XCTAssertEqual(target.touches, [.began, .moved, .ended])
    }

    func testTapFailsWhenMovedTooFar() async {
        let (t, _, tap, log) = showTarget(with: TapGestureRecognizer())

        t.down(120, 120, at: 0.1)
        t.move(150, 120, at: 0.15)
        XCTAssertEqual(tap.state, .failed)
        t.up(150, 120, at: 0.2)
        XCTAssertEqual(log.states, [])
        XCTAssertEqual(tap.state, .possible)
    }

    func testTapFailsWhenHeldTooLong() async {
        let (t, _, tap, log) = showTarget(with: TapGestureRecognizer())

        // Held with frames running: the frame past the limit fails it.
        t.down(120, 120, at: 1)
        for step in 1...10 { t.frame(at: 1 + Double(step) / 10) }
        XCTAssertEqual(tap.state, .failed)
        t.up(120, 120, at: 2.1)
        XCTAssertEqual(log.states, [])

        // No frames in between: the touches' timestamps alone decide.
        t.down(120, 120, at: 3)
        t.up(120, 120, at: 4)
        XCTAssertEqual(log.states, [])
    }

    func testTapReachesRecognizersOfSubnodeAndAncestors() async {
        let t = GestureTestHost()
        let parent = TouchRecordingNode(frame: Rect(x: 50, y: 50, width: 200, height: 200))
        let child = TouchRecordingNode(frame: Rect(x: 10, y: 10, width: 40, height: 40))
        parent.addSubnode(child)
        t.root.addSubnode(parent)
        t.show()
        let parentTap = TapGestureRecognizer(), childTap = TapGestureRecognizer()
        let parentLog = ActionLog(), childLog = ActionLog()
        parentLog.attach(to: parentTap)
        childLog.attach(to: childTap)
        parent.addGestureRecognizer(parentTap)
        child.addGestureRecognizer(childTap)

        // Inside the child (root 60…100).
        t.down(70, 70, at: 0.1)
        t.up(70, 70, at: 0.2)
        XCTAssertEqual(childLog.states, [.recognized])
        XCTAssertEqual(parentLog.states, [.recognized])
        XCTAssertEqual(child.touches.first, .began, "the subnode is the touched node")
        XCTAssertEqual(parent.touches, [], "node touches go to the hit node only")

        // Inside the parent only.
        t.down(200, 200, at: 1.1)
        t.up(200, 200, at: 1.2)
        XCTAssertEqual(childLog.states, [.recognized])
        XCTAssertEqual(parentLog.states, [.recognized, .recognized])
    }

    func testNegativeHitTestSlopLetsATapJustOutsideHit() async {
        let t = GestureTestHost()
        let button = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 20, height: 20))
        button.hitTestSlop = EdgeInsets(all: -10)
        t.root.addSubnode(button)
        t.show()
        let tap = TapGestureRecognizer()
        let log = ActionLog()
        log.attach(to: tap)
        button.addGestureRecognizer(tap)

        t.down(95, 125, at: 0.1)  // 5 pt left of and below the bounds, within the slop
        t.up(95, 125, at: 0.2)
        XCTAssertEqual(log.states, [.recognized])

        t.down(85, 110, at: 1.1)  // 15 pt left: outside the slop too
        t.up(85, 110, at: 1.2)
        XCTAssertEqual(log.states, [.recognized])
    }

    func testLayerBackedNodeIsNeverTheTarget() async {
        let t = GestureTestHost()
        let parent = TouchRecordingNode(frame: Rect(x: 0, y: 0, width: 300, height: 300))
        let decoration = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 50, height: 50), interactive: false)
        parent.addSubnode(decoration)
        t.root.addSubnode(parent)
        t.show()

        t.down(120, 120, at: 0.1)
        t.up(120, 120, at: 0.2)
        XCTAssertEqual(decoration.touches, [])
        XCTAssertEqual(parent.touches, [.began, .ended], "the touch falls through to the interactive parent")

        let lone = TouchRecordingNode(frame: Rect(x: 0, y: 0, width: 10, height: 10), interactive: false)
        XCTAssertNil(lone.hitTest(Point(x: 5, y: 5)))
    }

    func testHiddenNodeIsNotHit() async {
        let t = GestureTestHost()
        let target = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 100, height: 50))
        target.isHidden = true
        t.root.addSubnode(target)
        t.show()
        let tap = TapGestureRecognizer()
        let log = ActionLog()
        log.attach(to: tap)
        target.addGestureRecognizer(tap)

        t.down(120, 120, at: 0.1)
        t.up(120, 120, at: 0.2)
        XCTAssertEqual(log.states, [])
        XCTAssertEqual(target.touches, [])
        XCTAssertNil(t.root.hitTest(Point(x: 120, y: 120)))
    }

    func testDisabledRecognizerIgnoresTouches() async {
        let (t, target, tap, log) = showTarget(with: TapGestureRecognizer())
        tap.isEnabled = false

        t.down(120, 120, at: 0.1)
        t.up(120, 120, at: 0.2)
        XCTAssertEqual(log.states, [])
        XCTAssertEqual(target.touches, [.began, .ended], "the node itself still gets its touches")

        tap.isEnabled = true
        t.down(120, 120, at: 1.1)
        t.up(120, 120, at: 1.2)
        XCTAssertEqual(log.states, [.recognized])
    }

    // MARK: Node touches

    func testNodeTouchesArriveInOrder() async {
        let t = GestureTestHost()
        let target = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 100, height: 50))
        t.root.addSubnode(target)
        t.show()

        t.down(110, 110, at: 0.1)
        t.move(130, 115, at: 0.2)
        t.move(250, 115, at: 0.3)  // outside the node: the touch stays with it
        t.up(260, 120, at: 0.4)
        XCTAssertEqual(target.touches, [.began, .moved, .moved, .ended])
        XCTAssertEqual(target.locations.first, Point(x: 110, y: 110))
        XCTAssertEqual(target.locations.last, Point(x: 260, y: 120))
    }

    // MARK: Long press

    func testLongPressBeginsAfterMinimumDurationAndEndsOnUp() async {
        let t = GestureTestHost()
        let target = TouchRecordingNode(frame: Rect(x: 100, y: 100, width: 100, height: 50))
        t.root.addSubnode(target)
        t.show()
        let press = LongPressGestureRecognizer(), tap = TapGestureRecognizer()
        let pressLog = ActionLog(), tapLog = ActionLog()
        pressLog.attach(to: press)
        tapLog.attach(to: tap)
        target.addGestureRecognizer(tap)
        target.addGestureRecognizer(press)

        t.down(120, 120, at: 1)
        for step in 1...4 {
            t.frame(at: 1 + Double(step) / 10)
            XCTAssertEqual(press.state, .possible, "not before 0.5 s (at \(Double(step) / 10) s)")
        }
        XCTAssertEqual(target.touches, [.began])
        t.frame(at: 1.5)
        XCTAssertEqual(press.state, .began)
        XCTAssertEqual(pressLog.states, [.began])
        XCTAssertEqual(target.touches, [.began, .cancelled], "the touched node loses the touch")

        t.move(160, 130, at: 1.6)
        t.up(160, 130, at: 1.7)
        XCTAssertEqual(pressLog.states, [.began, .changed, .ended])
        XCTAssertEqual(tapLog.states, [], "the competing tap never fires")
        XCTAssertEqual(target.touches, [.began, .cancelled])
        XCTAssertEqual(press.state, .possible)
    }

    func testLongPressFailsWhenMovedFirst() async {
        let (t, target, press, log) = showTarget(with: LongPressGestureRecognizer())

        t.down(120, 120, at: 1)
        t.move(150, 120, at: 1.2)
        XCTAssertEqual(press.state, .failed)
        for step in 3...8 { t.frame(at: 1 + Double(step) / 10) }
        t.up(150, 120, at: 1.9)
        XCTAssertEqual(log.states, [])
        XCTAssertEqual(target.touches, [.began, .moved, .ended])
    }

    func testLongPressBeginsOnALateEventWithoutFrames() async {
        let press = LongPressGestureRecognizer()
        let log = ActionLog()
        log.attach(to: press)
        press.deliver(Touch(phase: .began, location: Point(x: 10, y: 10), timestamp: 0))
        press.deliver(Touch(phase: .ended, location: Point(x: 11, y: 10), timestamp: 0.8))
        XCTAssertEqual(log.states, [.began, .ended])
    }

    // MARK: Pan

    func testPanBeginsPastMinimumDistanceAndTracksTranslation() async {
        let t = GestureTestHost()
        let target = TouchRecordingNode(frame: Rect(x: 50, y: 50, width: 300, height: 200))
        t.root.addSubnode(target)
        t.show()
        let pan = PanGestureRecognizer()
        var seen: [(GestureRecognizer.State, Point)] = []
        pan.action = { recognizer in
            seen.append((recognizer.state, (recognizer as! PanGestureRecognizer).translation(in: nil)))
        }
        target.addGestureRecognizer(pan)

        t.down(100, 100, at: 1)
        t.move(105, 100, at: 1.01)
        t.move(110, 100, at: 1.02)
        XCTAssertEqual(pan.state, .possible, "exactly 10 pt is not more than the minimum")
        XCTAssertEqual(target.touches, [.began, .moved, .moved])
        t.move(115, 98, at: 1.03)
        XCTAssertEqual(pan.state, .began)
        XCTAssertEqual(pan.translation(in: nil), Point(x: 15, y: -2))
        XCTAssertEqual(pan.translation(in: target), Point(x: 15, y: -2), "a vector reads the same in any node")
        XCTAssertEqual(target.touches.last, .cancelled, "the pan takes the touch")
        t.move(140, 90, at: 1.04)
        t.up(140, 90, at: 1.05)

        XCTAssertEqual(seen.map(\.0), [.began, .changed, .ended])
        XCTAssertEqual(seen.map(\.1), [Point(x: 15, y: -2), Point(x: 40, y: -10), Point(x: 40, y: -10)])
        XCTAssertEqual(pan.state, .possible)
        XCTAssertEqual(pan.translation(in: nil), .zero, "nothing to report after the sequence")
    }

    func testPanVelocityForSteadyMotion() async {
        let t = GestureTestHost()
        let target = TouchRecordingNode(frame: Rect(x: 0, y: 0, width: 400, height: 300))
        t.root.addSubnode(target)
        t.show()
        let pan = PanGestureRecognizer()
        var velocities: [Point] = []
        pan.action = { velocities.append(($0 as! PanGestureRecognizer).velocity) }
        target.addGestureRecognizer(pan)

        // 5 pt right and 2 pt up every 10 ms: 500 pt/s right, 200 pt/s up.
        t.down(50, 250, at: 1)
        for step in 1...30 {
            let s = Double(step)
            t.move(50 + 5 * s, 250 - 2 * s, at: 1 + s / 100)
        }
        XCTAssertEqual(pan.state, .changed)
        XCTAssertTrue(velocities.allSatisfy { $0.x.isFinite && $0.y.isFinite })
        XCTAssertTrue(velocities.allSatisfy { $0.x > 0 && $0.y < 0 }, "\(velocities)")
        XCTAssertEqual(pan.velocity.x, 500, accuracy: 1e-6)
        XCTAssertEqual(pan.velocity.y, -200, accuracy: 1e-6)

        // Two moves in one frame share a timestamp; the estimate must stay a number.
        t.frame(at: 1.31, [.pointerMoved(Point(x: 203, y: 189)), .pointerMoved(Point(x: 205, y: 188))])
        XCTAssertTrue(pan.velocity.x.isFinite && pan.velocity.y.isFinite)
        XCTAssertEqual(pan.velocity.x, 500, accuracy: 1e-6)

        t.up(205, 188, at: 1.31)
        XCTAssertEqual(velocities.last?.x ?? .nan, 500, accuracy: 1e-6, "an up at the same instant keeps the speed")
        XCTAssertTrue(velocities.allSatisfy { $0.x.isFinite && $0.y.isFinite })
    }

    func testPanFailsWhenLiftedBeforeMovingFarEnough() async {
        let pan = PanGestureRecognizer()
        let log = ActionLog()
        log.attach(to: pan)
        pan.deliver(Touch(phase: .began, location: Point(x: 10, y: 10), timestamp: 0))
        pan.deliver(Touch(phase: .moved, location: Point(x: 14, y: 10), timestamp: 0))
        XCTAssertEqual(pan.velocity, .zero, "no time has passed: no speed, and no division by zero")
        pan.deliver(Touch(phase: .ended, location: Point(x: 14, y: 10), timestamp: 0.1))
        XCTAssertEqual(pan.state, .failed)
        XCTAssertEqual(log.states, [])
    }
}
