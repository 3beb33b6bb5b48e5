public import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization


/// The base of everything drawn in Tessera: a cheap object, made, configured and measured on any thread,
/// whose layer is made lazily on the UI thread.
///
/// ## Threads
/// - Any thread: `init`, every view property (frame, colours, corners, flags), adding and removing
///   subnodes, measuring, `setNeedsDisplay`, `setNeedsLayout`.
/// - Before the layer exists, property writes and subnode changes are kept under the node's lock and
///   applied in one batch when it loads. After load, writes on the UI thread reach the layer at once;
///   writes and subnode changes from other threads reach the layer tree at the next frame.
/// - UI thread only: `layer` (the first access loads this node's and its subnodes' layers, then calls
///   `didLoad` on each, parent first), interface states, `layout()`, events.
/// - Never from a draw function: node state is out of a draw's reach, checked at run time (see
///   `NodeDrawing`).
///
/// ## Override points
/// Declared in the class body (only it may declare `open` members); each names its thread:
/// `init()` (any; never touch the layer), `didLoad()` (main, once, after the layer exists),
/// `layoutSpecThatFits(_:)` and `calculateSizeThatFits(_:)` (any; build or measure, no layers),
/// `frameSizeDidChange()` (any, no lock held), `layout()` (main, after a layout is applied), the
/// interface-state hooks `didEnter…`/`didExit…State()` and `interfaceStateDidChange(_:from:)` (main,
/// once per change), `touchesBegan/Moved/Ended/Cancelled(_:)`, `pointerEntered()`/`pointerExited()`,
/// `cursor(at:)`, the focus and key hooks (main), `isContentReady` (main), `loadsContent` (any) and
/// `contentsScaleDidChange()` (any). A class's starting layout style comes from `LayoutStyleDefaults`.
///
/// `Node` is `Sendable`: every property a node documents as "any thread" keeps its value under the
/// node's lock, so a node may be captured by a task or a thread and configured there without a wrapper.
/// Its UI-thread members (`layer`, the hooks above, interface states, events) are isolated to
/// `@MainActor`, so the compiler refuses them off the UI thread. A subclass keeps the guarantee by
/// keeping its own mutable state in a lock too (`Locked`), or on the main actor. Draw
/// functions still cannot reach nodes: a node in draw parameters compiles (nodes are `Sendable`), but
/// any access to its state from a draw traps at run time (see `NodeDrawing`). Layers and textures are
/// released on the UI thread whichever thread releases the node.
open class Node: @unchecked Sendable {
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
        var cursor: Cursor?
        var displaysAsynchronously = true
        var isDisplaySuspended = false
        var isTransactionContainer = false
        var placeholderColor: Color?
        var placeholderFadeDuration = 0.0
        var contentsCrossFadeDuration = 0.0
        var contentsAreAnimationFrames = false
        var neverShowPlaceholders = false
        var shouldRasterizeDescendants = false
        var subnodes: [Node] = []
        weak var supernode: Node?
        var isLoaded = false
        var hasContents = false
        var applyQueued = false
        var interfaceState: InterfaceState = []
        var displayDistance = 0.0
        var display = DisplayRequestState()
        var layoutCache = LayoutCache()
        var layoutState = NodeLayoutState()
        /// Pixels per point set on this node (a host's root, a list's row); nil: inherited.
        var contentsScale: Double?
        /// Told when `setNeedsLayout` reaches this node as the root of its tree (a list sets it on its
        /// row nodes, which are not its subnodes, to measure the row again).
        var rootLayoutInvalidationObserver: (@Sendable () -> Void)?
        /// Values this node replaced by their fallbacks, reported once per property (`diagnostics`).
        var diagnostics = NodeDiagnostics()
        /// What the app set for screen readers (nil: nothing, the kind's defaults apply).
        var accessibility: AccessibilityOverrides?
        /// The node's element id in accessibility trees (0 until first asked).
        var accessibilityID = 0
    }

    /// Guarded node state, reached only through `state`.
    private let lockedState = Locked(State())
    /// Guarded node state; every access goes through `state.withLock`. Reaching it from inside a draw
    /// function is a precondition failure (see `NodeDrawing`). - Thread: any
    var state: Locked<State> {
        @inline(__always) get {
            DrawScope.check(self)
            return lockedState
        }
    }
    /// Invalidates stale draws of this node.
    public let displaySentinel = DisplaySentinel()
    /// The runtime the node belongs to.
    let runtime: Runtime
    /// The loaded layer. (UI thread only)
    private(set) var loadedLayer: Layer?
    /// Gesture recognizers attached in `didLoad`. (UI thread only)
    var gestureRecognizers: [GestureRecognizer] = []
    /// The host whose focus owner this node is, while it is. (UI thread only)
    weak var focusHost: NodeHost?
    /// A layout transition waiting for the node's next layout (`transitionLayout`). (UI thread only)
    var layoutTransition: LayoutTransitionRequest?
    /// Where events go after this node when it has no supernode: the list showing it as a row (set by
    /// the list when it installs the row's node, cleared when it releases it). Layout and display never
    /// follow it; see `eventSupernode`. (UI thread only)
    weak var eventParent: Node?
    /// The node's context menu (`Node.contextMenu`, `setContextMenu(_:)`). (UI thread only)
    @MainActor var contextMenuSource: ContextMenuSource?
    /// What this node does with drags and drops from other applications (`dropTarget`).
    @MainActor var dropTargetStorage: DropTarget?
    /// The host this node is the root of, while it is. (UI thread only)
    weak var rootHost: NodeHost?
    /// The host this node takes part in frames of, when it is a `FrameParticipant` with an interface
    /// state. (UI thread only)
    weak var frameHost: NodeHost?

    /// Makes a node. Cheap, and allowed on any thread: no layer is created until `layer` is read.
    /// - Thread: any
    public init() {
        self.runtime = .shared
    }

    deinit {
        displaySentinel.bump()
        let job = lockedState.withLock { $0.display.inFlight?.job }
        job?.cancel()
        runtime.display.unregister(self)
        if let layer = loadedLayer {
            // The layer belongs to the UI thread; detach it there.
            if UIThread.isCurrent {
                MainActor.assumeIsolated { layer.removeFromSuperlayer() }
            } else {
                runtime.mainQueue.enqueue { layer.removeFromSuperlayer() }
            }
        }
    }

    // MARK: - Loading (UI thread)

    /// True once the layer exists. - Thread: any
    public var isNodeLoaded: Bool { state.withLock { $0.isLoaded } }

    /// The node's layer. The first access loads it, and those of its subnodes, then calls `didLoad()`
    /// on each, parent first.
    /// - Thread: main. Access from another thread is a precondition failure.
    @MainActor
    public var layer: Layer {
        UIThread.precondition("Node.layer")
        if let loadedLayer { return loadedLayer }
        var loaded: [Node] = []
        _ = loadLayerTree(into: &loaded)
        for node in loaded { node.didLoad() }
        return loadedLayer!
    }

    /// The layer if it is loaded, without loading it. - Thread: main
    @MainActor
    public var layerIfLoaded: Layer? {
        UIThread.precondition("Node.layerIfLoaded")
        return loadedLayer
    }

    /// Creates the layers of this subtree (except below a rasterizing node), in pre-order, collecting
    /// the nodes that were loaded so `didLoad` can run after the whole tree exists.
    @MainActor
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
            MainActor.assumeIsolated { applyLayerState() }
            return
        }
        let shouldQueue = state.withLock { state -> Bool in
            guard !state.applyQueued else { return false }
            state.applyQueued = true
            return true
        }
        guard shouldQueue else { return }
        // The node stays alive until the write lands; the closure runs on the UI thread.
        runtime.mainQueue.enqueue { self.applyLayerState() }
    }

    /// `applyLayerState` on this node and each loaded node below it that draws on its own layer (not
    /// below a rasterizing node).
    @MainActor
    func applyLayerStateInSubtree() {
        applyLayerState()
        guard !isRasterizing else { return }
        for subnode in subnodes where subnode.layerIfLoaded != nil { subnode.applyLayerStateInSubtree() }
    }

    /// Copies the state to the layer in one batch.
    @MainActor
    func applyLayerState() {
        guard let layer = loadedLayer else { return }
        let snapshot = state.withLock { state -> State in
            state.applyQueued = false
            return state
        }
        layer.name = snapshot.debugName
        layer.frame = Self.shownFrame(of: snapshot, layer: layer)
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
        layer.inputRole = inputRole(snapshot)
    }

    /// What the layer tells a compositor thread about input, as the UI thread's hit test sees the
    /// node: where it is (its frame, not where an animation shows its layer), whether it can be hit at
    /// all, where it takes the pointer (its bounds less its slop; for a rasterizing node, whose
    /// subnodes have no layers, wherever an interactive one of them does), whether it handles the
    /// wheel on the UI thread (a node that scrolls by it), and whether it takes text when focused.
    @MainActor
    private func inputRole(_ snapshot: State) -> LayerInputRole {
        let size = snapshot.frame.sanitized.size
        var area: Rect?
        if snapshot.isUserInteractionEnabled {
            let slop = snapshot.hitTestSlop
            area = Rect(x: slop.left, y: slop.top, width: size.width - slop.left - slop.right,
                        height: size.height - slop.top - slop.bottom)
        }
        if isRasterizing {
            // Every interactive node drawn into this bitmap, in this node's coordinates.
            func visit(_ node: Node, origin: Point) {
                for subnode in node.subnodes {
                    let (frame, interactive, slop) = subnode.state.withLock { ($0.frame.sanitized, $0.isUserInteractionEnabled, $0.hitTestSlop) }
                    let placed = Point(x: origin.x + frame.minX, y: origin.y + frame.minY)
                    if interactive {
                        let hit = Rect(x: placed.x + slop.left, y: placed.y + slop.top,
                                       width: frame.width - slop.left - slop.right, height: frame.height - slop.top - slop.bottom)
                        area = area.map { $0.union(hit) } ?? hit
                    }
                    visit(subnode, origin: placed)
                }
            }
            visit(self, origin: .zero)
        }
        return LayerInputRole(takesPointer: area != nil, hitInsetTop: area?.minY ?? 0, hitInsetLeft: area?.minX ?? 0,
                              hitInsetBottom: area.map { size.height - $0.maxY } ?? 0,
                              hitInsetRight: area.map { size.width - $0.maxX } ?? 0,
                              handlesWheel: self is WheelScrollable, frame: snapshot.frame,
                              isHittable: !snapshot.isHidden && snapshot.opacity > 0,
                              takesText: snapshot.isUserInteractionEnabled && canBecomeFocused && textInputCaret != nil)
    }

    /// Where the layer goes: the node's frame, except that contents drawn for another size keep the
    /// size they were drawn for (at the new origin) while the draw for the new size is on its way, so
    /// a resized node never shows its old bitmap stretched. Its new contents and size arrive together.
    @MainActor
    private static func shownFrame(of snapshot: State, layer: Layer) -> Rect {
        let frame = snapshot.frame
        guard layer.contents != nil, snapshot.hasContents, !frame.sanitized.isEmpty,
              !layer.frame.sanitized.isEmpty, layer.frame.size != frame.size,
              snapshot.display.inFlight != nil || (snapshot.display.needsDisplay && snapshot.canStartDisplay)
        else { return frame }
        return Rect(origin: frame.origin, size: layer.frame.size)
    }

    // MARK: - Subclass hooks (the list and their threads are in the type's documentation)


    /// Called after the frame's size changes, on the thread that changed it, with no lock held.
    /// Subclasses that prepare work by size (an image decoded at the size it is shown) start it here.
    /// - Thread: any
    open func frameSizeDidChange() {}

    /// Called once, on the UI thread, after the layer exists: the place for gesture recognizers and
    /// anything that needs the layer.
    /// - Thread: main
    @MainActor
    open func didLoad() {}

    /// The layout of the subnodes for a size range. Return nil to keep the subnodes' frames and size the
    /// node with `calculateSizeThatFits`. Build it fresh each time; do not touch layers here.
    /// - Thread: any
    open func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? { nil }

    /// The size of a node without a layout spec, for the largest size it may take.
    /// The default is the node's `preferredSize` when set, else zero (then clamped to the range).
    /// - Thread: any
    open func calculateSizeThatFits(_ constrainedSize: Size) -> Size { preferredSize ?? .zero }

    /// The size of a node without a layout spec for `range`, before it is clamped to the range:
    /// `calculateSizeThatFits(range.max)`. A node of this module whose measuring costs something it
    /// can skip when the range leaves no choice (an image reading its header) overrides it.
    func calculateSize(for range: SizeRange) -> Size { calculateSizeThatFits(range.max) }

    /// Called on the UI thread after a layout has set the subnodes' frames.
    /// - Thread: main
    @MainActor
    open func layout() {}

    /// The node entered the preload range: start fetching data and decoding. - Thread: main
    @MainActor
    open func didEnterPreloadState() {}
    /// The node left the preload range: cancel loads. - Thread: main
    @MainActor
    open func didExitPreloadState() {}
    /// The node entered the display range; its layer is loaded and a draw is requested. - Thread: main
    @MainActor
    open func didEnterDisplayState() {}
    /// The node left the display range; its contents are cleared. - Thread: main
    @MainActor
    open func didExitDisplayState() {}
    /// The node is on screen. - Thread: main
    @MainActor
    open func didEnterVisibleState() {}
    /// The node left the screen. - Thread: main
    @MainActor
    open func didExitVisibleState() {}
    /// Called once per change of interface state, after the enter and exit hooks. - Thread: main
    @MainActor
    open func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {}

    /// The frontmost interactive node under `point` (in this node's coordinates), or nil; see
    /// `defaultHitTest`. Containers that place nodes outside the subnode tree (a list's rows) override it
    /// to search those too. - Thread: main
    @MainActor
    open func hitTest(_ point: Point) -> Node? { defaultHitTest(point) }

    /// Whether a node of this kind is a screen reader's element when the app says nothing
    /// (`isAccessibilityElement` overrides it): false for a plain node, whose elements belong to the
    /// nearest element above; true for text, images and controls. - Thread: any
    open var isAccessibilityElementByDefault: Bool { false }

    /// How this kind of node presents itself to a screen reader: its role, and the label, value,
    /// states and actions its content gives (a text node's string, a switch's state). What the app
    /// sets (`accessibilityLabel`, …) goes over it (`accessibilityDescription()`). The default: no
    /// role, no label. - Thread: main
    @MainActor
    open func accessibilityDefaults() -> AccessibilityDescription { AccessibilityDescription() }

    /// Performs `action` for a screen reader; returns whether it did anything. The default runs the
    /// custom action of that name (`accessibilityCustomActions`); controls press, lists scroll.
    /// - Thread: main
    @MainActor
    open func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        performCustomAccessibilityAction(action)
    }

    /// A pointer went down on this interactive node. - Thread: main
    @MainActor
    open func touchesBegan(_ touch: Touch) {}
    /// The pointer moved while down. - Thread: main
    @MainActor
    open func touchesMoved(_ touch: Touch) {}
    /// The pointer went up. - Thread: main
    @MainActor
    open func touchesEnded(_ touch: Touch) {}
    /// The touch was taken away (a gesture recognized, the node was removed). - Thread: main
    @MainActor
    open func touchesCancelled(_ touch: Touch) {}

    // MARK: - Readiness

    /// True when what the node shows is complete apart from its own drawing: false while it still
    /// waits for something to load (an image node's picture). A list counts a row as ready, and
    /// queues such a node's loading by the row's distance, only when every node in the row says so.
    /// Override in nodes that load content. - Thread: main
    @MainActor
    open var isContentReady: Bool { true }

    /// True for a node that loads content before it can be ready (`isContentReady` can be false):
    /// lists give it the row's display distance and wait for it. - Thread: any
    open var loadsContent: Bool { false }

    // MARK: - Contents scale

    /// Pixels per point this node measures text and draws at: the scale set on it, else its
    /// supernode's, else (outside any window) `Runtime.contentsScale`. A host sets its window's
    /// scale on its root node and a list on its rows, so nodes of two windows at different scales
    /// each draw at their own. Setting it (a positive finite value; anything else clears it) on a
    /// tree in use measures and draws the tree again at the new scale. - Thread: any
    public var contentsScale: Double {
        get {
            var node: Node? = self
            while let current = node {
                let (own, parent) = current.state.withLock { ($0.contentsScale, $0.supernode) }
                if let own { return own }
                node = parent
            }
            return runtime.contentsScale
        }
        set {
            let value: Double? = newValue.isFinite && newValue > 0 ? newValue : nil
            let before = contentsScale
            state.withLock { $0.contentsScale = value }
            if contentsScale != before { subtreeContentsScaleDidChange() }
        }
    }

    /// The scale of this node's tree changed: every node in it measures and draws again.
    func subtreeContentsScaleDidChange() {
        var stack: [Node] = [self]
        while let node = stack.popLast() {
            node.invalidateCalculatedLayout()
            node.contentsScaleDidChange()
            node.setNeedsDisplay()
            stack.append(contentsOf: node.subnodes)
        }
        setNeedsLayout()
    }

    /// Called when the node's `contentsScale` changed (its own or an ancestor's), before it is
    /// measured and drawn again: a node that keeps scale-dependent state drops it here. - Thread: any
    open func contentsScaleDidChange() {}

    /// Called on the UI thread when the appearance (or the theme) changed in a way this node depends
    /// on: `change` holds only what it depends on (`themeColor(_:)`, `themedBackgroundColor`,
    /// `dependOnAppearance(_:)`; a text node depends on the text scale). Nodes that depend on nothing
    /// are not called. The default takes the background's theme colour again and, when colours
    /// changed, draws again; an override sets its subnodes' colours again (through `themeColor(_:)`)
    /// and calls `super`.
    /// - Thread: main
    @MainActor
    open func appearanceDidChange(_ change: AppearanceChange) { applyAppearanceChange(change) }

    // MARK: - Focus and keys (see `NodeHost.focus(_:)`)

    /// True for a node that takes keyboard focus: a click on it focuses it, and Tab reaches it.
    /// - Thread: main
    @MainActor
    open var canBecomeFocused: Bool { false }
    /// True for a node that answers a drag itself (a selectable text selects, a slider's thumb
    /// moves): the gesture recognizers of the nodes around it (a list's or a scroll's pan) do not
    /// receive touches that begin on it or inside it. - Thread: main
    @MainActor
    open var handlesDragsItself: Bool { false }
    /// The node became the host's focus owner. - Thread: main
    @MainActor
    open func didBecomeFocused() {}
    /// The node stopped being the focus owner. - Thread: main
    @MainActor
    open func didResignFocus() {}
    /// A key went down while this node or one of its subnodes has focus; return true when handled.
    /// Unhandled keys go to the supernode, then the host's key handler and the root controller.
    /// - Thread: main
    @MainActor
    open func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool { false }
    /// Text typed or committed by an input method while this node has focus; true when taken.
    /// - Thread: main
    @MainActor
    open func insertText(_ text: String) -> Bool { false }
    /// An input method's composition (marked text) while this node has focus; empty ends it.
    /// `cursor` is in Unicode scalars of `text`. True when taken. - Thread: main
    @MainActor
    open func setMarkedText(_ text: String, cursor: Int) -> Bool { false }
    /// An input method's composition with its selection: `selected` Unicode scalars from `cursor` on
    /// are the segment the input method highlights (0: none, only its caret). The host calls this;
    /// by default it is `setMarkedText(_:cursor:)`. True when taken. - Thread: main
    @MainActor
    open func setMarkedText(_ text: String, cursor: Int, selected: Int) -> Bool { setMarkedText(text, cursor: cursor) }
    /// Called once a frame while the node has focus, with the frame's time (a caret blinks here).
    /// - Thread: main
    @MainActor
    open func focusFrame(at time: Double) {}
    /// When the focused node next needs a frame by itself (its caret's next blink), after `time`;
    /// nil for never. An app at rest sleeps until then. - Thread: main
    @MainActor
    open func nextFocusFrameTime(after time: Double) -> Double? { nil }
    /// Where text input happens in the node (its caret), in the node's coordinates, for a node that
    /// takes text: while it has focus, the host turns the platform's text input on and keeps the
    /// input method's window next to this rect. Nil for nodes that take no text. - Thread: main
    @MainActor
    open var textInputCaret: Rect? { nil }
    /// The pointer, with no button down, came over this node: it is now in the host's hovered chain,
    /// the interactive node under the pointer and its event ancestors (supernodes, and from a list's
    /// row to the list). Ancestors enter before their descendants. - Thread: main
    @MainActor
    open func pointerEntered() {}
    /// The pointer left the hovered chain's part that is this node (or left the window); descendants
    /// exit before their ancestors. - Thread: main
    @MainActor
    open func pointerExited() {}
    /// The shape the pointer should take at `point` (this node's coordinates) while the node is in the
    /// hovered chain; nil defers to the next event ancestor. The host asks from the node under the
    /// pointer outwards. The default returns `cursor`. - Thread: main
    @MainActor
    open func cursor(at point: Point) -> Cursor? { cursor }

}
