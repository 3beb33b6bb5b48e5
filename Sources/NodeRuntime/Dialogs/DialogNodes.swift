import Compositor

// The nodes every modal dialog is made of: a dim over the whole window (the overlay's content) with
// a card centred on it. The overlay's container keeps every press outside the card's controls (a
// modal overlay), so the dim itself takes no input.

/// The dim over the window, with the dialog's card centred on it, `DialogMetrics.windowMargin` clear
/// of the window's edges.
final class DialogBackdropNode: Node, @unchecked Sendable {
    let card: DialogCardNode
    /// The card's width when the window leaves room for it; nil: the card's own. (set once, in init)
    let cardWidth: Double?

    init(card: DialogCardNode, cardWidth: Double?) {
        self.card = card
        self.cardWidth = cardWidth
        super.init()
        debugName = "dialog backdrop"
        automaticallyManagesSubnodes = true
        applyDim()
    }

    /// Fades the dim and the card in over `DialogMetrics.fadeDuration`, unless the appearance asks
    /// for reduced motion (then it is there at once). Call once it is on screen.
    @MainActor
    func fadeIn() {
        guard !runtime.appearance.reducedMotion else { return }
        runtime.animator.animate(layer, .opacity(from: 0, to: 1), duration: DialogMetrics.fadeDuration)
    }

    private func applyDim() {
        dependOnAppearance(.colors)
        let dark = runtime.appearance.isDark
        backgroundColor = Color(rgb: 0x000000, alpha: dark ? DialogMetrics.dimAlphaDark : DialogMetrics.dimAlphaLight)
    }

    override func appearanceDidChange(_ change: AppearanceChange) {
        super.appearanceDidChange(change)
        if change.contains(.colors) { applyDim() }
    }

    /// Keys that come to the dialog while the focus is on nothing inside it go to the card (with the
    /// focus inside, the card heard them already on their way up).
    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard nodeHost?.focusedNode == nil else { return false }
        return card.keyDown(key, modifiers: modifiers)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let margin = DialogMetrics.windowMargin
        let available = constrainedSize.max.width.isFinite ? max(0, constrainedSize.max.width - 2 * margin) : .infinity
        let element: any LayoutElement = cardWidth.map { card.width(.points(min($0, available))) } ?? card
        return InsetSpec(EdgeInsets(all: margin), child: CenterSpec(child: element))
    }
}

/// A dialog's card: the theme's background with rounded corners, holding the dialog's content. It
/// is the dialog's accessibility element (an alert or a dialog, labelled by its title, modal), and
/// it hears the keys that its content leaves (Escape, Enter) through `keyAction`.
final class DialogCardNode: Node, @unchecked Sendable {
    let content: Node
    /// Space between the card's edges and the content. (set once, in init)
    let padding: Double
    /// Whether a content that measures to nothing (a controller's node) takes all the room the window
    /// leaves. (set once, in init)
    let fillsWhenUnsized: Bool
    /// The content's size, when the app chose one. (any thread; guarded by its lock)
    var preferredContentSize: Size? {
        get { appPreferredContentSize.withLock { $0 } }
        set {
            let changed = appPreferredContentSize.withLock { size -> Bool in
                defer { size = newValue }
                return size != newValue
            }
            if changed { setNeedsLayout() }
        }
    }
    private let appPreferredContentSize = Locked<Size?>(nil)
    /// Keys that reach the card (the focused node inside did not take them); true when taken.
    /// (main thread only)
    @MainActor var keyAction: ((Key, KeyModifiers) -> Bool)?
    /// Called after each layout of the card (a sheet's controller hears of its new size).
    /// (main thread only)
    @MainActor var didLayout: (() -> Void)?
    private let role: AccessibilityRole
    private let label: String

    init(content: Node, role: AccessibilityRole, label: String, padding: Double, fillsWhenUnsized: Bool) {
        self.content = content
        self.role = role
        self.label = label
        self.padding = padding
        self.fillsWhenUnsized = fillsWhenUnsized
        super.init()
        debugName = role == .alert ? "alert" : "dialog"
        automaticallyManagesSubnodes = true
        themedBackgroundColor = .background
        cornerRadius = DialogMetrics.cardCornerRadius
        clipsToBounds = true
    }

    override var isAccessibilityElementByDefault: Bool { true }

    /// An alert or a dialog labelled by its title; the rest of the window is out of reach while it is
    /// shown (`.modal`). Its children are its content's elements.
    override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(isElement: true, role: role, label: label, states: [.modal], exposesChildren: true)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        InsetSpec(EdgeInsets(all: padding),
                  child: DialogContentSpec(content: content, preferredSize: preferredContentSize, fillsWhenUnsized: fillsWhenUnsized))
    }

    override func layout() {
        super.layout()
        didLayout?()
    }

    /// The card takes the focus only when nothing inside it can: the keys still reach the dialog
    /// (Escape) and nothing behind it keeps them.
    override var canBecomeFocused: Bool { NodeHost.firstFocusable(in: content) == nil }

    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        keyAction?(key, modifiers) ?? false
    }
}

/// Sizes a dialog's content: at the app's preferred size (within the room there is), else at its own;
/// a content that measures to nothing in a direction takes the room there is in it.
struct DialogContentSpec: LayoutSpec {
    let content: Node
    let preferredSize: Size?
    let fillsWhenUnsized: Bool

    func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        func clamp(_ size: Size) -> Size {
            Size(width: min(max(size.width, range.min.width), range.max.width),
                 height: min(max(size.height, range.min.height), range.max.height))
        }
        if let preferredSize {
            return content.measure(.exactly(clamp(preferredSize)), in: &context)
        }
        let measured = content.measure(range, in: &context)
        guard fillsWhenUnsized, measured.size.width <= 0 || measured.size.height <= 0 else { return measured }
        let width = measured.size.width > 0 || !range.max.width.isFinite ? measured.size.width : range.max.width
        let height = measured.size.height > 0 || !range.max.height.isFinite ? measured.size.height : range.max.height
        return content.measure(.exactly(clamp(Size(width: width, height: height))), in: &context)
    }
}
