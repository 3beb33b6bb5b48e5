internal import CSDL

// Text typed right after the press (or the key) that focuses a text field. The window system's events
// are read in batches, and SDL gives a key its text only if text input is on when it reads the key:
// keys read in the same batch as the press that focuses a field, or before the UI thread has answered
// it, would arrive with no text. Which press or key focuses a field is the UI thread's to say, from
// its model, which the screen may not show yet (a click where a field is about to appear, a shortcut
// such as Find's Ctrl+F, a key that switches to a screen whose field had focus). So while SDL reads a
// left press or a key down in a window whose field does not take text already, the window turns SDL's
// text events on at once (not the input method); the UI thread then confirms it (a field took focus)
// or the window turns them off again once the UI thread has answered the events read since.

extension SDLWindow {
    /// Notes that the window has drawn `root`: from its first frame on, its presses and keys are seen
    /// as SDL reads them.
    func showed(_ root: LayerSnapshot?) {
        if root != nil { SDLTextEntry.register(self) }
    }

    /// Called while SDL reads `event` (a press or a key down), before any later event of the same
    /// read is translated: turns text events on (or keeps them on whatever another window does) when
    /// the event may focus a text field of this window, whose field does not take text already.
    fileprivate func textInputMayStart(for event: SDL_Event) {
        // Under a modal window no press or key reaches a field here.
        guard inputBlockedBy == nil else { return }
        switch SDL_EventType(event.type) {
        case SDL_MOUSEBUTTONDOWN:
            guard event.button.button == UInt8(SDL_BUTTON_LEFT) else { return }
        case SDL_KEYDOWN:
            break
        default:
            return
        }
        if SDLTextInput.beginProvisional(windowID.rawValue) { provisionalTextInputRead = false }
    }

    /// Turns off the text input a press or a key turned on when no field took it (the owner calls
    /// this once the UI thread has answered every event read since); not before the read that saw the
    /// press has ended.
    func endProvisionalTextInput() {
        guard provisionalTextInputRead, provisionalTextInput else { return }
        SDLTextInput.endProvisional(windowID.rawValue)
    }
}

/// The windows whose presses may start text input, and SDL's event watch that sees every event as SDL
/// reads it (before the next is translated). The watch acts only on the thread that owns the window.
/// - Thread: any
enum SDLTextEntry {
    /// A window, held weakly and reached only on the thread that owns it (an event pushed from another
    /// thread must not take a reference that could be the window's last).
    private final class Entry: @unchecked Sendable {
        let owner: ThreadOwner
        weak var window: SDLWindow?
        init(_ window: SDLWindow) { self.window = window; owner = window.owner }
    }

    private static let windows = Guarded<[UInt32: Entry]>([:])

    private static let watch: Void = {
        SDL_AddEventWatch({ _, event in
            guard let event else { return 1 }
            let type = SDL_EventType(event.pointee.type)
            guard type == SDL_MOUSEBUTTONDOWN || type == SDL_KEYDOWN else { return 1 }
            let id = SDLEventRouting.windowID(of: event.pointee)
            guard let window = SDLTextEntry.windows.withLock({ windows -> SDLWindow? in
                guard let entry = windows[id], entry.owner.isCurrent else { return nil }
                return entry.window
            }) else { return 1 }
            window.textInputMayStart(for: event.pointee)
            return 1
        }, nil)
    }()

    static func register(_ window: SDLWindow) {
        guard !window.registeredForTextEntry, !window.isHidden else { return }
        window.registeredForTextEntry = true
        _ = watch
        windows.withLock { $0[window.windowID.rawValue] = Entry(window) }
    }

    static func unregister(_ window: UInt32) {
        _ = windows.withLock { $0.removeValue(forKey: window) }
    }
}
