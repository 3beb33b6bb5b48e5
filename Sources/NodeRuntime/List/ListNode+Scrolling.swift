public import Compositor
import Foundation

/// What moves a list's scroll position between frames. Every case is a closed form of time (see
/// `ScrollPhysics`), evaluated at each frame's time.
enum ScrollMotion: Sendable {
    /// At rest (or held by a touch that stopped a fling).
    case idle
    /// Following a drag: the offset is `origin − translation`, rubber-banded past the edges.
    case dragging(origin: Double)
    /// A fling slowing down after release, or a wheel's glide after its last event, each with its
    /// deceleration rate (`ScrollPhysics.decelerationRate`, `.wheelDecelerationRate`).
    case decelerating(start: Double, origin: Double, velocity: Double, decelerationRate: Double)
    /// Following the wheel: each event moved the offset at once; once no event has come for
    /// `ScrollPhysics.wheelInertiaDelay` after `lastEvent`, the list glides on at `velocity`.
    case wheeling(lastEvent: Double, velocity: Double)
    /// Springing back to an edge after overscroll (`towardsEnd`: the bottom edge).
    case bouncing(start: Double, origin: Double, velocity: Double, towardsEnd: Bool)
    /// Easing to a target (keys, `scroll(to:animated:)`, `setContentOffset(_:animated:)`).
    case animating(start: Double, from: Double, target: ScrollTarget, duration: Double)

    /// Moves every position the motion remembers by `delta` (the content moved under the viewport).
    mutating func shift(by delta: Double) {
        switch self {
        case .idle:
            break
        case .dragging(let origin):
            self = .dragging(origin: origin + delta)
        case let .decelerating(start, origin, velocity, rate):
            self = .decelerating(start: start, origin: origin + delta, velocity: velocity, decelerationRate: rate)
        case .wheeling:
            break
        case let .bouncing(start, origin, velocity, towardsEnd):
            self = .bouncing(start: start, origin: origin + delta, velocity: velocity, towardsEnd: towardsEnd)
        case let .animating(start, from, target, duration):
            self = .animating(start: start, from: from + delta, target: target.shifted(by: delta), duration: duration)
        }
    }
}

/// Where an animated or held scroll is going, re-resolved each frame so that heights measured on the
/// way are taken into account.
enum ScrollTarget: Equatable, Sendable {
    case offset(Double)
    case start
    case end
    case row(Int, ListScrollPosition)

    func shifted(by delta: Double) -> ScrollTarget {
        if case .offset(let y) = self { return .offset(y + delta) }
        return self
    }
}

extension ListNode {
    // MARK: Programmatic scrolling (main thread)

    /// Scrolls so that `row` is at `position`. Heights measured afterwards do not move the row: the list
    /// holds it in place until it and the rows around it are measured (or the user scrolls). Rows take
    /// their new interface states at the next frame, like every scroll.
    /// - Thread: main
    @MainActor
    public func scroll(to row: Int, at position: ListScrollPosition, animated: Bool) {
        UIThread.precondition("ListNode.scroll(to:at:animated:)")
        Contract.require(row >= 0 && row < geometry.count, "ListNode.scroll(to:): row \(row) out of 0..<\(geometry.count)")
        scroll(toTarget: .row(row, position), animated: animated)
    }

    /// Scrolls to `contentOffset` (clamped to the content). - Thread: main
    @MainActor
    public func setContentOffset(_ contentOffset: Double, animated: Bool) {
        UIThread.precondition("ListNode.setContentOffset")
        guard contentOffset.isFinite else { return }
        scroll(toTarget: .offset(contentOffset), animated: animated)
    }

    /// Scrolls to the first or last row. - Thread: main
    @MainActor
    public func scrollToEdge(end: Bool, animated: Bool) {
        UIThread.precondition("ListNode.scrollToEdge")
        scroll(toTarget: end ? .end : .start, animated: animated)
    }

    /// Flings the list at `velocity` points a second (positive: towards the end), as a touch released
    /// at that speed would: the list glides on from its frame time, slowing at
    /// `physics.decelerationRate`, and a glide that runs past an edge springs back to it
    /// (`physics.bounceFrequency`), as a touch fling does. An overscrolled list springs back, carried
    /// by `velocity`. Every step is a closed form of frame time, so a virtual clock drives it exactly.
    ///
    /// It replaces whatever moved the list by itself (an animated scroll, a glide, the wheel); a touch
    /// that lands on the list stops it, as it stops any fling. A speed under
    /// `physics.minimumFlingVelocity` leaves the list at rest where it is. While a drag holds the list
    /// the fling is ignored (the touch decides), and so is a list without a width yet.
    ///
    /// Fallback: a NaN or infinite `velocity` moves nothing (the list keeps its current motion) and is
    /// reported once (`diagnostics`, `TesseraLog.layout`).
    /// - Thread: main
    public func fling(velocity: Double) {
        UIThread.precondition("ListNode.fling(velocity:)")
        guard velocity.isFinite else {
            reportOnce(.invalidParameter, property: "fling(velocity:)",
                       "fling(velocity: \(velocity)) is not a speed; ignored, the list keeps its motion")
            return
        }
        guard isReady, !isDragging else { return }
        heldTarget = nil
        wheelSamples.removeAll()
        startMotionAfterRelease(velocity: velocity, at: now)
    }

    func scroll(toTarget target: ScrollTarget, animated: Bool) {
        heldTarget = nil
        if animated {
            motion = .animating(start: now, from: offset, target: target, duration: physics.animationDuration)
            return
        }
        motion = .idle
        offset = resolve(target)
        if case .row = target { heldTarget = target }
        if stacksFromBottom { isPinnedToBottom = offset >= maximumOffset - 0.5 }
    }

    /// The offset a target stands for now.
    func resolve(_ target: ScrollTarget) -> Double {
        switch target {
        case .offset(let y):
            return clamped(y)
        case .start:
            return minimumOffset
        case .end:
            return max(minimumOffset, maximumOffset)
        case let .row(row, position):
            guard geometry.count > 0 else { return clamped(offset) }
            let index = min(max(0, row), geometry.count - 1)
            let top = geometry.offset(ofRow: index)
            let height = geometry.heights[index]
            let viewport = viewportLength
            switch position {
            case .top:
                return clamped(top)
            case .center:
                return clamped(top + height / 2 - viewport / 2)
            case .bottom:
                return clamped(top + height - viewport)
            case .visible:
                if top < offset || height > viewport { return clamped(top) }
                if top + height > offset + viewport { return clamped(top + height - viewport) }
                return clamped(offset)
            }
        }
    }

    // MARK: Motion

    var isDragging: Bool {
        if case .dragging = motion { return true }
        return false
    }

    /// Evaluates the motion at `time`.
    func advanceMotion(to time: Double) {
        var track = motionTrack()
        let arrived = track.advance(to: time)
        // The wheel's samples go once its glide has begun (or the wheel motion has ended).
        if case .wheeling = motion, !{ if case .wheeling = track.motion { true } else { false } }() {
            wheelSamples.removeAll()
        }
        motion = track.motion
        offset = track.offset
        if let arrived, case .row = arrived { heldTarget = arrived }
    }

    /// The motion as it stands, with what it needs to go on by itself: a value the compositor can
    /// run to any later time (`ListMotionTrack.offset(at:)`).
    func motionTrack() -> ListMotionTrack {
        var destination: Double?
        if case let .animating(_, _, target, _) = motion { destination = resolve(target) }
        return ListMotionTrack(motion: motion, offset: offset, physics: physics, lower: minimumOffset,
                               upper: max(minimumOffset, maximumOffset), destination: destination)
    }

    /// Hands the motion to the compositor as an animation of the content layer's y, so that a frame
    /// drawn while this thread is busy shows where the scroll has got to; none while the list is at
    /// rest or follows a drag.
    func updateContentAnimation() {
        guard let contentLayer else { return }
        // The wheel moves the content on a compositor thread at once, within these bounds.
        // (Not for pages: the wheel turns a whole page, animated, which the list hands over itself.)
        let binding = isReady && !isPagingEnabled ? layerIfLoaded.map { layer in
            ScrollBinding(viewport: layer.frameInRoot, lower: minimumOffset, upper: max(minimumOffset, maximumOffset),
                          wheelStep: wheelStep, isHorizontal: isHorizontal)
        } : nil
        if contentLayer.scrollBinding != binding { contentLayer.scrollBinding = binding }
        guard isMovingByItself else {
            if !contentLayer.animations.isEmpty { contentLayer.animations = [] }
            return
        }
        contentLayer.animations = [motionTrack().contentAnimation(isHorizontal ? .originX : .originY, from: now)]
    }

    func startMotionAfterRelease(velocity: Double, at time: Double) {
        if isPagingEnabled, let page = pageAfterRelease(velocity: velocity) {
            motion = .animating(start: time, from: offset, target: .row(page, .top), duration: physics.animationDuration)
            return
        }
        let lower = minimumOffset
        motion = ListMotionTrack.motionAfterRelease(at: offset, velocity: velocity, lower: lower,
                                                    upper: max(lower, maximumOffset), physics: physics, time: time)
    }

    /// Points a second past which a release turns the page whatever the distance dragged.
    static let pageFlickVelocity = 300.0

    /// The row a paging list comes to rest at after a release with `velocity`: the next one in the
    /// direction of a flick, else the one whose larger part shows. Nil for a list without rows.
    func pageAfterRelease(velocity: Double) -> Int? {
        guard geometry.count > 0 else { return nil }
        let position = min(max(offset, 0), max(0, geometry.totalHeight - 1))
        guard let row = geometry.row(containing: position) else { return nil }
        let start = geometry.offset(ofRow: row)
        let length = geometry.heights[row]
        let fraction = length > 0 ? (position - start) / length : 0
        var page = row
        if velocity > Self.pageFlickVelocity, fraction > 0 || offset > start {
            page = row + 1
        } else if velocity < -Self.pageFlickVelocity {
            page = row
        } else if fraction > 0.5 {
            page = row + 1
        }
        return min(max(0, page), geometry.count - 1)
    }

    /// The page a paging list is on, or heading to (an animated scroll's row). Nil without rows.
    var currentPageTarget: Int? {
        if case let .animating(_, _, .row(row, _), _) = motion { return row }
        guard geometry.count > 0 else { return nil }
        let position = clamped(offset) + viewportLength / 2
        return geometry.row(containing: max(0, position))
    }

    /// Moves a paging list by `pages` (animated), from the page it is heading to.
    func turnPage(by pages: Int) {
        guard let current = currentPageTarget else { return }
        let page = min(max(0, current + pages), geometry.count - 1)
        scroll(toTarget: .row(page, .top), animated: true)
    }

    // MARK: Touches

    func handlePan(_ pan: PanGestureRecognizer) {
        let time = pan.lastTouch?.timestamp ?? now
        let lower = minimumOffset, upper = max(lower, maximumOffset)
        let translation = mainCoordinate(of: pan.translation(in: nil))
        switch pan.state {
        case .began:
            heldTarget = nil
            let raw = physics.unbanded(offset, lower: lower, upper: upper, dimension: viewportLength)
            motion = .dragging(origin: raw + translation)
        case .changed:
            guard case .dragging(let origin) = motion else { return }
            offset = physics.rubberBanded(origin - translation, lower: lower, upper: upper, dimension: viewportLength)
        case .ended:
            guard isDragging else { return }
            startMotionAfterRelease(velocity: -mainCoordinate(of: pan.velocity), at: time)
        case .cancelled, .failed:
            guard isDragging else { return }
            startMotionAfterRelease(velocity: 0, at: time)
        case .possible, .recognized:
            break
        }
    }

    /// A touch that lands on a moving list stops it where it is (and does not select a row).
    func touchDidBegin(at time: Double) {
        // A press stops a moving list where the screen showed it at the press: its motion is run to
        // the press's time first (a compositor thread may have drawn it on since this thread's frame).
        if isMovingByItself, time.isFinite, time > now { advanceMotion(to: time) }
        if isMovingByItself {
            motion = .idle
            touchStoppedScrolling = true
        } else {
            touchStoppedScrolling = false
        }
        wheelSamples.removeAll()
        heldTarget = nil
    }

    /// True while the list moves with no touch holding it: a fling, a bounce, an animated scroll, the
    /// wheel and its glide.
    var isMovingByItself: Bool {
        switch motion {
        case .decelerating, .bouncing, .animating, .wheeling: return true
        case .idle, .dragging: return false
        }
    }

    /// A touch that starts on row content while the list moves by itself is the list's: it stops the
    /// list, as a scroll view's does, and the content (a link) never sees it. - Thread: main
    @MainActor
    func interceptsTouch(startingOn node: Node) -> Bool {
        isMovingByItself
    }

    /// A touch that held the list (after stopping it) let go: an overscrolled list springs back.
    func touchDidEnd(at time: Double) {
        if case .idle = motion { startMotionAfterRelease(velocity: 0, at: time) }
    }

    func handleTap(at point: Point) {
        guard !touchStoppedScrolling, let row = row(at: point) else { return }
        onSelectRow?(row)
        if let onSelectRowAtPoint {
            let frame = frameOfRow(row)
            let main = mainCoordinate(of: point) + offset
            let local = isHorizontal ? Point(x: main - frame.minX, y: point.y) : Point(x: point.x, y: main - frame.minY)
            onSelectRowAtPoint(row, local)
        }
    }

    // MARK: Wheel and keys

    /// `scrollWheel(dx:dy:at:)` at the time of the list's latest frame. - Thread: main
    @MainActor
    public func scrollWheel(dx: Double, dy: Double) -> Bool {
        UIThread.precondition("ListNode.scrollWheel")
        return scrollWheel(dx: dx, dy: dy, at: now)
    }

    /// Scrolls by the wheel's motion (`wheelStep` points a unit) at once, clamped to the content,
    /// stopping any fling; only vertical motion counts (false for none, so the host passes it on).
    ///
    /// Consecutive events build a velocity: the distance moved by the events of the last tenth of a
    /// second over the time they span (events of one frame count as one). When no event has come for
    /// `physics.wheelInertiaDelay`, the list glides on from that velocity and slows at
    /// `physics.wheelDecelerationRate`; a lone event, events further apart than a tenth of a second,
    /// a turn the other way or an event the edge cut short leave no glide. Times are frame times (the
    /// host passes its own), so the motion is the same on a virtual clock. The wheel does nothing while
    /// a drag holds the list. - Thread: main
    @MainActor
    public func scrollWheel(dx: Double, dy: Double, at time: Double) -> Bool {
        UIThread.precondition("ListNode.scrollWheel(dx:dy:at:)")
        // Along the axis: a horizontal list takes the wheel's horizontal motion (positive: to the
        // right, towards its end), else its vertical motion as a vertical list does.
        let horizontalMotion = isHorizontal && dx.isFinite && dx != 0
        let amount = horizontalMotion ? -dx : dy
        guard isReady, amount.isFinite, amount != 0 else { return false }
        if isDragging { return true }
        if isPagingEnabled {
            // A page a wheel step; a touchpad's fractions add up within a step.
            turnPage(by: amount < 0 ? 1 : -1)
            return true
        }
        // A motion running by itself is taken to the event's time first: the wheel stops it where it
        // was then (where a compositor thread showed it when it read the event), not where this
        // thread last saw it.
        if time.isFinite, time > now, isMovingByItself { advanceMotion(to: time) }
        heldTarget = nil
        let requested = -amount * wheelStep
        let start = clamped(offset)
        offset = clamped(start + requested)
        let moved = offset - start
        let eventTime = time.isFinite ? max(time, wheelSamples.last?.time ?? time) : now
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
        return true
    }

    /// How far back, in seconds, the wheel's velocity looks.
    static let wheelVelocityWindow = 0.1

    /// Scrolls for a key: ↑/↓ by `keyStep`, Page Up/Down (and Space, Shift-Space) by a screenful less a
    /// step, Home and End to the first and last row, each animated. Repeated keys add up. Returns false
    /// for keys the list does not use. - Thread: main
    @MainActor
    public func handleKey(_ key: Key, modifiers: KeyModifiers = []) -> Bool {
        UIThread.precondition("ListNode.handleKey")
        guard isReady else { return false }
        let page = max(viewportLength / 2, viewportLength - keyStep)
        if isPagingEnabled {
            switch key {
            case .left, .up, .pageUp: turnPage(by: -1)
            case .right, .down, .pageDown, .space: turnPage(by: modifiers.contains(.shift) && key == .space ? -1 : 1)
            case .home: scroll(toTarget: .start, animated: true)
            case .end: scroll(toTarget: .end, animated: true)
            default: return false
            }
            return true
        }
        if isHorizontal {
            switch key {
            case .left: scrollAnimated(by: -keyStep); return true
            case .right: scrollAnimated(by: keyStep); return true
            case .up, .down: return false
            default: break
            }
        }
        switch key {
        case .up: scrollAnimated(by: -keyStep)
        case .down: scrollAnimated(by: keyStep)
        case .pageUp: scrollAnimated(by: -page)
        case .pageDown: scrollAnimated(by: page)
        case .space: scrollAnimated(by: modifiers.contains(.shift) ? -page : page)
        case .home: scroll(toTarget: .start, animated: true)
        case .end: scroll(toTarget: .end, animated: true)
        default: return false
        }
        return true
    }

    /// Animates by `delta` from where a running animation is heading (so repeated keys accumulate).
    private func scrollAnimated(by delta: Double) {
        var base = clamped(offset)
        if case let .animating(_, _, target, _) = motion { base = resolve(target) }
        scroll(toTarget: .offset(base + delta), animated: true)
    }
}

/// One wheel event's motion, for the wheel's velocity.
/// - Thread: main (a value the list keeps)
struct WheelSample {
    /// The frame time of the event.
    var time: Double
    /// Points the offset moved (positive towards the end).
    var delta: Double
}

/// A list's scroll motion as a value: where it is, how it moves (a fling, a bounce, an animated
/// scroll, the glide after the wheel) and the bounds it moves in. Each step is a closed form of time
/// from the motion's start, so running a copy to any time gives the offset the list itself reaches
/// then: the list runs it every frame, and the compositor runs a copy between the list's frames.
/// - Thread: any (a value)
struct ListMotionTrack: Sendable {
    var motion: ScrollMotion
    var offset: Double
    let physics: ScrollPhysics
    /// The smallest and largest offsets at rest.
    let lower: Double
    let upper: Double
    /// Where an animated scroll ends.
    let destination: Double?

    /// What a release at `position` with `velocity` starts: a bounce back from past an edge, a fling
    /// fast enough to glide, or rest.
    static func motionAfterRelease(at position: Double, velocity: Double, lower: Double, upper: Double,
                                   physics: ScrollPhysics, time: Double) -> ScrollMotion {
        if position < lower || position > upper {
            return .bouncing(start: time, origin: position, velocity: velocity, towardsEnd: position > upper)
        }
        if abs(velocity) >= physics.minimumFlingVelocity {
            return .decelerating(start: time, origin: position, velocity: velocity, decelerationRate: physics.decelerationRate)
        }
        return .idle
    }

    /// The motion as a layer animation of `property` (a content layer's origin, which sits at minus
    /// the offset) from `start` on: the compositor runs a copy to each frame's time.
    func contentAnimation(_ property: LayerAnimation.Property, from start: Double) -> LayerAnimation {
        let track = self
        return LayerAnimation(property, start: start, end: .infinity) { time in
            var copy = track
            _ = copy.advance(to: time)
            return -copy.offset
        }
    }

    /// Moves the motion on to `time`; returns the target of an animated scroll that arrived.
    mutating func advance(to time: Double) -> ScrollTarget? {
        switch motion {
        case .idle, .dragging:
            return nil
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
            guard time >= glideStart else { return nil }
            if abs(velocity) >= physics.minimumFlingVelocity {
                motion = .decelerating(start: glideStart, origin: offset, velocity: velocity,
                                       decelerationRate: physics.wheelDecelerationRate)
                return advance(to: time)
            }
            motion = .idle
        case let .bouncing(start, origin, velocity, towardsEnd):
            let rest = towardsEnd ? upper : lower
            let (position, speed) = physics.spring(origin: origin, velocity: velocity, rest: rest, elapsed: time - start)
            if physics.springHasSettled(position: position, velocity: speed, rest: rest) {
                offset = rest
                motion = .idle
            } else {
                offset = position
            }
        case let .animating(start, from, target, duration):
            let progress = duration > 0 ? (time - start) / duration : 1
            let destination = self.destination ?? offset
            if progress >= 1 {
                offset = destination
                motion = .idle
                return target
            }
            offset = from + (destination - from) * ScrollPhysics.easeOut(progress)
        }
        return nil
    }
}
