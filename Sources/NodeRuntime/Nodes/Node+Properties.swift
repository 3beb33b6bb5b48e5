public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension Node {
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
        if let loaded { drawnStateDidChange(loaded: loaded) }
    }

    /// A property that shows on screen changed (frame, colours, opacity, visibility, corners, order).
    /// A node drawn into a rasterizing ancestor's bitmap has no layer: that ancestor draws again, its
    /// draw parameters being a snapshot of its whole subtree. A node with a layer brings it up to date.
    func drawnStateDidChange(loaded: Bool) {
        if let ancestor = rasterizingAncestor {
            ancestor.setNeedsDisplay()
        } else if loaded {
            layerStateDidChange()
        }
    }

    /// Position and size in the supernode, in points. A new size redraws the contents.
    ///
    /// Fallback: the frame is kept as set, and drawn as `Rect.sanitized` makes it: a NaN or infinite
    /// part counts as 0, a negative side as 0 (nothing of the node's own is drawn; its subnodes are
    /// placed from its origin), a part beyond ±`Rect.drawableLimit` is clamped to it. Such a frame is
    /// reported once per node (`diagnostics`, `TesseraLog.layout`), naming what was set and what is drawn.
    /// - Thread: any
    public var frame: Rect {
        get { state.withLock { $0.frame } }
        set {
            if !Self.isDrawable(newValue) {
                reportOnce(.invalidProperty, property: "frame",
                           "frame set to \(newValue), which has a NaN, infinite, negative or out-of-range part; drawn as \(newValue.sanitized)")
            }
            let (loaded, changed, sizeChanged, wantsDisplay) = state.withLock { state -> (Bool, Bool, Bool, Bool) in
                let changed = state.frame != newValue
                let sizeChanged = state.frame.size != newValue.size
                state.frame = newValue
                return (state.isLoaded, changed, sizeChanged, state.display.needsDisplay || state.hasContents)
            }
            // An unchanged frame leaves the layer alone (an animation may be moving it).
            if changed { drawnStateDidChange(loaded: loaded) }
            if sizeChanged {
                invalidateCalculatedLayout()
                if wantsDisplay || loaded { setNeedsDisplay() }
                frameSizeDidChange()
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
    /// Multiplies into this node and its subnodes, from 0 (not drawn) to 1.
    ///
    /// Fallback: kept as set, and drawn clamped to 0...1, NaN as 0 (not drawn). A value outside 0...1
    /// is reported once per node (`diagnostics`, `TesseraLog.layout`). - Thread: any
    public var opacity: Double {
        get { state.withLock { $0.opacity } }
        set {
            if !(0...1).contains(newValue) {
                reportOnce(.invalidProperty, property: "opacity",
                           "opacity set to \(newValue), outside 0...1; drawn at \(newValue.isNaN ? 0 : min(1, max(0, newValue)))")
            }
            setLayerProperty(\.opacity, newValue)
        }
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
    /// Radius of the rounded corners in points. A radius over half the shorter side makes that side
    /// round (a capsule or a circle).
    ///
    /// Fallback: kept as set; a NaN, negative or infinite radius draws square corners (0), and is
    /// reported once per node (`diagnostics`, `TesseraLog.layout`). - Thread: any
    public var cornerRadius: Double {
        get { state.withLock { $0.cornerRadius } }
        set {
            if !(newValue.isFinite && newValue >= 0) {
                reportOnce(.invalidProperty, property: "cornerRadius",
                           "corner radius set to \(newValue), which is not a length; drawn with square corners (0)")
            }
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
        set { setInputProperty(\.isUserInteractionEnabled, newValue) }
    }
    /// Insets of the hit area from the bounds; negative values enlarge it (a small button with a
    /// comfortable target). - Thread: any
    public var hitTestSlop: EdgeInsets {
        get { state.withLock { $0.hitTestSlop } }
        set { setInputProperty(\.hitTestSlop, newValue) }
    }

    /// Sets a property that decides what takes the pointer: a loaded node brings its layer's input
    /// role up to date (a compositor thread routes the wheel by it); nothing is drawn again.
    private func setInputProperty<Value: Equatable>(_ keyPath: WritableKeyPath<State, Value>, _ value: Value) {
        let loaded = state.withLock { state -> Bool? in
            guard state[keyPath: keyPath] != value else { return nil }
            state[keyPath: keyPath] = value
            return state.isLoaded
        }
        guard let loaded else { return }
        if loaded {
            layerStateDidChange()
        } else if let ancestor = rasterizingAncestor, ancestor.isNodeLoaded {
            // Drawn into an ancestor's bitmap: that ancestor's layer says where its nodes take the pointer.
            ancestor.layerStateDidChange()
        }
    }
    /// The pointer's shape while it is over this node, when `cursor(at:)` is not overridden; nil (the
    /// default) lets an event ancestor choose, and the arrow shows when none does. Only nodes the host
    /// hovers ask: the interactive node under the pointer and its ancestors. - Thread: any
    public var cursor: Cursor? {
        get { state.withLock { $0.cursor } }
        set { state.withLock { $0.cursor = newValue } }
    }

    /// True when drawing takes `frame` as it is: every part finite, no negative side, nothing beyond
    /// `Rect.drawableLimit`.
    static func isDrawable(_ frame: Rect) -> Bool {
        let limit = Rect.drawableLimit
        return frame.isFinite && frame.width >= 0 && frame.height >= 0
            && abs(frame.minX) <= limit && abs(frame.minY) <= limit && frame.width <= limit && frame.height <= limit
    }

    /// True for a drawing node whose background colour and corners are baked into its bitmap.
    var bakesBackground: Bool {
        guard self is any NodeDrawing else { return false }
        return state.withLock { $0.cornerRoundingMode == .precomposited && $0.cornerRadius > 0 }
    }
}
