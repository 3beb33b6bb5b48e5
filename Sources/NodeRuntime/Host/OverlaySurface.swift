public import Compositor

/// Where a host's popups and tooltips can be shown outside its window: a window system that can
/// place undecorated windows on the screen (X11). The host keeps each overlay in its own tree and
/// stack as always (focus, Escape, menus' chains, screen readers, the presses outside that end a
/// popup all stay the host's); only the drawing of a popup's or a tooltip's content moves to a
/// surface of its own, placed against the screen rather than the window, so that it can reach past
/// the window's edges. Modal overlays (dialogs, sheets) stay in the window.
///
/// Set by whoever owns the window (`Application.Window` sets one for a window of its own on X11).
/// Without one (headless, or a window system without positioned popups, such as Wayland's through
/// SDL 2), and for a popup whose surface could not be made, the overlay is drawn inside the window,
/// placed within its bounds, as before.
/// - Thread: main, every member.
@MainActor
public protocol OverlaySurfaceProvider: AnyObject {
    /// The part of the screen popups may use, in the host's window points (it may reach past the
    /// window on every side); nil when surfaces cannot be made now, in which case overlays are drawn
    /// in the window.
    var screenBounds: Rect? { get }
    /// A new surface for an overlay of `kind` (`.popup` or `.tooltip`) covering `frame`, in the host's
    /// window points; nil when it cannot be made (the overlay is then drawn in the window).
    func makeSurface(kind: Overlay.Kind, frame: Rect) -> OverlaySurface?
}

/// One overlay's surface: a window of its own that shows the overlay's content, made by an
/// `OverlaySurfaceProvider`. The host draws into it with `compositor` each frame it draws its own
/// window, moves it with `setFrame`, reads its input with `takeEvents` and closes it when the overlay
/// ends.
/// - Thread: main, every member.
@MainActor
public protocol OverlaySurface: AnyObject {
    /// What draws the surface's layers.
    var compositor: Compositor { get }
    /// Places the surface at `frame`, in the host's window points.
    func setFrame(_ frame: Rect)
    /// True when input for the surface waits to be taken: `NodeHost.needsFrame` says so, and whatever
    /// gave it wakes the UI thread (`UIWakeup.shared`).
    var hasPendingEvents: Bool { get }
    /// The input the surface read since the last call, in its own points (its top-left corner is 0, 0).
    func takeEvents() -> [InputEvent]
    /// Closes the surface: it leaves the screen. Called once; no call follows.
    func close()
}
