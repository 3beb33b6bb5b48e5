public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Manages one screen built from nodes: owns its root node, sizes it to the controller's bounds, and
/// turns its presentation into lifecycle callbacks.
///
/// The root node fills the controller's bounds without code: whoever shows the controller (the host,
/// a navigation controller) gives it bounds, and the node is sized to them and laid out each time they
/// change. Subclasses override the lifecycle methods below; none of them needs to call `super`.
///
/// Lifecycle, in order, whoever presents the controller (the host, a navigation or tab controller):
/// 1. `loadView()`: once, the first time the controller is presented.
/// 2. `viewWillAppear()`: before the node enters its interface states, so before `didEnterVisibleState`.
/// 3. The node enters measure → preload → display; entering display loads its layer tree (`didLoad` on
///    each node, parent first), then `viewDidLoad()` runs, once.
/// 4. `viewWillLayoutSubviews()`: with the node already at its new size, right before it is laid out
///    (`layout()`); at presentation and at every bounds change.
/// 5. The node becomes visible, then `viewDidAppear()`.
/// 6. `viewWillDisappear()`, then the node leaves every interface state, then `viewDidDisappear()`.
///
/// Calling `loadViewIfNeeded()` yourself runs steps 1 and 3's loading at once, before presentation.
///
/// - Thread: main, every member (checked). Make controllers on the UI thread.
@MainActor
open class NodeController {
    /// The root node of the controller's screen.
    public let node: Node
    /// The navigation controller whose stack holds this controller, if any.
    public internal(set) weak var navigationController: NavigationController?
    /// True once `loadView()` and `viewDidLoad()` have run.
    public private(set) var isViewLoaded = false
    /// True once `loadView()` has run.
    private var didRunLoadView = false
    /// True from `viewWillAppear()` until `viewDidDisappear()`.
    public private(set) var isPresented = false
    /// The sheet this controller presented (`presentSheet`), while it is shown.
    public internal(set) weak var presentedSheet: Sheet?
    /// The sheet that shows this controller, while it does.
    public internal(set) weak var sheet: Sheet?
    /// The screen's title: what the navigation bar of the controller's navigation stack shows while it
    /// is on top, and the back button's text while the one above it is. nil for none.
    /// - Thread: main
    public var title: String? {
        didSet { navigationController?.updateNavigationBar() }
    }

    /// Makes a controller for `node`. Nothing is loaded until the node is first shown.
    /// - Thread: main
    @MainActor
    public init(node: Node) {
        UIThread.precondition("NodeController.init")
        self.node = node
    }

    // MARK: Override points (main thread)

    /// Called once, before the controller is first presented and before the node's layer tree loads.
    /// Prefer `viewDidLoad()` for setup that needs layers.
    /// - Thread: main
    @MainActor
    open func loadView() {}

    /// Called once, after the node's layers exist (when the node first enters the display state, after
    /// `viewWillAppear()`): the place for gesture recognizers and one-time setup that needs layers. Not
    /// for layout, which must follow later bounds changes.
    /// - Thread: main
    @MainActor
    open func viewDidLoad() {}

    /// Called whenever the controller lays out its node for its bounds: at presentation and on every
    /// resize. The node already has its new frame; its layout is applied right after this returns.
    /// - Thread: main
    @MainActor
    open func viewWillLayoutSubviews() {}

    /// Called just before the node is shown, before it enters its interface states.
    /// - Thread: main
    @MainActor
    open func viewWillAppear() {}

    /// Called once the node is on screen (after a slide-in, when there is one).
    /// - Thread: main
    @MainActor
    open func viewDidAppear() {}

    /// Called when the node is about to leave the screen (before a slide-out, when there is one).
    /// - Thread: main
    @MainActor
    open func viewWillDisappear() {}

    /// Called just after the node has left the screen and its interface states.
    /// - Thread: main
    @MainActor
    open func viewDidDisappear() {}

    /// A key press that the host's `keyHandler` did not take. Return true when handled.
    /// The default handles nothing.
    /// - Thread: main
    @MainActor
    open func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool { false }

    // MARK: Loading

    /// Runs `loadView()`, loads the node's layers and runs `viewDidLoad()`, unless that already happened.
    /// - Thread: main
    @MainActor
    public func loadViewIfNeeded() {
        UIThread.precondition("NodeController.loadViewIfNeeded")
        runLoadViewIfNeeded()
        finishLoadingIfNeeded()
    }

    /// Runs `loadView()` once.
    func runLoadViewIfNeeded() {
        guard !didRunLoadView else { return }
        didRunLoadView = true
        loadView()
    }

    /// Loads the node's layers if they are not (presenters call it once the node is in the display
    /// state, where they have loaded) and runs `viewDidLoad()` once. Containers forward it to the
    /// controllers they show.
    func finishLoadingIfNeeded() {
        guard !isViewLoaded else { return }
        runLoadViewIfNeeded()
        // Set first: a `viewDidLoad` that presents or pushes must not load a second time.
        isViewLoaded = true
        _ = node.layer
        viewDidLoad()
    }

    // MARK: Presentation (used by NodeHost and NavigationController)

    // These are the steps a presenter drives, split so it can interleave its own work (attaching
    // layers, sliding) and the steps of another controller in UIKit's order. Subclasses that contain
    // other controllers override them to forward to their children.

    /// Runs `loadView()` the first time, marks the controller presented and calls `viewWillAppear()`.
    func willPresent() {
        UIThread.precondition("NodeController.willPresent")
        runLoadViewIfNeeded()
        guard !isPresented else { return }
        isPresented = true
        viewWillAppear()
    }

    /// Calls `viewDidAppear()`, then gives focus back to the node inside this screen that had it
    /// when the screen was dismissed (a search field keeps its focus across a push and a pop, or a
    /// switch of tabs), unless a node that is on screen has it now.
    func didPresent() {
        guard isPresented else { return }
        viewDidAppear()
        if let focus = focusToRestore {
            focusToRestore = nil
            if let host = focus.nodeHost, host.focusedNode.map({ !$0.interfaceState.contains(.visible) }) ?? true {
                host.focus(focus)
            }
        }
    }

    /// Calls `viewWillDisappear()`, remembering the node inside this screen that has focus.
    func willDismiss() {
        guard isPresented else { return }
        if let host = node.nodeHost, let focused = host.focusedNode {
            var ancestor: Node? = focused
            while let current = ancestor, current !== node { ancestor = current.eventSupernode }
            if ancestor != nil { focusToRestore = focused }
        }
        viewWillDisappear()
    }

    /// The node inside this screen that had focus when it was last dismissed.
    private weak var focusToRestore: Node?

    /// Marks the controller dismissed and calls `viewDidDisappear()`.
    func didDismiss() {
        guard isPresented else { return }
        isPresented = false
        viewDidDisappear()
    }

    /// Sizes the node to `bounds` and calls `viewWillLayoutSubviews()`; the caller lays the node out.
    func resize(to bounds: Rect) {
        UIThread.precondition("NodeController.resize")
        if node.frame != bounds { node.frame = bounds }
        viewWillLayoutSubviews()
    }

    /// Sizes the node to `bounds`, calls `viewWillLayoutSubviews()` and lays the node out.
    func layout(in bounds: Rect) {
        resize(to: bounds)
        node.layoutIfNeeded()
    }

    /// Moves the node into `target` the way the host brings its root on screen: one step at a time,
    /// laid out for `bounds` after display and before visible. Call between `willPresent()` and
    /// `didPresent()`.
    func enterInterfaceState(_ target: InterfaceState, laidOutIn bounds: Rect) {
        if node.frame != bounds { node.frame = bounds }
        node.enterInterfaceState(target) {
            if target.contains(.display) { finishLoadingIfNeeded() }
            layout(in: bounds)
        }
    }
}
