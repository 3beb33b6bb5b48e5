public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A stack of controllers, of which the top one is shown: pushing slides a new screen in from the
/// right, popping slides it back out.
///
/// Its node is a container that holds the top controller's node, and during a slide the outgoing one
/// too. Every node it holds fills its bounds; when they change, each is resized and its controller gets
/// `viewWillLayoutSubviews()`. The controllers on the stack get their appearance callbacks as they come
/// and go, and the navigation controller's own appearance is forwarded to the top one.
///
/// Slides run on the runtime's `Animator` and so advance only with frames. Starting another push or pop
/// while one is sliding completes the running one at once (its callbacks included) first.
/// - Thread: main, every member (checked).
@MainActor
public final class NavigationController: NodeController {
    /// How long a slide takes, in seconds.
    public static let transitionDuration = 0.25
    /// How far the screen underneath moves left, as a fraction of the width, while another slides over.
    static let parallaxFraction = 0.3

    /// The stack, bottom first.
    public private(set) var viewControllers: [NodeController] = []
    /// The controller on top of the stack: the one shown.
    public var topController: NodeController? { viewControllers.last }
    /// True while a push or pop is sliding.
    public var isTransitioning: Bool { transition != nil }

    private struct Transition {
        let id: Int
        let incoming: NodeController
        let outgoing: NodeController?
        /// True for a pop: the outgoing controller leaves the stack.
        let removesOutgoing: Bool
    }

    private var transition: Transition?
    private var transitionCount = 0
    /// The animator time at which the last slide this controller started ends.
    private var slidesEnd = -Double.infinity
    /// Controllers whose nodes are in the container now: the top one, and during a slide the other.
    private var shown: [NodeController] = []

    private var container: NavigationContainerNode { node as! NavigationContainerNode }

    /// A bar that follows the stack: it shows the top controller's `title`, a back button while more
    /// than one controller is on the stack (titled by the one below), and pressing it, or Alt+Left,
    /// pops. The app places the bar (over the navigation controller's node, as a rule); a bar given
    /// up stops following.
    /// - Thread: main
    public var navigationBar: NavigationBarNode? {
        didSet {
            if let oldValue, oldValue !== navigationBar { oldValue.onBack = nil }
            navigationBar?.onBack = { [weak self] in self?.popController(animated: true) }
            updateNavigationBar()
        }
    }

    /// Shows the stack's state in `navigationBar`.
    func updateNavigationBar() {
        guard let navigationBar else { return }
        navigationBar.title = topController?.title ?? ""
        navigationBar.showsBackButton = viewControllers.count > 1
        navigationBar.backTitle = viewControllers.count > 1 ? viewControllers[viewControllers.count - 2].title : nil
    }

    /// Makes a navigation controller with `rootController` (if any) at the bottom of its stack.
    /// - Thread: main
    @MainActor
    public init(rootController: NodeController? = nil) {
        let container = NavigationContainerNode()
        container.debugName = "navigation"
        // A screen that slides in from outside must not draw over whatever is beside the container.
        container.clipsToBounds = true
        super.init(node: container)
        container.owner = self
        if let rootController { push(rootController, animated: false) }
    }

    // MARK: Stack

    /// Puts `controller` on top of the stack and shows it: sliding in from the right over
    /// `transitionDuration` when `animated` (the old top slides a little left underneath), at once
    /// otherwise. The old top gets `viewDidDisappear()` and leaves its interface states when the slide
    /// finishes; the new one gets `viewWillAppear()` before it starts.
    /// A controller already on a navigation stack is a precondition failure.
    /// - Thread: main
    @MainActor
    public func push(_ controller: NodeController, animated: Bool) {
        UIThread.precondition("NavigationController.push")
        // A pop still sliding has not let go of its controller yet; finish it before judging.
        finishTransitionNow()
        Contract.require(controller.navigationController == nil && !viewControllers.contains { $0 === controller },
                         "NavigationController.push: the controller is already on a navigation stack")
        Contract.require(controller !== self, "NavigationController.push: a navigation controller cannot push itself")
        let outgoing = topController
        controller.navigationController = self
        viewControllers.append(controller)
        updateNavigationBar()
        guard isPresented else {
            hideOffscreen(outgoing)
            return
        }
        let width = container.bounds.width
        outgoing?.willDismiss()
        show(controller, at: Int.max, startingAt: Point(x: animated ? width : 0, y: 0))
        let id = begin(Transition(id: nextTransitionID(), incoming: controller, outgoing: outgoing, removesOutgoing: false))
        if animated {
            slide(controller, from: Point(x: width, y: 0), to: .zero, id: id)
            if let outgoing { slide(outgoing, from: .zero, to: Point(x: -width * Self.parallaxFraction, y: 0), id: nil) }
        } else {
            completeTransition(id)
        }
    }

    /// Removes the top controller and shows the one below it: the top slides out to the right when
    /// `animated` (the one below comes back from the left). The root controller is never popped.
    /// - Returns: the controller removed, or nil when only one (or none) is on the stack.
    /// - Thread: main
    @discardableResult
    @MainActor
    public func popController(animated: Bool) -> NodeController? {
        UIThread.precondition("NavigationController.popController")
        guard viewControllers.count > 1 else { return nil }
        finishTransitionNow()
        let outgoing = viewControllers.removeLast()
        let incoming = viewControllers[viewControllers.count - 1]
        updateNavigationBar()
        guard isPresented else {
            hideOffscreen(outgoing)
            outgoing.navigationController = nil
            return outgoing
        }
        let width = container.bounds.width
        outgoing.willDismiss()
        // Underneath the outgoing screen, so it is uncovered as that one slides away.
        show(incoming, at: 0, startingAt: Point(x: animated ? -width * Self.parallaxFraction : 0, y: 0))
        let id = begin(Transition(id: nextTransitionID(), incoming: incoming, outgoing: outgoing, removesOutgoing: true))
        if animated {
            slide(incoming, from: Point(x: -width * Self.parallaxFraction, y: 0), to: .zero, id: id)
            slide(outgoing, from: .zero, to: Point(x: width, y: 0), id: nil)
        } else {
            completeTransition(id)
        }
        return outgoing
    }

    /// Pops when Escape is pressed and there is something to go back to, and on Alt+Left when it has a
    /// `navigationBar` with its back button shown; every other key (and Escape at the root) goes to the
    /// top controller.
    /// - Thread: main
    @MainActor
    override public func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        UIThread.precondition("NavigationController.handleKey")
        if key == .escape && viewControllers.count > 1 {
            popController(animated: true)
            return true
        }
        if navigationBar?.handleKey(key, modifiers: modifiers) == true { return true }
        return topController?.handleKey(key, modifiers: modifiers) ?? false
    }

    // MARK: Appearance forwarding

    override func willPresent() {
        let wasPresented = isPresented
        super.willPresent()
        guard !wasPresented, let top = topController else { return }
        // The top screen joins the container before the container enters its interface states, so it
        // follows them step by step with it.
        top.willPresent()
        if top.node.supernode !== container { container.addSubnode(top.node) }
        if !shown.contains(where: { $0 === top }) { shown.append(top) }
        // Its layer loads with the container's, in the display state; until then its frame places it.
        if top.node.isNodeLoaded { place(top, at: .zero) } else { top.node.frame.origin = .zero }
    }

    override func finishLoadingIfNeeded() {
        super.finishLoadingIfNeeded()
        if isPresented { topController?.finishLoadingIfNeeded() }
    }

    override func didPresent() {
        super.didPresent()
        topController?.didPresent()
    }

    override func willDismiss() {
        finishTransitionNow()
        super.willDismiss()
        topController?.willDismiss()
    }

    override func didDismiss() {
        super.didDismiss()
        topController?.didDismiss()
    }

    // MARK: Layout

    /// Fits every shown screen to the container; the container calls this from its `layout()`, so it
    /// runs on resizes and whenever the host lays the tree out again. The layout pass then continues into
    /// each screen's node at its new size.
    fileprivate func layoutShownControllers() {
        let bounds = container.bounds
        for controller in shown where controller.node.frame != bounds {
            controller.resize(to: bounds)
        }
    }

    // MARK: Transitions

    private func nextTransitionID() -> Int {
        transitionCount += 1
        return transitionCount
    }

    private func begin(_ newTransition: Transition) -> Int {
        transition = newTransition
        return newTransition.id
    }

    /// Brings `controller` on screen inside the container: appearance starts, its node enters the
    /// container's interface states laid out for the container's bounds, then joins the container at
    /// `index` with its layer at `origin`.
    private func show(_ controller: NodeController, at index: Int, startingAt origin: Point) {
        controller.willPresent()
        controller.enterInterfaceState(container.interfaceState, laidOutIn: container.bounds)
        // Already in the target state, so joining the container changes no interface state.
        container.insertSubnode(controller.node, at: index)
        if !shown.contains(where: { $0 === controller }) { shown.append(controller) }
        place(controller, at: origin)
    }

    /// Leaves the stack's previous top out of an unpresented container.
    private func hideOffscreen(_ controller: NodeController?) {
        guard let controller, controller.node.supernode === container else { return }
        controller.node.removeFromSupernode()
        shown.removeAll { $0 === controller }
    }

    private func slide(_ controller: NodeController, from start: Point, to end: Point, id: Int?) {
        let animator = node.runtime.animator
        slidesEnd = max(slidesEnd, animator.now + Self.transitionDuration)
        animator.animate(controller.node.layer, .origin(from: start, to: end), duration: Self.transitionDuration) {
            [weak self] in
            guard let id else { return }
            self?.completeTransition(id)
        }
    }

    /// Puts the controller's layer at `origin` now and keeps it there.
    private func place(_ controller: NodeController, at origin: Point) {
        let layer = controller.node.layer
        let animator = node.runtime.animator
        let remaining = slidesEnd - animator.now
        if remaining > 0 && remaining.isFinite {
            // A slide that was cut short keeps writing its layer until its time is up, and the animator
            // has no cancel. It applies animations in the order they were added, so a later one that
            // holds the position wins every frame until the stale one is gone.
            animator.animate(layer, .origin(from: origin, to: origin), duration: remaining)
        } else {
            layer.frame.origin = origin
        }
    }

    /// Ends the running slide at once, as if its time were up.
    private func finishTransitionNow() {
        guard let running = transition else { return }
        place(running.incoming, at: .zero)
        completeTransition(running.id)
    }

    /// The end of a push or pop: the outgoing screen leaves the container and its interface states,
    /// then the appearance callbacks finish. Stale completions (of a slide already finished) are ignored.
    private func completeTransition(_ id: Int) {
        guard let finished = transition, finished.id == id else { return }
        transition = nil
        if let outgoing = finished.outgoing {
            shown.removeAll { $0 === outgoing }
            // Removal takes the node out of every interface state before `viewDidDisappear`.
            if outgoing.node.supernode === container { outgoing.node.removeFromSupernode() }
            outgoing.didDismiss()
            if finished.removesOutgoing { outgoing.navigationController = nil }
        }
        finished.incoming.didPresent()
    }
}

/// The node of a navigation controller: lays out the screens it holds whenever it is laid out.
final class NavigationContainerNode: Node, @unchecked Sendable {
    weak var owner: NavigationController?

    override func layout() {
        owner?.layoutShownControllers()
    }
}
