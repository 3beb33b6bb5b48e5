import Tessera

/// One row: a bold title over a line of grey detail. Rows are made on background threads, so a node
/// is `Sendable`; Swift asks each subclass to say so again.
final class RowNode: Node, @unchecked Sendable {
    let title: TextNode
    let detail: TextNode

    init(row: Int) {
        title = TextNode("Row \(row + 1)",
                         attributes: TextAttributes(font: .system(size: 17, bold: true)))
        detail = TextNode("Made and measured on a background thread",
                          attributes: TextAttributes(color: Color(rgb: 0x777777)))
        super.init()
        automaticallyManagesSubnodes = true  // the nodes the layout places become subnodes
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 4) { title; detail }.inset(12)
    }
}

/// The screen: a list of 500 rows, and where they come from. The list asks for a row when it comes
/// near the screen and runs the block it gets on a background thread.
final class RowsController: NodeController, ListDataSource {
    init() {
        let list = ListNode()
        super.init(node: list)
        list.dataSource = self
    }

    func numberOfRows(in list: ListNode) -> Int { 500 }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { RowNode(row: row) }
    }
}

Application.run(.init(title: "First app")) { RowsController() }
