/// How a layer with a corner radius gets its rounded corners.
/// - Thread: any
public enum CornerRoundingMode: Sendable, Hashable, CaseIterable {
    /// The contents already carry the corners (drawn with the drawing kit's rounded fills and clips);
    /// the compositor draws the contents as they are. The cheapest mode, for contents that are drawn
    /// anyway. A background colour on such a layer is rounded by the compositor.
    case precomposited
    /// The compositor draws the layer as a plain rectangle, then four small cached corner pieces in
    /// `cornerClipColor` over its corners. Only ordinary alpha blending is used, so it works on every
    /// renderer. Needs an opaque, known colour behind the layer; without `cornerClipColor` the layer
    /// falls back to `compositorClip`.
    case clipping
    /// The compositor clips every frame: contents and background are drawn as a textured rounded
    /// polygon with an anti-aliased fringe. Costs geometry each frame; right for contents that change
    /// every frame. Sublayers are clipped to the layer's rectangle only (when `clipsToBounds`).
    case compositorClip
}

/// A node of the compositor's tree: a rectangle with optional contents, placed in its superlayer.
///
/// Frames are in points, relative to the superlayer's top-left corner. Sublayers are drawn after their
/// superlayer, in ascending `zPosition`, and in insertion order among equal z.
///
/// Defined results for bad input (never a crash):
/// - a frame with NaN or infinite components draws as if those components were 0, and a negative side
///   counts as 0 (the layer's own drawing is skipped; its sublayers are still placed from its origin);
/// - a corner radius larger than half a side is clamped (a capsule or circle), a negative or NaN one is 0;
/// - opacity is clamped to 0...1, NaN counts as 0; at 0 the layer and its sublayers are skipped;
/// - empty contents (0×0) draw nothing and upload nothing;
/// - adding a layer that already has a superlayer moves it (it leaves the first one); adding a layer to
///   itself or to one of its own sublayers is refused, and `addSublayer` returns false.
///
/// - Thread: main (the UI thread). Every mutation checks it with a precondition.
@MainActor
public final class Layer {
    /// A name for debugging and for the recording backend's log.
    public var name: String?

    /// Position and size in the superlayer, in points. (main thread only)
    public var frame: Rect = .zero {
        willSet { checkThread("Layer.frame") }
        didSet { if frame != oldValue { noteChange() } }
    }
    /// The committed bitmap, drawn stretched to `frame`. (main thread only)
    public var contents: Bitmap? {
        willSet { checkThread("Layer.contents") }
        didSet { if contents?.identity != oldValue?.identity { noteChange() } }
    }
    /// Drawn under the contents; nil draws nothing. (main thread only)
    public var backgroundColor: Color? {
        willSet { checkThread("Layer.backgroundColor") }
        didSet { if backgroundColor != oldValue { noteChange() } }
    }
    /// Multiplies into this layer and every descendant. (main thread only)
    public var opacity: Double = 1 {
        willSet { checkThread("Layer.opacity") }
        didSet { if opacity != oldValue { noteChange() } }
    }
    /// A hidden layer and its sublayers are not drawn. (main thread only)
    public var isHidden = false {
        willSet { checkThread("Layer.isHidden") }
        didSet { if isHidden != oldValue { noteChange() } }
    }
    /// Clips sublayers to this layer's rectangle. (main thread only)
    public var clipsToBounds = false {
        willSet { checkThread("Layer.clipsToBounds") }
        didSet { if clipsToBounds != oldValue { noteChange() } }
    }
    /// Radius of the rounded corners, in points. (main thread only)
    public var cornerRadius: Double = 0 {
        willSet { checkThread("Layer.cornerRadius") }
        didSet { if cornerRadius != oldValue { noteChange() } }
    }
    /// Which corners `cornerRadius` rounds. (main thread only)
    public var maskedCorners: CornerMask = .all {
        willSet { checkThread("Layer.maskedCorners") }
        didSet { if maskedCorners != oldValue { noteChange() } }
    }
    /// How the corners are rounded. (main thread only)
    public var cornerRoundingMode: CornerRoundingMode = .compositorClip {
        willSet { checkThread("Layer.cornerRoundingMode") }
        didSet { if cornerRoundingMode != oldValue { noteChange() } }
    }
    /// The colour behind the layer, painted into the corner pieces of `.clipping`. (main thread only)
    public var cornerClipColor: Color? {
        willSet { checkThread("Layer.cornerClipColor") }
        didSet { if cornerClipColor != oldValue { noteChange() } }
    }
    /// Order among siblings: higher draws later (on top). (main thread only)
    public var zPosition: Double = 0 {
        willSet { checkThread("Layer.zPosition") }
        didSet { if zPosition != oldValue { superlayer?.drawOrderIsStale = true; noteChange() } }
    }
    /// Properties moving by themselves, handed to the compositor as data (see `LayerAnimation`): it
    /// draws their values at the time of each frame, the model values above otherwise. Whoever adds
    /// one keeps the model value in step and removes it when the motion is over. (main thread only)
    public var animations: [LayerAnimation] = [] {
        willSet { checkThread("Layer.animations") }
        didSet { if !(animations.isEmpty && oldValue.isEmpty) { noteChange() } }
    }

    /// How a compositor on a thread of its own moves this layer by the wheel, ahead of the UI thread
    /// (see `ScrollBinding`); nil: it does not. (main thread only)
    public var scrollBinding: ScrollBinding? {
        willSet { checkThread("Layer.scrollBinding") }
        didSet { if scrollBinding != oldValue { markSnapshotStale() } }
    }

    /// What the layer's node does with the pointer and the wheel, for a compositor thread that routes
    /// them before the UI thread (see `LayerInputRole`). Nodes keep it up to date. (main thread only)
    public var inputRole: LayerInputRole = .none {
        willSet { checkThread("Layer.inputRole") }
        didSet { if inputRole != oldValue { markSnapshotStale() } }
    }

    /// Unique for the process's life: snapshots and the compositor's memory of what it drew name the
    /// layer by it. (any thread may read it)
    public nonisolated let serial: Int
    /// The last snapshot of this layer and whether it or a layer below changed since. (main thread only)
    var cachedSnapshot: LayerSnapshot?
    var snapshotIsStale = true

    /// The layer's children, in insertion order. (main thread only)
    public private(set) var sublayers: [Layer] = []
    /// The parent, if any. (main thread only)
    public private(set) weak var superlayer: Layer?

    /// Sublayers sorted for drawing; rebuilt when membership or a z position changes. (main thread only)
    private var cachedDrawOrder: [Layer] = []
    var drawOrderIsStale = false

    /// Makes a detached layer. Layers may be made on the UI thread only, like every other layer call.
    public init(name: String? = nil) {
        UIThread.precondition("Layer.init")
        self.name = name
        Self.changeCount &+= 1
        version = Self.changeCount
        Self.serialCount &+= 1
        serial = Self.serialCount
    }

    private static var serialCount = 0

    /// Marks this layer's snapshot and its ancestors' as stale (up to the first already stale: its
    /// ancestors are stale already).
    private func markSnapshotStale() {
        Self.snapshotChangeCount &+= 1
        var layer: Layer? = self
        while let current = layer, !current.snapshotIsStale {
            current.snapshotIsStale = true
            // Dropped now rather than at the next snapshot, which a detached layer may never take:
            // the copy would keep contents the layer no longer holds alive.
            current.cachedSnapshot = nil
            layer = current.superlayer
        }
    }

    @inline(__always)
    private func checkThread(_ what: @autoclosure () -> String) {
        UIThread.precondition(what())
    }

    /// Counts the changes made to any layer that show on screen (a property that changed value, a
    /// sublayer added or removed): a compositor that has drawn the current count has nothing new to
    /// draw. (main thread only)
    public private(set) static var changeCount = 0

    /// Counts every change a snapshot would carry: those `changeCount` counts, and those that do not
    /// show (a scroll binding, an input role). A compositor thread is handed a new snapshot when it
    /// moved. (main thread only)
    public private(set) static var snapshotChangeCount = 0

    /// The value of `changeCount` at this layer's last change of how it draws itself (any property
    /// but its place among its siblings): unique to the layer and the change, so a compositor that
    /// remembers it knows whether the layer is as it drew it. (main thread only)
    public private(set) var version = 0

    @inline(__always)
    private static func noteChange() { changeCount &+= 1 }

    @inline(__always)
    private func noteChange() {
        Self.changeCount &+= 1
        version = Self.changeCount
        markSnapshotStale()
    }

    /// The layer's own coordinate space: origin zero, the frame's size.
    public var bounds: Rect { Rect(origin: .zero, size: frame.size) }

    /// The radii in effect for drawing: `cornerRadius` on `maskedCorners`, clamped to the frame.
    public var effectiveCornerRadii: CornerRadii {
        CornerRadii(cornerRadius, corners: maskedCorners).clamped(to: frame.sanitized.size)
    }

    /// Appends `layer` as the topmost sublayer among equal z. A layer with another parent moves here.
    /// - Returns: false, changing nothing, when `layer` is this layer or one of its ancestors (a cycle).
    @discardableResult
    public func addSublayer(_ layer: Layer) -> Bool {
        insertSublayer(layer, at: Int.max)
    }

    /// Inserts `layer` at `index` among the sublayers (clamped to the valid range).
    /// - Returns: false, changing nothing, when the insertion would make a cycle.
    @discardableResult
    public func insertSublayer(_ layer: Layer, at index: Int) -> Bool {
        checkThread("Layer.insertSublayer")
        var ancestor: Layer? = self
        while let current = ancestor {
            if current === layer { return false }
            ancestor = current.superlayer
        }
        layer.removeFromSuperlayer()
        let position = min(max(0, index), sublayers.count)
        sublayers.insert(layer, at: position)
        layer.superlayer = self
        drawOrderIsStale = true
        markSnapshotStale()
        Self.noteChange()
        return true
    }

    /// Detaches the layer from its parent; harmless when it has none.
    public func removeFromSuperlayer() {
        checkThread("Layer.removeFromSuperlayer")
        guard let parent = superlayer else { return }
        if let index = parent.sublayers.firstIndex(where: { $0 === self }) {
            parent.sublayers.remove(at: index)
        }
        parent.drawOrderIsStale = true
        parent.markSnapshotStale()
        superlayer = nil
        Self.noteChange()
    }

    /// Removes every sublayer.
    public func removeAllSublayers() {
        checkThread("Layer.removeAllSublayers")
        for layer in sublayers { layer.superlayer = nil }
        sublayers.removeAll()
        drawOrderIsStale = true
        markSnapshotStale()
        Self.noteChange()
    }

    /// Sublayers in drawing order: ascending z, insertion order among equals.
    var sublayersInDrawOrder: [Layer] {
        if drawOrderIsStale {
            drawOrderIsStale = false
            if sublayers.allSatisfy({ $0.zPosition == sublayers.first?.zPosition }) {
                cachedDrawOrder = sublayers
            } else {
                cachedDrawOrder = sublayers.enumerated()
                    .sorted { ($0.element.zPosition, $0.offset) < ($1.element.zPosition, $1.offset) }
                    .map(\.element)
            }
        }
        return cachedDrawOrder
    }

    /// The frame converted to the coordinate space of the root layer (the window).
    public var frameInRoot: Rect {
        var rect = frame.sanitized
        var parent = superlayer
        while let current = parent {
            let origin = current.frame.sanitized.origin
            rect = rect.offsetBy(dx: origin.x, dy: origin.y)
            parent = current.superlayer
        }
        return rect
    }
}
