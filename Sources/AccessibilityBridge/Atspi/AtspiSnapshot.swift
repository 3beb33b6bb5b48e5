import Compositor
import NodeRuntime

/// A published accessibility tree indexed for the bridge's questions: each element by id with its
/// parent and its index there. Built on the bridge's thread from the tree the UI thread published;
/// immutable after.
///
/// The application object (`AtspiObject.application`) holds one child, the window (the tree's
/// root). A list's children are its rows by index: `rowCount` of them, those with a node (the
/// tree's items, by `rowIndex`) and, for the others, placeholders the UI thread makes on request
/// (`AccessibilityElement.placeholderID(row:list:)`).
/// - Thread: any (a value)
struct AtspiSnapshot: Sendable {
    struct Entry: Sendable {
        var element: AccessibilityElement
        var parent: AtspiObject
        var indexInParent: Int
        /// A list's children with a node, by row index.
        var rows: [Int: Int]?
    }

    /// The tree, nil before the UI thread published one.
    let tree: AccessibilityTree?
    private(set) var entries: [Int: Entry] = [:]

    init(tree: AccessibilityTree?) {
        self.tree = tree
        windowID = tree?.root.id
        guard let tree else { return }
        add(tree.root, parent: .application, index: 0)
    }

    private mutating func add(_ element: AccessibilityElement, parent: AtspiObject, index: Int) {
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
            add(child, parent: .element(element.id), index: entry.rows != nil ? (child.rowIndex ?? position) : position)
        }
    }

    /// The window element's id (the tree's root), when there is a tree.
    /// The window element's id (the tree's root), nil without a tree. Stored, not read through
    /// `tree` each time: Swift 6.3's optimizer crashes (an ownership verifier error) on a borrow of
    /// the optional tree inlined into the Component interface's switch in release builds.
    let windowID: Int?

    func entry(_ id: Int) -> Entry? { entries[id] }

    /// How many children `object` has: one window for the application; a list's row count; the
    /// element's children otherwise.
    func childCount(of object: AtspiObject) -> Int {
        switch object {
        case .application: return tree == nil ? 0 : 1
        case .element(let id):
            guard let entry = entries[id] else { return 0 }
            return Self.childCount(of: entry.element)
        }
    }

    static func childCount(of element: AccessibilityElement) -> Int {
        element.rowCount.map { max(0, $0) } ?? element.children.count
    }

    /// The child of `object` at `index`: an element of the tree, or for a list's row without a node
    /// the placeholder's id (not in the tree); nil when out of range.
    func child(of object: AtspiObject, at index: Int) -> AtspiObject? {
        guard index >= 0 else { return nil }
        switch object {
        case .application:
            guard index == 0, let windowID else { return nil }
            return .element(windowID)
        case .element(let id):
            guard let entry = entries[id] else { return nil }
            if let rows = entry.rows {
                guard index < Self.childCount(of: entry.element) else { return nil }
                return .element(rows[index] ?? AccessibilityElement.placeholderID(row: index, list: id))
            }
            guard index < entry.element.children.count else { return nil }
            return .element(entry.element.children[index].id)
        }
    }

    /// The parent of the element `id`, nil when it is not in the tree.
    func parent(of id: Int) -> AtspiObject? { entries[id]?.parent }
}
