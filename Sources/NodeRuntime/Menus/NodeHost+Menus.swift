public import Compositor

/// Where a node's context menu comes from: one menu, or a provider that builds it for the point.
enum ContextMenuSource {
    case menu(Menu)
    case provider(@MainActor (Point) -> Menu?)
}

extension Node {
    /// The menu opened over this node (or a node inside it without one of its own) by a
    /// secondary-button press, at the pointer, or by the Menu key or Shift+F10 while the focus is in
    /// it, against its frame. Setting a menu makes the node take presses
    /// (`isUserInteractionEnabled`). Nil (the default): none; the search goes on outwards. For a menu
    /// that depends on where the press was, use `setContextMenu(_:)`. - Thread: main
    @MainActor
    public var contextMenu: Menu? {
        get {
            if case .menu(let menu) = contextMenuSource { return menu }
            return nil
        }
        set {
            contextMenuSource = newValue.map { .menu($0) }
            if newValue != nil { isUserInteractionEnabled = true }
        }
    }

    /// Builds the context menu when it opens, from the point it opens at in this node's coordinates
    /// (the centre of its bounds when a key opens it); a provider that returns nil (or a menu without
    /// items) lets the nodes around this one offer theirs. Makes the node take presses. - Thread: main
    @MainActor
    public func setContextMenu(_ provider: @escaping @MainActor (Point) -> Menu?) {
        contextMenuSource = .provider(provider)
        isUserInteractionEnabled = true
    }

    /// The context menu for `point` (this node's coordinates), if the node offers one there.
    @MainActor
    func contextMenu(at point: Point) -> Menu? {
        // A selectable text with a selection offers Copy and Select All first.
        if let text = self as? TextNode, text.isSelectable, let menu = text.selectionMenu() { return menu }
        switch contextMenuSource {
        case .menu(let menu): return menu
        case .provider(let provider): return provider(point)
        case nil: return nil
        }
    }
}

/// The host's side of menus: the menu bars shown in it (whose shortcuts it runs), the menus an app
/// adds for their shortcuts alone, and the submenu delay.
/// - Thread: main, every member.
@MainActor
final class MenuTracker {
    private struct WeakBar { weak var bar: MenuBarNode? }
    private var bars: [WeakBar] = []
    var shortcutMenus: [Menu] = []
    var submenuDelay = 0.25

    func register(_ bar: MenuBarNode) {
        bars.removeAll { $0.bar == nil || $0.bar === bar }
        bars.append(WeakBar(bar: bar))
    }

    func unregister(_ bar: MenuBarNode) {
        bars.removeAll { $0.bar == nil || $0.bar === bar }
    }

    /// The bars shown now, in the order they appeared.
    var liveBars: [MenuBarNode] { bars.compactMap(\.bar) }
}

extension NodeHost {
    /// Shows `menu` as a popup placed by `positioner` (window points) and gives it the keyboard focus;
    /// the focus goes back where it was when the menu closes. Choosing an item closes the menu (and
    /// its submenus), then runs the item's action. With `highlightFirst`, the first item is
    /// highlighted (a menu opened from the keyboard).
    /// - Returns: the overlay of the menu: `dismiss()` closes it with its submenus, `onDismiss` hears
    ///   how it ended.
    /// - Thread: main
    @discardableResult
    public func showMenu(_ menu: Menu, positioner: PopupPositioner, highlightFirst: Bool = false) -> Overlay {
        UIThread.precondition("NodeHost.showMenu")
        return MenuPresentation().present(menu, on: self, positioner: positioner, highlightFirst: highlightFirst)
    }

    /// Shows `menu` at `point` (window points), below and to the right of it, flipped up or left
    /// where the window ends. - Thread: main
    @discardableResult
    public func showMenu(_ menu: Menu, at point: Point, highlightFirst: Bool = false) -> Overlay {
        showMenu(menu, positioner: PopupPositioner(anchor: Rect(origin: point, size: .zero), side: .below),
                 highlightFirst: highlightFirst)
    }

    /// The menus whose enabled items' shortcuts the host runs while no menu or dialog holds the focus,
    /// besides those of the menu bars it shows (a window without a bar, shortcuts of a toolbar).
    /// - Thread: main
    public var shortcutMenus: [Menu] {
        get { menuTracker.shortcutMenus }
        set { menuTracker.shortcutMenus = newValue }
    }

    /// How long the pointer rests on an item before its submenu opens, in seconds. Default 0.25.
    /// - Thread: main
    public var submenuDelay: Double {
        get { menuTracker.submenuDelay }
        set { menuTracker.submenuDelay = newValue.isFinite ? max(0, newValue) : 0.25 }
    }

    /// The menus open now, the first opened first (submenus after their menu). - Thread: main
    public var openMenus: [MenuNode] { overlayStack.compactMap { $0.content as? MenuNode } }

    /// A secondary-button press at `point`: opens the context menu of the nearest node, from the one
    /// under the pointer outwards, that offers one there. True when one opened.
    func showContextMenu(at point: Point) -> Bool {
        var node = hitNode(at: point)
        while let current = node {
            if let menu = current.contextMenu(at: current.convertFromRoot(point)), !menu.items.isEmpty {
                showMenu(menu, at: point)
                return true
            }
            node = current.eventSupernode
        }
        return false
    }

    /// The Menu key, or Shift+F10: opens the context menu of the focused node (or the nearest node
    /// around it with one) against its frame, its first item highlighted. True when one opened.
    func showContextMenuForFocus(_ key: Key, modifiers: KeyModifiers) -> Bool {
        let isMenuKey = key == .other(KeyboardShortcut.menuKeyCode) && modifiers.isDisjoint(with: [.control, .alt, .command])
        let isShiftF10 = key == .function(10) && modifiers == .shift
        guard isMenuKey || isShiftF10 else { return false }
        var node = focusedNode
        while let current = node {
            let bounds = current.bounds
            if let menu = current.contextMenu(at: Point(x: bounds.midX, y: bounds.midY)), !menu.items.isEmpty {
                let frame = Self.windowFrame(of: current) ?? Rect(origin: .zero, size: viewportSize)
                showMenu(menu, positioner: PopupPositioner(anchor: frame, side: .below), highlightFirst: true)
                return true
            }
            node = current.eventSupernode
        }
        return false
    }

    /// A key nobody took while no menu or dialog holds the focus: F10 opens the first menu of the
    /// first bar shown; otherwise the first enabled item of a bar's menus or `shortcutMenus` with
    /// that shortcut runs, its menu closed; otherwise Alt and a letter open the first bar menu whose
    /// title starts with it. True when one did.
    func performMenuKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        let bars = menuTracker.liveBars
        if key == .function(10), modifiers.isEmpty, let bar = bars.first(where: { !$0.menus.isEmpty }) {
            bar.openMenu(at: 0, highlightFirst: true)
            return true
        }
        let menus = bars.flatMap(\.menus) + menuTracker.shortcutMenus
        for menu in menus {
            if let item = menu.item(forShortcut: key, modifiers: modifiers), let action = item.action {
                action()
                return true
            }
        }
        // Alt and a letter no shortcut took: the bar's menu whose title starts with it.
        if modifiers == .alt, case .character(let character) = key {
            let letter = character.lowercased()
            for bar in bars {
                if let index = bar.menus.firstIndex(where: { $0.title.lowercased().hasPrefix(letter) }) {
                    bar.openMenu(at: index, highlightFirst: true)
                    return true
                }
            }
        }
        return false
    }

    /// Where `node` is in the window, in points: its layer's place when it is on screen, else its
    /// frames added up. Nil for a node in no tree of this host's.
    static func windowFrame(of node: Node) -> Rect? {
        if let layer = node.layerIfLoaded, layer.superlayer != nil { return layer.frameInWindow }
        var frame = node.frame
        var parent = node.supernode
        while let current = parent {
            frame = frame.offsetBy(dx: current.frame.minX, dy: current.frame.minY)
            parent = current.supernode
        }
        return frame
    }
}
