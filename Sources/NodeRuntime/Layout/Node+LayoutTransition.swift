import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A layout transition asked for and not yet applied: how long it animates and who waits for it.
/// - Thread: main (the node keeps it)
struct LayoutTransitionRequest {
    var duration: Double
    var completions: [@MainActor @Sendable () -> Void]
}

/// What a layout transition remembers of a node before the new layout: where the screen shows it
/// (its layer's place, mid-animation included), in which supernode, and what its layer showed.
private struct TransitionStart {
    let node: Node
    let supernode: Node?
    let origin: Point
    let opacity: Double
    let frameInTransition: Rect
    let contents: Bitmap?
    let background: Color?
    let cornerRadius: Double
}

extension Node {
    /// Lays the node out again for its size and animates there, as a layout transition: the new
    /// layout is measured off the UI thread, once (the host's or the list's own layout of the tree
    /// is the same measurement, and whichever applies it first applies it as the transition); then,
    /// on the UI thread, every subnode that stays slides from where the screen shows it to where the
    /// new layout puts it, subnodes the layout adds fade in (for `automaticallyManagesSubnodes`, or
    /// ones added before the call), and subnodes it removes fade out where they were. Sizes change at
    /// once (new sizes draw again); places and opacity move over `duration` seconds with the
    /// animator's ease-out, handed to the compositor like every animation. `completion` runs on the
    /// UI thread when the animation is over (at once when nothing moves). A node not showing (no
    /// layer) just lays out again.
    ///
    /// A transition that interrupts another starts from where the boxes are at that moment, not
    /// from where the first was taking them, and the newest always ends where the layout puts each
    /// box. Call it after changing what `layoutSpecThatFits` returns (an "expanded" flag, a new subnode).
    /// - Thread: main
    @MainActor
    public func transitionLayout(duration: Double = 0.25, completion: (@MainActor @Sendable () -> Void)? = nil) {
        UIThread.precondition("Node.transitionLayout")
        guard isNodeLoaded else {
            setNeedsLayout()
            completion?()
            return
        }
        var request = layoutTransition ?? LayoutTransitionRequest(duration: duration, completions: [])
        request.duration = duration
        if let completion { request.completions.append(completion) }
        layoutTransition = request
        setNeedsLayout()
        // Measured on the background layout queue (a settling host waits for it), off the UI thread,
        // and applied through `applyLayout`, which runs the transition, unless the node's host or
        // list has laid the node out by then.
        let size = frame.size
        let node = UncheckedSendable(self)
        let queue = runtime.mainQueue
        Self.backgroundLayouts.enter()
        Self.backgroundLayoutQueue.async {
            defer { Self.backgroundLayouts.leave() }
            let layout = UIThreadBound(node.value.layoutThatFits(.exactly(size)))
            queue.enqueue {
                let target = node.value
                guard target.layoutTransition != nil else { return }
                guard layout.value.size == target.frame.size else {
                    // Resized meanwhile: the new size's layout applies (as the transition) instead.
                    target.layoutIfNeeded()
                    return
                }
                target.applyLayout(layout.value)
            }
        }
    }

    /// Applies `layout` as the transition `request` asks: the subnodes start from where the screen
    /// shows them now and move to where `layout` puts them.
    @MainActor
    func applyLayoutAsTransition(_ layout: Layout, _ request: LayoutTransitionRequest, runsLayoutHooks: Bool) {
        let starts = transitionStarts()
        applyLayoutNow(layout, runsLayoutHooks: runsLayoutHooks)
        let animator = runtime.animator
        let duration = request.duration
        var animating = false
        let current = subtree().dropFirst()
        var present = Set<ObjectIdentifier>()
        for node in current {
            let id = ObjectIdentifier(node)
            present.insert(id)
            guard let layer = node.layerIfLoaded else { continue }
            if let start = starts[id] {
                // Stayed in the same supernode: slides from where it shows to its new place, sized at
                // once; one that is already there stops any slide of an earlier transition there.
                guard start.supernode === node.supernode else { continue }
                let end = node.frame.origin
                if start.origin != end {
                    animator.animate(layer, .origin(from: start.origin, to: end), duration: duration)
                    animating = true
                } else {
                    animator.stop(layer, .origin(from: end, to: end))
                }
                if start.opacity != node.opacity {
                    animator.animate(layer, .opacity(from: start.opacity, to: node.opacity), duration: duration)
                    animating = true
                }
            } else if starts[ObjectIdentifier(node.supernode ?? self)] != nil || node.supernode === self {
                // New under a node that was there: fades in.
                animator.animate(layer, .opacity(from: 0, to: node.opacity), duration: duration)
                animating = true
            }
        }
        // Gone: a picture of each, where it was, fading out on this node's layer.
        for (id, start) in starts where !present.contains(id) && !(start.supernode.map { starts[ObjectIdentifier($0)] != nil
                                                                   && !present.contains(ObjectIdentifier($0)) } ?? false) {
            guard start.contents != nil || start.background != nil else { continue }
            let ghost = Layer(name: "transition-removed")
            ghost.frame = start.frameInTransition
            ghost.contents = start.contents
            ghost.backgroundColor = start.background
            ghost.cornerRadius = start.cornerRadius
            ghost.zPosition = 1
            layer.addSublayer(ghost)
            animator.animate(ghost, .opacity(from: start.opacity, to: 0), duration: duration) { ghost.removeFromSuperlayer() }
            animating = true
        }
        let completions = request.completions
        guard !completions.isEmpty else { return }
        if animating {
            // The animator's clock: one more animation of nothing, ending with the others.
            let marker = Layer(name: "transition-end")
            animator.animate(marker, .opacity(from: 0, to: 0), duration: duration) { completions.forEach { $0() } }
        } else {
            completions.forEach { $0() }
        }
    }

    /// Where each node of the subtree (this one's descendants) shows now: its layer's place and
    /// opacity as the animator has them at this frame (a slide or fade under way included).
    @MainActor
    private func transitionStarts() -> [ObjectIdentifier: TransitionStart] {
        var starts: [ObjectIdentifier: TransitionStart] = [:]
        for node in subtree().dropFirst() {
            guard let layer = node.layerIfLoaded, layer.superlayer != nil else { continue }
            let origin = layer.frame.origin.x.isFinite && layer.frame.origin.y.isFinite ? layer.frame.origin : node.frame.origin
            starts[ObjectIdentifier(node)] = TransitionStart(
                node: node, supernode: node.supernode, origin: origin, opacity: layer.opacity,
                frameInTransition: shownFrame(of: node), contents: layer.contents, background: layer.backgroundColor,
                cornerRadius: layer.cornerRadius)
        }
        return starts
    }

    /// Where `node` shows in this node's coordinates (its layers' places).
    @MainActor
    private func shownFrame(of node: Node) -> Rect {
        var rect = Rect(origin: node.layerIfLoaded?.frame.origin ?? node.frame.origin, size: node.frame.size)
        var parent = node.supernode
        while let current = parent, current !== self {
            let origin = current.layerIfLoaded?.frame.origin ?? current.frame.origin
            rect = rect.offsetBy(dx: origin.x, dy: origin.y)
            parent = current.supernode
        }
        return rect
    }
}
