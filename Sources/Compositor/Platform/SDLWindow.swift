internal import CSDL

/// A window of SDL's video layer: an `SDL_Window`, its events, its density, where it is, the
/// pointer's shape over it, text input and the clipboard. It draws nothing; an `SDLRenderBackend`
/// made for it does (`SDLRenderBackend(window:)`).
///
/// SDL's event queue is one for the process. A window reads from it only the events that are its
/// own, by the window id SDL stamps on them, and puts the other windows' aside for them; an event
/// that belongs to no window (quit, a renderer reset, one pushed without an id) goes to every open
/// window. So an application may open several windows on one thread, each read on its own.
///
/// SDL's video state is bound to the thread that initialised it: make windows on one thread (the UI
/// thread, or a `CompositorThread`).
/// - Thread: the thread that made it (its `owner`), every member unless said otherwise.
public final class SDLWindow: PlatformWindow {
    /// What kind of window to open.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        public var title: String
        /// The window's size in points.
        public var size: Size
        /// Output pixels per point, forced; nil takes the desktop's on X11 (`DesktopScale`: `GDK_SCALE`,
        /// `Xft.dpi`), else the window's own: its drawable size over its size (the output's scale on
        /// Wayland).
        public var scale: Double?
        /// Force SDL's dummy video driver (no display needed).
        public var headless: Bool
        public var resizable: Bool
        /// What ends this window's event wait from other threads.
        public var eventWake: UIWakeup
        /// Opens an undecorated popup window of this kind (a menu's, a tooltip's) instead of an app
        /// window: override-redirect on X11, kept off the taskbar and above the others, placed at
        /// `position`; nil: an app window, centred.
        public var popup: PopupWindowKind?
        /// Where a popup window's top-left corner goes on the screen, in the window system's units
        /// (screen pixels on X11). Ignored for an app window.
        public var position: Point?
        /// Opens a dialog window modal for this window of the process: centred over it, kept above it
        /// (transient for it, `_NET_WM_STATE_MODAL`, on X11), and the keyboard focus handed back to it
        /// if the dialog holds it as it closes. The parent's input is the owner's to block
        /// (`inputBlockedBy`). Ignored for a popup, or when no such window is open.
        public var modalFor: WindowID?
        public init(title: String = "Tessera", size: Size, scale: Double? = nil, headless: Bool = true,
                    resizable: Bool = false, eventWake: UIWakeup = .shared) {
            self.title = title; self.size = size; self.scale = scale
            self.headless = headless; self.resizable = resizable; self.eventWake = eventWake
        }
    }

    let window: OpaquePointer
    /// SDL's id of the window, which its events carry.
    public let windowID: WindowID
    /// The thread that made the window, the only one that may use it.
    public let owner = ThreadOwner()
    /// What ends the event wait from other threads (see `Configuration.eventWake`).
    let eventWake: UIWakeup
    /// Output pixels per point: the forced scale, or the window's drawable size over its size.
    /// (owner's thread only)
    public internal(set) var scale: Double
    /// Window coordinates (SDL's event units) per point: the forced scale, or 1 where the platform
    /// scales the window itself. (immutable)
    let windowUnitsPerPoint: Double
    /// True when the scale follows the window's display. (immutable)
    let followsDisplayScale: Bool
    /// The desktop's scale the window was opened at (X11: `GDK_SCALE`, `Xft.dpi`; see `DesktopScale`),
    /// or nil when it has a scale of its own or follows its display's. (immutable)
    public let desktopScale: DesktopScale?
    /// Where the window is on the screen and whether it has the keyboard focus, for other threads;
    /// updated as the window's events are read. (any thread)
    public let windowPlacement = WindowPlacement()
    /// The pointer shape this window's content asks for, shown while the pointer is over it.
    var wantedCursor = Cursor.arrow
    /// True for a popup window (`Configuration.popup`). (immutable)
    let isPopup: Bool
    /// The window that had the keyboard focus when this popup window opened: where the focus goes
    /// back if the popup holds it as it closes (where no window manager runs, SDL gives it the focus,
    /// and X11 would give it to no window after). (immutable)
    let focusReturnsTo: UInt32?
    /// The modal window this window waits for, while one is open over it: its pointer, keys, text and
    /// close button are dropped as they are read (`InputEvent.isUserInput`), and a press or a close
    /// request brings the modal window forward and gives it the keyboard focus. (owner's thread only)
    public var inputBlockedBy: WindowID? {
        didSet {
            owner.precondition("SDLWindow.inputBlockedBy")
            // Text input a press turned on for a field of this window ends: no field here takes it now.
            if inputBlockedBy != nil && provisionalTextInput { endProvisionalTextInput() }
        }
    }
    /// True once the window was minimized, until it is restored, maximized or exposed
    /// (`InputEvent.windowVisibilityChanged`).
    /// (owner's thread only)
    var isOutOfSight = false
    /// True for a popup window until its first frame is presented: it is shown then.
    /// (owner's thread only)
    private(set) var waitsForFirstPresent = false
    /// Where a drag from another application was last seen over the window (window points), and
    /// what a drop has brought so far. (owner's thread only)
    var dragPoint: Point?
    var droppedItems: [DroppedItem]?
    /// The window a dialog window is modal for (`Configuration.modalFor`), when it was open. (immutable)
    let modalParentID: UInt32?
    /// True once a dialog window was shown (`showAsModalDialog`).
    private var shownAsModalDialog = false
    /// Wait in SDL's own event queue under the dummy driver too, as under X11 and Wayland (tests of
    /// the wait's wake-up use it).
    var waitsInSDLQueue = false
    /// True when frames reach the window through its surface (SDL's software renderer), which the
    /// window sends again when the window system lost what it showed. Set by the renderer.
    var presentsThroughSurface = false
    /// Told when the renderer lost its device (its own render targets went with it). Set by the renderer.
    var deviceResetHandler: (() -> Void)?
    /// The drawable's pixels per window unit as a test has it (`pushEvent(.input(.contentsScaleChanged))`):
    /// under the dummy driver the drawable is always the window's size. nil: SDL's.
    var simulatedDisplayScale: Double?
    /// Told as the window's events say it changed (moved, resized, its scale): true when the renderer
    /// was made anew for the window's drawable, its textures gone with the old one (the software
    /// renderer's pixel surface on Wayland, outgrown). Set by the renderer.
    var drawableChangeHandler: (() -> Bool)?
    var registeredForTextEntry = false
    /// True once `hide()` ran: the window takes no text.
    private(set) var isHidden = false
    /// True while text input is on because a press or a key may have focused a text field, and no
    /// field has said it takes text yet.
    var provisionalTextInput: Bool { SDLTextInput.isProvisional(windowID.rawValue) }
    /// True once the read of events that turned it on has ended (its events went to the owner).
    var provisionalTextInputRead = false
    /// Whether the text input a press turned on ends at the next read of events when no field took
    /// it (the owner reads events and answers them in one go); a compositor thread, whose events are
    /// answered on the UI thread, ends it itself.
    var endsProvisionalTextInputAtNextRead = true

    /// Name of the SDL video driver in use ("dummy", "x11", "wayland", …).
    public var videoDriverName: String {
        SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? "none"
    }

    /// Opens a window, starting SDL's video the first time.
    /// - Throws: `SDLBackendError` when SDL cannot start video or open the window.
    public init(_ configuration: Configuration) throws {
        if configuration.headless { setenv("SDL_VIDEODRIVER", "dummy", 1) }
        // A click that brings the window the focus acts too, as in GTK's apps: without this SDL drops
        // a button press that comes within 10 ms of the window's focus-in on X11.
        SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1")
        // An input method's composition of any length arrives whole (`SDL_TEXTEDITING_EXT` past 32
        // bytes), with the input method's cursor and selection; without this SDL cuts it in pieces.
        SDL_SetHint(SDL_HINT_IME_SUPPORT_EXTENDED_TEXT, "1")
        if SDL_WasInit(UInt32(SDL_INIT_VIDEO)) == 0 {
            // Wayland where a compositor is named (X11 the fallback), never a seatless compositor
            // (see `VideoDriverChoice`); headless, the dummy driver as set above.
            let choice = configuration.headless ? VideoDriverChoice() : VideoDriverChoice.forProcess()
            try choice.startVideo()
        }
        let forced = configuration.scale.flatMap { $0.isFinite && $0 > 0 ? min($0, 8) : nil }
        // On X11 the drawable is the window's size: the desktop's scale is applied here, as a forced
        // one is (the window made that many pixels per point, events read in them).
        let desktop = forced == nil && SDL_GetCurrentVideoDriver().map({ String(cString: $0) }) == "x11"
            ? DesktopScale.currentX11() : nil
        desktopScale = desktop
        let scale = forced ?? desktop?.scale ?? 1
        self.scale = scale
        windowUnitsPerPoint = scale
        followsDisplayScale = forced == nil && desktop == nil
        let size = configuration.size.sanitizedForWindow
        let pixelWidth = Int32(clamping: PixelGeometry.nearestIndex(size.width * scale))
        let pixelHeight = Int32(clamping: PixelGeometry.nearestIndex(size.height * scale))
        // The window a dialog is modal for; none found (closed, or none of the process's): an app window.
        let modalParent = configuration.popup == nil ? configuration.modalFor.flatMap { SDL_GetWindowFromID($0.rawValue) } : nil
        // A popup is shown by its first present (no empty window before its first frame); a dialog
        // once its renderer is made (`showAsModalDialog`).
        var flags = UInt32(configuration.popup != nil || modalParent != nil ? SDL_WINDOW_HIDDEN.rawValue
                                                                            : SDL_WINDOW_SHOWN.rawValue)
        if configuration.resizable { flags |= UInt32(SDL_WINDOW_RESIZABLE.rawValue) }
        // A window whose scale follows its display asks for a full-density drawable.
        if forced == nil { flags |= UInt32(SDL_WINDOW_ALLOW_HIGHDPI.rawValue) }
        var x = Int32(bitPattern: UInt32(SDL_WINDOWPOS_CENTERED_MASK)), y = x
        // A dialog opens centred over the window it is modal for (the window system's units).
        if let modalParent {
            var parentX: Int32 = 0, parentY: Int32 = 0, parentWidth: Int32 = 0, parentHeight: Int32 = 0
            SDL_GetWindowPosition(modalParent, &parentX, &parentY)
            SDL_GetWindowSize(modalParent, &parentWidth, &parentHeight)
            // The window is made `pixelWidth` × `pixelHeight` window units, as the parent's size is read.
            x = Int32(clamping: Int64(parentX) + (Int64(parentWidth) - Int64(max(1, pixelWidth))) / 2)
            y = Int32(clamping: Int64(parentY) + (Int64(parentHeight) - Int64(max(1, pixelHeight))) / 2)
        }
        if let popup = configuration.popup {
            flags |= popup.windowFlags
            if let position = configuration.position {
                x = Int32(clamping: Int(position.x.rounded()))
                y = Int32(clamping: Int(position.y.rounded()))
            }
        }
        // Without a window manager SDL gives every window it shows the keyboard focus; a popup must
        // leave it where it was, or the window it belongs to would end it as it lost the focus.
        let focusedBefore = configuration.popup != nil ? SDL_GetKeyboardFocus() : nil
        guard let window = SDL_CreateWindow(configuration.title, x, y,
                                            max(1, pixelWidth), max(1, pixelHeight), flags) else {
            throw SDLBackendError(message: "SDL could not open a window: \(String(cString: SDL_GetError()))")
        }
        self.window = window
        isPopup = configuration.popup != nil
        waitsForFirstPresent = isPopup
        focusReturnsTo = focusedBefore.map { SDL_GetWindowID($0) } ?? modalParent.map { SDL_GetWindowID($0) }
        // A dialog waits, hidden, for its renderer (which may make the X window anew): then it is
        // marked modal for its parent and shown (`showAsModalDialog`).
        modalParentID = modalParent.map { SDL_GetWindowID($0) }
        let id = SDL_GetWindowID(window)
        self.windowID = WindowID(rawValue: id)
        self.eventWake = configuration.eventWake
        // Text input starts when a text field takes focus. SDL has one switch for the process: the
        // first window turns it off; a later one leaves another window's text field as it is.
        if SDLEventRouting.open(id) == 1 { SDLTextInput.settle() }
        returnFocusFromPopup()
        if followsDisplayScale { self.scale = displayScale() ?? 1 }
        updateWindowPlacement()
        // A wake from any thread ends the event wait: an event of a type of its own, which
        // `SDL_PushEvent` (safe from any thread) puts on the queue. Whichever window on the thread
        // reads it, its wait ends; no window keeps it (see `SDLEventRouting.route`).
        let wakeType = SDL_RegisterEvents(1)
        if wakeType != UInt32.max {
            configuration.eventWake.setPlatformWake {
                var wake = SDL_Event()
                wake.type = wakeType
                _ = SDL_PushEvent(&wake)
            }
        }
    }

    /// A popup gives the keyboard focus back to the window that had it when the popup opened: SDL,
    /// without a window manager, focuses every window it shows, at its making and again when a
    /// renderer makes the X window anew. SDL learns of the focus it gave only as it reads the events
    /// that say so: asked back regardless. Nothing for other windows.
    func returnFocusFromPopup() {
        guard isPopup, let focusReturnsTo, let back = SDL_GetWindowFromID(focusReturnsTo) else { return }
        _ = SDL_SetWindowInputFocus(back)
    }

    /// True while the window is shown (mapped on X11). (owner's thread only)
    public var isShown: Bool { SDL_GetWindowFlags(window) & SDL_WINDOW_SHOWN.rawValue != 0 }

    /// Shows a popup window, opened hidden, as its first frame is presented: the frame drawn is what
    /// appears, never an empty window before it. The focus stays where it was (`returnFocusFromPopup`).
    func showForFirstPresent() {
        guard waitsForFirstPresent else { return }
        waitsForFirstPresent = false
        SDL_ShowWindow(window)
        returnFocusFromPopup()
        updateWindowPlacement()
    }

    /// Shows a dialog window opened hidden (`Configuration.modalFor`), once its renderer is made:
    /// transient for its parent and marked modal there (`_NET_WM_STATE_MODAL` on X11), raised, with the
    /// keyboard focus. Nothing for other windows, or once shown.
    func showAsModalDialog() {
        guard let parentID = modalParentID, !shownAsModalDialog else { return }
        shownAsModalDialog = true
        if let parent = SDL_GetWindowFromID(parentID) { _ = SDL_SetWindowModalFor(window, parent) }
        _ = tessera_sdl_x11_mark_modal(window)
        SDL_ShowWindow(window)
        SDL_RaiseWindow(window)
        updateWindowPlacement()
    }

    /// Reads the window system's id of the window into `windowPlacement` ("x11:<hex>"). Read again
    /// once a renderer is made: SDL makes the X window anew when a renderer needs another visual.
    func updateWindowSystemIdentifier() {
        let x11Window = tessera_sdl_x11_window_id(window)
        windowPlacement.windowSystemIdentifier = x11Window != 0 ? "x11:" + String(x11Window, radix: 16) : nil
        registerForDrags(x11Window: UInt(x11Window))
    }

    /// Leaves what the process's windows share (each part harmless twice): the drop targets, the
    /// event watch, SDL's queue's routing, the text input.
    private func leaveSharedState() {
        SDLDrags.unregister(window: windowID.rawValue)
        SDLTextEntry.unregister(windowID.rawValue)
        SDLEventRouting.close(windowID.rawValue)
        SDLTextInput.windowClosed(windowID.rawValue)
    }

    deinit {
        leaveSharedState()
        let holdsFocus = SDL_GetKeyboardFocus() == window
        SDL_DestroyWindow(window)
        if holdsFocus, let focusReturnsTo, let back = SDL_GetWindowFromID(focusReturnsTo) { _ = SDL_SetWindowInputFocus(back) }
    }

    /// True when events another window read from SDL's queue wait for this one (`SDLEventRouting`).
    /// - Thread: any
    public var hasPendingEvents: Bool { SDLEventRouting.hasPending(for: windowID.rawValue) }

    /// The window's title.
    public var title: String {
        get { SDL_GetWindowTitle(window).map { String(cString: $0) } ?? "" }
        set {
            owner.precondition("SDLWindow.title")
            SDL_SetWindowTitle(window, newValue)
        }
    }

    /// Moves and sizes a popup window: its top-left corner to `origin` on the screen and its size to
    /// `size`, both in the window system's units (screen pixels on X11).
    public func setFrame(origin: Point, size: Size) {
        owner.precondition("SDLWindow.setFrame")
        SDL_SetWindowPosition(window, Int32(clamping: Int(origin.x.rounded())), Int32(clamping: Int(origin.y.rounded())))
        SDL_SetWindowSize(window, max(1, Int32(clamping: Int(size.width.rounded()))),
                          max(1, Int32(clamping: Int(size.height.rounded()))))
        updateWindowPlacement()
    }

    /// Hides the window for good (an application's closed window that something still holds; SDL's
    /// window is destroyed when it is let go). It takes no text from now on: its field's text input
    /// and the text events its last presses and keys turned on end (SDL's process-wide switch is
    /// left to the other windows), and neither its presses nor `startTextInput` turn any on again.
    /// Nor does it take its share of what the other windows read from SDL's queue, or drops.
    public func hide() {
        owner.precondition("SDLWindow.hide")
        // A popup hidden before its first frame stays hidden as that frame is presented.
        waitsForFirstPresent = false
        isHidden = true
        leaveSharedState()
        SDL_HideWindow(window)
    }

    /// The window's drawable size in pixels (`SDL_GetWindowSizeInPixels`).
    public var pixelSize: (width: Int, height: Int) {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetWindowSizeInPixels(window, &w, &h)
        return (Int(w), Int(h))
    }

    /// The display's refresh rate in frames a second, nil when SDL does not know it (the dummy
    /// driver, a virtual display reporting 0).
    public var refreshRate: Double? {
        var mode = SDL_DisplayMode()
        let display = SDL_GetWindowDisplayIndex(window)
        guard display >= 0, SDL_GetCurrentDisplayMode(display, &mode) == 0, mode.refresh_rate > 0 else { return nil }
        return Double(mode.refresh_rate)
    }
}

/// The kinds of popup window (`SDLWindow.Configuration.popup`): what the window system is told the
/// window is (`_NET_WM_WINDOW_TYPE_POPUP_MENU` or `_TOOLTIP` on X11, where SDL makes either
/// override-redirect: not managed, not decorated, never given the focus by a window manager).
/// - Thread: any (a value)
public enum PopupWindowKind: Sendable, Hashable {
    /// A menu, a context menu, a submenu, a popover.
    case menu
    /// A tooltip.
    case tooltip

    var windowFlags: UInt32 {
        let kind = self == .menu ? SDL_WINDOW_POPUP_MENU.rawValue : SDL_WINDOW_TOOLTIP.rawValue
        return UInt32(kind) | UInt32(SDL_WINDOW_BORDERLESS.rawValue) | UInt32(SDL_WINDOW_SKIP_TASKBAR.rawValue)
            | UInt32(SDL_WINDOW_ALWAYS_ON_TOP.rawValue)
    }
}

/// SDL's one event queue shared by the process's windows: what one window drains that is another's
/// waits here until that window reads its events.
/// - Thread: any
enum SDLEventRouting {
    /// The events put aside for each open window, by SDL window id.
    private static let pending = Guarded<[UInt32: [SDL_Event]]>([:])

    /// Registers an open window; returns how many are open.
    @discardableResult
    static func open(_ window: UInt32) -> Int {
        pending.withLock {
            $0[window] = $0[window] ?? []
            return $0.count
        }
    }

    static func close(_ window: UInt32) {
        let unread = pending.withLock { $0.removeValue(forKey: window) } ?? []
        unread.forEach(release)
    }

    /// The events put aside for `window`, taken.
    static func take(for window: UInt32) -> [SDL_Event] {
        pending.withLock { pending in
            guard let events = pending[window], !events.isEmpty else { return [] }
            pending[window] = []
            return events
        }
    }

    /// True when events wait for `window`.
    static func hasPending(for window: UInt32) -> Bool {
        pending.withLock { !($0[window]?.isEmpty ?? true) }
    }

    /// Whether `event`, read from SDL's queue by `window`, is `window`'s: an event of another open
    /// window is put aside for it (false); one of no window is `window`'s and every other open
    /// window's (a copy is put aside for each); one of a window no longer open is dropped (false).
    static func route(_ event: SDL_Event, readBy window: UInt32) -> Bool {
        // An event type registered at run time (a wake) only ends the wait of the window that read it;
        // a drag is its window's.
        if event.type >= SDL_USEREVENT.rawValue && event.type != SDLDrags.eventType { return true }
        let target = windowID(of: event)
        if target == window { return true }
        // A drop's text (or a long composition's) is SDL's allocation, freed by whoever takes the
        // event: never copied.
        if target == 0 && holdsAllocation(event) { return true }
        let kept = pending.withLock { pending -> Bool in
            if target == 0 {
                for id in pending.keys where id != window { pending[id]!.append(event) }
                return true
            }
            guard pending[target] != nil else { return false }
            pending[target]!.append(event)
            return true
        }
        if !kept { release(event) }  // a closed window's: nobody will take it
        return kept && target == 0
    }

    static func isDrop(_ event: SDL_Event) -> Bool {
        switch SDL_EventType(event.type) {
        case SDL_DROPFILE, SDL_DROPTEXT, SDL_DROPBEGIN, SDL_DROPCOMPLETE: return true
        default: return false
        }
    }

    /// True for an event that holds an allocation of SDL's (a drop's file name or text, a long
    /// composition's text).
    static func holdsAllocation(_ event: SDL_Event) -> Bool {
        isDrop(event) || SDL_EventType(event.type) == SDL_TEXTEDITING_EXT
    }

    /// Frees what SDL allocated for `event` (a drop's file name or text, a long composition's text),
    /// once it has been read.
    static func release(_ event: SDL_Event) {
        if isDrop(event), let file = event.drop.file { SDL_free(file) }
        if SDL_EventType(event.type) == SDL_TEXTEDITING_EXT, let text = event.editExt.text { SDL_free(text) }
    }

    /// The window an event is stamped with; 0 for none.
    static func windowID(of event: SDL_Event) -> UInt32 {
        switch SDL_EventType(event.type) {
        case SDL_WINDOWEVENT: return event.window.windowID
        case SDL_KEYDOWN, SDL_KEYUP: return event.key.windowID
        case SDL_TEXTEDITING: return event.edit.windowID
        case SDL_TEXTEDITING_EXT: return event.editExt.windowID
        case SDL_TEXTINPUT: return event.text.windowID
        case SDL_MOUSEMOTION: return event.motion.windowID
        case SDL_MOUSEBUTTONDOWN, SDL_MOUSEBUTTONUP: return event.button.windowID
        case SDL_MOUSEWHEEL: return event.wheel.windowID
        case SDL_DROPFILE, SDL_DROPTEXT, SDL_DROPBEGIN, SDL_DROPCOMPLETE: return event.drop.windowID
        default: return event.type == SDLDrags.eventType ? event.user.windowID : 0
        }
    }
}

/// SDL 2's text input is one switch for the process (and stopping it drops the text events queued):
/// it is on while any window's text field takes text, or a press or a key in a window may have just
/// focused one (a provisional start, see `SDLWindow+TextEntry`). A field's start starts it whole
/// (`SDL_StartTextInput`: the input method too); a provisional start only lets keys keep their text
/// (SDL's text events on), from inside SDL's read of events.
/// - Thread: any (SDL's calls are made by the thread that changes it)
enum SDLTextInput {
    private struct State {
        /// The windows whose text field takes text now.
        var fields = Set<UInt32>()
        /// The windows where a press or a key may have focused a field, not yet answered.
        var provisional = Set<UInt32>()
        /// `SDL_StartTextInput` ran since text input was last off.
        var started = false
    }

    private static let state = Guarded(State())

    private enum Step { case none, start, stop }

    /// Changes the state and says what SDL's switch must do for it: started whole while a field takes
    /// text, off when nothing takes text or may.
    private static func change(_ body: (inout State) -> Void) -> Step {
        state.withLock { state in
            body(&state)
            if !state.fields.isEmpty {
                if state.started { return .none }
                state.started = true
                return .start
            }
            if !state.provisional.isEmpty { return .none }
            state.started = false
            return .stop
        }
    }

    private static func run(_ step: Step) {
        switch step {
        case .start: SDL_StartTextInput()
        case .stop: if SDL_IsTextInputActive() == SDL_TRUE { SDL_StopTextInput() }
        case .none: break
        }
    }

    /// `window`'s field takes text (a provisional start of the window is confirmed).
    static func startField(_ window: UInt32) { run(change { $0.fields.insert(window); $0.provisional.remove(window) }) }
    /// `window`'s field takes text no more.
    static func stopField(_ window: UInt32) { run(change { $0.fields.remove(window) }) }
    /// The input method drops its composition: SDL resets it (`SDL_IME_Reset`) only as text input
    /// stops, so text input is stopped and started again while a field takes text (what SDL had
    /// queued of the composition and typed text goes with it). Nothing happens while none does.
    static func resetInputMethod() {
        let on = state.withLock { $0.started && !$0.fields.isEmpty }
        guard on else { return }
        SDL_StopTextInput()
        SDL_StartTextInput()
    }
    /// A window's first reader settles SDL's switch (SDL starts with text input on).
    static func settle() { run(change { _ in }) }
    /// `window` is gone, with its field and what its presses started.
    static func windowClosed(_ window: UInt32) {
        run(change { $0.fields.remove(window); $0.provisional.remove(window) })
    }

    /// A press or a key in `window` may focus a field: recorded unless the window's field takes text
    /// already, and SDL's text events turned on if they were off. Called while SDL reads the event.
    /// Returns true when recorded.
    static func beginProvisional(_ window: UInt32) -> Bool {
        let recorded = state.withLock { state -> Bool in
            guard !state.fields.contains(window) else { return false }
            state.provisional.insert(window)
            return true
        }
        if recorded && SDL_EventState(SDL_TEXTINPUT.rawValue, SDL_QUERY) != SDL_ENABLE {
            _ = SDL_EventState(SDL_TEXTINPUT.rawValue, SDL_ENABLE)
            _ = SDL_EventState(SDL_TEXTEDITING.rawValue, SDL_ENABLE)
        }
        return recorded
    }

    /// No field of `window` took the provisional start: off again unless something else takes text.
    static func endProvisional(_ window: UInt32) { run(change { $0.provisional.remove(window) }) }

    static func isProvisional(_ window: UInt32) -> Bool { state.withLock { $0.provisional.contains(window) } }
    static func takesText(_ window: UInt32) -> Bool { state.withLock { $0.fields.contains(window) } }
}
