/// The UI thread's stand-in for the backend of a `CompositorThread`: what the UI thread reads of the
/// window and renderer (size, maximum texture size, upload layout, renderer name) comes from what
/// that thread published, and what it asks of them (the cursor, text input, the clipboard) goes there
/// as commands. It draws nothing: drawing happens on the compositor thread, so a draw call here is a
/// broken contract and traps.
/// - Thread: the UI thread
final class RemoteRenderBackend: RenderBackend, TextInputPlatform {
    let thread: CompositorThread

    init(thread: CompositorThread) { self.thread = thread }

    var rendererName: String { thread.info.rendererName }
    var outputPixelSize: (width: Int, height: Int) { thread.info.outputPixelSize }
    var maximumTextureSize: Int { thread.info.maximumTextureSize }
    var uploadAlphaLayout: Bitmap.AlphaLayout { thread.info.uploadAlphaLayout }
    var retainsFrames: Bool { thread.info.retainsFrames }

    private func drawsElsewhere(_ what: String) -> Never {
        Contract.violated("\(what): this compositor's frames are drawn on its compositor thread, not here")
    }

    func makeTexture(from bitmap: Bitmap, region: PixelRect) -> TextureHandle? { drawsElsewhere("makeTexture") }
    func destroyTexture(_ texture: TextureHandle) { drawsElsewhere("destroyTexture") }
    func beginFrame(clearColor: Color) { drawsElsewhere("beginFrame") }
    func beginRetainedFrame(clearColor: Color, region: PixelRect?) -> Bool { drawsElsewhere("beginRetainedFrame") }
    func setClip(_ rect: PixelRect?) { drawsElsewhere("setClip") }
    func fill(_ rect: Rect, color: Color) { drawsElsewhere("fill") }
    func drawTexture(_ texture: TextureHandle, source: PixelRect, destination: Rect, opacity: Double) {
        drawsElsewhere("drawTexture")
    }
    func drawGeometry(texture: TextureHandle?, vertices: [GeometryVertex], indices: [Int32]) {
        drawsElsewhere("drawGeometry")
    }
    func readPixels() -> Bitmap? { drawsElsewhere("readPixels") }
    func present() { drawsElsewhere("present") }
    func pollEvents() -> [BackendEvent] { [] }

    func setCursor(_ cursor: Cursor) {
        thread.perform { _, backend in backend.setCursor(cursor) }
    }

    func startTextInput(caret: Rect) {
        thread.perform { _, backend in backend.startTextInput(caret: caret) }
    }

    func setTextInputCaret(_ caret: Rect) {
        thread.perform { _, backend in backend.setTextInputCaret(caret) }
    }

    func stopTextInput() {
        thread.perform { _, backend in backend.stopTextInput() }
    }

    func clipboardText() -> String? {
        thread.performAndWait { _, backend in backend.clipboardText() } ?? nil
    }

    func setClipboardText(_ text: String) {
        thread.perform { _, backend in backend.setClipboardText(text) }
    }
}
