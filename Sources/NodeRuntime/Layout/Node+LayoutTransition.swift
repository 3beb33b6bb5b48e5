import Compositor
import Foundation

/// What a layout transition remembers of a node before the new layout: where it was in its
/// supernode, in which supernode, and what its layer showed.
private struct TransitionStart {
    let node: Node
    let supernode: Node?
    let frame: Rect
    let frameInTransition: Rect
    let contents: Bitmap?
    let background: Color?
    let cornerRadius: Double
}

extension Node {
    /// Lays the node out again for its size and animates there, as a layout transition: the new
    /// layout is measured on a background thread; then, on the UI thread, every subnode that stays
    /// slides from where it was to where the new layout puts it, subnodes the layout adds fade in
    /// (for `automaticallyManagesSubnodes`, or ones added before the call), and subnodes it removes
    /// fade out where they were. Sizes change at once (new sizes draw again); places and opacity move
    /// over `duration` seconds with the animator's ease-out, handed to the compositor like every
    /// animation. `completion` runs on the UI thread when the animation is over (at once when nothing
    /// moves). A node not showing (no layer) just lays out again.
    ///
    /// Call it after changing what `layoutSpecThatFits` returns (an "expanded" flag, a new subnode).
    /// - Thread: main
    @MainActor
    public func transitionLayout(duration: Double = 0.25, completion: (@MainActor @Sendable () -> Void)? = nil) {
        UIThread.precondition("Node.transitionLayout")
        guard isNodeLoaded else {
            setNeedsLayout()
            completion?()
            return
        }
        let size = frame.size
        let starts = transitionStarts()
        setNeedsLayout()
        let node = self
        let queue = runtime.mainQueue
        let box = UIThreadBound(starts)
        // Measured on the background layout queue (a settling host waits for it), off the UI thread;
        // applied there, whole, with the animation.
        Self.backgroundLayouts.enter()
        Self.backgroundLayoutQueue.async {
            defer { Self.backgroundLayouts.leave() }
            let layout = node.layoutThatFits(.exactly(size))
            queue.enqueue {
                node.finishTransition(to: layout, from: box.value, duration: duration, completion: completion)
            }
        }
    }

    /// Where each node of the subtree (this one's descendants) is now.
    @MainActor
    private func transitionStarts() -> [ObjectIdentifier: TransitionStart] {
        var starts: [ObjectIdentifier: TransitionStart] = [:]
        for node in subtree().dropFirst() {
            guard let layer = node.layerIfLoaded, layer.superlayer != nil else { continue }
            starts[ObjectIdentifier(node)] = TransitionStart(
                node: node, supernode: node.supernode, frame: node.frame, frameInTransition: frame(of: node),
                contents: layer.contents, background: layer.backgroundColor, cornerRadius: layer.cornerRadius)
        }
        return starts
    }

    /// `node`'s frame in this node's coordinates.
    @MainActor
    private func frame(of node: Node) -> Rect {
        var rect = node.frame
        var parent = node.supernode
        while let current = parent, current !== self {
            rect = rect.offsetBy(dx: current.frame.minX, dy: current.frame.minY)
            parent = current.supernode
        }
        return rect
    }

    @MainActor
    private func finishTransition(to layout: Layout, from starts: [ObjectIdentifier: TransitionStart], duration: Double,
                                  completion: (@MainActor @Sendable () -> Void)?) {
        guard layout.size == frame.size else {
            // Resized meanwhile: the new size's layout applies as any layout does.
            layoutIfNeeded()
            completion?()
            return
        }
        applyLayout(layout)
        let animator = runtime.animator
        var animating = false
        let current = subtree().dropFirst()
        var present = Set<ObjectIdentifier>()
        for node in current {
            let id = ObjectIdentifier(node)
            present.insert(id)
            guard let layer = node.layerIfLoaded else { continue }
            if let start = starts[id] {
                // Stayed: slides from its old place (in the same supernode), sized at once.
                guard start.supernode === node.supernode, start.frame.origin != node.frame.origin else { continue }
                animator.animate(layer, .origin(from: start.frame.origin, to: node.frame.origin), duration: duration)
                animating = true
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
            animator.animate(ghost, .opacity(from: 1, to: 0), duration: duration) { ghost.removeFromSuperlayer() }
            animating = true
        }
        guard let completion else { return }
        if animating {
            // The animator's clock: one more animation of nothing, ending with the others.
            let marker = Layer(name: "transition-end")
            animator.animate(marker, .opacity(from: 0, to: 0), duration: duration) { completion() }
        } else {
            completion()
        }
    }
}
