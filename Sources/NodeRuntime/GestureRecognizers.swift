public import Compositor
import Foundation

// The stock recognizers. Each keeps only what it needs about the current touch sequence and clears it
// in `reset()`, which the host calls when the sequence is over. Times are the touches' timestamps and
// the frame times the host passes to `frameDidAdvance(to:)`: both come from the frame clock, so tests
// can drive every recognizer with a virtual clock.

/// The straight-line distance between two points (not finite when either point is not).
private func distance(_ a: Point, _ b: Point) -> Double {
    hypot(a.x - b.x, a.y - b.y)
}

/// True when `b` lies within `limit` points of `a`. A non-finite distance counts as too far, so bad
/// input fails a gesture instead of recognizing it.
private func isWithin(_ limit: Double, _ a: Point, _ b: Point) -> Bool {
    let d = distance(a, b)
    return d.isFinite && d <= limit
}

/// Recognizes a quick touch that comes up close to where it went down: a tap.
///
/// Recognizes on touch up when the touch stayed within `allowableMovement` of its start and lasted at
/// most `maximumDuration`; fails as soon as either limit is passed (a move too far, or a frame after the
/// time ran out), so a competing long press or pan is not held up by it. Like every recognizer it sees
/// only its `allowedButtons` (the primary button unless configured), so a right click is no tap.
///
/// `numberOfClicksRequired` makes a double-click recognizer: the press must complete at least that many
/// quick clicks in one place, as the platform counts them (`Touch.clickCount`); with fewer it fails at
/// once.
/// - Thread: main, every member.
public final class TapGestureRecognizer: GestureRecognizer {
    /// How far, in points, the touch may wander from where it went down.
    public var allowableMovement = 10.0
    /// The longest the touch may stay down, in seconds.
    public var maximumDuration = 0.35
    /// The click count the press must reach: 1 (the default) for every click, 2 for a double-click
    /// (recognized on the second press's release, and on the third's of a triple-click).
    public var numberOfClicksRequired = 1

    private var start: Touch?

    /// The click count of the press that was recognized (or is being watched); 0 when none.
    public var clickCount: Int { start?.clickCount ?? 0 }

    override public func touchBegan(_ touch: Touch) {
        start = touch
        if touch.clickCount < numberOfClicksRequired { transition(to: .failed) }
    }

    override public func touchMoved(_ touch: Touch) {
        guard state == .possible, let start else { return }
        if !isWithin(allowableMovement, start.location, touch.location) || !isInTime(touch.timestamp, since: start) {
            transition(to: .failed)
        }
    }

    override public func touchEnded(_ touch: Touch) {
        guard state == .possible, let start else { return }
        let isTap = isWithin(allowableMovement, start.location, touch.location) && isInTime(touch.timestamp, since: start)
        transition(to: isTap ? .recognized : .failed)
    }

    override public func frameDidAdvance(to time: Double) {
        guard state == .possible, let start, !isInTime(time, since: start) else { return }
        transition(to: .failed)
    }

    override public func reset() {
        start = nil
    }

    private func isInTime(_ time: Double, since start: Touch) -> Bool {
        let elapsed = time - start.timestamp
        return elapsed.isFinite && elapsed <= maximumDuration
    }
}

/// Recognizes a touch held in place: begins once the touch has been down for `minimumDuration` without
/// moving more than `allowableMovement`, then reports `.changed` for each move and `.ended` on touch up.
///
/// The hold is usually noticed in `frameDidAdvance(to:)`, which the host calls every frame while a touch
/// is down; a touch event that arrives after the time has passed begins it too, for hosts that skipped
/// frames. Moving too far first fails it.
/// - Thread: main, every member.
public final class LongPressGestureRecognizer: GestureRecognizer {
    /// How long, in seconds, the touch must be held.
    public var minimumDuration = 0.5
    /// How far, in points, the touch may wander before the press begins.
    public var allowableMovement = 10.0

    private var start: Touch?

    override public func touchBegan(_ touch: Touch) {
        start = touch
    }

    override public func touchMoved(_ touch: Touch) {
        switch state {
        case .possible:
            guard let start else { return }
            if hasBeenHeld(until: touch.timestamp, since: start) {
                // The pointer stayed put until this event arrived (a move is reported when it happens),
                // so the hold was complete before the movement.
                transition(to: .began)
            } else if !isWithin(allowableMovement, start.location, touch.location) {
                transition(to: .failed)
            }
        case .began, .changed:
            transition(to: .changed)
        default:
            break
        }
    }

    override public func touchEnded(_ touch: Touch) {
        switch state {
        case .possible:
            guard let start, hasBeenHeld(until: touch.timestamp, since: start),
                  isWithin(allowableMovement, start.location, touch.location) else {
                transition(to: .failed)
                return
            }
            transition(to: .began)
            transition(to: .ended)
        case .began, .changed:
            transition(to: .ended)
        default:
            break
        }
    }

    override public func frameDidAdvance(to time: Double) {
        guard state == .possible, let start, hasBeenHeld(until: time, since: start) else { return }
        transition(to: .began)
    }

    override public func reset() {
        start = nil
    }

    private func hasBeenHeld(until time: Double, since start: Touch) -> Bool {
        let elapsed = time - start.timestamp
        return elapsed.isFinite && elapsed >= minimumDuration
    }
}

/// Recognizes a drag: begins once the touch has moved more than `minimumDistance` from where it went
/// down, reports `.changed` for each move after that and `.ended` on touch up. A touch that comes up
/// before moving far enough fails it.
///
/// `translation(in:)` is measured from the touch-down point (so it includes the distance travelled
/// before the pan began); `velocity` is estimated from the moves of the last tenth of a second.
/// - Thread: main, every member.
public final class PanGestureRecognizer: GestureRecognizer {
    /// How far, in points, the touch must move before the pan begins.
    public var minimumDistance = 10.0

    /// How far back, in seconds, the velocity estimate looks.
    static let velocityWindow = 0.1

    private struct Sample {
        var time: Double
        var location: Point
    }

    /// Where the touch went down, for the begin threshold. (root coordinates)
    private var downLocation: Point?
    /// What `translation(in:)` measures from; moved by `setTranslation(_:in:)`. (root coordinates)
    private var translationOrigin: Point?
    /// Recent positions, oldest first, with distinct increasing times; the first may be older than the
    /// window so the estimate always spans at least the window once there is history.
    private var samples: [Sample] = []

    /// The pointer's speed in points per second (x to the right, y down), estimated from its recent
    /// moves. Always finite; zero until two moves with different timestamps have been seen.
    public private(set) var velocity = Point.zero

    /// The distance the touch has travelled since it went down (or since `setTranslation(_:in:)`).
    /// Nodes are placed by translation only, so the vector is the same in every node's coordinates;
    /// `node` is accepted for symmetry with `location(in:)`.
    public func translation(in node: Node?) -> Point {
        guard let origin = translationOrigin, let touch = lastTouch else { return .zero }
        let from = node?.convertFromRoot(origin) ?? origin
        let to = node?.convertFromRoot(touch.location) ?? touch.location
        return Point(x: to.x - from.x, y: to.y - from.y)
    }

    /// Makes the current translation read `translation`, so later moves are measured from here (a
    /// handler that applies each step and starts again from zero).
    public func setTranslation(_ translation: Point, in node: Node?) {
        guard let touch = lastTouch else { return }
        translationOrigin = Point(x: touch.location.x - translation.x, y: touch.location.y - translation.y)
    }

    override public func touchBegan(_ touch: Touch) {
        downLocation = touch.location
        translationOrigin = touch.location
        samples = []
        velocity = .zero
        record(touch)
    }

    override public func touchMoved(_ touch: Touch) {
        record(touch)
        switch state {
        case .possible:
            guard let downLocation else { return }
            let moved = distance(downLocation, touch.location)
            if !moved.isFinite { transition(to: .failed) } else if moved > minimumDistance { transition(to: .began) }
        case .began, .changed:
            transition(to: .changed)
        default:
            break
        }
    }

    override public func touchEnded(_ touch: Touch) {
        record(touch)
        switch state {
        case .possible: transition(to: .failed)
        case .began, .changed: transition(to: .ended)
        default: break
        }
    }

    override public func reset() {
        downLocation = nil
        translationOrigin = nil
        samples = []
        velocity = .zero
    }

    /// Adds a position to the history and updates `velocity`.
    private func record(_ touch: Touch) {
        let location = touch.location
        guard touch.timestamp.isFinite, location.x.isFinite, location.y.isFinite else { return }
        if let last = samples.last, touch.timestamp <= last.time {
            // Events that share a timestamp (several in one frame) leave no time to divide by: the
            // newest position stands for that instant.
            samples[samples.count - 1].location = location
        } else {
            samples.append(Sample(time: touch.timestamp, location: location))
        }
        let cutoff = touch.timestamp - Self.velocityWindow
        while samples.count > 2 && samples[1].time <= cutoff { samples.removeFirst() }

        guard let first = samples.first, let last = samples.last else { return }
        let elapsed = last.time - first.time
        guard elapsed > 0 else { return }
        let estimate = Point(x: (last.location.x - first.location.x) / elapsed,
                             y: (last.location.y - first.location.y) / elapsed)
        if estimate.x.isFinite && estimate.y.isFinite { velocity = estimate }
    }
}
