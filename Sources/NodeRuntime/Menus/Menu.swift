public import Compositor

/// A menu: a title (what a menu bar or a submenu's item shows) and its items, top to bottom. A value:
/// build it where it is shown (a context menu's provider builds it when it opens), or keep it and
/// set it again when its items change (a check mark, a disabled item).
///
/// ```swift
/// let file = Menu("File") {
///     MenuItem("New", shortcut: KeyboardShortcut(.character("n"), .control)) { document.new() }
///     MenuItem("Open…", shortcut: KeyboardShortcut("Ctrl+O")) { document.open() }
///     MenuItem.separator
///     MenuItem(submenu: Menu("Recent") {
///         for file in recent { MenuItem(file.name) { document.open(file) } }
///     })
///     MenuItem("Word Wrap", checked: settings.wraps) { settings.wraps.toggle() }
///     MenuItem("Quit", shortcut: KeyboardShortcut("Ctrl+Q")) { app.quit() }.disabled(isBusy)
/// }
/// host.showMenu(file, at: pointer)
/// ```
/// - Thread: any (a value); actions run on the main thread.
public struct Menu: Sendable {
    /// What a menu bar shows for it, and the item that opens it as a submenu. - Thread: any
    public var title: String
    /// Its rows, top to bottom. - Thread: any
    public var items: [MenuItem]

    /// A menu of `items`. - Thread: any
    public init(_ title: String = "", items: [MenuItem]) {
        self.title = title
        self.items = items
    }

    /// A menu whose items a block lists (`if`, `for … in` and arrays work). - Thread: any
    public init(_ title: String = "", @MenuBuilder items: () -> [MenuItem]) {
        self.init(title, items: items())
    }

    /// The first enabled item, here or in an enabled submenu (depth first), whose shortcut is
    /// `key` with `modifiers`. - Thread: any
    public func item(forShortcut key: Key, modifiers: KeyModifiers) -> MenuItem? {
        for item in items where item.isEnabled {
            if let submenu = item.submenu {
                if let found = submenu.item(forShortcut: key, modifiers: modifiers) { return found }
            } else if item.shortcut?.matches(key, modifiers: modifiers) == true, item.action != nil {
                return item
            }
        }
        return nil
    }
}

/// One row of a menu: an action with a title, an optional icon and shortcut, a check mark or a radio
/// dot; a line between groups (`separator`); or the title of a submenu. A disabled item is shown
/// dimmed and can be neither highlighted by the keyboard nor chosen.
/// - Thread: any (a value); the action runs on the main thread.
public struct MenuItem: Sendable {
    /// The mark before the title. - Thread: any (a value)
    public enum Mark: Sendable, Hashable {
        /// No mark (a plain action).
        case none
        /// A check box's state: a check mark when on.
        case check(Bool)
        /// One of a group of which one is chosen (the items between two separators, by custom): a dot
        /// when this one is. Choosing one runs its action; the app marks it chosen next time.
        case radio(Bool)

        /// True for `.check(true)` and `.radio(true)`. - Thread: any
        public var isOn: Bool {
            switch self {
            case .none: return false
            case .check(let on), .radio(let on): return on
            }
        }
    }

    /// The text shown, and what a screen reader reads. - Thread: any
    public var title: String
    /// Drawn 16 points square before the title. - Thread: any
    public var icon: ImageSource?
    /// Shown right-aligned, and run from the keyboard while the menu is closed (when the menu is in a
    /// menu bar or `NodeHost.shortcutMenus`). - Thread: any
    public var shortcut: KeyboardShortcut?
    /// A check mark or a radio dot, or none. - Thread: any
    public var mark: Mark
    /// False: drawn dimmed, never highlighted or chosen, its shortcut not run. - Thread: any
    public var isEnabled: Bool
    /// A line between groups of items: no title, never highlighted. - Thread: any
    public private(set) var isSeparator: Bool
    /// The menu opened beside this item (after a short hover, at once on a click or Right).
    /// - Thread: any
    public var submenu: Menu?
    /// Run when the item is chosen (or its shortcut pressed), after the menus have closed.
    /// - Thread: any to set; it runs on the main thread.
    public var action: (@MainActor () -> Void)?

    /// An item that runs `action` when chosen. - Thread: any
    public init(_ title: String, icon: ImageSource? = nil, shortcut: KeyboardShortcut? = nil, mark: Mark = .none,
                isEnabled: Bool = true, action: (@MainActor () -> Void)? = nil) {
        self.title = title
        self.icon = icon
        self.shortcut = shortcut
        self.mark = mark
        self.isEnabled = isEnabled
        self.isSeparator = false
        self.action = action
    }

    /// An item with a check mark when `checked`. - Thread: any
    public init(_ title: String, checked: Bool, shortcut: KeyboardShortcut? = nil, isEnabled: Bool = true,
                action: (@MainActor () -> Void)? = nil) {
        self.init(title, shortcut: shortcut, mark: .check(checked), isEnabled: isEnabled, action: action)
    }

    /// One of a radio group, with a dot when `selected`. - Thread: any
    public init(_ title: String, selected: Bool, shortcut: KeyboardShortcut? = nil, isEnabled: Bool = true,
                action: (@MainActor () -> Void)? = nil) {
        self.init(title, shortcut: shortcut, mark: .radio(selected), isEnabled: isEnabled, action: action)
    }

    /// The item that opens `submenu` beside it, titled with the submenu's title. - Thread: any
    public init(submenu: Menu, icon: ImageSource? = nil, isEnabled: Bool = true) {
        self.init(submenu.title, icon: icon, isEnabled: isEnabled)
        self.submenu = submenu
    }

    /// A line between groups of items. - Thread: any
    public static var separator: MenuItem {
        var item = MenuItem("", isEnabled: false)
        item.isSeparator = true
        return item
    }

    /// This item, disabled when `disabled` is true. - Thread: any
    public func disabled(_ disabled: Bool = true) -> MenuItem {
        var copy = self
        copy.isEnabled = !disabled
        return copy
    }

    /// Whether the keyboard and the pointer can highlight it: enabled and not a separator.
    /// - Thread: any
    public var isSelectable: Bool { isEnabled && !isSeparator }
}

/// Builds a menu's items from a block: items, arrays of items, `if`, `if let`, `switch`, `for … in`.
/// - Thread: any
@resultBuilder
public enum MenuBuilder {
    /// An item. - Thread: any
    public static func buildExpression(_ item: MenuItem) -> [MenuItem] { [item] }
    /// Items made elsewhere (a list of recent files). - Thread: any
    public static func buildExpression(_ items: [MenuItem]) -> [MenuItem] { items }
    /// A menu written inside another: the item that opens it as a submenu. - Thread: any
    public static func buildExpression(_ menu: Menu) -> [MenuItem] { [MenuItem(submenu: menu)] }
    /// The block's items in order. - Thread: any
    public static func buildBlock(_ parts: [MenuItem]...) -> [MenuItem] { parts.flatMap { $0 } }
    /// `if` without `else`: its items, or none. - Thread: any
    public static func buildOptional(_ part: [MenuItem]?) -> [MenuItem] { part ?? [] }
    /// `if`/`else` and `switch`: the branch taken. - Thread: any
    public static func buildEither(first part: [MenuItem]) -> [MenuItem] { part }
    /// `if`/`else` and `switch`: the branch taken. - Thread: any
    public static func buildEither(second part: [MenuItem]) -> [MenuItem] { part }
    /// `for … in`: every pass's items in order. - Thread: any
    public static func buildArray(_ parts: [[MenuItem]]) -> [MenuItem] { parts.flatMap { $0 } }
    /// `if #available`: its items. - Thread: any
    public static func buildLimitedAvailability(_ part: [MenuItem]) -> [MenuItem] { part }
}
