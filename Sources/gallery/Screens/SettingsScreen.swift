import Tessera
import Foundation

/// One row of the settings screen: a label and its control at the right edge.
final class SettingsRowNode: Node, @unchecked Sendable {
    let label: TextNode
    let control: Node
    let separator = Node()

    init(_ title: String, control: Node) {
        label = TextNode(title, attributes: Theme.text(16))
        self.control = control
        super.init()
        backgroundColor = Theme.background
        separator.backgroundColor = Theme.separator
        addSubnode(label)
        addSubnode(control)
        addSubnode(separator)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            HStack(spacing: 12, alignItems: .center) {
                label.flexGrow(1).flexShrink(1)
                control
            }
            .inset(EdgeInsets(top: 10, left: 16, bottom: 10, right: 16))
            separator.height(1)
        }
    }
}

/// The settings screen: switches for notifications, previews and sounds, and buttons to clear the
/// image cache and to sign out (disabled: there is no account). Each control says on standard output
/// what it did, so a test driving a window can follow it.
final class SettingsScreenNode: Node, @unchecked Sendable {
    let notifications = SwitchNode(isOn: true)
    let previews = SwitchNode(isOn: true)
    let sounds = SwitchNode(isOn: false)
    let clearCache = ButtonNode(title: "Clear image cache", attributes: Theme.text(15, color: .white))
    let signOut = ButtonNode(title: "Sign out", attributes: Theme.text(15, color: .white))
    let heading = TextNode("Settings", attributes: Theme.text(22, bold: true))
    private let rows: [SettingsRowNode]

    override init() {
        rows = [SettingsRowNode("Notifications", control: notifications),
                SettingsRowNode("Message previews", control: previews),
                SettingsRowNode("Sounds", control: sounds)]
        super.init()
        backgroundColor = Color(rgb: 0xF1F3F5)
        for button in [clearCache, signOut] {
            button.setBackgroundColor(Theme.accent)
            button.setBackgroundColor(Color(rgb: 0x1F6FC5), for: .highlighted)
            button.setBackgroundColor(Color(rgb: 0x5AA6F0), for: .hovered)
            button.setBackgroundColor(Color(rgb: 0xB8C2CC), for: .disabled)
            button.cornerRadius = 8
        }
        signOut.isEnabled = false
        addSubnode(heading)
        for row in rows { addSubnode(row) }
        addSubnode(clearCache)
        addSubnode(signOut)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let rows = self.rows
        return VStack(alignItems: .stretch) {
            heading.inset(EdgeInsets(top: 20, left: 16, bottom: 12, right: 16))
            rows
            HStack(spacing: 12) { clearCache; signOut }.inset(EdgeInsets(top: 20, left: 16, bottom: 16, right: 16))
        }
    }
}

/// The settings tab.
@MainActor
final class SettingsController: NodeController {
    let screen = SettingsScreenNode()

    init() {
        super.init(node: screen)
        screen.debugName = "settings"
        let switches: [(String, SwitchNode)] = [("notifications", screen.notifications), ("previews", screen.previews),
                                                ("sounds", screen.sounds)]
        for (name, toggle) in switches {
            toggle.addTarget(for: .valueChanged) { control, _ in
                GalleryApp.report("gallery: \(name) \((control as? SwitchNode)?.isOn == true ? "on" : "off")")
            }
        }
        screen.clearCache.addTarget(for: .primaryActionTriggered) { _, _ in
            ImageCache.shared.removeAll()
            GalleryApp.report("gallery: image cache cleared")
        }
    }
}
