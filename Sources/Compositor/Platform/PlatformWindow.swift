/// Which window an event or a command is for, among the application's windows: SDL's window id,
/// stable for the window's life and never reused while it is open.
/// - Thread: any (a value)
public struct WindowID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public var description: String { "window \(rawValue)" }
}

/// What the platform reports to a window besides input.
/// - Thread: any (a value)
public enum BackendEvent: Sendable, Equatable {
    case input(InputEvent)
    /// Render targets lost their contents (`SDL_RENDER_TARGETS_RESET`).
    case renderTargetsReset
    /// Every texture was lost (`SDL_RENDER_DEVICE_RESET`).
    case renderDeviceReset
}

/// A window as the platform gives it, apart from drawing: its events, its density, where it is on
/// the screen, the pointer's shape over it, text input and the clipboard. A `RenderBackend` draws
/// into it and knows nothing of these; a `Compositor` reads the window's events and hands its frames
/// to the renderer.
///
/// `SDLWindow` is the platform's (SDL's video and events); `RecordingRenderBackend` is a fake of
/// both sides for tests; a `Compositor` whose frames go to a `CompositorThread` has a stand-in that
/// forwards what the UI thread asks of the window to the thread that owns it. An application may
/// hold several windows: each reads only its own events (see `SDLWindow`).
/// - Thread: the thread that made the window (its owner), every member, unless a member says otherwise.
public protocol PlatformWindow: AnyObject, TextInputPlatform {
    /// Which window this is among the application's.
    var windowID: WindowID { get }
    /// Output pixels per point: forced, or the window's drawable size over its size.
    var scale: Double { get }
    /// Where the window is on the screen and whether it has the keyboard focus (readable from any thread).
    var windowPlacement: WindowPlacement { get }
    /// The refresh rate of the window's display in frames a second; nil when unknown.
    var refreshRate: Double? { get }
    /// The platform's name for its video driver ("x11", "wayland", "dummy"; "none" without one).
    var videoDriverName: String { get }
    /// Drains this window's pending events.
    func pollEvents() -> [BackendEvent]
    /// True when events another window of the process read for this one wait for it: a wait for
    /// several windows' events must not block before this one reads them.
    var hasPendingEvents: Bool { get }
    /// Blocks until this window has an event, its wake-up is woken (`UIWakeup`), or `timeout`
    /// seconds pass (nil: no limit), then drains its pending events.
    func waitForEvents(timeout: Double?) -> [BackendEvent]
    /// Shows `cursor` as the pointer's shape over this window. Hosts call it only when the shape changes.
    func setCursor(_ cursor: Cursor)
    /// Moves the pointer to `point` (in points) inside the window, as a user's hand would; the
    /// platform then reports the motion like any other.
    func warpPointer(to point: Point)
}

extension PlatformWindow {
    public var hasPendingEvents: Bool { false }
    public func waitForEvents(timeout: Double?) -> [BackendEvent] { pollEvents() }
    public func warpPointer(to point: Point) {}
}
