import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A button centred on a screen, at its own size.
private final class ButtonScreenNode: Node, @unchecked Sendable {
    let button: ButtonNode
    let other = ButtonNode(title: "Other", attributes: TextFixtures.plain(13, color: .white))

    init(_ button: ButtonNode) {
        self.button = button
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        addSubnode(button)
        addSubnode(other)
        other.setBackgroundColor(Color(rgb: 0x555555))
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 20, justifyContent: .center, alignItems: .center) { button; other }
    }
}

/// Controls and buttons: states shown in pixels, target actions for presses in and out of the
/// button, keyboard activation with focus, hover, disabled buttons, and changes from other threads.
@MainActor
final class ButtonNodeTests: XCTestCase {
    private let normal = Color(rgb: 0x3050D0), pressed = Color(rgb: 0x203890), hovered = Color(rgb: 0x4060E0)
    private let disabled = Color(rgb: 0x808080), selected = Color(rgb: 0x2E7D32)
    private var time = 0.0

    override func setUp() {
        MainActor.assumeIsolated { TextFixtures.useRepositoryFonts() }
    }

    private func makeButton() -> ButtonNode {
        let button = ButtonNode(title: "Send", attributes: TextFixtures.plain(15, color: .white))
        button.setBackgroundColor(normal)
        button.setBackgroundColor(pressed, for: .highlighted)
        button.setBackgroundColor(hovered, for: .hovered)
        button.setBackgroundColor(disabled, for: .disabled)
        button.setBackgroundColor(selected, for: .selected)
        button.setTitle("Sending", attributes: TextFixtures.plain(15, color: .white), for: .highlighted)
        return button
    }

    private func show(_ button: ButtonNode) throws -> (NodeHost, ButtonScreenNode) {
        let screen = ButtonScreenNode(button)
        let host = try PixelOracle.makeHost(size: Size(width: 240, height: 160))
        host.setRootNode(screen)
        try host.settle()
        return (host, screen)
    }

    @discardableResult
    private func frame(_ host: NodeHost, _ events: [InputEvent] = []) -> FrameRecord {
        time += 1.0 / 60
        return host.runFrame(time: time, events: events)
    }

    private func pixel(_ host: NodeHost, _ point: Point) throws -> Color {
        let shot = try XCTUnwrap(OffscreenRender.capture(host))
        return Color(premultipliedARGB: shot.pixel(x: Int(point.x), y: Int(point.y)))
    }

    /// A point inside the button near its left edge (where the title does not reach), in the window.
    private func edge(of button: ButtonNode) -> Point {
        let origin = button.convertFromRoot(.zero)
        return Point(x: -origin.x + 3, y: -origin.y + button.frame.height / 2)
    }

    private func centre(of button: ButtonNode) -> Point {
        let origin = button.convertFromRoot(.zero)
        return Point(x: -origin.x + button.frame.width / 2, y: -origin.y + button.frame.height / 2)
    }

    func testAPressShowsTheHighlightedStateAndAReleaseInsideActivatesOnce() async throws {
        let button = makeButton()
        let (host, _) = try show(button)
        var events: [ControlEvents] = []
        button.addTarget(for: .all) { _, happened in events.append(happened) }
        var activations = 0
        button.addTarget(for: .primaryActionTriggered) { _, _ in activations += 1 }
        XCTAssertEqual(button.frame.size.height, 8 + 8 + button.titleNode.frame.height, accuracy: 0.5, "sized by its title and insets")
        XCTAssertEqual(try pixel(host, edge(of: button)), normal)
        let titleWidth = button.titleNode.frame.width

        frame(host, [.pointerDown(centre(of: button), button: 1)])
        try host.settle()
        XCTAssertTrue(button.controlState.contains(.highlighted))
        XCTAssertTrue(host.focusedNode === button, "a click focuses it, as in GTK")
        XCTAssertEqual(try pixel(host, edge(of: button)), pressed, "highlighted background")
        XCTAssertEqual(button.titleNode.attributedText.string, "Sending")
        XCTAssertGreaterThan(button.titleNode.frame.width, titleWidth, "the highlighted title, measured")

        frame(host, [.pointerUp(centre(of: button), button: 1)])
        try host.settle()
        XCTAssertEqual(activations, 1)
        XCTAssertEqual(events, [.touchDown, .touchUpInside, .primaryActionTriggered])
        XCTAssertFalse(button.isHighlighted)
        XCTAssertEqual(button.titleNode.attributedText.string, "Send")
        XCTAssertEqual(try pixel(host, edge(of: button)), hovered, "the pointer still rests on it")
        host.setRootNode(nil)
    }

    func testAPressDraggedAwayAndReleasedOutsideDoesNotActivate() async throws {
        let button = makeButton()
        let (host, _) = try show(button)
        var events: [ControlEvents] = []
        button.addTarget(for: .all) { _, happened in events.append(happened) }
        let start = centre(of: button)
        frame(host, [.pointerDown(start, button: 1)])
        frame(host, [.pointerMoved(Point(x: start.x + 10, y: start.y))])
        let far = Point(x: start.x, y: start.y + button.frame.height / 2 + button.trackingSlop + 10)
        frame(host, [.pointerMoved(far)])
        XCTAssertFalse(button.isHighlighted, "outside the tracking area")
        frame(host, [.pointerUp(far, button: 1)])
        try host.settle()
        XCTAssertEqual(events, [.touchDown, .touchDragInside, [.touchDragOutside, .touchDragExit], .touchUpOutside])
        XCTAssertEqual(try pixel(host, edge(of: button)), normal)
        host.setRootNode(nil)
    }

    func testTabFocusesTheButtonAndSpaceOrEnterActivateIt() async throws {
        let button = makeButton()
        let (host, screen) = try show(button)
        var activations = 0
        button.addTarget(for: .primaryActionTriggered) { _, _ in activations += 1 }
        frame(host, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(host.focusedNode === button, "the first control in Tab order")
        XCTAssertTrue(button.controlState.contains(.focused))
        frame(host, [.keyDown(.space, modifiers: [])])
        frame(host, [.keyDown(.enter, modifiers: [])])
        XCTAssertEqual(activations, 2)
        frame(host, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(host.focusedNode === screen.other)
        frame(host, [.keyDown(.space, modifiers: [])])
        XCTAssertEqual(activations, 2, "keys go to the focused control only")
        host.setRootNode(nil)
    }

    func testADisabledButtonShowsItTakesNoPressAndNoFocus() async throws {
        let button = makeButton()
        let (host, screen) = try show(button)
        var activations = 0
        button.addTarget(for: .primaryActionTriggered) { _, _ in activations += 1 }
        // Disabled from another thread: the state reaches the screen at the next frame.
        let box = button
        await Task.detached { box.isEnabled = false }.value
        try host.settle()
        XCTAssertEqual(button.controlState, .disabled)
        XCTAssertEqual(try pixel(host, edge(of: button)), disabled)
        frame(host, [.pointerDown(centre(of: button), button: 1)])
        frame(host, [.pointerUp(centre(of: button), button: 1)])
        frame(host, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(host.focusedNode === screen.other, "Tab skips a disabled button")
        XCTAssertEqual(activations, 0)
        button.isEnabled = true
        try host.settle()
        XCTAssertEqual(try pixel(host, edge(of: button)), hovered, "enabled again, under the pointer")
        host.setRootNode(nil)
    }

    func testSelectedAndItsFallbacks() async throws {
        let button = makeButton()
        let (host, _) = try show(button)
        button.isSelected = true
        try host.settle()
        XCTAssertEqual(try pixel(host, edge(of: button)), selected)
        // Selected and highlighted has no value of its own: highlighted ranks higher.
        XCTAssertEqual(button.backgroundColor(for: [.selected, .highlighted]), pressed)
        XCTAssertEqual(button.title(for: [.selected]).map(\.string), "Send", "no selected title: the normal one")
        button.setBackgroundColor(Color(rgb: 0x112233), for: [.selected, .highlighted])
        XCTAssertEqual(button.backgroundColor(for: [.selected, .highlighted, .hovered]), Color(rgb: 0x112233))
        host.setRootNode(nil)
    }

    func testAButtonWithAnImageAndATitleLaysThemOutSideBySide() async throws {
        let square = try Bitmap(width: 16, height: 16, premultipliedARGB: Array(repeating: Color(rgb: 0xF0C020).premultipliedARGB, count: 256))
        let button = ButtonNode(title: "Like", attributes: TextFixtures.plain(15, color: .white), image: .bitmap(square))
        button.setBackgroundColor(normal)
        button.imageSize = Size(width: 16, height: 16)
        let (host, _) = try show(button)
        XCTAssertEqual(button.imageNode.frame.size, Size(width: 16, height: 16))
        XCTAssertEqual(button.imageNode.frame.maxX + button.contentSpacing, button.titleNode.frame.minX, accuracy: 0.01)
        let origin = button.convertFromRoot(.zero)
        let imageCentre = Point(x: -origin.x + button.imageNode.frame.midX, y: -origin.y + button.imageNode.frame.midY)
        XCTAssertEqual(try pixel(host, imageCentre), Color(rgb: 0xF0C020), "the image drawn")
        try? FileManager.default.createDirectory(at: GoldenImage.outputDirectory, withIntermediateDirectories: true)
        try? OffscreenRender.capture(host)?.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("button-image-title.png").path)
        // The title's white glyphs are drawn over the button's background.
        let shot = try XCTUnwrap(OffscreenRender.capture(host))
        let titleFrame = Rect(x: -origin.x + button.titleNode.frame.minX, y: -origin.y + button.titleNode.frame.minY,
                              width: button.titleNode.frame.width, height: button.titleNode.frame.height)
        var light = 0
        for y in Int(titleFrame.minY)..<Int(titleFrame.maxY) {
            for x in Int(titleFrame.minX)..<Int(titleFrame.maxX) where Color(premultipliedARGB: shot.pixel(x: x, y: y)).red > 200 { light += 1 }
        }
        XCTAssertGreaterThan(light, 20, "the title's glyphs")
        button.imagePlacement = .trailing
        try host.settle()
        XCTAssertLessThan(button.titleNode.frame.maxX, button.imageNode.frame.minX)
        host.setRootNode(nil)
    }
}
