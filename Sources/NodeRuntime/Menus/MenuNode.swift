public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The popup list of a `Menu`: its items in rows 28 points tall (separators 9), on the theme's
/// background with rounded corners and a 1-pixel edge, the highlighted row in the accent colour.
/// Shown by `NodeHost.showMenu(_:positioner:)`, a `MenuBarNode` or a context menu, which put it in a
/// popup overlay and give it the keyboard focus.
///
/// Pointer: hovering highlights a row; resting on a row with a submenu opens it after
/// `NodeHost.submenuDelay` (a press opens it at once); releasing a press on an enabled item
/// closes the whole chain of menus, then runs the item's action.
///
/// Keys: Up and Down move the highlight (wrapping, skipping separators and disabled items), Home and
/// End go to the first and last item, Enter or Space choose the highlighted item (or open its
/// submenu), Right opens the submenu and highlights its first item, Left closes a submenu (in a
/// menu bar's menu, Left and Right move to the neighbouring menu), Escape closes this level only
/// (the host's Escape for popups). Typing letters highlights the next item whose title starts with
/// them; a pause of `typeAheadTimeout` starts a new search.
///
/// A menu taller than the space it is given (the window, or the screen for a popup window) scrolls:
/// the wheel moves its rows, an arrow at the top or bottom shows there is more that way (a press on
/// it scrolls by three rows), and a row the keys highlight is scrolled into view.
/// - Thread: main, every member (built on any thread, shown on the main one).
public final class MenuNode: Node, NodeDrawing, @unchecked Sendable {
    /// The space above the first row and below the last.
    static let verticalPadding = 4.0
    /// A pause in typing longer than this, in seconds, starts a new type-ahead search. - Thread: any
    public static let typeAheadTimeout = 1.0
    static let cornerRadius = 8.0
    /// The narrowest a menu is drawn.
    static let minimumWidth = 140.0

    /// The menu shown. - Thread: any
    public let menu: Menu
    /// One node per item, in order. (set once)
    let rows: [MenuItemNode]
    /// The arrows over the first and last rows while the menu scrolls and there is more that way.
    /// (set once)
    let upArrow = MenuScrollArrowNode(pointsUp: true)
    let downArrow = MenuScrollArrowNode(pointsUp: false)
    /// How far the rows are scrolled up, in points: 0 unless the menu is taller than its bounds.
    /// (main thread only)
    @MainActor public private(set) var scrollOffset = 0.0
    /// The presentation (the chain of open menus) this node is a level of. (main thread only)
    @MainActor weak var presentation: MenuPresentation?
    /// Its level in the chain: 0 for the menu first opened. (main thread only)
    @MainActor var level = 0
    /// What has been typed for type-ahead, and when the last letter came. (main thread only)
    @MainActor private var typed = ""
    @MainActor private var lastTypedTime = -Double.infinity

    /// A node showing `menu`. Made alone, outside `NodeHost.showMenu` (which also opens its
    /// submenus and runs its actions), it draws and highlights but chooses nothing. - Thread: any
    public init(menu: Menu) {
        self.menu = menu
        rows = menu.items.enumerated().map { MenuItemNode(item: $0.element, index: $0.offset) }
        super.init()
        debugName = "menu \(menu.title)"
        isUserInteractionEnabled = true
        // A menu taller than the window is cut to it (the positioner's last resort); its rows stay inside.
        clipsToBounds = true
        for row in rows { addSubnode(row) }
        // Above the rows they cover.
        for arrow in [upArrow, downArrow] {
            arrow.isHidden = true
            addSubnode(arrow)
        }
    }

    /// The row highlighted now, if any. - Thread: main
    @MainActor
    public var highlightedIndex: Int? { rows.firstIndex { $0.isHighlighted } }

    /// Highlights the item at `index` (nil: none). An index that is not a selectable item highlights
    /// nothing. - Thread: main
    @MainActor
    public func highlight(_ index: Int?) {
        let target = index.flatMap { rows.indices.contains($0) && menu.items[$0].isSelectable ? $0 : nil }
        for row in rows { row.isHighlighted = row.index == target }
    }

    // MARK: Layout

    /// The columns shared by the rows, from their texts measured on one line.
    private func measureColumns() -> MenuColumns {
        var columns = MenuColumns()
        for row in rows {
            let item = row.item
            guard !item.isSeparator else { continue }
            if item.mark != .none { columns.hasMarks = true }
            if item.icon != nil { columns.hasIcons = true }
            if item.submenu != nil { columns.hasSubmenus = true }
            let (title, shortcut) = row.measureTexts()
            columns.titleWidth = max(columns.titleWidth, title)
            columns.shortcutWidth = max(columns.shortcutWidth, shortcut)
        }
        return columns
    }

    /// The height of a row (or a separator).
    private func rowHeight(_ row: MenuItemNode) -> Double {
        row.item.isSeparator ? MenuItemNode.separatorHeight : MenuItemNode.rowHeight
    }

    /// The rows' height and the padding above and below them: the menu's height when it has room.
    /// - Thread: any
    var contentHeight: Double { rows.reduce(2 * Self.verticalPadding) { $0 + rowHeight($1) } }

    /// Wide enough for the longest title and shortcut on one line (at least `minimumWidth`), as tall
    /// as its rows and padding; cut to `constrainedSize` (it then scrolls). - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let columns = measureColumns()
        let width = max(Self.minimumWidth, columns.rowWidth + 2 * MenuColumns.rowInset)
        return Size(width: min(width.rounded(.up), constrainedSize.width), height: min(contentHeight, constrainedSize.height))
    }

    /// Stacks the rows, all given the same columns, moved up by the scroll offset; shows the arrows
    /// where there is more. - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        let columns = measureColumns()
        // The bounds may have grown since the last scroll: the offset stays within the rows.
        scrollOffset = min(scrollOffset, maximumScrollOffset)
        var y = Self.verticalPadding - scrollOffset
        let width = max(0, bounds.width - 2 * MenuColumns.rowInset)
        for row in rows {
            let height = rowHeight(row)
            row.columns = columns
            row.menuNode = self
            let frame = Rect(x: MenuColumns.rowInset, y: y, width: width, height: height)
            if row.frame != frame { row.frame = frame }
            y += height
        }
        // Inside the menu's 1-point edge, over the padding and the rows next to it.
        let arrowHeight = MenuScrollArrowNode.height + Self.verticalPadding - 1
        let arrowWidth = max(0, bounds.width - 2)
        upArrow.frame = Rect(x: 1, y: 1, width: arrowWidth, height: arrowHeight)
        downArrow.frame = Rect(x: 1, y: bounds.height - 1 - arrowHeight, width: arrowWidth, height: arrowHeight)
        upArrow.isHidden = scrollOffset <= 0
        downArrow.isHidden = scrollOffset >= maximumScrollOffset
    }

    // MARK: Scrolling

    /// How far the rows can scroll: how much taller they are than the menu. - Thread: main
    @MainActor
    public var maximumScrollOffset: Double { bounds.height > 0 ? max(0, contentHeight - bounds.height) : 0 }

    /// Scrolls the rows up by `offset` points, kept between 0 and `maximumScrollOffset` (a non-finite
    /// offset scrolls to the top). - Thread: main
    @MainActor
    public func scroll(to offset: Double) {
        let clamped = min(max(0, offset.isFinite ? offset : 0), maximumScrollOffset)
        guard clamped != scrollOffset else { return }
        scrollOffset = clamped
        setNeedsLayout()
    }

    /// The top of row `index` in the rows' own coordinates (unscrolled).
    private func rowTop(_ index: Int) -> Double {
        rows.prefix(index).reduce(Self.verticalPadding) { $0 + rowHeight($1) }
    }

    /// Scrolls so that row `index` shows whole, clear of the arrows.
    @MainActor
    func scrollToShow(_ index: Int) {
        guard rows.indices.contains(index), maximumScrollOffset > 0 else { return }
        let top = rowTop(index), bottom = top + rowHeight(rows[index])
        let inset = MenuScrollArrowNode.height + Self.verticalPadding
        if top - inset < scrollOffset {
            scroll(to: top - inset)
        } else if bottom + inset > scrollOffset + bounds.height {
            scroll(to: bottom + inset - bounds.height)
        }
    }

    // MARK: Drawing

    /// The menu's background and edge colours in the current appearance. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var background: Color
        var edge: Color
    }

    /// The theme's `.background`, edged in `.separator`. - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        DrawParameters(background: themeColor(.background), edge: themeColor(.separator))
    }

    /// A rounded rectangle in the background colour inside a 1-pixel edge. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let edge = 1 / info.scale
        context.fillRoundedRect(bounds, radii: CornerRadii(cornerRadius), color: parameters.edge)
        context.fillRoundedRect(bounds.insetBy(dx: edge, dy: edge), radii: CornerRadii(cornerRadius - edge),
                                color: parameters.background)
    }

    // MARK: Accessibility

    /// A menu is an element. - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// A menu, labelled by its title; its rows are its items. - Thread: main
    @MainActor
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .menu, label: menu.title, states: [.focusable])
    }

    // MARK: Keys

    /// A menu takes the keyboard focus while it is open. - Thread: main
    @MainActor
    public override var canBecomeFocused: Bool { true }

    /// The keys of the type's description; modified keys (Ctrl, Alt, Super) are left to others.
    /// - Thread: main
    @MainActor
    public override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        // The keyboard takes over from the pointer: a submenu the pointer was about to open does not.
        presentation?.cancelPendingSubmenu()
        switch key {
        case .down: moveHighlight(by: 1)
        case .up: moveHighlight(by: -1)
        case .home, .pageUp: highlight(selectableIndices.first)
        case .end, .pageDown: highlight(selectableIndices.last)
        case .enter, .space:
            if key == .space, !typed.isEmpty, typeAheadIsLive { return typeAhead(" ") }
            guard let index = highlightedIndex else { return true }
            _ = activateRow(index, selectingFirstOfSubmenu: true)
        case .right:
            if let index = highlightedIndex, menu.items[index].submenu != nil {
                presentation?.openSubmenu(of: self, at: index, highlightFirst: true)
            } else {
                presentation?.moveAcrossBar(from: self, by: 1)
            }
        case .left:
            if level > 0 { presentation?.closeLevels(from: level) } else { presentation?.moveAcrossBar(from: self, by: -1) }
        case .character(let character):
            let handled = typeAhead(character)
            if let index = highlightedIndex { scrollToShow(index) }
            return handled
        default:
            return false
        }
        if let index = highlightedIndex { scrollToShow(index) }
        return true
    }

    /// The indices of the items the highlight can rest on.
    private var selectableIndices: [Int] { menu.items.indices.filter { menu.items[$0].isSelectable } }

    @MainActor
    private func moveHighlight(by step: Int) {
        let selectable = selectableIndices
        guard !selectable.isEmpty else { return }
        guard let current = highlightedIndex, let position = selectable.firstIndex(of: current) else {
            highlight(step > 0 ? selectable.first : selectable.last)
            return
        }
        highlight(selectable[(position + step + selectable.count) % selectable.count])
    }

    @MainActor
    private var now: Double { nodeHost?.time ?? 0 }

    @MainActor
    private var typeAheadIsLive: Bool { now - lastTypedTime <= Self.typeAheadTimeout }

    /// Adds `character` to the search (or starts one after a pause) and highlights the next item whose
    /// title starts with what was typed, from the highlighted one on (a repeated first letter cycles
    /// through the items starting with it).
    @MainActor
    private func typeAhead(_ character: Character) -> Bool {
        guard !character.isNewline, !(character.isWhitespace && typed.isEmpty) else { return false }
        if !typeAheadIsLive { typed = "" }
        lastTypedTime = now
        let letter = String(character).lowercased()
        let cycling = typed == letter
        if !cycling { typed += letter }
        let selectable = selectableIndices
        guard !selectable.isEmpty else { return true }
        let start = highlightedIndex.flatMap { selectable.firstIndex(of: $0) } ?? (selectable.count - 1)
        // A new search (or one letter repeated) looks from the next item; a longer prefix may still fit
        // the current one.
        let first = typed.count > 1 && !cycling ? 0 : 1
        for offset in first...selectable.count {
            let index = selectable[(start + offset) % selectable.count]
            if menu.items[index].title.lowercased().hasPrefix(typed) {
                highlight(index)
                return true
            }
        }
        return true
    }

    // MARK: Rows (called by the rows and the presentation)

    /// Chooses the item at `index`: opens its submenu (highlighting its first item when
    /// `selectingFirstOfSubmenu`), or closes the chain and runs its action. False for an item that
    /// cannot be chosen.
    @MainActor
    @discardableResult
    func activateRow(_ index: Int, selectingFirstOfSubmenu: Bool) -> Bool {
        guard rows.indices.contains(index), menu.items[index].isSelectable else { return false }
        highlight(index)
        if menu.items[index].submenu != nil {
            presentation?.openSubmenu(of: self, at: index, highlightFirst: selectingFirstOfSubmenu)
        } else {
            presentation?.choose(menu.items[index])
        }
        return true
    }

    @MainActor
    func rowPointerEntered(_ index: Int) {
        guard menu.items[index].isSelectable else { return }
        highlight(index)
        presentation?.pointerRests(on: self, at: index)
    }

    @MainActor
    func rowPointerExited(_ index: Int) {
        guard highlightedIndex == index, !rows[index].isExpanded else { return }
        // With a submenu still open, the highlight goes back to the item that opened it.
        highlight(rows.first { $0.isExpanded }?.index)
        presentation?.pointerLeft(self)
    }

    @MainActor
    func rowPressed(_ index: Int) {
        guard menu.items[index].isSelectable, menu.items[index].submenu != nil else { return }
        activateRow(index, selectingFirstOfSubmenu: false)
    }

    @MainActor
    func rowReleased(_ index: Int) {
        guard menu.items[index].isSelectable, menu.items[index].submenu == nil else { return }
        activateRow(index, selectingFirstOfSubmenu: false)
    }
}

/// The highlighted item shows the focus: no ring around the whole menu.
extension MenuNode: ShowsOwnFocus {}

/// The wheel scrolls a menu taller than its bounds, `MenuScrollArrowNode.wheelStep` points a notch;
/// a menu that shows all its rows passes the wheel on.
extension MenuNode: WheelScrollable {
    public func scrollWheel(dx: Double, dy: Double) -> Bool {
        guard dy.isFinite, dy != 0, maximumScrollOffset > 0 else { return false }
        scroll(to: scrollOffset - dy * MenuScrollArrowNode.wheelStep)
        return true
    }
}

/// An arrow over a scrolling menu's first or last rows, on the menu's background, shown while there
/// is more that way; a press scrolls by three rows. Hidden from screen readers (the rows are all
/// there for them).
final class MenuScrollArrowNode: Node, NodeDrawing, @unchecked Sendable {
    static let height = 18.0
    /// Points a notch of the wheel scrolls a menu.
    static let wheelStep = 3 * MenuItemNode.rowHeight
    let pointsUp: Bool

    init(pointsUp: Bool) {
        self.pointsUp = pointsUp
        super.init()
        debugName = pointsUp ? "menu scroll up" : "menu scroll down"
        isUserInteractionEnabled = true
        accessibilityElementsHidden = true
    }

    struct DrawParameters: Sendable {
        var background: Color
        var glyph: Color
        var pointsUp: Bool
    }

    @MainActor
    func drawParameters() -> DrawParameters {
        DrawParameters(background: themeColor(.background), glyph: themeColor(.secondaryLabel), pointsUp: pointsUp)
    }

    /// The menu's background (rounded as the menu's corners on its outer side) with a chevron 10
    /// points wide in its middle. - Thread: display worker
    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let radius = MenuNode.cornerRadius - 1
        context.fillRoundedRect(bounds, radii: parameters.pointsUp ? CornerRadii(radius, corners: [.topLeft, .topRight])
                                                                   : CornerRadii(radius, corners: [.bottomLeft, .bottomRight]),
                                color: parameters.background)
        let box = Rect(x: (bounds.midX - 5).rounded(), y: (bounds.midY - 3).rounded(), width: 10, height: 6)
        let points = parameters.pointsUp ? [Point(x: 1, y: 5), Point(x: 5, y: 1), Point(x: 9, y: 5)]
                                         : [Point(x: 1, y: 1), Point(x: 5, y: 5), Point(x: 9, y: 1)]
        MenuGlyphs.stroke(points, width: 1.6, in: box, color: parameters.glyph, context: &context, scale: info.scale)
    }

    override func touchesBegan(_ touch: Touch) {
        guard let menu = supernode as? MenuNode else { return }
        let step = 3 * MenuItemNode.rowHeight
        menu.scroll(to: menu.scrollOffset + (pointsUp ? -step : step))
    }
}
