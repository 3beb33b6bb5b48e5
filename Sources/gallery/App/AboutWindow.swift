import NodeRuntime
import Tessera

/// The About window's content: the app's name, what it shows, and an OK button that closes the
/// window (so do Enter and Escape).
final class AboutContentNode: Node, @unchecked Sendable {
    let heading = TextNode("Tessera Gallery", attributes: Palette.text(20, bold: true))
    let message = TextNode("A messenger's chat list, threads, photos and text, drawn by Tessera's nodes on background threads.",
                           attributes: Palette.text(15, color: Palette.secondary))
    let ok = ButtonNode(title: "OK", attributes: Palette.text(15, color: Palette.onAccent))

    override init() {
        super.init()
        themedBackgroundColor = Palette.background
        heading.alignment = .center
        message.alignment = .center
        ok.cornerRadius = 8
        ok.preferredSize = Size(width: 120, height: 36)
        ok.setBackgroundColor(Palette.color(Palette.accent))
        accessibilityRole = .dialog
        accessibilityLabel = "About Tessera Gallery"
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 12, justifyContent: .center, alignItems: .center) {
            heading
            message
            ok.spacingBefore(8)
        }
        .inset(EdgeInsets(top: 24, left: 24, bottom: 24, right: 24))
    }
}

extension GalleryApp {
    /// Opens the About window, modal for the main window: the main window takes no input until it
    /// closes (OK, Enter, Escape or its close button). Once open, asking again brings it forward.
    func openAboutWindow() {
        if let aboutWindow, aboutWindow.isOpen { return }
        do {
            let content = AboutContentNode()
            let window = try application.openWindow(
                configuration: .init(title: "About Tessera Gallery", size: Size(width: 360, height: 220),
                                     scale: options.scale, resizable: false),
                rootController: NodeController(node: content),
                modalFor: application.mainWindow)
            content.ok.addTarget(for: .primaryActionTriggered) { [weak window] _, _ in window?.close() }
            window.host.keyHandler = { [weak window] key, modifiers in
                guard modifiers.isEmpty, key == .enter || key == .escape, let window else { return false }
                window.close()
                return true
            }
            window.host.focus(content.ok)
            window.onClose = { Self.report("gallery: about window closed") }
            aboutWindow = window
            Self.report("gallery: about window opened, modal for \"\(application.mainWindow.title)\"")
        } catch {
            Self.report("gallery: cannot open the about window: \(error)")
        }
    }
}
