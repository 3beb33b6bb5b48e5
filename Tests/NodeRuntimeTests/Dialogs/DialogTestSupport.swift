import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// An app's screen under a dialog: a row of two buttons on the theme's background, each counting
/// its activations.
final class DialogTestScreen: Node, @unchecked Sendable {
    let edit = ButtonNode(title: "Edit", attributes: TextFixtures.plain(15, color: .white))
    let share = ButtonNode(title: "Share", attributes: TextFixtures.plain(15, color: .white))
    /// Activations of `edit` and `share`, in order. (main thread only)
    @MainActor var activations: [String] = []

    @MainActor
    init(name: String = "screen") {
        super.init()
        debugName = name
        automaticallyManagesSubnodes = true
        themedBackgroundColor = .secondaryBackground
        for (button, name) in [(edit, "edit"), (share, "share")] {
            button.setBackgroundColor(Color(rgb: 0x2E7D32))
            button.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.activations.append(name) }
        }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(spacing: 16, justifyContent: .center, alignItems: .start) { edit; share }.inset(EdgeInsets(all: 16))
    }
}

/// The one driver of the dialog tests: a headless host over SDL's software renderer showing a
/// `DialogTestScreen`, frames stepped by hand a sixtieth of a second apart, keys, clicks, pictures.
@MainActor
final class DialogHarness {
    let host: NodeHost
    let screen = DialogTestScreen()
    /// Keys the app's key handler heard.
    var keysHeard: [Key] = []
    private var time = 0.0

    init(size: Size = Size(width: 480, height: 360)) throws {
        host = try PixelOracle.makeHost(size: size, clearColor: Color(rgb: 0x000000))
        host.setRootNode(screen)
        host.keyHandler = { [weak self] key, _ in
            self?.keysHeard.append(key)
            return true
        }
        try settle()
    }

    func settle() throws { try host.settle() }

    func frame(_ events: [InputEvent] = []) {
        time = max(time, host.time) + 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    func key(_ key: Key, _ modifiers: KeyModifiers = []) {
        frame([.keyDown(key, modifiers: modifiers)])
        frame([.keyUp(key, modifiers: modifiers)])
    }

    /// A primary click at `point` (window points): down in one frame, up in the next.
    func click(_ point: Point) {
        frame([.pointerMoved(point), .pointerDown(point, button: 1)])
        frame([.pointerUp(point, button: 1)])
    }

    /// The centre of `node`, in window points.
    func centre(of node: Node) -> Point {
        let frame = node.layer.frameInRoot
        return Point(x: frame.midX, y: frame.midY)
    }

    func capture() throws -> Bitmap { try XCTUnwrap(OffscreenRender.capture(host)) }

    func pixel(_ point: Point) throws -> Color {
        let shot = try capture()
        return Color(premultipliedARGB: shot.pixel(x: Int(point.x), y: Int(point.y)))
    }

    /// The element of `tree` with `role`, searched depth first.
    static func element(_ role: AccessibilityRole, in element: AccessibilityElement) -> AccessibilityElement? {
        if element.role == role { return element }
        for child in element.children { if let found = Self.element(role, in: child) { return found } }
        return nil
    }
}

/// The standard appearance and theme, as each dialog test starts and leaves them.
@MainActor
func resetDialogAppearance() {
    Runtime.shared.setAppearance(.standard)
    Runtime.shared.setTheme(.standard)
    TextFixtures.useRepositoryFonts()
}
