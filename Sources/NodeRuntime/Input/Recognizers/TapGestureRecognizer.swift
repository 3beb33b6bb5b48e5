import Compositor
import FoundationEssentials
import Glibc
import Dispatch

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
@MainActor
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
