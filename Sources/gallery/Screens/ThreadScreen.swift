import Tessera
import Foundation

/// A row of a chat thread: a day separator or one message bubble.
enum ThreadItem: Sendable {
    case day(String)
    case message(ChatData.Message, replyTo: ChatData.Message?, group: Bool)
}

/// A day pill, centred.
final class DaySeparatorNode: Node, @unchecked Sendable {
    let label: TextNode
    let pill = Palette.makeFieldPill()

    init(_ day: String) {
        label = TextNode(day, attributes: Palette.text(12, bold: true, fixed: .white))
        super.init()
        pill.themedBackgroundColor = Palette.dayPill
        pill.cornerRadius = 11
        pill.cornerRoundingMode = .compositorClip
        addSubnode(pill)
        addSubnode(label)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        label.inset(EdgeInsets(top: 3, left: 10, bottom: 3, right: 10)).background(pill)
            .centered(.x).inset(EdgeInsets(top: 8, left: 0, bottom: 8, right: 0))
    }
}

/// One message: a bubble with an optional reply header, an optional photo, the text and the time,
/// on the left (incoming) or right (outgoing), with a tail on the bottom corner.
final class MessageNode: Node, @unchecked Sendable {
    let bubble = ImageNode()
    let author: TextNode?
    let replyBar: Node?
    let replyAuthor: TextNode?
    let replyText: TextNode?
    let photo: ImageNode?
    /// Over a photo that comes by URL, while it loads.
    let photoProgress: ProgressIndicatorNode?
    let text: TextNode?
    let time: TextNode
    let outgoing: Bool
    /// What a screen reader reads: who, what (or "Photo"), what it replies to, and when.
    let spokenLabel: String

    /// A message is one element (its texts are its label; a link in it stays reachable).
    override var isAccessibilityElementByDefault: Bool { true }
    override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .listItem, label: spokenLabel, exposesChildren: false)
    }

    /// `photoPath`: the photo's file; with `served`, a photo of the dataset's is fetched from the
    /// asset server instead (a progress indicator shows over it until it has come).
    init(_ message: ChatData.Message, replyTo: ChatData.Message?, group: Bool, photoPath: String?,
         served: (url: URL, loader: NetworkImageLoader)? = nil) {
        outgoing = message.out
        let tint = outgoing ? Palette.outgoingMeta : Palette.accent
        bubble.emptyColor = Palette.color(outgoing ? Palette.outgoingBubble : Palette.incomingBubble)
        bubble.imageCornerRadii = CornerRadii(14)
        bubble.bubbleTail = BubbleTail(side: outgoing ? .right : .left, width: 6)
        author = group && !outgoing ? TextNode(message.author, attributes: Palette.text(13, bold: true, color: tint)) : nil
        if let replyTo {
            let bar = Node()
            bar.themedBackgroundColor = tint
            bar.cornerRadius = 1.5
            replyBar = bar
            replyAuthor = TextNode(replyTo.out ? "You" : replyTo.author, attributes: Palette.text(13, bold: true, color: tint))
            let quoted = TextNode(replyTo.text.isEmpty ? "Photo" : replyTo.text.replacingOccurrences(of: "\n", with: " "),
                                  attributes: Palette.text(13, color: Palette.title))
            quoted.maximumNumberOfLines = 1
            replyText = quoted
        } else {
            replyBar = nil; replyAuthor = nil; replyText = nil
        }
        if let photoPath {
            let image = ImageNode()
            if let served {
                image.networkLoader = served.loader
                image.source = .url(served.url)
                let progress = ProgressIndicatorNode(isIndeterminate: true)
                progress.accessibilityLabel = "Loading photo"
                photoProgress = progress
                image.loadStateHandler = { [weak progress] state in
                    progress?.isHidden = true
                    GalleryApp.report("gallery: photo \(served.url.lastPathComponent) \(state == .loaded ? "loaded" : "failed")")
                }
            } else {
                image.source = .file(photoPath)
                photoProgress = nil
            }
            image.contentMode = .aspectFill
            image.imageCornerRadii = CornerRadii(10)
            image.emptyColor = Palette.color(Palette.photoPlaceholder)
            photo = image
        } else {
            photo = nil
            photoProgress = nil
        }
        text = message.text.isEmpty ? nil : TextNode(message.text, attributes: Palette.text(15))
        time = TextNode(Format.clockTime(message.time),
                        attributes: Palette.text(11, color: outgoing ? Palette.outgoingMeta : Palette.secondary))
        var words = [outgoing ? "You" : message.author]
        if photoPath != nil { words.append("photo") }
        if !message.text.isEmpty { words.append(message.text) }
        if let replyTo { words.append("in reply to " + (replyTo.out ? "you" : replyTo.author)) }
        words.append(Format.clockTime(message.time))
        spokenLabel = words.joined(separator: ", ")
        super.init()
        isTransactionContainer = true
        dependOnAppearance(.colors)
        addSubnode(bubble)
        for node in [author, replyBar, replyAuthor, replyText, photo, photoProgress, text, time].compactMap({ $0 }) { addSubnode(node) }
    }

    /// The bubble and the photo's placeholder are image nodes' fixed colours: they follow here.
    override func appearanceDidChange(_ change: AppearanceChange) {
        if change.contains(.colors) {
            bubble.emptyColor = Palette.color(outgoing ? Palette.outgoingBubble : Palette.incomingBubble)
            photo?.emptyColor = Palette.color(Palette.photoPlaceholder)
        }
        super.appearanceDidChange(change)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let width = constrainedSize.max.width.isFinite ? constrainedSize.max.width : 480
        let maxBubble = min(460, width * 0.78)
        let photoSpec: (any LayoutElement)? = photo.map { photo -> any LayoutElement in
            let sized = photo.size(Size(width: min(280, maxBubble - 20), height: 180))
            // A bar across the photo's lower part while it comes by URL.
            guard let photoProgress else { return sized }
            return sized.overlay(photoProgress.size(Size(width: 120, height: 4)).centered())
        }
        let replySpec: (any LayoutElement)? = replyBar.flatMap { bar in
            guard let replyAuthor, let replyText else { return nil }
            return HStack(spacing: 6, alignItems: .stretch) {
                bar.width(3)
                VStack(spacing: 1) { replyAuthor; replyText.flexShrink(1) }.flexShrink(1)
            }
        }
        let content = VStack(spacing: 4) {
            author
            replySpec
            photoSpec
            text?.flexShrink(1)
            time.alignSelf(.end)
        }
        // The tail reaches into the side margin: the content stays inside the body.
        let insets = EdgeInsets(top: 7, left: outgoing ? 10 : 16, bottom: 6, right: outgoing ? 16 : 10)
        let bubbleSpec = content.inset(insets).background(bubble).maxWidth(.points(maxBubble))
        return HStack(justifyContent: outgoing ? .end : .start) { bubbleSpec }
            .inset(EdgeInsets(top: 2, left: 8, bottom: 2, right: 8))
    }
}

/// The message composer under a thread: a button that attaches a photo (through the desktop's file
/// chooser) and a field that grows up to six lines; Enter sends, Shift+Enter adds a line.
final class ComposerNode: Node, @unchecked Sendable {
    let field = EditableTextNode(attributes: Palette.text(15), placeholder: "Message")
    let separator = Node()
    let pill = Palette.makeFieldPill()
    let attach = ButtonNode(title: "+", attributes: Palette.text(22, color: Palette.accent))

    override init() {
        super.init()
        themedBackgroundColor = Palette.background
        separator.themedBackgroundColor = Palette.separator
        Palette.restyle(field)
        dependOnAppearance(.colors)
        field.maximumVisibleLines = 6
        field.debugName = "composer"
        attach.contentInsets = EdgeInsets(top: 2, left: 6, bottom: 2, right: 6)
        attach.accessibilityLabel = "Attach a photo"
        addSubnode(separator)
        addSubnode(pill)
        addSubnode(field)
        addSubnode(attach)
    }

    /// The field's caret keeps a fixed colour: it follows the appearance here.
    override func appearanceDidChange(_ change: AppearanceChange) {
        Palette.restyle(field)
        super.appearanceDidChange(change)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack {
            separator.height(0.5)
            HStack(spacing: 4, alignItems: .center) {
                attach
                Palette.fieldInPill(field, pill).flexGrow(1).flexShrink(1)
            }.inset(EdgeInsets(top: 6, left: 4, bottom: 6, right: 10))
        }
    }
}

/// A thread: a chat's messages with day separators, in a list that stacks from the bottom, and the
/// composer under it.
@MainActor
final class ThreadController: ListScreenController, ListDataSource, ListBatchFetchingDelegate {
    let chat: ChatData.Chat
    let data: ChatData
    let screen: BarListScreenNode<ComposerNode>
    /// The chat's title over the thread, with a back button to the chat list when the thread was
    /// opened from it. (set once)
    let navigationBar: NavigationBarNode
    private(set) var items: [ThreadItem]
    /// The history above what the list holds, loaded a batch at a time as the user scrolls up (the
    /// list's batch fetching at its top). (main thread only)
    private var olderItems: [ThreadItem]
    /// Items the thread starts with, and items each batch of history adds.
    static let firstBatch = 40, olderBatch = 30
    /// The time a sent message gets ("2026-11-14T04:35"); the current time unless a test fixes it.
    /// (main thread only)
    var clock: () -> String = Format.now
    /// The composer's field. (main thread only)
    var composer: EditableTextNode { screen.bar.field }

    init(chat: ChatData.Chat, data: ChatData) {
        self.chat = chat
        self.data = data
        var items: [ThreadItem] = []
        var lastDay = ""
        let byID = Dictionary(chat.messages.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for message in chat.messages {
            let day = Format.day(message.time)
            if day != lastDay { items.append(.day(day)); lastDay = day }
            items.append(.message(message, replyTo: message.replyTo.flatMap { byID[$0] }, group: chat.group))
        }
        let shown = min(items.count, Self.firstBatch)
        self.items = Array(items.suffix(shown))
        olderItems = Array(items.dropLast(shown))
        let list = ListNode()
        navigationBar = NavigationBarNode(title: chat.title, backTitle: "Chats")
        screen = BarListScreenNode(list: list, bar: ComposerNode(), at: .bottom, header: navigationBar)
        super.init(list: list, node: screen, debugName: "thread-\(chat.id)", backgroundColor: Palette.chatBackground,
                   estimatedRowHeight: 64)
        list.stacksFromBottom = true
        list.dataSource = self
        list.batchFetchingEdges = [.top]
        list.leadingScreensForBatching = 1
        list.batchFetchingDelegate = self
        composer.onSubmit = { [weak self] text in self?.send(text) }
        navigationBar.onBack = { [weak self] in self?.navigationController?.popController(animated: true) }
        screen.bar.attach.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.attachPhoto() }
        list.setContextMenu { [weak self] point in self?.contextMenu(at: point) }
        // Images dragged from a file manager attach; text dragged from anywhere goes into the field.
        let target = DropTarget(accepting: [.files, .text]) { [weak self] items, _ in self?.drop(items) ?? false }
        target.onTargetedChange = { [weak bar = screen.bar] targeted in
            bar?.themedBackgroundColor = targeted ? Palette.highlight : Palette.background
            GalleryApp.report("gallery: composer \(targeted ? "targeted" : "untargeted") by a drag")
        }
        screen.bar.dropTarget = target
    }

    /// The back button shows when there is a screen to go back to (the chat list).
    override func viewWillAppear() {
        super.viewWillAppear()
        navigationBar.showsBackButton = (navigationController?.viewControllers.count ?? 0) > 1
    }

    /// Alt+Left goes back to the chat list; other keys scroll the list.
    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        navigationBar.handleKey(key, modifiers: modifiers) || super.handleKey(key, modifiers: modifiers)
    }

    /// The image files extensions a drop on the composer attaches.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "webp", "gif", "bmp"]

    /// Files and text dropped on the composer: images are sent as photos, other files are refused
    /// (said on standard output), text is added to the field. True when something was taken.
    /// - Thread: main
    @MainActor
    func drop(_ items: [DroppedItem]) -> Bool {
        var took = false
        for path in items.files {
            let name = (path as NSString).lastPathComponent
            guard Self.imageExtensions.contains((name as NSString).pathExtension.lowercased()) else {
                GalleryApp.report("gallery: dropped file is not an image: \(name)")
                continue
            }
            sendPhoto(at: path)
            took = true
        }
        let texts = items.texts
        if !texts.isEmpty {
            composer.text += texts.joined(separator: "\n")
            GalleryApp.report("gallery: text dropped on the composer (\(texts.joined(separator: "\n").count) characters)")
            took = true
        }
        return took
    }

    // MARK: A message's context menu

    /// The menu of the message under `point` (the list's coordinates): Reply, Copy, Delete. Nil over a
    /// day's separator or nothing. - Thread: main
    @MainActor
    func contextMenu(at point: Point) -> Menu? {
        guard let row = list.row(at: point), row < items.count, case let .message(message, _, _) = items[row] else { return nil }
        let id = message.id
        return Menu("Message") {
            MenuItem("Reply", shortcut: KeyboardShortcut("Ctrl+R")) { [weak self] in self?.reply(to: id) }
            MenuItem("Copy", shortcut: KeyboardShortcut("Ctrl+C"), isEnabled: !message.text.isEmpty) { [weak self] in
                self?.copy(id)
            }
            MenuItem.separator
            MenuItem("Delete…") { [weak self] in self?.confirmDelete(id) }
        }
    }

    /// The row of the message `id`, if it is loaded.
    private func row(ofMessage id: Int) -> Int? {
        items.firstIndex { if case let .message(message, _, _) = $0 { return message.id == id } else { return false } }
    }

    private func message(_ id: Int) -> ChatData.Message? {
        guard let row = row(ofMessage: id), case let .message(message, _, _) = items[row] else { return nil }
        return message
    }

    /// Starts a reply: the composer takes the focus with the message quoted in its placeholder.
    @MainActor
    func reply(to id: Int) {
        guard let message = message(id) else { return }
        let who = message.out ? "yourself" : message.author
        composer.placeholder = "Reply to \(who)…"
        node.nodeHost?.focus(composer)
        GalleryApp.report("gallery: replying to message \(id)")
    }

    /// Puts the message's text on the clipboard.
    @MainActor
    func copy(_ id: Int) {
        guard let message = message(id), !message.text.isEmpty else { return }
        node.nodeHost?.compositor.textInputPlatform?.setClipboardText(message.text)
        GalleryApp.report("gallery: copied message \(id) (\(message.text.count) characters)")
    }

    /// Asks before deleting the message, then takes its row out.
    @MainActor
    func confirmDelete(_ id: Int) {
        guard let host = node.nodeHost else { return }
        host.presentAlert(Alert(title: "Delete message?", message: "It is deleted for you only. This cannot be undone.",
                                buttons: [.cancel("Cancel"), .destructive("Delete") { [weak self] in self?.delete(id) }]))
    }

    /// Takes the message's row out of the thread.
    @MainActor
    func delete(_ id: Int) {
        guard let row = row(ofMessage: id) else { return }
        items.remove(at: row)
        list.deleteRows([row], animated: true)
        GalleryApp.report("gallery: deleted message \(id)")
    }

    /// Where older messages come from when the gallery serves its assets (`--serve-assets`); nil:
    /// from the dataset in memory. (main thread only)
    var servedHistory: ServedHistory?

    /// Loads the next batch of history above the rows shown, without moving what is on screen.
    func list(_ list: ListNode, beginBatchFetch context: ListBatchFetchContext) {
        if let servedHistory { return servedHistory.fetchOlder(for: self, context: context) }
        guard !olderItems.isEmpty else {
            context.complete(loadedMore: false)
            return
        }
        let batch = olderItems.suffix(Self.olderBatch)
        olderItems.removeLast(batch.count)
        insertOlderItems(Array(batch))
        GalleryApp.report("gallery: loaded \(batch.count) older items, \(olderItems.count) left")
        context.complete(loadedMore: !olderItems.isEmpty)
    }

    /// Puts `batch` above the rows shown without moving what is on screen. (main thread only)
    func insertOlderItems(_ batch: [ThreadItem]) {
        items.insert(contentsOf: batch, at: 0)
        list.insertRows(Array(0..<batch.count), anchor: .firstVisibleRow)
    }

    /// Items of history not loaded yet. (main thread only)
    var olderItemCount: Int { olderItems.count }

    /// Adds an outgoing message at the bottom (the list stays pinned there and the bubble slides in)
    /// and empties the composer. Blank text sends nothing. With `replyDelay`, the other side answers
    /// that many seconds later (`receive`). - Thread: main
    @MainActor
    func send(_ text: String) {
        let body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !body.isEmpty else { return }
        append(out: true, author: "Me", text: body, photo: nil)
        composer.text = ""
        GalleryApp.report("gallery: message sent (\(body.count) characters)")
        if let delay = replyDelay {
            let reply = "Got it: “\(body.prefix(40))”"
            Task { @MainActor [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                self?.receive(reply)
            }
        }
    }

    /// Asks for a photo with the desktop's file chooser (the in-app one without a portal) and sends
    /// each file chosen as a photo message. - Thread: main
    @MainActor
    func attachPhoto() {
        chooseFiles(FileChooserOptions(title: "Attach a Photo", acceptLabel: "Attach", filters: [.images])) { [weak self] result in
            switch result {
            case .success(let urls?): for url in urls { self?.sendPhoto(at: url.path) }
            case .success(nil): GalleryApp.report("gallery: attaching cancelled")
            case .failure(let error): GalleryApp.report("gallery: no photo attached: \(error)")
            }
        }
    }

    /// Sends the image file at `path` as a photo message. - Thread: main
    @MainActor
    func sendPhoto(at path: String) {
        append(out: true, author: "Me", text: "", photo: path)
        GalleryApp.report("gallery: photo sent (\((path as NSString).lastPathComponent))")
    }

    /// A message from the other side: added at the bottom and, while the window does not have the
    /// focus, posted as a desktop notification. - Thread: main
    @MainActor
    func receive(_ text: String) {
        let author = chat.messages.last { !$0.out }?.author ?? chat.title
        append(out: false, author: author, text: text, photo: nil)
        GalleryApp.report("gallery: message received")
        guard !windowIsActive() else { return }
        notify(DesktopNotification(id: "chat-\(chat.id)", title: author, body: text,
                                   buttons: [.init(label: "Mark as Read", action: "mark-read")], defaultAction: "open"))
    }

    /// Seconds until the other side answers a message sent; nil: it does not. (main thread only)
    var replyDelay = ThreadController.defaultReplyDelay
    /// `replyDelay` of threads made from now on (`--reply-after`). (main thread only)
    static var defaultReplyDelay: Double?
    /// Whether the window has the keyboard focus (no notification then); true without a window.
    /// (main thread only)
    var windowIsActive: () -> Bool = { Application.current?.compositor.window?.windowPlacement.state.isActive ?? true }
    /// Posts a notification (the application's portal). (main thread only)
    var notify: (DesktopNotification) -> Void = { notification in
        Application.current?.postNotification(notification) { result in
            if case .failure(let error) = result { GalleryApp.report("gallery: notification not posted: \(error)") }
        }
    }
    /// Asks for files (the application's portal). (main thread only)
    var chooseFiles: (FileChooserOptions, @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) -> Void = { options, completion in
        guard let app = Application.current else { return completion(.failure(.stopped)) }
        app.chooseFiles(options, completion: completion)
    }

    /// Adds a message at the bottom, under a day separator when the day changed. - Thread: main
    @MainActor
    private func append(out: Bool, author: String, text: String, photo: String?) {
        let lastID = items.reversed().lazy.compactMap { item -> Int? in
            if case let .message(message, _, _) = item { return message.id } else { return nil }
        }.first ?? 0
        let message = ChatData.Message(id: lastID + 1, out: out, author: author, text: text, time: clock(), photo: photo,
                                       replyTo: nil)
        let lastDay = items.reversed().lazy.compactMap { item -> String? in
            if case let .day(day) = item { return day } else { return nil }
        }.first
        var inserted: [Int] = []
        let day = Format.day(message.time)
        if day != lastDay {
            items.append(.day(day))
            inserted.append(items.count - 1)
        }
        items.append(.message(message, replyTo: nil, group: chat.group))
        inserted.append(items.count - 1)
        list.insertRows(inserted, animated: true)
    }

    /// The messages sent from the composer, in order. - Thread: main
    @MainActor
    var sentMessages: [String] {
        items.compactMap { item in
            if case let .message(message, _, _) = item, message.out, message.author == "Me", message.id > chat.messages.count {
                return message.text
            }
            return nil
        }
    }

    func numberOfRows(in list: ListNode) -> Int { items.count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let item = items[row]
        let data = data
        let assets = servedHistory?.assets
        return {
            switch item {
            case .day(let day): return DaySeparatorNode(day)
            case let .message(message, replyTo, group):
                // A photo attached from a file has an absolute path; the dataset's are relative to its assets.
                let photo = message.photo
                return MessageNode(message, replyTo: replyTo, group: group,
                                   photoPath: photo.map { $0.hasPrefix("/") ? $0 : data.photoPath($0) },
                                   served: photo.flatMap { path in
                                       guard !path.hasPrefix("/"), let assets else { return nil }
                                       return (assets.url(forAsset: path), assets.imageLoader)
                                   })
            }
        }
    }
}
