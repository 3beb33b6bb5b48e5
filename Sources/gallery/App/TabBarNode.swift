import Tessera

/// The tab bar: one button per screen, made of nodes; a tap selects. The pointer shows a hand over a
/// button, whose title darkens while the pointer is over it.
final class TabBarNode: Node, NodeDrawing, @unchecked Sendable {
    final class ButtonNode: Node, @unchecked Sendable {
        let label: TextNode
        let title: String
        var isSelected = false {
            didSet { updateLabel() }
        }
        /// The pointer is over the button (no button down).
        private(set) var isHovered = false {
            didSet { updateLabel() }
        }

        init(title: String, number: Int) {
            self.title = title
            label = TextNode(title, attributes: Self.attributes(selected: false))
            super.init()
            isUserInteractionEnabled = true
            cursor = .hand
            addSubnode(label)
            // The key that selects it from anywhere (the tab controller's digits).
            let name = title.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")
            toolTip = "Show \(name) (\(number))"
        }

        /// Selects the tab (the bar's tap does the same).
        var onActivate: (() -> Void)?

        // A tab to a screen reader, and a Tab stop: Enter or Space selects it.
        override var isAccessibilityElementByDefault: Bool { true }
        override var canBecomeFocused: Bool { true }
        override func accessibilityDefaults() -> AccessibilityDescription {
            let name = title.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")
            return AccessibilityDescription(role: .tab, label: name, states: isSelected ? [.selectable, .selected] : [.selectable],
                                            actions: [.press], exposesChildren: false)
        }
        override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
            guard action == .press, let onActivate else { return super.performAccessibilityAction(action) }
            onActivate()
            return true
        }
        override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
            guard key == .enter || key == .space, let onActivate else { return false }
            onActivate()
            return true
        }

        override func pointerEntered() { isHovered = true }
        override func pointerExited() { isHovered = false }

        private func updateLabel() {
            label.attributedText = AttributedText(title, attributes: Self.attributes(selected: isSelected, hovered: isHovered))
        }

        static func attributes(selected: Bool, hovered: Bool = false) -> TextAttributes {
            Palette.text(13, bold: selected, color: selected ? Palette.accent : (hovered ? Palette.title : Palette.secondary))
        }

        override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
            label.centered()
        }
    }

    let buttons: [ButtonNode]
    var onSelect: ((Int) -> Void)?

    /// The tab list holding the tabs.
    override var isAccessibilityElementByDefault: Bool { true }
    override func accessibilityDefaults() -> AccessibilityDescription { AccessibilityDescription(role: .tabList, label: "Screens") }

    init(titles: [String]) {
        buttons = titles.enumerated().map { ButtonNode(title: "\($0.offset + 1)  \($0.element)", number: $0.offset + 1) }
        super.init()
        buttons.forEach { addSubnode($0) }
    }

    override func didLoad() {
        super.didLoad()
        for (index, button) in buttons.enumerated() {
            button.onActivate = { [weak self] in self?.onSelect?(index) }
            button.addGestureRecognizer(TapGestureRecognizer { [weak self] recognizer in
                if recognizer.state == .recognized { self?.onSelect?(index) }
            })
        }
    }

    func select(_ index: Int) {
        for (i, button) in buttons.enumerated() { button.isSelected = i == index }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack { buttons.map { $0.flexGrow(1).flexBasis(.points(0)) } }
    }

    /// The bar's fill and the hairline over it, in the current appearance.
    struct DrawParameters: Sendable {
        var fill: Color
        var line: Color
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(fill: themeColor(Palette.tabBar), line: themeColor(Palette.tabBarLine))
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.fill)
        context.fill(Rect(x: 0, y: 0, width: info.bounds.width, height: 0.5), color: parameters.line)
    }
}
