public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Shows one of several controllers above a tab bar made of nodes. Switching hides the current screen
/// (it leaves its interface states and gets `viewWillDisappear`/`viewDidDisappear`) and shows the chosen
/// one in its place; each screen keeps its own state while hidden.
/// - Thread: main, every member.
@MainActor
public final class TabController: NodeController {
    /// The screens, in tab order.
    public let controllers: [NodeController]
    /// The bar at the bottom; the app builds it from nodes and calls `select(_:)` from its taps.
    public let tabBar: Node
    /// The bar's height in points.
    public var tabBarHeight: Double {
        didSet { container.setNeedsLayout() }
    }
    /// Called after the selection changes (by `select(_:)` or a digit key), whether or not the tabs
    /// are on screen yet; not for the `selectedIndex` given to `init`.
    public var selectionDidChange: ((Int) -> Void)?
    /// The shown tab.
    public private(set) var selectedIndex: Int

    private var container: TabContainerNode { node as! TabContainerNode }

    public init(controllers: [NodeController], tabBar: Node, tabBarHeight: Double = 56, selectedIndex: Int = 0) {
        Contract.require(!controllers.isEmpty, "TabController needs at least one controller")
        self.controllers = controllers
        self.tabBar = tabBar
        self.tabBarHeight = tabBarHeight
        self.selectedIndex = min(max(0, selectedIndex), controllers.count - 1)
        let container = TabContainerNode()
        container.debugName = "tabs"
        container.clipsToBounds = true
        super.init(node: container)
        container.owner = self
        container.addSubnode(tabBar)
    }

    /// The shown screen.
    public var selectedController: NodeController { controllers[selectedIndex] }

    /// Shows tab `index` (ignored when out of range or already the selected one); before the tabs are
    /// on screen, makes it the one they show first.
    public func select(_ index: Int) {
        UIThread.precondition("TabController.select")
        guard controllers.indices.contains(index), index != selectedIndex else { return }
        let outgoing = selectedController
        selectedIndex = index
        // Before the tabs are on screen, the chosen one is simply the one shown first.
        if isPresented {
            outgoing.willDismiss()
            outgoing.node.removeFromSupernode()
            outgoing.didDismiss()
            show(selectedController)
        }
        selectionDidChange?(index)
    }

    /// Keys 1…9 pick a tab; everything else goes to the shown screen.
    override public func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        if case .character(let c) = key, let digit = c.wholeNumberValue, digit >= 1, digit <= controllers.count {
            select(digit - 1)
            return true
        }
        return selectedController.handleKey(key, modifiers: modifiers)
    }

    var contentFrame: Rect {
        Rect(x: 0, y: 0, width: container.bounds.width, height: max(0, container.bounds.height - tabBarHeight))
    }

    /// Shows a newly selected screen in the lifecycle's order: `viewWillAppear`, then its node enters
    /// the container's interface states (loading in display, laid out before visible), then it joins
    /// the container, then `viewDidAppear`.
    private func show(_ controller: NodeController) {
        controller.willPresent()
        controller.enterInterfaceState(container.interfaceState, laidOutIn: contentFrame)
        // Already in the container's states, so joining it changes no interface state.
        container.insertSubnode(controller.node, at: 0)
        controller.didPresent()
    }

    // MARK: Appearance forwarding

    override func willPresent() {
        let wasPresented = isPresented
        super.willPresent()
        guard !wasPresented else { return }
        // The shown screen joins the container before the container enters its interface states, so it
        // follows them step by step with it.
        let top = selectedController
        top.willPresent()
        if top.node.supernode !== container { container.insertSubnode(top.node, at: 0) }
        top.node.frame = contentFrame
    }

    override func finishLoadingIfNeeded() {
        super.finishLoadingIfNeeded()
        if isPresented { selectedController.finishLoadingIfNeeded() }
    }

    override func didPresent() {
        super.didPresent()
        selectedController.didPresent()
    }

    override func willDismiss() {
        selectedController.willDismiss()
        super.willDismiss()
    }

    override func didDismiss() {
        super.didDismiss()
        selectedController.didDismiss()
    }

    fileprivate func layoutChildren() {
        let bounds = container.bounds
        tabBar.frame = Rect(x: 0, y: bounds.height - tabBarHeight, width: bounds.width, height: tabBarHeight)
        let content = contentFrame
        if selectedController.node.frame != content { selectedController.resize(to: content) }
    }
}

/// The tab controller's node: lays out the shown screen and the bar.
final class TabContainerNode: Node, @unchecked Sendable {
    weak var owner: TabController?
    override func layout() { owner?.layoutChildren() }
}
