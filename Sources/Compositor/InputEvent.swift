/// A key, as the gallery and the runtime name it. Keys without a name arrive as `.other(code)`,
/// carrying SDL's key code.
/// - Thread: any
public enum Key: Hashable, Sendable {
    case escape, enter, space, tab, backspace
    case up, down, left, right, pageUp, pageDown, home, end
    case function(Int)
    case character(Character)
    case other(Int32)
}

/// Modifier keys held during an event.
/// - Thread: any
public struct KeyModifiers: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let shift = KeyModifiers(rawValue: 1 << 0)
    public static let control = KeyModifiers(rawValue: 1 << 1)
    public static let alt = KeyModifiers(rawValue: 1 << 2)
    public static let command = KeyModifiers(rawValue: 1 << 3)
}

/// Input and window events in points (window coordinates divided by the output scale).
/// - Thread: any
public enum InputEvent: Sendable, Equatable {
    case quit
    /// The window's size in points changed.
    case resized(Size)
    /// A mouse button went down. `button` is a `PointerButton`'s number (1 primary, 2 middle,
    /// 3 secondary); `clicks` counts quick presses in one place as the platform does (2 for the second
    /// press of a double-click).
    case pointerDown(Point, button: Int, clicks: Int = 1)
    case pointerUp(Point, button: Int)
    case pointerMoved(Point)
    /// The pointer left the window: nothing is hovered any more.
    case pointerLeftWindow
    /// Wheel motion in points (positive `dy` scrolls content up, as SDL reports it).
    case wheel(dx: Double, dy: Double)
    case keyDown(Key, modifiers: KeyModifiers)
    case keyUp(Key, modifiers: KeyModifiers)
}
