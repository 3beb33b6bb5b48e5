/// A key, as the gallery and the runtime name it. Keys without a name arrive as `.other(code)`,
/// carrying SDL's key code.
/// - Thread: any
public enum Key: Hashable, Sendable {
    case escape, enter, space, tab, backspace, delete
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
    /// The process is asked to end (a signal, the session ending; SDL also sends it after the close
    /// of the process's last window).
    case quit
    /// The user asked to close this window (its close button, the window manager's close): the
    /// application closes this window alone (`Application.Window.close()`).
    case closeRequested
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
    /// The window's pixels per point changed (it moved to a display of another density): contents
    /// are measured and drawn again at the new scale.
    case contentsScaleChanged(Double)
    /// Text typed, or committed by an input method (`SDL_TEXTINPUT`). A key that types a character
    /// also arrives as `keyDown`; an editor takes the text from here.
    case textInput(String)
    /// An input method's composition in progress (`SDL_TEXTEDITING`, or `SDL_TEXTEDITING_EXT` for a
    /// composition longer than SDL's 32-byte event): the marked text, where its cursor is in it, and
    /// how much of it from the cursor on the input method selects (its highlighted segment; 0: none),
    /// in Unicode scalars. Empty text ends the composition.
    case textEditing(String, cursor: Int, selected: Int = 0)
    /// The window gained (true) or lost (false) the keyboard focus: the user went to another window
    /// or came back. Menus and tooltips end when it goes.
    case windowFocusChanged(Bool)
    /// The window was minimized (false), or restored (true; or maximized or exposed straight from
    /// minimized, with no restore of its own). A host lets go of what it can rebuild
    /// while its window is out of sight (`NodeHost.isWindowVisible`).
    case windowVisibilityChanged(Bool)
    /// A drag from another application (files or text) is over the window at this point, in window
    /// points: it came in or moved. Reported where the window system says where a drag is (X11's
    /// XDND); elsewhere only the drop comes.
    case dragMoved(Point)
    /// The drag over the window left it, was given up, or ended in a drop: on X11 it comes as the
    /// drag is dropped, before the `dropped` that follows (if the platform took any of what was
    /// dragged; else it is all that comes).
    case dragExited
    /// Files or text from another application were dropped on the window: what was dropped, in the
    /// order the application gave it, and where (window points; nil where the platform does not say).
    case dropped([DroppedItem], at: Point?)
}

/// One thing dropped on a window from another application (`InputEvent.dropped`).
/// - Thread: any (a value)
public enum DroppedItem: Sendable, Hashable {
    /// A local file, by its path (a file manager's drag; `file://` URIs become paths, others are left out).
    case file(String)
    /// Text (a line of a text drag: the platform splits dropped text at line ends).
    case text(String)
}

extension InputEvent {
    /// True for what a person does in a window: the pointer (motion, presses, the wheel), keys, text
    /// and an input method's composition, and the close button. A window under a modal window
    /// (`SDLWindow.inputBlockedBy`) takes none of it; what the window system says of the window
    /// itself (a resize, a new scale, the focus, the pointer leaving) still comes.
    public var isUserInput: Bool {
        switch self {
        case .pointerDown, .pointerUp, .pointerMoved, .wheel, .keyDown, .keyUp, .textInput, .textEditing, .closeRequested,
             .dragMoved, .dropped:
            return true
        case .quit, .resized, .pointerLeftWindow, .contentsScaleChanged, .windowFocusChanged, .windowVisibilityChanged,
             .dragExited:
            return false
        }
    }
}

/// Text input and the clipboard, from the platform. `SDLRenderBackend` provides them through SDL;
/// a compositor thread's stand-in on the UI thread forwards them to it.
/// - Thread: the thread that owns the compositor (the UI thread for the UI's compositor).
public protocol TextInputPlatform: AnyObject {
    /// Starts delivering `textInput` and `textEditing` events (an input method may open), with its
    /// candidate window near `caret` (window points).
    func startTextInput(caret: Rect)
    /// Moves the input method's candidate window next to `caret` (window points).
    func setTextInputCaret(_ caret: Rect)
    /// Stops text input (the input method closes).
    func stopTextInput()
    /// Ends the input method's composition without letting it commit it (the field that showed it
    /// lost the focus to another field): its preedit is dropped and text input stays on.
    func cancelComposition()
    /// The clipboard's text, nil when it holds none.
    func clipboardText() -> String?
    /// Puts `text` on the clipboard.
    func setClipboardText(_ text: String)
}
