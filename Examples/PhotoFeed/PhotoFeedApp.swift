import Tessera

/// A photo feed in the style of Texture's ASDKgram: a header over 1,000 posts, each with a round
/// avatar, a name, a time, a photo at its own aspect ratio, a caption with a link, and its likes.
/// The posts are made up from a seed, so every run shows the same feed.
///
///     swift run --package-path Examples PhotoFeed
///     TESSERA_HEADLESS=1 TESSERA_SCREENSHOT=feed.png swift run --package-path Examples PhotoFeed
@main
struct PhotoFeedApp: App {
    /// What the posts are made up from.
    static let seed: UInt64 = 1

    var configuration: Application.Configuration {
        .init(title: "PhotoFeed", size: Size(width: 420, height: 760))
    }

    func makeRootController() -> NodeController {
        let posts = Post.feed(count: 1_000, seed: Self.seed, photos: Photo.bundled())
        return FeedController(posts: posts) { link in print("Link tapped: \(link)") }
    }
}
