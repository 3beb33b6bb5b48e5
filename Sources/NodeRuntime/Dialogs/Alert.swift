import Compositor

/// A modal alert: a title, a message and buttons on a card centred over the dimmed window.
///
/// ```swift
/// let alert = Alert(title: "Sign out?", message: "You will need your password to sign in again.",
///                   buttons: [.cancel("Cancel"), .destructive("Sign Out") { session.signOut() }])
/// host.presentAlert(alert)          // or, from a screen: controller.presentAlert(alert)
/// ```
///
/// While it is shown nothing behind it takes input: presses outside the card do nothing, the app's
/// key handler and shortcuts hear nothing, Tab and Shift+Tab go round its buttons only. The focus
/// moves onto the default button when it opens (else the cancel button, else the first), and goes
/// back to what had it when the alert ends. Enter activates the focused button, or the default one
/// when the focus is on no button; Space activates the focused button; Escape chooses the cancel
/// button, and does nothing when there is none. The chosen button's handler runs once, after the
/// alert has left the screen and the focus went back; `onDismiss` follows.
///
/// The buttons sit in a row of equal widths, in the order given; when one's title does not fit its
/// share of the row, they stack. The card is `DialogMetrics.alertWidth` points wide (less in a narrow
/// window) and the message wraps. It fades in (at once with reduced motion) and leaves at once. An
/// alert is shown once: make a new one to ask again.
/// - Thread: main, every member.
@MainActor
public final class Alert {
    /// The question or the news, in bold: also what a screen reader calls the alert.
    public let title: String
    /// What the title leaves to say, wrapped below it; empty: none.
    public let message: String
    /// The buttons, in the order shown. An alert given none has an "OK" button of role `.default`,
    /// so that it can end.
    public let buttons: [AlertButton]
    /// Called once when the alert ends, after the chosen button's handler, with the index of the
    /// chosen button in `buttons`; nil when it ended with none chosen (`dismiss()`, the host showing
    /// another root).
    public var onDismiss: ((Int?) -> Void)?
    /// True from `NodeHost.presentAlert(_:)` until it ends.
    public private(set) var isPresented = false
    /// The button chosen; nil while none is (or when the alert ended without one).
    public private(set) var chosenButtonIndex: Int?

    /// The index of the button Enter chooses when the focus is on no button, and that has the focus
    /// when the alert opens: the first of role `.default`.
    public var defaultButtonIndex: Int? { buttons.firstIndex { $0.role == .default } }
    /// The index of the button Escape chooses: the first of role `.cancel`.
    public var cancelButtonIndex: Int? { buttons.firstIndex { $0.role == .cancel } }

    /// The button nodes, in the order of `buttons`.
    let buttonNodes: [DialogButtonNode]
    let card: DialogCardNode
    let backdrop: DialogBackdropNode
    /// The overlay showing it, while it does. Weak: the overlay holds this (its `onDismiss`), and the
    /// host holds the overlay; a host let go with it shown takes both with it.
    private(set) weak var overlay: Overlay?
    private var wasPresented = false

    /// An alert asking `title`, with `message` below it and `buttons` in a row (none: an "OK"
    /// button of role `.default`). Nothing is shown until `NodeHost.presentAlert(_:)`.
    public init(title: String, message: String = "", buttons: [AlertButton] = []) {
        UIThread.precondition("Alert.init")
        self.title = title
        self.message = message
        let buttons = buttons.isEmpty ? [AlertButton.default("OK")] : buttons
        self.buttons = buttons
        let defaultIndex = buttons.firstIndex { $0.role == .default }
        buttonNodes = buttons.enumerated().map { index, button in
            DialogButtonNode(title: button.title, suggested: index == defaultIndex, destructive: button.role == .destructive)
        }
        let content = AlertContentNode(title: title, message: message, buttons: buttonNodes)
        card = DialogCardNode(content: content, role: .alert, label: title, padding: DialogMetrics.cardPadding,
                              fillsWhenUnsized: false)
        backdrop = DialogBackdropNode(card: card, cardWidth: DialogMetrics.alertWidth)
        for (index, node) in buttonNodes.enumerated() {
            node.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.choose(index) }
        }
        card.keyAction = { [weak self] key, modifiers in self?.cardKeyDown(key, modifiers: modifiers) ?? false }
    }

    /// Ends the alert without choosing a button: no handler runs; `onDismiss(nil)` does. Harmless
    /// once it has ended.
    public func dismiss() {
        UIThread.precondition("Alert.dismiss")
        overlay?.dismiss()
    }

    /// Chooses the button at `index` as a click would: the alert ends, then its handler runs. Does
    /// nothing once a button was chosen or the alert has ended.
    public func chooseButton(at index: Int) {
        UIThread.precondition("Alert.chooseButton")
        guard buttons.indices.contains(index) else { return }
        choose(index)
    }

    func present(on host: NodeHost) {
        Contract.require(!wasPresented, "Alert: an alert is presented once; make a new one to ask again")
        wasPresented = true
        isPresented = true
        let focus = (defaultButtonIndex ?? cancelButtonIndex).map { buttonNodes[$0] } ?? buttonNodes.first
        let overlay = host.presentOverlay(backdrop, kind: .modal, focus: focus)
        // Escape that reaches the host (the focus is on nothing inside) chooses cancel too.
        overlay.dismissesOnEscape = cancelButtonIndex != nil
        overlay.onDismiss = { [self] reason in didEnd(reason) }
        self.overlay = overlay
        backdrop.fadeIn()
    }

    private func choose(_ index: Int) {
        guard isPresented, chosenButtonIndex == nil else { return }
        chosenButtonIndex = index
        overlay?.dismiss()
    }

    /// Escape and Enter that no button took.
    private func cardKeyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        switch key {
        case .escape:
            if let cancel = cancelButtonIndex, buttonNodes[cancel].isEnabled { choose(cancel) }
            return true
        case .enter:
            if let index = defaultButtonIndex, buttonNodes[index].isEnabled { choose(index) }
            return true
        default:
            return false
        }
    }

    private func didEnd(_ reason: Overlay.DismissReason) {
        isPresented = false
        overlay = nil
        if reason == .escape, chosenButtonIndex == nil { chosenButtonIndex = cancelButtonIndex }
        if let index = chosenButtonIndex { buttons[index].handler?() }
        let onDismiss = onDismiss
        self.onDismiss = nil
        onDismiss?(chosenButtonIndex)
    }
}

extension NodeHost {
    /// Shows `alert` over the window (see `Alert`), above any overlay shown now.
    /// - Returns: the alert.
    /// - Thread: main
    @discardableResult
    public func presentAlert(_ alert: Alert) -> Alert {
        UIThread.precondition("NodeHost.presentAlert")
        alert.present(on: self)
        return alert
    }
}

/// An alert's title, message and buttons, stacked and centred.
final class AlertContentNode: Node, @unchecked Sendable {
    let titleNode = TextNode()
    let messageNode = TextNode()
    let buttons: [DialogButtonNode]

    init(title: String, message: String, buttons: [DialogButtonNode]) {
        self.buttons = buttons
        super.init()
        debugName = "alert content"
        automaticallyManagesSubnodes = true
        titleNode.attributedText = AttributedText(title, attributes: .themed(font: .system(size: 17, bold: true), .label))
        titleNode.alignment = .center
        // The card's label is the title: read once, as the alert's name.
        titleNode.accessibilityElementsHidden = true
        messageNode.attributedText = AttributedText(message, attributes: .themed(font: .system(size: 15), .secondaryLabel))
        messageNode.alignment = .center
        messageNode.isHidden = message.isEmpty
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        var children: [any LayoutElement] = [titleNode]
        if !messageNode.isHidden { children.append(messageNode.spacingBefore(8)) }
        children.append(DialogButtonRowSpec(buttons: buttons, spacing: DialogMetrics.buttonSpacing).spacingBefore(24))
        return StackSpec(direction: .vertical, alignItems: .stretch, children: children)
    }
}

/// Buttons in a row of equal widths filling the width there is, or stacked full width when a title
/// does not fit its share of the row.
struct DialogButtonRowSpec: LayoutSpec {
    let buttons: [Node]
    let spacing: Double

    func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        let width = range.max.width
        let count = Double(buttons.count)
        let share = (width - spacing * (count - 1)) / count
        let unbounded = SizeRange(min: .zero, max: Size(width: .infinity, height: .infinity))
        let fits = width.isFinite && buttons.allSatisfy { $0.measure(unbounded, in: &context).size.width <= share }
        let children: [any LayoutElement] = fits ? buttons.map { $0.flexGrow(1).flexShrink(1).flexBasis(.points(0)) } : buttons
        let stack = StackSpec(direction: fits ? .horizontal : .vertical, spacing: spacing, alignItems: .stretch,
                              children: children)
        let minimum = Size(width: width.isFinite ? width : range.min.width, height: range.min.height)
        return stack.measure(SizeRange(min: minimum, max: range.max), in: &context)
    }
}
