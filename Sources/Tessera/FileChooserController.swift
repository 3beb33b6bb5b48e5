import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime
public import TesseraPortal

/// The in-app file chooser: what `Application.chooseFiles` shows when the desktop has no file
/// chooser portal. A plain dialog made of the kit's nodes: the title, the folder's path with an
/// "Up" button, the folder's entries (folders first, then the files that pass the current filter's
/// glob patterns; hidden files left out), a name field when saving, and Cancel and the accept
/// button. A tap on a folder opens it; a tap on a file selects it (several, with
/// `allowsMultipleSelection`); Escape cancels. The folder is read off the UI thread, and at most
/// `maximumEntries` entries are shown.
///
/// The result goes once to `completion`: the chosen files (the current folder, for `.folder`; the
/// folder and the name typed, for `.save`), or nil when cancelled.
/// - Thread: main
@MainActor
public final class FileChooserController: NodeController {
    /// One entry of the folder shown.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var isFolder: Bool
    }

    /// The most entries listed.
    public nonisolated static let maximumEntries = 2000

    public let options: FileChooserOptions
    /// The folder shown.
    public private(set) var folder: URL
    /// The folder's entries as listed (nil while it is being read).
    public private(set) var entries: [Entry]?
    /// The names of the files selected in `folder`.
    public private(set) var selectedNames: [String] = []
    /// The field for the name to save as (`.save` only).
    public let nameField: EditableTextNode?
    /// True once the dialog has given its answer.
    public private(set) var isFinished = false

    private let dialog: FileChooserNode
    private var completion: (@MainActor (Result<[URL]?, PortalError>) -> Void)?
    /// Counts folder reads: a slow read's result for a folder left since is dropped.
    private var listingGeneration = 0

    /// A chooser for `options`, starting in `options.currentFolder` (else `$HOME`, else the user's home).
    public init(options: FileChooserOptions, completion: @escaping @MainActor (Result<[URL]?, PortalError>) -> Void) {
        self.options = options
        self.completion = completion
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
        folder = (options.currentFolder ?? home ?? FileManager.default.homeDirectoryForCurrentUser).standardizedFileURL
        nameField = options.mode == .save ? EditableTextNode(text: options.suggestedName ?? "", placeholder: "Name") : nil
        dialog = FileChooserNode(title: options.resolvedTitle, acceptLabel: options.acceptLabel ?? Self.defaultAcceptLabel(options.mode),
                                 nameField: nameField)
        super.init(node: dialog)
        dialog.cancelButton.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.cancel() }
        dialog.acceptButton.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.accept() }
        dialog.upButton.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.goUp() }
        nameField?.onSubmit = { [weak self] _ in self?.accept() }
        open(folder: folder)
    }

    private static func defaultAcceptLabel(_ mode: FileChooserOptions.Mode) -> String {
        switch mode {
        case .open: return "Open"
        case .save: return "Save"
        case .folder: return "Choose"
        }
    }

    /// Shows `folder`: its entries are read on a background queue and listed when they arrive.
    public func open(folder: URL) {
        self.folder = folder.standardizedFileURL
        entries = nil
        selectedNames = []
        listingGeneration += 1
        let generation = listingGeneration
        dialog.show(path: self.folder.path, rows: [])
        updateAcceptButton()
        let filter = options.currentFilter ?? options.filters.first
        let foldersOnly = options.mode == .folder
        let path = self.folder.path
        DispatchQueue.global(qos: .userInitiated).async {
            let listed = Self.list(path, filter: filter, foldersOnly: foldersOnly)
            Runtime.shared.mainQueue.enqueue { [weak self] in
                guard let self, generation == self.listingGeneration else { return }
                self.show(listed)
            }
        }
    }

    /// A folder's entries: folders, then files passing `filter`, each sorted by name; hidden ones left out.
    nonisolated static func list(_ path: String, filter: FileFilter?, foldersOnly: Bool) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var folders: [Entry] = [], files: [Entry] = []
        for name in names where !name.hasPrefix(".") {
            var status = stat()
            guard stat(path + "/" + name, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                folders.append(Entry(name: name, isFolder: true))
            } else if !foldersOnly, filter?.matches(fileName: name) ?? true {
                files.append(Entry(name: name, isFolder: false))
            }
        }
        let byName: (Entry, Entry) -> Bool = { naturallyOrdered($0.name, $1.name) }
        return Array((folders.sorted(by: byName) + files.sorted(by: byName)).prefix(maximumEntries))
    }

    private func show(_ listed: [Entry]) {
        entries = listed
        let rows = listed.map { entry -> FileChooserRowNode in
            let row = FileChooserRowNode(entry)
            row.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.tap(entry) }
            return row
        }
        dialog.show(path: folder.path, rows: rows)
    }

    private func tap(_ entry: Entry) {
        if entry.isFolder { return open(folder: folder.appendingPathComponent(entry.name)) }
        select(entry.name)
    }

    /// Selects the file `name` in the folder shown (adds it, with `allowsMultipleSelection`; a second
    /// tap takes it out). Selecting while saving puts the name in the field.
    public func select(_ name: String) {
        if let index = selectedNames.firstIndex(of: name) {
            selectedNames.remove(at: index)
        } else if options.allowsMultipleSelection && options.mode == .open {
            selectedNames.append(name)
        } else {
            selectedNames = [name]
        }
        if options.mode == .save, let nameField { nameField.text = name }
        dialog.markSelected(Set(selectedNames))
        updateAcceptButton()
    }

    /// Opens the folder above the one shown.
    public func goUp() {
        let parent = folder.deletingLastPathComponent()
        if parent.path != folder.path { open(folder: parent) }
    }

    private func updateAcceptButton() {
        switch options.mode {
        case .open: dialog.acceptButton.isEnabled = !selectedNames.isEmpty
        case .folder, .save: dialog.acceptButton.isEnabled = true
        }
    }

    /// Gives the selection (or, saving, the folder and the name typed; choosing a folder, the folder
    /// shown) to the completion. Does nothing while there is nothing to give.
    public func accept() {
        switch options.mode {
        case .open:
            guard !selectedNames.isEmpty else { return }
            finish(.success(selectedNames.map { folder.appendingPathComponent($0) }))
        case .folder:
            finish(.success([folder]))
        case .save:
            let name = (nameField?.text ?? "").trimmingWhitespace(newlines: true)
            guard !name.isEmpty, !name.contains("/") else { return }
            finish(.success([folder.appendingPathComponent(name)]))
        }
    }

    /// Ends the dialog with nil.
    public func cancel() { finish(.success(nil)) }

    /// Ends the dialog with `result` (once: later calls do nothing).
    func finish(_ result: Result<[URL]?, PortalError>) {
        guard let completion else { return }
        self.completion = nil
        isFinished = true
        completion(result)
    }

    public override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        if key == .escape {
            cancel()
            return true
        }
        return false
    }
}

/// A row of the chooser: an entry's name (folders with a trailing "/"), left-aligned; blue when selected.
final class FileChooserRowNode: ButtonNode, @unchecked Sendable {
    let entry: FileChooserController.Entry

    init(_ entry: FileChooserController.Entry) {
        self.entry = entry
        let label = entry.isFolder ? entry.name + "/" : entry.name
        super.init(title: label, attributes: TextAttributes(font: .system(size: 15, bold: entry.isFolder), color: Color(rgb: 0x1F2328)))
        setTitle(label, attributes: TextAttributes(font: .system(size: 15, bold: entry.isFolder), color: .white), for: .selected)
        setBackgroundColor(.white, for: .normal)
        setBackgroundColor(Color(rgb: 0xE8EEF5), for: .highlighted)
        setBackgroundColor(Color(rgb: 0x2F6FDB), for: .selected)
        accessibilityLabel = entry.isFolder ? "Folder \(entry.name)" : entry.name
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(justifyContent: .start) { titleNode.flexShrink(1) }.inset(EdgeInsets(top: 7, left: 12, bottom: 7, right: 12))
    }
}

/// The chooser's rows stacked.
final class FileChooserRowsNode: Node, @unchecked Sendable {
    private let rows = Locked<[FileChooserRowNode]>([])

    override init() {
        super.init()
        automaticallyManagesSubnodes = true
        // Shows in the point between rows: their separators.
        backgroundColor = Color(rgb: 0xE4E8EE)
    }

    var currentRows: [FileChooserRowNode] { rows.withLock { $0 } }

    func setRows(_ new: [FileChooserRowNode]) {
        let old = rows.withLock { state in
            defer { state = new }
            return state
        }
        withExtendedLifetime(old) {}
        setNeedsLayout()
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let shown = rows.withLock { $0 }
        return VStack(spacing: 1) { for row in shown { row } }
    }
}

/// The dialog's nodes and their layout.
final class FileChooserNode: Node, @unchecked Sendable {
    let titleNode: TextNode
    let pathNode = TextNode()
    let upButton = ButtonNode(title: "Up", attributes: TextAttributes(font: .system(size: 14), color: Color(rgb: 0x2F6FDB)))
    let rowsNode = FileChooserRowsNode()
    let scroll: ScrollNode
    let nameField: EditableTextNode?
    let namePill = Node()
    let cancelButton: ButtonNode
    let acceptButton: ButtonNode

    init(title: String, acceptLabel: String, nameField: EditableTextNode?) {
        titleNode = TextNode(title, attributes: TextAttributes(font: .system(size: 18, bold: true), color: Color(rgb: 0x1F2328)))
        scroll = ScrollNode(content: rowsNode)
        self.nameField = nameField
        cancelButton = ButtonNode(title: "Cancel", attributes: TextAttributes(font: .system(size: 15), color: Color(rgb: 0x1F2328)))
        acceptButton = ButtonNode(title: acceptLabel, attributes: TextAttributes(font: .system(size: 15, bold: true), color: .white))
        super.init()
        automaticallyManagesSubnodes = true
        backgroundColor = Color(rgb: 0xF4F5F7)
        pathNode.maximumNumberOfLines = 1
        pathNode.truncationMode = .start
        scroll.backgroundColor = .white
        scroll.cornerRadius = 6
        namePill.backgroundColor = .white
        namePill.cornerRadius = 6
        upButton.setBackgroundColor(Color(rgb: 0xE4E9F0))
        upButton.cornerRadius = 6
        cancelButton.setBackgroundColor(Color(rgb: 0xE4E9F0))
        cancelButton.cornerRadius = 6
        acceptButton.setBackgroundColor(Color(rgb: 0x2F6FDB))
        acceptButton.setBackgroundColor(Color(rgb: 0x9DB7E5), for: .disabled)
        acceptButton.cornerRadius = 6
    }

    func show(path: String, rows: [FileChooserRowNode]) {
        pathNode.attributedText = AttributedText(path, attributes: TextAttributes(font: .system(size: 13), color: Color(rgb: 0x5B6470)))
        rowsNode.setRows(rows)
    }

    func markSelected(_ names: Set<String>) {
        for row in rowsNode.currentRows { row.isSelected = !row.entry.isFolder && names.contains(row.entry.name) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let nameSpec: (any LayoutElement)? = nameField.map { field in
            field.flexShrink(0).inset(EdgeInsets(top: 7, left: 10, bottom: 7, right: 10)).background(namePill)
        }
        return VStack(spacing: 10) {
            titleNode
            HStack(spacing: 8, alignItems: .center) {
                upButton
                pathNode.flexShrink(1).flexGrow(1)
            }
            scroll.flexGrow(1)
            nameSpec
            HStack(spacing: 10, justifyContent: .end) {
                cancelButton
                acceptButton
            }
        }
        .inset(EdgeInsets(top: 16, left: 16, bottom: 16, right: 16))
    }
}

/// The order a file chooser lists names in: letters without regard to case, runs of digits by their
/// value (`photo 2` before `photo 10`), and names alike but for those in plain code-point order.
/// - Thread: any
func naturallyOrdered(_ a: String, _ b: String) -> Bool {
    func isDigit(_ c: Character) -> Bool { c.isASCII && c.isNumber }
    let left = Array(a.lowercased()), right = Array(b.lowercased())
    var i = 0, j = 0
    while i < left.count, j < right.count {
        if isDigit(left[i]), isDigit(right[j]) {
            let startI = i, startJ = j
            while i < left.count, isDigit(left[i]) { i += 1 }
            while j < right.count, isDigit(right[j]) { j += 1 }
            let digitsA = left[startI..<i].drop { $0 == "0" }, digitsB = right[startJ..<j].drop { $0 == "0" }
            if digitsA.count != digitsB.count { return digitsA.count < digitsB.count }
            if let difference = zip(digitsA, digitsB).first(where: { $0 != $1 }) { return difference.0 < difference.1 }
            continue
        }
        if left[i] != right[j] { return left[i] < right[j] }
        i += 1
        j += 1
    }
    if left.count - i != right.count - j { return left.count - i < right.count - j }
    return a < b
}
