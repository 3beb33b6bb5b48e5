import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Selecting a TextNode's text: a drag selects characters, a double-click a word, a triple-click a
/// line, Shift+click extends; Shift+arrows, Ctrl+A and Escape from the keyboard; Ctrl+C and the
/// context menu's Copy put the selection on the clipboard; the selection shows over the text; a drag
/// inside a list selects instead of scrolling; a link still taps; a text that is not selectable
/// selects nothing.
@MainActor
final class TextSelectionTests: XCTestCase {
    private var host: NodeHost!
    private var text: TextNode!
    private var tapped: [String] = []

    private static let sample = "Hello brave new world 👩‍👩‍👧 and more"

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        host = try PixelOracle.makeHost(size: Size(width: 400, height: 120), clearColor: .white)
        host.measuresLayoutInBackground = false
        let root = Node()
        root.backgroundColor = .white
        text = TextNode()
        var linked = TextAttributes(font: .system(size: 16), color: .black)
        let plain = linked
        linked.link = "https://example.org"
        text.attributedText = AttributedText(runs: [TextRun(Self.sample, attributes: plain),
                                                    TextRun(" link", attributes: linked)])
        text.isSelectable = true
        text.linkTapHandler = { [weak self] link in self?.tapped.append(link) }
        root.addSubnode(text)
        host.setRootNode(root)
        text.frame = Rect(x: 10, y: 10, width: 380, height: 60)
        try host.settle()
    }

    override func tearDown() async throws {
        host.setRootNode(nil)
        host = nil
    }

    private func frame(_ events: [InputEvent], after seconds: Double = 1.0 / 60) {
        host.runFrame(time: host.time + seconds, events: events)
    }

    /// The window point in the middle of the line at position `offset` (its caret's place).
    private func point(at offset: Int) -> Point {
        let caret = text.textLayout.caretRect(forOffset: offset, inWidth: text.bounds.width)
        return Point(x: 10 + caret.minX, y: 10 + caret.midY)
    }

    private func drag(from a: Int, to b: Int) {
        frame([.pointerMoved(point(at: a))])
        frame([.pointerDown(point(at: a), button: 1)])
        frame([.pointerMoved(point(at: (a + b) / 2))])
        frame([.pointerMoved(point(at: b))])
        frame([.pointerUp(point(at: b), button: 1)])
    }

    private func key(_ key: Key, _ modifiers: KeyModifiers = []) {
        frame([.keyDown(key, modifiers: modifiers), .keyUp(key, modifiers: modifiers)])
    }

    func testADragSelectsAndCtrlCCopiesAndTheSelectionIsDrawn() async throws {
        drag(from: 6, to: 15)
        XCTAssertEqual(text.selectedRange, 6..<15)
        XCTAssertEqual(text.selectedText, "brave new")
        XCTAssertTrue(host.focusedNode === text, "the click focused the text")
        key(.character("c"), .control)
        XCTAssertEqual(host.compositor.textInputPlatform?.clipboardText(), "brave new")

        // Drawn: a translucent accent rectangle over the selected words, none elsewhere on the line.
        try host.settle()
        let bitmap = try XCTUnwrap(OffscreenRender.capture(host))
        try? bitmap.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("text-selection.png").path)
        let accent = try XCTUnwrap(ThemeColors.standardLight[.accent])
        func tinted(_ x: Double) -> Bool {
            // The blank above the glyphs, inside the line: white under the accent at 35%.
            let color = Color(premultipliedARGB: bitmap.pixel(x: Int(x), y: Int(point(at: 6).y) - 8))
            return abs(Int(color.blue) - 255) < 8 && abs(Int(color.red) - (255 - Int(Double(255 - Int(accent.red)) * 0.35))) < 12
        }
        let start = point(at: 6).x, end = point(at: 15).x
        XCTAssertTrue(tinted((start + end) / 2), "inside the selection")
        XCTAssertFalse(tinted(point(at: 2).x), "before it")
        XCTAssertFalse(tinted(point(at: 18).x), "after it")
    }

    func testDoubleAndTripleClicksSelectAWordAndALine() async throws {
        let inside = point(at: 8)
        frame([.pointerDown(inside, button: 1, clicks: 1), .pointerUp(inside, button: 1)])
        XCTAssertNil(text.selectedRange, "a click selects nothing")
        frame([.pointerDown(inside, button: 1, clicks: 2), .pointerUp(inside, button: 1)])
        XCTAssertEqual(text.selectedText, "brave")
        frame([.pointerDown(inside, button: 1, clicks: 3), .pointerUp(inside, button: 1)])
        XCTAssertEqual(text.selectedText?.hasPrefix("Hello brave new world"), true, "\(text.selectedText ?? "nil")")
    }

    func testTheKeyboardExtendsByGraphemesAndWordsSelectsAllAndEnds() async throws {
        drag(from: 0, to: 5)
        XCTAssertEqual(text.selectedText, "Hello")
        key(.right, .shift)
        XCTAssertEqual(text.selectedText, "Hello ")
        key(.right, [.shift, .control])
        XCTAssertEqual(text.selectedText, "Hello brave")
        // Over the family emoji (one grapheme of several code units) in one step.
        let family = (Self.sample as NSString).range(of: "👩‍👩‍👧")
        text.selectedRange = 0..<family.location
        key(.right, .shift)
        XCTAssertEqual(text.selectedRange, 0..<(family.location + family.length), "one step over the whole cluster")
        key(.left, .shift)
        XCTAssertEqual(text.selectedRange, 0..<family.location)
        key(.end, .shift)
        XCTAssertEqual(text.selectedText?.hasSuffix("link"), true)
        key(.character("a"), .control)
        XCTAssertEqual(text.selectedText, Self.sample + " link")
        key(.escape)
        XCTAssertNil(text.selectedRange)
        key(.character("c"), .control)
        XCTAssertEqual(host.compositor.textInputPlatform?.clipboardText() == "Hello", false, "nothing selected: nothing copied")
    }

    func testTheContextMenuOffersCopyWithASelectionAndTheNodesAroundOtherwise() async throws {
        var outerMenus = 0
        text.supernode?.setContextMenu { _ in
            outerMenus += 1
            return Menu("Outer") { MenuItem("Outer") {} }
        }
        let over = point(at: 8)
        frame([.pointerDown(over, button: 3), .pointerUp(over, button: 3)])
        XCTAssertEqual(outerMenus, 1, "no selection: the menu around the text")
        XCTAssertEqual(host.openMenus.first?.menu.title, "Outer")
        key(.escape)
        drag(from: 6, to: 11)
        frame([.pointerDown(over, button: 3), .pointerUp(over, button: 3)])
        let menu = try XCTUnwrap(host.openMenus.first)
        XCTAssertEqual(menu.menu.items.map(\.title), ["Copy", "Select All"])
        key(.down)
        key(.enter)
        XCTAssertEqual(host.compositor.textInputPlatform?.clipboardText(), "brave")
    }

    func testALinkStillTapsAndADragInAListSelectsInsteadOfScrolling() async throws {
        let linkPoint = point(at: (Self.sample as NSString).length + 3)
        frame([.pointerMoved(linkPoint)])
        frame([.pointerDown(linkPoint, button: 1), .pointerUp(linkPoint, button: 1)])
        XCTAssertEqual(tapped, ["https://example.org"])
        XCTAssertNil(text.selectedRange)

        // In a scroll: the text's drag selects, the scroll stays.
        let content = Node()
        content.frame = Rect(x: 0, y: 0, width: 400, height: 600)
        text.removeFromSupernode()
        content.addSubnode(text)
        let scroll = ScrollNode(content: content)
        scroll.frame = Rect(x: 0, y: 0, width: 400, height: 120)
        content.preferredSize = Size(width: 400, height: 600)
        host.setRootNode(scroll)
        try host.settle()
        let before = scroll.contentOffset
        frame([.pointerDown(point(at: 0), button: 1)])
        for step in 1...10 { frame([.pointerMoved(Point(x: point(at: 0).x + Double(step) * 6, y: point(at: 0).y - Double(step) * 4))]) }
        frame([.pointerUp(point(at: 10), button: 1)])
        XCTAssertEqual(scroll.contentOffset, before, "the scroll did not move")
        XCTAssertNotNil(text.selectedRange, "the drag selected")
    }

    func testATextThatIsNotSelectableSelectsNothing() async throws {
        text.isSelectable = false
        drag(from: 0, to: 10)
        XCTAssertNil(text.selectedRange)
        XCTAssertFalse(text.canBecomeFocused)
    }
}
