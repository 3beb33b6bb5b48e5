public import Compositor
import Foundation
import Synchronization

/// Insets from each edge, in points. Negative insets enlarge.
/// - Thread: any
public struct EdgeInsets: Hashable, Sendable {
    public var top: Double, left: Double, bottom: Double, right: Double
    public init(top: Double = 0, left: Double = 0, bottom: Double = 0, right: Double = 0) {
        self.top = top; self.left = left; self.bottom = bottom; self.right = right
    }
    /// The same inset on every edge.
    public init(all inset: Double) { self.init(top: inset, left: inset, bottom: inset, right: inset) }
    public static let zero = EdgeInsets()
}

/// The node's display sentinel: a counter that changes whenever drawn contents would be out of date.
/// A draw captures its value when it is queued and checks it before it starts, between phases and at
/// commit; a result whose value no longer matches is dropped, never shown.
/// - Thread: any
public final class DisplaySentinel: Sendable {
    private let counter = Atomic<UInt64>(0)
    public init() {}
    /// The current value.
    public var value: UInt64 { counter.load(ordering: .acquiring) }
    /// Invalidates every draw captured before now.
    @discardableResult
    public func bump() -> UInt64 { counter.add(1, ordering: .acquiringAndReleasing).newValue }
}

/// The base of everything drawn in Tessera: a cheap object, made, configured and measured on any thread,
/// whose layer is made lazily on the UI thread.
///
/// ## Threads
/// - Any thread: `init`, every view property (frame, colours, corners, flags), adding and removing
///   subnodes before the node is loaded, measuring, `setNeedsDisplay`, `setNeedsLayout`.
/// - Before the layer exists, property writes are kept under the node's lock and applied in one batch
///   when it loads. After load, writes on the UI thread reach the layer at once; writes from other
///   threads are queued and reach the layer at the next frame.
/// - UI thread only: `layer` (the first access loads this node's and its subnodes' layers, then calls
///   `didLoad` on each, parent first), adding and removing subnodes after load, interface states,
///   `layout()`, events.
///
/// `Node` is deliberately not `Sendable`: a draw function receives only a `Sendable` parameters value,
/// so the compiler keeps nodes out of background drawing. Nodes may still be created on one thread and
/// handed to another (`sending`), and released on any thread; their layers and textures are released on
/// the UI thread.
open class Node {
    /// Everything a node keeps under its lock.
    struct State {
        var debugName: String?
        var frame: Rect = .zero
        var backgroundColor: Color?
        var opacity = 1.0
        var isHidden = false
        var clipsToBounds = false
        var cornerRadius = 0.0
        var maskedCorners: CornerMask = .all
        var cornerRoundingMode: CornerRoundingMode = .compositorClip
        var cornerClipColor: Color?
        var zPosition = 0.0
        var isUserInteractionEnabled = false
        var hitTestSlop = EdgeInsets.zero
        var displaysAsynchronously = true
        var isDisplaySuspended = false
        var isTransactionContainer = false
        var placeholderColor: Color?
        var placeholderFadeDuration = 0.0
        var contentsCrossFadeDuration = 0.0
        var neverShowPlaceholders = false
        var shouldRasterizeDescendants = false
        var subnodes: [Node] = []
        weak var supernode: Node?
        var isLoaded = false
        var needsDisplay = false
        var hasContents = false
        var applyQueued = false
        var interfaceState: InterfaceState = []
        var displayDistance = 0.0
        var displayJob: DisplayJob?
        var layoutCache = LayoutCache()
        var layoutState = NodeLayoutState()
    }

    /// Guarded node state; every access goes through `state.withLock`.
    let state = Locked(State())
    /// Invalidates stale draws of this node.
    public let displaySentinel = DisplaySentinel()
    /// The runtime the node belongs to.
    let runtime: Runtime
    /// The loaded layer. (UI thread only)
    private var loadedLayer: Layer?
    /// Gesture recognizers attached in `didLoad`. (UI thread only)
    var gestureRecognizers: [GestureRecognizer] = []

    /// Makes a node. Cheap, and allowed on any thread: no layer is created until `layer` is read.
    /// - Thread: any
    public init() {
        self.runtime = .shared
    }

    deinit {
        displaySentinel.bump()
        state.withLock { $0.displayJob?.cancel() }
        runtime.unregisterNeedsDisplay(self)
        if let layer = loadedLayer {
            // The layer belongs to the UI thread; detach it there.
            if UIThread.isCurrent {
                layer.removeFromSuperlayer()
            } else {
                let box = UncheckedSendable(layer)
                runtime.mainQueue.enqueue { box.value.removeFromSuperlayer() }
            }
        }
    }

    // MARK: - Debugging

    /// A name for logs and the recording backend. - Thread: any
    public var debugName: String? {
        get { state.withLock { $0.debugName } }
        set { state.withLock { $0.debugName = newValue } }
    }

    // MARK: - View properties (any thread)

    /// Sets a stored property and brings the layer up to date (now on the UI thread, at the next frame
    /// from another thread, at load if not loaded).
    @inline(__always)
    func setLayerProperty<Value: Equatable>(_ keyPath: WritableKeyPath<State, Value>, _ value: Value) {
        let loaded = state.withLock { state -> Bool? in
            guard state[keyPath: keyPath] != value else { return nil }
            state[keyPath: keyPath] = value
            return state.isLoaded
        }
        if loaded == true { layerStateDidChange() }
    }

    /// Position and size in the supernode, in points. A new size redraws the contents.
    /// - Thread: any
    public var frame: Rect {
        get { state.withLock { $0.frame } }
        set {
            let (loaded, changed, sizeChanged, wantsDisplay) = state.withLock { state -> (Bool, Bool, Bool, Bool) in
                let changed = state.frame != newValue
                let sizeChanged = state.frame.size != newValue.size
                state.frame = newValue
                return (state.isLoaded, changed, sizeChanged, state.needsDisplay || state.hasContents)
            }
            // An unchanged frame leaves the layer alone (an animation may be moving it).
            if loaded && changed { layerStateDidChange() }
            if sizeChanged {
                invalidateCalculatedLayout()
                if wantsDisplay || loaded { setNeedsDisplay() }
            }
        }
    }

    /// The node's own coordinate space: origin zero, the frame's size. - Thread: any
    public var bounds: Rect { Rect(origin: .zero, size: frame.size) }

    /// Drawn under the contents. - Thread: any
    public var backgroundColor: Color? {
        get { state.withLock { $0.backgroundColor } }
        set {
            setLayerProperty(\.backgroundColor, newValue)
            if bakesBackground { setNeedsDisplay() }
        }
    }
    /// Multiplies into this node and its subnodes. - Thread: any
    public var opacity: Double {
        get { state.withLock { $0.opacity } }
        set { setLayerProperty(\.opacity, newValue) }
    }
    /// A hidden node and its subnodes are not drawn or hit. - Thread: any
    public var isHidden: Bool {
        get { state.withLock { $0.isHidden } }
        set { setLayerProperty(\.isHidden, newValue) }
    }
    /// Clips subnodes to the node's rectangle. - Thread: any
    public var clipsToBounds: Bool {
        get { state.withLock { $0.clipsToBounds } }
        set { setLayerProperty(\.clipsToBounds, newValue) }
    }
    /// Radius of the rounded corners in points. - Thread: any
    public var cornerRadius: Double {
        get { state.withLock { $0.cornerRadius } }
        set {
            setLayerProperty(\.cornerRadius, newValue)
            if cornerRoundingMode == .precomposited { setNeedsDisplay() }
        }
    }
    /// Which corners are rounded. - Thread: any
    public var maskedCorners: CornerMask {
        get { state.withLock { $0.maskedCorners } }
        set {
            setLayerProperty(\.maskedCorners, newValue)
            if cornerRoundingMode == .precomposited { setNeedsDisplay() }
        }
    }
    /// How the corners are rounded; `.precomposited` bakes them (and the background) into the drawn
    /// bitmap. - Thread: any
    public var cornerRoundingMode: CornerRoundingMode {
        get { state.withLock { $0.cornerRoundingMode } }
        set {
            setLayerProperty(\.cornerRoundingMode, newValue)
            setNeedsDisplay()
        }
    }
    /// The colour behind the node, for `.clipping` corner pieces. - Thread: any
    public var cornerClipColor: Color? {
        get { state.withLock { $0.cornerClipColor } }
        set { setLayerProperty(\.cornerClipColor, newValue) }
    }
    /// Order among siblings; higher is on top. - Thread: any
    public var zPosition: Double {
        get { state.withLock { $0.zPosition } }
        set { setLayerProperty(\.zPosition, newValue) }
    }
    /// Interactive nodes receive pointer events and can be hit; layer-backed ones (the default) only
    /// draw. - Thread: any
    public var isUserInteractionEnabled: Bool {
        get { state.withLock { $0.isUserInteractionEnabled } }
        set { state.withLock { $0.isUserInteractionEnabled = newValue } }
    }
    /// Insets of the hit area from the bounds; negative values enlarge it (a small button with a
    /// comfortable target). - Thread: any
    public var hitTestSlop: EdgeInsets {
        get { state.withLock { $0.hitTestSlop } }
        set { state.withLock { $0.hitTestSlop = newValue } }
    }

    /// True for a drawing node whose background colour and corners are baked into its bitmap.
    var bakesBackground: Bool {
        guard self is any NodeDrawing else { return false }
        return state.withLock { $0.cornerRoundingMode == .precomposited && $0.cornerRadius > 0 }
    }

    // MARK: - Loading (UI thread)

    /// True once the layer exists. - Thread: any
    public var isNodeLoaded: Bool { state.withLock { $0.isLoaded } }

    /// The node's layer. The first access loads it, and those of its subnodes, then calls `didLoad()`
    /// on each, parent first.
    /// - Thread: main. Access from another thread is a precondition failure.
    public var layer: Layer {
        UIThread.precondition("Node.layer")
        if let loadedLayer { return loadedLayer }
        var loaded: [Node] = []
        _ = loadLayerTree(into: &loaded)
        for node in loaded { node.didLoad() }
        return loadedLayer!
    }

    /// The layer if it is loaded, without loading it. - Thread: main
    public var layerIfLoaded: Layer? {
        UIThread.precondition("Node.layerIfLoaded")
        return loadedLayer
    }

    /// Creates the layers of this subtree (except below a rasterizing node), in pre-order, collecting
    /// the nodes that were loaded so `didLoad` can run after the whole tree exists.
    private func loadLayerTree(into loaded: inout [Node]) -> Layer {
        if let loadedLayer { return loadedLayer }
        let layer = Layer()
        loadedLayer = layer
        let (subnodes, rasterizes) = state.withLock { state -> ([Node], Bool) in
            state.isLoaded = true
            return (state.subnodes, state.shouldRasterizeDescendants)
        }
        applyLayerState()
        loaded.append(self)
        if !rasterizes {
            for subnode in subnodes { layer.addSublayer(subnode.loadLayerTree(into: &loaded)) }
        }
        return layer
    }

    /// Brings the layer up to date with the node's state: at once on the UI thread, else at the next frame.
    func layerStateDidChange() {
        if UIThread.isCurrent {
            applyLayerState()
            return
        }
        let shouldQueue = state.withLock { state -> Bool in
            guard !state.applyQueued else { return false }
            state.applyQueued = true
            return true
        }
        guard shouldQueue else { return }
        // The node stays alive until the write lands; the closure runs on the UI thread.
        let box = UncheckedSendable(self)
        runtime.mainQueue.enqueue { box.value.applyLayerState() }
    }

    /// Copies the state to the layer in one batch. (UI thread)
    func applyLayerState() {
        guard let layer = loadedLayer else { return }
        let snapshot = state.withLock { state -> State in
            state.applyQueued = false
            return state
        }
        layer.name = snapshot.debugName
        layer.frame = snapshot.frame
        let baked = self is any NodeDrawing && snapshot.cornerRoundingMode == .precomposited && snapshot.cornerRadius > 0
        let showsPlaceholder = !snapshot.hasContents && snapshot.placeholderColor != nil
        layer.backgroundColor = showsPlaceholder ? snapshot.placeholderColor : (baked ? nil : snapshot.backgroundColor)
        layer.opacity = snapshot.opacity
        layer.isHidden = snapshot.isHidden
        layer.clipsToBounds = snapshot.clipsToBounds
        layer.cornerRadius = snapshot.cornerRadius
        layer.maskedCorners = snapshot.maskedCorners
        layer.cornerRoundingMode = snapshot.cornerRoundingMode
        layer.cornerClipColor = snapshot.cornerClipColor
        layer.zPosition = snapshot.zPosition
    }

    // MARK: - Subclass hooks (see Node+Subclassing.swift for the list and threads)

    /// Called once, on the UI thread, after the layer exists: the place for gesture recognizers and
    /// anything that needs the layer.
    /// - Thread: main
    open func didLoad() {}

    /// The layout of the subnodes for a size range. Return nil to keep the subnodes' frames and size the
    /// node with `calculateSizeThatFits`. Build it fresh each time; do not touch layers here.
    /// - Thread: any
    open func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? { nil }

    /// The size of a node without a layout spec, for the largest size it may take.
    /// The default is the node's `preferredSize` when set, else zero (then clamped to the range).
    /// - Thread: any
    open func calculateSizeThatFits(_ constrainedSize: Size) -> Size { preferredSize ?? .zero }

    /// Called on the UI thread after a layout has set the subnodes' frames.
    /// - Thread: main
    open func layout() {}

    /// The node entered the preload range: start fetching data and decoding. - Thread: main
    open func didEnterPreloadState() {}
    /// The node left the preload range: cancel loads. - Thread: main
    open func didExitPreloadState() {}
    /// The node entered the display range; its layer is loaded and a draw is requested. - Thread: main
    open func didEnterDisplayState() {}
    /// The node left the display range; its contents are cleared. - Thread: main
    open func didExitDisplayState() {}
    /// The node is on screen. - Thread: main
    open func didEnterVisibleState() {}
    /// The node left the screen. - Thread: main
    open func didExitVisibleState() {}
    /// Called once per change of interface state, after the enter and exit hooks. - Thread: main
    open func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {}

    /// The frontmost interactive node under `point` (in this node's coordinates), or nil; see
    /// `defaultHitTest`. Containers that place nodes outside the subnode tree (a list's rows) override it
    /// to search those too. - Thread: main
    open func hitTest(_ point: Point) -> Node? { defaultHitTest(point) }

    /// A pointer went down on this interactive node. - Thread: main
    open func touchesBegan(_ touch: Touch) {}
    /// The pointer moved while down. - Thread: main
    open func touchesMoved(_ touch: Touch) {}
    /// The pointer went up. - Thread: main
    open func touchesEnded(_ touch: Touch) {}
    /// The touch was taken away (a gesture recognized, the node was removed). - Thread: main
    open func touchesCancelled(_ touch: Touch) {}

    // MARK: - Hierarchy

    /// The subnodes, back to front. - Thread: any
    public var subnodes: [Node] { state.withLock { $0.subnodes } }

    /// The parent, if any. - Thread: any
    public var supernode: Node? { state.withLock { $0.supernode } }

    /// Appends `subnode` on top of the other subnodes; a node with another parent moves here.
    /// - Returns: false, changing nothing, when `subnode` is this node or one of its ancestors.
    /// - Thread: any before this node is loaded; main after.
    @discardableResult
    public func addSubnode(_ subnode: Node) -> Bool {
        insertSubnode(subnode, at: Int.max)
    }

    /// Inserts `subnode` at `index` (clamped) among the subnodes.
    /// - Returns: false, changing nothing, when the insertion would make a cycle.
    /// - Thread: any before this node is loaded; main after.
    @discardableResult
    public func insertSubnode(_ subnode: Node, at index: Int) -> Bool {
        var ancestor: Node? = self
        while let current = ancestor {
            if current === subnode { return false }
            ancestor = current.supernode
        }
        let loaded = isNodeLoaded
        if loaded { UIThread.precondition("adding a subnode to a loaded node") }
        subnode.removeFromSupernode()
        let (interfaceState, rasterized) = state.withLock { state -> (InterfaceState, Bool) in
            let position = min(max(0, index), state.subnodes.count)
            state.subnodes.insert(subnode, at: position)
            return (state.interfaceState, state.shouldRasterizeDescendants)
        }
        subnode.state.withLock { $0.supernode = self }
        subnode.invalidateCalculatedLayout()
        if loaded {
            if isRasterizedByAncestor || rasterized {
                setNeedsDisplay()
            } else if let layer = loadedLayer {
                var loadedNodes: [Node] = []
                let sublayer = subnode.loadLayerTree(into: &loadedNodes)
                let position = state.withLock { $0.subnodes.firstIndex { $0 === subnode } } ?? Int.max
                layer.insertSublayer(sublayer, at: position)
                for node in loadedNodes { node.didLoad() }
            }
            subnode.setInterfaceState(interfaceState)
        }
        return true
    }

    /// Detaches the node from its parent. Leaving the hierarchy ends its interface states and cancels its
    /// pending draws (the sentinel is bumped).
    /// - Thread: any before the parent is loaded; main after.
    public func removeFromSupernode() {
        guard let parent = supernode else { return }
        let parentLoaded = parent.isNodeLoaded
        if parentLoaded { UIThread.precondition("removing a subnode from a loaded node") }
        parent.state.withLock { $0.subnodes.removeAll { $0 === self } }
        state.withLock { $0.supernode = nil }
        displaySentinel.bump()
        if parentLoaded {
            setInterfaceState([])
            loadedLayer?.removeFromSuperlayer()
            if parent.isRasterizing || parent.isRasterizedByAncestor { parent.setNeedsDisplay() }
        }
        parent.invalidateCalculatedLayout()
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
