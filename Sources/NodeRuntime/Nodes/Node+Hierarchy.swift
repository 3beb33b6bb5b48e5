import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension Node {
    // MARK: - Hierarchy

    /// The subnodes, back to front. - Thread: any
    public var subnodes: [Node] { state.withLock { $0.subnodes } }

    /// The parent, if any. - Thread: any
    public var supernode: Node? { state.withLock { $0.supernode } }

    /// Appends `subnode` on top of the other subnodes; a node with another parent moves here. See
    /// `insertSubnode(_:at:)` for what happens when this node is loaded.
    /// - Returns: false, changing nothing, when `subnode` is this node or one of its ancestors.
    /// - Thread: any
    @discardableResult
    public func addSubnode(_ subnode: Node) -> Bool {
        insertSubnode(subnode, at: Int.max)
    }

    /// Inserts `subnode` at `index` (clamped) among the subnodes.
    ///
    /// Before this node loads, the subnode simply joins the tree and loads with it. After, on the UI
    /// thread, the subnode's layers load and it follows this node's interface state one step at a time
    /// (measure → preload → display and `didLoad` → `layout()` → visible). From another thread after
    /// load, the subnode joins the tree now and its layers and states follow at the next frame. The
    /// check for "loaded" and the insertion are one step under this node's lock, so an insertion racing
    /// the UI thread's load is either part of that load or attached at the next frame, never left
    /// without a layer.
    /// - Returns: false, changing nothing, when the insertion would make a cycle.
    /// - Thread: any
    @discardableResult
    public func insertSubnode(_ subnode: Node, at index: Int) -> Bool {
        insertSubnode(subnode, at: index, invalidatesLayout: true)
    }

    /// `insertSubnode(_:at:)`; `invalidatesLayout: false` for the insertions a layout being applied
    /// makes (`automaticallyManagesSubnodes`), which must not ask for that layout again.
    @discardableResult
    func insertSubnode(_ subnode: Node, at index: Int, invalidatesLayout: Bool) -> Bool {
        // The cycle check, the removal from the old parent, the insertion and the `supernode` write
        // are one step of the tree lock: two threads moving nodes at once cannot put a node in two
        // parents, leave it without its `supernode`, or make a cycle.
        let change = NodeTreeLock.withLock { () -> (oldParent: Node?, oldParentLoaded: Bool, loaded: Bool)? in
            var ancestor: Node? = self
            while let current = ancestor {
                if current === subnode { return nil }
                ancestor = current.supernode
            }
            let oldParent = subnode.supernode
            let oldParentLoaded = oldParent?.state.withLock { state -> Bool in
                state.subnodes.removeAll { $0 === subnode }
                return state.isLoaded
            } ?? false
            let loaded = state.withLock { state -> Bool in
                let position = min(max(0, index), state.subnodes.count)
                state.subnodes.insert(subnode, at: position)
                return state.isLoaded
            }
            subnode.state.withLock { $0.supernode = self }
            return (oldParent, oldParentLoaded, loaded)
        }
        guard let change else { return false }
        if let oldParent = change.oldParent {
            subnode.didLeave(oldParent, parentLoaded: change.oldParentLoaded, invalidatesLayout: invalidatesLayout)
        }
        subnode.invalidateCalculatedLayout()
        // This node's size, and its ancestors', may depend on its subnodes.
        if invalidatesLayout { setNeedsLayout() }
        if change.loaded {
            runtime.mainQueue.performOrEnqueue { self.attachLoadedSubnode(subnode) }
        } else if rasterizingAncestor != nil {
            // Drawn into an ancestor's bitmap: that ancestor draws the new subnode.
            setNeedsDisplay()
        }
        return true
    }

    /// Brings a subnode of this loaded node into the layer tree and into this node's interface state,
    /// in lifecycle order; does nothing if it is no longer a subnode.
    @MainActor
    private func attachLoadedSubnode(_ subnode: Node) {
        guard subnode.supernode === self, let layer = loadedLayer else { return }
        if isRasterizedByAncestor || isRasterizing {
            setNeedsDisplay()
            subnode.enterInterfaceState(interfaceState)
            return
        }
        let attach = { [self] in
            let kept = subnode.layerIfLoaded != nil
            let sublayer = subnode.layer  // loads the subtree (didLoad) if it has not loaded yet
            // A layer kept from before (the node was drawn by a rasterizing ancestor meanwhile, whose
            // redraws took its changes instead of its layer) takes the node's state as it is now.
            if kept { subnode.applyLayerStateInSubtree() }
            let position = layerPosition(for: subnode, in: layer)
            if sublayer.superlayer === layer {
                // Moved within this node (to the top, say): the layer takes its new place too.
                guard layer.sublayers.firstIndex(where: { $0 === sublayer }) != position else { return }
                sublayer.removeFromSuperlayer()
                layer.insertSublayer(sublayer, at: layerPosition(for: subnode, in: layer))
                return
            }
            layer.insertSublayer(sublayer, at: position)
        }
        let target = interfaceState
        defer {
            subnode.joinHostFramesInSubtree()
            subnode.registerWaitingDisplaysInSubtree()
        }
        // A node moved here from a parent in other states first leaves those this one does not have
        // (visible, then display, then preload, each with its exit hook); it enters the rest below.
        let kept = subnode.interfaceState.intersection(target)
        if kept != subnode.interfaceState { subnode.setInterfaceState(kept) }
        if subnode.interfaceState == target {
            // A presenter already took it through the states (and laid it out): only the layer joins.
            attach()
        } else if target.contains(.display) {
            // Entering display loads the layers; they join this layer before layout and visibility.
            subnode.enterInterfaceState(target) {
                attach()
                if !subnode.frame.sanitized.isEmpty { subnode.layoutIfNeeded() }
            }
        } else {
            subnode.enterInterfaceState(target)
            attach()
        }
    }

    /// Where `subnode`'s layer goes among `layer`'s sublayers: right after the layer of the nearest
    /// subnode before it whose layer is there (subnodes whose layers have not joined yet, from another
    /// thread's changes, are skipped), so the layers keep the subnodes' order whatever order the
    /// changes land in.
    @MainActor
    private func layerPosition(for subnode: Node, in layer: Layer) -> Int {
        let siblings = subnodes
        guard let index = siblings.firstIndex(where: { $0 === subnode }) else { return layer.sublayers.count }
        let sublayers = layer.sublayers
        for earlier in siblings[..<index].reversed() {
            guard let earlierLayer = earlier.loadedLayer, earlierLayer.superlayer === layer,
                  let found = sublayers.firstIndex(where: { $0 === earlierLayer }) else { continue }
            let own = sublayers.firstIndex(where: { $0 === subnode.loadedLayer })
            // Counted without this subnode's own layer, which leaves its place before it is inserted.
            return own.map { $0 < found ? found : found + 1 } ?? found + 1
        }
        return 0
    }

    /// Detaches the node from its parent. Leaving the hierarchy ends its interface states and cancels its
    /// draws. From another thread while the parent is loaded, the node leaves the tree now and its
    /// layer and states follow at the next frame.
    /// - Thread: any
    public func removeFromSupernode() {
        removeFromSupernode(invalidatesLayout: true)
    }

    /// `removeFromSupernode()`; `invalidatesLayout: false` for the removals a layout being applied
    /// makes.
    func removeFromSupernode(invalidatesLayout: Bool) {
        let removed = NodeTreeLock.withLock { () -> (parent: Node, loaded: Bool)? in
            guard let parent = supernode else { return nil }
            let loaded = parent.state.withLock { state -> Bool in
                state.subnodes.removeAll { $0 === self }
                return state.isLoaded
            }
            state.withLock { $0.supernode = nil }
            return (parent, loaded)
        }
        guard let removed else { return }
        didLeave(removed.parent, parentLoaded: removed.loaded, invalidatesLayout: invalidatesLayout)
    }

    /// What follows a node leaving `parent` (removed, or moved to another parent): its draw in flight
    /// is cancelled, its layer and states follow on the UI thread, and the parent is measured and
    /// (when it is drawn into a rasterizing ancestor's bitmap) drawn again.
    private func didLeave(_ parent: Node, parentLoaded: Bool, invalidatesLayout: Bool) {
        cancelDisplay()
        if parentLoaded {
            runtime.mainQueue.performOrEnqueue { self.detachFromLoadedParent(parent) }
        } else if parent.rasterizingAncestor != nil {
            parent.setNeedsDisplay()
        }
        // The parent's size, and its ancestors', may have depended on this node.
        if invalidatesLayout { parent.setNeedsLayout() } else { parent.invalidateCalculatedLayout() }
    }

    /// Ends the states and detaches the layer of a node that left `parent`, unless it has come back.
    @MainActor
    private func detachFromLoadedParent(_ parent: Node) {
        guard supernode !== parent else { return }
        // A node moved to another loaded parent takes that parent's state when it attaches there.
        if !(supernode?.isNodeLoaded ?? false) { setInterfaceState([]) }
        if let layer = loadedLayer, layer.superlayer === parent.loadedLayer { layer.removeFromSuperlayer() }
        if parent.isRasterizing || parent.isRasterizedByAncestor { parent.setNeedsDisplay() }
    }

    /// Every node of the subtree, this one first, then each subnode's subtree in order (pre-order).
    /// - Thread: any
    public func subtree() -> [Node] {
        var result: [Node] = []
        var stack: [Node] = [self]
        while let node = stack.popLast() {
            result.append(node)
            stack.append(contentsOf: node.subnodes.reversed())
        }
        return result
    }
}

/// The one lock that orders changes to the node hierarchy (see `Node.insertSubnode(_:at:)`). It is
/// the only lock held while node locks are taken: those are taken one at a time inside it, and it is
/// never taken inside one, so the order is always this lock, then a node's. Nothing calls out while
/// holding it.
/// - Thread: any
enum NodeTreeLock {
    private static let lock = PlatformLock()

    static func withLock<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
