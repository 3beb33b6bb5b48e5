import Tessera
import Foundation

/// A tile of the photo grid: the photo aspect-filled in a square, each column rounding its corners a
/// different way (baked into the bitmap, corner pieces, clipped by the compositor).
enum PhotoTile {
    static let spacing = 4.0

    /// The tile of `item` showing `path`.
    static func make(path: String, item: Int) -> ImageNode {
        let tile = ImageNode()
        tile.source = .file(path)
        tile.accessibilityLabel = label(forPhoto: path)
        tile.accessibilityHint = "Opens the photo"
        tile.contentMode = .aspectFill
        tile.emptyColor = Color(rgb: 0x2A323C)
        switch (item / 3 + item % 3) % 3 {
        case 0:
            tile.imageCornerRadii = CornerRadii(topLeft: 18, topRight: 4, bottomLeft: 4, bottomRight: 18)
        case 1:
            tile.cornerRadius = 12
            tile.cornerRoundingMode = .clipping
            tile.cornerClipColor = Color(rgb: 0x12161B)
        default:
            tile.cornerRadius = 24
            tile.cornerRoundingMode = .compositorClip
        }
        return tile
    }
}

extension PhotoTile {
    /// A photo's name from its file: "astronaut.jpg" is "Photo: astronaut".
    static func label(forPhoto path: String) -> String {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            .replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: "-", with: " ")
        return "Photo: " + name
    }
}

/// One story of the strip: the chat's photo in a ringed circle, its name below.
final class StoryNode: Node, @unchecked Sendable {
    static let size = Size(width: 84, height: 104)
    let ring = Node()
    let avatar = ImageNode()
    let name: TextNode

    init(title: String, path: String) {
        ring.themedBackgroundColor = Palette.accent
        ring.cornerRadius = 32
        ring.cornerRoundingMode = .compositorClip
        ring.preferredSize = Size(width: 64, height: 64)
        avatar.source = .file(path)
        avatar.contentMode = .aspectFill
        avatar.imageCornerRadii = CornerRadii(29)
        avatar.emptyColor = Color(rgb: 0x2A323C)
        avatar.preferredSize = Size(width: 58, height: 58)
        name = TextNode(String(title.split(separator: " ").first ?? ""), attributes: Palette.text(12, fixed: .white))
        name.maximumNumberOfLines = 1
        name.truncationMode = .end
        super.init()
        isTransactionContainer = true
        accessibilityRole = .button
        accessibilityLabel = "Story: " + title
        avatar.accessibilityElementsHidden = true
        name.accessibilityElementsHidden = true
        ring.addSubnode(avatar)
        [ring, name].forEach { addSubnode($0) }
        style.width = .points(Self.size.width)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 6, alignItems: .center) {
            avatar.centered().background(ring).width(.points(64)).height(.points(64)).flexShrink(0)
            name
        }
        .inset(EdgeInsets(top: 10, left: 4, bottom: 4, right: 4))
    }
}

/// The Photos screen: a strip of stories that scrolls sideways, the photos in a grid below it (both
/// collections), and a pager over them when a photo is opened.
final class PhotosScreenNode: Node, @unchecked Sendable {
    let stories: CollectionNode
    let grid: CollectionNode
    /// The open photo's pager, over the rest; nil when closed. (main thread)
    @MainActor var pager: PagerNode?

    init(stories: CollectionNode, grid: CollectionNode) {
        self.stories = stories
        self.grid = grid
        super.init()
        [stories, grid].forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            stories.height(.points(StoryNode.size.height)).flexShrink(0)
            grid.flexGrow(1).flexShrink(1)
        }
    }

    override func layout() {
        super.layout()
        pager?.frame = bounds
    }
}

/// Every photo of the assets, repeated into a long grid under a strip of the chats' stories; a click
/// on a photo opens it in a pager (←/→ turn, Escape closes).
@MainActor
final class PhotosController: ListScreenController, CollectionDataSource, ListDataSource {
    let paths: [String]
    let itemCount: Int
    let storyChats: [(title: String, path: String)]
    let screen: PhotosScreenNode

    init(data: ChatData, rows: Int = 60) throws {
        paths = try AssetLocator.photoNames(in: data.assets).map { data.photoPath("photos/" + $0) }
        itemCount = rows * 3
        storyChats = data.chats.compactMap { chat in chat.avatar.map { (chat.title, data.photoPath($0)) } }
        let stories = CollectionNode()
        stories.scrollDirection = .horizontal
        stories.collectionLayout = GridLayout.list()
        stories.list.debugName = "stories"
        stories.backgroundColor = Color(rgb: 0x12161B)
        let grid = CollectionNode()
        grid.collectionLayout = GridLayout(columns: .fixed(3), spacing: PhotoTile.spacing, lineSpacing: PhotoTile.spacing,
                                           itemAspectRatio: 1)
        screen = PhotosScreenNode(stories: stories, grid: grid)
        super.init(list: grid.list, node: screen, debugName: "photos", backgroundColor: Palette.photosBackground,
                   estimatedRowHeight: 140)
        grid.list.batchFetchingEdges = []
        stories.dataSource = self
        grid.dataSource = self
        grid.onSelectItem = { [weak self] item in self?.openPhoto(item) }
    }

    // MARK: Collections

    func numberOfItems(in collection: CollectionNode) -> Int {
        if collection === screen.stories { return storyChats.count }
        return paths.isEmpty ? 0 : itemCount
    }

    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock {
        if collection === screen.stories {
            let story = storyChats[item]
            return { StoryNode(title: story.title, path: story.path) }
        }
        let path = paths[item % paths.count]
        return { PhotoTile.make(path: path, item: item) }
    }

    // MARK: The pager (its pages are the grid's photos)

    func numberOfRows(in list: ListNode) -> Int { paths.isEmpty ? 0 : itemCount }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let path = paths[row % paths.count]
        return {
            let photo = ImageNode()
            photo.source = .file(path)
            photo.accessibilityLabel = PhotoTile.label(forPhoto: path)
            photo.contentMode = .aspectFit
            photo.backgroundColor = .black
            return photo
        }
    }

    /// The photo opened in the pager, if one is. - Thread: main
    var openedPhoto: Int? { screen.pager?.currentPage }

    /// Opens `item` in a pager over the screen. - Thread: main
    func openPhoto(_ item: Int) {
        guard screen.pager == nil else { return }
        let pager = PagerNode()
        pager.debugName = "photo-pager"
        pager.backgroundColor = .black
        screen.pager = pager
        screen.addSubnode(pager)
        pager.frame = screen.bounds
        pager.dataSource = self
        pager.scrollToPage(item, animated: false)
    }

    /// Closes the pager, leaving the grid with the photo it showed in view. - Thread: main
    func closePhoto() {
        guard let pager = screen.pager else { return }
        let item = pager.currentPage
        pager.removeFromSupernode()
        screen.pager = nil
        if item < itemCount { screen.grid.scroll(toItem: item, at: .visible, animated: false) }
    }

    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        if let pager = screen.pager {
            if key == .escape {
                closePhoto()
                return true
            }
            return pager.handleKey(key, modifiers: modifiers)
        }
        return super.handleKey(key, modifiers: modifiers)
    }
}
