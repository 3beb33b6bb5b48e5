import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Links, spoilers and attachments found from a point, and taps on a text node.
@MainActor
final class TextHitTestTests: XCTestCase {
    override func setUp() {
        super.setUp()
        MainActor.assumeIsolated {
            TextFixtures.useRepositoryFonts()
            Runtime.shared.contentsScale = 1
        }
    }

    private static let url = "https://example.com/a-long-path"

    /// "Visit <link> today, or read <spoiler> and <second spoiler>."
    private func sample() -> AttributedText {
        var text = AttributedText("Visit ", attributes: TextFixtures.plain())
        var link = TextFixtures.plain(color: TextFixtures.accent)
        link.link = Self.url
        text.append("example.com and its long path", attributes: link)
        text.append(" today, or read ", attributes: TextFixtures.plain())
        var spoiler = TextFixtures.plain()
        spoiler.isSpoiler = true
        text.append("the ending", attributes: spoiler)
        text.append(" and ", attributes: TextFixtures.plain())
        var linkedSpoiler = spoiler
        linkedSpoiler.link = "https://example.com/secret"
        text.append("the secret", attributes: linkedSpoiler)
        text.append(".", attributes: TextFixtures.plain())
        return text
    }

    private func centre(_ rect: Rect) -> Point { Point(x: rect.midX, y: rect.midY) }

    func testLinkIsFoundOnEveryLineItCovers() async throws {
        let layout = TextLayout.measure(sample(), width: 180, cache: nil)
        let rects = layout.rects(forLink: Self.url)
        XCTAssertEqual(rects.count, 2, "the link wraps onto a second line")
        for rect in rects {
            let hit = try XCTUnwrap(layout.hitTest(centre(rect)))
            XCTAssertEqual(hit.target, .link(Self.url))
            XCTAssertEqual(hit.rects, rects)
        }
        // Over "Visit": plain text.
        let first = layout.lineRects()[0]
        XCTAssertNil(layout.hitTest(Point(x: first.minX + 3, y: first.midY)))
        // Outside the text, and bad points.
        XCTAssertNil(layout.hitTest(Point(x: 5, y: layout.size.height + 10)))
        XCTAssertNil(layout.hitTest(Point(x: -10, y: first.midY)))
        XCTAssertNil(layout.hitTest(Point(x: .nan, y: first.midY)))
        XCTAssertNil(layout.hitTest(Point(x: .infinity, y: .infinity)))
    }

    func testSpoilersAreHitUntilRevealed() async throws {
        let layout = TextLayout.measure(sample(), width: 180, cache: nil)
        XCTAssertEqual(layout.spoilerCount, 2)
        let first = try XCTUnwrap(layout.rects(forSpoiler: 0).first)
        let second = try XCTUnwrap(layout.rects(forSpoiler: 1).first)
        XCTAssertEqual(layout.hitTest(centre(first))?.target, .spoiler(0))
        XCTAssertEqual(layout.hitTest(centre(second))?.target, .spoiler(1))
        // Revealed, the plain spoiler is plain text and the linked one is a link.
        XCTAssertNil(layout.hitTest(centre(first), revealedSpoilers: [0]))
        XCTAssertEqual(layout.hitTest(centre(second), revealedSpoilers: [0, 1])?.target, .link("https://example.com/secret"))
        XCTAssertEqual(layout.hitTest(centre(second), revealedSpoilers: [0])?.target, .spoiler(1))
    }

    func testHitTestingFollowsAlignmentInTheBox() async throws {
        var text = AttributedText("tap ", attributes: TextFixtures.plain())
        var link = TextFixtures.plain()
        link.link = "right"
        text.append("here", attributes: link)
        let layout = TextLayout.measure(text, width: 300, options: TextLayoutOptions(alignment: .right), cache: nil)
        let rect = try XCTUnwrap(layout.rects(forLink: "right", inWidth: 300).first)
        XCTAssertEqual(rect.maxX, 300, accuracy: 0.5)
        XCTAssertEqual(layout.hitTest(centre(rect), inWidth: 300)?.target, .link("right"))
        XCTAssertNil(layout.hitTest(Point(x: 10, y: rect.midY), inWidth: 300))
    }

    func testAttachmentIsHit() async throws {
        var text = AttributedText("A ", attributes: TextFixtures.plain())
        text.append(TextAttachment(identifier: "emoji-1", size: Size(width: 20, height: 20), baselineOffset: -3),
                    attributes: TextFixtures.plain())
        text.append(" B", attributes: TextFixtures.plain())
        let layout = TextLayout.measure(text, width: 200, cache: nil)
        let placement = try XCTUnwrap(layout.attachmentRects().first)
        XCTAssertEqual(placement.rect.maxY, layout.lines[0].baseline + 3, accuracy: 1e-9, "moved down by the offset")
        XCTAssertEqual(layout.hitTest(centre(placement.rect))?.target, .attachment("emoji-1"))
    }

    func testRightToLeftLinkIsHitWhereItIsDrawn() async throws {
        var text = AttributedText("ראו ", attributes: TextFixtures.plain())
        var link = TextFixtures.plain()
        link.link = "hebrew-link"
        text.append("כאן", attributes: link)
        text.append(" עכשיו", attributes: TextFixtures.plain())
        let layout = TextLayout.measure(text, width: 300, cache: nil)
        let rect = try XCTUnwrap(layout.rects(forLink: "hebrew-link", inWidth: 300).first)
        let line = layout.lineRects(inWidth: 300)[0]
        // The link is the middle word: neither at the line's left nor at its right end.
        XCTAssertGreaterThan(rect.minX, line.minX + 5)
        XCTAssertLessThan(rect.maxX, line.maxX - 5)
        XCTAssertEqual(layout.hitTest(centre(rect), inWidth: 300)?.target, .link("hebrew-link"))
    }

    // MARK: - Taps on a node

    func testTappingALinkCallsTheHandlerAndTappingASpoilerRevealsIt() async throws {
        let node = TextNode(attributedText: sample())
        XCTAssertTrue(node.isUserInteractionEnabled, "a text with links is interactive")
        let size = node.calculateSizeThatFits(Size(width: 180, height: .infinity))
        node.frame = Rect(origin: .zero, size: size)
        var tapped: [String] = []
        node.linkTapHandler = { tapped.append($0) }

        func tap(_ point: Point, movingTo end: Point? = nil) {
            node.touchesBegan(Touch(phase: .began, location: point, timestamp: 0))
            node.touchesEnded(Touch(phase: .ended, location: end ?? point, timestamp: 0.1))
        }
        let link = try XCTUnwrap(node.textLayout.rects(forLink: Self.url, inWidth: size.width).first)
        tap(centre(link))
        XCTAssertEqual(tapped, [Self.url])

        let spoiler = try XCTUnwrap(node.textLayout.rects(forSpoiler: 0, inWidth: size.width).first)
        XCTAssertEqual(node.textHit(at: centre(spoiler))?.target, .spoiler(0))
        tap(centre(spoiler))
        XCTAssertEqual(node.revealedSpoilers, [0])
        XCTAssertNil(node.textHit(at: centre(spoiler)))

        // Down on the link, up elsewhere: no tap.
        tap(centre(link), movingTo: Point(x: 1, y: size.height - 1))
        XCTAssertEqual(tapped, [Self.url])
        // Revealing changes no layout.
        XCTAssertTrue(node.drawParameters().layout === node.textLayout)
    }

    func testClicksThroughTheHostRevealAndOpen() async throws {
        let (host, _) = makeHost()
        var time = 0.0
        let root = Node()
        let container = Node()
        container.frame = Rect(x: 20, y: 30, width: 240, height: 200)
        let node = TextNode(attributedText: sample())
        let size = node.calculateSizeThatFits(Size(width: 180, height: .infinity))
        node.frame = Rect(origin: Point(x: 10, y: 15), size: size)
        var opened: [String] = []
        node.linkTapHandler = { opened.append($0) }
        container.addSubnode(node)
        root.addSubnode(container)
        host.setRootNode(root)
        settle(host, time: &time)

        func click(_ pointInNode: Point) {
            // The node sits at (30, 45) in the window.
            let point = Point(x: pointInNode.x + 30, y: pointInNode.y + 45)
            time += 1.0 / 60
            host.runFrame(time: time, events: [.pointerDown(point, button: 1)])
            time += 1.0 / 60
            host.runFrame(time: time, events: [.pointerUp(point, button: 1)])
        }
        let spoiler = try XCTUnwrap(node.textLayout.rects(forSpoiler: 0, inWidth: size.width).first)
        click(centre(spoiler))
        XCTAssertEqual(node.revealedSpoilers, [0])
        let link = try XCTUnwrap(node.textLayout.rects(forLink: Self.url, inWidth: size.width).first)
        click(centre(link))
        XCTAssertEqual(opened, [Self.url])
        host.setRootNode(nil)
    }

    func testPlainTextIsNotInteractive() async {
        XCTAssertFalse(TextNode("plain").isUserInteractionEnabled)
    }

    /// A collapsed quote is an expand target: a tap expands it (more lines, taller text), another tap
    /// collapses it again; a link inside it is still a link.
    func testTappingACollapsedBlockExpandsAndCollapsesIt() async throws {
        var quote = TextFixtures.plain(15)
        quote.block = TextBlock(.quote, title: "Quoted", isCollapsed: true, collapsedLineLimit: 2)
        var text = AttributedText("Before the quote.\n", attributes: TextFixtures.plain(15))
        text.append(String(repeating: "A quoted message that goes on for several lines. ", count: 6), attributes: quote)
        let node = TextNode(attributedText: text)
        XCTAssertTrue(node.isUserInteractionEnabled, "a collapsible block makes the text interactive")
        node.frame = Rect(origin: .zero, size: node.calculateSizeThatFits(Size(width: 240, height: .infinity)))
        let collapsed = node.textLayout
        let frame = try XCTUnwrap(collapsed.blocks.first)
        XCTAssertTrue(frame.hidesLines)
        let inside = Point(x: 120, y: frame.top + frame.height / 2)
        XCTAssertEqual(node.textHit(at: inside)?.target, .block(0))
        XCTAssertNil(node.textHit(at: Point(x: 5, y: 2)), "the plain line before it is not a target")

        func tap(_ point: Point) {
            node.touchesBegan(Touch(phase: .began, location: point, timestamp: 0))
            node.touchesEnded(Touch(phase: .ended, location: point, timestamp: 0.1))
        }
        tap(inside)
        let expanded = node.textLayout(forWidth: 240)
        XCTAssertFalse(expanded.blocks[0].hidesLines)
        XCTAssertGreaterThan(expanded.lineCount, collapsed.lineCount)
        XCTAssertGreaterThan(node.calculateSizeThatFits(Size(width: 240, height: .infinity)).height, collapsed.size.height)
        XCTAssertEqual(node.textHit(at: inside)?.target, .block(0), "an expanded block collapses on the next tap")
        tap(inside)
        XCTAssertTrue(node.textLayout(forWidth: 240).blocks[0].hidesLines)
        XCTAssertEqual(node.textLayout(forWidth: 240).lineCount, collapsed.lineCount)
    }
}
