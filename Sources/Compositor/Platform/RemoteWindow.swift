/// The UI thread's side of a window that a `CompositorThread` owns: what the UI thread reads of it
/// (its id, density, placement, refresh rate, driver) is what that thread published, what it asks of
/// it (the cursor, text input, the clipboard, a pointer warp) goes there as commands, and its events
/// are the ones that thread read and handed over. Every member works; nothing here draws.
/// - Thread: the UI thread
final class RemoteWindow: PlatformWindow {
    let thread: CompositorThread

    init(thread: CompositorThread) { self.thread = thread }

    var windowID: WindowID { thread.info.windowID }
    var scale: Double { thread.info.scale }
    var windowPlacement: WindowPlacement { thread.info.windowPlacement }
    var refreshRate: Double? { thread.info.refreshRate }
    var videoDriverName: String { thread.info.videoDriverName }

    /// The compositor thread's events arrive timed (`CompositorThread.takeEvents()`), which the
    /// threaded delivery takes itself; the window has none of its own to give.
    func pollEvents() -> [BackendEvent] { [] }

    func setCursor(_ cursor: Cursor) {
        thread.perform { _, backend in backend.window.setCursor(cursor) }
    }

    func warpPointer(to point: Point) {
        thread.perform { _, backend in backend.window.warpPointer(to: point) }
    }

    func startTextInput(caret: Rect) {
        thread.perform { _, backend in backend.window.startTextInput(caret: caret) }
    }

    func setTextInputCaret(_ caret: Rect) {
        thread.perform { _, backend in backend.window.setTextInputCaret(caret) }
    }

    func stopTextInput() {
        thread.perform { _, backend in backend.window.stopTextInput() }
    }

    func cancelComposition() {
        thread.perform { _, backend in backend.window.cancelComposition() }
    }

    func clipboardText() -> String? {
        thread.performAndWait { _, backend in backend.window.clipboardText() } ?? nil
    }

    func setClipboardText(_ text: String) {
        thread.perform { _, backend in backend.window.setClipboardText(text) }
    }
}
