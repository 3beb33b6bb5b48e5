public import Compositor

// Hover, the cursor, and containers that take touches from their content: the parts of the host's
// pointer handling that follow the event chain (`Node.eventSupernode`) rather than one touch.

/// A container that may take a touch that starts on one of its event descendants: a list that is
/// moving stops and keeps the touch, as a scroll view does, so a tap meant to stop a fling does not
/// also open the link it landed on.
/// - Thread: main
@MainActor
protocol TouchIntercepting: AnyObject {
    /// True to make this container the touched node of a touch that starts on `node`.
    func interceptsTouch(startingOn node: Node) -> Bool
}

extension NodeHost {
    /// The interactive node under the pointer while no button is down, if any: the innermost node of
    /// the hovered chain. - Thread: main
    @MainActor
    public var hoveredNode: Node? {
        UIThread.precondition("NodeHost.hoveredNode")
        return hoveredChain.first
    }

    /// The pointer's shape as last set on the backend: what the hovered chain asked for (the first
    /// non-nil `cursor(at:)` from the node under the pointer outwards), else the arrow.
    /// - Thread: main
    @MainActor
    public var cursor: Cursor {
        UIThread.precondition("NodeHost.cursor")
        return shownCursor
    }

    /// The nearest event ancestor of `node` that takes touches starting on it now, if any.
    func touchInterceptor(above node: Node) -> Node? {
        var candidate = node.eventSupernode
        while let current = candidate {
            if let container = current as? TouchIntercepting, container.interceptsTouch(startingOn: node) { return current }
            candidate = current.eventSupernode
        }
        return nil
    }

    /// Brings the hovered chain up to date with what is under the pointer and tells the nodes that
    /// left it (`pointerExited`, innermost first) and the nodes that joined it (`pointerEntered`,
    /// outermost first), then sets the cursor. Nothing changes while a button is down: the chain and
    /// the cursor stay as they were when it went down.
    func updateHover() {
        guard !isTouchDown else { return }
        hoverIsCurrent = true
        hoverChangeCount = Layer.changeCount
        var chain: [Node] = []
        if let point = pointerLocation, let hit = hitNode(at: point) {
            var node: Node? = hit
            while let current = node {
                chain.append(current)
                node = current.eventSupernode
            }
        }
        let previous = hoveredChain
        if !(previous.count == chain.count && zip(previous, chain).allSatisfy { $0 === $1 }) {
            hoveredChain = chain
            for node in previous where !chain.contains(where: { $0 === node }) { node.pointerExited() }
            for node in chain.reversed() where !previous.contains(where: { $0 === node }) { node.pointerEntered() }
        }
        toolTips.hoverChanged(chain: chain, pointer: pointerLocation)
        updateCursor()
    }

    /// Asks the hovered chain for the cursor at the pointer and gives the backend a new shape only
    /// when it changes.
    private func updateCursor() {
        var shape = Cursor.arrow
        if let point = pointerLocation {
            for node in hoveredChain {
                if let chosen = node.cursor(at: node.convertFromRoot(point)) {
                    shape = chosen
                    break
                }
            }
        }
        guard shape != shownCursor else { return }
        shownCursor = shape
        compositor.window?.setCursor(shape)
    }
}
