public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The calling thread's identity, for spotting a measurement that re-enters itself.
@inline(__always)
private func currentThreadIdentity() -> UInt {
    #if canImport(Glibc)
    return UInt(pthread_self())
    #else
    return UInt(bitPattern: pthread_self())
    #endif
}

extension Node: LayoutElement {
    /// How a parent spec sizes and places this node. Setting it invalidates the layout of the node and
    /// its ancestors. Starts as the class's `LayoutStyleDefaults.defaultLayoutStyle` when it has one.
    /// - Thread: any
    public var style: LayoutStyle {
        get {
            if let style = state.withLock({ $0.layoutState.style }) { return style }
            return initializeStyle()
        }
        set {
            let changed = state.withLock { state -> Bool in
                guard state.layoutState.style != newValue else { return false }
                state.layoutState.style = newValue
                return true
            }
            if changed { setNeedsLayout() }
        }
    }

    private func initializeStyle() -> LayoutStyle {
        if let style = state.withLock({ $0.layoutState.style }) { return style }
        // The class hook runs outside the lock: node code is never called with a lock held.
        let defaults = (type(of: self) as? any LayoutStyleDefaults.Type)?.defaultLayoutStyle ?? LayoutStyle()
        return state.withLock { state in
            if let style = state.layoutState.style { return style }
            state.layoutState.style = defaults
            return defaults
        }
    }

    /// The style's width and height in points, read by the default `calculateSizeThatFits`.
    /// - Thread: any
    public var preferredSize: Size? {
        get { style.preferredSize }
        set { style.preferredSize = newValue }
    }

    /// When true, the node's subnodes follow its layout spec: each layout applied adds the nodes the
    /// spec places that are not subnodes yet (in spec order) and removes the subnodes it no longer
    /// places. The change happens when the layout is applied, on the UI thread, so a loaded node's
    /// layers change only there. Subnodes added by hand to such a node are removed at the next layout.
    /// - Thread: any
    public var automaticallyManagesSubnodes: Bool {
        get { state.withLock { $0.layoutState.automaticallyManagesSubnodes } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.layoutState.automaticallyManagesSubnodes = newValue }
                return state.layoutState.automaticallyManagesSubnodes != newValue
            }
            if changed { setNeedsLayout() }
        }
    }

    /// Measures the node as a child of a spec; `range` already includes the node's style. The layout
    /// comes from the node's cache when it holds one for `range`.
    /// - Thread: any
    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        guard let layout = cachedLayout(for: range) else {
            context.report(.cycle, LayoutDiagnostic.name(of: self),
                           "measuring it needs its own layout (its spec contains itself); it takes no space")
            return ElementLayout(size: range.min)
        }
        context.absorb(layout.diagnostics)
        return ElementLayout(size: layout.size,
                             placing: Layout.Child(node: self, frame: Rect(origin: .zero, size: layout.size), layout: layout),
                             firstBaseline: layout.firstBaseline, lastBaseline: layout.lastBaseline)
    }

    /// Measures the node for `range`, narrowed by its own style: its layout spec if it has one, else
    /// `calculateSizeThatFits`. Results are cached by range until `setNeedsLayout` (or a new size, or a
    /// change of subnodes); the result is immutable, so any thread may measure, and several threads may
    /// measure the same node at once.
    /// - Thread: any
    public func layoutThatFits(_ range: SizeRange) -> Layout {
        // The warm path: a node whose style leaves the range alone, measured for this range before.
        if !range.wasRepaired, let cached = state.withLock({ state -> Layout? in
            guard let style = state.layoutState.style, !style.constrainsSize else { return nil }
            return state.layoutCache.entries[range]
        }) {
            return cached
        }
        var range = range
        var diagnostics: [LayoutDiagnostic] = []
        if range.wasRepaired || !range.isWellFormed {
            range = SizeRange(min: range.min, max: range.max)
            diagnostics.append(LayoutDiagnostic(.invalidRange, LayoutDiagnostic.name(of: self),
                                                "asked to fit a range with a NaN, negative or inverted side; measured for \(range)"))
        }
        let style = self.style
        if style.constrainsSize {
            range = style.resolvedRange(in: range, parentSize: range.max,
                                        subject: { LayoutDiagnostic.name(of: self) }, diagnostics: &diagnostics)
        }
        guard let layout = cachedLayout(for: range) else {
            diagnostics.append(LayoutDiagnostic(.cycle, LayoutDiagnostic.name(of: self),
                                                "measuring it needs its own layout (its spec contains itself); it takes no space"))
            return Layout(size: range.min, diagnostics: diagnostics)
        }
        return diagnostics.isEmpty ? layout : layout.addingDiagnostics(diagnostics)
    }

    /// The cached layout for `range`, measuring it on a miss; nil when this thread is measuring the node
    /// already (a cycle).
    private func cachedLayout(for range: SizeRange) -> Layout? {
        enum Start {
            case cached(Layout)
            case reentered
            case measure(version: Int, baselines: (ascender: Double?, descender: Double?)?, managesSubnodes: Bool)
        }
        let thread = currentThreadIdentity()
        let start = state.withLock { state -> Start in
            if let cached = state.layoutCache.entries[range] { return .cached(cached) }
            if state.layoutState.measuringThreads.contains(thread) { return .reentered }
            state.layoutState.measuringThreads.insert(thread)
            return .measure(version: state.layoutCache.version,
                            baselines: state.layoutState.style.map { ($0.ascender, $0.descender) },
                            managesSubnodes: state.layoutState.automaticallyManagesSubnodes)
        }
        switch start {
        case .cached(let layout):
            return layout
        case .reentered:
            return nil
        case let .measure(version, baselines, managesSubnodes):
            let style = baselines ?? { let style = initializeStyle(); return (style.ascender, style.descender) }()
            let layout = calculateLayout(for: range, ascender: style.ascender, descender: style.descender,
                                         managesSubnodes: managesSubnodes)
            let replaced = state.withLock { state -> Layout? in
                state.layoutState.measuringThreads.remove(thread)
                // A layout measured across an invalidation is returned but not kept.
                guard state.layoutCache.version == version else { return nil }
                return state.layoutCache.entries.store(layout, for: range)
            }
            withExtendedLifetime(replaced) {}  // let go of here, outside the lock
            return layout
        }
    }

    private func calculateLayout(for range: SizeRange, ascender: Double?, descender: Double?,
                                 managesSubnodes: Bool) -> Layout {
        var context = LayoutContext(owner: self)
        var size: Size
        var children: [Layout.Child] = []
        var firstBaseline: Double?, lastBaseline: Double?
        if let spec = layoutSpecThatFits(range) {
            let measured = context.measure(spec, in: range, parentSize: range.max)
            size = measured.size
            children = removingRepeatsAndCycles(measured.placements, context: &context)
            firstBaseline = measured.firstBaseline
            lastBaseline = measured.lastBaseline
            if !managesSubnodes {
                for child in children {
                    guard let parent = child.node.supernode, parent !== self else {
                        if child.node.supernode == nil {
                            context.report(.notASubnode, LayoutDiagnostic.name(of: self),
                                           "its spec places \(LayoutDiagnostic.name(of: child.node)), which is not in its subtree; that frame is not applied")
                        }
                        continue
                    }
                    if !children.contains(where: { $0.node === parent }) {
                        context.report(.notASubnode, LayoutDiagnostic.name(of: self),
                                       "its spec places \(LayoutDiagnostic.name(of: child.node)), whose parent it does not place; that frame is not applied")
                    }
                }
            }
        } else {
            var proposed = calculateSize(for: range)
            let usable = { (v: Double) in v.isFinite && v >= 0 }
            if !usable(proposed.width) || !usable(proposed.height) {
                context.report(.invalidSize, LayoutDiagnostic.name(of: self),
                               "calculateSizeThatFits returned \(proposed); the range's minimum is used for that side")
                if !usable(proposed.width) { proposed.width = range.min.width }
                if !usable(proposed.height) { proposed.height = range.min.height }
            }
            size = range.clamp(proposed)
        }
        if let ascender {
            firstBaseline = context.checked(ascender, "ascender", in: LayoutDiagnostic.name(of: self))
        }
        if let descender {
            lastBaseline = size.height - context.checked(descender, "descender", in: LayoutDiagnostic.name(of: self))
        }
        return Layout(size: size, children: children, firstBaseline: firstBaseline, lastBaseline: lastBaseline,
                      diagnostics: Self.unique(context.diagnostics))
    }

    /// The placements without the later occurrences of a node named more than once (its first frame
    /// wins; the space given to the others stays empty) and without this node or its ancestors, which
    /// cannot be its subnodes.
    private func removingRepeatsAndCycles(_ placements: [Layout.Child], context: inout LayoutContext) -> [Layout.Child] {
        guard !placements.isEmpty else { return placements }
        var ancestors: [ObjectIdentifier] = []
        var current = supernode
        while let ancestor = current {
            ancestors.append(ObjectIdentifier(ancestor))
            current = ancestor.supernode
        }
        // The usual case, checked without building a new array: every node once, none of them this one
        // or an ancestor.
        if placements.count <= 16 {
            var clean = true
            for (index, child) in placements.enumerated() {
                if child.node === self || ancestors.contains(ObjectIdentifier(child.node))
                    || placements[..<index].contains(where: { $0.node === child.node }) {
                    clean = false
                    break
                }
            }
            if clean { return placements }
        }
        // A cell places a handful of nodes: searching them beats hashing; long lists use a set.
        var seen: Set<ObjectIdentifier>? = placements.count > 16 ? Set(minimumCapacity: placements.count) : nil
        var kept: [Layout.Child] = []
        kept.reserveCapacity(placements.count)
        for child in placements {
            let identity = ObjectIdentifier(child.node)
            let repeated: Bool
            if seen != nil {
                repeated = !seen!.insert(identity).inserted
            } else {
                repeated = kept.contains { $0.node === child.node }
            }
            if child.node === self || ancestors.contains(identity) {
                context.report(.cycle, LayoutDiagnostic.name(of: self),
                               "its spec names \(child.node === self ? "the node itself" : "its ancestor \(LayoutDiagnostic.name(of: child.node))"); not placed")
            } else if repeated {
                context.report(.duplicateNode, LayoutDiagnostic.name(of: self),
                               "its spec names \(LayoutDiagnostic.name(of: child.node)) twice; only the first is placed")
            } else {
                kept.append(child)
            }
        }
        return kept
    }

    /// Diagnostics in order of first appearance, each once: a child measured twice (a stack measures,
    /// then flexes) reports its problems twice.
    private static func unique(_ diagnostics: [LayoutDiagnostic]) -> [LayoutDiagnostic] {
        guard diagnostics.count > 1 else { return diagnostics }
        var seen = Set<LayoutDiagnostic>()
        return diagnostics.filter { seen.insert($0).inserted }
    }

    /// A number that changes whenever the node's cached layouts are dropped. - Thread: any
    var layoutVersion: Int { state.withLock { $0.layoutCache.version } }

    /// Drops this node's cached layouts and those of its ancestors, whose sizes may depend on it.
    /// - Thread: any
    public func setNeedsLayout() {
        var node: Node? = self
        var root = self
        while let current = node {
            current.invalidateCalculatedLayout(pending: true)
            root = current
            node = current.supernode
        }
        // A tree whose root something else places (a list's row) tells that owner, outside any lock.
        if let observer = root.state.withLock({ $0.rootLayoutInvalidationObserver }) { observer() }
        // A host at rest measures the tree at its next frame: that frame must come.
        if !UIThread.isCurrent { UIWakeup.shared.wake() }
    }

    /// Drops the cached layouts; `pending` also marks the node as waiting for a layout (see
    /// `NodeLayoutState.layoutPending`).
    func invalidateCalculatedLayout(pending: Bool = false) {
        let dropped = state.withLock { state -> [Layout] in
            state.layoutCache.version += 1
            if pending { state.layoutState.layoutPending = true }
            return state.layoutCache.entries.takeAll()
        }
        // The layouts (and nodes only they kept alive) go here, after unlocking: a node's `deinit`
        // takes locks of its own.
        withExtendedLifetime(dropped) {}
    }

    /// Applies `layout` to this node's subtree: brings the subnodes in line with it when the node
    /// manages them automatically, sets the placed subnodes' frames, calls `layout()`, then applies each
    /// subnode's layout (the one measured with this layout when its size still matches, else a new one
    /// for its current size), parents before children. Subnodes the layout does not place keep their
    /// frames.
    ///
    /// A spec may also place a subnode of a node it places (a count inside a badge's capsule): that
    /// frame is converted into its parent's coordinates. Other nodes it places are skipped.
    /// - Thread: main
    @MainActor
    public func applyLayout(_ layout: Layout) {
        applyLayout(layout, runsLayoutHooks: true)
    }

    /// Calls `layout()` on this node and its subtree, parents before children: for a container that
    /// set the frames earlier (`applyLayout(_:runsLayoutHooks: false)`) and runs the hooks once the
    /// node has entered the display state, as the lifecycle orders them. - Thread: main
    @MainActor
    func runLayoutHooks() {
        UIThread.precondition("Node.runLayoutHooks")
        for node in subtree() { node.layout() }
    }

    /// `applyLayout(_:)`, optionally without calling the `layout()` hooks (see `runLayoutHooks`).
    @MainActor
    func applyLayout(_ layout: Layout, runsLayoutHooks: Bool) {
        UIThread.precondition("Node.applyLayout")
        // A transition asked for: whoever lays the node out first (its host, its list, the
        // transition's own measurement) applies this layout as the transition, from where the
        // screen shows the subnodes now.
        if let transition = layoutTransition {
            layoutTransition = nil
            applyLayoutAsTransition(layout, transition, runsLayoutHooks: runsLayoutHooks)
            return
        }
        applyLayoutNow(layout, runsLayoutHooks: runsLayoutHooks)
    }

    /// `applyLayout(_:runsLayoutHooks:)` without a transition.
    @MainActor
    func applyLayoutNow(_ layout: Layout, runsLayoutHooks: Bool) {
        // The frames are final now: a draw that waited for them may start (the frame setters below
        // request the draws a new size needs).
        let drawWaited = state.withLock { state -> Bool in
            defer { state.layoutState.layoutPending = false; state.display.layoutDeferrals = 0 }
            return state.layoutState.layoutPending && state.display.needsDisplay && state.display.inFlight == nil
                && state.canStartDisplay
        }
        if drawWaited && drawsContents { runtime.display.register(self) }
        if automaticallyManagesSubnodes { updateSubnodes(to: layout.children) }
        for child in layout.children {
            guard let parent = child.node.supernode else { continue }
            var frame = child.frame
            if parent !== self {
                guard let parentFrame = layout.frame(of: parent) else { continue }
                frame = frame.offsetBy(dx: -parentFrame.minX, dy: -parentFrame.minY)
            }
            if child.node.frame != frame { child.node.frame = frame }
        }
        if runsLayoutHooks { self.layout() }
        let placed: [ObjectIdentifier: Layout]? = layout.children.count > 8
            ? Dictionary(layout.children.map { (ObjectIdentifier($0.node), $0.layout) }, uniquingKeysWith: { a, _ in a })
            : nil
        for subnode in subnodes {
            let measured = placed.map { $0[ObjectIdentifier(subnode)] }
                ?? layout.children.first { $0.node === subnode }?.layout
            if let measured, measured.size == subnode.frame.size {
                subnode.applyLayout(measured, runsLayoutHooks: runsLayoutHooks)
            } else {
                subnode.applyLayout(subnode.layoutThatFits(.exactly(subnode.frame.size)), runsLayoutHooks: runsLayoutHooks)
            }
        }
    }

    /// Measures for exactly the node's current size and applies the result. - Thread: main
    @MainActor
    public func layoutIfNeeded() {
        applyLayout(layoutThatFits(.exactly(frame.size)))
    }

    /// Measures the subtree on a background queue, then applies the whole result on the UI thread in one
    /// main-queue item, so it appears in one frame. When the node's layout was invalidated meanwhile,
    /// the result is applied all the same (it is newer than what is shown) and the subtree is measured
    /// again: a tree that some node invalidates every frame still gets every size it measures, one
    /// measurement late, rather than none. The node takes the measured size (its origin stays).
    /// - Parameters:
    ///   - range: the range to fit; nil: exactly the node's current size (a node resized before the
    ///     result lands is measured again at its new size, and the older result is not applied).
    ///   - completion: runs on the UI thread after the layout is applied.
    /// - Thread: any
    public func layoutInBackground(for range: SizeRange? = nil, completion: (() -> Void)? = nil) {
        let followsFrame = range == nil
        let measuredSize = frame.size
        let range = range ?? .exactly(measuredSize)
        // The node is measured on the background queue (allowed on any thread) and handed back to the
        // UI thread with its layout; the completion only ever runs there.
        let node = UncheckedSendable(self)
        let done = UIThreadBound(completion)
        let mainQueue = runtime.mainQueue
        Self.backgroundLayouts.enter()
        Self.backgroundLayoutQueue.async {
            defer { Self.backgroundLayouts.leave() }
            let version = node.value.layoutVersion
            let result = UIThreadBound((node.value, node.value.layoutThatFits(range)))
            mainQueue.enqueue {
                let (target, layout) = result.value
                // Measured for the frame the node had then; resized since (a window resize laid it
                // out already), that layout is for a size it no longer has: measure again instead.
                if followsFrame && target.frame.size != measuredSize {
                    target.layoutInBackground(completion: done.value)
                    return
                }
                let invalidatedMeanwhile = target.layoutVersion != version
                if target.frame.size != layout.size {
                    target.frame = Rect(origin: target.frame.origin, size: layout.size)
                }
                target.applyLayout(layout)
                guard !invalidatedMeanwhile else {
                    target.layoutInBackground(for: range, completion: done.value)
                    return
                }
                done.value?()
            }
        }
    }

    /// Where `layoutInBackground` measures: concurrent, so separate trees measure in parallel; tests
    /// wait for it with a barrier.
    static let backgroundLayoutQueue = DispatchQueue(label: "tessera.layout", qos: .userInitiated, attributes: .concurrent)
    /// The measurements `layoutInBackground` has running (until each has posted its result), so a host
    /// can wait for them when it settles.
    static let backgroundLayouts = DispatchGroup()

    /// Adds the nodes `children` places that are not subnodes yet and removes the subnodes it does not
    /// place. Subnodes that stay keep their order (moving one would reload its layer); new ones go
    /// after the nearest preceding placed node. A placed node whose parent is another placed node stays
    /// with that parent.
    private func updateSubnodes(to children: [Layout.Child]) {
        let placed = Set(children.map { ObjectIdentifier($0.node) })
        var desired: [Node] = []
        var desiredIdentities = Set<ObjectIdentifier>()
        for child in children {
            if let parent = child.node.supernode, parent !== self, placed.contains(ObjectIdentifier(parent)) { continue }
            if desiredIdentities.insert(ObjectIdentifier(child.node)).inserted { desired.append(child.node) }
        }
        for subnode in subnodes where !desiredIdentities.contains(ObjectIdentifier(subnode)) {
            subnode.removeFromSupernode(invalidatesLayout: false)
        }
        var current = subnodes
        var position = 0
        for node in desired {
            if let index = current.firstIndex(where: { $0 === node }) {
                position = index + 1
            } else if insertSubnode(node, at: position, invalidatesLayout: false) {
                position += 1
                current = subnodes
            } else {
                _ = LayoutDiagnostic(.cycle, LayoutDiagnostic.name(of: self),
                                     "cannot add \(LayoutDiagnostic.name(of: node)) as a subnode: it is this node or an ancestor")
            }
        }
    }
}
