public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

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

    /// Held once reached while the rows around it are measured (a row, or the end: rows measured at
    /// another height than their estimates must not move it, nor leave the list past its end).
    var isHeld: Bool {
        switch self {
        case .row, .end: return true
        case .offset, .start: return false
        }
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
        // Reduced motion (`Appearance.reducedMotion`): an animated scroll jumps.
        if animated && !runtime.appearance.reducedMotion {
            animate(to: target, duration: physics.animationDuration)
            return
        }
        motion = .idle
        offset = resolve(target)
        if target.isHeld { heldTarget = target }
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

    /// Eases from where the list is to `target` over `duration`, re-aiming at the target every frame
    /// (heights measured on the way move a row's offset).
    func animate(to target: ScrollTarget, duration: Double) {
        motion = .animating(start: now, from: offset, to: resolve(target), duration: duration)
        animationTarget = target
    }

    // MARK: Motion

    var isDragging: Bool { motion.isDragging }

    /// Evaluates the motion at `time`: the motion running by itself, which is no change of the
    /// list's own (the compositor runs the same copy).
    func advanceMotion(to time: Double) {
        var track = motionTrack()
        let arrived = track.advance(to: time)
        let target = animationTarget
        adopt(track)
        if arrived, let target, target.isHeld { heldTarget = target }
    }

    /// Takes `track`'s position and motion as the list's own, without counting it as a change of the
    /// list's (`scrollHandoff`): the motion ran in time, or the compositor thread moved it.
    func adopt(_ track: ScrollTrack) {
        runsTrack = true
        defer { runsTrack = false }
        offset = track.offset
        motion = track.motion
        wheelSamples = track.wheelSamples
        if case .animating = motion {} else { animationTarget = nil }
    }

    /// `physics` as the appearance has it: with `reducesMotion` under `Appearance.reducedMotion`.
    var effectivePhysics: ScrollPhysics {
        var physics = self.physics
        if runtime.appearance.reducedMotion { physics.reducesMotion = true }
        return physics
    }

    /// The motion as it stands, with what it needs to go on by itself: a value the compositor can
    /// run to any later time (`ScrollTrack.offset(at:)`). An animated scroll aims at its target as
    /// resolved now.
    func motionTrack() -> ScrollTrack {
        if case let .animating(start, from, to, duration) = motion, let animationTarget {
            let destination = resolve(animationTarget)
            if destination != to {
                runsTrack = true
                motion = .animating(start: start, from: from, to: destination, duration: duration)
                runsTrack = false
            }
        }
        return ScrollTrack(motion: motion, offset: offset, time: now, physics: effectivePhysics, lower: minimumOffset,
                           upper: max(minimumOffset, maximumOffset), wheelSamples: wheelSamples)
    }

    /// Takes over the motion the compositor thread gave the list for an event it applied itself
    /// (the wheel over the list while this thread was busy): the list is where the screen shows it,
    /// moving as it moves. False, changing nothing, when the update is not for this list's content
    /// or the list changed its motion since the snapshot the compositor thread started from; the
    /// host then gives the event to the list as usual. - Thread: main
    @MainActor
    func takeOver(_ update: ScrollUpdate) -> Bool {
        guard let contentLayer, update.layer == contentLayer.serial, update.handoff == scrollHandoff, isReady else { return false }
        heldTarget = nil
        adopt(update.track)
        return true
    }

    /// Hands the motion to the compositor as an animation of the content layer's y, so that a frame
    /// drawn while this thread is busy shows where the scroll has got to; none while the list is at
    /// rest or follows a drag.
    func updateContentAnimation() {
        guard let contentLayer else { return }
        // The wheel moves the content on a compositor thread at once, within these bounds, from the
        // list's motion. (Not for pages: the wheel turns a whole page, animated, which the list hands
        // over itself; nor while the list takes no input, when the UI thread sends it no wheel.)
        let binding = isReady && !isPagingEnabled && isUserInteractionEnabled ? layerIfLoaded.map { layer in
            ScrollBinding(viewport: layer.frameInRoot, lower: minimumOffset, upper: max(minimumOffset, maximumOffset),
                          wheelStep: wheelStep, isHorizontal: isHorizontal, track: motionTrack(), handoff: scrollHandoff)
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
            motion = .animating(start: time, from: offset, to: resolve(.row(page, .top)), duration: physics.animationDuration)
            animationTarget = .row(page, .top)
            return
        }
        let lower = minimumOffset
        motion = ScrollTrack.motionAfterRelease(at: offset, velocity: velocity, lower: lower,
                                                    upper: max(lower, maximumOffset), physics: effectivePhysics, time: time)
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
        if case .animating = motion, case let .row(row, _)? = animationTarget { return row }
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
    var isMovingByItself: Bool { motion.isMovingByItself }

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
        guard isReady, let steps = ScrollTrack.wheelSteps(dx: dx, dy: dy, horizontal: isHorizontal) else { return false }
        if isDragging { return true }
        if isPagingEnabled {
            // A page a wheel step; a touchpad's fractions add up within a step.
            turnPage(by: steps < 0 ? 1 : -1)
            return true
        }
        // The one wheel function every scroll shares (the compositor thread's too): a motion running
        // by itself is taken to the event's time first, so the wheel stops it where it was then
        // (where a compositor thread showed it when it read the event), not where this thread last
        // saw it.
        heldTarget = nil
        var track = motionTrack()
        track.applyWheel(steps: steps, stepLength: wheelStep, at: time.isFinite ? time : now)
        adopt(track)
        // The list's own change: a motion a compositor thread drives goes back to this one.
        scrollHandoff &+= 1
        return true
    }


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
        if case let .animating(_, _, to, _) = motion { base = animationTarget.map(resolve) ?? to }
        scroll(toTarget: .offset(base + delta), animated: true)
    }
}
