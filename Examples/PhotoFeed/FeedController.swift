import Tessera

/// The feed's one screen and its list's data source.
/// - Thread: main
final class FeedController: NodeController, ListDataSource {
    let posts: [Post]
    let screen = FeedScreenNode()
    var list: ListNode { screen.list }
    /// Called on the main thread with the link of a tapped hashtag.
    let onLinkTap: @MainActor @Sendable (String) -> Void

    init(posts: [Post], onLinkTap: @escaping @MainActor @Sendable (String) -> Void) {
        self.posts = posts
        self.onLinkTap = onLinkTap
        super.init(node: screen)
        // Rows not yet measured count as this tall: about a post with a landscape photo.
        list.estimatedRowHeight = 420
        list.dataSource = self
    }

    func numberOfRows(in list: ListNode) -> Int { posts.count }

    /// The block runs on a background thread: it captures the post and the handler, both `Sendable`.
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let post = posts[row], onLinkTap = onLinkTap
        return { PostNode(post: post, onLinkTap: onLinkTap) }
    }

    /// The arrow keys, Page Up and Page Down, Home and End scroll the feed.
    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        list.handleKey(key, modifiers: modifiers)
    }
}

/// A header bar over the list, which takes the rest of the height.
/// - Thread: made on the main thread with its controller; laid out on any.
final class FeedScreenNode: Node, @unchecked Sendable {
    let title = TextNode("PhotoFeed", attributes: TextAttributes(font: .system(size: 20, bold: true)))
    let rule = Node()
    let list = ListNode()

    override init() {
        super.init()
        backgroundColor = .white
        rule.backgroundColor = Color(rgb: 0xDBDBDB)
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            title.centered(.x).inset(EdgeInsets(top: 14, left: 12, bottom: 12, right: 12))
            rule.height(1)
            list.flexGrow(1).flexShrink(1)
        }
    }
}
