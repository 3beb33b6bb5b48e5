import FoundationEssentials
import Glibc
import Dispatch

/// The motion laws of a scroll (a list, a scroll node, and the compositor thread moving either), as
/// closed forms of time, so the position at any frame time is exact however far apart the frames are
/// (a virtual clock in a test, a dropped frame in the app).
///
/// Positions are content offsets in points (the top of the viewport in content coordinates) and
/// velocities are points per second in the same direction: positive moves towards the end of the list.
/// - Thread: any (values and pure functions)
public struct ScrollPhysics: Hashable, Sendable {
    /// How quickly a fling slows: the velocity keeps this share of itself per millisecond (0.998 is the
    /// usual "normal" deceleration of touch platforms).
    public var decelerationRate = 0.998
    /// A fling slower than this, in points per second, does not start; a fling ends once the distance
    /// it would still travel is under half a point.
    public var minimumFlingVelocity = 50.0
    /// Stiffness of the spring that pulls an overscrolled list back to its edge, as the angular
    /// frequency of a critically damped spring (per second). Higher returns faster.
    public var bounceFrequency = 11.0
    /// How hard a drag past an edge is resisted: the overscroll shown is `(1 − 1/(x·c/d + 1))·d` for a
    /// drag of `x` past the edge, with `d` the viewport's height and `c` this constant.
    public var rubberBandConstant = 0.55
    /// Seconds an animated scroll (keys, `scroll(to:animated:)`) takes.
    public var animationDuration = 0.3
    /// How quickly the glide after the wheel's last event slows, as `decelerationRate` (share of the
    /// velocity kept per millisecond): faster than a fling, so a few notches glide a short way.
    public var wheelDecelerationRate = 0.995
    /// Seconds without a wheel event after which the wheel is taken to have stopped and the glide
    /// begins (three frames at 60 Hz: a touchpad's steady stream of events does not glide between them).
    public var wheelInertiaDelay = 0.04
    /// Reduced motion (`Appearance.reducedMotion`, which lists and scroll nodes apply here): the wheel
    /// leaves no glide (the scroll stops where the last event put it), and a scroll released past an
    /// edge, or a fling that reaches one, lands on the edge at once instead of springing back. A fling
    /// still glides: it carries on the hand's own motion.
    public var reducesMotion = false

    public init() {}

    /// Decay constant `k` of the fling, per second: `v(t) = v₀·e^(−k·t)`.
    package var decayConstant: Double { -1000 * log(min(0.999_999, max(0.5, decelerationRate))) }

    /// Where a fling that started at `origin` with `velocity` is after `elapsed` seconds, and its velocity.
    package func fling(origin: Double, velocity: Double, elapsed: Double) -> (position: Double, velocity: Double) {
        let k = decayConstant
        let decay = exp(-k * max(0, elapsed))
        return (origin + velocity / k * (1 - decay), velocity * decay)
    }

    /// Where a fling will come to rest.
    package func flingRestingPosition(origin: Double, velocity: Double) -> Double {
        origin + velocity / decayConstant
    }

    /// Seconds after which a fling from `origin` with `velocity` reaches `position`, or nil if it stops
    /// before.
    package func flingTime(origin: Double, velocity: Double, reaching position: Double) -> Double? {
        let k = decayConstant
        guard velocity != 0 else { return nil }
        let fraction = 1 - (position - origin) * k / velocity
        guard fraction > 0, fraction <= 1 else { return nil }
        return -log(fraction) / k
    }

    /// True once the fling would travel less than half a point more.
    package func flingHasSettled(velocity: Double) -> Bool {
        abs(velocity / decayConstant) < 0.5
    }

    /// A critically damped spring pulling towards `rest`: started at `origin` with `velocity`, where it
    /// is after `elapsed` seconds, and its velocity.
    package func spring(origin: Double, velocity: Double, rest: Double, elapsed: Double) -> (position: Double, velocity: Double) {
        let w = bounceFrequency
        let t = max(0, elapsed)
        let a = origin - rest
        let b = velocity + w * a
        let decay = exp(-w * t)
        return (rest + (a + b * t) * decay, (b - w * (a + b * t)) * decay)
    }

    /// True once the spring is within half a point of rest and nearly still.
    package func springHasSettled(position: Double, velocity: Double, rest: Double) -> Bool {
        abs(position - rest) < 0.5 && abs(velocity) < 20
    }

    /// The overscroll shown for a drag `distance` points past an edge of a viewport `dimension` tall.
    package func rubberBand(_ distance: Double, dimension: Double) -> Double {
        guard distance > 0, dimension > 0 else { return 0 }
        let c = rubberBandConstant
        return (1 - 1 / (distance * c / dimension + 1)) * dimension
    }

    /// The drag distance that shows `overscroll` (the inverse of `rubberBand`), so a drag that starts on
    /// an overscrolled list continues from where it is.
    package func rubberBandInverse(_ overscroll: Double, dimension: Double) -> Double {
        guard overscroll > 0, dimension > 0 else { return 0 }
        let ratio = min(overscroll / dimension, 0.999)
        return dimension / rubberBandConstant * (1 / (1 - ratio) - 1)
    }

    /// The drag position with resistance past the edges `[lower, upper]` applied.
    package func rubberBanded(_ raw: Double, lower: Double, upper: Double, dimension: Double) -> Double {
        if raw < lower { return lower - rubberBand(lower - raw, dimension: dimension) }
        if raw > upper { return upper + rubberBand(raw - upper, dimension: dimension) }
        return raw
    }

    /// The drag position that shows `shown` (the inverse of `rubberBanded`).
    package func unbanded(_ shown: Double, lower: Double, upper: Double, dimension: Double) -> Double {
        if shown < lower { return lower - rubberBandInverse(lower - shown, dimension: dimension) }
        if shown > upper { return upper + rubberBandInverse(shown - upper, dimension: dimension) }
        return shown
    }

    /// Ease-out cubic on `0...1`, for animated scrolls.
    package static func easeOut(_ progress: Double) -> Double {
        let p = min(1, max(0, progress))
        let inverse = 1 - p
        return 1 - inverse * inverse * inverse
    }
}
