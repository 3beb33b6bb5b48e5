import Foundation
import Tessera
import TesseraTesting
import XCTest
@testable import PhotoFeed

/// Records the links the feed reports tapped. - Thread: main
@MainActor
private final class LinkRecorder {
    var links: [String] = []
}

/// The feed as a person sees it: the app run headless (SDL's dummy driver and software renderer, one
/// pixel a point), settled, and read back pixel by pixel.
@MainActor
final class PhotoFeedTests: XCTestCase {
    private let screenSize = PhotoFeedApp().configuration.size

    private func makeFeed(onLinkTap: @escaping @MainActor @Sendable (String) -> Void = { _ in }) throws
        -> (Application, FeedController) {
        // The app's posts, with a handler of the test's.
        let posts = Post.feed(count: 1_000, seed: PhotoFeedApp.seed, photos: Photo.bundled())
        let controller = FeedController(posts: posts, onLinkTap: onLinkTap)
        let app = try Application(configuration: .headless(size: screenSize), rootController: controller)
        return (app, controller)
    }

    /// Where `node` is on screen, in points (pixels, at scale 1).
    private func screenRect(of node: Node) -> Rect {
        let origin = node.convertFromRoot(.zero)
        return Rect(x: -origin.x, y: -origin.y, width: node.frame.width, height: node.frame.height)
    }

    private func color(in screen: Bitmap, x: Double, y: Double) -> Color {
        Color(premultipliedARGB: screen.pixel(x: Int(x), y: Int(y)))
    }

    /// The colours of the pixels in `rect`.
    private func colors(in screen: Bitmap, _ rect: Rect) -> [Color] {
        stride(from: Int(rect.minY), to: Int(rect.maxY), by: 1).flatMap { y in
            stride(from: Int(rect.minX), to: Int(rect.maxX), by: 1).map { x in
                Color(premultipliedARGB: screen.pixel(x: x, y: y))
            }
        }
    }

    /// How many pixels in `rect` are dark: text's ink on the white feed.
    private func inkCount(in screen: Bitmap, _ rect: Rect) -> Int {
        colors(in: screen, rect).count { Int($0.red) + Int($0.green) + Int($0.blue) < 3 * 128 }
    }

    /// The post nodes of the rows on screen.
    private func visiblePosts(_ list: ListNode) throws -> [PostNode] {
        let rows = try XCTUnwrap(list.visibleRows)
        return try rows.map { try XCTUnwrap(list.nodeForRow($0) as? PostNode, "row \($0)") }
    }

    /// A post shows every part of it that is on screen (under the header, above the bottom edge): a
    /// round avatar, the photo at its aspect ratio, the like count.
    private func assertShowsPost(_ post: PostNode, on screen: Bitmap, below top: Double,
                                 file: StaticString = #filePath, line: UInt = #line) {
        func isOnScreen(_ rect: Rect) -> Bool { rect.minY >= top && rect.maxY <= screenSize.height }

        let avatar = screenRect(of: post.avatar)
        if isOnScreen(avatar) {
            XCTAssertEqual(avatar.width, PostNode.avatarSize, file: file, line: line)
            XCTAssertEqual(color(in: screen, x: avatar.minX + 1, y: avatar.minY + 1), .white,
                           "outside the avatar's circle is the background", file: file, line: line)
            XCTAssertNotEqual(color(in: screen, x: avatar.midX, y: avatar.midY), .white,
                              "the avatar's centre is photo", file: file, line: line)
            XCTAssertEqual(post.avatar.loadState, .loaded, file: file, line: line)
        }

        let photo = screenRect(of: post.photo)
        XCTAssertEqual(photo.width, screenSize.width, file: file, line: line)
        XCTAssertEqual(photo.height / photo.width, post.post.photo.ratio, accuracy: 1 / photo.width,
                       "the photo is at its own aspect ratio", file: file, line: line)
        let shown = Rect(x: 0, y: max(photo.minY, top), width: photo.width,
                         height: min(photo.maxY, screenSize.height) - max(photo.minY, top))
        if shown.height >= 20 {
            XCTAssertEqual(post.photo.loadState, .loaded, file: file, line: line)
            XCTAssertGreaterThan(Set(colors(in: screen, shown)).count, 50,
                                 "the photo is a picture, not a blank or a placeholder", file: file, line: line)
        }

        let likes = screenRect(of: post.likes)
        if isOnScreen(likes) {
            XCTAssertGreaterThan(inkCount(in: screen, likes), 30, "the like count is drawn", file: file, line: line)
        }
    }

    func testTheFirstScreenShowsTheHeaderAndTheFirstPost() async throws {
        let (app, feed) = try makeFeed()
        try app.settle()
        let screen = try app.capture()

        let title = screenRect(of: feed.screen.title)
        XCTAssertEqual(title.minY, 14)
        XCTAssertGreaterThan(inkCount(in: screen, title), 100, "the header's title is drawn")
        let rule = screenRect(of: feed.screen.rule)
        XCTAssertEqual(color(in: screen, x: 10, y: rule.minY), Color(rgb: 0xDBDBDB), "the rule under the header")

        let first = try XCTUnwrap(try visiblePosts(feed.list).first)
        XCTAssertEqual(first.post.id, 0)
        XCTAssertGreaterThan(screenRect(of: first).minY, rule.minY, "the first post starts under the header")
        assertShowsPost(first, on: screen, below: rule.maxY)
        let caption = screenRect(of: first.caption)
        XCTAssertTrue(colors(in: screen, caption).contains { $0.blue > 150 && $0.red < 100 },
                      "the caption's link is blue")
    }

    func testTappingACaptionsLinkReportsIt() async throws {
        let recorder = LinkRecorder()
        let (app, feed) = try makeFeed { recorder.links.append($0) }
        try app.settle()
        let post = try XCTUnwrap(try visiblePosts(feed.list).first)
        // The hashtag ends the caption's last line.
        let lastLine = try XCTUnwrap(post.caption.lineRects.last)
        let inCaption = Point(x: lastLine.maxX - 4, y: lastLine.midY)
        XCTAssertEqual(post.caption.textHit(at: inCaption)?.target, .link(post.post.link))

        let caption = screenRect(of: post.caption)
        let tap = Point(x: caption.minX + inCaption.x, y: caption.minY + inCaption.y)
        app.frame(events: [.pointerMoved(tap), .pointerDown(tap, button: 1)])
        app.frame(events: [.pointerUp(tap, button: 1)])
        XCTAssertEqual(recorder.links, [post.post.link])
    }

    func testAFlingScrollsToOtherPosts() async throws {
        let (app, feed) = try makeFeed()
        try app.settle()
        let before = try visiblePosts(feed.list).map(\.post.id)
        let screenBefore = try app.capture()

        feed.list.fling(velocity: 3_000)
        try app.settle()
        let after = try visiblePosts(feed.list)
        let screenAfter = try app.capture()

        XCTAssertGreaterThan(feed.list.contentOffset, screenSize.height, "the fling went past the first screen")
        XCTAssertTrue(Set(before).isDisjoint(with: after.map(\.post.id)),
                      "rows \(before) before, \(after.map(\.post.id)) after")
        XCTAssertEqual(after.map(\.post.id), Array(try XCTUnwrap(feed.list.visibleRows)), "each row shows its own post")
        // The screen changed under the header, and the posts now on it are drawn whole.
        let list = screenRect(of: feed.list)
        let changed = zip(colors(in: screenBefore, list), colors(in: screenAfter, list)).count { $0 != $1 }
        XCTAssertGreaterThan(Double(changed) / (list.width * list.height), 0.5)
        for post in after {
            assertShowsPost(post, on: screenAfter, below: list.minY)
        }
    }

    /// One post, as committed in `__Snapshots__/PhotoFeedTests/testAPostMatchesItsReference.png`.
    func testAPostMatchesItsReference() async throws {
        let photos = Photo.bundled()
        let post = Post(id: 7, author: "Ada Lovelace", avatar: photos[1], age: "3h", photo: photos[0],
                        caption: "Morning light on the harbour. Not a filter in sight.", tag: "nofilter", likes: 1_204)
        let node = PostNode(post: post) { _ in }
        let width = 360.0
        let height = node.layoutThatFits(SizeRange(min: Size(width: width, height: 0),
                                                   max: Size(width: width, height: .infinity))).size.height
        try assertSnapshot(of: node, size: Size(width: width, height: height))
    }
}
