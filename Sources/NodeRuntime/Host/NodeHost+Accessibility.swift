import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// What an element id stands for: a node, a link of a text node, or a list's row without a node.
struct AccessibilityNodeReference {
    enum Kind {
        case node
        case link(Int)
        case row(Int)
    }
    weak var node: Node?
    var kind: Kind
}

extension NodeHost {
    /// Element ids of things that are not nodes (a text's links, a list's rows without a node):
    /// negative, so never a node's; the node's id and the index, packed.
    static func virtualAccessibilityID(of node: Node, index: Int, kind: Int) -> Int {
        -((node.accessibilityIdentifier << 24) | ((index & 0x3F_FFFF) << 2) | kind)
    }

    /// What the host shows, as a screen reader sees it: a window element holding the root node's
    /// elements in reading order (subnode order; a list's rows by index). Nodes that are not elements
    /// give their elements to the nearest element above; hidden nodes and
    /// `accessibilityElementsHidden` subtrees are left out; a rasterized subtree keeps its nodes'
    /// elements. A list has one item per row: rows with a node hold its elements, the others are
    /// placeholders read by index (`rowIndex`, not `.showing`). Frames are in window points.
    /// - Thread: main
    @MainActor
    public func accessibilityTree(title: String = "") -> AccessibilityTree {
        UIThread.precondition("NodeHost.accessibilityTree")
        var references: [Int: AccessibilityNodeReference] = [:]
        let focusedNode = focusedNode
        var focusedID: Int?
        let viewport = Rect(origin: .zero, size: viewportSize)

        func windowFrame(of node: Node, origin: Point) -> Rect {
            if let layer = node.layerIfLoaded, layer.superlayer != nil || node === rootNode { return layer.frameInWindow }
            return node.frame.offsetBy(dx: origin.x, dy: origin.y)
        }

        func elements(of node: Node, origin: Point) -> [AccessibilityElement] {
            guard !node.isHidden, !node.accessibilityElementsHidden else { return [] }
            let frame = windowFrame(of: node, origin: origin)
            let description = node.accessibilityDescription()
            var children: [AccessibilityElement] = []
            if description.exposesChildren || !description.isElement {
                children = childElements(of: node, frame: frame)
            }
            guard description.isElement else { return children }
            let id = node.accessibilityIdentifier
            if !description.exposesChildren {
                // An element that speaks for its subtree (a message, a row) still offers the links
                // of the texts inside it.
                var stack = node.subnodes.reversed() as [Node]
                while let inner = stack.popLast() {
                    guard !inner.isHidden, !inner.accessibilityElementsHidden else { continue }
                    if let text = inner as? TextNode { children.append(contentsOf: links(of: text, frame: frame)) }
                    stack.append(contentsOf: inner.subnodes.reversed())
                }
            }
            references[id] = AccessibilityNodeReference(node: node, kind: .node)
            var states = description.states
            if node.interfaceState.contains(.visible) && frame.intersects(viewport) { states.insert(.showing) }
            if node.canBecomeFocused { states.insert(.focusable) }
            if node === focusedNode {
                states.insert(.focused)
                focusedID = id
            }
            if let text = node as? TextNode { children.append(contentsOf: links(of: text, frame: frame)) }
            var element = AccessibilityElement(id: id, role: description.role, label: description.label,
                                               value: description.value, hint: description.hint, states: states,
                                               frame: frame, actions: description.actions, text: description.text,
                                               valueRange: description.valueRange, headingLevel: description.headingLevel,
                                               children: children)
            if let list = node as? ListNode { element.rowCount = list.numberOfRows }
            return [element]
        }

        /// The links of a text as link elements (the text's frame: links are not measured apart).
        func links(of text: TextNode, frame: Rect) -> [AccessibilityElement] {
            let showing: AccessibilityStates = text.interfaceState.contains(.visible) && frame.intersects(viewport) ? [.showing] : []
            return text.accessibilityLinks.enumerated().map { index, link in
                let linkID = Self.virtualAccessibilityID(of: text, index: index, kind: 1)
                references[linkID] = AccessibilityNodeReference(node: text, kind: .link(index))
                return AccessibilityElement(id: linkID, role: .link, label: link.text, value: link.link,
                                            states: showing.union(.focusable), frame: frame, actions: [.press])
            }
        }

        func childElements(of node: Node, frame: Rect) -> [AccessibilityElement] {
            guard let list = node as? ListNode else {
                return node.subnodes.flatMap { elements(of: $0, origin: frame.origin) }
            }
            // Rows by index: those with a node hold its elements; the others are placeholders a
            // bridge asks for by index (`accessibilityPlaceholder`), counted in the list's `rowCount`.
            var rows: [AccessibilityElement] = []
            let live = list.records.keys.sorted()
            rows.reserveCapacity(live.count)
            for row in live {
                guard let rowNode = list.records[row]?.node else { continue }
                let rowFrame = list.frameOfRow(row).offsetBy(dx: frame.minX - (list.isHorizontal ? list.contentOffset : 0),
                                                            dy: frame.minY - (list.isHorizontal ? 0 : list.contentOffset))
                let inside = elements(of: rowNode, origin: rowFrame.origin)
                let described = rowNode.accessibilityDescription()
                if described.isElement, inside.count == 1, var item = inside.first {
                    // A row that is an element itself (a control, a labelled cell) is the item.
                    if item.role == .none || item.role == .group { item.role = .listItem }
                    item.rowIndex = row
                    rows.append(item)
                    continue
                }
                let id = rowNode.accessibilityIdentifier
                references[id] = AccessibilityNodeReference(node: rowNode, kind: .node)
                var states: AccessibilityStates = [.selectable]
                if rowNode.interfaceState.contains(.visible) && rowFrame.intersects(viewport) { states.insert(.showing) }
                let label = rowNode.accessibilityLabel ?? Node.accessibilityText(under: rowNode)
                rows.append(AccessibilityElement(id: id, role: .listItem, label: label, hint: rowNode.accessibilityHint,
                                                 states: states, frame: rowFrame, actions: [.press], rowIndex: row,
                                                 children: inside))
            }
            return rows
        }

        var rootChildren: [AccessibilityElement] = []
        if let bar = windowMenuBar { rootChildren = elements(of: bar, origin: .zero) }
        if let rootNode { rootChildren += elements(of: rootNode, origin: rootNode.frame.origin) }
        // Menus, dialogs and tooltips over the root, in the order they are stacked.
        for overlay in overlayStack { rootChildren += elements(of: overlay.container, origin: .zero) }
        accessibilityVersion += 1
        accessibilityNodes = references
        let root = AccessibilityElement(id: 0, role: .window, label: title, states: [.showing], frame: viewport,
                                        children: rootChildren)
        return AccessibilityTree(root: root, focusedID: focusedID, version: accessibilityVersion)
    }

    /// The placeholder element of a list's row that has no node (a screen reader reading by index).
    /// - Thread: main
    @MainActor
    public func accessibilityPlaceholder(forRow row: Int, ofListElement listID: Int) -> AccessibilityElement? {
        UIThread.precondition("NodeHost.accessibilityPlaceholder")
        guard let list = accessibilityNodes[listID]?.node as? ListNode, row >= 0, row < list.numberOfRows else { return nil }
        let id = AccessibilityElement.placeholderID(row: row, list: listID)
        accessibilityNodes[id] = AccessibilityNodeReference(node: list, kind: .row(row))
        return AccessibilityElement(id: id, role: .listItem, states: [.selectable], frame: list.frameOfRow(row),
                                    actions: [.press], rowIndex: row)
    }

    /// Performs a screen reader's `action` on the element `id` of the last tree; false when the
    /// element is gone, does nothing with it, or is behind a modal overlay (an alert). `.press` on a
    /// list's row (a placeholder too) scrolls it into view and selects it (`onSelectRow`).
    /// - Thread: main
    @MainActor
    @discardableResult
    public func performAccessibilityAction(_ action: AccessibilityAction, onElement id: Int) -> Bool {
        UIThread.precondition("NodeHost.performAccessibilityAction")
        guard let reference = accessibilityNodes[id], let node = reference.node, !isBehindModalOverlay(node) else {
            return false
        }
        switch reference.kind {
        case .node:
            if node.performAccessibilityAction(action) { return true }
            // A row that is not an element of its own: its list selects it.
            if action == .press, let list = node.eventParent as? ListNode,
               let row = list.records.first(where: { $0.value.node === node })?.key {
                list.scroll(to: row, at: .visible, animated: true)
                list.onSelectRow?(row)
                return true
            }
            return false
        case .link(let index):
            guard action == .press, let text = node as? TextNode else { return false }
            return text.activateAccessibilityLink(at: index)
        case .row(let row):
            guard action == .press, let list = node as? ListNode, row < list.numberOfRows else { return false }
            list.scroll(to: row, at: .visible, animated: true)
            list.onSelectRow?(row)
            return true
        }
    }

    /// Gives the keyboard focus to the element `id` (AT-SPI's `GrabFocus`); false when it cannot
    /// take it or is behind a modal overlay. - Thread: main
    @MainActor
    @discardableResult
    public func focusAccessibilityElement(_ id: Int) -> Bool {
        UIThread.precondition("NodeHost.focusAccessibilityElement")
        guard let node = accessibilityNodes[id]?.node, node.canBecomeFocused, !isBehindModalOverlay(node) else { return false }
        focus(node)
        if focusedNode === node { showsFocusRing = true }
        return focusedNode === node
    }

    /// Replaces the text of the editable element `id` (AT-SPI's `EditableText`); false when it is
    /// not a text field or is behind a modal overlay. - Thread: main
    @MainActor
    @discardableResult
    public func setAccessibilityText(_ text: String, ofElement id: Int) -> Bool {
        UIThread.precondition("NodeHost.setAccessibilityText")
        guard let field = accessibilityNodes[id]?.node as? EditableTextNode, !isBehindModalOverlay(field) else { return false }
        field.text = text
        return true
    }
}

extension NodeHost {
    /// Replaces the characters `range` (Unicode scalars, as AT-SPI counts; nil: the whole text) of
    /// the editable element `id` with `text`, as typing would: one undo step, `onChange` called, the
    /// caret after the new text (AT-SPI's `InsertText`, `DeleteText`, `SetTextContents`). A range
    /// past the end is cut to it. False when the element is not a text field or is behind a modal overlay.
    /// - Thread: main
    @MainActor
    @discardableResult
    public func replaceAccessibilityText(in range: Range<Int>?, with text: String, ofElement id: Int) -> Bool {
        UIThread.precondition("NodeHost.replaceAccessibilityText")
        guard let field = accessibilityNodes[id]?.node as? EditableTextNode, !isBehindModalOverlay(field) else { return false }
        let current = field.text
        let utf16Range = range.map { Self.utf16Range(ofScalars: $0, in: current) } ?? 0..<current.utf16.count
        field.selectedRange = utf16Range
        field.replaceSelection(with: text, coalescing: false)
        return true
    }

    /// Puts the caret (an empty `range`) or the selection of the text field `id` at `range`, in
    /// Unicode scalars (AT-SPI's `SetCaretOffset`, `SetSelection`); cut to the text. False when the
    /// element is not a text field or is behind a modal overlay. - Thread: main
    @MainActor
    @discardableResult
    public func setAccessibilitySelection(_ range: Range<Int>, ofElement id: Int) -> Bool {
        UIThread.precondition("NodeHost.setAccessibilitySelection")
        guard let field = accessibilityNodes[id]?.node as? EditableTextNode, !isBehindModalOverlay(field) else { return false }
        field.selectedRange = Self.utf16Range(ofScalars: range, in: field.text)
        return true
    }

    /// `range` in Unicode scalars of `text` as UTF-16 offsets, each end cut to the text.
    static func utf16Range(ofScalars range: Range<Int>, in text: String) -> Range<Int> {
        let scalars = text.unicodeScalars
        func offset(_ scalarOffset: Int) -> Int {
            let index = scalars.index(scalars.startIndex, offsetBy: min(max(0, scalarOffset), scalars.count))
            return text.utf16.distance(from: text.utf16.startIndex, to: index)
        }
        let lower = offset(range.lowerBound)
        return lower..<max(lower, offset(range.upperBound))
    }
}
