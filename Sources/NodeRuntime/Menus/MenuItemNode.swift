import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Where a menu's columns fall, shared by all its rows so titles and shortcuts line up: the menu
/// measures every row's texts once and hands each row the same widths.
/// - Thread: any (a value)
struct MenuColumns: Sendable, Hashable {
    /// Space left of the mark column (and right of the arrow column) inside the highlight.
    static let padding = 8.0
    /// The highlight's inset from the menu's edges.
    static let rowInset = 4.0
    static let markWidth = 20.0
    static let iconSide = 16.0
    static let iconGap = 8.0
    /// The least space between a title and its shortcut.
    static let shortcutGap = 24.0
    static let arrowWidth = 16.0

    var hasMarks = false
    var hasIcons = false
    var titleWidth = 0.0
    var shortcutWidth = 0.0
    var hasSubmenus = false

    /// The title's x in the row (the row spans the menu's width less `rowInset` each side).
    var titleX: Double {
        Self.padding + (hasMarks ? Self.markWidth : 0) + (hasIcons ? Self.iconSide + Self.iconGap : 0)
    }

    /// The column at the end of the rows: shortcuts, and submenus' arrows (an item has one or the
    /// other, so they share it).
    var trailingWidth: Double { max(shortcutWidth, hasSubmenus ? Self.arrowWidth : 0) }

    /// The width a row needs, highlight included.
    var rowWidth: Double {
        titleX + titleWidth + (trailingWidth > 0 ? Self.shortcutGap + trailingWidth : 0) + Self.padding
    }
}

/// One row of a `MenuNode`: an item's mark, icon, title, shortcut and submenu arrow, or a separator's
/// line. The row draws its highlight and its marks; the texts and the icon are subnodes.
/// - Thread: main, except the drawing (display worker, from `DrawParameters`).
final class MenuItemNode: Node, NodeDrawing, @unchecked Sendable {
    /// Height of an item's row, and of a separator's.
    static let rowHeight = 28.0
    static let separatorHeight = 9.0
    static let font = TextFont(size: 13)

    let item: MenuItem
    let index: Int
    let titleNode = TextNode()
    let shortcutNode = TextNode()
    let iconNode = ImageNode()
    /// The menu this row belongs to. (main thread only)
    weak var menuNode: MenuNode?

    private struct Looks {
        var isHighlighted = false
        var isExpanded = false
        var columns = MenuColumns()
    }
    private let looks = Locked(Looks())

    init(item: MenuItem, index: Int) {
        self.item = item
        self.index = index
        super.init()
        debugName = item.isSeparator ? "menu separator" : "menu item \(item.title)"
        isUserInteractionEnabled = !item.isSeparator
        // A highlight that moves draws its row and texts within the frame of the key or the pointer
        // that moved it: a few small texts, never a white row with dark text for a frame.
        displaysAsynchronously = false
        guard !item.isSeparator else { return }
        titleNode.displaysAsynchronously = false
        shortcutNode.displaysAsynchronously = false
        let single = TextLayoutOptions(maximumNumberOfLines: 1)
        titleNode.options = single
        shortcutNode.options = single
        titleNode.isUserInteractionEnabled = false
        shortcutNode.isUserInteractionEnabled = false
        titleNode.accessibilityElementsHidden = true
        shortcutNode.accessibilityElementsHidden = true
        addSubnode(titleNode)
        if item.shortcut != nil { addSubnode(shortcutNode) }
        if let icon = item.icon {
            iconNode.source = icon
            iconNode.contentMode = .aspectFit
            iconNode.accessibilityElementsHidden = true
            addSubnode(iconNode)
        }
        applyTextColors()
    }

    /// Highlighted by the pointer or the keyboard: drawn in the accent colour. - Thread: any
    var isHighlighted: Bool {
        get { looks.withLock { $0.isHighlighted } }
        set {
            guard looks.withLock({ l -> Bool in defer { l.isHighlighted = newValue }; return l.isHighlighted != newValue }) else { return }
            applyTextColors()
            setNeedsDisplay()
            runtime.noteAccessibilityChange()
        }
    }

    /// Its submenu is open. - Thread: any
    var isExpanded: Bool {
        get { looks.withLock { $0.isExpanded } }
        set {
            guard looks.withLock({ l -> Bool in defer { l.isExpanded = newValue }; return l.isExpanded != newValue }) else { return }
            runtime.noteAccessibilityChange()
        }
    }

    /// The menu's shared columns. - Thread: any
    var columns: MenuColumns {
        get { looks.withLock { $0.columns } }
        set {
            guard looks.withLock({ l -> Bool in defer { l.columns = newValue }; return l.columns != newValue }) else { return }
            setNeedsLayout()
            setNeedsDisplay()
        }
    }

    private func applyTextColors() {
        guard !item.isSeparator else { return }
        let highlighted = isHighlighted
        let title: ThemeColor = highlighted ? .onAccent : (item.isEnabled ? .label : .secondaryLabel)
        let shortcut: ThemeColor = highlighted ? .onAccent : .secondaryLabel
        titleNode.attributedText = AttributedText(item.title, attributes: .themed(font: Self.font, title))
        if let text = item.shortcut?.displayString {
            shortcutNode.attributedText = AttributedText(text, attributes: .themed(font: Self.font, shortcut))
        }
        iconNode.opacity = item.isEnabled ? 1 : 0.45
    }

    /// The width of the title and of the shortcut on one line. - Thread: any
    func measureTexts() -> (title: Double, shortcut: Double) {
        guard !item.isSeparator else { return (0, 0) }
        let title = titleNode.layoutThatFits(.unconstrained).size.width
        let shortcut = item.shortcut == nil ? 0 : shortcutNode.layoutThatFits(.unconstrained).size.width
        return (title.isFinite ? title : 0, shortcut.isFinite ? shortcut : 0)
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        Size(width: columns.rowWidth, height: item.isSeparator ? Self.separatorHeight : Self.rowHeight)
    }

    override func layout() {
        super.layout()
        guard !item.isSeparator else { return }
        let columns = self.columns
        let bounds = self.bounds
        func centred(_ node: Node, x: Double, width: Double) -> Rect {
            let height = node.layoutThatFits(SizeRange(min: .zero, max: Size(width: width, height: bounds.height))).size.height
            return Rect(x: x, y: ((bounds.height - height) / 2).rounded(), width: width, height: height)
        }
        let trailing = columns.trailingWidth
        let shortcutWidth = item.shortcut == nil ? 0 : min(columns.shortcutWidth, shortcutNode.layoutThatFits(.unconstrained).size.width)
        let shortcutX = bounds.width - MenuColumns.padding - shortcutWidth
        let titleRight = bounds.width - MenuColumns.padding - (trailing > 0 ? trailing + MenuColumns.shortcutGap : 0)
        titleNode.frame = centred(titleNode, x: columns.titleX, width: max(0, titleRight - columns.titleX))
        if item.shortcut != nil { shortcutNode.frame = centred(shortcutNode, x: shortcutX, width: shortcutWidth) }
        if item.icon != nil {
            let side = MenuColumns.iconSide
            let x = MenuColumns.padding + (columns.hasMarks ? MenuColumns.markWidth : 0)
            iconNode.frame = Rect(x: x, y: ((bounds.height - side) / 2).rounded(), width: side, height: side)
        }
    }

    // MARK: Drawing

    struct DrawParameters: Sendable {
        var isSeparator: Bool
        var highlight: Color?
        var separator: Color
        var glyph: Color
        var mark: MenuItem.Mark
        var hasSubmenu: Bool
        var columns: MenuColumns
    }

    func drawParameters() -> DrawParameters {
        let highlighted = isHighlighted && item.isSelectable
        let glyph: ThemeColor = highlighted ? .onAccent : (item.isEnabled ? .label : .secondaryLabel)
        return DrawParameters(isSeparator: item.isSeparator, highlight: highlighted ? themeColor(.accent) : nil,
                              separator: themeColor(.separator), glyph: themeColor(glyph), mark: item.mark,
                              hasSubmenu: item.submenu != nil, columns: columns)
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        if parameters.isSeparator {
            let y = (bounds.height / 2).rounded(.down)
            context.fill(Rect(x: MenuColumns.padding, y: y, width: max(0, bounds.width - 2 * MenuColumns.padding), height: 1),
                         color: parameters.separator)
            return
        }
        if let highlight = parameters.highlight {
            context.fillRoundedRect(bounds, radii: CornerRadii(5), color: highlight)
        }
        let midY = bounds.height / 2
        let markX = MenuColumns.padding
        switch parameters.mark {
        case .check(true):
            // A tick 12 points wide, its stroke 2 points, centred in the mark column.
            let box = Rect(x: markX + 2, y: (midY - 6).rounded(), width: 12, height: 12)
            MenuGlyphs.stroke([Point(x: 1.5, y: 6.5), Point(x: 4.5, y: 9.5), Point(x: 10.5, y: 2.5)], width: 2,
                              in: box, color: parameters.glyph, context: &context, scale: info.scale)
        case .radio(true):
            let dot = Rect(x: markX + 4, y: (midY - 4).rounded(), width: 8, height: 8)
            context.fillRoundedRect(dot, radii: CornerRadii(4), color: parameters.glyph)
        default:
            break
        }
        if parameters.hasSubmenu {
            // A chevron pointing right, at the end of the row.
            let box = Rect(x: bounds.width - MenuColumns.padding - 10, y: (midY - 5).rounded(), width: 8, height: 10)
            MenuGlyphs.stroke([Point(x: 2, y: 1), Point(x: 6, y: 5), Point(x: 2, y: 9)], width: 1.6,
                              in: box, color: parameters.glyph, context: &context, scale: info.scale)
        }
    }

    // MARK: Pointer

    override func pointerEntered() {
        menuNode?.rowPointerEntered(index)
    }

    override func pointerExited() {
        menuNode?.rowPointerExited(index)
    }

    override func touchesBegan(_ touch: Touch) {
        menuNode?.rowPressed(index)
    }

    override func touchesEnded(_ touch: Touch) {
        guard bounds.contains(convertFromRoot(touch.location)) else { return }
        menuNode?.rowReleased(index)
    }

    // MARK: Accessibility

    override var isAccessibilityElementByDefault: Bool { true }

    override func accessibilityDefaults() -> AccessibilityDescription {
        var description = AccessibilityDescription(role: .menuItem, label: item.title, exposesChildren: false)
        if item.isSeparator {
            description.role = .separator
            return description
        }
        switch item.mark {
        case .none: break
        case .check(let on):
            description.role = .checkMenuItem
            description.states.insert(.checkable)
            if on { description.states.insert(.checked) }
        case .radio(let on):
            description.role = .radioMenuItem
            description.states.insert(.checkable)
            if on { description.states.insert(.checked) }
        }
        if !item.isEnabled { description.states.insert(.disabled) }
        if item.submenu != nil {
            description.states.insert(.expandable)
            if isExpanded { description.states.insert(.expanded) }
        }
        if isHighlighted { description.states.formUnion([.selected, .focused]) }
        description.states.insert(.selectable)
        if let shortcut = item.shortcut { description.hint = shortcut.displayString }
        if item.isEnabled { description.actions = [.press] }
        return description
    }

    /// `.press` chooses the item (or opens its submenu), as Enter does. - Thread: main
    override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        guard action == .press, item.isSelectable, let menuNode else { return super.performAccessibilityAction(action) }
        return menuNode.activateRow(index, selectingFirstOfSubmenu: true)
    }
}

/// Strokes drawn as anti-aliased coverage (check marks, chevrons): the drawing kit fills rectangles
/// and rounded rectangles only, so a polyline is turned into a coverage mask and filled through it.
/// - Thread: any
enum MenuGlyphs {
    /// Strokes the polyline `points` (in `box`'s coordinates, points) `width` points thick, with round
    /// joins and ends, in `color`.
    static func stroke(_ points: [Point], width: Double, in box: Rect, color: Color,
                       context: inout BitmapContext, scale: Double) {
        let pixelWidth = Int((box.width * scale).rounded()), pixelHeight = Int((box.height * scale).rounded())
        guard pixelWidth > 0, pixelHeight > 0, points.count >= 2 else { return }
        let half = width * scale / 2
        let scaled = points.map { Point(x: $0.x * scale, y: $0.y * scale) }
        var coverage = [UInt8](repeating: 0, count: pixelWidth * pixelHeight)
        for y in 0..<pixelHeight {
            for x in 0..<pixelWidth {
                let p = Point(x: Double(x) + 0.5, y: Double(y) + 0.5)
                var nearest = Double.infinity
                for i in 0..<(scaled.count - 1) { nearest = min(nearest, distance(p, scaled[i], scaled[i + 1])) }
                let value = max(0, min(1, half + 0.5 - nearest))
                coverage[y * pixelWidth + x] = UInt8((value * 255).rounded())
            }
        }
        context.drawing(in: box) { region in
            region.clip(toCoverage: coverage, width: pixelWidth, height: pixelHeight)
            region.fill(region.bounds, color: color)
        }
    }

    /// The distance from `p` to the segment `a`–`b`.
    private static func distance(_ p: Point, _ a: Point, _ b: Point) -> Double {
        let dx = b.x - a.x, dy = b.y - a.y
        let length = dx * dx + dy * dy
        let t = length == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
        let x = a.x + t * dx - p.x, y = a.y + t * dy - p.y
        return (x * x + y * y).squareRoot()
    }
}
