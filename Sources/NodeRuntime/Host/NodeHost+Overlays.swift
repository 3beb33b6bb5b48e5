public import Compositor

/// A node shown above a host's root: a menu, a tooltip, a popover, a dialog, a sheet. The host
/// keeps its overlays in a stack (`NodeHost.overlays`, bottom first); the newest is on top, takes the
/// pointer first and, when it holds the focus (`Overlay.Kind.takesFocus`), the keys.
///
/// Each overlay fills the window with a transparent container; its content sits in it where the
/// positioner puts it (`PopupPositioner`), measured to fit, or fills it. A press on the container
/// outside the content ends a popup (and goes no further), a modal overlay keeps every press for
/// itself, a tooltip lets everything through. Escape ends the top overlay that `dismissesOnEscape`;
/// the window losing the keyboard focus ends the popups and tooltips. When an overlay ends, the
/// focus goes back to where it was when it opened.
///
/// ```swift
/// let menu = host.presentOverlay(MyMenuNode(), kind: .popup,
///                                positioner: PopupPositioner(anchor: button.frameInRoot, side: .below))
/// menu.onDismiss = { reason in … }
/// ```
/// - Thread: main, every member.
@MainActor
public final class Overlay {
    /// What an overlay is, which decides how it takes input.
    /// - Thread: any (a value)
    public enum Kind: Sendable, Hashable {
        /// A menu, a popover, a drop-down: a press outside ends it (and does nothing else), Escape
        /// and the window's focus loss end it, it takes the focus.
        case popup
        /// Text beside what the pointer rests on: takes no input, ends on any press, key or wheel.
        case tooltip
        /// A dialog, an alert, a sheet: everything behind it is out of reach until it ends; it
        /// takes the focus; Escape ends it only when `dismissesOnEscape` (a cancel button says so).
        case modal

        /// Whether the overlay takes the focus and keeps Tab inside it.
        public var takesFocus: Bool { self != .tooltip }
    }

    /// Why an overlay ended.
    /// - Thread: any (a value)
    public enum DismissReason: Sendable, Hashable {
        /// The app called `dismiss()` (an item chosen, a button pressed).
        case dismissed
        /// A press outside the popup's content.
        case pressedOutside
        case escape
        /// The window lost the keyboard focus (the user went to another app).
        case focusLost
        /// The host went away or another root took its place.
        case hostReset
    }

    /// The node shown.
    public let content: Node
    public let kind: Kind
    /// Where the content goes (within the window, or the screen when it is drawn on a surface of its
    /// own: see `OverlaySurfaceProvider`); nil: it fills the window.
    public var positioner: PopupPositioner? {
        didSet { if positioner != oldValue { container.setNeedsLayout() } }
    }
    /// Space kept clear at the window's edges when the content is placed by a positioner, in points.
    public var screenMargin: Double = 4 {
        didSet { container.setNeedsLayout() }
    }
    /// Whether Escape ends it (when the content does not take the key itself). Default: true, except
    /// for `.modal` (an alert without a cancel button stays until a button is chosen).
    public var dismissesOnEscape: Bool
    /// Called once when it ends, after it left the screen and the focus went back.
    public var onDismiss: ((DismissReason) -> Void)?
    /// True from `presentOverlay` until it ends.
    public internal(set) var isPresented = true
    /// Where the content was placed last, in window points.
    public var contentFrame: Rect { content.frame }

    /// The surface the content is drawn in, outside the window (see `OverlaySurfaceProvider`); nil
    /// while it is drawn in the window.
    public internal(set) var surface: OverlaySurface?
    /// The root of what `surface` draws: it holds the content's layer, and sits at minus the
    /// surface's place in the window, so that the content's top-left corner is the surface's. Nil
    /// without a surface.
    public internal(set) var surfaceRootLayer: Layer?
    /// Where the surface was last placed, in window points.
    var surfaceFrame: Rect?
    /// The provider's screen bounds when the surface was last placed (window points): they change as
    /// the window moves.
    var surfaceScreenBounds: Rect?
    /// The provider could not make a surface: the overlay is drawn in the window from then on.
    var surfaceFailed = false

    let container: OverlayContainerNode
    weak var host: NodeHost?
    /// What had the focus when it opened: where the focus goes back when it ends.
    weak var focusBefore: Node?
    /// Told when it ends, before `onDismiss`, for the toolkit's own bookkeeping (a menu's chain of
    /// submenus) so that the app keeps `onDismiss` to itself.
    var dismissObservers: [(DismissReason) -> Void] = []
    /// For a popup: true for a point outside its content that belongs to what opened it (the menu of
    /// a submenu, the bar of a menu), where the pointer and presses go through to the nodes below
    /// instead of ending the popup.
    var passesPointer: ((Point) -> Bool)?

    init(content: Node, kind: Kind, positioner: PopupPositioner?, host: NodeHost) {
        self.content = content
        self.kind = kind
        self.positioner = positioner
        self.host = host
        dismissesOnEscape = kind != .modal
        container = OverlayContainerNode()
        container.overlay = self
    }

    /// Ends it: it leaves the screen, the focus goes back, `onDismiss(.dismissed)` runs. Overlays
    /// opened above it (a submenu) end first. Harmless once it has ended.
    public func dismiss() {
        host?.dismissOverlay(self, reason: .dismissed)
    }
}

/// The full-window container of an overlay: places the content, takes the presses outside it
/// (popup, modal) or none (tooltip).
final class OverlayContainerNode: Node, @unchecked Sendable {
    weak var overlay: Overlay?

    override init() {
        super.init()
        debugName = "overlay"
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size { constrainedSize }

    override func layout() {
        guard let overlay else { return }
        let content = overlay.content
        let bounds = Rect(origin: .zero, size: frame.size)
        guard let positioner = overlay.positioner else {
            if content.frame != bounds { content.frame = bounds }
            return
        }
        // A popup drawn on a surface of its own is kept on the screen, not in the window.
        let screen = overlay.host.flatMap { overlay.drawsOnSurface(in: $0) ? $0.overlaySurfaceProvider?.screenBounds : nil }
        let area = screen ?? bounds
        let margin = min(max(0, overlay.screenMargin.isFinite ? overlay.screenMargin : 0), area.width / 4, area.height / 4)
        let available = area.insetBy(dx: margin, dy: margin)
        let measured = content.layoutThatFits(SizeRange(min: .zero, max: available.size))
        let placed = positioner.frame(for: measured.size, within: available)
        if content.frame != placed { content.frame = placed }
    }

    override func hitTest(_ point: Point) -> Node? {
        guard let overlay else { return nil }
        let inContent = overlay.content.frame.contains(point)
        if inContent, let hit = super.hitTest(point) { return hit }
        if !inContent, overlay.kind == .popup, overlay.passesPointer?(point) == true { return nil }
        switch overlay.kind {
        case .tooltip: return nil
        case .popup, .modal: return self
        }
    }
}

extension NodeHost {
    /// The overlays shown now, bottom first (see `Overlay`). - Thread: main
    public var overlays: [Overlay] { overlayStack }

    /// Shows `content` above the root (and above the overlays already shown): a popup, a tooltip or a
    /// modal overlay (see `Overlay.Kind`), placed by `positioner` (window points) or filling the
    /// window. A kind that takes focus moves it into the content: to `focus` when given, else the
    /// first node in the content that can take it. While the focus is on nothing (none in the content
    /// could take it, or the focused node turned off), keys go to the content node's `keyDown` and
    /// no further. A modal overlay cancels the press that is down, if any. The content must not be in
    /// a tree already.
    /// - Returns: the overlay, to `dismiss()` or reposition.
    /// - Thread: main
    @discardableResult
    public func presentOverlay(_ content: Node, kind: Overlay.Kind, positioner: PopupPositioner? = nil,
                               focus: Node? = nil) -> Overlay {
        UIThread.precondition("NodeHost.presentOverlay")
        Contract.require(content.supernode == nil && content.nodeHost == nil,
                         "NodeHost.presentOverlay: the content is in a tree already")
        // A tooltip gives way to whatever opens next, and never stays under another overlay.
        if kind != .tooltip { dismissOverlays(ofKind: .tooltip, reason: .dismissed) }
        let overlay = Overlay(content: content, kind: kind, positioner: positioner, host: self)
        let container = overlay.container
        container.addSubnode(content)
        container.isUserInteractionEnabled = kind != .tooltip
        container.rootHost = self
        container.contentsScale = compositor.scale
        container.frame = Rect(origin: .zero, size: viewportSize)
        overlay.focusBefore = focusedNode
        // A press held on something behind must not end there as a click once a dialog covers it.
        if kind == .modal { cancelTouchInProgress() }
        overlayStack.append(overlay)
        container.enterInterfaceState(.onScreen) {
            rootLayer.addSublayer(container.layer)
            container.layoutIfNeeded()
        }
        if kind.takesFocus {
            // The focus ends inside the content or nowhere: a `focus` that cannot take it (disabled,
            // hidden, not inside) must not leave it on a node behind, which would keep the keys.
            if let focus { self.focus(focus) }
            if focusedNode.map({ !container.isAncestor(of: $0) }) ?? true, let first = Self.firstFocusable(in: content) {
                self.focus(first)
            }
            if let focused = focusedNode, !container.isAncestor(of: focused) { self.focus(nil) }
        }
        runtime.noteAccessibilityChange()
        return overlay
    }

    /// Ends `overlay` and every overlay above it, newest first, with `reason`. Only those shown when
    /// it is called end: an overlay that an `onDismiss` presents (an alert's button opening the next
    /// alert) stays.
    func dismissOverlay(_ overlay: Overlay, reason: Overlay.DismissReason) {
        UIThread.precondition("Overlay.dismiss")
        guard let index = overlayStack.firstIndex(where: { $0 === overlay }) else { return }
        let ending = overlayStack[index...].reversed() as [Overlay]
        for top in ending {
            // An `onDismiss` that ran before may have ended this one already.
            guard let position = overlayStack.firstIndex(where: { $0 === top }) else { continue }
            overlayStack.remove(at: position)
            let topReason = top === overlay ? reason : (reason == .pressedOutside ? .pressedOutside : .dismissed)
            tearDown(top, reason: topReason)
        }
    }

    /// Ends every overlay of `kind`.
    func dismissOverlays(ofKind kind: Overlay.Kind, reason: Overlay.DismissReason) {
        while let overlay = overlayStack.last(where: { $0.kind == kind }) { dismissOverlay(overlay, reason: reason) }
    }

    /// Ends every overlay (a new root, the host going away).
    func dismissAllOverlays(reason: Overlay.DismissReason) {
        if let bottom = overlayStack.first { dismissOverlay(bottom, reason: reason) }
    }

    /// The host's window is closing: every overlay ends (`.hostReset`) and its surface closes, root or
    /// no root, and the surface provider is let go first, so that no popup window of the host (one an
    /// `onDismiss` presents meanwhile included) outlives its window. The host is out of sight from
    /// then on (`isWindowVisible` false). Harmless twice.
    /// - Thread: main
    public func windowWillClose() {
        UIThread.precondition("NodeHost.windowWillClose")
        overlaySurfaceProvider = nil
        dismissAllOverlays(reason: .hostReset)
        // A window closed is in sight no more, though its host lives on (an app keeping its
        // `Window`): it does not keep the process's caches from emptying when the others go out
        // of sight.
        isWindowVisible = false
        windowHasClosed = true
        NodeHost.liveHosts.removeAll { $0.host == nil || $0.host === self }
    }

    private func tearDown(_ overlay: Overlay, reason: Overlay.DismissReason) {
        overlay.isPresented = false
        closeSurface(of: overlay)
        let container = overlay.container
        let focusWasInside = focusedNode.map { container.isAncestor(of: $0) } ?? false
        container.setInterfaceState([])
        container.layerIfLoaded?.removeFromSuperlayer()
        container.rootHost = nil
        container.overlay = nil
        overlay.content.removeFromSupernode()
        if focusWasInside || focusedNode == nil {
            let back = overlay.focusBefore.flatMap { $0.nodeHost === self && $0.interfaceState.contains(.visible) ? $0 : nil }
            focus(back)
            if focusedNode == nil, let lower = overlayStack.last(where: { $0.kind.takesFocus }),
               let target = Self.firstFocusable(in: lower.content) {
                focus(target)
            }
        }
        hoverIsCurrent = false
        runtime.noteAccessibilityChange()
        let observers = overlay.dismissObservers
        overlay.dismissObservers = []
        for observer in observers { observer(reason) }
        overlay.onDismiss?(reason)
        overlay.onDismiss = nil
    }

    /// The node under `point` (window points) that takes the pointer: the top overlay's first, then
    /// down the stack, then the root's. An overlay's container answers for a press outside a popup's
    /// or a modal's content.
    func hitNode(at point: Point) -> Node? {
        for overlay in overlayStack.reversed() {
            if let hit = overlay.container.hitTest(point) { return hit }
        }
        if let bar = windowMenuBar, bar.frame.contains(point) {
            return bar.hitTest(Point(x: point.x - bar.frame.minX, y: point.y - bar.frame.minY))
        }
        guard let root = rootNode else { return nil }
        return root.hitTest(root.convertFromRoot(point))
    }

    /// A press at `point`: popups it falls outside of end, top down, until one contains it or a modal
    /// overlay is reached. True when the press goes no further: it ended popups and falls on no other
    /// overlay's content (a press on the menu a submenu came from still reaches that menu), or it
    /// fell on a modal overlay's container.
    func pressEndsOverlays(at point: Point) -> Bool {
        var endedOne = false
        dismissOverlays(ofKind: .tooltip, reason: .dismissed)
        while let top = overlayStack.last {
            guard top.container.hitTest(point) === top.container else { return false }
            switch top.kind {
            case .popup:
                dismissOverlay(top, reason: .pressedOutside)
                endedOne = true
            case .modal, .tooltip:
                return true
            }
        }
        return endedOne
    }

    /// Escape that no focused node took: ends the top overlay that ends on Escape. A modal overlay
    /// that does not stops the search (what is behind it is out of reach).
    func escapeEndsOverlay() -> Bool {
        for overlay in overlayStack.reversed() where overlay.kind != .tooltip {
            if overlay.dismissesOnEscape {
                dismissOverlay(overlay, reason: .escape)
                return true
            }
            if overlay.kind == .modal { return false }
        }
        return false
    }

    /// The window went out of sight (minimized) or came back. Out of sight, the host lets
    /// go of what it can rebuild without a blank frame when the window comes back: its menus and
    /// tooltips end, its renderer's textures go (nothing is drawn for it until it comes back, a
    /// change meanwhile included), its lists keep only their minimum ranges' rows drawn, and the
    /// process's image and text layout caches are emptied when no other window is in sight (a closed
    /// window is none). What is on screen keeps its bitmaps: shown again, the window is drawn whole
    /// at once, uploading them again, the same frame.
    func windowVisibilityChanged(_ visible: Bool) {
        // A closed window is out of sight for good: a restore said after its close changes nothing.
        guard visible != isWindowVisible, !windowHasClosed else { return }
        isWindowVisible = visible
        // Shown again: drawn whole at once from the bitmaps kept (what the window system kept of the
        // window may be gone).
        guard !visible else { return compositor.setNeedsWholeFrame() }
        windowFocusChanged(false)
        compositor.releaseTextures()
        // The process's caches serve every window: emptied when none is in sight.
        if !NodeHost.liveHosts.contains(where: { $0.host?.isWindowVisible == true }) {
            ImageCache.shared.removeAll()
            TextLayoutCache.shared.removeAll()
        }
    }

    /// The window lost or gained the keyboard focus: losing it ends the popups and tooltips.
    func windowFocusChanged(_ focused: Bool) {
        guard !focused else { return }
        dismissOverlays(ofKind: .tooltip, reason: .focusLost)
        while let popup = overlayStack.last(where: { $0.kind == .popup }) { dismissOverlay(popup, reason: .focusLost) }
    }

    /// The overlay that holds the focus now: the top one that takes it. Tab stays in it.
    var focusTrappingOverlay: Overlay? { overlayStack.last { $0.kind.takesFocus } }

    /// True when a modal overlay keeps `node` out of reach: it is under the top modal overlay (in the
    /// root or a lower overlay), not in it or above it; or a modal window is open over the host's
    /// window (`isInputBlocked`), which keeps every node out of reach. Screen readers' actions stop there too.
    func isBehindModalOverlay(_ node: Node) -> Bool {
        if isInputBlocked { return true }
        guard let modal = overlayStack.lastIndex(where: { $0.kind == .modal }) else { return false }
        return !overlayStack[modal...].contains { $0.container.isAncestor(of: node) }
    }

    /// Lays out overlays whose layout is out of date (a menu's items changed, the window resized).
    func layOutOverlays() {
        let bounds = Rect(origin: .zero, size: viewportSize)
        for overlay in overlayStack {
            let container = overlay.container
            if container.frame != bounds { container.frame = bounds }
            if !container.hasCachedLayout(for: .exactly(bounds.size)) { container.layoutIfNeeded() }
        }
    }

    /// True when an overlay needs a layout.
    var overlaysNeedLayout: Bool {
        overlayStack.contains { !$0.container.hasCachedLayout(for: .exactly($0.container.frame.size)) }
    }

    static func firstFocusable(in node: Node) -> Node? {
        if node.canBecomeFocused && !node.isHidden { return node }
        for subnode in node.subnodes where !subnode.isHidden {
            if let found = firstFocusable(in: subnode) { return found }
        }
        return nil
    }
}

extension Node {
    /// True when `node` is this node or inside it (through its event chain). - Thread: main
    @MainActor
    func isAncestor(of node: Node) -> Bool {
        var current: Node? = node
        while let candidate = current {
            if candidate === self { return true }
            current = candidate.eventSupernode
        }
        return false
    }
}
