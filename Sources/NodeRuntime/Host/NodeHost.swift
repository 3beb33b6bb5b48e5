public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Connects a node tree to a compositor and runs its frames: input routing, commits, layout, ranges,
/// displays, compositing, in that order, once a frame.
/// - Thread: main, every member.
@MainActor
public final class NodeHost {
    public let compositor: Compositor
    /// The process's runtime (`Runtime.shared`).
    public let runtime: Runtime
    /// The node that fills the window. (main thread only)
    public private(set) var rootNode: Node?
    /// False while the window is minimized (`InputEvent.windowVisibilityChanged`): the host
    /// has let go of what it can rebuild (see `windowVisibilityChanged(_:)`). (main thread only)
    public internal(set) var isWindowVisible = true
    /// True once the window closed (`windowWillClose`): out of sight for good, whatever its platform
    /// still says. (main thread only)
    var windowHasClosed = false
    /// The nodes of the last accessibility tree, by element id, for the actions a screen reader asks
    /// for (weak: the tree does not keep a node alive). (main thread only)
    var accessibilityNodes: [Int: AccessibilityNodeReference] = [:]
    /// The version of the last accessibility tree. (main thread only)
    var accessibilityVersion = 0
    /// The ring around the focused node while focus moves by the keyboard. (main thread only)
    var focusRing: Layer?
    /// Whether the focus ring shows: from a Tab (or a screen reader's focus) until the next press of
    /// the pointer. (main thread only)
    public internal(set) var showsFocusRing = false
    /// The focus ring's colour. (main thread only)
    public var focusRingColor = Color(rgb: 0x3390EC)
    /// The controller whose node is the root, when the root was set with `setRootController(_:)`.
    /// (main thread only)
    public private(set) var rootController: NodeController?
    /// The compositor's root: the root node's layer plus anything the app overlays. (main thread only)
    public let rootLayer = Layer(name: "host")
    /// Called for keys the focused node and its supernodes leave (and Tab, when no focusable node
    /// takes it); return true to consume. Keys it leaves go to the root controller's `handleKey`.
    /// (main thread only)
    public var keyHandler: ((Key, KeyModifiers) -> Bool)?
    /// Called once a frame after layout, before displays start: range controllers hook in here.
    /// (main thread only)
    public var frameObservers: [(Double) -> Void] = []
    /// When true, a tree whose layout was invalidated is measured on a background queue, from the end
    /// of the frame that found it invalid (after present, so the measuring thread does not take the UI
    /// thread's core mid-frame), and the result applied in one later frame; when false, it is measured
    /// and applied within the frame. The first layout of a root and layouts after a resize are always
    /// synchronous. (main thread only)
    public var measuresLayoutInBackground = true
    /// A background layout of the root is running. (main thread only)
    private var layoutInFlight = false
    /// A frame that answers typing (a key, text, an input method's composition) lays the tree out
    /// within the frame, as `measuresLayoutInBackground == false` does, when no background layout is
    /// running and the last layout measured so took at most this many milliseconds: the typed text is
    /// then measured, placed and drawn (see `EditableTextNode.drawsLinesOnUIThread`) in the frame that
    /// takes the key, instead of a frame or two later. A layout over it sends the next second's
    /// typing to the background again. 0 turns it off. (main thread only)
    public var typingLayoutBudgetMilliseconds = 2.0
    /// The frame time until which typing lays out in the background (the last inline layout was
    /// over budget). (main thread only)
    private var typingLayoutInlineAfter = -Double.infinity
    /// A background layout of the root is being measured or waits to be applied. - Thread: main
    var isLayoutInFlight: Bool { layoutInFlight }

    /// The most recent frame's record. (main thread only)
    public private(set) var lastFrame = FrameRecord()
    /// The current frame's time. (main thread only)
    public private(set) var time = 0.0

    /// Range controllers called every frame, held weakly; see `addFrameParticipant`. (main thread only)
    private var participants: [WeakFrameParticipant] = []
    /// When the event being routed happened (the frame's time unless the compositor thread said).
    /// (main thread only)
    var eventTime = 0.0
    /// What the compositor thread did with the event being routed. (main thread only)
    var eventScrollUpdate: ScrollUpdate?
    /// True while a modal window is open over the host's window (`Application.Window.isBlockedByModalWindow`):
    /// no touch stays down (the one down as it is set is cancelled, and so is one a press read
    /// before it began: its release would be dropped), no key is taken as held (Shift), the popups
    /// and tooltips end as when the window
    /// loses the focus, and the pointer, keys and text its overlays' surfaces read are dropped.
    /// What the window itself reads is filtered where it is read. (main thread only)
    public var isInputBlocked = false {
        didSet {
            UIThread.precondition("NodeHost.isInputBlocked")
            guard isInputBlocked && !oldValue else { return }
            cancelTouchInProgress()
            // A drag over the window targets nothing under the modal window: its moves and drop are dropped.
            dragEnded()
            // The keys held now are released under the modal window, unheard: none is held here.
            isShiftDown = false
            windowFocusChanged(false)
        }
    }
    /// Where the pointer was last seen, in window points: wheel events go to the node under it; nil
    /// once it has left the window. (main thread only)
    var pointerLocation: Point?

    /// Whether Shift was down at the last key event (a shift-click extends a selection).
    /// (main thread only)
    public private(set) var isShiftDown = false
    /// The node that receives keys and text first; see `focus(_:)`. (main thread only)
    public internal(set) var focusedNode: Node?
    /// The text-input caret last given to the platform (where the input method places its
    /// candidate window), in window points; nil while text input is off. (main thread only)
    public internal(set) var textInputCaret: Rect?
    /// The focus owner shows an input method's composition (marked text). (main thread only)
    var composing = false

    /// The node under the pointer while it is down, and the recognizers watching it. (main thread only)
    private var touchedNode: Node?
    private var touchRecognizers: [GestureRecognizer] = []
    private var touchClaimed = false
    /// The button that started the touch that is down, and its press's click count. (main thread only)
    private var touchButton = PointerButton.primary
    private var touchClickCount = 1
    /// The hovered chain, innermost first: the interactive node under the pointer and its event
    /// ancestors, kept while no button is down (see `NodeHost+Pointer.swift`). (main thread only)
    var hoveredChain: [Node] = []
    /// The drop target a drag from another application is over now (its node may be gone since).
    var draggedOver: DropTarget?
    /// Where that drag was last seen (window points), nil when none is over the window, and
    /// `Layer.changeCount` when its target was last worked out. (main thread only)
    var dragLocation: Point?
    var dragChangeCount = -1
    /// True once this frame's events have brought the hovered chain up to date. (main thread only)
    var hoverIsCurrent = false
    /// The cursor shape last given to the backend (SDL starts with the arrow). (main thread only)
    var shownCursor = Cursor.arrow
    /// `Layer.changeCount` when the hovered chain was last worked out. (main thread only)
    var hoverChangeCount = -1
    /// True while a button is down on a node. (main thread only)
    var isTouchDown: Bool { touchedNode != nil }
    /// The window's menu bar, above the root (`NodeHost+MenuBar`). (main thread only)
    var windowMenuBar: MenuBarNode?
    /// The overlays shown above the root, bottom first (`NodeHost+Overlays`). (main thread only)
    var overlayStack: [Overlay] = []
    /// Shows a node's `toolTip` once the pointer rests on it (`NodeHost+ToolTips`). (main thread only)
    lazy var toolTips = ToolTipTracker(host: self)
    /// The menu bars shown, the shortcut menus and the submenu delay (`NodeHost+Menus`). (main thread only)
    lazy var menuTracker = MenuTracker()
    /// Where popups and tooltips are shown outside the window (`OverlaySurfaceProvider`); nil: in the
    /// window. Set before overlays are presented: one shown already keeps where it is drawn.
    /// (main thread only)
    public var overlaySurfaceProvider: OverlaySurfaceProvider?

    /// Makes a host that shows nodes through `compositor`. Every host and node share `Runtime.shared`.
    /// The host publishes its renderer's upload layout to the runtime (`DisplayCoordinator.uploadAlphaLayout`),
    /// so the draws of its nodes are prepared for it on the workers.
    public init(compositor: Compositor) {
        UIThread.precondition("NodeHost.init")
        self.compositor = compositor
        self.runtime = .shared
        runtime.display.uploadAlphaLayout = compositor.uploadAlphaLayout
        rootLayer.frame = Rect(origin: .zero, size: compositor.viewportSize)
        NodeHost.liveHosts.removeAll { $0.host == nil }
        NodeHost.liveHosts.append(WeakHost(host: self))
    }

    /// The hosts made so far that are still alive (weak), to tell whether any window is in sight.
    static var liveHosts: [WeakHost] = []

    struct WeakHost {
        weak var host: NodeHost?
    }

    /// The window's size in points.
    public var viewportSize: Size { compositor.viewportSize }

    /// Shows `node` as the root: it is sized to the window, enters preload and display (loading its
    /// layers, `didLoad`), is laid out (`layout()`), then becomes visible. The previous root leaves.
    public func setRootNode(_ node: Node?) {
        UIThread.precondition("NodeHost.setRootNode")
        // A plain node taking the place of a controller's node ends that controller's presentation.
        if let controller = rootController, controller.node !== node { setRootController(nil) }
        // What floated over the old root (its menus, its dialogs) goes with it.
        if node !== rootNode { dismissAllOverlays(reason: .hostReset) }
        if let old = rootNode {
            old.setInterfaceState([])
            old.layerIfLoaded?.removeFromSuperlayer()
            old.rootHost = nil
        }
        rootNode = node
        guard let node else { return }
        node.rootHost = self
        node.contentsScale = compositor.scale
        node.frame = contentBounds
        node.enterInterfaceState(.onScreen) {
            rootLayer.insertSublayer(node.layer, at: 0)
            if let controller = rootController, controller.node === node {
                controller.finishLoadingIfNeeded()
                controller.layout(in: node.frame)
            } else {
                node.layoutIfNeeded()
            }
        }
    }

    /// Shows `controller`'s node as the root (through `setRootNode`), with the controller's lifecycle
    /// (see `NodeController`): the previous root controller gets `viewWillDisappear`; the new one gets
    /// `loadView` (the first time) and `viewWillAppear`; its node enters measure, preload and display
    /// (loading its layers: `didLoad`, then `viewDidLoad` the first time), is laid out for the window
    /// (`viewWillLayoutSubviews`, `layout()`) and becomes visible; then the previous one gets
    /// `viewDidDisappear` and the new one `viewDidAppear`. Nil removes the root.
    /// A controller on a navigation stack is shown by its navigation controller, not here: passing one
    /// is a precondition failure.
    public func setRootController(_ controller: NodeController?) {
        UIThread.precondition("NodeHost.setRootController")
        guard controller !== rootController else { return }
        Contract.require(controller?.navigationController == nil,
                         "NodeHost.setRootController: the controller belongs to a navigation controller")
        let old = rootController
        old?.willDismiss()
        // Recorded before `setRootNode`, which lays the root out through its controller.
        rootController = controller
        controller?.willPresent()
        setRootNode(controller?.node)
        old?.didDismiss()
        controller?.didPresent()
    }

    /// Pixels per point of this host's window: its nodes measure and draw at it. - Thread: main
    @MainActor
    public var contentsScale: Double { compositor.scale }

    /// Takes a new window scale (the window moved to a display of another density, or the app
    /// forces one): the compositor converts at it, and the root's tree, the menu bar's and every
    /// overlay's (menus, dialogs, tooltips) are measured and drawn again at it. Nodes of other hosts
    /// keep theirs. Non-finite or non-positive values are ignored.
    /// - Thread: main
    @MainActor
    public func setContentsScale(_ scale: Double) {
        UIThread.precondition("NodeHost.setContentsScale")
        guard scale.isFinite, scale > 0, scale != compositor.scale else { return }
        compositor.scale = min(scale, 8)
        rootNode?.contentsScale = compositor.scale
        // Outside the root's tree, each took the scale as it was shown.
        windowMenuBar?.contentsScale = compositor.scale
        for overlay in overlayStack { overlay.container.contentsScale = compositor.scale }
        viewportDidChange()
    }

    /// Sizes the root to the window again (after a resize) and lays it out.
    public func viewportDidChange() {
        UIThread.precondition("NodeHost.viewportDidChange")
        rootLayer.frame = Rect(origin: .zero, size: viewportSize)
        layOutOverlays()
        layOutMenuBar()
        guard let rootNode else { return }
        let bounds = contentBounds
        if let controller = rootController, controller.node === rootNode {
            controller.layout(in: bounds)
            return
        }
        rootNode.frame = bounds
        rootNode.layoutIfNeeded()
    }

    // MARK: Frames

    /// Input that edits text: a key, typed text, an input method's composition.
    private static func isTyping(_ event: InputEvent) -> Bool {
        switch event {
        case .keyDown, .textInput, .textEditing: return true
        default: return false
        }
    }

    /// Runs one frame at `time` with the given input. Returns its record. `eventTimes` says when
    /// each event was read (a compositor thread's events), and `scrollUpdates` what a compositor
    /// thread did with each (the wheel it applied to a scroll itself, which that scroll takes over
    /// instead of applying the event again).
    @discardableResult
    public func runFrame(time: Double, events: [InputEvent], eventTimes: [Double]? = nil,
                         scrollUpdates: [ScrollUpdate?]? = nil) -> FrameRecord {
        UIThread.precondition("NodeHost.runFrame")
        // Wall time read first and last, so the CPU time's span lies inside it.
        let wallStart = MonotonicClock.nanoseconds()
        let cpuStart = ThreadCPUClock.nanoseconds()
        var record = FrameRecord()
        self.time = time
        // Workers woken mid-frame would take this thread's core on a two-core machine; draws queued
        // during the frame start right after present instead.
        runtime.scheduler.holdWakeups()
        // A background layout starts after present for the same reason: its thread, woken mid-frame,
        // would take this one's core.
        var backgroundLayoutRoot: Node?
        defer {
            runtime.scheduler.releaseWakeups()
            backgroundLayoutRoot?.layoutInBackground { [weak self] in self?.layoutInFlight = false }
        }
        record.time = time
        record.accessibilityChangeCount = runtime.accessibilityChangeCount
        var mark = MonotonicClock.nanoseconds()
        func lap() -> Double {
            let now = MonotonicClock.nanoseconds()
            defer { mark = now }
            return Double(now &- mark) / 1_000_000
        }
        hoverIsCurrent = false
        // The input of the overlays' surfaces comes after the window's, timed by the frame. The focus
        // lost and back within one batch (a popup window shown where no window manager runs takes it
        // for a moment) ends nothing.
        let routed = events + takeOverlaySurfaceEvents(after: events)
        let focusBack = routed.lastIndex(of: .windowFocusChanged(true))
        for (index, event) in routed.enumerated() {
            if event == .windowFocusChanged(false), let focusBack, focusBack > index { continue }
            eventTime = eventTimes.flatMap { index < $0.count && $0[index].isFinite ? min($0[index], time) : nil } ?? time
            eventScrollUpdate = scrollUpdates.flatMap { index < $0.count ? $0[index] : nil }
            route(event)
        }
        eventTime = time
        eventScrollUpdate = nil
        // A press read before the window was blocked (a compositor thread's) has done what it does
        // (a fling it stopped stays stopped); its touch ends here, as its release will not come.
        if isInputBlocked { cancelTouchInProgress() }
        for recognizer in touchRecognizers { recognizer.frameDidAdvance(to: time) }
        claimTouchIfRecognized()
        updateFocus(at: time)
        // Content that moved under a still pointer (a scroll, a new screen) changes what it hovers;
        // with nothing moved since the last look, the hover is still right.
        if !hoverIsCurrent && Layer.changeCount != hoverChangeCount { updateHover() }
        updateDragTarget()
        record.eventsMilliseconds = lap()

        record.mainQueueItems = runtime.mainQueue.drain()
        (record.commitsApplied, record.commitsDeferred) = runtime.applyPendingCommits()
        record.commitsMilliseconds = lap()

        if let rootNode, !rootNode.hasCachedLayout(for: .exactly(rootNode.frame.size)) {
            let typed = typingLayoutBudgetMilliseconds > 0 && !layoutInFlight && time >= typingLayoutInlineAfter
                && events.contains(where: Self.isTyping)
            if typed {
                let start = MonotonicClock.nanoseconds()
                rootNode.layoutIfNeeded()
                if MonotonicClock.milliseconds(since: start) > typingLayoutBudgetMilliseconds { typingLayoutInlineAfter = time + 1 }
            } else if measuresLayoutInBackground {
                // The tree keeps its current frames until the new layout, measured off this thread
                // from the end of this frame, is applied whole at a later frame's main-queue drain.
                if !layoutInFlight {
                    layoutInFlight = true
                    backgroundLayoutRoot = rootNode
                }
            } else {
                rootNode.layoutIfNeeded()
            }
        }
        if overlaysNeedLayout { layOutOverlays() }
        if menuBarNeedsLayout { layOutMenuBar() }
        record.layoutMilliseconds = lap()

        for observer in frameObservers { observer(time) }
        for participant in liveParticipants() { participant.frameWillStartDisplays(at: time) }
        runtime.animator.advance(to: time)
        record.rangesMilliseconds = lap()

        record.displaysStarted = runtime.startPendingDisplays()
        for participant in liveParticipants() { participant.frameWillComposite(&record) }
        record.displayMilliseconds = lap()

        updateFocusRing()
        // After everything that may present an overlay this frame (a tooltip's delay ending), so
        // that none is drawn in the window for a frame before its surface takes it.
        updateOverlaySurfaces()
        // Nothing changed on screen since the last frame drawn: nothing is drawn or presented.
        record.compositor = compositor.renderIfChanged(rootLayer, at: time)
        renderOverlaySurfaces(at: time)
        record.schedulerQueueDepth = runtime.scheduler.queueDepth
        record.cpuMilliseconds = ThreadCPUClock.milliseconds(since: cpuStart)
        record.wallMilliseconds = MonotonicClock.milliseconds(since: wallStart)
        lastFrame = record
        return record
    }

    /// Polls the platform and runs frames on `clock` until a quit event, `frames` frames, or `onFrame`
    /// returns false. `onFrame` sees each record.
    public func run(clock: FrameClock, frames: Int? = nil, onFrame: (FrameRecord) -> Bool = { _ in true }) {
        var count = 0
        while frames.map({ count < $0 }) ?? true {
            let events = compositor.pollEvents()
            if events.contains(.quit) { return }
            let record = runFrame(time: clock.now, events: events)
            count += 1
            if !onFrame(record) { return }
            clock.waitForNextFrame()
        }
    }

    // MARK: Input

    private func route(_ event: InputEvent) {
        switch event {
        case let .keyUp(_, modifiers):
            isShiftDown = modifiers.contains(.shift)
        case let .keyDown(key, modifiers):
            isShiftDown = modifiers.contains(.shift)
            toolTips.inputArrived()
            if focusChainHandles({ $0.keyDown(key, modifiers: modifiers) }) { break }
            // With the focus on nothing inside a menu or a dialog, its content hears the key (Enter
            // chooses a dialog's default button).
            if focusedNode == nil, let overlay = focusTrappingOverlay, overlay.content.keyDown(key, modifiers: modifiers) { break }
            if key == .tab, modifiers.isDisjoint(with: [.control, .alt, .command]), moveFocus(backward: modifiers.contains(.shift)) {
                showsFocusRing = true
                break
            }
            if key == .escape, modifiers.isEmpty, escapeEndsOverlay() { break }
            // The Menu key and Shift+F10 reach the focused node's context menu inside a dialog too.
            if showContextMenuForFocus(key, modifiers: modifiers) { break }
            // A menu or a dialog open keeps the keys from the rest of the app (its shortcuts too).
            if focusTrappingOverlay != nil { break }
            if performMenuKey(key, modifiers: modifiers) { break }
            if keyHandler?(key, modifiers) == true { break }
            _ = rootController?.handleKey(key, modifiers: modifiers)
        case let .contentsScaleChanged(scale):
            setContentsScale(scale)
        case let .dragMoved(point):
            dragMoved(to: point)
        case .dragExited:
            dragEnded()
        case let .dropped(items, point):
            drop(items, at: point)
        case .resized:
            viewportDidChange()
        case let .textInput(text):
            composing = false
            _ = focusChainHandles { $0.insertText(text) }
        case let .textEditing(text, cursor, selected):
            let taken = focusChainHandles { $0.setMarkedText(text, cursor: cursor, selected: selected) }
            composing = taken && !text.isEmpty
        case let .pointerDown(point, button, clicks):
            pointerLocation = point
            showsFocusRing = false
            toolTips.inputArrived()
            // A press outside a menu ends it and goes no further; behind a dialog it reaches nothing.
            if !isTouchDown, pressEndsOverlays(at: point) { break }
            if !isTouchDown, button == PointerButton.secondary.rawValue, showContextMenu(at: point) { break }
            beginTouch(at: point, button: PointerButton(rawValue: button), clickCount: clicks)
        case let .pointerMoved(point):
            pointerLocation = point
            if isTouchDown { continueTouch(makeTouch(.moved, at: point)) } else { updateHover() }
        case let .pointerUp(point, button):
            pointerLocation = point
            // Only the release of the button that started the touch ends it.
            if isTouchDown && button == touchButton.rawValue { continueTouch(makeTouch(.ended, at: point)) }
            updateHover()
        case .pointerLeftWindow:
            pointerLocation = nil
            updateHover()
        case let .windowFocusChanged(focused):
            windowFocusChanged(focused)
        case let .windowVisibilityChanged(visible):
            windowVisibilityChanged(visible)
        case let .wheel(dx, dy):
            // The compositor thread moved a scroll for this event already: that scroll takes its
            // motion over (the screen shows it), unless it changed its own since.
            toolTips.inputArrived()
            if let update = eventScrollUpdate, takeOverScroll(update) { break }
            routeWheel(dx: dx, dy: dy)
        default:
            break
        }
    }

    /// A touch in `phase` at `point` with the button and click count of the touch that is down.
    /// Stamped with the time the event was read (a compositor thread says; otherwise the frame's).
    private func makeTouch(_ phase: Touch.Phase, at point: Point) -> Touch {
        Touch(phase: phase, location: point, timestamp: eventTime, button: touchButton, clickCount: touchClickCount)
    }

    /// Starts a touch on the node under `point`, or on the container that takes it (a moving list).
    /// Recognizers are collected along the event chain (`eventSupernode`), so a list's pan sees a
    /// touch that starts on a row's link: the link gets the touch until the pan passes its slop and
    /// claims it.
    private func beginTouch(at point: Point, button: PointerButton, clickCount: Int) {
        if touchedNode != nil {
            // Another button pressed while one is down belongs to the touch that is down; the same
            // button again means its release was lost.
            guard button == touchButton else { return }
            cancelTouch(at: point)
        }
        guard let under = hitNode(at: point) else { return }
        let hit = touchInterceptor(above: under) ?? under
        // A primary click on a focusable node (or inside one) focuses it; elsewhere focus stays.
        if button == .primary {
            var candidate: Node? = hit
            while let current = candidate, !current.canBecomeFocused { candidate = current.eventSupernode }
            if let candidate { focus(candidate) }
        }
        touchedNode = hit
        touchClaimed = false
        touchButton = button
        touchClickCount = max(1, clickCount)
        let touch = makeTouch(.began, at: point)
        var recognizers: [GestureRecognizer] = []
        var node: Node? = hit
        while let current = node {
            recognizers.append(contentsOf: current.gestureRecognizers.filter { $0.receives(touch, on: hit) })
            // A node that answers drags itself keeps them from the recognizers around it.
            if current.handlesDragsItself { break }
            node = current.eventSupernode
        }
        touchRecognizers = recognizers
        hit.touchesBegan(touch)
        for recognizer in recognizers { recognizer.deliver(touch) }
        claimTouchIfRecognized()
    }

    private func continueTouch(_ touch: Touch) {
        guard let node = touchedNode else { return }
        if !touchClaimed {
            switch touch.phase {
            case .moved: node.touchesMoved(touch)
            case .ended: node.touchesEnded(touch)
            case .cancelled: node.touchesCancelled(touch)
            case .began: break
            }
        }
        for recognizer in touchRecognizers { recognizer.deliver(touch) }
        // A recognizer that takes the touch on its last event (a tap on touch up) comes after the node
        // already got its end: the node must not be cancelled on top of that.
        claimTouchIfRecognized(nodeTouchIsLive: touch.phase == .moved)
        if touch.phase == .ended || touch.phase == .cancelled { endTouchSequence() }
    }

    private func cancelTouch(at point: Point) {
        continueTouch(makeTouch(.cancelled, at: point))
    }

    /// Cancels the touch that is down, if any, where the pointer is (a modal overlay opening takes
    /// the press away from what is behind it).
    func cancelTouchInProgress() {
        guard isTouchDown else { return }
        cancelTouch(at: pointerLocation ?? .zero)
    }

    /// When a recognizer has taken the touch, the others are cancelled and the node's touch ends.
    private func claimTouchIfRecognized(nodeTouchIsLive: Bool = true) {
        guard !touchClaimed, let winner = touchRecognizers.first(where: \.hasClaimedTouch) else { return }
        touchClaimed = true
        let touch = makeTouch(.cancelled, at: winner.lastTouch?.location ?? .zero)
        if nodeTouchIsLive { touchedNode?.touchesCancelled(touch) }
        for recognizer in touchRecognizers where recognizer !== winner {
            recognizer.deliver(touch)
            recognizer.finishSequence()
        }
        touchRecognizers = [winner]
    }

    private func endTouchSequence() {
        for recognizer in touchRecognizers { recognizer.finishSequence() }
        touchRecognizers = []
        touchedNode = nil
        touchClaimed = false
    }
}

// MARK: - Frame participants and the wheel (for lists)

/// Something that takes part in every frame of a host: a list moving its scroll position and its
/// interface-state ranges, and reporting what its rows showed. A node that conforms joins the frames
/// of the host showing it by itself, while it has an interface state (on screen, or in a display or
/// preload range); anything else registers with `NodeHost.addFrameParticipant(_:)`. The host holds
/// participants weakly, so one that is gone simply stops being called.
/// - Thread: main, every member.
@MainActor
public protocol FrameParticipant: AnyObject {
    /// Called after layout and before displays start (the ranges phase), with the frame's time.
    func frameWillStartDisplays(at time: Double)
    /// Called after this frame's displays started (synchronous ones have drawn) and before compositing:
    /// add what the frame shows to the record (`visibleCellArea`, `checkerboardArea`).
    func frameWillComposite(_ record: inout FrameRecord)
    /// False while the participant still moves or takes in work by itself (a list scrolling or
    /// placing rows measured on workers), so `NodeHost.settle` keeps running frames. The default is
    /// true.
    var isSettled: Bool { get }
    /// When the participant next changes by itself after `time`, with nothing else happening (an
    /// animated image's next frame): an app at rest wakes for it (`NodeHost.nextTimerTime(after:)`).
    /// Nil, the default: only events, results from workers and wakes need a frame.
    func nextFrameTime(after time: Double) -> Double?
}

extension FrameParticipant {
    public var isSettled: Bool { true }
    public func nextFrameTime(after time: Double) -> Double? { nil }
}

/// A node that scrolls with the mouse wheel. The host gives each wheel event to the nearest such node
/// at or above the interactive node under the pointer, along the event chain (so a list gets the wheel
/// over its rows' links and buttons); one that returns false passes it on outwards.
/// - Thread: main
@MainActor
public protocol WheelScrollable: AnyObject {
    /// Wheel motion as the platform reports it (positive `dy`: the wheel turned away from the user,
    /// towards the start of the content). Return true when handled.
    func scrollWheel(dx: Double, dy: Double) -> Bool
    /// The same, with the frame time the event arrived in: the host calls this one, so a scroller can
    /// measure the wheel's speed and keep moving after the last event. The default calls
    /// `scrollWheel(dx:dy:)`.
    func scrollWheel(dx: Double, dy: Double, at time: Double) -> Bool
}

extension WheelScrollable {
    public func scrollWheel(dx: Double, dy: Double, at time: Double) -> Bool { scrollWheel(dx: dx, dy: dy) }
}

/// A scroll whose content layer a compositor thread may move (`ScrollBinding`), which takes the
/// motion the thread gave it (`ScrollUpdate`) over. - Thread: main
@MainActor
protocol CompositorScrollTaking: AnyObject {
    /// Takes `update`'s motion when it is for this scroll and the scroll has not changed its own
    /// motion since; false otherwise.
    func takeOver(_ update: ScrollUpdate) -> Bool
}

extension ListNode: CompositorScrollTaking {}
extension ScrollNode: CompositorScrollTaking {}

private struct WeakFrameParticipant {
    weak var participant: FrameParticipant?
}

extension NodeHost {
    /// Calls `participant` every frame from now on, until it is removed or released.
    /// Adding one that is already there does nothing.
    /// - Thread: main
    @MainActor
    public func addFrameParticipant(_ participant: FrameParticipant) {
        UIThread.precondition("NodeHost.addFrameParticipant")
        guard !participants.contains(where: { $0.participant === participant }) else { return }
        participants.append(WeakFrameParticipant(participant: participant))
    }

    /// Stops calling `participant`. - Thread: main
    @MainActor
    public func removeFrameParticipant(_ participant: FrameParticipant) {
        UIThread.precondition("NodeHost.removeFrameParticipant")
        participants.removeAll { $0.participant === participant || $0.participant == nil }
    }

    /// The participants called every frame, in the order they were added. - Thread: main
    var frameParticipants: [FrameParticipant] { liveParticipants() }

    /// The participants still alive, in the order they were added (the dead are dropped).
    private func liveParticipants() -> [FrameParticipant] {
        guard !participants.isEmpty else { return [] }
        let live = participants.compactMap(\.participant)
        if live.count != participants.count { participants.removeAll { $0.participant == nil } }
        return live
    }

    /// Gives the scroll the compositor thread moved its motion; false when none takes it.
    private func takeOverScroll(_ update: ScrollUpdate) -> Bool {
        for participant in liveParticipants() {
            if let scroll = participant as? CompositorScrollTaking, scroll.takeOver(update) { return true }
        }
        return false
    }

    private func routeWheel(dx: Double, dy: Double) {
        guard let point = pointerLocation, var node = hitNode(at: point) else { return }
        while true {
            if let scrollable = node as? WheelScrollable, scrollable.scrollWheel(dx: dx, dy: dy, at: eventTime) { return }
            guard let parent = node.eventSupernode else { return }
            node = parent
        }
    }
}

extension Node {
    /// True when a layout for `range` is cached. - Thread: any
    func hasCachedLayout(for range: SizeRange) -> Bool {
        state.withLock { $0.layoutCache.entries[range] != nil }
    }
}
