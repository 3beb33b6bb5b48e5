public import Compositor
import Foundation
import Synchronization

/// What a draw function gets besides its parameters: the size to draw, the scale, and a cancellation
/// check to call between phases of long work.
/// - Thread: display worker (or the calling thread for synchronous display)
public struct DrawInfo: Sendable {
    /// The node's bounds in points (origin zero).
    public let bounds: Rect
    /// Pixels per point.
    public let scale: Double
    /// True once the draw is out of date; stop and return as soon as convenient.
    public let isCancelled: @Sendable () -> Bool

    public init(bounds: Rect, scale: Double, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.bounds = bounds; self.scale = scale; self.isCancelled = isCancelled
    }
}

/// A node that draws its own contents in the background.
///
/// The node captures everything its drawing needs in `drawParameters()` on the UI thread; a worker
/// then calls the `static` draw function with that value alone. A static function has no `self`, and
/// `DrawParameters` must be `Sendable` while `Node` is not, so the compiler (not a comment) keeps
/// drawing away from node state.
///
/// Implement `draw(_:in:info:)` to draw into a context prepared at the node's size and scale, or
/// `display(_:info:)` to return a finished bitmap (the runtime still calls `draw` when it must bake the
/// background and precomposited corners around it).
public protocol NodeDrawing: Node {
    associatedtype DrawParameters: Sendable
    /// A snapshot of what the drawing needs. - Thread: main
    func drawParameters() -> DrawParameters
    /// Draws into `context` (already sized, scaled, and clipped when corners are precomposited).
    /// - Thread: display worker
    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo)
    /// Returns the node's contents. The default makes a context and calls `draw`.
    /// - Thread: display worker
    static func display(_ parameters: DrawParameters, info: DrawInfo) -> Bitmap?
}

extension NodeDrawing {
    public static func display(_ parameters: DrawParameters, info: DrawInfo) -> Bitmap? {
        guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
        draw(parameters, in: &context, info: info)
        return info.isCancelled() ? nil : context.makeBitmap()
    }

    /// The node's draw as a `Sendable` closure over its parameters, captured now. (UI thread)
    func makeDrawClosure(bake: BakedBackground?) -> @Sendable (DrawInfo) -> Bitmap? {
        let parameters = drawParameters()
        guard let bake else {
            return { info in Self.display(parameters, info: info) }
        }
        return { info in
            guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
            bake.prepare(&context)
            Self.draw(parameters, in: &context, info: info)
            return info.isCancelled() ? nil : context.makeBitmap()
        }
    }
}

/// The background and corners a precomposited node bakes under its drawing.
struct BakedBackground: Sendable {
    var color: Color?
    var radii: CornerRadii

    func prepare(_ context: inout BitmapContext) {
        let bounds = context.bounds
        if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
        if let color { context.fill(bounds, color: color) }
    }
}

// MARK: - Display properties and requests

extension Node {
    /// When false, the node draws on the thread that starts its display (the UI thread, at the frame)
    /// instead of a worker. - Thread: any
    public var displaysAsynchronously: Bool {
        get { state.withLock { $0.displaysAsynchronously } }
        set { state.withLock { $0.displaysAsynchronously = newValue } }
    }

    /// While true, the node does not draw, and a draw in flight is cancelled. Turning it off draws again
    /// if a draw was wanted. - Thread: any
    public var isDisplaySuspended: Bool {
        get { state.withLock { $0.isDisplaySuspended } }
        set {
            let resume = state.withLock { state -> Bool in
                let was = state.isDisplaySuspended
                state.isDisplaySuspended = newValue
                if newValue { state.displayJob?.cancel() }
                return was && !newValue && state.needsDisplay
            }
            if newValue {
                displaySentinel.bump()
            } else if resume {
                runtime.registerNeedsDisplay(self)
            }
        }
    }

    /// A transaction container (a cell) gathers the draws of its whole subtree started in one frame and
    /// commits them together, in one frame, so it never appears half drawn. - Thread: any
    public var isTransactionContainer: Bool {
        get { state.withLock { $0.isTransactionContainer } }
        set { state.withLock { $0.isTransactionContainer = newValue } }
    }

    /// Shown while the node's contents are pending; nil shows nothing. - Thread: any
    public var placeholderColor: Color? {
        get { state.withLock { $0.placeholderColor } }
        set { setLayerProperty(\.placeholderColor, newValue) }
    }

    /// Seconds over which new contents cross-fade from the old ones when they replace them (0: at once).
    /// - Thread: any
    public var contentsCrossFadeDuration: Double {
        get { state.withLock { $0.contentsCrossFadeDuration } }
        set { state.withLock { $0.contentsCrossFadeDuration = newValue.isFinite ? max(0, newValue) : 0 } }
    }

    /// Seconds over which contents fade in over the placeholder when they arrive (0: at once). - Thread: any
    public var placeholderFadeDuration: Double {
        get { state.withLock { $0.placeholderFadeDuration } }
        set { state.withLock { $0.placeholderFadeDuration = newValue.isFinite ? max(0, newValue) : 0 } }
    }

    /// When true on a node or its transaction container, the UI thread waits for the transaction's draws
    /// when they start instead of showing placeholders: the frame that shows the node shows it complete.
    /// - Thread: any
    public var neverShowPlaceholders: Bool {
        get { state.withLock { $0.neverShowPlaceholders } }
        set { state.withLock { $0.neverShowPlaceholders = newValue } }
    }

    /// Draws this node and all its descendants into one bitmap; the descendants get no layers of their
    /// own. Set before the node loads. - Thread: any
    public var shouldRasterizeDescendants: Bool {
        get { state.withLock { $0.shouldRasterizeDescendants } }
        set { state.withLock { $0.shouldRasterizeDescendants = newValue } }
    }

    var isRasterizing: Bool { state.withLock { $0.shouldRasterizeDescendants } }

    /// The nearest ancestor that rasterizes this node into its own bitmap, if any.
    var rasterizingAncestor: Node? {
        var ancestor = supernode
        var found: Node?
        while let current = ancestor {
            if current.isRasterizing { found = current }
            ancestor = current.supernode
        }
        return found
    }

    var isRasterizedByAncestor: Bool { rasterizingAncestor != nil }

    /// How far the node is from the viewport in the scroll direction, in points; orders its draws among
    /// the offscreen ones (set by range controllers). - Thread: any
    public var displayDistance: Double {
        get { state.withLock { $0.displayDistance } }
        set {
            let job = state.withLock { state -> DisplayJob? in
                state.displayDistance = newValue
                return state.displayJob
            }
            job?.setPriority(displayPriority)
        }
    }

    /// The scheduler priority of this node's draws: visible first, then by distance. - Thread: any
    public var displayPriority: DisplayPriority {
        state.withLock { state in
            state.interfaceState.contains(.visible) ? .visible : .offscreen(distance: state.displayDistance)
        }
    }

    /// Asks for the contents to be drawn again. The current sentinel is bumped, so a draw in flight is
    /// dropped; the new draw starts at the next frame if the node is in the display state (or when it
    /// enters it, or when its size becomes non-zero).
    /// - Thread: any
    public func setNeedsDisplay() {
        if let ancestor = rasterizingAncestor {
            ancestor.setNeedsDisplay()
            return
        }
        displaySentinel.bump()
        let register = state.withLock { state -> Bool in
            state.needsDisplay = true
            state.displayJob?.cancel()
            state.displayJob = nil
            return state.isLoaded && state.interfaceState.contains(.display) && !state.isDisplaySuspended
        }
        if register && drawsContents { runtime.registerNeedsDisplay(self) }
    }

    /// True for nodes that produce a bitmap: drawing nodes and rasterizing containers. - Thread: any
    var drawsContents: Bool { self is any NodeDrawing || isRasterizing }

    /// Makes the node's draw closure from its parameters, with baked background and corners, and for a
    /// rasterizing node the draws of its whole subtree. Nil for nodes that do not draw. (UI thread)
    func makeDisplayClosure() -> (@Sendable (DrawInfo) -> Bitmap?)? {
        let snapshot = state.withLock { $0 }
        let radii = CornerRadii(snapshot.cornerRadius, corners: snapshot.maskedCorners).clamped(to: snapshot.frame.sanitized.size)
        let own: (@Sendable (DrawInfo) -> Bitmap?)?
        if let drawing = self as? any NodeDrawing {
            let bake = snapshot.cornerRoundingMode == .precomposited && !radii.isZero
                ? BakedBackground(color: snapshot.backgroundColor, radii: radii) : nil
            own = drawing.makeDrawClosure(bake: bake)
        } else {
            own = nil
        }
        guard snapshot.shouldRasterizeDescendants else { return own }
        return makeRasterizedClosure(own: own, background: own == nil ? snapshot.backgroundColor : nil, radii: radii)
    }

    /// The subtree flattened into one draw: this node's own drawing, then each visible descendant's
    /// drawing or background at its frame, with opacity, in pre-order.
    private func makeRasterizedClosure(own: (@Sendable (DrawInfo) -> Bitmap?)?, background: Color?,
                                       radii: CornerRadii) -> @Sendable (DrawInfo) -> Bitmap? {
        struct Part: Sendable {
            var frame: Rect
            var opacity: Double
            var background: Color?
            var radii: CornerRadii
            var draw: (@Sendable (DrawInfo) -> Bitmap?)?
        }
        var parts: [Part] = []
        func collect(_ node: Node, origin: Point, opacity: Double) {
            for child in node.subnodes {
                let s = child.state.withLock { $0 }
                guard !s.isHidden, s.opacity > 0 else { continue }
                let frame = s.frame.sanitized
                let placed = frame.offsetBy(dx: origin.x, dy: origin.y)
                let childOpacity = opacity * min(1, s.opacity)
                let childRadii = CornerRadii(s.cornerRadius, corners: s.maskedCorners).clamped(to: frame.size)
                let drawing = (child as? any NodeDrawing)?.makeDrawClosure(bake: nil)
                parts.append(Part(frame: placed, opacity: childOpacity, background: s.backgroundColor,
                                  radii: childRadii, draw: drawing))
                collect(child, origin: placed.origin, opacity: childOpacity)
            }
        }
        collect(self, origin: .zero, opacity: 1)
        let collected = parts
        return { info in
            guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
            let bounds = context.bounds
            if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
            if let background { context.fill(bounds, color: background) }
            if let own, let bitmap = own(info) { context.draw(bitmap, in: bounds) }
            for part in collected {
                if info.isCancelled() { return nil }
                guard !part.frame.isEmpty else { continue }
                if let color = part.background {
                    context.fillRoundedRect(part.frame, radii: part.radii, color: color.withAlphaMultiplied(by: part.opacity))
                }
                if let draw = part.draw,
                   let bitmap = draw(DrawInfo(bounds: Rect(origin: .zero, size: part.frame.size), scale: info.scale,
                                              isCancelled: info.isCancelled)) {
                    context.saveClip()
                    if !part.radii.isZero { context.clip(toRoundedRect: part.frame, radii: part.radii) }
                    context.draw(bitmap, in: part.frame, opacity: part.opacity)
                    context.restoreClip()
                }
            }
            return info.isCancelled() ? nil : context.makeBitmap()
        }
    }

    /// The nearest transaction container at or above this node, else the node itself.
    var transactionOwner: Node {
        var node: Node? = self
        while let current = node {
            if current.isTransactionContainer { return current }
            node = current.supernode
        }
        return self
    }

    /// Starts the draw this node asked for, if it can now. (UI thread, once a frame)
    /// - Returns: true when a draw was started or done.
    func startDisplayIfPossible(transactions: inout [ObjectIdentifier: DisplayTransaction]) -> Bool {
        if let ancestor = rasterizingAncestor {
            ancestor.setNeedsDisplay()
            return false
        }
        let snapshot = state.withLock { $0 }
        guard snapshot.needsDisplay, snapshot.isLoaded, snapshot.interfaceState.contains(.display),
              !snapshot.isDisplaySuspended else { return false }
        // A zero-sized node keeps `needsDisplay`; a non-zero size registers it again.
        guard !snapshot.frame.sanitized.isEmpty else { return false }
        guard let draw = makeDisplayClosure() else {
            state.withLock { $0.needsDisplay = false }
            return false
        }
        let sentinel = displaySentinel
        let captured = sentinel.value
        let scale = runtime.contentsScale
        let bounds = Rect(origin: .zero, size: snapshot.frame.sanitized.size)
        state.withLock { $0.needsDisplay = false }
        runtime.counters.displaysStarted.add(1, ordering: .relaxed)

        if !snapshot.displaysAsynchronously || runtime.forcesSynchronousDisplay {
            let bitmap = draw(DrawInfo(bounds: bounds, scale: scale))
            if let bitmap, sentinel.value == captured { applyContents(bitmap) }
            return true
        }

        let owner = transactionOwner
        let key = ObjectIdentifier(owner)
        let transaction: DisplayTransaction
        if let existing = transactions[key] {
            transaction = existing
        } else {
            transaction = DisplayTransaction(runtime: runtime, owner: owner,
                                             waitsForCompletion: owner.neverShowPlaceholders || snapshot.neverShowPlaceholders)
            transactions[key] = transaction
        }
        let operation = transaction.add(node: self, sentinel: sentinel, value: captured)
        let isStale: @Sendable () -> Bool = { sentinel.value != captured }
        let job = runtime.scheduler.schedule(
            priority: displayPriority,
            isCancelled: isStale,
            onDropped: { transaction.finish(operation, bitmap: nil) },
            work: { isCancelled in
                let bitmap = draw(DrawInfo(bounds: bounds, scale: scale, isCancelled: isCancelled))
                if isCancelled() {
                    transaction.finish(operation, bitmap: nil)
                    return .cancelled
                }
                transaction.finish(operation, bitmap: bitmap)
                return .completed
            })
        state.withLock { $0.displayJob = job }
        return true
    }

    /// Shows committed contents. (UI thread)
    func applyContents(_ bitmap: Bitmap?) {
        UIThread.precondition("Node.applyContents")
        let layer = self.layer
        let (placeholder, fade, crossFade, hadContents) = state.withLock { state -> (Color?, Double, Double, Bool) in
            let had = state.hasContents
            state.hasContents = bitmap != nil
            state.displayJob = nil
            return (state.placeholderColor, state.placeholderFadeDuration, state.contentsCrossFadeDuration, had)
        }
        let previous = layer.contents
        layer.contents = bitmap
        applyLayerState()
        if bitmap != nil, !hadContents, let placeholder, fade > 0 {
            runtime.animator.fadeOutOverlay(on: layer, color: placeholder, duration: fade)
        } else if let bitmap, let previous, previous.identity != bitmap.identity, crossFade > 0 {
            runtime.animator.fadeOutOverlay(on: layer, contents: previous, duration: crossFade)
        }
    }

    /// Drops the contents (leaving the display state): the bitmap and, at the next frame, its texture.
    /// (UI thread)
    func clearContents() {
        guard let layer = layerIfLoadedUnchecked else { return }
        state.withLock { $0.hasContents = false }
        layer.contents = nil
        applyLayerState()
    }

    /// Draws this node and its subtree now, on the calling thread, and applies the contents: for tests,
    /// screenshots and the synchronous baseline. Loads layers as needed.
    /// - Thread: main
    public func displayNowAndWait() {
        UIThread.precondition("Node.displayNowAndWait")
        _ = layer
        for node in subtree() where !node.isRasterizedByAncestor {
            guard !node.frame.sanitized.isEmpty, let draw = node.makeDisplayClosure() else { continue }
            let sentinel = node.displaySentinel.value
            let bitmap = draw(DrawInfo(bounds: node.bounds, scale: runtime.contentsScale))
            node.state.withLock { $0.needsDisplay = false }
            runtime.unregisterNeedsDisplay(node)
            if node.displaySentinel.value == sentinel { node.applyContents(bitmap) }
        }
    }

    /// The layer if loaded; callers are on the UI thread.
    var layerIfLoadedUnchecked: Layer? { isNodeLoaded ? layerIfLoaded : nil }
}

// MARK: - Transactions

/// The draws of one transaction container started in one frame. When every draw has finished (drawn,
/// cancelled or dropped), the transaction waits in the runtime's commit queue; the frame loop applies all
/// its results still current together, in one frame, visible cells first within the upload budget.
/// - Thread: any
final class DisplayTransaction: Sendable {
    private struct Operation: Sendable {
        let node: UncheckedSendable<WeakNode>
        let sentinel: DisplaySentinel
        let value: UInt64
        var bitmap: Bitmap?
        var finished = false
    }
    private struct State: Sendable {
        var operations: [Operation] = []
        var finishedCount = 0
        var sealed = false
        var committed = false
    }
    private let state = Locked(State())
    private let runtime: Runtime
    private let waitsForCompletion: Bool
    private let done = DispatchSemaphore(value: 0)
    /// The container whose cell this is: its priority orders commits under the upload budget.
    private let owner: UncheckedSendable<WeakNode>

    init(runtime: Runtime, owner: Node, waitsForCompletion: Bool) {
        self.runtime = runtime
        self.owner = UncheckedSendable(WeakNode(owner))
        self.waitsForCompletion = waitsForCompletion
    }

    /// The owner's current priority (UI thread); a gone owner sorts last.
    var priority: DisplayPriority {
        owner.value.node?.displayPriority ?? .offscreen(distance: .infinity)
    }

    /// Bytes of the results still to be applied.
    var pendingBytes: Int {
        state.withLock { state in state.operations.reduce(0) { $0 + ($1.bitmap?.byteCount ?? 0) } }
    }

    /// Adds a draw of `node`; returns its index. (UI thread, before `seal`)
    func add(node: Node, sentinel: DisplaySentinel, value: UInt64) -> Int {
        let box = UncheckedSendable(WeakNode(node))
        return state.withLock { state in
            state.operations.append(Operation(node: box, sentinel: sentinel, value: value))
            return state.operations.count - 1
        }
    }

    /// Records the result of one draw (nil when cancelled or dropped). - Thread: any
    func finish(_ index: Int, bitmap: Bitmap?) {
        let ready = state.withLock { state -> Bool in
            guard index < state.operations.count, !state.operations[index].finished else { return false }
            state.operations[index].finished = true
            state.operations[index].bitmap = bitmap
            state.finishedCount += 1
            return state.sealed && state.finishedCount == state.operations.count && !state.committed
        }
        if ready { deliver() }
    }

    /// No more draws join; commits at once if all have finished. A transaction that never shows
    /// placeholders blocks here until its draws finish and commits before returning. (UI thread)
    func seal() {
        let ready = state.withLock { state -> Bool in
            state.sealed = true
            return state.finishedCount == state.operations.count && !state.committed
        }
        if waitsForCompletion {
            if !ready {
                // The frame loop may be holding worker wakeups; this wait needs the workers now.
                runtime.scheduler.releaseWakeups()
                done.wait()
            }
            commitIfNeeded()
        } else if ready {
            deliver()
        }
    }

    private func deliver() {
        if waitsForCompletion {
            done.signal()
        } else {
            runtime.enqueueCommit(self)
        }
    }

    /// Applies every current result. (UI thread)
    func commitIfNeeded() {
        let operations = state.withLock { state -> [Operation] in
            guard !state.committed else { return [] }
            state.committed = true
            return state.operations
        }
        guard !operations.isEmpty else { return }
        runtime.counters.transactionsCommitted.add(1, ordering: .relaxed)
        for operation in operations {
            guard let node = operation.node.value.node, let bitmap = operation.bitmap,
                  operation.sentinel.value == operation.value else {
                if operation.bitmap != nil { runtime.counters.staleResultsDropped.add(1, ordering: .relaxed) }
                continue
            }
            node.applyContents(bitmap)
            runtime.counters.contentsCommitted.add(1, ordering: .relaxed)
        }
    }
}
