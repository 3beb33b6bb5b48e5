import Tessera

/// A collection's data: a grid of coloured tiles, three to a line. The collection asks for an item
/// when it comes near the screen and runs the block it gets on a background thread.
final class PhotosController: NodeController, CollectionDataSource {
    private let colors: [Color] = (0..<60).map { Color(rgb: UInt32(0x204080 + $0 * 0x030201)) }
    private let grid = CollectionNode()

    init() {
        super.init(node: grid)
        grid.collectionLayout = GridLayout(columns: .fixed(3), spacing: 2, lineSpacing: 2, itemAspectRatio: 1)
        grid.dataSource = self  // held weakly, as a list's is
        grid.onSelectItem = { item in print("tile \(item) tapped") }
    }

    func numberOfItems(in collection: CollectionNode) -> Int { colors.count }

    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock {
        let color = colors[item]
        return {
            let tile = Node()
            tile.backgroundColor = color
            return tile
        }
    }
}
