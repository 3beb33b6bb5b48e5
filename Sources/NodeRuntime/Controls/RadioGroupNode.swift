public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Radio buttons, one above the other: a circle and a title each, of which one is chosen
/// (`selectedIndex`), its circle filled with the accent colour around a white dot. A press on a
/// button (its title included), Space on the focused one, or a screen reader's press chooses it.
///
/// The group is one stop of Tab: the focus lands on the chosen button (the first when none is), and
/// Up/Left and Down/Right choose and focus the button before or after it, wrapping around. A choice
/// the user makes sends the group's targets `.valueChanged`; setting `selectedIndex` in code, from any
/// thread, sends nothing.
///
/// A screen reader reads a group (a panel labelled `title`) of radio buttons, each checkable and
/// checked when chosen. A disabled group dims and takes no input.
/// - Thread: any for its properties; see `ControlNode`.
public final class RadioGroupNode: ControlNode, @unchecked Sendable {
    /// The space between two buttons, in points.
    public static let spacing = 6.0

    /// The buttons' titles, in order. - Thread: any
    public let titles: [String]
    /// One node per button. (set once)
    let items: [ChoiceItemNode]
    private let selection: ChoiceSelection

    /// A group of buttons titled `titles`, `selectedIndex` chosen (nil: none; an index outside the
    /// titles is taken as none, as `selectedIndex` does), read as `title`. - Thread: any
    public init(titles: [String], selectedIndex: Int? = 0, title: String = "") {
        self.titles = titles
        items = titles.enumerated().map { ChoiceItemNode(index: $0.offset, title: $0.element, kind: .radio) }
        selection = ChoiceSelection(title: title)
        super.init()
        debugName = "radio group \(title)"
        isUserInteractionEnabled = false
        cursor = nil
        for item in items {
            item.group = self
            addSubnode(item)
        }
        self.selectedIndex = selectedIndex
    }

    /// The chosen button's index; nil for none. An index outside `titles` is taken as nil and
    /// reported (`TesseraLog.app`). Setting it sends nothing. - Thread: any
    public var selectedIndex: Int? {
        get { selection.selectedIndex }
        set { selection.set(newValue, items: items, owner: self) }
    }

    /// What a screen reader calls the group ("Size"); empty for nothing. - Thread: any
    public var title: String {
        get { selection.title }
        set { selection.title = newValue; runtime.noteAccessibilityChange() }
    }

    // MARK: Layout

    /// The buttons stacked, as wide as the widest. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let sizes = items.map { $0.calculateSizeThatFits(constrainedSize) }
        let height = sizes.reduce(0) { $0 + $1.height } + Self.spacing * Double(max(0, sizes.count - 1))
        return Size(width: sizes.map(\.width).max() ?? 0, height: height)
    }

    /// Stacks the buttons, each as wide as the group. - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        var y = 0.0
        for item in items {
            let height = item.calculateSizeThatFits(bounds.size).height
            let frame = Rect(x: 0, y: y, width: bounds.width, height: height)
            if item.frame != frame { item.frame = frame }
            y += height + Self.spacing
        }
    }

    // MARK: State and accessibility

    /// Passes the group's enabled state to its buttons. - Thread: main
    @MainActor
    public override func controlStateDidChange() {
        super.controlStateDidChange()
        selection.propagateEnabled(isEnabled, to: items, owner: self)
    }

    /// The group itself never takes focus: its chosen button does. - Thread: main
    @MainActor
    public override var canBecomeFocused: Bool { false }

    /// A panel labelled `title`, holding the buttons. - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        selection.groupDescription(enabled: isEnabled)
    }
}

// The choice a group's items ask of it: its items, the keys that move the choice, its targets.
extension RadioGroupNode: ChoiceGroup {
    var choiceItems: [ChoiceItemNode] { items }
    var previousKeys: Set<Key> { [.up, .left] }
    var nextKeys: Set<Key> { [.down, .right] }
    @MainActor func sendValueChanged() { sendActions(for: .valueChanged) }
}

/// A choice group's state that any thread may set: the chosen index and the title, under one lock;
/// and the work both groups do when they change.
/// - Thread: any
final class ChoiceSelection: Sendable {
    private struct State {
        var selectedIndex: Int?
        var title: String
    }
    private let state: Locked<State>  // guarded by its lock

    init(title: String) { state = Locked(State(selectedIndex: nil, title: title)) }

    var selectedIndex: Int? { state.withLock { $0.selectedIndex } }

    var title: String {
        get { state.withLock { $0.title } }
        set { state.withLock { $0.title = newValue } }
    }

    /// Chooses `index` (out of range: none, reported), marks the items, redraws them (a segment's
    /// line depends on its neighbour) and, if a button that can no longer be a Tab stop has the
    /// focus, hands it to the chosen one.
    func set(_ index: Int?, items: [ChoiceItemNode], owner: Node) {
        var index = index
        if let requested = index, !items.indices.contains(requested) {
            TesseraLog.app.warning("\(owner.debugName ?? "choice group"): selectedIndex \(requested) is not one of its \(items.count) items; nothing is chosen")
            index = nil
        }
        let changed = state.withLock { s -> Bool in
            defer { s.selectedIndex = index }
            return s.selectedIndex != index
        }
        guard changed else { return }
        for item in items {
            item.isSelected = item.index == index
            item.setNeedsDisplay()
        }
        owner.runtime.noteAccessibilityChange()
        owner.runtime.mainQueue.performOrEnqueue {
            guard let host = items.first?.nodeHost, let focused = host.focusedNode as? ChoiceItemNode,
                  items.contains(where: { $0 === focused }), !focused.canBecomeFocused,
                  let target = focused.group?.focusTarget() else { return }
            host.focus(target)
        }
    }

    /// Gives every item the group's enabled state; a group that is disabled gives up the focus.
    @MainActor
    func propagateEnabled(_ enabled: Bool, to items: [ChoiceItemNode], owner: ControlNode) {
        owner.isUserInteractionEnabled = false
        owner.cursor = nil
        for item in items where item.isEnabled != enabled { item.isEnabled = enabled }
    }

    /// A group (AT-SPI's panel) labelled by the title, its items read as its children.
    func groupDescription(enabled: Bool) -> AccessibilityDescription {
        AccessibilityDescription(role: .group, label: title, states: enabled ? [] : [.disabled], exposesChildren: true)
    }
}
