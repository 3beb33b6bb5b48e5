import Tessera
import Foundation

/// The search bar above the chat list: the kit's search field (magnifier, placeholder, clear button).
final class SearchBarNode: Node, @unchecked Sendable {
    let search = SearchFieldNode(placeholder: "Search", attributes: Palette.text(15))
    /// The field inside the search field.
    var field: EditableTextNode { search.textField }

    override init() {
        super.init()
        themedBackgroundColor = Palette.background
        search.textField.debugName = "search"
        addSubnode(search)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        search.inset(EdgeInsets(top: 8, left: 10, bottom: 6, right: 10))
    }
}

/// The Chats screen: the search bar over the list of chats; a click on a chat opens it.
@MainActor
final class ChatsController: ListScreenController, ListDataSource {
    let data: ChatData
    let rows: Int
    let screen: BarListScreenNode<SearchBarNode>
    var openChat: ((ChatData.Chat) -> Void)?
    /// How rows load their avatars (set before the list asks for rows). (main thread only)
    var rowConfiguration = ChatRowNode.Configuration()
    /// The rows the search matches, in order; nil while the search is empty. (main thread only)
    private(set) var matchingRows: [Int]?
    /// Each chat's searchable text (title and last message, folded), by chat id. (main thread only)
    private var searchableText: [Int: String] = [:]

    /// The search field. (main thread only)
    var searchField: EditableTextNode { screen.bar.field }

    init(data: ChatData, rows: Int) {
        self.data = data
        self.rows = rows
        let list = ListNode()
        screen = BarListScreenNode(list: list, bar: SearchBarNode(), at: .top)
        super.init(list: list, node: screen, debugName: "chats", backgroundColor: Palette.background,
                   estimatedRowHeight: ChatRowNode.height)
        list.dataSource = self
        list.onSelectRow = { [weak self] row in
            guard let self else { return }
            self.openChat?(self.data.chat(forRow: self.dataRow(row)))
        }
        screen.bar.search.onTextChange = { [weak self] query in self?.filter(query) }
    }

    /// Shows only the rows whose chat title or last message contains `query` (ignoring case and
    /// accents); all rows when it is blank. - Thread: main
    @MainActor
    func filter(_ query: String) {
        let folded = Self.fold(query.trimmingCharacters(in: .whitespaces))
        if folded.isEmpty {
            matchingRows = nil
        } else {
            var matchesByChat: [Int: Bool] = [:]
            matchingRows = (0..<rows).filter { row in
                let chat = data.chat(forRow: row)
                if let known = matchesByChat[chat.id] { return known }
                let text = searchableText[chat.id] ?? {
                    let made = Self.fold(chat.title + " " + (chat.messages.last?.text ?? ""))
                    searchableText[chat.id] = made
                    return made
                }()
                let matches = text.contains(folded)
                matchesByChat[chat.id] = matches
                return matches
            }
        }
        list.reloadData()
        GalleryApp.report("gallery: search \"\(query)\" shows \(matchingRows?.count ?? rows) chats")
    }

    private static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// The chat of the row that is `focused` or holds it (the host's focused node), if any.
    /// - Thread: main
    func chat(holding focused: Node?) -> ChatData.Chat? {
        guard var node = focused else { return nil }
        while list.row(of: node) == nil, let parent = node.supernode { node = parent }
        return list.row(of: node).map { data.chat(forRow: dataRow($0)) }
    }

    /// The dataset row shown at list row `row`.
    func dataRow(_ row: Int) -> Int { matchingRows.map { $0[row] } ?? row }

    func numberOfRows(in list: ListNode) -> Int { matchingRows?.count ?? rows }

    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { ChatRowNode.scaledHeight }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let model = ChatRowNode.Model(data: data, row: dataRow(row), configuration: rowConfiguration)
        return { ChatRowNode(model) }
    }
}
