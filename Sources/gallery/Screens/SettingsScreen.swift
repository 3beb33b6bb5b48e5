import Tessera
import Foundation

/// One row of the settings screen: a label and its control at the right edge.
final class SettingsRowNode: Node, @unchecked Sendable {
    let label: TextNode
    let control: Node
    let separator = Node()

    init(_ title: String, control: Node) {
        label = TextNode(title, attributes: Palette.text(16))
        self.control = control
        super.init()
        themedBackgroundColor = Palette.background
        separator.themedBackgroundColor = Palette.separator
        addSubnode(label)
        addSubnode(control)
        addSubnode(separator)
        // A switch is called by its row's title, which is then not read a second time.
        if control is SwitchNode {
            control.accessibilityLabel = title
            label.accessibilityElementsHidden = true
        }
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

/// The settings screen's content: switches for notifications, previews and sounds, buttons to clear
/// the image cache and to sign out (which asks first), then the chat settings. Each of
/// the first controls says on standard output what it did, so a test driving a window can follow it.
final class SettingsContentNode: Node, @unchecked Sendable {
    let notifications = SwitchNode(isOn: true)
    let previews = SwitchNode(isOn: true)
    let sounds = SwitchNode(isOn: false)
    /// The text size, 80% to 160% in steps of 10%: the appearance's text scale.
    let textSize = SliderNode(value: 1, minimumValue: 0.8, maximumValue: 1.6, stepValue: 0.1)
    let clearCache = ButtonNode(title: "Clear image cache", attributes: Palette.text(15, color: Palette.onAccent))
    let signOut = ButtonNode(title: "Sign out", attributes: Palette.text(15, color: Palette.onAccent))
    let heading = TextNode("Settings", attributes: Palette.text(22, bold: true))
    let chatsHeading = TextNode("Chats", attributes: Palette.text(18, bold: true))
    let stickersHeading = TextNode("Stickers", attributes: Palette.text(18, bold: true))
    /// An animated sticker (a GIF): it plays while it is on screen and "Auto-play stickers" is on.
    let sticker = ImageNode()
    let stickerCaption = TextNode("Plays while on screen; “Auto-play stickers” above pauses it.",
                                  attributes: Palette.text(14, color: Palette.secondary))
    private let rows: [SettingsRowNode]
    /// The chat settings below the buttons: switches that only switch.
    let chatRows: [SettingsRowNode]

    /// The switch that plays or pauses the sticker.
    var autoPlayStickers: SwitchNode { chatRows[5].control as! SwitchNode }

    init(stickerPath: String?) {
        rows = [SettingsRowNode("Notifications", control: notifications),
                SettingsRowNode("Message previews", control: previews),
                SettingsRowNode("Sounds", control: sounds),
                SettingsRowNode("Text size", control: textSize)]
        textSize.preferredSize = Size(width: 180, height: 28)
        textSize.accessibilityLabel = "Text size"
        chatRows = [("Send with Enter", true), ("Read receipts", true), ("Link previews", true),
                    ("Large emoji", true), ("Auto-download photos", true), ("Auto-play stickers", true),
                    ("Compact chat list", false), ("Spell check", true), ("Archive muted chats", false),
                    ("Show seconds in times", false)]
            .map { SettingsRowNode($0.0, control: SwitchNode(isOn: $0.1)) }
        super.init()
        themedBackgroundColor = Palette.groupedBackground
        colorButtons()
        dependOnAppearance([.colors, .textScale])
        for button in [clearCache, signOut] { button.cornerRadius = 8 }
        addSubnode(heading)
        for row in rows { addSubnode(row) }
        addSubnode(clearCache)
        addSubnode(signOut)
        addSubnode(chatsHeading)
        for row in chatRows { addSubnode(row) }
        sticker.source = stickerPath.map { .file($0) }
        sticker.contentMode = .aspectFit
        sticker.preferredSize = Size(width: 96, height: 96)
        sticker.accessibilityLabel = "Animated sticker: a smiling sun"
        stickerCaption.accessibilityElementsHidden = true
        addSubnode(stickersHeading)
        addSubnode(sticker)
        addSubnode(stickerCaption)
    }

    /// The buttons in the accent colour, lighter under the pointer and darker held (in light mode the
    /// gallery's original blues).
    private func colorButtons() {
        let dark = Runtime.shared.appearance.isDark
        let accent = Palette.color(Palette.accent)
        for button in [clearCache, signOut] {
            button.setBackgroundColor(accent)
            if accent == Color(rgb: 0x3390EC) {
                button.setBackgroundColor(Color(rgb: 0x1F6FC5), for: .highlighted)
                button.setBackgroundColor(Color(rgb: 0x5AA6F0), for: .hovered)
            } else {
                button.setBackgroundColor(accent.mixed(with: .black, by: 0.2), for: .highlighted)
                button.setBackgroundColor(accent.mixed(with: .white, by: 0.2), for: .hovered)
            }
            button.setBackgroundColor(dark ? Color(rgb: 0x3A4654) : Color(rgb: 0xB8C2CC), for: .disabled)
        }
    }

    /// The buttons' colours are fixed per state: they follow the appearance here.
    override func appearanceDidChange(_ change: AppearanceChange) {
        if change.contains(.colors) { colorButtons() }
        // The slider shows the text scale, whoever changed it (the desktop, the View menu, itself).
        if change.contains(.textScale) { textSize.value = Runtime.shared.appearance.textScale }
        super.appearanceDidChange(change)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let rows = self.rows, chatRows = self.chatRows
        return VStack(alignItems: .stretch) {
            heading.inset(EdgeInsets(top: 20, left: 16, bottom: 12, right: 16))
            rows
            HStack(spacing: 12) { clearCache; signOut }.inset(EdgeInsets(top: 20, left: 16, bottom: 16, right: 16))
            chatsHeading.inset(EdgeInsets(top: 12, left: 16, bottom: 12, right: 16))
            chatRows
            stickersHeading.inset(EdgeInsets(top: 20, left: 16, bottom: 8, right: 16))
            HStack(spacing: 16, alignItems: .center) { sticker; stickerCaption.flexShrink(1) }
                .inset(EdgeInsets(top: 0, left: 16, bottom: 24, right: 16))
        }
    }
}

/// The settings screen: its content in a scroll node (the wheel, a drag or a fling move it when the
/// window is shorter than the content).
final class SettingsScreenNode: ScrollNode, @unchecked Sendable {
    let content: SettingsContentNode
    var notifications: SwitchNode { content.notifications }
    var previews: SwitchNode { content.previews }
    var sounds: SwitchNode { content.sounds }
    var clearCache: ButtonNode { content.clearCache }
    var signOut: ButtonNode { content.signOut }

    init(stickerPath: String?) {
        let content = SettingsContentNode(stickerPath: stickerPath)
        self.content = content
        super.init(content: content)
        themedBackgroundColor = Palette.groupedBackground
    }
}

/// The settings tab.
@MainActor
final class SettingsController: NodeController {
    let screen: SettingsScreenNode

    /// The settings tab, its sticker from `stickerPath` (none: the sticker's place stays empty).
    init(stickerPath: String? = nil) {
        screen = SettingsScreenNode(stickerPath: stickerPath)
        super.init(node: screen)
        screen.debugName = "settings"
        let switches: [(String, SwitchNode)] = [("notifications", screen.notifications), ("previews", screen.previews),
                                                ("sounds", screen.sounds)]
        for (name, toggle) in switches {
            toggle.addTarget(for: .valueChanged) { control, _ in
                GalleryApp.report("gallery: \(name) \((control as? SwitchNode)?.isOn == true ? "on" : "off")")
            }
        }
        let sticker = screen.content.sticker
        screen.content.autoPlayStickers.addTarget(for: .valueChanged) { control, _ in
            sticker.isAnimationPaused = (control as? SwitchNode)?.isOn != true
        }
        // The slider sets the text scale (the desktop's until it is moved); it follows the appearance.
        let textSize = screen.content.textSize
        textSize.value = Runtime.shared.appearance.textScale
        textSize.addTarget(for: .valueChanged) { control, _ in
            guard let slider = control as? SliderNode else { return }
            var appearance = Runtime.shared.appearance
            let scale = (slider.value * 10).rounded() / 10
            guard appearance.textScale != scale else { return }
            appearance.textScale = scale
            Runtime.shared.setAppearance(appearance)
            GalleryApp.report("gallery: text size \(Int((scale * 100).rounded()))%")
        }
        screen.clearCache.addTarget(for: .primaryActionTriggered) { _, _ in
            ImageCache.shared.removeAll()
            GalleryApp.report("gallery: image cache cleared")
        }
        screen.signOut.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.confirmSignOut() }
    }

    /// Asks before signing out. The gallery has no account: signing out says so on standard output
    /// and clears the image cache, as an app would drop what it keeps of the user.
    func confirmSignOut() {
        presentAlert(Alert(title: "Sign out?",
                           message: "The chats stay on this computer; their photos are fetched again when you sign in.",
                           buttons: [.cancel("Cancel"), .destructive("Sign Out") {
                               ImageCache.shared.removeAll()
                               GalleryApp.report("gallery: signed out")
                           }]))
        GalleryApp.report("gallery: asked to sign out")
    }
}
