/// A texture made by a `RenderBackend`. Opaque to everything but the backend that made it.
/// - Thread: any (as a value); used only on the main thread.
public struct TextureHandle: Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
}

/// One corner of a triangle for `RenderBackend.drawGeometry`: a position in pixels, a colour that
/// multiplies the texture (or is the fill when there is no texture), and texture coordinates in 0...1.
/// - Thread: any
public struct GeometryVertex: Hashable, Sendable {
    public var x: Float, y: Float
    public var color: Color
    public var u: Float, v: Float
    public init(x: Float, y: Float, color: Color, u: Float = 0, v: Float = 0) {
        self.x = x; self.y = y; self.color = color; self.u = u; self.v = v
    }
}

/// The few operations the compositor needs from a renderer: make textures, draw, present. Nothing of
/// the window (events, cursor, text input, clipboard, density) is here: that is the `PlatformWindow`'s,
/// which a backend names when it draws into one (`platformWindow`). `SDLRenderBackend` implements
/// them with an `SDL_Renderer`; `RecordingRenderBackend` records them, so tests can check draw order
/// without SDL.
///
/// Coordinates are in output pixels. Texture pixels are ARGB8888 in the backend's `uploadAlphaLayout`.
/// An upload should be a copy: a backend reads `Bitmap.isOpaque` (recorded when the bitmap was
/// prepared) and `Bitmap.withPixels(in: uploadAlphaLayout)`, which hands over the stored pixels of a
/// bitmap prepared for that layout on a worker (`Bitmap.prepared(forUpload:)`); a bitmap that was not
/// is scanned or converted there, on the UI thread, and counted in `FrameStatistics.uploadPixelPasses`.
/// - Thread: the thread that draws (the UI thread, or a `CompositorThread`), every member.
public protocol RenderBackend: AnyObject {
    /// The window this backend draws into, whose events a compositor on it reads; nil for an output
    /// without one. The default is nil.
    var platformWindow: PlatformWindow? { get }
    /// A name for reports, such as SDL's renderer name ("software", "opengl").
    var rendererName: String { get }
    /// The size of the output in pixels.
    var outputPixelSize: (width: Int, height: Int) { get }
    /// The largest texture side the renderer accepts; `Int.max` when it states no limit.
    var maximumTextureSize: Int { get }
    /// The alpha layout `makeTexture` uploads without converting: what the renderer blends. Fixed for
    /// the backend's life; workers prepare bitmaps for it. The default is `.premultiplied`.
    var uploadAlphaLayout: Bitmap.AlphaLayout { get }

    /// Makes a texture from the `region` of `bitmap`. Returns nil when the renderer refuses.
    func makeTexture(from bitmap: Bitmap, region: PixelRect) -> TextureHandle?
    /// Releases a texture. Handles from before a device reset may be passed and are ignored if stale.
    func destroyTexture(_ texture: TextureHandle)

    /// Starts a frame: clears the output to `color`.
    func beginFrame(clearColor: Color)
    /// True when the backend can keep each frame in a texture of its own, so that a later frame
    /// redraws only the region that changed (`beginRetainedFrame`). The default is false: every frame
    /// is drawn whole with `beginFrame`.
    var retainsFrames: Bool { get }
    /// Starts a frame drawn into the retained frame: with `region`, only that region is cleared to
    /// `color` and may be drawn (the rest keeps the last retained frame's pixels); with nil, the whole
    /// frame. `present` then shows the retained frame. Called only when `retainsFrames`.
    /// - Returns: true when `region` is honoured: the pixels outside it are the last retained frame's.
    ///   False when the whole frame must be drawn: no region was given, the retained frame is new (the
    ///   output changed size), or none could be kept (an ordinary frame was begun instead).
    func beginRetainedFrame(clearColor: Color, region: PixelRect?) -> Bool
    /// True when the retained frame is the output itself (the software renderer draws into the
    /// window's surface, which keeps the last frame): a frame drawn whole with `beginFrame` leaves it
    /// current too. The default is false (the retained frame is a texture of its own).
    var retainsFramesInOutput: Bool { get }
    /// False when something drawn since `beginRetainedFrame` with a region may differ, inside that
    /// region, from the same thing drawn with no clip (the software renderer rounds scaled copies
    /// from where a clip cuts them): the compositor then draws the frame whole instead. The default
    /// is true.
    var retainedRegionIsExact: Bool { get }
    /// Restricts drawing to `rect`, or lifts the restriction with nil.
    func setClip(_ rect: PixelRect?)
    /// Fills a rectangle with a straight colour, alpha-blended.
    func fill(_ rect: Rect, color: Color)
    /// Draws `source` (texture pixels) of a texture into `destination` (output pixels) at `opacity`.
    func drawTexture(_ texture: TextureHandle, source: PixelRect, destination: Rect, opacity: Double)
    /// Draws triangles, textured when `texture` is given.
    func drawGeometry(texture: TextureHandle?, vertices: [GeometryVertex], indices: [Int32])
    /// Reads back what has been drawn in this frame so far (before `present`).
    func readPixels() -> Bitmap?
    /// Shows the frame.
    func present()
    /// Shows the frame, of which only `region` differs from the frame shown last (the frame was drawn
    /// whole): a backend that can send only that part to the window does. The default shows the
    /// whole frame.
    func present(region: PixelRect?)
}

extension RenderBackend {
    public var retainsFrames: Bool { false }
    public func beginRetainedFrame(clearColor: Color, region: PixelRect?) -> Bool {
        beginFrame(clearColor: clearColor)
        return false
    }
    public var platformWindow: PlatformWindow? { nil }
    public var retainsFramesInOutput: Bool { false }
    public var retainedRegionIsExact: Bool { true }
    public func present(region: PixelRect?) { present() }
    public var uploadAlphaLayout: Bitmap.AlphaLayout { .premultiplied }
}
