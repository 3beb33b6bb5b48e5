import Compositor
import Foundation
import NodeRuntime
import Synchronization

/// One chat in the list: avatar, title with marks and time, a two-line preview, an unread badge.
/// A transaction container, so it appears whole.
final class ChatRowNode: Node, NodeDrawing {
    static let height = 76.0

    let avatar: Node
    let title: TextNode
    let time: TextNode
    let preview: TextNode
    let badge: Node?
    let marks: [IconNode]

    /// Everything a row shows, captured on the UI thread when the list asks for the row.
    struct Model: Sendable {
        var chat: ChatData.Chat
        var row: Int
        var avatarPath: String?
        /// A distinct cache key per row (benchmarks: no decode-cache hits across rows).
        var distinctAvatar: Bool
    }

    init(_ model: Model) {
        let chat = model.chat
        if let path = model.avatarPath {
            let image = ImageNode()
            image.source = .file(path)
            if model.distinctAvatar, let bytes = ChatRowNode.avatarBytes(path) {
                image.source = .data(bytes, name: "avatar-\(model.row)")
            }
            image.imageCornerRadii = CornerRadii(26)
            image.emptyColor = Color(rgb: 0xE4E7EC)
            image.contentsCrossFadeDuration = 0
            avatar = image
        } else {
            let circle = Node()
            circle.backgroundColor = Theme.avatarColors[chat.title.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xFFFF } % Theme.avatarColors.count]
            circle.cornerRadius = 26
            circle.cornerRoundingMode = .compositorClip
            let initials = TextNode(chat.initials, attributes: Theme.text(19, bold: true, color: .white))
            circle.addSubnode(initials)
            circle.isTransactionContainer = false
            avatar = circle
        }
        title = TextNode(chat.title, attributes: Theme.text(15, bold: true))
        title.maximumNumberOfLines = 1
        let last = chat.lastMessage
        time = TextNode(last.map { Format.clockTime($0.time) } ?? "", attributes: Theme.text(12, color: Theme.secondary))
        var previewText = AttributedText()
        if chat.group, let last {
            previewText.append((last.out ? "You" : last.author) + ": ", attributes: Theme.text(14, color: Theme.title))
        }
        let body = last.map { $0.text.isEmpty ? "Photo" : $0.text.replacingOccurrences(of: "\n", with: " ") } ?? ""
        previewText.append(body, attributes: Theme.text(14, color: Theme.secondary))
        preview = TextNode(attributedText: previewText)
        preview.maximumNumberOfLines = 2
        preview.truncationMode = .end
        if chat.unread > 0 {
            let capsule = Node()
            capsule.backgroundColor = chat.muted ? Theme.mutedBadge : Theme.accent
            capsule.cornerRadius = 10
            capsule.cornerRoundingMode = .compositorClip
            let count = TextNode(Format.compactCount(chat.unread), attributes: Theme.text(12, bold: true, color: .white))
            capsule.addSubnode(count)
            badge = capsule
        } else {
            badge = nil
        }
        var marks: [IconNode] = []
        if chat.muted { marks.append(IconNode(.muted)) }
        if chat.pinned { marks.append(IconNode(.pin)) }
        self.marks = marks
        super.init()
        isTransactionContainer = true
        // One opaque bitmap per row: the worker flattens avatar, texts and badge, and the compositor
        // copies a single texture without blending.
        shouldRasterizeDescendants = true
        for node in [avatar, title, time, preview] { addSubnode(node) }
        marks.forEach { addSubnode($0) }
        if let badge { addSubnode(badge) }
    }

    /// Avatar bytes, read once per file for the whole process.
    private static let avatarFiles = Mutex<[String: [UInt8]]>([:])
    static func avatarBytes(_ path: String) -> [UInt8]? {
        if let cached = avatarFiles.withLock({ $0[path] }) { return cached }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        avatarFiles.withLock { $0[path] = bytes }
        return bytes
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let badgeSpec: (any LayoutElement)? = badge.map { capsule in
            let count = capsule.subnodes[0]
            return count.inset(EdgeInsets(top: 2, left: 7, bottom: 2, right: 7)).background(capsule).minWidth(20)
        }
        let avatarSpec: any LayoutElement = avatar.subnodes.first.map { initials in
            avatar.size(Size(width: 52, height: 52)).overlay(initials.centered())
        } ?? avatar.size(Size(width: 52, height: 52))
        return HStack(spacing: 12, alignItems: .center) {
            avatarSpec
            VStack(spacing: 3) {
                HStack(spacing: 4, alignItems: .center) {
                    title.flexShrink(1)
                    marks
                    Spacer()
                    time
                }
                HStack(spacing: 8, alignItems: .start) {
                    preview.flexShrink(1).flexGrow(1)
                    badgeSpec
                }
            }.flexGrow(1).flexShrink(1)
        }
        .inset(EdgeInsets(top: 10, left: 12, bottom: 10, right: 12))
        .height(.points(Self.height))
    }

    // The row draws its own white background and separator line.
    func drawParameters() -> Bool { true }
    static func draw(_ parameters: Bool, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: Theme.background)
        context.fill(Rect(x: 76, y: info.bounds.height - 0.5, width: info.bounds.width - 76, height: 0.5), color: Theme.separator)
    }
}

/// The chat list.
/// The search bar above the chat list: a single-line field in a rounded pill.
final class SearchBarNode: Node {
    let field = EditableTextNode(attributes: Theme.text(15), placeholder: "Search")
    let pill = Theme.makeFieldPill()

    override init() {
        super.init()
        backgroundColor = Theme.background
        field.isMultiline = false
        field.maximumVisibleLines = 1
        field.debugName = "search"
        addSubnode(pill)
        addSubnode(field)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        field.flexShrink(0).inset(EdgeInsets(top: 8, left: 14, bottom: 8, right: 14)).background(pill)
            .inset(EdgeInsets(top: 8, left: 10, bottom: 6, right: 10))
    }
}

/// The Chats screen: the search bar over the list.
final class ChatsScreenNode: Node {
    let search = SearchBarNode()
    let list: ListNode

    init(list: ListNode) {
        self.list = list
        super.init()
        addSubnode(search)
        addSubnode(list)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            search.flexShrink(0)
            list.flexGrow(1).flexShrink(1)
        }
    }
}

final class ChatsController: NodeController, ListDataSource, ListScreen {
    let data: ChatData
    let rows: Int
    let list = ListNode()
    let screen: ChatsScreenNode
    let distinctAvatars: Bool
    var openChat: ((ChatData.Chat) -> Void)?
    /// The rows the search matches, in order; nil while the search is empty. (main thread only)
    private(set) var matchingRows: [Int]?
    /// Each chat's searchable text (title and last message, folded), by chat id. (main thread only)
    private var searchableText: [Int: String] = [:]

    /// The search field. (main thread only)
    var searchField: EditableTextNode { screen.search.field }

    init(data: ChatData, rows: Int, distinctAvatars: Bool = false) {
        self.data = data
        self.rows = rows
        self.distinctAvatars = distinctAvatars
        screen = ChatsScreenNode(list: list)
        super.init(node: screen)
        list.debugName = "chats"
        list.estimatedRowHeight = ChatRowNode.height
        list.backgroundColor = Theme.background
        list.dataSource = self
        list.onSelectRow = { [weak self] row in
            guard let self else { return }
            self.openChat?(self.data.chat(forRow: self.dataRow(row)))
        }
        searchField.onChange = { [weak self] query in self?.filter(query) }
    }

    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        list.handleKey(key, modifiers: modifiers)
    }

    /// Shows only the rows whose chat title or last message contains `query` (ignoring case and
    /// accents); all rows when it is blank. - Thread: main
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
    }

    private static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// The dataset row shown at list row `row`.
    func dataRow(_ row: Int) -> Int { matchingRows.map { $0[row] } ?? row }

    func numberOfRows(in list: ListNode) -> Int { matchingRows?.count ?? rows }

    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { ChatRowNode.height }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let dataRow = dataRow(row)
        let chat = data.chat(forRow: dataRow)
        let model = ChatRowNode.Model(chat: chat, row: dataRow, avatarPath: chat.avatar.map { data.photoPath($0) },
                                      distinctAvatar: distinctAvatars)
        return { ChatRowNode(model) }
    }
}
