import Tessera
import Foundation

/// A row of the photo grid: photos aspect-filled in square tiles, each column rounding its corners a
/// different way (baked into the bitmap, corner pieces, clipped by the compositor).
final class PhotoRowNode: Node, @unchecked Sendable {
    static let columns = 3
    static let spacing = 4.0
    let tiles: [ImageNode]

    init(paths: [String], row: Int) {
        tiles = paths.enumerated().map { column, path in
            let tile = ImageNode()
            tile.source = .file(path)
            tile.contentMode = .aspectFill
            tile.emptyColor = Color(rgb: 0x2A323C)
            switch (row + column) % 3 {
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
        super.init()
        isTransactionContainer = true
        tiles.forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(spacing: Self.spacing) {
            tiles.map { $0.ratio(1).flexGrow(1).flexBasis(.points(0)) }
        }
        .inset(EdgeInsets(top: Self.spacing / 2, left: Self.spacing, bottom: Self.spacing / 2, right: Self.spacing))
    }
}

/// Every photo of the assets, repeated into a long grid.
@MainActor
final class PhotosController: ListScreenController, ListDataSource {
    let paths: [String]
    let rowCount: Int

    init(data: ChatData, rows: Int = 60) throws {
        paths = try AssetLocator.photoNames(in: data.assets).map { data.photoPath("photos/" + $0) }
        rowCount = rows
        let list = ListNode()
        super.init(list: list, node: list, debugName: "photos", backgroundColor: Color(rgb: 0x12161B), estimatedRowHeight: 140)
        list.dataSource = self
    }

    func numberOfRows(in list: ListNode) -> Int { paths.isEmpty ? 0 : rowCount }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let columns = PhotoRowNode.columns
        let rowPaths = (0..<columns).map { paths[(row * columns + $0) % paths.count] }
        return { PhotoRowNode(paths: rowPaths, row: row) }
    }
}
