public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// What an accessible element is to a screen reader. Each maps to one AT-SPI role (`atspiRole`),
/// which is what Orca announces.
/// - Thread: any
public enum AccessibilityRole: String, Sendable, Hashable, CaseIterable {
    /// Not an element itself; its elements belong to the nearest element above.
    case none
    /// The application (the tree's root).
    case application
    /// A window or a screen's frame.
    case window
    /// Elements that belong together (a row of a settings list, a card).
    case group
    /// Text to read.
    case staticText
    /// A title over a part of the screen.
    case heading
    case link
    case image
    case button
    /// An on/off control.
    case `switch`
    case checkBox
    /// One of a group of options of which one is chosen (a radio button, a segment).
    case radioButton
    /// Text the user can edit (one line or several).
    case textField
    case list
    case listItem
    /// A tab of a tab list, and the list of tabs.
    case tab
    case tabList
    /// Content that scrolls (a scroll node, a pager).
    case scrollArea
    case slider
    /// A number stepped up and down by buttons or keys, shown between them.
    case spinButton
    case progressBar
    /// A window's bar of menus, a menu (a popup list of items) and its items: plain, with a check
    /// mark, or one of a group of which one is chosen.
    case menuBar
    case menu
    case menuItem
    case checkMenuItem
    case radioMenuItem
    /// A line between groups (of menu items, of controls).
    case separator
    /// A window or sheet that asks something; an alert is one that tells of a problem or asks to
    /// confirm.
    case dialog
    case alert
    /// Text shown beside what the pointer rests on.
    case toolTip
    /// A bar of a screen's title and its buttons (a navigation bar, a header bar).
    case toolBar

    /// AT-SPI's number for the role (`AtspiRole` in at-spi2-core's atspi-constants.h).
    public var atspiRole: UInt32 {
        switch self {
        case .none, .group: return 39  // ATSPI_ROLE_PANEL
        case .application: return 75  // ATSPI_ROLE_APPLICATION
        case .window: return 23  // ATSPI_ROLE_FRAME, a top-level window
        case .staticText: return 29  // ATSPI_ROLE_LABEL: text to read (TEXT is for fields)
        case .heading: return 83  // ATSPI_ROLE_HEADING
        case .link: return 88  // ATSPI_ROLE_LINK
        case .image: return 27  // ATSPI_ROLE_IMAGE
        case .button: return 43  // ATSPI_ROLE_PUSH_BUTTON
        case .switch: return 62  // ATSPI_ROLE_TOGGLE_BUTTON
        case .checkBox: return 7  // ATSPI_ROLE_CHECK_BOX
        case .radioButton: return 44  // ATSPI_ROLE_RADIO_BUTTON
        case .textField: return 79  // ATSPI_ROLE_ENTRY
        case .list: return 31  // ATSPI_ROLE_LIST
        case .listItem: return 32  // ATSPI_ROLE_LIST_ITEM
        case .tab: return 37  // ATSPI_ROLE_PAGE_TAB
        case .tabList: return 38  // ATSPI_ROLE_PAGE_TAB_LIST
        case .scrollArea: return 49  // ATSPI_ROLE_SCROLL_PANE
        case .slider: return 51  // ATSPI_ROLE_SLIDER
        case .spinButton: return 52  // ATSPI_ROLE_SPIN_BUTTON
        case .progressBar: return 42  // ATSPI_ROLE_PROGRESS_BAR
        case .menuBar: return 34  // ATSPI_ROLE_MENU_BAR
        case .menu: return 33  // ATSPI_ROLE_MENU
        case .menuItem: return 35  // ATSPI_ROLE_MENU_ITEM
        case .checkMenuItem: return 8  // ATSPI_ROLE_CHECK_MENU_ITEM
        case .radioMenuItem: return 45  // ATSPI_ROLE_RADIO_MENU_ITEM
        case .separator: return 50  // ATSPI_ROLE_SEPARATOR
        case .dialog: return 16  // ATSPI_ROLE_DIALOG
        case .alert: return 2  // ATSPI_ROLE_ALERT
        case .toolTip: return 64  // ATSPI_ROLE_TOOL_TIP
        case .toolBar: return 63  // ATSPI_ROLE_TOOL_BAR
        }
    }

    /// AT-SPI's name for the role (what `GetRoleName` answers).
    public var atspiRoleName: String {
        switch self {
        case .none, .group: return "panel"
        case .application: return "application"
        case .window: return "frame"
        case .staticText: return "label"
        case .heading: return "heading"
        case .link: return "link"
        case .image: return "image"
        case .button: return "push button"
        case .switch: return "toggle button"
        case .checkBox: return "check box"
        case .radioButton: return "radio button"
        case .textField: return "entry"
        case .list: return "list"
        case .listItem: return "list item"
        case .tab: return "page tab"
        case .tabList: return "page tab list"
        case .scrollArea: return "scroll pane"
        case .slider: return "slider"
        case .spinButton: return "spin button"
        case .progressBar: return "progress bar"
        case .menuBar: return "menu bar"
        case .menu: return "menu"
        case .menuItem: return "menu item"
        case .checkMenuItem: return "check menu item"
        case .radioMenuItem: return "radio menu item"
        case .separator: return "separator"
        case .dialog: return "dialog"
        case .alert: return "alert"
        case .toolTip: return "tool tip"
        case .toolBar: return "tool bar"
        }
    }
}

/// The states of an accessible element, as a screen reader reads them.
/// - Thread: any
public struct AccessibilityStates: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Has the keyboard focus now.
    public static let focused = AccessibilityStates(rawValue: 1 << 0)
    /// Can take the keyboard focus.
    public static let focusable = AccessibilityStates(rawValue: 1 << 1)
    public static let selected = AccessibilityStates(rawValue: 1 << 2)
    public static let selectable = AccessibilityStates(rawValue: 1 << 3)
    /// Does not respond (a disabled control).
    public static let disabled = AccessibilityStates(rawValue: 1 << 4)
    /// Shows its hidden part (an expanded quote); with `.expandable`.
    public static let expanded = AccessibilityStates(rawValue: 1 << 5)
    public static let expandable = AccessibilityStates(rawValue: 1 << 6)
    /// On (a switch, a check box); with `.checkable`.
    public static let checked = AccessibilityStates(rawValue: 1 << 7)
    public static let checkable = AccessibilityStates(rawValue: 1 << 8)
    /// Its text can be edited.
    public static let editable = AccessibilityStates(rawValue: 1 << 9)
    public static let multiLine = AccessibilityStates(rawValue: 1 << 10)
    /// On screen now (an element scrolled away, or a list's row without a node, is not).
    public static let showing = AccessibilityStates(rawValue: 1 << 11)
    /// Keeps the rest of the window out of reach until it ends (an alert, a sheet).
    public static let modal = AccessibilityStates(rawValue: 1 << 12)
    /// Working on something of unknown length (an indeterminate progress bar).
    public static let busy = AccessibilityStates(rawValue: 1 << 20)
}

/// Something a screen reader can ask an element to do.
/// - Thread: any
public enum AccessibilityAction: Sendable, Hashable {
    /// Activate it, as a click or Space would (a button, a link, a switch, a row).
    case press
    /// Step a value up or down (a slider, a pager's page).
    case increment
    case decrement
    /// Scroll content by about a screenful.
    case scrollForward
    case scrollBackward
    /// An action the app named (`Node.accessibilityCustomActions`).
    case custom(String)

    /// The name AT-SPI's Action interface gives it.
    public var name: String {
        switch self {
        case .press: return "click"
        case .increment: return "increment"
        case .decrement: return "decrement"
        case .scrollForward: return "scroll-forward"
        case .scrollBackward: return "scroll-backward"
        case .custom(let name): return name
        }
    }
}

/// An action of the app's own on an element, for a screen reader's actions menu.
/// - Thread: any (the handler runs on the UI thread)
public struct AccessibilityCustomAction: Sendable {
    public var name: String
    /// Performs it; returns whether it did anything.
    public var handler: @MainActor @Sendable () -> Bool

    public init(name: String, handler: @escaping @MainActor @Sendable () -> Bool) {
        self.name = name
        self.handler = handler
    }
}

/// An element's text, for AT-SPI's Text and EditableText interfaces.
/// - Thread: any (a value)
public struct AccessibilityText: Sendable, Hashable {
    public var string: String
    /// The caret and the selection, in characters (grapheme clusters are not split: offsets count
    /// Unicode scalars, as AT-SPI does).
    public var caretOffset: Int
    public var selection: Range<Int>?
    public var isEditable: Bool

    public init(string: String, caretOffset: Int = 0, selection: Range<Int>? = nil, isEditable: Bool = false) {
        self.string = string
        self.caretOffset = caretOffset
        self.selection = selection
        self.isEditable = isEditable
    }
}

/// A value in a range (a slider, a progress bar, a pager's page).
/// - Thread: any (a value)
public struct AccessibilityValueRange: Sendable, Hashable {
    public var minimum: Double
    public var maximum: Double
    public var current: Double
    public var step: Double

    public init(minimum: Double, maximum: Double, current: Double, step: Double = 1) {
        self.minimum = minimum
        self.maximum = maximum
        self.current = current
        self.step = step
    }
}

/// How a node presents itself: its kind's defaults (`Node.accessibilityDefaults()`), with what the
/// app set on the node (`accessibilityLabel`, …) over them.
/// - Thread: any (a value)
public struct AccessibilityDescription: Sendable, Hashable {
    /// Whether the node is an element of its own; when false, its elements belong to the nearest
    /// element above it.
    public var isElement: Bool
    public var role: AccessibilityRole
    public var label: String
    public var value: String?
    public var hint: String?
    public var states: AccessibilityStates
    public var actions: [AccessibilityAction]
    public var text: AccessibilityText?
    public var valueRange: AccessibilityValueRange?
    /// A heading's level (1 is the top).
    public var headingLevel: Int?
    /// Whether the node's subnodes are read as elements of their own (false: the element speaks for
    /// its whole subtree, as a button does for its title).
    public var exposesChildren: Bool

    public init(isElement: Bool = false, role: AccessibilityRole = .none, label: String = "", value: String? = nil,
                hint: String? = nil, states: AccessibilityStates = [], actions: [AccessibilityAction] = [],
                text: AccessibilityText? = nil, valueRange: AccessibilityValueRange? = nil, headingLevel: Int? = nil,
                exposesChildren: Bool = true) {
        self.isElement = isElement
        self.role = role
        self.label = label
        self.value = value
        self.hint = hint
        self.states = states
        self.actions = actions
        self.text = text
        self.valueRange = valueRange
        self.headingLevel = headingLevel
        self.exposesChildren = exposesChildren
    }
}

/// One element of a published accessibility tree: immutable, so a bridge (AT-SPI over D-Bus) reads it
/// on its own thread while the UI thread goes on.
/// - Thread: any (a value)
public struct AccessibilityElement: Sendable, Hashable, Identifiable {
    /// Stable for the node's life, never reused by another node in the process.
    public var id: Int
    public var role: AccessibilityRole
    public var label: String
    public var value: String?
    public var hint: String?
    public var states: AccessibilityStates
    /// The element's rectangle in the window, in points.
    public var frame: Rect
    public var actions: [AccessibilityAction]
    public var text: AccessibilityText?
    public var valueRange: AccessibilityValueRange?
    public var headingLevel: Int?
    /// A list's row count, rows without a node included (they are read by index, as placeholders).
    public var rowCount: Int?
    /// A list item's row index in its list.
    public var rowIndex: Int?
    /// The elements inside it, in reading order.
    public var children: [AccessibilityElement]

    public init(id: Int, role: AccessibilityRole, label: String = "", value: String? = nil, hint: String? = nil,
                states: AccessibilityStates = [], frame: Rect = .zero, actions: [AccessibilityAction] = [],
                text: AccessibilityText? = nil, valueRange: AccessibilityValueRange? = nil, headingLevel: Int? = nil,
                rowCount: Int? = nil, rowIndex: Int? = nil, children: [AccessibilityElement] = []) {
        self.id = id
        self.role = role
        self.label = label
        self.value = value
        self.hint = hint
        self.states = states
        self.frame = frame
        self.actions = actions
        self.text = text
        self.valueRange = valueRange
        self.headingLevel = headingLevel
        self.rowCount = rowCount
        self.rowIndex = rowIndex
        self.children = children
    }

    /// Every element of the subtree, depth first, this one first.
    public var allElements: [AccessibilityElement] {
        var result = [self]
        for child in children { result.append(contentsOf: child.allElements) }
        return result
    }

    /// The first element of the subtree (depth first) that `predicate` accepts.
    public func first(where predicate: (AccessibilityElement) -> Bool) -> AccessibilityElement? {
        if predicate(self) { return self }
        for child in children {
            if let found = child.first(where: predicate) { return found }
        }
        return nil
    }
}

extension AccessibilityElement {
    /// The id of the placeholder element of row `row` of the list element `list` (what
    /// `NodeHost.accessibilityPlaceholder(forRow:ofListElement:)` answers): negative, so never a
    /// node's, and the same for the same row of the same list, so a bridge can name a row before it
    /// asks for it. Rows from 4,194,304 on share ids with lower ones (22 bits are kept).
    /// - Thread: any
    public static func placeholderID(row: Int, list: Int) -> Int {
        -((list << 24) | ((row & 0x3F_FFFF) << 2) | 2)
    }

    /// The list element and row a placeholder id stands for; nil for any other id.
    /// - Thread: any
    public static func placeholderRow(ofID id: Int) -> (list: Int, row: Int)? {
        guard id < 0 else { return nil }
        let packed = -id
        guard packed & 3 == 2 else { return nil }
        return (packed >> 24, (packed >> 2) & 0x3F_FFFF)
    }
}

/// A host's accessibility tree at one moment: what a screen reader sees.
/// - Thread: any (a value)
public struct AccessibilityTree: Sendable, Hashable {
    /// The root element (`.window`), holding the screen's elements in reading order.
    public var root: AccessibilityElement
    /// The element with the keyboard focus, if any.
    public var focusedID: Int?
    /// Increases with every tree the host publishes.
    public var version: Int

    public init(root: AccessibilityElement, focusedID: Int?, version: Int) {
        self.root = root
        self.focusedID = focusedID
        self.version = version
    }

    /// The element with `id`, if it is in the tree.
    public func element(id: Int) -> AccessibilityElement? { root.first { $0.id == id } }
}
