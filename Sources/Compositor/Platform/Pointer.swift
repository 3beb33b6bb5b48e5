/// A mouse button, numbered as SDL numbers them (`SDL_BUTTON_LEFT` is 1). `InputEvent.pointerDown`
/// and `.pointerUp` carry the same number as a plain `Int`.
/// - Thread: any
public struct PointerButton: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The left button (or a one-button pointer): the one that taps, drags and scrolls.
    public static let primary = PointerButton(rawValue: 1)
    /// The middle button (often the wheel pressed).
    public static let middle = PointerButton(rawValue: 2)
    /// The right button: context menus, never a tap unless a recognizer asks for it.
    public static let secondary = PointerButton(rawValue: 3)

    public var description: String {
        switch self {
        case .primary: return "primary"
        case .middle: return "middle"
        case .secondary: return "secondary"
        default: return "button \(rawValue)"
        }
    }
}

/// The pointer's shape over a node. The SDL backend shows each with `SDL_CreateSystemCursor`.
/// - Thread: any
public enum Cursor: Hashable, Sendable, CaseIterable {
    /// The ordinary arrow: the default wherever no node asks for another.
    case arrow
    /// The text caret, over text that can be read or selected.
    case iBeam
    /// A pointing hand, over something a click activates (a link).
    case hand
    case crosshair
    /// Busy.
    case wait
    /// The action under the pointer is not available.
    case notAllowed
    /// Four arrows: something can be moved in any direction.
    case move
    /// Something can be resized or dragged up and down.
    case resizeVertical
    /// Something can be resized or dragged left and right.
    case resizeHorizontal
}
