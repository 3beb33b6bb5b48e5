public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A row of segments joined into one rounded bar, as GTK's linked toggle buttons: each a title, all
/// as wide as the widest, one chosen (`selectedIndex`) and filled with the accent colour, its title
/// in `onAccent`; the others on the theme's fill, a line between two that are not chosen. A press on
/// a segment, Space on the focused one, or a screen reader's press chooses it; hovering and pressing
/// shade it, and a disabled control dims.
///
/// The control is one stop of Tab: the focus lands on the chosen segment (the first when none is),
/// and Left and Right choose and focus the one before or after it, wrapping around. A choice the user
/// makes sends the control's targets `.valueChanged`; setting `selectedIndex` in code, from any
/// thread, sends nothing.
///
/// A screen reader reads a group (a panel labelled `title`) of radio buttons, one per segment,
/// checkable and checked when chosen: what Orca reads of GTK's grouped toggles.
/// - Thread: any for its properties; see `ControlNode`.
public final class SegmentedControlNode: ControlNode, @unchecked Sendable {
    /// The segments' titles, in order. - Thread: any
    public let titles: [String]
    /// One node per segment. (set once)
    let items: [ChoiceItemNode]
    private let selection: ChoiceSelection

    /// Segments titled `titles`, `selectedIndex` chosen (nil: none; an index outside the titles is
    /// taken as none, as `selectedIndex` does), read as `title`. - Thread: any
    public init(titles: [String], selectedIndex: Int? = 0, title: String = "") {
        self.titles = titles
        items = titles.enumerated().map { index, text in
            var corners: CornerMask = []
            if index == 0 { corners.formUnion([.topLeft, .bottomLeft]) }
            if index == titles.count - 1 { corners.formUnion([.topRight, .bottomRight]) }
            return ChoiceItemNode(index: index, title: text, kind: .segment(corners))
        }
        selection = ChoiceSelection(title: title)
        super.init()
        debugName = "segmented control \(title)"
        isUserInteractionEnabled = false
        cursor = nil
        for item in items {
            item.group = self
            addSubnode(item)
        }
        self.selectedIndex = selectedIndex
    }

    /// The chosen segment's index; nil for none. An index outside `titles` is taken as nil and
    /// reported (`TesseraLog.app`). Setting it sends nothing. - Thread: any
    public var selectedIndex: Int? {
        get { selection.selectedIndex }
        set { selection.set(newValue, items: items, owner: self) }
    }

    /// What a screen reader calls the control ("View"); empty for nothing. - Thread: any
    public var title: String {
        get { selection.title }
        set { selection.title = newValue; runtime.noteAccessibilityChange() }
    }

    // MARK: Layout

    /// The widest segment's width times their number, 32 points tall. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let widest = items.map { $0.calculateSizeThatFits(constrainedSize).width }.max() ?? 0
        return Size(width: widest * Double(items.count), height: ChoiceItemNode.segmentHeight)
    }

    /// Lays the segments side by side, sharing the width equally (on whole points). - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        guard !items.isEmpty else { return }
        let width = bounds.width / Double(items.count)
        for item in items {
            let minX = (width * Double(item.index)).rounded(), maxX = (width * Double(item.index + 1)).rounded()
            let frame = Rect(x: minX, y: 0, width: maxX - minX, height: bounds.height)
            if item.frame != frame { item.frame = frame }
        }
    }

    // MARK: State and accessibility

    /// Passes the control's enabled state to its segments. - Thread: main
    @MainActor
    public override func controlStateDidChange() {
        super.controlStateDidChange()
        selection.propagateEnabled(isEnabled, to: items, owner: self)
    }

    /// The control itself never takes focus: its chosen segment does. - Thread: main
    @MainActor
    public override var canBecomeFocused: Bool { false }

    /// A panel labelled `title`, holding one radio button per segment. - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        selection.groupDescription(enabled: isEnabled)
    }
}

// The choice a group's items ask of it: its items, the keys that move the choice, its targets.
extension SegmentedControlNode: ChoiceGroup {
    var choiceItems: [ChoiceItemNode] { items }
    var previousKeys: Set<Key> { [.left] }
    var nextKeys: Set<Key> { [.right] }
    @MainActor func sendValueChanged() { sendActions(for: .valueChanged) }
}
