/// A `RenderBackend` that draws nothing and records every call, for tests of draw order, uploads and
/// texture lifetimes without SDL. Textures are numbered from 1 in the order they are made. It is its
/// own window too (`PlatformWindow`): its events are the ones queued in `queuedEvents`, the cursor
/// shapes set are recorded, and it keeps a clipboard of its own.
/// - Thread: main
public final class RecordingRenderBackend: RenderBackend, PlatformWindow {
    /// One recorded call.
    public enum Call: Equatable, Sendable {
        case makeTexture(TextureHandle, width: Int, height: Int, bitmap: BitmapIdentity)
        case destroyTexture(TextureHandle)
        case beginFrame
        case setClip(PixelRect?)
        case fill(Rect, Color)
        case drawTexture(TextureHandle, source: PixelRect, destination: Rect, opacity: Double)
        case drawGeometry(texture: TextureHandle?, vertexCount: Int, indexCount: Int)
        case present
    }

    public let rendererName = "recording"
    public var outputPixelSize: (width: Int, height: Int)
    public var maximumTextureSize: Int
    /// Every call since the last `reset()`.
    public private(set) var calls: [Call] = []
    /// Textures made and not yet destroyed.
    public private(set) var liveTextures = Set<TextureHandle>()
    /// Events that the next `pollEvents()` returns.
    public var queuedEvents: [BackendEvent] = []
    /// Every cursor shape set, in order (not cleared by `reset()`).
    public private(set) var cursorChanges: [Cursor] = []
    /// The caret text input was last started or moved to; nil while it is stopped.
    public private(set) var textInputCaret: Rect?
    /// How many times the host ended an input method's composition (`cancelComposition()`).
    /// - Thread: the recorder's
    public private(set) var cancelledCompositions = 0
    /// What the clipboard holds.
    public var clipboard: String?
    public let windowID = WindowID(rawValue: 0)
    public var scale: Double = 1
    public let windowPlacement = WindowPlacement()
    public var refreshRate: Double? { nil }
    public var videoDriverName: String { "none" }
    public var platformWindow: PlatformWindow? { self }
    /// When set, `makeTexture` fails (to test refusal).
    public var refusesTextures = false
    /// The layout uploads take, as a real renderer's would (`.straight` stands for SDL's software
    /// renderer). Set it before a host is made over this backend: hosts read it once.
    public var uploadAlphaLayout: Bitmap.AlphaLayout = .premultiplied
    /// The textures whose bitmap was opaque when uploaded (a real backend copies those unblended).
    public private(set) var opaqueTextures = Set<TextureHandle>()
    private var nextTexture: UInt = 1

    public init(width: Int, height: Int, maximumTextureSize: Int = Int.max) {
        outputPixelSize = (width, height)
        self.maximumTextureSize = maximumTextureSize
    }

    /// Forgets recorded calls (textures stay alive).
    public func reset() { calls.removeAll() }

    /// The recorded texture draws, in order.
    public var textureDraws: [(texture: TextureHandle, destination: Rect)] {
        calls.compactMap { if case let .drawTexture(t, _, d, _) = $0 { return (t, d) } else { return nil } }
    }

    /// Number of textures made since the last `reset()`.
    public var textureUploads: Int {
        calls.reduce(0) { if case .makeTexture = $1 { return $0 + 1 } else { return $0 } }
    }

    public func makeTexture(from bitmap: Bitmap, region: PixelRect) -> TextureHandle? {
        guard !refusesTextures, !region.isEmpty,
              region.width <= maximumTextureSize, region.height <= maximumTextureSize else { return nil }
        let handle = TextureHandle(rawValue: nextTexture)
        nextTexture += 1
        liveTextures.insert(handle)
        // What a real backend reads: the opacity and the pixels in its layout (a copy stands for the upload).
        if bitmap.isOpaque { opaqueTextures.insert(handle) }
        bitmap.withPixels(in: uploadAlphaLayout) { _ in }
        calls.append(.makeTexture(handle, width: region.width, height: region.height, bitmap: bitmap.identity))
        return handle
    }

    public func destroyTexture(_ texture: TextureHandle) {
        guard liveTextures.remove(texture) != nil else { return }
        opaqueTextures.remove(texture)
        calls.append(.destroyTexture(texture))
    }

    public func beginFrame(clearColor: Color) { calls.append(.beginFrame) }
    public func setClip(_ rect: PixelRect?) { calls.append(.setClip(rect)) }
    public func fill(_ rect: Rect, color: Color) { calls.append(.fill(rect, color)) }
    public func drawTexture(_ texture: TextureHandle, source: PixelRect, destination: Rect, opacity: Double) {
        calls.append(.drawTexture(texture, source: source, destination: destination, opacity: opacity))
    }
    public func drawGeometry(texture: TextureHandle?, vertices: [GeometryVertex], indices: [Int32]) {
        calls.append(.drawGeometry(texture: texture, vertexCount: vertices.count, indexCount: indices.count))
    }
    public func readPixels() -> Bitmap? { nil }
    public func present() { calls.append(.present) }
    public func pollEvents() -> [BackendEvent] {
        defer { queuedEvents.removeAll() }
        return queuedEvents
    }
    public func setCursor(_ cursor: Cursor) { cursorChanges.append(cursor) }
    public func startTextInput(caret: Rect) { textInputCaret = caret }
    public func setTextInputCaret(_ caret: Rect) { if textInputCaret != nil { textInputCaret = caret } }
    public func stopTextInput() { textInputCaret = nil }
    public func cancelComposition() { cancelledCompositions += 1 }
    public func clipboardText() -> String? { clipboard }
    public func setClipboardText(_ text: String) { clipboard = text }
}
