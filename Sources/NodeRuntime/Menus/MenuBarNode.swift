public import Compositor

/// A window's bar of menus: the top-level menus' titles in a row, on the theme's bar colour with a
/// hairline under it. A click on a title opens its menu below it (another click closes it); while
/// one is open, the pointer moving onto another title switches to that menu, and Left and Right in
/// the menu move to the neighbouring ones. F10 opens the first menu, and Alt with a letter the first
/// menu whose title starts with it (unless an item's shortcut is that key). Shown in a host, the bar hands
/// the host its menus, whose enabled items' shortcuts then run while no menu or dialog holds the
/// focus, with the menus closed.
///
/// ```swift
/// let bar = MenuBarNode(menus: [fileMenu, editMenu, viewMenu])
/// ```
/// - Thread: main, every member but `height`.
public final class MenuBarNode: Node, NodeDrawing, @unchecked Sendable {
    /// The bar's height; its titles are as tall. - Thread: any
    public static let height = 30.0

    /// The menus, left to right. Setting them closes an open one. - Thread: main
    @MainActor public var menus: [Menu] = [] {
        didSet {
            closeMenu()
            rebuildTitles()
        }
    }
    /// One title per menu. (main thread only)
    @MainActor private(set) var titles: [MenuBarTitleNode] = []
    /// The index of the menu open now, if any. - Thread: main
    @MainActor public private(set) var openIndex: Int?
    /// The presentation of the open menu. (main thread only)
    @MainActor private weak var presentation: MenuPresentation?
    /// The overlay of the open menu, if any. - Thread: main
    @MainActor public private(set) var openOverlay: Overlay?

    /// A bar showing `menus`. - Thread: main
    @MainActor
    public init(menus: [Menu]) {
        super.init()
        debugName = "menu bar"
        isUserInteractionEnabled = true
        self.menus = menus
        rebuildTitles()
    }

    @MainActor
    private func rebuildTitles() {
        for title in titles { title.removeFromSupernode() }
        titles = menus.enumerated().map { MenuBarTitleNode(title: $0.element.title, index: $0.offset) }
        for title in titles {
            title.bar = self
            addSubnode(title)
        }
        setNeedsLayout()
    }

    /// Opens the menu at `index` below its title, closing another that is open; with
    /// `highlightFirst`, its first item is highlighted (from the keyboard). - Thread: main
    @MainActor
    public func openMenu(at index: Int, highlightFirst: Bool = false) {
        guard menus.indices.contains(index), let host = nodeHost else { return }
        if openIndex == index, let presentation, !presentation.levels.isEmpty {
            if highlightFirst, let node = presentation.levels.first?.node, node.highlightedIndex == nil {
                node.highlight(node.menu.items.firstIndex { $0.isSelectable })
            }
            return
        }
        closeMenu()
        let anchor = NodeHost.windowFrame(of: titles[index]) ?? .zero
        let presentation = MenuPresentation()
        presentation.bar = self
        presentation.barIndex = index
        self.presentation = presentation
        openIndex = index
        openOverlay = presentation.present(menus[index], on: host, positioner: PopupPositioner(anchor: anchor, side: .below),
                                           highlightFirst: highlightFirst)
        for title in titles { title.isOpen = title.index == index }
    }

    /// Closes the open menu, if any. - Thread: main
    @MainActor
    public func closeMenu() {
        openOverlay?.dismiss()
    }

    /// The presentation of its menu ended.
    @MainActor
    func menuDidClose(_ ended: MenuPresentation) {
        guard ended === presentation || presentation == nil else { return }
        presentation = nil
        openIndex = nil
        openOverlay = nil
        for title in titles { title.isOpen = false }
    }

    @MainActor
    func titlePressed(_ index: Int) {
        if openIndex == index { closeMenu() } else { openMenu(at: index) }
    }

    @MainActor
    func titleHovered(_ index: Int) {
        guard let open = openIndex, open != index else { return }
        openMenu(at: index)
    }

    // MARK: Layout and drawing

    /// As wide as it is let be, `height` tall. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0, height: Self.height)
    }

    /// Places the titles left to right, each as wide as its text and padding. - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        var x = 4.0
        for title in titles {
            let width = title.layoutThatFits(SizeRange(min: .zero, max: Size(width: .infinity, height: Self.height))).size.width
            let frame = Rect(x: x, y: 0, width: width, height: Self.height)
            if title.frame != frame { title.frame = frame }
            x += width
        }
    }

    /// The bar's fill and the hairline under it, in the current appearance. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var fill: Color
        var line: Color
    }

    /// The theme's `.bar` and `.separator`. - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        DrawParameters(fill: themeColor(.bar), line: themeColor(.separator))
    }

    /// Fills the bar and draws a 1-pixel line along its bottom. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.fill)
        context.fill(Rect(x: 0, y: info.bounds.height - 1 / info.scale, width: info.bounds.width, height: 1 / info.scale),
                     color: parameters.line)
    }

    // MARK: The host

    /// On screen, the bar hands its host its menus for their shortcuts. - Thread: main
    @MainActor
    public override func didEnterVisibleState() {
        super.didEnterVisibleState()
        nodeHost?.menuTracker.register(self)
    }

    /// Off screen, its open menu closes and its shortcuts stop. - Thread: main
    @MainActor
    public override func didExitVisibleState() {
        super.didExitVisibleState()
        closeMenu()
        // Leaving the screen, the bar may already be out of its host's tree: every host forgets it.
        registeredHost?.menuTracker.unregister(self)
    }

    /// The host the bar registered with (the last to show it).
    @MainActor
    private var registeredHost: NodeHost? { nodeHost ?? openOverlay?.host }

    // MARK: Accessibility

    /// A bar is an element. - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// A menu bar, whose titles are its items. - Thread: main
    @MainActor
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .menuBar)
    }
}

/// A title of a `MenuBarNode`: the menu's name, on the accent colour while its menu is open.
final class MenuBarTitleNode: Node, NodeDrawing, @unchecked Sendable {
    let titleNode: TextNode
    let title: String
    let index: Int
    /// (main thread only)
    @MainActor weak var bar: MenuBarNode?
    private let open = Locked(false)

    init(title: String, index: Int) {
        self.title = title
        self.index = index
        titleNode = TextNode(title, attributes: .themed(font: MenuItemNode.font, .label))
        super.init()
        debugName = "menu bar title \(title)"
        isUserInteractionEnabled = true
        titleNode.isUserInteractionEnabled = false
        titleNode.accessibilityElementsHidden = true
        addSubnode(titleNode)
    }

    /// Its menu is open. - Thread: any
    var isOpen: Bool {
        get { open.withLock { $0 } }
        set {
            guard open.withLock({ o -> Bool in defer { o = newValue }; return o != newValue }) else { return }
            titleNode.attributedText = AttributedText(title, attributes: .themed(font: MenuItemNode.font, newValue ? .onAccent : .label))
            setNeedsDisplay()
            runtime.noteAccessibilityChange()
        }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        titleNode.centered().inset(EdgeInsets(top: 0, left: 10, bottom: 0, right: 10))
    }

    struct DrawParameters: Sendable {
        var highlight: Color?
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(highlight: isOpen ? themeColor(.accent) : nil)
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        guard let highlight = parameters.highlight else { return }
        context.fillRoundedRect(info.bounds.insetBy(dx: 0, dy: 3), radii: CornerRadii(5), color: highlight)
    }

    override func touchesBegan(_ touch: Touch) {
        guard touch.button == .primary else { return }
        bar?.titlePressed(index)
    }

    override func pointerEntered() {
        bar?.titleHovered(index)
    }

    override var isAccessibilityElementByDefault: Bool { true }

    override func accessibilityDefaults() -> AccessibilityDescription {
        var states: AccessibilityStates = [.expandable, .selectable]
        if isOpen { states.formUnion([.expanded, .selected]) }
        return AccessibilityDescription(role: .menuItem, label: title, states: states, actions: [.press],
                                        exposesChildren: false)
    }

    /// `.press` opens its menu with the first item highlighted (or closes it when open). - Thread: main
    override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        guard action == .press, let bar else { return super.performAccessibilityAction(action) }
        if isOpen { bar.closeMenu() } else { bar.openMenu(at: index, highlightFirst: true) }
        return true
    }
}
