import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Recognizes a touch held in place: begins once the touch has been down for `minimumDuration` without
/// moving more than `allowableMovement`, then reports `.changed` for each move and `.ended` on touch up.
///
/// The hold is usually noticed in `frameDidAdvance(to:)`, which the host calls every frame while a touch
/// is down; a touch event that arrives after the time has passed begins it too, for hosts that skipped
/// frames. Moving too far first fails it.
/// - Thread: main, every member.
@MainActor
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
