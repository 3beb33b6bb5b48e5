import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization

/// What the app set on a node for screen readers.
struct AccessibilityOverrides {
    var isElement: Bool?
    var role: AccessibilityRole?
    var label: String?
    var value: String?
    var hint: String?
    var states: AccessibilityStates = []
    var elementsHidden = false
    var customActions: [AccessibilityCustomAction] = []
    var toolTip: String?
}

/// Element ids: one counter for the process, so an id is never reused by another node.
private let nextAccessibilityID = Atomic<Int>(1)

extension Node {
    private func readAccessibility<T>(_ read: (AccessibilityOverrides) -> T) -> T {
        state.withLock { read($0.accessibility ?? AccessibilityOverrides()) }
    }

    private func writeAccessibility(_ write: (inout AccessibilityOverrides) -> Void) {
        state.withLock { state in
            var overrides = state.accessibility ?? AccessibilityOverrides()
            write(&overrides)
            state.accessibility = overrides
        }
        // Nothing may show: the host still runs a frame for it, and screen readers get a new tree.
        runtime.noteAccessibilityChange()
    }

    /// Whether a screen reader reads this node as an element of its own. Defaults to the kind's
    /// (`isAccessibilityElementByDefault`: text, images and controls are; plain nodes are not, and
    /// their elements belong to the nearest element above). - Thread: any
    public var isAccessibilityElement: Bool {
        get { readAccessibility { $0.isElement } ?? isAccessibilityElementByDefault }
        set { writeAccessibility { $0.isElement = newValue } }
    }

    /// What a screen reader calls the element; nil (the default) uses the node's content: a text
    /// node's string, a button's title, the texts inside a row. - Thread: any
    public var accessibilityLabel: String? {
        get { readAccessibility { $0.label } }
        set { writeAccessibility { $0.label = newValue } }
    }

    /// The element's value (a switch's "on", a field's text); nil uses the node's own. - Thread: any
    public var accessibilityValue: String? {
        get { readAccessibility { $0.value } }
        set { writeAccessibility { $0.value = newValue } }
    }

    /// What using the element does, read after its label ("Opens the chat"). - Thread: any
    public var accessibilityHint: String? {
        get { readAccessibility { $0.hint } }
        set { writeAccessibility { $0.hint = newValue } }
    }

    /// Text shown beside the node once the pointer rests on it (`NodeHost.toolTipDelay`), and read by
    /// screen readers as the element's description when it has no `accessibilityHint`. Nil (the
    /// default): none. A node without one shows the nearest tooltip of the nodes it is inside.
    /// - Thread: any
    public var toolTip: String? {
        get { readAccessibility { $0.toolTip } }
        set { writeAccessibility { $0.toolTip = newValue.map(AttributedText.sanitized).flatMap { $0.isEmpty ? nil : $0 } } }
    }

    /// The element's role; nil (the default) uses the kind's (`accessibilityDefaults()`). Setting a
    /// role other than `.none` makes the node an element unless `isAccessibilityElement` says
    /// otherwise. - Thread: any
    public var accessibilityRole: AccessibilityRole? {
        get { readAccessibility { $0.role } }
        set { writeAccessibility { $0.role = newValue } }
    }

    /// States added to the kind's (`.selected` on the current tab, `.expanded` on an open section).
    /// - Thread: any
    public var accessibilityStates: AccessibilityStates {
        get { readAccessibility { $0.states } }
        set { writeAccessibility { $0.states = newValue } }
    }

    /// Hides the node and everything in it from screen readers (a decoration, a duplicate).
    /// - Thread: any
    public var accessibilityElementsHidden: Bool {
        get { readAccessibility { $0.elementsHidden } }
        set { writeAccessibility { $0.elementsHidden = newValue } }
    }

    /// Actions of the app's own, offered after the kind's (a message's "Reply", "Forward").
    /// - Thread: any
    public var accessibilityCustomActions: [AccessibilityCustomAction] {
        get { readAccessibility { $0.customActions } }
        set { writeAccessibility { $0.customActions = newValue } }
    }

    /// The node's id in accessibility trees: stable for its life, never another node's.
    /// - Thread: any
    public var accessibilityIdentifier: Int {
        state.withLock { state in
            if state.accessibilityID == 0 {
                state.accessibilityID = nextAccessibilityID.add(1, ordering: .relaxed).oldValue
            }
            return state.accessibilityID
        }
    }

    /// The node as a screen reader sees it: the kind's defaults with what the app set over them.
    /// - Thread: main
    @MainActor
    public func accessibilityDescription() -> AccessibilityDescription {
        var description = accessibilityDefaults()
        let overrides = readAccessibility { $0 }
        description.isElement = overrides.isElement ?? (isAccessibilityElementByDefault || (overrides.role.map { $0 != .none } ?? false))
        if let role = overrides.role { description.role = role }
        if let label = overrides.label { description.label = label }
        if let value = overrides.value { description.value = value }
        if let hint = overrides.hint { description.hint = hint } else if let toolTip = overrides.toolTip, description.hint == nil {
            description.hint = toolTip
        }
        description.states.formUnion(overrides.states)
        for action in overrides.customActions where !description.actions.contains(.custom(action.name)) {
            description.actions.append(.custom(action.name))
        }
        return description
    }

    /// Runs the custom action named by `action`, if the node has one. - Thread: main
    @MainActor
    func performCustomAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        guard case .custom(let name) = action,
              let custom = readAccessibility({ $0.customActions }).first(where: { $0.name == name }) else { return false }
        return custom.handler()
    }
}

extension Node {
    /// The texts of the text nodes in `node`'s subtree, in order, joined with ", ": what a control
    /// or a row without a label of its own is called. - Thread: main
    @MainActor
    static func accessibilityText(under node: Node) -> String {
        var parts: [String] = []
        func visit(_ node: Node) {
            guard !node.isHidden, !node.accessibilityElementsHidden else { return }
            if let label = node.accessibilityLabel, !label.isEmpty {
                parts.append(label)
                return
            }
            if let text = node as? TextNode {
                let string = text.attributedText.string.trimmingWhitespace(newlines: true)
                if !string.isEmpty { parts.append(string) }
            }
            for child in node.subnodes { visit(child) }
        }
        visit(node)
        return parts.joined(separator: ", ")
    }
}
