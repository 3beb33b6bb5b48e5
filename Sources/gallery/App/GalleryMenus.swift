import Foundation
import Tessera

/// The gallery's menu bar: File, Edit, View and Help, with the shortcuts the gallery had as keys.
/// Each item says on standard output what it did (`gallery: menu …`), for tests driving the window.
extension GalleryApp {
    /// The bar for the window's top. Menus are values: the bar is built again when what they show
    /// (a check mark, the chosen appearance) changes.
    func makeMenuBar() -> MenuBarNode {
        MenuBarNode(menus: makeMenus())
    }

    /// Rebuilds the bar's menus (after a check mark or a choice changed).
    func refreshMenus() {
        host.menuBar?.menus = makeMenus()
    }

    private func makeMenus() -> [Menu] {
        let file = Menu("File") {
            // The chat the focus is on (a row of the chat list), else the first.
            MenuItem("Open Chat in New Window", shortcut: KeyboardShortcut("Ctrl+Enter")) { [weak self] in
                guard let self else { return }
                let chat = self.chats.chat(holding: self.host.focusedNode) ?? self.data.chat(forRow: 0)
                Self.report("gallery: menu File › Open Chat in New Window")
                self.openChatWindow(chat)
            }
            MenuItem.separator
            MenuItem("Quit", shortcut: KeyboardShortcut("Ctrl+Q")) { [weak self] in
                Self.report("gallery: menu File › Quit")
                self?.application.quit()
            }
        }
        let edit = Menu("Edit") {
            MenuItem("Find Chats", shortcut: KeyboardShortcut("Ctrl+F")) { [weak self] in
                guard let self else { return }
                Self.report("gallery: menu Edit › Find Chats")
                self.tabs.select(0)
                self.host.focus(self.chats.searchField)
            }
            MenuItem("Clear Image Cache") {
                ImageCache.shared.removeAll()
                Self.report("gallery: menu Edit › Clear Image Cache")
            }
        }
        let appearance = Runtime.shared.appearance
        let view = Menu("View") {
            MenuItem("Performance Overlay", shortcut: KeyboardShortcut(.function(2), []), mark: .check(overlayShown)) { [weak self] in
                self?.toggleOverlay()
            }
            MenuItem(submenu: Menu("Appearance") {
                MenuItem("Light", selected: !appearance.isDark) { [weak self] in self?.choose(.light) }
                MenuItem("Dark", selected: appearance.isDark) { [weak self] in self?.choose(.dark) }
            })
            MenuItem.separator
            for (index, title) in ["Chats", "Thread", "Photos", "Text", "Settings"].enumerated() {
                MenuItem(title, shortcut: KeyboardShortcut(.character(Character("\(index + 1)")), []),
                         mark: .radio(tabs.selectedIndex == index)) { [weak self] in
                    Self.report("gallery: menu View › \(title)")
                    self?.tabs.select(index)
                }
            }
        }
        let help = Menu("Help") {
            MenuItem("Keyboard Shortcuts") { [weak self] in
                Self.report("gallery: menu Help › Keyboard Shortcuts")
                self?.host.presentAlert(Alert(title: "Keyboard Shortcuts", message: Self.shortcutsText, buttons: [.default("Close")]))
            }
            MenuItem("About the Gallery") { [weak self] in
                Self.report("gallery: menu Help › About the Gallery")
                self?.openAboutWindow()
            }
        }
        return [file, edit, view, help]
    }

    private func choose(_ scheme: Appearance.ColorScheme) {
        var appearance = Runtime.shared.appearance
        appearance.colorScheme = scheme
        Runtime.shared.setAppearance(appearance)
        Self.report("gallery: menu View › Appearance › \(scheme == .dark ? "Dark" : "Light")")
        refreshMenus()
    }

    static let shortcutsText = """
        1–5: show a screen. Ctrl+F: find chats. Ctrl+Enter: open the chat in a new window (Ctrl+W closes it). \
        F2: the performance overlay. F10: the menus. Shift+F10 or the Menu key: a message's menu. Ctrl+Q: quit.
        """
}
