import NodeRuntime

/// AT-SPI2's names and numbers, as at-spi2-core's `xml/*.xml` and `atspi-constants.h` define them.
enum Atspi {
    /// The most characters (Unicode scalars) one edit through the bus inserts (`SetTextContents`,
    /// `InsertText`), and the longest a field's text may grow to by such edits.
    static let maximumEditCharacters = 16_384
    static let maximumEditedTextCharacters = 65_536

    static let rootPath = "/org/a11y/atspi/accessible/root"
    /// The path of "no object" (a child index out of range, nothing at a point).
    static let nullPath = "/org/a11y/atspi/null"
    static let elementPathPrefix = "/org/a11y/atspi/accessible/"
    /// The cache object's path (`org.a11y.atspi.Cache`).
    static let cachePath = "/org/a11y/atspi/cache"

    static let accessible = "org.a11y.atspi.Accessible"
    static let application = "org.a11y.atspi.Application"
    static let component = "org.a11y.atspi.Component"
    static let action = "org.a11y.atspi.Action"
    static let text = "org.a11y.atspi.Text"
    static let editableText = "org.a11y.atspi.EditableText"
    static let value = "org.a11y.atspi.Value"
    static let selection = "org.a11y.atspi.Selection"
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
    static let cache = "org.a11y.atspi.Cache"
    static let socket = "org.a11y.atspi.Socket"
    static let eventObject = "org.a11y.atspi.Event.Object"
    static let eventFocus = "org.a11y.atspi.Event.Focus"
    static let eventWindow = "org.a11y.atspi.Event.Window"

    /// The registry's well-known name on the accessibility bus.
    static let registryName = "org.a11y.atspi.Registry"
    /// What `Application.AtspiVersion` reports: the protocol version this bridge speaks.
    static let protocolVersion = "2.1"

    /// `AtspiCoordType`.
    enum CoordinateType: UInt32 { case screen = 0, window = 1, parent = 2 }

    /// `AtspiComponentLayer` values answered by `GetLayer`.
    static let layerWidget: UInt32 = 3
    static let layerWindow: UInt32 = 7

    /// `AtspiTextBoundaryType`.
    enum TextBoundary: UInt32 {
        case character = 0, wordStart, wordEnd, sentenceStart, sentenceEnd, lineStart, lineEnd
    }

    /// `AtspiTextGranularity`.
    enum TextGranularity: UInt32 { case character = 0, word, sentence, line, paragraph }
}

/// An object the bridge serves: the application (the root every AT-SPI app has, holding the window)
/// or an element of the published tree, by its id. Its object path is
/// `/org/a11y/atspi/accessible/root` for the application and `/org/a11y/atspi/accessible/<id>`
/// for an element, a negative id written `n<magnitude>` (a path element takes only `[A-Za-z0-9_]`).
/// - Thread: any (a value)
enum AtspiObject: Hashable, Sendable {
    case application
    case element(Int)

    var path: String {
        switch self {
        case .application: return Atspi.rootPath
        case .element(let id): return Atspi.elementPathPrefix + (id < 0 ? "n\(id.magnitude)" : "\(id)")
        }
    }

    /// The object at `path`, or nil when the path is not one of this bridge's.
    init?(path: String) {
        if path == Atspi.rootPath {
            self = .application
            return
        }
        guard path.hasPrefix(Atspi.elementPathPrefix) else { return nil }
        var rest = Substring(path.dropFirst(Atspi.elementPathPrefix.count))
        var negative = false
        if rest.first == "n" {
            negative = true
            rest = rest.dropFirst()
        }
        guard !rest.isEmpty, rest.allSatisfy(\.isASCIIDigit), let magnitude = Int(rest) else { return nil }
        if negative && magnitude == 0 { return nil }
        self = .element(negative ? -magnitude : magnitude)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// `AtspiStateType`: the bits of `GetState`'s two 32-bit words, and the names `StateChanged`
/// events carry.
/// - Thread: any (a value)
enum AtspiState: UInt32, CaseIterable, Sendable {
    case active = 1, armed, busy, checked, collapsed, defunct, editable, enabled, expandable, expanded, focusable,
         focused, hasTooltip, horizontal, iconified, modal, multiLine, multiselectable, opaque, pressed, resizable,
         selectable, selected, sensitive, showing, singleLine, stale, transient, vertical, visible,
         managesDescendants, indeterminate, required, truncated, animated, invalidEntry, supportsAutocompletion,
         selectableText, isDefault, visited, checkable, hasPopup, readOnly

    /// The name in `object:state-changed:<name>` events (ATK's state names).
    var name: String {
        switch self {
        case .active: return "active"
        case .armed: return "armed"
        case .busy: return "busy"
        case .checked: return "checked"
        case .collapsed: return "collapsed"
        case .defunct: return "defunct"
        case .editable: return "editable"
        case .enabled: return "enabled"
        case .expandable: return "expandable"
        case .expanded: return "expanded"
        case .focusable: return "focusable"
        case .focused: return "focused"
        case .hasTooltip: return "has-tooltip"
        case .horizontal: return "horizontal"
        case .iconified: return "iconified"
        case .modal: return "modal"
        case .multiLine: return "multi-line"
        case .multiselectable: return "multiselectable"
        case .opaque: return "opaque"
        case .pressed: return "pressed"
        case .resizable: return "resizable"
        case .selectable: return "selectable"
        case .selected: return "selected"
        case .sensitive: return "sensitive"
        case .showing: return "showing"
        case .singleLine: return "single-line"
        case .stale: return "stale"
        case .transient: return "transient"
        case .vertical: return "vertical"
        case .visible: return "visible"
        case .managesDescendants: return "manages-descendants"
        case .indeterminate: return "indeterminate"
        case .required: return "required"
        case .truncated: return "truncated"
        case .animated: return "animated"
        case .invalidEntry: return "invalid-entry"
        case .supportsAutocompletion: return "supports-autocompletion"
        case .selectableText: return "selectable-text"
        case .isDefault: return "is-default"
        case .visited: return "visited"
        case .checkable: return "checkable"
        case .hasPopup: return "has-popup"
        case .readOnly: return "read-only"
        }
    }
}

/// A set of `AtspiState`s as `GetState` sends it: bit n of the 64 is state n.
/// - Thread: any (a value)
struct AtspiStateSet: Hashable, Sendable {
    var bits: UInt64 = 0

    init(_ states: [AtspiState] = []) {
        for state in states { insert(state) }
    }

    mutating func insert(_ state: AtspiState) { bits |= 1 << UInt64(state.rawValue) }
    func contains(_ state: AtspiState) -> Bool { bits & (1 << UInt64(state.rawValue)) != 0 }

    /// `GetState`'s answer: the low word, then the high word.
    var words: [UInt32] { [UInt32(truncatingIfNeeded: bits), UInt32(truncatingIfNeeded: bits >> 32)] }

    /// The states in one set and not the other, in the enumeration's order.
    func changes(to other: AtspiStateSet) -> [(state: AtspiState, isSet: Bool)] {
        let changed = bits ^ other.bits
        guard changed != 0 else { return [] }
        return AtspiState.allCases.compactMap { state in
            changed & (1 << UInt64(state.rawValue)) != 0 ? (state, other.contains(state)) : nil
        }
    }

    /// An element's states as AT-SPI reads them: its own (`AccessibilityStates`), ENABLED and SENSITIVE
    /// unless it is disabled, VISIBLE (an element in the tree is not hidden), SINGLE_LINE for a
    /// one-line field, and TRANSIENT for a list's row read by index without a node.
    init(element: AccessibilityElement, isWindow: Bool, windowIsActive: Bool, isPlaceholder: Bool) {
        let states = element.states
        insert(.visible)
        if !states.contains(.disabled) {
            insert(.enabled)
            insert(.sensitive)
        }
        let map: [(AccessibilityStates, AtspiState)] = [
            (.focused, .focused), (.focusable, .focusable), (.selected, .selected), (.selectable, .selectable),
            (.expanded, .expanded), (.expandable, .expandable), (.checked, .checked), (.checkable, .checkable),
            (.editable, .editable), (.multiLine, .multiLine), (.showing, .showing), (.modal, .modal),
            (.busy, .busy),
        ]
        for (model, atspi) in map where states.contains(model) { insert(atspi) }
        if element.role == .textField && !states.contains(.multiLine) { insert(.singleLine) }
        if element.text != nil && element.role != .textField { insert(.selectableText) }
        if isWindow {
            insert(.resizable)
            if windowIsActive { insert(.active) }
        }
        if isPlaceholder { insert(.transient) }
    }
}

extension AccessibilityAction {
    /// What AT-SPI's `GetDescription` says the action does.
    var atspiDescription: String {
        switch self {
        case .press: return "Activates the element"
        case .increment: return "Increases the value"
        case .decrement: return "Decreases the value"
        case .scrollForward: return "Scrolls forward by a screenful"
        case .scrollBackward: return "Scrolls back by a screenful"
        case .custom(let name): return name
        }
    }
}
