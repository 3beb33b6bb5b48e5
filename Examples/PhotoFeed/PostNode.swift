import Tessera

/// One post: a round avatar, the author's name and the post's age; the photo at its own aspect
/// ratio; the likes; the caption, ending in a tappable link.
///
/// - Thread: made and measured on a list's background thread, so it holds only nodes and values; its
///   link handler is a `@Sendable` closure that the text node calls on the main thread.
final class PostNode: Node, @unchecked Sendable {
    static let avatarSize = 36.0
    static let secondaryColor = Color(rgb: 0x8E8E93)
    static let linkColor = Color(rgb: 0x1F6FD6)

    let post: Post
    let avatar = ImageNode()
    let name: TextNode
    let age: TextNode
    let photo = ImageNode()
    let likes: TextNode
    let caption: TextNode

    init(post: Post, onLinkTap: @escaping @MainActor @Sendable (String) -> Void) {
        self.post = post
        name = TextNode(post.author, attributes: TextAttributes(font: .system(size: 15, bold: true)))
        age = TextNode(post.age, attributes: TextAttributes(font: .system(size: 13), color: Self.secondaryColor))

        let heart = TextAttributes(font: .system(size: 14), color: Color(rgb: 0xE0245E))
        var likesText = AttributedText("♥ ", attributes: heart)
        likesText.append("\(post.likes) likes", attributes: TextAttributes(font: .system(size: 14, bold: true)))
        likes = TextNode(attributedText: likesText)

        var captionText = AttributedText(post.caption + " ", attributes: TextAttributes(font: .system(size: 14)))
        captionText.append("#" + post.tag, attributes: TextAttributes(font: .system(size: 14), color: Self.linkColor,
                                                                        link: post.link))
        caption = TextNode(attributedText: captionText)
        caption.maximumNumberOfLines = 3
        caption.linkTapHandler = onLinkTap
        super.init()

        avatar.source = .file(post.avatar.path)
        avatar.imageCornerRadii = CornerRadii(Self.avatarSize / 2)
        avatar.emptyColor = Color(rgb: 0xE6E6EA)
        photo.source = .file(post.photo.path)
        photo.emptyColor = Color(rgb: 0xF0F0F3)
        // The nodes the layout below places become subnodes by themselves.
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            HStack(spacing: 10, alignItems: .center) {
                avatar.size(Size(width: Self.avatarSize, height: Self.avatarSize))
                name.flexGrow(1).flexShrink(1)
                age
            }
            .inset(EdgeInsets(top: 10, left: 12, bottom: 10, right: 12))
            photo.ratio(post.photo.ratio)
            VStack(spacing: 6) { likes; caption }
                .inset(EdgeInsets(top: 10, left: 12, bottom: 18, right: 12))
        }
    }
}
