import Tessera

/// A pushed screen: the note whole. The navigation controller slides it in over the list and back
/// out on Escape or `popController(animated:)`; the list keeps its place, and the search field its
/// focus, for when it comes back.
final class NoteController: NodeController {
    init(note: Note) {
        let title = TextNode(note.title, attributes: TextAttributes(font: .system(size: 22, bold: true)))
        let body = TextNode(note.body)
        super.init(node: NoteScreenNode(title: title, body: body))
    }

    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard key == .escape else { return false }
        _ = navigationController?.popController(animated: true)
        return true
    }
}

final class NoteScreenNode: Node, @unchecked Sendable {
    let title: TextNode
    let body: TextNode

    init(title: TextNode, body: TextNode) {
        self.title = title
        self.body = body
        super.init()
        backgroundColor = .white
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 12, alignItems: .stretch) { title; body }.inset(EdgeInsets(all: 16))
    }
}
