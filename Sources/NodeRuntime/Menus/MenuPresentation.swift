import Compositor

/// One chain of open menus: the menu first opened (level 0) and the submenus opened from it, each a
/// popup overlay above the one before. It opens and closes levels, runs the chosen item's action once
/// the chain has closed, and opens a submenu once the pointer has rested on its item for
/// `NodeHost.submenuDelay` (a frame participant, so the host wakes for the delay's end).
///
/// The root overlay's dismissal observer holds the presentation: it lives exactly while its menu is
/// open, whoever ends it (the app, Escape, a press outside, the window's focus loss).
/// - Thread: main, every member.
@MainActor
final class MenuPresentation: FrameParticipant {
    struct Level {
        let node: MenuNode
        let overlay: Overlay
    }

    /// The host showing the chain (weak: an overlay the app keeps must not keep its host).
    private weak var host: NodeHost?
    /// The open levels, the first opened first.
    private(set) var levels: [Level] = []
    /// The bar whose menu this is, and its index there.
    weak var bar: MenuBarNode?
    var barIndex = 0
    /// A submenu to open (or a deeper level to close) once the pointer has rested until `due`.
    private var pending: (level: Int, row: Int, due: Double)?

    /// Shows `menu` on `host` at `positioner` as level 0 and gives it the focus; the first item is
    /// highlighted when `highlightFirst` (a menu opened from the keyboard).
    func present(_ menu: Menu, on host: NodeHost, positioner: PopupPositioner, highlightFirst: Bool) -> Overlay {
        self.host = host
        let node = MenuNode(menu: menu)
        node.presentation = self
        node.level = 0
        let overlay = host.presentOverlay(node, kind: .popup, positioner: positioner, focus: node)
        overlay.passesPointer = { [weak self] point in self?.sharesPointer(at: point, below: 0) ?? false }
        // Strong: the open menu keeps its presentation.
        overlay.dismissObservers.append { _ in self.levelEnded(0) }
        levels = [Level(node: node, overlay: overlay)]
        host.addFrameParticipant(self)
        if highlightFirst { node.highlight(menu.items.firstIndex { $0.isSelectable }) }
        return overlay
    }

    /// Whether a press or the pointer at `point` (window points), outside level `level`'s menu, belongs
    /// to a level below it or to the bar: it passes through to them instead of ending the menu.
    private func sharesPointer(at point: Point, below level: Int) -> Bool {
        for lower in levels.prefix(level) where lower.node.frame.contains(point) { return true }
        if let bar, let frame = NodeHost.windowFrame(of: bar), frame.contains(point) { return true }
        return false
    }

    /// Opens the submenu of `node`'s item `row` beside it (closing any deeper level first), gives it the
    /// focus, and highlights its first item when `highlightFirst`. An open submenu of the same item
    /// stays and takes the focus.
    func openSubmenu(of node: MenuNode, at row: Int, highlightFirst: Bool) {
        guard let host, let levelIndex = levels.firstIndex(where: { $0.node === node }),
              let submenu = node.menu.items[row].submenu else { return }
        pending = nil
        node.highlight(row)
        let rowNode = node.rows[row]
        if levels.count > levelIndex + 1, rowNode.isExpanded {
            let open = levels[levelIndex + 1].node
            host.focus(open)
            if highlightFirst, open.highlightedIndex == nil { open.highlight(open.menu.items.firstIndex { $0.isSelectable }) }
            return
        }
        closeLevels(from: levelIndex + 1)
        // Level with the item: the submenu's first row lines up with it, beside the menu's edge.
        let menuFrame = node.frame
        let anchor = Rect(x: menuFrame.minX, y: menuFrame.minY + rowNode.frame.minY - MenuNode.verticalPadding,
                          width: menuFrame.width, height: rowNode.frame.height + 2 * MenuNode.verticalPadding)
        let child = MenuNode(menu: submenu)
        child.presentation = self
        child.level = levelIndex + 1
        let overlay = host.presentOverlay(child, kind: .popup,
                                          positioner: PopupPositioner(anchor: anchor, side: .trailing, alignment: .start),
                                          focus: child)
        let level = levelIndex + 1
        overlay.passesPointer = { [weak self] point in self?.sharesPointer(at: point, below: level) ?? false }
        overlay.dismissObservers.append { [weak self] _ in self?.levelEnded(level) }
        levels.append(Level(node: child, overlay: overlay))
        rowNode.isExpanded = true
        if highlightFirst { child.highlight(submenu.items.firstIndex { $0.isSelectable }) }
    }

    /// Closes level `level` and every level above it; the focus goes back to the level below.
    func closeLevels(from level: Int) {
        guard level >= 0, level < levels.count else { return }
        levels[level].overlay.dismiss()
    }

    /// Closes the whole chain, then runs `item`'s action (so the action finds the focus back where it
    /// was, and may open a dialog or another menu).
    func choose(_ item: MenuItem) {
        closeLevels(from: 0)
        item.action?()
    }

    /// Level 0 of a bar's menu asks for the menu `step` titles along (Left and Right).
    func moveAcrossBar(from node: MenuNode, by step: Int) {
        guard node.level == 0, let bar, !bar.menus.isEmpty else { return }
        let count = bar.menus.count
        bar.openMenu(at: ((barIndex + step) % count + count) % count, highlightFirst: true)
    }

    /// A level's overlay ended (those above it ended first): the chain forgets it, and its item in the
    /// level below shows closed. Level 0 ending ends the presentation.
    private func levelEnded(_ level: Int) {
        guard level < levels.count else { return }
        levels.removeSubrange(level...)
        if let pendingLevel = pending?.level, pendingLevel >= level { pending = nil }
        if let below = levels.last {
            for row in below.node.rows where row.isExpanded { row.isExpanded = false }
        }
        if level == 0 {
            host?.removeFrameParticipant(self)
            bar?.menuDidClose(self)
        }
    }

    // MARK: The pointer resting on items

    /// The pointer entered `node`'s item `row`: after the delay its submenu opens, or the deeper level
    /// opened from another item closes. Entering the open submenu's own item cancels that.
    func pointerRests(on node: MenuNode, at row: Int) {
        pending = nil
        guard let host, let level = levels.firstIndex(where: { $0.node === node }) else { return }
        let rowNode = node.rows[row]
        let hasSubmenu = node.menu.items[row].submenu != nil
        if rowNode.isExpanded { return }
        guard hasSubmenu || levels.count > level + 1 else { return }
        pending = (level, row, host.time + host.submenuDelay)
        if host.submenuDelay <= 0 { frameWillStartDisplays(at: host.time) }
    }

    /// Forgets a submenu the pointer was about to open (the keyboard moved on).
    func cancelPendingSubmenu() {
        pending = nil
    }

    /// The pointer left `node`'s highlighted item for no other: a submenu it was about to open does not.
    func pointerLeft(_ node: MenuNode) {
        guard let level = levels.firstIndex(where: { $0.node === node }), pending?.level == level else { return }
        pending = nil
    }

    func frameWillStartDisplays(at time: Double) {
        guard let pending, time >= pending.due else { return }
        self.pending = nil
        guard pending.level < levels.count else { return }
        let node = levels[pending.level].node
        if node.menu.items[pending.row].submenu != nil {
            openSubmenu(of: node, at: pending.row, highlightFirst: false)
        } else {
            closeLevels(from: pending.level + 1)
            host?.focus(node)
        }
    }

    func frameWillComposite(_ record: inout FrameRecord) {}

    func nextFrameTime(after time: Double) -> Double? {
        pending.map { max($0.due, time) }
    }
}
