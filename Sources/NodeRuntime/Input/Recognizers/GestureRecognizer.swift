public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Turns a node's touches into a gesture. Attach recognizers in `didLoad`; the host routes every touch
/// that starts on the node (or on one of its subnodes, or on a row of a list it is) to the recognizers
/// of the node and its event ancestors (supernodes; from a list's row, the list). When one recognizer
/// begins or recognizes, the others are cancelled and the touched node gets `touchesCancelled`.
///
/// A recognizer sees only touches made with one of its `allowedButtons` (the primary button by
/// default), and only those `shouldReceiveTouch` lets through.
///
/// Subclasses override the `touch…` methods and call `transition(to:)`.
/// - Thread: main, every member.
@MainActor
open class GestureRecognizer {
    public enum State: Sendable, Equatable {
        /// Watching; nothing decided yet.
        case possible
        /// A continuous gesture started (pan, long press).
        case began
        /// A continuous gesture moved.
        case changed
        /// A continuous gesture finished.
        case ended
        /// A continuous gesture was interrupted.
        case cancelled
        /// The touches did not make this gesture.
        case failed
        /// A discrete gesture happened (tap).
        case recognized
    }

    /// The current state; back to `.possible` when a touch sequence is over.
    public private(set) var state: State = .possible
    /// The node the recognizer is attached to.
    public internal(set) weak var node: Node?
    /// A disabled recognizer receives no touches.
    public var isEnabled = true
    /// The mouse buttons whose touches the recognizer receives; a touch started with another button
    /// never reaches it (a right click is not a tap). Default: the primary button only.
    public var allowedButtons: Set<PointerButton> = [.primary]
    /// Asked when a touch begins, with the touch and the node it landed on (the host's hit, perhaps a
    /// descendant of this recognizer's node or content of one of its list rows); false keeps the whole
    /// touch sequence from this recognizer. Nil receives every touch.
    public var shouldReceiveTouch: ((_ touch: Touch, _ touchedNode: Node) -> Bool)?
    /// Called on every transition to began, changed, ended, cancelled or recognized.
    public var action: ((GestureRecognizer) -> Void)?
    /// The latest touch seen, in root coordinates.
    public private(set) var lastTouch: Touch?

    public init(action: ((GestureRecognizer) -> Void)? = nil) {
        UIThread.precondition("GestureRecognizer.init")
        self.action = action
    }

    /// The last touch's location in `node`'s coordinates (root coordinates when nil).
    public func location(in node: Node?) -> Point {
        guard let touch = lastTouch else { return .zero }
        return node?.convertFromRoot(touch.location) ?? touch.location
    }

    /// True once the gesture has taken the touch (began or recognized).
    public var hasClaimedTouch: Bool { state == .began || state == .changed || state == .recognized || state == .ended }

    /// Moves to `newState` and reports it through `action` where the state means something happened.
    public func transition(to newState: State) {
        UIThread.precondition("GestureRecognizer.transition")
        guard newState != state else {
            if newState == .changed { action?(self) }
            return
        }
        state = newState
        switch newState {
        case .began, .changed, .ended, .cancelled, .recognized: action?(self)
        case .possible, .failed: break
        }
    }

    // MARK: Override points (main thread)

    /// A touch started on the node or a subnode.
    open func touchBegan(_ touch: Touch) {}
    /// The touch moved.
    open func touchMoved(_ touch: Touch) {}
    /// The touch ended.
    open func touchEnded(_ touch: Touch) {}
    /// The touch was taken away; a continuous gesture in progress should become `.cancelled`.
    open func touchCancelled(_ touch: Touch) {
        if state == .began || state == .changed { transition(to: .cancelled) } else if state == .possible { transition(to: .failed) }
    }
    /// Called once a frame while a touch is down, with the frame's time (long presses use it).
    open func frameDidAdvance(to time: Double) {}
    /// Called when the touch sequence is over, before the state returns to `.possible`.
    open func reset() {}

    // MARK: Routing (used by the host)

    /// Whether the host should route the touch sequence that `touch` begins on `node` here.
    func receives(_ touch: Touch, on node: Node) -> Bool {
        isEnabled && allowedButtons.contains(touch.button) && (shouldReceiveTouch?(touch, node) ?? true)
    }

    func deliver(_ touch: Touch) {
        lastTouch = touch
        switch touch.phase {
        case .began: touchBegan(touch)
        case .moved: touchMoved(touch)
        case .ended: touchEnded(touch)
        case .cancelled: touchCancelled(touch)
        }
    }

    func finishSequence() {
        reset()
        state = .possible
        lastTouch = nil
    }
}

extension Node {
    /// Attaches a recognizer; do it in `didLoad`. The node becomes interactive.
    /// - Thread: main
    @MainActor
    public func addGestureRecognizer(_ recognizer: GestureRecognizer) {
        UIThread.precondition("Node.addGestureRecognizer")
        recognizer.node?.removeGestureRecognizer(recognizer)
        recognizer.node = self
        gestureRecognizers.append(recognizer)
        isUserInteractionEnabled = true
    }

    /// Detaches a recognizer. - Thread: main
    @MainActor
    public func removeGestureRecognizer(_ recognizer: GestureRecognizer) {
        UIThread.precondition("Node.removeGestureRecognizer")
        gestureRecognizers.removeAll { $0 === recognizer }
        if recognizer.node === self { recognizer.node = nil }
    }

    /// The recognizers attached to this node. - Thread: main
    @MainActor
    public var attachedGestureRecognizers: [GestureRecognizer] {
        UIThread.precondition("Node.attachedGestureRecognizers")
        return gestureRecognizers
    }
}

// The stock recognizers. Each keeps only what it needs about the current touch sequence and clears it
// in `reset()`, which the host calls when the sequence is over. Times are the touches' timestamps and
// the frame times the host passes to `frameDidAdvance(to:)`: both come from the frame clock, so tests
// can drive every recognizer with a virtual clock.

/// The straight-line distance between two points (not finite when either point is not).
func pointDistance(_ a: Point, _ b: Point) -> Double {
    hypot(a.x - b.x, a.y - b.y)
}

/// True when `b` lies within `limit` points of `a`. A non-finite distance counts as too far, so bad
/// input fails a gesture instead of recognizing it.
func isWithin(_ limit: Double, _ a: Point, _ b: Point) -> Bool {
    let d = pointDistance(a, b)
    return d.isFinite && d <= limit
}
