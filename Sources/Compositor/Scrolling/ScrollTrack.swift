import FoundationEssentials
import Glibc
import Dispatch

/// What moves a scroll position between frames. Every case is a closed form of time (see
/// `ScrollPhysics`), evaluated at each frame's time.
/// - Thread: any (a value)
package enum ScrollMotion: Sendable, Hashable {
    /// At rest (or held by a touch that stopped a fling).
    case idle
    /// Following a drag: the offset is `origin − translation`, rubber-banded past the edges.
    case dragging(origin: Double)
    /// A fling slowing down after release, or a wheel's glide after its last event, each with its
    /// deceleration rate (`ScrollPhysics.decelerationRate`, `.wheelDecelerationRate`).
    case decelerating(start: Double, origin: Double, velocity: Double, decelerationRate: Double)
    /// Following the wheel: each event moved the offset at once; once no event has come for
    /// `ScrollPhysics.wheelInertiaDelay` after `lastEvent`, the scroll glides on at `velocity`.
    case wheeling(lastEvent: Double, velocity: Double)
    /// Springing back to an edge after overscroll (`towardsEnd`: the bottom edge).
    case bouncing(start: Double, origin: Double, velocity: Double, towardsEnd: Bool)
    /// Easing from `from` to `to` over `duration` from `start` (keys, animated scrolls). Whoever owns
    /// the scroll may move `to` while it runs (a row whose height became known on the way).
    case animating(start: Double, from: Double, to: Double, duration: Double)

    /// True while the scroll moves with no touch holding it: a fling, a bounce, an animated scroll,
    /// the wheel and its glide.
    package var isMovingByItself: Bool {
        switch self {
        case .decelerating, .bouncing, .animating, .wheeling: return true
        case .idle, .dragging: return false
        }
    }

    package var isDragging: Bool {
        if case .dragging = self { return true }
        return false
    }

    package var isAtRest: Bool {
        if case .idle = self { return true }
        return false
    }

    /// Moves every position the motion remembers by `delta` (the content moved under the viewport).
    package mutating func shift(by delta: Double) {
        switch self {
        case .idle, .wheeling:
            break
        case .dragging(let origin):
            self = .dragging(origin: origin + delta)
        case let .decelerating(start, origin, velocity, rate):
            self = .decelerating(start: start, origin: origin + delta, velocity: velocity, decelerationRate: rate)
        case let .bouncing(start, origin, velocity, towardsEnd):
            self = .bouncing(start: start, origin: origin + delta, velocity: velocity, towardsEnd: towardsEnd)
        case let .animating(start, from, to, duration):
            self = .animating(start: start, from: from + delta, to: to + delta, duration: duration)
        }
    }
}

/// One wheel event's motion, for the wheel's velocity.
/// - Thread: any (a value)
package struct WheelSample: Sendable, Hashable {
    /// The frame time of the event.
    package var time: Double
    /// Points the offset moved (positive towards the end).
    package var delta: Double
    package init(time: Double, delta: Double) {
        self.time = time
        self.delta = delta
    }
}

/// A scroll position and its motion as a value, along one axis: where it is, how it moves (a fling, a
/// bounce, an animated scroll, the wheel and the glide after it), the wheel's recent motion and the
/// bounds it moves in. Each step is a closed form of time from the motion's start, so running a copy
/// to any time gives the offset the owner reaches then.
///
/// The one home of a scroll's motion: a list and a scroll node run theirs every frame, hand a copy to
/// the compositor in their content layer's `ScrollBinding`, and the compositor thread runs that copy
/// between their frames. When the compositor thread takes the wheel itself (or stops a motion under
/// a press), it applies the same functions to its copy and hands the result back with the event
/// (`CompositorThread.ScrollUpdate`); the UI thread takes that value over instead of computing its own.
/// - Thread: any (a value)
public struct ScrollTrack: Sendable, Hashable {
    package var motion: ScrollMotion
    /// The offset at `time`.
    public package(set) var offset: Double
    /// The frame time `offset` is at: a motion is run forward from here, never back.
    public package(set) var time: Double
    package var physics: ScrollPhysics
    /// The smallest and largest offsets at rest.
    public package(set) var lower: Double
    public package(set) var upper: Double
    /// Recent wheel motion, oldest first, one entry per event time, for the wheel's velocity.
    package var wheelSamples: [WheelSample]

    package init(motion: ScrollMotion = .idle, offset: Double, time: Double, physics: ScrollPhysics = ScrollPhysics(),
                 lower: Double, upper: Double, wheelSamples: [WheelSample] = []) {
        self.motion = motion
        self.offset = offset.isFinite ? offset : 0
        self.time = time.isFinite ? time : 0
        self.physics = physics
        self.lower = lower.isFinite ? lower : 0
        self.upper = upper.isFinite ? max(self.lower, upper) : self.lower
        self.wheelSamples = wheelSamples
    }

    /// A scroll at rest at `offset`.
    public static func resting(at offset: Double, time: Double, lower: Double, upper: Double) -> ScrollTrack {
        ScrollTrack(offset: offset, time: time, lower: lower, upper: upper)
    }

    /// True while the motion goes on by itself after `time` (nothing holds or stops it).
    public func isMoving(at time: Double) -> Bool {
        guard motion.isMovingByItself else { return false }
        var copy = self
        _ = copy.advance(to: time)
        return copy.motion.isMovingByItself
    }

    /// The offset at `time` (the motion run there on a copy).
    public func offset(at time: Double) -> Double {
        var copy = self
        _ = copy.advance(to: time)
        return copy.offset
    }

    /// `offset` held within the bounds.
    package func clamped(_ value: Double) -> Double { min(max(value, lower), upper) }

    /// What a release at `position` with `velocity` starts: a bounce back from past an edge, a fling
    /// fast enough to glide, or rest.
    package static func motionAfterRelease(at position: Double, velocity: Double, lower: Double, upper: Double,
                                           physics: ScrollPhysics, time: Double) -> ScrollMotion {
        if position < lower || position > upper {
            return .bouncing(start: time, origin: position, velocity: velocity, towardsEnd: position > upper)
        }
        if abs(velocity) >= physics.minimumFlingVelocity {
            return .decelerating(start: time, origin: position, velocity: velocity, decelerationRate: physics.decelerationRate)
        }
        return .idle
    }

    /// The motion as a layer animation of `property` (a content layer's origin, which sits at
    /// `origin` minus the offset) from `start` on: a compositor runs a copy to each frame's time.
    package func contentAnimation(_ property: LayerAnimation.Property, from start: Double, origin: Double = 0) -> LayerAnimation {
        let track = self
        return LayerAnimation(property, start: start, end: .infinity) { time in
            var copy = track
            _ = copy.advance(to: time)
            return origin - copy.offset
        }
    }

    /// Moves the motion on to `time` (a time before `self.time` changes nothing). Returns true when an
    /// animated scroll arrived at its end at this step.
    @discardableResult
    package mutating func advance(to time: Double) -> Bool {
        guard time.isFinite else { return false }
        if time > self.time { self.time = time }
        let time = self.time
        switch motion {
        case .idle, .dragging:
            return false
        case let .decelerating(start, origin, velocity, rate):
            var physics = self.physics
            physics.decelerationRate = rate
            let (position, speed) = physics.fling(origin: origin, velocity: velocity, elapsed: time - start)
            if position < lower || position > upper {
                let towardsEnd = position > upper
                let edge = towardsEnd ? upper : lower
                if let crossing = physics.flingTime(origin: origin, velocity: velocity, reaching: edge) {
                    let edgeVelocity = velocity * exp(-physics.decayConstant * crossing)
                    motion = .bouncing(start: start + crossing, origin: edge, velocity: edgeVelocity, towardsEnd: towardsEnd)
                } else {
                    motion = .bouncing(start: time, origin: position, velocity: speed, towardsEnd: towardsEnd)
                }
                return advance(to: time)
            } else if physics.flingHasSettled(velocity: speed) {
                offset = min(max(physics.flingRestingPosition(origin: origin, velocity: velocity), lower), upper)
                motion = .idle
            } else {
                offset = position
            }
        case let .wheeling(lastEvent, velocity):
            // The glide starts where the wheel stopped, at the time it is taken to have stopped, so
            // the position stays a closed form of time however the frames fall.
            let glideStart = lastEvent + physics.wheelInertiaDelay
            guard time >= glideStart else { return false }
            // The wheel's samples go once its glide has begun (or the wheel motion has ended).
            wheelSamples.removeAll()
            if abs(velocity) >= physics.minimumFlingVelocity && !physics.reducesMotion {
                motion = .decelerating(start: glideStart, origin: offset, velocity: velocity,
                                       decelerationRate: physics.wheelDecelerationRate)
                return advance(to: time)
            }
            motion = .idle
        case let .bouncing(start, origin, velocity, towardsEnd):
            let rest = towardsEnd ? upper : lower
            if physics.reducesMotion {
                offset = rest
                motion = .idle
                return false
            }
            let (position, speed) = physics.spring(origin: origin, velocity: velocity, rest: rest, elapsed: time - start)
            if physics.springHasSettled(position: position, velocity: speed, rest: rest) {
                offset = rest
                motion = .idle
            } else {
                offset = position
            }
        case let .animating(start, from, to, duration):
            let progress = duration > 0 ? (time - start) / duration : 1
            if progress >= 1 {
                offset = to
                motion = .idle
                return true
            }
            offset = from + (to - from) * ScrollPhysics.easeOut(progress)
        }
        return false
    }

    // MARK: The wheel

    /// The wheel's motion along a scroll's axis, in wheel steps (positive: towards the start). A
    /// horizontal scroll takes the wheel's horizontal motion (positive `dx`: to the right, towards its
    /// end), or its vertical motion where there is none; a vertical one takes the vertical motion.
    /// Nil when there is none to take (the wheel passes on).
    public static func wheelSteps(dx: Double, dy: Double, horizontal: Bool) -> Double? {
        let amount = horizontal && dx.isFinite && dx != 0 ? -dx : dy
        guard amount.isFinite, amount != 0 else { return nil }
        return amount
    }

    /// How far back, in seconds, the wheel's velocity looks.
    package static let wheelVelocityWindow = 0.1

    /// Moves the scroll by one wheel event of `steps` (from `wheelSteps`) of `stepLength` points each,
    /// read at `time`, as every scroll in Tessera takes the wheel: a motion running by itself is run
    /// to the event's time first (the wheel stops it where it was then), the offset moves at once,
    /// clamped to the bounds, and the events build a velocity (the distance the events of the last
    /// tenth of a second moved over the time they span; events of one frame count as one). Once no
    /// event has come for `physics.wheelInertiaDelay`, the scroll glides on from that velocity and
    /// slows at `physics.wheelDecelerationRate`; a lone event, events further apart than a tenth of a
    /// second, a turn the other way or an event the edge cut short leave no glide.
    /// - Returns: the points the offset moved (0 at an edge).
    @discardableResult
    package mutating func applyWheel(steps: Double, stepLength: Double, at time: Double) -> Double {
        if time.isFinite, time > self.time, motion.isMovingByItself { advance(to: time) }
        let requested = -steps * stepLength
        let start = clamped(offset)
        offset = requested.isFinite ? clamped(start + requested) : start
        let moved = offset - start
        let eventTime = time.isFinite ? max(time, wheelSamples.last?.time ?? time) : self.time
        if eventTime > self.time { self.time = eventTime }
        if let last = wheelSamples.last, (last.delta > 0) != (moved > 0) { wheelSamples.removeAll() }
        if abs(moved) < abs(requested) - 1e-9 || moved == 0 {
            wheelSamples.removeAll()
        } else if let last = wheelSamples.last, last.time == eventTime {
            wheelSamples[wheelSamples.count - 1].delta += moved
        } else {
            wheelSamples.append(WheelSample(time: eventTime, delta: moved))
        }
        wheelSamples.removeAll { eventTime - $0.time > Self.wheelVelocityWindow + 1e-9 }
        var velocity = 0.0
        if let first = wheelSamples.first, let last = wheelSamples.last, last.time > first.time {
            velocity = wheelSamples.dropFirst().reduce(0) { $0 + $1.delta } / (last.time - first.time)
        }
        motion = .wheeling(lastEvent: eventTime, velocity: velocity.isFinite ? velocity : 0)
        return moved
    }

    /// Stops a motion that runs by itself where it is at `time` (a press landed on the scroll).
    /// - Returns: true when something was moving.
    @discardableResult
    package mutating func stop(at time: Double) -> Bool {
        guard motion.isMovingByItself else { return false }
        if time.isFinite, time > self.time { advance(to: time) }
        guard motion.isMovingByItself else { return false }
        motion = .idle
        wheelSamples.removeAll()
        return true
    }
}
