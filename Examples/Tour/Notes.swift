import Tessera

/// A note: what the list shows and the detail screen opens.
struct Note: Sendable {
    let title: String
    let body: String
}

/// One row of the list: the note's title over its first line. Made on a background thread.
final class NoteRowNode: Node, @unchecked Sendable {
    let title: TextNode
    let preview: TextNode

    init(note: Note) {
        title = TextNode(note.title, attributes: TextAttributes(font: .system(size: 16, bold: true)))
        preview = TextNode(note.body, attributes: TextAttributes(color: Color(rgb: 0x777777)))
        super.init()
        automaticallyManagesSubnodes = true
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 2) { title; preview }.inset(EdgeInsets(top: 8, left: 12, bottom: 8, right: 12))
    }
}

/// The notes screen: a search field above a list. A tap on a row pushes the note's screen; typing
/// filters the rows and reloads the list.
final class NotesController: NodeController, ListDataSource {
    private let all: [Note]
    private var shown: [Note]
    private let screen: NotesScreenNode

    init(notes: [Note]) {
        all = notes
        shown = notes
        screen = NotesScreenNode()
        super.init(node: screen)
        // The list holds its data source weakly: the controller, which lives as long as the screen, is it.
        screen.list.dataSource = self
        // Row selection: called with the row under a tap that did not scroll.
        screen.list.onSelectRow = { [weak self] row in
            guard let self, row < self.shown.count else { return }
            self.navigationController?.push(NoteController(note: self.shown[row]), animated: true)
        }
        // A text field's callbacks: `onChange` after each edit, `onSubmit` on Enter.
        screen.search.onChange = { [weak self] text in self?.filter(by: text) }
        screen.search.onSubmit = { [weak self] _ in
            guard let self, let first = self.shown.first else { return }
            self.navigationController?.push(NoteController(note: first), animated: true)
        }
    }

    private func filter(by text: String) {
        shown = text.isEmpty ? all : all.filter { $0.title.lowercased().contains(text.lowercased()) }
        // Reload: the row count is read again and every row made again; the first visible row stays.
        screen.list.reloadData()
    }

    func numberOfRows(in list: ListNode) -> Int { shown.count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let note = shown[row]
        return { NoteRowNode(note: note) }
    }
}

/// The field and the list, the list taking the height the field leaves.
final class NotesScreenNode: Node, @unchecked Sendable {
    // A placeholder shows while the field is empty.
    let search = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Search notes")
    let list = ListNode()

    override init() {
        super.init()
        backgroundColor = .white
        addSubnode(search)
        addSubnode(list)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        // A list has no height of its own: `flexGrow(1)` gives it the rest of the stack.
        VStack(alignItems: .stretch) {
            search.inset(EdgeInsets(all: 10))
            list.flexGrow(1)
        }
    }
}
