import Compositor

// The host's focus owner: who gets keys and text first, Tab traversal, and the platform's text input
// while a text field has focus.

extension NodeHost {
    /// Makes `node` the focus owner (nil: none): keys and text go to it first, then bubble up its
    /// supernodes. The old owner gets `didResignFocus`, the new one `didBecomeFocused`; a node with a
    /// `textInputCaret` turns the platform's text input on (and the last one off). A node that cannot
    /// be focused, or is not visible in this host, leaves focus as it was. - Thread: main
    @MainActor
    public func focus(_ node: Node?) {
        UIThread.precondition("NodeHost.focus")
        guard node !== focusedNode else { return }
        if let node, !node.canBecomeFocused || !node.interfaceState.contains(.visible) { return }
        let old = focusedNode
        focusedNode = node
        old?.focusHost = nil
        node?.focusHost = self
        old?.didResignFocus()
        if textInputCaret != nil, node?.textInputCaret == nil {
            // Stopping text input resets the input method (its composition goes).
            compositor.textInputPlatform?.stopTextInput()
            textInputCaret = nil
        } else if composing, textInputCaret != nil {
            // Another field takes the text: the old one kept the composition (`didResignFocus`), and
            // the input method must not commit it again into the new one.
            compositor.textInputPlatform?.cancelComposition()
        }
        composing = false
        node?.didBecomeFocused()
        updateTextInput()
        // A focused node inside scroll nodes is scrolled into view (Tab reaching a control below the
        // fold brings it up).
        var ancestor = node?.supernode
        while let current = ancestor, let focused = node {
            if let scroll = current as? ScrollNode { scroll.scrollToVisible(focused, animated: true) }
            ancestor = current.supernode
        }
        // A focused row of a list (or a node inside one) is scrolled fully into view.
        var inner = node
        while let current = inner {
            if let list = current.eventParent as? ListNode, let row = list.row(of: current) {
                list.scroll(to: row, at: .visible, animated: true)
                break
            }
            inner = current.supernode
        }
    }

    /// Offers an event to the focused node, then each event ancestor (supernodes, and from a list row
    /// to its list), until one takes it.
    func focusChainHandles(_ offer: (Node) -> Bool) -> Bool {
        var node = focusedNode
        while let current = node {
            if offer(current) { return true }
            node = current.eventSupernode
        }
        return false
    }

    /// Moves focus to the next (or previous) focusable visible node in tree order, wrapping around.
    /// False when there is none other to move to.
    func moveFocus(backward: Bool) -> Bool {
        // A menu or a dialog keeps Tab inside it.
        guard let root = focusTrappingOverlay?.container ?? rootNode else { return false }
        var order: [Node] = []
        func collect(_ node: Node) {
            guard node.interfaceState.contains(.visible), !node.isHidden else { return }
            if node.canBecomeFocused { order.append(node) }
            for subnode in node.subnodes { collect(subnode) }
            // A list's rows are not its subnodes: the rows on screen come after it, in row order.
            if let list = node as? ListNode, let visible = list.visibleRows {
                for row in visible { if let rowNode = list.records[row]?.node { collect(rowNode) } }
            }
        }
        collect(root)
        guard !order.isEmpty else { return false }
        let current = focusedNode.flatMap { node in order.firstIndex { $0 === node } }
        let next: Int
        if let current {
            guard order.count > 1 else { return false }
            next = (current + (backward ? order.count - 1 : 1)) % order.count
        } else {
            next = backward ? order.count - 1 : 0
        }
        focus(order[next])
        return true
    }

    /// Once a frame: a focus owner that left the screen loses focus; the owner gets its frame call;
    /// the input method's window follows the caret.
    func updateFocus(at time: Double) {
        guard let node = focusedNode else { return }
        guard node.interfaceState.contains(.visible) else {
            focus(nil)
            return
        }
        node.focusFrame(at: time)
        updateTextInput()
    }

    func updateTextInput() {
        guard let node = focusedNode, let caret = node.textInputCaret else { return }
        let origin = node.convertFromRoot(.zero)
        let rect = Rect(x: caret.minX - origin.x, y: caret.minY - origin.y, width: caret.width, height: caret.height)
        guard rect != textInputCaret else { return }
        if textInputCaret == nil {
            compositor.textInputPlatform?.startTextInput(caret: rect)
        } else {
            compositor.textInputPlatform?.setTextInputCaret(rect)
        }
        textInputCaret = rect
    }
}
