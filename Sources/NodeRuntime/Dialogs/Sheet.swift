public import Compositor

/// A modal sheet: any node, or a `NodeController`'s screen, on a card centred over the dimmed
/// window (GNOME's dialogs float in the middle of their window).
///
/// ```swift
/// let sheet = controller.presentSheet(EditProfileController(), title: "Edit Profile")
/// …
/// sheet.dismiss { print("closed") }     // or, from inside: editController.dismissSheet()
/// ```
///
/// While it is shown nothing behind it takes input (as with `Alert`): the focus moves into it (onto
/// `focus`, else the first node in it that takes the focus, else the card itself) and goes back when
/// it ends; Tab stays inside it; Escape ends it when `dismissesOnEscape` (a form with unsaved edits
/// sets it false). A controller shown in a sheet gets its lifecycle calls as on any presentation:
/// `viewWillAppear`/`viewDidAppear` when it opens, `viewWillDisappear`/`viewDidDisappear` when it ends,
/// `viewWillLayoutSubviews` when its size changes.
///
/// The content is shown at `preferredContentSize` when set, else at its own size; a content that
/// measures to nothing (a controller's node usually) fills the room the window leaves. Either way the
/// card stays `DialogMetrics.windowMargin` inside the window. It fades in (at once with reduced
/// motion) and leaves at once.
/// - Thread: main, every member.
@MainActor
public final class Sheet {
    /// The node shown: the controller's node for a controller's sheet.
    public let content: Node
    /// The controller shown, for a sheet made with one.
    public let controller: NodeController?
    /// What a screen reader calls the sheet (its dialog element's label).
    public let title: String
    /// Whether Escape ends it. Default true.
    public var dismissesOnEscape = true {
        didSet { overlay?.dismissesOnEscape = dismissesOnEscape }
    }
    /// The content's size in points; nil: its own (see `Sheet`).
    public var preferredContentSize: Size? {
        get { card.preferredContentSize }
        set { card.preferredContentSize = newValue }
    }
    /// Called once when it ends, after it left the screen and the focus went back, with why.
    public var onDismiss: ((Overlay.DismissReason) -> Void)?
    /// True from presentation until it ends.
    public private(set) var isPresented = false
    /// Where its content was placed last, in window points.
    public var frame: Rect { card.layerIfLoaded?.frameInRoot ?? card.frame }

    let card: DialogCardNode
    let backdrop: DialogBackdropNode
    /// The controller that presented it, if one did. (main thread only)
    weak var presentingController: NodeController?
    /// The overlay showing it, while it does. Weak: the overlay holds this (its `onDismiss`), and the
    /// host holds the overlay; a host let go with it shown takes both with it.
    private(set) weak var overlay: Overlay?
    private var wasPresented = false
    /// Called with the completions of `dismiss(completion:)` once it has ended.
    private var completions: [() -> Void] = []
    /// The controller's `viewWillDisappear` ran already.
    private var controllerWillDismissCalled = false
    private var lastLaidOutSize: Size?

    /// A sheet showing `content`, which must not be in a tree.
    public init(content: Node, title: String = "") {
        UIThread.precondition("Sheet.init")
        self.content = content
        self.controller = nil
        self.title = title
        card = DialogCardNode(content: content, role: .dialog, label: title, padding: 0, fillsWhenUnsized: true)
        backdrop = DialogBackdropNode(card: card, cardWidth: nil)
        configureCard()
    }

    /// A sheet showing `controller`'s screen; the controller must not be shown elsewhere.
    public init(controller: NodeController, title: String = "") {
        UIThread.precondition("Sheet.init")
        self.content = controller.node
        self.controller = controller
        self.title = title
        card = DialogCardNode(content: controller.node, role: .dialog, label: title, padding: 0, fillsWhenUnsized: true)
        backdrop = DialogBackdropNode(card: card, cardWidth: nil)
        configureCard()
    }

    private func configureCard() {
        card.keyAction = { [weak self] key, modifiers in
            guard let self, key == .escape, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
            if self.dismissesOnEscape { self.end(reason: .escape) }
            // A sheet that refuses Escape still keeps it from what is behind it.
            return true
        }
        card.didLayout = { [weak self] in self?.contentDidLayOut() }
    }

    /// Ends the sheet: it leaves the screen, the focus goes back, `completion` runs, then
    /// `onDismiss(.dismissed)`. A completion given once it has ended runs at once.
    public func dismiss(completion: (() -> Void)? = nil) {
        UIThread.precondition("Sheet.dismiss")
        guard isPresented else {
            completion?()
            return
        }
        if let completion { completions.append(completion) }
        end(reason: .dismissed)
    }

    func present(on host: NodeHost, focus: Node?) {
        Contract.require(!wasPresented, "Sheet: a sheet is presented once; make a new one to show it again")
        Contract.require(controller.map { !$0.isPresented } ?? true, "Sheet: the controller is shown elsewhere already")
        wasPresented = true
        isPresented = true
        if let controller {
            controller.sheet = self
            controller.loadViewIfNeeded()
            controller.willPresent()
        }
        // With no `focus`, the host picks the first node inside that takes it: the card itself only
        // when nothing in the content can (`DialogCardNode.canBecomeFocused`).
        let overlay = host.presentOverlay(backdrop, kind: .modal, focus: focus)
        overlay.dismissesOnEscape = dismissesOnEscape
        overlay.onDismiss = { [self] reason in didEnd(reason) }
        self.overlay = overlay
        backdrop.fadeIn()
        controller?.didPresent()
    }

    private func end(reason: Overlay.DismissReason) {
        guard isPresented, let overlay else { return }
        controllerWillDismiss()
        overlay.host?.dismissOverlay(overlay, reason: reason)
    }

    private func controllerWillDismiss() {
        guard !controllerWillDismissCalled else { return }
        controllerWillDismissCalled = true
        controller?.willDismiss()
    }

    private func didEnd(_ reason: Overlay.DismissReason) {
        // Ended by the host (a new root) or from below (an overlay under it ended): the controller
        // hears that it goes, late but in order.
        controllerWillDismiss()
        isPresented = false
        overlay = nil
        if let controller {
            controller.didDismiss()
            if controller.sheet === self { controller.sheet = nil }
        }
        if let presenter = presentingController, presenter.presentedSheet === self { presenter.presentedSheet = nil }
        let completions = completions
        self.completions = []
        for completion in completions { completion() }
        let onDismiss = onDismiss
        self.onDismiss = nil
        onDismiss?(reason)
    }

    /// The card was laid out: a controller hears of a new size.
    private func contentDidLayOut() {
        guard let controller, isPresented else { return }
        let size = controller.node.frame.size
        guard size != lastLaidOutSize else { return }
        lastLaidOutSize = size
        controller.resize(to: controller.node.frame)
    }
}

extension NodeHost {
    /// Shows `sheet` over the window (see `Sheet`), above any overlay shown now, with the focus on
    /// `focus` (a node inside it) or the first node inside that takes it.
    /// - Returns: the sheet.
    /// - Thread: main
    @discardableResult
    public func presentSheet(_ sheet: Sheet, focus: Node? = nil) -> Sheet {
        UIThread.precondition("NodeHost.presentSheet")
        sheet.present(on: self, focus: focus)
        return sheet
    }
}

extension NodeController {
    /// Shows `sheet` over the window that shows this controller (see `Sheet`); `presentedSheet` holds
    /// it until it ends. The controller must be on screen.
    /// - Thread: main
    public func presentSheet(_ sheet: Sheet, focus: Node? = nil) {
        UIThread.precondition("NodeController.presentSheet")
        guard let host = node.nodeHost else {
            Contract.require(false, "NodeController.presentSheet: the controller is not on screen")
            return
        }
        sheet.presentingController = self
        presentedSheet = sheet
        host.presentSheet(sheet, focus: focus)
    }

    /// Shows `controller`'s screen in a sheet over the window that shows this controller.
    /// - Returns: the sheet, to dismiss or watch.
    /// - Thread: main
    @discardableResult
    public func presentSheet(_ controller: NodeController, title: String = "") -> Sheet {
        let sheet = Sheet(controller: controller, title: title)
        presentSheet(sheet)
        return sheet
    }

    /// Ends the sheet this controller presented, or else the sheet that shows this controller (or
    /// the navigation controller it is pushed on); `completion` runs once it has ended (at once when
    /// there is none).
    /// - Thread: main
    public func dismissSheet(completion: (() -> Void)? = nil) {
        UIThread.precondition("NodeController.dismissSheet")
        var shower: NodeController? = self
        while let current = shower, current.sheet == nil { shower = current.navigationController }
        guard let sheet = presentedSheet ?? shower?.sheet else {
            completion?()
            return
        }
        sheet.dismiss(completion: completion)
    }

    /// Shows `alert` over the window that shows this controller (see `Alert`). The controller must be
    /// on screen.
    /// - Thread: main
    public func presentAlert(_ alert: Alert) {
        UIThread.precondition("NodeController.presentAlert")
        guard let host = node.nodeHost else {
            Contract.require(false, "NodeController.presentAlert: the controller is not on screen")
            return
        }
        host.presentAlert(alert)
    }
}
