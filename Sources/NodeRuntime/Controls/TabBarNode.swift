public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A bar of tabs sharing its width equally, on the theme's bar colour with a hairline along one edge
/// (`hairlineEdge`, in `hairlineColor`): one tab chosen (`selectedIndex`), its title bold in the
/// accent colour, the others in the secondary label colour, darkening to the label colour while the
/// pointer is over one; a pressed tab is shaded. A tab with a `shortcut` shows "Show <title>
/// (<shortcut>)" as its tooltip.
///
/// The bar is one stop of Tab: the focus lands on the chosen tab; Left and Right move the focus to
/// the tab before or after, wrapping around, without choosing it; Enter or Space chooses the focused
/// tab. A press on a tab or a screen reader's press chooses it too. A choice the user makes calls
/// `onSelect` and sends the bar's targets `.valueChanged` (also when the tab was already chosen, so an
/// app can scroll its screen back to the top); setting `selectedIndex` in code, from any thread, sends
/// nothing.
///
/// A screen reader reads a page tab list labelled `title`, holding one page tab per tab, selectable,
/// selected when chosen, labelled by the tab's `title` (not its `displayTitle`).
/// - Thread: any for its properties; main for input, layout and `onSelect` (see `ControlNode`).
public final class TabBarNode: ControlNode, NodeDrawing, @unchecked Sendable {
    /// One tab: what a screen reader calls it, what it shows, and the key that chooses it from
    /// anywhere (which the app handles; the bar only shows it in the tooltip).
    /// - Thread: any (a value)
    public struct Item: Sendable, Hashable {
        /// The tab's name: its accessible label and the tooltip's subject ("Chats").
        public var title: String
        /// The key that chooses it ("1", "Ctrl+1"), shown in the tooltip; nil for none.
        public var shortcut: String?
        /// The text drawn on the tab; nil for `title`.
        public var displayTitle: String?

        /// - Thread: any
        public init(title: String, shortcut: String? = nil, displayTitle: String? = nil) {
            self.title = title
            self.shortcut = shortcut
            self.displayTitle = displayTitle
        }

        /// "Show <title> (<shortcut>)", or nil without a shortcut. - Thread: any
        public var toolTip: String? { shortcut.map { "Show \(title) (\($0))" } }
    }

    /// The edge along which the hairline runs: the top for a bar at the bottom of a window.
    /// - Thread: any (a value)
    public enum HairlineEdge: Sendable, Hashable {
        case top, bottom
    }

    /// The bar's height when nothing else decides it. - Thread: any
    public static let defaultHeight = 48.0

    private struct Model {
        var selectedIndex: Int?
        var title: String
        var hairlineEdge: HairlineEdge = .top
        var hairlineColor: ThemeColor = .separator
    }

    /// The tabs, in order. - Thread: any
    public let items: [Item]
    /// One node per tab. (set once)
    let tabs: [TabItemNode]
    private let model: Locked<Model>  // guarded by its lock
    /// The tab the arrows moved the focus to; it counts only while a tab has the focus. Cleared by a
    /// choice. (main thread only)
    @MainActor var rovingIndex: Int?

    /// Called on the UI thread with the tab's index when the user chooses a tab (before the targets
    /// hear `.valueChanged`). - Thread: main
    @MainActor public var onSelect: ((Int) -> Void)?

    /// A bar of `items`, `selectedIndex` chosen (nil: none; outside the items: none, reported), read
    /// as `title`. - Thread: any
    public init(items: [Item], selectedIndex: Int? = 0, title: String = "") {
        self.items = items
        tabs = items.enumerated().map { TabItemNode(index: $0.offset, item: $0.element) }
        model = Locked(Model(selectedIndex: nil, title: title))
        super.init()
        debugName = "tab bar \(title)"
        displaysAsynchronously = false
        isUserInteractionEnabled = false
        cursor = nil
        for tab in tabs {
            tab.bar = self
            addSubnode(tab)
        }
        self.selectedIndex = selectedIndex
    }

    /// A bar of tabs titled `titles`, without shortcuts. - Thread: any
    public convenience init(titles: [String], selectedIndex: Int? = 0, title: String = "") {
        self.init(items: titles.map { Item(title: $0) }, selectedIndex: selectedIndex, title: title)
    }

    /// The chosen tab's index; nil for none. An index outside `items` is taken as nil and reported
    /// (`TesseraLog.app`). Setting it sends nothing. - Thread: any
    public var selectedIndex: Int? {
        get { model.withLock { $0.selectedIndex } }
        set {
            var index = newValue
            if let requested = index, !tabs.indices.contains(requested) {
                TesseraLog.app.warning("\(debugName ?? "tab bar"): selectedIndex \(requested) is not one of its \(tabs.count) tabs; none is chosen")
                index = nil
            }
            let changed = model.withLock { m -> Bool in
                defer { m.selectedIndex = index }
                return m.selectedIndex != index
            }
            guard changed else { return }
            for tab in tabs { tab.isSelected = tab.index == index }
            runtime.noteAccessibilityChange()
        }
    }

    /// What a screen reader calls the list of tabs ("Screens"); empty for nothing. - Thread: any
    public var title: String {
        get { model.withLock { $0.title } }
        set { model.withLock { $0.title = newValue }; runtime.noteAccessibilityChange() }
    }

    /// Where the hairline runs. Default `.top`. - Thread: any
    public var hairlineEdge: HairlineEdge {
        get { model.withLock { $0.hairlineEdge } }
        set { model.withLock { $0.hairlineEdge = newValue }; setNeedsDisplay() }
    }

    /// The hairline's colour. Default `.separator`. - Thread: any
    public var hairlineColor: ThemeColor {
        get { model.withLock { $0.hairlineColor } }
        set { model.withLock { $0.hairlineColor = newValue }; setNeedsDisplay() }
    }

    // MARK: Choosing (UI thread)

    /// The tab that may take the focus: while a tab has it, where the arrows moved it; else (the
    /// focus coming from outside the bar) the chosen one, else the first enabled one. - Thread: main
    @MainActor
    func focusIndex() -> Int? {
        if let rovingIndex, tabs.indices.contains(rovingIndex), tabs[rovingIndex].isEnabled,
           let focused = nodeHost?.focusedNode, tabs.contains(where: { $0 === focused }) {
            return rovingIndex
        }
        if let index = selectedIndex, tabs[index].isEnabled { return index }
        return tabs.first { $0.isEnabled }?.index
    }

    /// The user chose `index`: it becomes the choice and takes the focus if the bar had it;
    /// `onSelect` and the targets hear of it. - Thread: main
    @MainActor
    func userChose(_ index: Int) {
        guard tabs.indices.contains(index), tabs[index].isEnabled, isEnabled else { return }
        rovingIndex = nil
        selectedIndex = index
        if let host = nodeHost, let focused = host.focusedNode, tabs.contains(where: { $0 === focused }) {
            host.focus(tabs[index])
        }
        onSelect?(index)
        sendActions(for: .valueChanged)
    }

    /// Moves the focus to the enabled tab `offset` places from `index`, wrapping around; false when
    /// there is none other. - Thread: main
    @MainActor
    func moveFocus(from index: Int, by offset: Int) -> Bool {
        guard tabs.count > 1 else { return false }
        var candidate = index
        for _ in 1..<tabs.count {
            candidate = ((candidate + offset) % tabs.count + tabs.count) % tabs.count
            if tabs[candidate].isEnabled {
                rovingIndex = candidate
                tabs[candidate].nodeHost?.focus(tabs[candidate])
                return true
            }
        }
        return false
    }

    // MARK: Layout and drawing

    /// The constrained width (the titles' widths with their padding when it is unbounded), and
    /// `defaultHeight`. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let width = constrainedSize.width.isFinite
            ? constrainedSize.width
            : tabs.map { $0.titleSize().width + 2 * TabItemNode.padding }.reduce(0, +)
        return Size(width: width, height: Self.defaultHeight)
    }

    /// Lays the tabs side by side, sharing the width equally (on whole points). - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        guard !tabs.isEmpty else { return }
        let width = bounds.width / Double(tabs.count)
        for tab in tabs {
            let minX = (width * Double(tab.index)).rounded(), maxX = (width * Double(tab.index + 1)).rounded()
            let frame = Rect(x: minX, y: 0, width: maxX - minX, height: bounds.height)
            if tab.frame != frame { tab.frame = frame }
        }
    }

    /// The bar's fill and hairline. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var fill: Color
        var line: Color
        var edge: HairlineEdge
    }

    /// The theme's bar colour and the hairline's. - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        let (edge, line) = model.withLock { ($0.hairlineEdge, $0.hairlineColor) }
        return DrawParameters(fill: themeColor(.bar), line: themeColor(line), edge: edge)
    }

    /// Fills the bar and draws the half-point hairline. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.fill)
        let y = parameters.edge == .top ? 0 : info.bounds.height - 0.5
        context.fill(Rect(x: 0, y: y, width: info.bounds.width, height: 0.5), color: parameters.line)
    }

    // MARK: State and accessibility

    /// Passes the bar's enabled state to its tabs. - Thread: main
    @MainActor
    public override func controlStateDidChange() {
        super.controlStateDidChange()
        isUserInteractionEnabled = false
        cursor = nil
        for tab in tabs where tab.isEnabled != isEnabled { tab.isEnabled = isEnabled }
    }

    /// The bar itself never takes focus: one of its tabs does. - Thread: main
    @MainActor
    public override var canBecomeFocused: Bool { false }

    /// A page tab list labelled `title`, holding the tabs. - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .tabList, label: title, states: isEnabled ? [] : [.disabled])
    }
}

/// One tab of a `TabBarNode`: its title centred, coloured by its state.
/// - Thread: any for its properties; main for the rest (see `ControlNode`).
final class TabItemNode: ControlNode, NodeDrawing, @unchecked Sendable {
    /// The padding beside a title, and its type size.
    static let padding = 12.0
    static let fontSize = 13.0

    let index: Int
    let item: TabBarNode.Item
    let titleNode = TextNode()
    /// The bar. (set once, before the tab is shown)
    nonisolated(unsafe) weak var bar: TabBarNode?

    init(index: Int, item: TabBarNode.Item) {
        self.index = index
        self.item = item
        super.init()
        debugName = "tab \(index) \(item.title)"
        displaysAsynchronously = false
        ControlIndicators.prepareTitle(titleNode)
        addSubnode(titleNode)
        toolTip = item.toolTip
        applyTitle()
    }

    private func applyTitle() {
        let state = controlState
        let selected = state.contains(.selected)
        let color: ThemeColor = selected ? .accent : (state.contains(.hovered) || state.contains(.highlighted) ? .label : .secondaryLabel)
        let text = AttributedText(item.displayTitle ?? item.title,
                                  attributes: .themed(font: .system(size: Self.fontSize, bold: selected), color))
        if titleNode.attributedText != text {
            titleNode.attributedText = text
            setNeedsLayout()
        }
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
    }

    /// The title measured on one line. - Thread: any
    func titleSize() -> Size {
        let size = titleNode.layoutThatFits(.unconstrained).size
        return Size(width: size.width.isFinite ? size.width.rounded(.up) : 0, height: size.height.isFinite ? size.height.rounded(.up) : 0)
    }

    override func layout() {
        super.layout()
        let size = titleSize()
        // The padding is what the bar asks for when it sizes itself; a title in a narrower tab may
        // use it rather than be cut short.
        let width = min(size.width, bounds.width)
        let frame = Rect(x: ((bounds.width - width) / 2).rounded(), y: ((bounds.height - size.height) / 2).rounded(),
                         width: width, height: size.height)
        if titleNode.frame != frame { titleNode.frame = frame }
    }

    // MARK: Drawing

    struct DrawParameters: Sendable {
        var pressed: Bool
        var shade: Color
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(pressed: controlState.contains(.highlighted), shade: themeColor(.label).withAlphaMultiplied(by: 0.08))
    }

    /// A pressed tab is shaded with the label colour; otherwise the bar shows through.
    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        guard parameters.pressed else { return }
        context.fillRoundedRect(info.bounds.insetBy(dx: 4, dy: 4), radii: CornerRadii(8), color: parameters.shade)
    }

    // MARK: State and input

    override func controlStateDidChange() {
        super.controlStateDidChange()
        applyTitle()
        setNeedsDisplay()
    }

    /// Only the bar's Tab stop takes focus: the bar is one stop, and the arrows move within it.
    override var canBecomeFocused: Bool { isEnabled && bar?.focusIndex() == index }

    /// Focus that came other than by the arrows (Tab, a click) forgets where they had moved it.
    override func didBecomeFocused() {
        super.didBecomeFocused()
        if let bar, bar.rovingIndex != index { bar.rovingIndex = nil }
    }

    override func activate() {
        bar?.userChose(index)
    }

    override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, let bar, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        switch key {
        case .left: return bar.moveFocus(from: index, by: -1)
        case .right: return bar.moveFocus(from: index, by: 1)
        default: return super.keyDown(key, modifiers: modifiers)
        }
    }

    // MARK: Accessibility

    /// A page tab, selectable, selected when chosen, labelled by its title. - Thread: main
    override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.role = .tab
        description.label = item.title
        description.states.insert(.selectable)
        return description
    }
}
