internal import CSDL

// An SDL window's events and the rest of its platform side: reading and translating SDL's events into
// points, the display scale that follows the window, text input and the clipboard, the system cursors,
// and the events tests push onto SDL's own queue.

extension SDLWindow {
    public func pollEvents() -> [BackendEvent] {
        owner.precondition("SDLWindow.pollEvents")
        endAnsweredProvisionalTextInput()
        return drainEvents(after: nil)
    }

    /// Blocks in SDL's event wait until an event, a `UIWakeup` (an event of the backend's own type,
    /// pushed from any thread) or `timeout` seconds, then drains the queue. SDL's dummy video driver
    /// has no wait of its own (SDL would poll every millisecond): there, the wake-up's own wait.
    ///
    /// A wake that came since the wake-up's last `reset()` ends the wait at once, even when the event
    /// it pushed was drained by a poll in between (a thread that resets, reads its work, polls its
    /// input and then waits would otherwise sleep through work handed to it before the poll).
    ///
    /// Events another window of the process read for this one end the wait at once too.
    public func waitForEvents(timeout: Double?) -> [BackendEvent] {
        owner.precondition("SDLWindow.waitForEvents")
        endAnsweredProvisionalTextInput()
        if eventWake.isWoken || SDLEventRouting.hasPending(for: windowID.rawValue) { return drainEvents(after: nil) }
        if videoDriverName == "dummy" && !waitsInSDLQueue {
            _ = eventWake.wait(timeout: timeout)
            return drainEvents(after: nil)
        }
        var event = SDL_Event()
        let received: Int32
        if let timeout {
            let milliseconds = timeout.isFinite ? min(max(0, (timeout * 1000).rounded(.up)), Double(Int32.max)) : Double(Int32.max)
            received = SDL_WaitEventTimeout(&event, Int32(milliseconds))
        } else {
            received = SDL_WaitEvent(&event)
        }
        return drainEvents(after: received != 0 ? event : nil)
    }

    /// Translates the events other windows put aside for this one, `first` (an event already taken
    /// from the queue) and every queued event that is this window's; the rest is put aside for the
    /// windows they belong to (see `SDLEventRouting`).
    /// The events read last time were answered (an owner that reads and answers them in one go):
    /// text input a press turned on, that no field took, goes off before SDL reads more.
    private func endAnsweredProvisionalTextInput() {
        if endsProvisionalTextInputAtNextRead { endProvisionalTextInput() }
    }

    private func drainEvents(after first: SDL_Event?) -> [BackendEvent] {
        var events: [BackendEvent] = []
        var windowChanged = false
        let id = windowID.rawValue
        func take(_ event: SDL_Event) {
            if SDL_EventType(event.type) == SDL_WINDOWEVENT { windowChanged = true }
            if let translated = translate(event) {
                if let modal = inputBlockedBy, case let .input(input) = translated, input.isUserInput {
                    // Under a modal window: dropped; a press or the close button brings the modal forward.
                    switch input {
                    case .pointerDown, .closeRequested: Self.bringForward(modal)
                    default: break
                    }
                } else {
                    events.append(translated)
                }
            }
            SDLEventRouting.release(event)
        }
        SDLEventRouting.take(for: id).forEach(take)
        if let first, SDLEventRouting.route(first, readBy: id) { take(first) }
        var event = SDL_Event()
        while SDL_PollEvent(&event) != 0 {
            if SDLEventRouting.route(event, readBy: id) { take(event) }
        }
        if videoDriverName == "wayland" { events = Self.inTextInputV3Order(events) }
        if provisionalTextInput { provisionalTextInputRead = true }
        if windowChanged { updateWindowPlacement() }
        // A window moved to another display, or resized there, may have a new density.
        if windowChanged, followsDisplayScale, let newScale = displayScale(), newScale != scale {
            scale = newScale
            events.append(.input(.contentsScaleChanged(newScale)))
        }
        // A drawable the renderer's output outgrew: the renderer is made anew at its size, and its
        // textures are gone (a renderer reset, before the frame at the new size is drawn).
        if windowChanged, drawableChangeHandler?() == true { events.append(.renderDeviceReset) }
        return events
    }

    /// `events` with each composition that comes just before committed text moved after that text.
    /// SDL 2.26's Wayland driver sends a text-input-v3 `done`'s parts as they arrive: its new
    /// composition (`preedit_string`) before its commit (`commit_string`), and an empty composition
    /// after the commit only when there is no new one. The protocol applies them the other way (the
    /// commit replaces the old composition, then the new one is composed after it): read in SDL's
    /// order, the commit would replace the new composition, which is lost. A `done`'s events are
    /// queued together, so they are in one read; a composition followed by the next `done`'s commit
    /// (with an empty composition after it) ends the same either way.
    /// - Thread: any (a pure function)
    static func inTextInputV3Order(_ events: [BackendEvent]) -> [BackendEvent] {
        var ordered = events
        var index = 0
        while index < ordered.count {
            guard case .input(.textEditing) = ordered[index] else { index += 1; continue }
            var end = index + 1
            while end < ordered.count, case .input(.textInput) = ordered[end] { end += 1 }
            if end > index + 1 {
                let editing = ordered.remove(at: index)
                ordered.insert(editing, at: end - 1)
            }
            index = end
        }
        return ordered
    }

    /// Raises the window `id` of this thread and gives it the keyboard focus (a modal window a press
    /// on the window under it brings forward).
    private static func bringForward(_ id: WindowID) {
        guard let window = SDL_GetWindowFromID(id.rawValue) else { return }
        SDL_RaiseWindow(window)
        _ = SDL_SetWindowInputFocus(window)
    }

    /// Reads the window's position and keyboard focus into `windowPlacement`.
    func updateWindowPlacement() {
        var x: Int32 = 0, y: Int32 = 0
        SDL_GetWindowPosition(window, &x, &y)
        let focused = SDL_GetWindowFlags(window) & SDL_WINDOW_INPUT_FOCUS.rawValue != 0
        var usable = SDL_Rect()
        let display = SDL_GetWindowDisplayIndex(window)
        let screen = display >= 0 && SDL_GetDisplayUsableBounds(display, &usable) == 0 && usable.w > 0 && usable.h > 0
            ? Rect(x: Double(usable.x), y: Double(usable.y), width: Double(usable.w), height: Double(usable.h)) : nil
        windowPlacement.update(WindowPlacement.State(origin: Point(x: Double(x), y: Double(y)),
                                                     unitsPerPoint: windowUnitsPerPoint, isActive: focused,
                                                     usableScreenBounds: screen))
        updateWindowSystemIdentifier()
    }

    /// The window's drawable pixels per window unit, nil when SDL reports no size.
    func displayScale() -> Double? {
        if let simulatedDisplayScale { return simulatedDisplayScale }
        var windowWidth: Int32 = 0, windowHeight: Int32 = 0
        SDL_GetWindowSize(window, &windowWidth, &windowHeight)
        let pixelWidth = pixelSize.width
        guard windowWidth > 0, pixelWidth > 0 else { return nil }
        let ratio = Double(pixelWidth) / Double(windowWidth)
        return ratio.isFinite && ratio > 0 ? min(ratio, 8) : nil
    }

    /// Puts a pointer motion or a wheel turn on SDL's queue, as the window system would (tests and
    /// benchmarks drive a compositor thread's input so). Other events are ignored.
    package func pushPointerEvent(_ input: InputEvent) {
        owner.precondition("SDLWindow.pushPointerEvent")
        var event = SDL_Event()
        switch input {
        case let .pointerMoved(point):
            event.type = SDL_MOUSEMOTION.rawValue
            event.motion.windowID = windowID.rawValue
            event.motion.x = Int32((point.x * scale).rounded())
            event.motion.y = Int32((point.y * scale).rounded())
        case let .wheel(dx, dy):
            event.type = SDL_MOUSEWHEEL.rawValue
            event.wheel.windowID = windowID.rawValue
            event.wheel.x = Int32(dx.rounded())
            event.wheel.y = Int32(dy.rounded())
            event.wheel.preciseX = Float(dx)
            event.wheel.preciseY = Float(dy)
        default:
            return
        }
        SDL_PushEvent(&event)
    }

    /// Puts text events on SDL's queue, as an input method would: `textInput` split into pieces that
    /// fit SDL's event (at character boundaries), `textEditing` as one event. Other events are ignored.
    package func pushTextEvent(_ input: InputEvent) {
        func fill<T>(_ field: inout T, with bytes: some Collection<UInt8>) {
            withUnsafeMutableBytes(of: &field) { raw in
                for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
                raw[min(bytes.count, raw.count - 1)] = 0
            }
        }
        switch input {
        case let .textInput(text):
            var piece = ""
            var pieces: [String] = []
            for character in text {
                if piece.utf8.count + String(character).utf8.count > 31 { pieces.append(piece); piece = "" }
                piece.append(character)
            }
            if !piece.isEmpty { pieces.append(piece) }
            for piece in pieces {
                var event = SDL_Event()
                event.type = SDL_TEXTINPUT.rawValue
                event.text.windowID = windowID.rawValue
                fill(&event.text.text, with: Array(piece.utf8))
                SDL_PushEvent(&event)
            }
        case let .textEditing(text, cursor, selected):
            var event = SDL_Event()
            let bytes = Array(text.utf8)
            if bytes.count >= MemoryLayout.size(ofValue: event.edit.text) {
                // Too long for SDL's event: as SDL sends it with extended text on, the text in an
                // allocation of SDL's that whoever reads the event frees.
                guard let copy = SDL_malloc(bytes.count + 1)?.assumingMemoryBound(to: CChar.self) else { return }
                bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { copy.update(from: $0.baseAddress!, count: bytes.count) }
                }
                copy[bytes.count] = 0
                event.type = SDL_TEXTEDITING_EXT.rawValue
                event.editExt.windowID = windowID.rawValue
                event.editExt.text = copy
                event.editExt.start = Int32(clamping: cursor)
                event.editExt.length = Int32(clamping: selected)
                if SDL_PushEvent(&event) != 1 { SDL_free(copy) }
            } else {
                event.type = SDL_TEXTEDITING.rawValue
                event.edit.windowID = windowID.rawValue
                fill(&event.edit.text, with: bytes)
                event.edit.start = Int32(clamping: cursor)
                event.edit.length = Int32(clamping: selected)
                SDL_PushEvent(&event)
            }
        default:
            return
        }
    }

    /// Moves the pointer to `point` (in points) inside the window, as a user's hand would: the window
    /// system then sends the motion like any other (`SDL_WarpMouseInWindow`). Under the dummy driver
    /// nothing moves.
    public func warpPointer(to point: Point) {
        owner.precondition("SDLWindow.warpPointer")
        SDL_WarpMouseInWindow(window, Int32((point.x * scale).rounded()), Int32((point.y * scale).rounded()))
    }

    /// Shows one of SDL's system cursors over this window, made the first time each shape is asked
    /// for (`SDL_CreateSystemCursor`). SDL has one cursor for all its windows, so each window keeps
    /// the shape it wants and shows it while the pointer is over it (now, when the pointer is in it
    /// or in none of the application's windows, and when the pointer enters it); the shapes made and
    /// the one shown are the process's, kept for its life, and `SDL_SetCursor` runs only when the
    /// shape shown changes. Under the dummy driver SDL makes none, and the call changes nothing.
    public func setCursor(_ cursor: Cursor) {
        owner.precondition("SDLWindow.setCursor")
        wantedCursor = cursor
        let focus = SDL_GetMouseFocus()
        if focus == nil || focus == window { Self.show(cursor) }
    }

    /// Puts a dropped file's name on SDL's queue, as the window system would: for this window, or
    /// for none (`forNoWindow`). The name is SDL's allocation, as in a real drop (tests of the routing).
    func pushDrop(file: String, forNoWindow: Bool = false) {
        var event = SDL_Event()
        event.type = SDL_DROPFILE.rawValue
        event.drop.file = SDL_strdup(file)
        event.drop.windowID = forNoWindow ? 0 : windowID.rawValue
        SDL_PushEvent(&event)
    }

    /// The shape SDL shows now, for every window of the process.
    static var shownCursor: Cursor { cursors.withLock { $0.shown } }

    /// Puts the pointer's entering this window on SDL's queue, as the window system would (tests of
    /// the cursor of several windows).
    func pushPointerEntered() {
        var event = SDL_Event()
        event.type = SDL_WINDOWEVENT.rawValue
        event.window.event = UInt8(SDL_WINDOWEVENT_ENTER.rawValue)
        event.window.windowID = windowID.rawValue
        SDL_PushEvent(&event)
    }

    /// Makes `cursor` the process's shown cursor.
    static func show(_ cursor: Cursor) {
        let made = cursors.withLock { cursors -> OpaquePointer? in
            guard cursor != cursors.shown else { return nil }
            cursors.shown = cursor
            if let cached = cursors.made[cursor] { return cached }
            let made = SDL_CreateSystemCursor(systemCursor(for: cursor))
            cursors.made[cursor] = made
            return made
        }
        if let made { SDL_SetCursor(made) }
    }

    /// The system cursors made so far, by shape (nil where the video driver has none), and the shape
    /// shown; SDL starts with the arrow.
    private struct Cursors {
        var made: [Cursor: OpaquePointer?] = [:]
        var shown = Cursor.arrow
    }

    private static let cursors = Guarded(Cursors())

    private static func systemCursor(for cursor: Cursor) -> SDL_SystemCursor {
        switch cursor {
        case .arrow: return SDL_SYSTEM_CURSOR_ARROW
        case .iBeam: return SDL_SYSTEM_CURSOR_IBEAM
        case .hand: return SDL_SYSTEM_CURSOR_HAND
        case .crosshair: return SDL_SYSTEM_CURSOR_CROSSHAIR
        case .wait: return SDL_SYSTEM_CURSOR_WAIT
        case .notAllowed: return SDL_SYSTEM_CURSOR_NO
        case .move: return SDL_SYSTEM_CURSOR_SIZEALL
        case .resizeVertical: return SDL_SYSTEM_CURSOR_SIZENS
        case .resizeHorizontal: return SDL_SYSTEM_CURSOR_SIZEWE
        }
    }

    /// Puts an event on SDL's queue, as the platform would (used by tests of the reset path and of
    /// the pointer's translation). A scale change is a window event with the drawable's ratio
    /// simulated from then on (`simulatedDisplayScale`), as a move to an output of that scale.
    package func pushEvent(_ kind: BackendEvent) {
        var event = SDL_Event()
        func pixels(_ point: Point) -> (Int32, Int32) {
            (Int32(clamping: PixelGeometry.nearestIndex(point.x * windowUnitsPerPoint)),
             Int32(clamping: PixelGeometry.nearestIndex(point.y * windowUnitsPerPoint)))
        }
        switch kind {
        case .renderTargetsReset: event.type = SDL_RENDER_TARGETS_RESET.rawValue
        case .renderDeviceReset: event.type = SDL_RENDER_DEVICE_RESET.rawValue
        case .input(.quit): event.type = SDL_QUIT.rawValue
        case let .input(.pointerDown(point, button, clicks)):
            event.type = SDL_MOUSEBUTTONDOWN.rawValue
            (event.button.x, event.button.y) = pixels(point)
            event.button.button = UInt8(clamping: button)
            event.button.clicks = UInt8(clamping: clicks)
            event.button.state = UInt8(SDL_PRESSED)
            event.button.windowID = windowID.rawValue
        case let .input(.pointerUp(point, button)):
            event.type = SDL_MOUSEBUTTONUP.rawValue
            (event.button.x, event.button.y) = pixels(point)
            event.button.button = UInt8(clamping: button)
            event.button.state = UInt8(SDL_RELEASED)
            event.button.windowID = windowID.rawValue
        case let .input(.wheel(dx, dy)):
            event.type = SDL_MOUSEWHEEL.rawValue
            event.wheel.preciseX = Float(dx)
            event.wheel.preciseY = Float(dy)
            event.wheel.x = Int32(dx.rounded(.towardZero))
            event.wheel.y = Int32(dy.rounded(.towardZero))
            event.wheel.windowID = windowID.rawValue
        case .input(.pointerLeftWindow):
            event.type = SDL_WINDOWEVENT.rawValue
            event.window.event = UInt8(SDL_WINDOWEVENT_LEAVE.rawValue)
            event.window.windowID = windowID.rawValue
        case let .input(.contentsScaleChanged(scale)):
            // As SDL's Wayland driver says a move to an output of another scale: the size in window
            // units unchanged, the drawable's ratio (here, the one simulated) another.
            simulatedDisplayScale = scale
            var width: Int32 = 0, height: Int32 = 0
            SDL_GetWindowSize(window, &width, &height)
            event.type = SDL_WINDOWEVENT.rawValue
            event.window.event = UInt8(SDL_WINDOWEVENT_SIZE_CHANGED.rawValue)
            event.window.data1 = width
            event.window.data2 = height
            event.window.windowID = windowID.rawValue
        case .input(.closeRequested):
            event.type = SDL_WINDOWEVENT.rawValue
            event.window.event = UInt8(SDL_WINDOWEVENT_CLOSE.rawValue)
            event.window.windowID = windowID.rawValue
        case let .input(.windowVisibilityChanged(visible)):
            event.type = SDL_WINDOWEVENT.rawValue
            event.window.event = UInt8(visible ? SDL_WINDOWEVENT_RESTORED.rawValue : SDL_WINDOWEVENT_MINIMIZED.rawValue)
            event.window.windowID = windowID.rawValue
        case let .input(.keyDown(key, modifiers)), let .input(.keyUp(key, modifiers)):
            guard let code = Self.keycode(of: key) else { return }
            if case .input(.keyDown) = kind {
                event.type = SDL_KEYDOWN.rawValue
                event.key.state = UInt8(SDL_PRESSED)
            } else {
                event.type = SDL_KEYUP.rawValue
                event.key.state = UInt8(SDL_RELEASED)
            }
            event.key.windowID = windowID.rawValue
            event.key.keysym.sym = code
            event.key.keysym.mod = Self.mod(modifiers)
        case .input: return
        }
        SDL_PushEvent(&event)
    }

    /// Puts the key that types `character` on SDL's queue as SDL's X11 and Wayland drivers do: its
    /// key down, its text only while text input is on (SDL drops a key's text otherwise, at the time
    /// it reads the key), and its key up.
    package func pushKeystroke(_ character: Character) {
        let key = Key.character(character)
        pushEvent(.input(.keyDown(key, modifiers: [])))
        if SDL_EventState(SDL_TEXTINPUT.rawValue, SDL_QUERY) == SDL_ENABLE {
            pushTextEvent(.textInput(String(character)))
        }
        pushEvent(.input(.keyUp(key, modifiers: [])))
    }

    /// SDL's key code for `key` (nil for a character SDL names by no code of its own).
    private static func keycode(of key: Key) -> SDL_Keycode? {
        switch key {
        case .escape: return SDL_Keycode(SDLK_ESCAPE.rawValue)
        case .enter: return SDL_Keycode(SDLK_RETURN.rawValue)
        case .space: return SDL_Keycode(SDLK_SPACE.rawValue)
        case .tab: return SDL_Keycode(SDLK_TAB.rawValue)
        case .backspace: return SDL_Keycode(SDLK_BACKSPACE.rawValue)
        case .delete: return SDL_Keycode(SDLK_DELETE.rawValue)
        case .up: return SDL_Keycode(SDLK_UP.rawValue)
        case .down: return SDL_Keycode(SDLK_DOWN.rawValue)
        case .left: return SDL_Keycode(SDLK_LEFT.rawValue)
        case .right: return SDL_Keycode(SDLK_RIGHT.rawValue)
        case .pageUp: return SDL_Keycode(SDLK_PAGEUP.rawValue)
        case .pageDown: return SDL_Keycode(SDLK_PAGEDOWN.rawValue)
        case .home: return SDL_Keycode(SDLK_HOME.rawValue)
        case .end: return SDL_Keycode(SDLK_END.rawValue)
        case let .function(number) where (1...12).contains(number):
            return SDL_Keycode(SDLK_F1.rawValue) + SDL_Keycode(number - 1)
        case .function: return nil
        case let .character(character):
            guard let ascii = character.asciiValue, (33...126).contains(ascii) else { return nil }
            return SDL_Keycode(Character(character.lowercased()).asciiValue ?? ascii)
        case let .other(code): return code
        }
    }

    private static func mod(_ modifiers: KeyModifiers) -> UInt16 {
        var mod: UInt32 = 0
        if modifiers.contains(.shift) { mod |= KMOD_LSHIFT.rawValue }
        if modifiers.contains(.control) { mod |= KMOD_LCTRL.rawValue }
        if modifiers.contains(.alt) { mod |= KMOD_LALT.rawValue }
        if modifiers.contains(.command) { mod |= KMOD_LGUI.rawValue }
        return UInt16(mod)
    }

    /// Whether the keyboard focus this window lost left the application, as SDL has it once it has
    /// read the window system's events: not when it went to one of the application's popup windows
    /// (which take it where no window manager runs, see `PopupWindowKind`), nor, for a popup window,
    /// when it went back to another window of the application.
    private var focusLeftTheApplication: Bool {
        guard let focus = SDL_GetKeyboardFocus(), focus != window else { return true }
        if isPopup { return false }
        let popupFlags = SDL_WINDOW_POPUP_MENU.rawValue | SDL_WINDOW_TOOLTIP.rawValue
        return SDL_GetWindowFlags(focus) & popupFlags == 0
    }

    private func translate(_ event: SDL_Event) -> BackendEvent? {
        let scale = windowUnitsPerPoint
        func point(_ x: Int32, _ y: Int32) -> Point { Point(x: Double(x) / scale, y: Double(y) / scale) }
        switch SDL_EventType(event.type) {
        case SDL_QUIT: return .input(.quit)
        case SDL_RENDER_TARGETS_RESET: return .renderTargetsReset
        case SDL_RENDER_DEVICE_RESET:
            // The renderer's own targets (its retained frame) went with the device.
            deviceResetHandler?()
            return .renderDeviceReset
        case SDL_WINDOWEVENT:
            if event.window.event == UInt8(SDL_WINDOWEVENT_SIZE_CHANGED.rawValue) {
                return .input(.resized(Size(width: Double(event.window.data1) / scale,
                                            height: Double(event.window.data2) / scale)))
            }
            if event.window.event == UInt8(SDL_WINDOWEVENT_LEAVE.rawValue) { return .input(.pointerLeftWindow) }
            if event.window.event == UInt8(SDL_WINDOWEVENT_CLOSE.rawValue) { return .input(.closeRequested) }
            if event.window.event == UInt8(SDL_WINDOWEVENT_FOCUS_GAINED.rawValue) { return .input(.windowFocusChanged(true)) }
            // Minimized and back, each change said once; a popup window's are its menu's. (SDL also
            // says "hidden" and "shown" as a renderer makes a window anew: those are not the user's.)
            if event.window.event == UInt8(SDL_WINDOWEVENT_MINIMIZED.rawValue) {
                guard !isOutOfSight, !isPopup else { return nil }
                isOutOfSight = true
                return .input(.windowVisibilityChanged(false))
            }
            if event.window.event == UInt8(SDL_WINDOWEVENT_RESTORED.rawValue) {
                guard isOutOfSight, !isPopup else { return nil }
                isOutOfSight = false
                return .input(.windowVisibilityChanged(true))
            }
            if event.window.event == UInt8(SDL_WINDOWEVENT_FOCUS_LOST.rawValue) {
                return focusLeftTheApplication ? .input(.windowFocusChanged(false)) : nil
            }
            // The pointer came in: it takes this window's shape.
            if event.window.event == UInt8(SDL_WINDOWEVENT_ENTER.rawValue) { Self.show(wantedCursor) }
            if event.window.event == UInt8(SDL_WINDOWEVENT_EXPOSED.rawValue) && presentsThroughSurface {
                // The window system lost what it showed (frames send only their changed regions):
                // the window's surface still holds the last frame whole, and goes again.
                SDL_UpdateWindowSurface(window)
            }
            // Back in sight with no restore of its own: maximized straight from minimized, or exposed
            // (the window system wants it drawn). A minimized window draws nothing until it is back.
            if isOutOfSight, !isPopup, event.window.event == UInt8(SDL_WINDOWEVENT_MAXIMIZED.rawValue)
                || event.window.event == UInt8(SDL_WINDOWEVENT_EXPOSED.rawValue) {
                isOutOfSight = false
                return .input(.windowVisibilityChanged(true))
            }
            return nil
        case SDL_MOUSEBUTTONDOWN:
            return .input(.pointerDown(point(event.button.x, event.button.y), button: Int(event.button.button),
                                       clicks: max(1, Int(event.button.clicks))))
        case SDL_MOUSEBUTTONUP:
            return .input(.pointerUp(point(event.button.x, event.button.y), button: Int(event.button.button)))
        case SDL_MOUSEMOTION:
            return .input(.pointerMoved(point(event.motion.x, event.motion.y)))
        case SDL_MOUSEWHEEL:
            return .input(.wheel(dx: Double(event.wheel.preciseX), dy: Double(event.wheel.preciseY)))
        case SDL_KEYDOWN:
            return .input(.keyDown(Self.key(event.key.keysym.sym), modifiers: Self.modifiers(event.key.keysym.mod)))
        case SDL_KEYUP:
            return .input(.keyUp(Self.key(event.key.keysym.sym), modifiers: Self.modifiers(event.key.keysym.mod)))
        case SDL_TEXTINPUT:
            var text = event.text.text
            return .input(.textInput(Self.string(fromFixedUTF8: &text)))
        case SDL_TEXTEDITING:
            var field = event.edit.text
            let text = Self.string(fromFixedUTF8: &field)
            return .input(.textEditing(text, cursor: Self.cursor(event.edit.start, in: text), selected: Int(max(0, event.edit.length))))
        case SDL_TEXTEDITING_EXT:
            // A composition too long for SDL_TEXTEDITING (extended text is asked for at start): the
            // text is SDL's allocation, freed once the event is read (`SDLEventRouting.release`).
            // (Invalid bytes become U+FFFD.)
            let text = event.editExt.text.map { String(cString: $0) } ?? ""
            return .input(.textEditing(text, cursor: Self.cursor(event.editExt.start, in: text),
                                       selected: Int(max(0, event.editExt.length))))
        default:
            return translateDrop(event).map { .input($0) }
        }
    }

    /// A composition's cursor as SDL gives it: where the input method says, or at the end of `text`
    /// where it says nothing (SDL's -1).
    private static func cursor(_ start: Int32, in text: String) -> Int {
        start < 0 ? text.unicodeScalars.count : Int(start)
    }

    /// The NUL-terminated UTF-8 in one of SDL's fixed-size text fields; invalid bytes become U+FFFD.
    private static func string<T>(fromFixedUTF8 field: inout T) -> String {
        withUnsafeBytes(of: &field) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func modifiers(_ mod: UInt16) -> KeyModifiers {
        var result: KeyModifiers = []
        if mod & UInt16(KMOD_SHIFT.rawValue) != 0 { result.insert(.shift) }
        if mod & UInt16(KMOD_CTRL.rawValue) != 0 { result.insert(.control) }
        if mod & UInt16(KMOD_ALT.rawValue) != 0 { result.insert(.alt) }
        if mod & UInt16(KMOD_GUI.rawValue) != 0 { result.insert(.command) }
        return result
    }

    private static func key(_ code: SDL_Keycode) -> Key {
        switch Int(code) {
        case Int(SDLK_ESCAPE.rawValue): return .escape
        case Int(SDLK_RETURN.rawValue): return .enter
        case Int(SDLK_SPACE.rawValue): return .space
        case Int(SDLK_TAB.rawValue): return .tab
        case Int(SDLK_BACKSPACE.rawValue): return .backspace
        case Int(SDLK_DELETE.rawValue): return .delete
        case Int(SDLK_UP.rawValue): return .up
        case Int(SDLK_DOWN.rawValue): return .down
        case Int(SDLK_LEFT.rawValue): return .left
        case Int(SDLK_RIGHT.rawValue): return .right
        case Int(SDLK_PAGEUP.rawValue): return .pageUp
        case Int(SDLK_PAGEDOWN.rawValue): return .pageDown
        case Int(SDLK_HOME.rawValue): return .home
        case Int(SDLK_END.rawValue): return .end
        case Int(SDLK_F1.rawValue)...Int(SDLK_F12.rawValue): return .function(Int(code) - Int(SDLK_F1.rawValue) + 1)
        case 33...126: return .character(Character(Unicode.Scalar(UInt8(code))))
        default: return .other(code)
        }
    }
}

extension SDLWindow {
    /// Starts text input for this window's text field. SDL 2 has one text input for the process:
    /// it stays on while any window's field wants it.
    public func startTextInput(caret: Rect) {
        owner.precondition("SDLWindow.startTextInput")
        guard !isHidden else { return }
        setTextInputCaret(caret)
        // Started whole (the input method too) unless a field already did; a press's provisional
        // start of this window is confirmed.
        SDLTextInput.startField(windowID.rawValue)
    }

    /// True while text input is on (for any window of the process).
    var isTextInputActive: Bool { SDL_IsTextInputActive() == SDL_TRUE }

    public func setTextInputCaret(_ caret: Rect) {
        owner.precondition("SDLWindow.setTextInputCaret")
        let caret = caret.sanitized
        // SDL places the input method's window in window coordinates.
        let units = windowUnitsPerPoint
        var rect = SDL_Rect(x: Int32(clamping: PixelGeometry.nearestIndex(caret.minX * units)),
                            y: Int32(clamping: PixelGeometry.nearestIndex(caret.minY * units)),
                            w: Int32(clamping: PixelGeometry.nearestIndex(max(1, caret.width * units))),
                            h: Int32(clamping: PixelGeometry.nearestIndex(max(1, caret.height * units))))
        SDL_SetTextInputRect(&rect)
    }

    /// Ends the input method's composition without its commit: SDL has the input method reset
    /// (fcitx's and IBus's `Reset`), and text input stays on.
    public func cancelComposition() {
        owner.precondition("SDLWindow.cancelComposition")
        guard SDLTextInput.takesText(windowID.rawValue) else { return }
        SDLTextInput.resetInputMethod()
    }

    /// Stops text input for this window; SDL's goes off when no other window's field wants it.
    public func stopTextInput() {
        owner.precondition("SDLWindow.stopTextInput")
        SDLTextInput.stopField(windowID.rawValue)
    }

    public func clipboardText() -> String? {
        owner.precondition("SDLWindow.clipboardText")
        guard SDL_HasClipboardText() == SDL_TRUE, let raw = SDL_GetClipboardText() else { return nil }
        defer { SDL_free(raw) }
        let text = String(cString: raw)
        return text.isEmpty ? nil : text
    }

    public func setClipboardText(_ text: String) {
        owner.precondition("SDLWindow.setClipboardText")
        _ = SDL_SetClipboardText(text)
    }
}
