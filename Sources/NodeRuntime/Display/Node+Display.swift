public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A node's display request and its one draw in flight. Kept in the node's state, under its lock.
///
/// The rules that make the pipeline's guarantees (see docs/display-pipeline.md, "The promise"):
/// - `generation` counts requests: `setNeedsDisplay` bumps it and sets `needsDisplay` in one step under
///   the lock. A draw claims the request (clears `needsDisplay`, reads `generation`) in one step under
///   the lock, then captures its parameters, so the parameters are always at least as new as the
///   generation they carry.
/// - At most one draw is in flight (`inFlight`) and at most one is pending (`needsDisplay`). A request
///   while a draw is in flight does not cancel it: it waits, and the node registers again for the next
///   frame when the draw in flight is committed. So a node that changes every frame still commits.
/// - A result is applied only if its generation is newer than `committedGeneration` and the display
///   sentinel has not moved since it was claimed; the sentinel moves only when the draw can no longer
///   matter (leaving the display range, removal, suspension, deallocation), and then the request is
///   kept (`needsDisplay`), so nothing is lost.
struct DisplayRequestState {
    /// A draw is wanted and not yet claimed.
    var needsDisplay = false
    /// Bumped by every request.
    var generation: UInt64 = 0
    /// The generation of the contents shown.
    var committedGeneration: UInt64 = 0
    /// The claimed draw not yet committed or cancelled.
    var inFlight: DrawInFlight?
    /// The id of the last draw claimed.
    var lastDrawID: UInt64 = 0
    /// Frames in a row the request waited for a pending layout (see `NodeLayoutState.layoutPending`).
    var layoutDeferrals = 0
    /// The most frames a request waits for a layout: a node whose tree is invalidated every frame
    /// still draws.
    static let maximumLayoutDeferrals = 2

    struct DrawInFlight {
        let id: UInt64
        var job: DisplayJob?
        /// Scheduled ahead of everything (a never-show-placeholders node becoming visible): a new
        /// display distance must not move it back.
        var isUrgent = false
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

    /// While true, the node does not draw, and a draw in flight is cancelled (its request is kept).
    /// Turning it off draws again if a draw was wanted or lost. - Thread: any
    public var isDisplaySuspended: Bool {
        get { state.withLock { $0.isDisplaySuspended } }
        set {
            let (job, resume) = state.withLock { state -> (DisplayJob?, Bool) in
                let was = state.isDisplaySuspended
                state.isDisplaySuspended = newValue
                if newValue { return (Self.cancelInFlight(&state, sentinel: displaySentinel), false) }
                return (nil, was && state.display.needsDisplay && state.canStartDisplay)
            }
            job?.cancel()
            if resume && drawsContents { runtime.display.register(self) }
            // A layer holding its old contents at their size for a draw that will not come now
            // takes the node's frame (see `applyLayerState`).
            if newValue && isNodeLoaded { layerStateDidChange() }
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

    /// True while the contents change as the frames of an animation (an animated image playing): new
    /// contents replace the old at once, without `contentsCrossFadeDuration`'s fade. - Thread: any
    var contentsAreAnimationFrames: Bool {
        get { state.withLock { $0.contentsAreAnimationFrames } }
        set { state.withLock { $0.contentsAreAnimationFrames = newValue } }
    }

    /// Seconds over which contents fade in over the placeholder when they arrive (0: at once). - Thread: any
    public var placeholderFadeDuration: Double {
        get { state.withLock { $0.placeholderFadeDuration } }
        set { state.withLock { $0.placeholderFadeDuration = newValue.isFinite ? max(0, newValue) : 0 } }
    }

    /// When true on a node or its transaction container, a node that becomes visible without contents
    /// shows no placeholder if it can help it: its draws go to the front of the queue and the frame waits
    /// for them, up to `DisplayCoordinator.placeholderWaitBudget` for all such waits in the frame (8 ms
    /// by default). Past the budget the frame shows what it has and the draws commit at a later frame.
    /// Draws ahead of the screen and redraws over current contents never wait. - Thread: any
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

    /// How far the node is from the viewport in the scroll direction, in points; orders its draws among
    /// the offscreen ones (set by range controllers). - Thread: any
    public var displayDistance: Double {
        get { state.withLock { $0.displayDistance } }
        set {
            let job = state.withLock { state -> DisplayJob? in
                state.displayDistance = newValue
                // An urgent draw stays ahead of everything: the distance orders offscreen work only.
                return state.display.inFlight?.isUrgent == true ? nil : state.display.inFlight?.job
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

    /// Asks for the contents to be drawn again from the node's current state. The draw starts at the
    /// next frame if the node is loaded, in the display range, not suspended and not zero-sized (or
    /// when it becomes so). A draw already in flight is not cancelled: this request waits for it as
    /// the one pending draw, and starts at the frame that commits it.
    /// - Thread: any
    public func setNeedsDisplay() {
        // A node drawn into a rasterizing ancestor's bitmap asks that ancestor; it keeps the request
        // itself too, so that it draws its own contents if it leaves the rasterized subtree.
        //
        // The request is recorded before the ancestor is looked for. Another thread may move the node
        // out of the rasterized subtree at any moment, and the move registers the request it finds
        // (`cancelDisplay` as the node leaves, `registerWaitingDisplaysInSubtree` as it attaches to
        // its new parent). Recorded first, a request is either seen by the move or made after it, and
        // then the look finds no ancestor and registers it here. Looked for first, the ancestor could
        // be the one the node had just left, with the move already past: the request would wait,
        // unregistered, until some later request.
        let canRegister = state.withLock { state -> Bool in
            state.display.generation &+= 1
            state.display.needsDisplay = true
            return state.display.inFlight == nil && state.canStartDisplay
        }
        let ancestor = rasterizingAncestor
        #if DEBUG
        Self.rasterizingAncestorFoundForTesting?(self)
        #endif
        let register = ancestor == nil && canRegister
        if let ancestor { ancestor.setNeedsDisplay() }
        if register && drawsContents { runtime.display.register(self) }
    }

    #if DEBUG
    /// Called by `setNeedsDisplay()` once it has recorded the request and looked for the rasterizing
    /// ancestor, before it acts on what it found: a test moves the node there, as another thread
    /// could. Debug builds only.
    nonisolated(unsafe) static var rasterizingAncestorFoundForTesting: ((Node) -> Void)?
    #endif

    /// Registers the draws the nodes of this subtree are waiting for and can now start: for a subtree
    /// that joins a loaded parent already in its states (moved out of a rasterized subtree, whose
    /// nodes asked their rasterizing ancestor to draw instead). - Thread: any
    func registerWaitingDisplaysInSubtree() {
        for node in subtree() where node.drawsContents {
            let waiting = node.state.withLock { $0.display.needsDisplay && $0.display.inFlight == nil && $0.canStartDisplay }
            if waiting && node.rasterizingAncestor == nil { runtime.display.register(node) }
        }
    }

    /// Cancels the draw in flight because it can no longer matter (leaving the display range, removal,
    /// suspension): bumps the sentinel and keeps the request, so the node draws its latest state
    /// when it can again. - Thread: any
    func cancelDisplay() {
        let (job, register) = state.withLock { state -> (DisplayJob?, Bool) in
            let job = Self.cancelInFlight(&state, sentinel: displaySentinel)
            return (job, state.display.needsDisplay && state.canStartDisplay)
        }
        job?.cancel()
        // Still able to draw (a node moved to another parent keeps its states): draw again at once.
        if register && drawsContents { runtime.display.register(self) }
    }

    /// The in-lock half of a cancellation: returns the job to cancel once the lock is released.
    private static func cancelInFlight(_ state: inout State, sentinel: DisplaySentinel) -> DisplayJob? {
        sentinel.bump()
        guard let inFlight = state.display.inFlight else { return nil }
        state.display.inFlight = nil
        state.display.needsDisplay = true
        return inFlight.job
    }

    /// True for nodes that produce a bitmap: drawing nodes and rasterizing containers. - Thread: any
    var drawsContents: Bool { self is any NodeDrawing || isRasterizing }

    /// Makes the node's draw closure from its parameters, with baked background and corners, and for a
    /// rasterizing node the draws of its whole subtree. Nil for nodes that do not draw. (UI thread)
    @MainActor
    func makeDisplayClosure(_ snapshot: State) -> (@Sendable (DrawInfo) -> Bitmap?)? {
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
        let ownInto = (self as? any NodeDrawing)?.makeDrawIntoClosure()
        return makeRasterizedClosure(own: ownInto, background: snapshot.backgroundColor, radii: radii)
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

    /// Claims this node's display request and starts its draw, if it can now. (UI thread, at the
    /// frame's display phase)
    /// - Returns: true when a draw was started (or done, for a synchronous node).
    @MainActor
    func startDisplayIfPossible(in frame: inout DisplayFrame) -> Bool {
        if let ancestor = rasterizingAncestor {
            ancestor.setNeedsDisplay()
            return false
        }
        // One step under the lock: the request is cleared, the draw is marked in flight, and its
        // generation and cancellation epoch are read together.
        var waitsForLayout = false
        let claim = state.withLock { state -> (DrawTicket, State)? in
            guard state.display.needsDisplay, state.display.inFlight == nil, state.canStartDisplay,
                  !state.frame.sanitized.isEmpty else { return nil }
            // A layout on its way may give the node another size (new text, a new child): drawing
            // now would draw at the old one, shown stretched until the redraw. Wait for it, a
            // frame or two at most.
            if state.layoutState.layoutPending && state.display.layoutDeferrals < DisplayRequestState.maximumLayoutDeferrals {
                state.display.layoutDeferrals += 1
                waitsForLayout = true
                return nil
            }
            state.display.layoutDeferrals = 0
            state.display.needsDisplay = false
            state.display.lastDrawID &+= 1
            state.display.inFlight = DisplayRequestState.DrawInFlight(id: state.display.lastDrawID, job: nil)
            let ticket = DrawTicket(id: state.display.lastDrawID, generation: state.display.generation,
                                    epoch: displaySentinel.value)
            return (ticket, state)
        }
        guard let (ticket, snapshot) = claim else {
            if waitsForLayout { runtime.display.register(self) }
            return false
        }
        // Captured after the claim: the parameters hold at least everything the request saw.
        guard let draw = makeDisplayClosure(snapshot) else {
            state.withLock { if $0.display.inFlight?.id == ticket.id { $0.display.inFlight = nil } }
            return false
        }
        runtime.counters.displaysStarted.add(1, ordering: .relaxed)
        let scale = contentsScale
        let bounds = Rect(origin: .zero, size: snapshot.frame.sanitized.size)
        let layout = frame.uploadAlphaLayout

        if !snapshot.displaysAsynchronously || runtime.forcesSynchronousDisplay {
            let info = DrawInfo(bounds: bounds, scale: scale)
            let bitmap = DrawScope.run { draw(info) }
            finishDraw(ticket, bitmap: bitmap?.prepared(forUpload: layout))
            return true
        }

        let owner = transactionOwner
        // Never-show-placeholders waits only for a node that becomes visible without contents: a draw
        // a screen ahead, or a redraw over current contents, shows no placeholder anyway.
        let waits = snapshot.interfaceState.contains(.visible) && !snapshot.hasContents
            && (snapshot.neverShowPlaceholders || (owner !== self && owner.neverShowPlaceholders))
        let transaction = frame.transaction(for: owner, waitsForCompletion: waits)
        let operation = transaction.add(node: self, ticket: ticket)
        let sentinel = displaySentinel
        let epoch = ticket.epoch
        let priority: DisplayPriority = transaction.waitsForCompletion ? .urgent : displayPriority
        let job = runtime.scheduler.schedule(
            priority: priority,
            kind: .draw,
            isCancelled: { sentinel.value != epoch },
            onDropped: { transaction.finish(operation, bitmap: nil) },
            work: { isCancelled in
                let bitmap = DrawScope.run { draw(DrawInfo(bounds: bounds, scale: scale, isCancelled: isCancelled)) }
                if isCancelled() {
                    transaction.finish(operation, bitmap: nil)
                    return .cancelled
                }
                // Here, on the worker: the opacity scan and any alpha conversion, so the UI thread's
                // upload is a copy.
                transaction.finish(operation, bitmap: bitmap?.prepared(forUpload: layout))
                return .completed
            })
        state.withLock { state in
            guard state.display.inFlight?.id == ticket.id else { return }
            state.display.inFlight?.job = job
            state.display.inFlight?.isUrgent = priority == .urgent
        }
        return true
    }

    /// Ends the draw `ticket` stands for: applies `bitmap` if it is still current (the sentinel has not
    /// moved and nothing newer is shown), frees the in-flight slot and, when a request came meanwhile,
    /// registers for the next draw. (UI thread)
    /// - Returns: true when the contents were applied.
    @discardableResult
    @MainActor
    func finishDraw(_ ticket: DrawTicket, bitmap: Bitmap?) -> Bool {
        let (apply, register) = state.withLock { state -> (Bool, Bool) in
            var register = false
            if state.display.inFlight?.id == ticket.id {
                state.display.inFlight = nil
                register = state.display.needsDisplay && state.canStartDisplay
            }
            let current = bitmap != nil && displaySentinel.value == ticket.epoch
                && ticket.generation > state.display.committedGeneration
            if current { state.display.committedGeneration = ticket.generation }
            return (current, register)
        }
        if apply, let bitmap {
            applyContents(bitmap)
            runtime.display.contentsDidCommit(self, generation: ticket.generation)
        } else {
            // The layer may be holding the old contents at their size (see `applyLayerState`).
            applyLayerState()
        }
        if register && drawsContents { runtime.display.register(self) }
        return apply
    }

    /// Shows committed contents. (UI thread)
    @MainActor
    func applyContents(_ bitmap: Bitmap?) {
        UIThread.precondition("Node.applyContents")
        let layer = self.layer
        let (placeholder, fade, crossFade, hadContents) = state.withLock { state -> (Color?, Double, Double, Bool) in
            let had = state.hasContents
            state.hasContents = bitmap != nil
            let crossFade = state.contentsAreAnimationFrames ? 0 : state.contentsCrossFadeDuration
            return (state.placeholderColor, state.placeholderFadeDuration, crossFade, had)
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
    @MainActor
    func clearContents() {
        guard let layer = layerIfLoadedUnchecked else { return }
        state.withLock { $0.hasContents = false }
        layer.contents = nil
        applyLayerState()
    }

    /// Draws this node and its subtree now, on the calling thread, and applies the contents: for tests,
    /// screenshots and the synchronous baseline. Loads layers as needed. Each node's request is claimed
    /// before its parameters are captured, as for a background draw; a background draw of an older
    /// request still in flight is then dropped at its commit.
    /// - Thread: main
    @MainActor
    public func displayNowAndWait() {
        UIThread.precondition("Node.displayNowAndWait")
        _ = layer
        let layout = runtime.display.uploadAlphaLayout
        for node in subtree() where !node.isRasterizedByAncestor {
            let claim = node.state.withLock { state -> (DrawTicket, State)? in
                guard !state.frame.sanitized.isEmpty else { return nil }
                state.display.needsDisplay = false
                let ticket = DrawTicket(id: 0, generation: max(state.display.generation, state.display.committedGeneration &+ 1),
                                        epoch: node.displaySentinel.value)
                state.display.generation = ticket.generation
                return (ticket, state)
            }
            node.runtime.display.unregister(node)
            guard let (ticket, snapshot) = claim, let draw = node.makeDisplayClosure(snapshot) else { continue }
            let info = DrawInfo(bounds: Rect(origin: .zero, size: snapshot.frame.sanitized.size), scale: node.contentsScale)
            let bitmap = DrawScope.run { draw(info) }
            node.finishDraw(ticket, bitmap: bitmap?.prepared(forUpload: layout))
        }
    }

    /// The layer if loaded.
    @MainActor
    var layerIfLoadedUnchecked: Layer? { isNodeLoaded ? layerIfLoaded : nil }

    /// True when the node shows contents drawn from its latest request: its layer has contents, and no
    /// draw is pending or in flight. (UI thread)
    @MainActor
    var showsCurrentContents: Bool {
        guard let layer = layerIfLoadedUnchecked, layer.contents != nil else { return false }
        return state.withLock { !$0.display.needsDisplay && $0.display.inFlight == nil }
    }

    /// The generation of the contents shown (0: none drawn yet) and of the latest request. - Thread: any
    var displayGenerations: (committed: UInt64, requested: UInt64) {
        state.withLock { ($0.display.committedGeneration, $0.display.generation) }
    }
}

extension Node.State {
    /// Loaded, in the display range and not suspended: a draw may start (given a size).
    var canStartDisplay: Bool { isLoaded && interfaceState.contains(.display) && !isDisplaySuspended }
}

extension DisplayPriority {
    /// Ahead of everything visible: the draws the UI thread is waiting for.
    static let urgent = DisplayPriority(isVisible: true, distance: -1)
}
