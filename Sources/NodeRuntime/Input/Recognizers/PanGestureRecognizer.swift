public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Recognizes a drag: begins once the touch has moved more than `minimumDistance` from where it went
/// down, reports `.changed` for each move after that and `.ended` on touch up. A touch that comes up
/// before moving far enough fails it.
///
/// `translation(in:)` is measured from the touch-down point (so it includes the distance travelled
/// before the pan began); `velocity` is estimated from the moves of the last tenth of a second.
/// - Thread: main, every member.
@MainActor
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
            let moved = pointDistance(downLocation, touch.location)
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
