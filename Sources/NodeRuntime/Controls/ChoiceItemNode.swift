import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// What a `ChoiceItemNode` asks of the group it belongs to (`RadioGroupNode`, `SegmentedControlNode`):
/// one of its items is chosen at a time, the group is one stop of Tab, and the arrows move the choice.
/// - Thread: main
@MainActor
protocol ChoiceGroup: AnyObject {
    /// The group's items, in order.
    var choiceItems: [ChoiceItemNode] { get }
    /// The chosen item's index, if any.
    var selectedIndex: Int? { get set }
    /// The keys that choose the item before and after the focused one.
    var previousKeys: Set<Key> { get }
    var nextKeys: Set<Key> { get }
    /// Tells the group's targets that the user changed the choice.
    func sendValueChanged()
}

extension ChoiceGroup {
    /// The item Tab stops at: the chosen one when it takes input, else the first that does.
    func focusTarget() -> ChoiceItemNode? {
        let items = choiceItems
        if let index = selectedIndex, items.indices.contains(index), items[index].isEnabled { return items[index] }
        return items.first { $0.isEnabled }
    }

    /// The user chose `index` (a press, Space, an arrow, a screen reader): it becomes the choice and
    /// takes the focus; the targets hear `.valueChanged` when the choice changed.
    func userChose(_ index: Int) {
        let items = choiceItems
        guard items.indices.contains(index), items[index].isEnabled else { return }
        let changed = selectedIndex != index
        if changed { selectedIndex = index }
        items[index].nodeHost?.focus(items[index])
        if changed { sendValueChanged() }
    }

    /// Chooses the enabled item `offset` places from `index`, wrapping around; false when there is
    /// none other.
    func moveChoice(from index: Int, by offset: Int) -> Bool {
        let items = choiceItems
        guard items.count > 1 else { return false }
        var candidate = index
        for _ in 1..<items.count {
            candidate = ((candidate + offset) % items.count + items.count) % items.count
            if items[candidate].isEnabled {
                userChose(candidate)
                return true
            }
        }
        return false
    }
}

/// One choice of a `RadioGroupNode` (a radio button: a circle and its title) or of a
/// `SegmentedControlNode` (a segment: its title on a surface, accent-filled when chosen). It is
/// chosen when `isSelected`; only the group's Tab stop (`ChoiceGroup.focusTarget()`) takes focus.
/// - Thread: any for its properties; main for the rest (see `ControlNode`).
final class ChoiceItemNode: ControlNode, NodeDrawing, @unchecked Sendable {
    /// How the item is drawn.
    enum Kind: Sendable, Hashable {
        /// A radio button.
        case radio
        /// A segment, its outer corners (those at the ends of the row) rounded.
        case segment(CornerMask)
    }

    /// Segments' corner radius, the padding beside their titles and their height.
    static let segmentRadius = 6.0
    static let segmentPadding = 14.0
    static let segmentHeight = 32.0

    let index: Int
    let title: String
    let kind: Kind
    let titleNode = TextNode()
    /// The group. (set once, before the item is shown)
    nonisolated(unsafe) weak var group: (any ChoiceGroup)?

    init(index: Int, title: String, kind: Kind) {
        self.index = index
        self.title = title
        self.kind = kind
        super.init()
        debugName = "choice \(index) \(title)"
        displaysAsynchronously = false
        ControlIndicators.prepareTitle(titleNode)
        addSubnode(titleNode)
        applyTitle()
    }

    private func applyTitle() {
        var color = ThemeColor.label
        if case .segment = kind, isSelected { color = .onAccent }
        let text = ControlIndicators.titleText(title, color)
        if titleNode.attributedText != text { titleNode.attributedText = text }
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
    }

    /// The title measured on one line. - Thread: any
    func titleSize() -> Size {
        let size = titleNode.layoutThatFits(.unconstrained).size
        return Size(width: size.width.isFinite ? size.width.rounded(.up) : 0, height: size.height.isFinite ? size.height.rounded(.up) : 0)
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        switch kind {
        case .radio:
            return ControlIndicators.rowSize(title: titleNode, constrainedWidth: constrainedSize.width)
        case .segment:
            return Size(width: titleSize().width + 2 * Self.segmentPadding, height: Self.segmentHeight)
        }
    }

    override func layout() {
        super.layout()
        switch kind {
        case .radio:
            ControlIndicators.layoutTitle(titleNode, in: bounds)
        case .segment:
            let size = titleSize()
            let width = min(size.width, max(0, bounds.width - 2 * Self.segmentPadding))
            let frame = Rect(x: ((bounds.width - width) / 2).rounded(), y: ((bounds.height - size.height) / 2).rounded(),
                             width: width, height: size.height)
            if titleNode.frame != frame { titleNode.frame = frame }
        }
    }

    // MARK: Drawing

    struct DrawParameters: Sendable {
        var kind: Kind
        var state: ControlState
        /// The item before it is not chosen: a segment draws the line between them.
        var separatesFromPrevious: Bool
        var palette: ControlPalette
    }

    func drawParameters() -> DrawParameters {
        let selected = group?.selectedIndex
        let separates = index > 0 && selected != index && selected != index - 1
        return DrawParameters(kind: kind, state: controlState, separatesFromPrevious: separates,
                              palette: ControlPalette(for: self))
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let state = parameters.state
        switch parameters.kind {
        case .radio:
            ControlIndicators.drawIndicator(in: ControlIndicators.indicatorRect(in: info.bounds), round: true,
                                            on: state.contains(.selected), mark: .dot, state: state,
                                            palette: parameters.palette, context: &context, scale: info.scale)
        case .segment(let corners):
            let palette = parameters.palette
            let fill = state.contains(.selected) ? ControlIndicators.accentFill(palette, state)
                                                 : ControlIndicators.neutralFill(palette, state)
            context.fillRoundedRect(info.bounds, radii: CornerRadii(segmentRadius, corners: corners), color: fill)
            if parameters.separatesFromPrevious {
                context.fill(Rect(x: 0, y: 6, width: 1, height: max(0, info.bounds.height - 12)), color: palette.separator)
            }
        }
    }

    // MARK: State and input

    override func controlStateDidChange() {
        super.controlStateDidChange()
        applyTitle()
        setNeedsDisplay()
    }

    /// Only the group's Tab stop takes focus: the group is one stop, and the arrows move within it.
    override var canBecomeFocused: Bool { isEnabled && group?.focusTarget() === self }

    override func activate() {
        group?.userChose(index)
    }

    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, let group, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        if group.previousKeys.contains(key) { return group.moveChoice(from: index, by: -1) }
        if group.nextKeys.contains(key) { return group.moveChoice(from: index, by: 1) }
        return super.keyDown(key, modifiers: modifiers)
    }

    // MARK: Accessibility

    /// A radio button (segments too: a group of which one is chosen, as GTK reads linked toggles):
    /// checkable, checked when chosen, labelled by its title. - Thread: main
    override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.role = .radioButton
        description.label = title
        description.states.insert(.checkable)
        if isSelected { description.states.insert(.checked) }
        return description
    }
}
