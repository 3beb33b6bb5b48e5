public import NodeRuntime

/// What the bridge asks of the UI thread for a screen reader: the things a published tree cannot
/// answer by itself because they change the app or need a node.
/// - Thread: any (a value)
public enum AtspiUIRequest: Sendable, Hashable {
    /// Perform an action on an element (AT-SPI's `DoAction`, `SelectChild`).
    case perform(AccessibilityAction, element: Int)
    /// Give an element the keyboard focus (`GrabFocus`).
    case focus(element: Int)
    /// Replace the characters `range` (nil: all) of a text field with `text` (`SetTextContents`,
    /// `InsertText`, `DeleteText`).
    case replaceText(element: Int, range: Range<Int>?, text: String)
    /// Put a text field's caret (an empty range) or selection at `range` (`SetCaretOffset`,
    /// `SetSelection`).
    case select(element: Int, range: Range<Int>)
    /// The placeholder element of a list's row that has no node.
    case placeholder(row: Int, list: Int)

    /// Answers the request on `host`'s last published tree (`NodeHost.accessibilityTree`). A list's
    /// row read by index (a placeholder id) is made known to the host first, so actions reach it.
    /// - Thread: main
    @MainActor
    public func answer(on host: NodeHost) -> AtspiUIResponse {
        func reachable(_ id: Int) {
            if let (list, row) = AccessibilityElement.placeholderRow(ofID: id) {
                _ = host.accessibilityPlaceholder(forRow: row, ofListElement: list)
            }
        }
        switch self {
        case .perform(let action, let element):
            reachable(element)
            return .done(host.performAccessibilityAction(action, onElement: element))
        case .focus(let element):
            reachable(element)
            return .done(host.focusAccessibilityElement(element))
        case .replaceText(let element, let range, let text):
            return .done(host.replaceAccessibilityText(in: range, with: text, ofElement: element))
        case .select(let element, let range):
            return .done(host.setAccessibilitySelection(range, ofElement: element))
        case .placeholder(let row, let list):
            return .placeholder(host.accessibilityPlaceholder(forRow: row, ofListElement: list))
        }
    }
}

/// The UI thread's answer to an `AtspiUIRequest`.
/// - Thread: any (a value)
public enum AtspiUIResponse: Sendable, Hashable {
    /// Whether the request did what it asked.
    case done(Bool)
    /// The placeholder asked for; nil when the list or the row is gone.
    case placeholder(AccessibilityElement?)
}
