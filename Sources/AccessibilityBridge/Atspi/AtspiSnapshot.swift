import Compositor
import NodeRuntime

/// The published accessibility trees indexed for the bridge's questions, one per window: each
/// element by id with its parent and its index there. Built on the bridge's thread from the trees
/// the UI thread published; immutable after.
///
/// The application object (`AtspiObject.application`) holds one child per window, in the
/// application's order: each window's tree's root. Element ids are unique across the windows (a
/// node's id is the process's; each window's root has an id of its own). A list's children are its
/// rows by index: `rowCount` of them, those with a node (the tree's items, by `rowIndex`) and, for
/// the others, placeholders the UI thread makes on request (`AccessibilityElement.placeholderID(row:list:)`).
/// - Thread: any (a value)
struct AtspiSnapshot: Sendable {
    struct Entry: Sendable {
        var element: AccessibilityElement
        var parent: AtspiObject
        var indexInParent: Int
        /// A list's children with a node, by row index.
        var rows: [Int: Int]?
    }

    /// One window's tree, indexed. Kept whole when another window's tree is replaced.
    struct Window: Sendable {
        let tree: AccessibilityTree
        let entries: [Int: Entry]
        /// The window element's id (the tree's root). Stored, not read through `tree` each time
        /// (see `windowIDs`).
        let id: Int

        init(tree: AccessibilityTree) {
            self.tree = tree
            id = tree.root.id
            var entries: [Int: Entry] = [:]
            Self.add(tree.root, parent: .application, index: 0, to: &entries)
            self.entries = entries
        }

        private static func add(_ element: AccessibilityElement, parent: AtspiObject, index: Int, to entries: inout [Int: Entry]) {
            var entry = Entry(element: element, parent: parent, indexInParent: index)
            if element.rowCount != nil {
                var rows: [Int: Int] = [:]
                for child in element.children {
                    if let row = child.rowIndex { rows[row] = child.id }
                }
                entry.rows = rows
            }
            entries[element.id] = entry
            for (position, child) in element.children.enumerated() {
                // A list's items sit at their row index; everything else in reading order.
                add(child, parent: .element(element.id), index: entry.rows != nil ? (child.rowIndex ?? position) : position,
                    to: &entries)
            }
        }
    }

    /// The windows with a tree, in the application's order.
    let windows: [Window]
    /// The window elements' ids, in order. Stored, not read through the trees each time: Swift
    /// 6.3's optimizer crashes (an ownership verifier error) on a borrow of an optional tree inlined
    /// into the Component interface's switch in release builds.
    let windowIDs: [Int]

    /// One window's tree (nil: none yet).
    init(tree: AccessibilityTree?) {
        self.init(windows: tree.map { [Window(tree: $0)] } ?? [])
    }

    /// The trees of the application's windows, in order.
    init(trees: [AccessibilityTree]) {
        self.init(windows: trees.map(Window.init(tree:)))
    }

    init(windows: [Window]) {
        self.windows = windows
        windowIDs = windows.map(\.id)
    }

    /// The window `id` stands for, when it is one of the windows.
    func window(id: Int) -> Window? {
        windowIDs.firstIndex(of: id).map { windows[$0] }
    }

    /// Whether `object` is a window element (a child of the application).
    func isWindow(_ object: AtspiObject) -> Bool {
        guard case .element(let id) = object else { return false }
        return windowIDs.contains(id)
    }

    /// The id of the window whose tree holds the element `id` (a list's placeholder row: the
    /// list's window); nil when no tree has it.
    func windowID(containing id: Int) -> Int? {
        if let index = windows.firstIndex(where: { $0.entries[id] != nil }) { return windowIDs[index] }
        if let (list, _) = AccessibilityElement.placeholderRow(ofID: id) { return windowID(containing: list) }
        return nil
    }

    func entry(_ id: Int) -> Entry? {
        for (index, window) in windows.enumerated() {
            guard var entry = window.entries[id] else { continue }
            // A window's place among the windows is the snapshot's.
            if entry.parent == .application { entry.indexInParent = index }
            return entry
        }
        return nil
    }

    /// How many children `object` has: the windows for the application; a list's row count; the
    /// element's children otherwise.
    func childCount(of object: AtspiObject) -> Int {
        switch object {
        case .application: return windowIDs.count
        case .element(let id):
            guard let entry = entry(id) else { return 0 }
            return Self.childCount(of: entry.element)
        }
    }

    static func childCount(of element: AccessibilityElement) -> Int {
        element.rowCount.map { max(0, $0) } ?? element.children.count
    }

    /// The child of `object` at `index`: an element of a tree, or for a list's row without a node
    /// the placeholder's id (not in the tree); nil when out of range.
    func child(of object: AtspiObject, at index: Int) -> AtspiObject? {
        guard index >= 0 else { return nil }
        switch object {
        case .application:
            guard index < windowIDs.count else { return nil }
            return .element(windowIDs[index])
        case .element(let id):
            guard let entry = entry(id) else { return nil }
            if let rows = entry.rows {
                guard index < Self.childCount(of: entry.element) else { return nil }
                return .element(rows[index] ?? AccessibilityElement.placeholderID(row: index, list: id))
            }
            guard index < entry.element.children.count else { return nil }
            return .element(entry.element.children[index].id)
        }
    }

    /// The parent of the element `id`, nil when it is not in a tree.
    func parent(of id: Int) -> AtspiObject? { entry(id)?.parent }
}
