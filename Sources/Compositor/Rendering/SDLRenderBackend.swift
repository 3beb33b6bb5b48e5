internal import CSDL
import FoundationEssentials
import Glibc
import Dispatch

/// Why the SDL backend could not start.
/// - Thread: any (a value)
public struct SDLBackendError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Which of SDL's renderers a backend asks for, by the name SDL gives it (`SDL_HINT_RENDER_DRIVER`).
/// - Thread: any (a value)
public enum RenderDriver: String, Sendable, CaseIterable {
    /// SDL's own choice (or the `SDL_RENDER_DRIVER` environment variable's; `software` there is taken
    /// as `software` here): OpenGL in an X11 window, software under the dummy video driver.
    case auto
    /// SDL's CPU renderer, on the window's surface (the only one the dummy video driver has).
    case software
    /// OpenGL; needs a real video driver (X11, Wayland) and a GL implementation (Mesa under Xvfb).
    case opengl
    /// OpenGL ES 2; the same needs as `opengl`.
    case opengles2
}

/// A `RenderBackend` with an `SDL_Renderer` on an `SDLWindow`: it makes textures, draws and
/// presents, and nothing else. The window's events, density, cursor, text input and clipboard are
/// the window's (`window`).
///
/// SDL's video state is global and bound to the thread that initialised it: make backends on one
/// thread, and one at a time per process in tests. Under `SDL_VIDEODRIVER=dummy` the renderer is
/// `software`, which has no custom blend modes; the backend then uploads straight-alpha textures and
/// blends with `SDL_BLENDMODE_BLEND`, which gives the same result as premultiplied blending. On
/// renderers that accept a custom blend mode, textures stay premultiplied. Either way
/// `uploadAlphaLayout` says which, and bitmaps prepared for it upload with a copy, no per-pixel work.
/// - Thread: the thread that made it (its `owner`)
public final class SDLRenderBackend: RenderBackend {
    /// What kind of output to open: the window (title, size, scale, headless, resizable, its wake)
    /// and the renderer on it (driver, vsync).
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// The window's part: title, size, scale, headless, resizable, its wake (`SDLWindow.Configuration`).
        public var window: SDLWindow.Configuration
        /// The renderer to ask SDL for; the backend fails to start when SDL gives another one (SDL
        /// itself would quietly fall back), so a report never names a renderer that did not run.
        public var renderDriver: RenderDriver
        /// Present in step with the display's refresh (`SDL_RENDERER_PRESENTVSYNC`), where the
        /// renderer offers it. Off by default: benchmarks time frames without waiting for the display.
        public var vsync: Bool
        public init(title: String = "Tessera", size: Size, scale: Double? = nil, headless: Bool = true,
                    resizable: Bool = false, renderDriver: RenderDriver = .auto, vsync: Bool = false) {
            window = SDLWindow.Configuration(title: title, size: size, scale: scale, headless: headless, resizable: resizable)
            self.renderDriver = renderDriver
            self.vsync = vsync
        }

        /// The window's title (`window.title`).
        public var title: String { get { window.title } set { window.title = newValue } }
        /// The window's size in points (`window.size`).
        public var size: Size { get { window.size } set { window.size = newValue } }
        /// Output pixels per point, forced; nil (the default) takes the window's: its drawable size
        /// over its size, which a high-density display makes 2 where the platform scales windows.
        public var scale: Double? { get { window.scale } set { window.scale = newValue } }
        /// Force SDL's dummy video driver (no display needed). When false, SDL picks a driver and the
        /// caller should have checked that a display exists.
        public var headless: Bool { get { window.headless } set { window.headless = newValue } }
        public var resizable: Bool { get { window.resizable } set { window.resizable = newValue } }
        /// Opens the window as a dialog modal for that window of the process (`window.modalFor`).
        public var modalFor: WindowID? { get { window.modalFor } set { window.modalFor = newValue } }
        /// What ends the window's event wait from other threads: the UI thread's (`UIWakeup.shared`)
        /// for a window on the UI thread, a wake of its own for one on a `CompositorThread`.
        public var eventWake: UIWakeup { get { window.eventWake } set { window.eventWake = newValue } }
    }

    /// The window this backend draws into: its events, density, cursor, text input and clipboard.
    public let window: SDLWindow
    /// The thread that made the backend, the only one that may use it.
    public let owner = ThreadOwner()
    /// SDL's renderer: made anew only for the software renderer on a pixel surface the window's
    /// drawable outgrew or shrank far below (`fitPixelSurfaceToDrawable`).
    private(set) var renderer: OpaquePointer
    /// Where the software renderer draws at the drawable's size when SDL would give it a
    /// window-unit-sized surface (Wayland, at any scale; see `SDLPixelSurface`); nil elsewhere.
    private var pixelSurface: SDLPixelSurface?
    /// The retained frame (a render-target texture the size of the output) and whether the frame
    /// being drawn goes into it.
    var retainedFrame: OpaquePointer?
    var retainedFrameSize = (width: 0, height: 0)
    var drawsIntoRetainedFrame = false
    /// True between `beginRetainedFrame` with a region on the software renderer and the next frame:
    /// draws go in place into the window's surface under the region's clip.
    private var drawsRegionInPlace = false
    /// A draw since the region's frame began may differ under its clip (see `retainedRegionIsExact`).
    private var regionWasInexact = false
    /// True when textures hold premultiplied pixels and blend with a custom mode. (immutable)
    public let usesPremultipliedBlending: Bool
    /// Premultiplied where the renderer takes a custom blend mode; straight on the `software`
    /// renderer, which blends straight alpha. (immutable)
    public var uploadAlphaLayout: Bitmap.AlphaLayout { usesPremultipliedBlending ? .premultiplied : .straight }
    public let rendererName: String
    /// The device an OpenGL renderer draws with, as its driver names it (`GL_RENDERER`), such as
    /// "llvmpipe (LLVM 15.0.6, 256 bits)" under Xvfb, where Mesa rasterizes on CPU threads of its own;
    /// nil for the software renderer. (immutable)
    public let graphicsDeviceName: String?
    public let maximumTextureSize: Int
    /// Every texture this backend made and has not destroyed, by handle.
    private var liveTextures = Set<UInt>()
    /// Textures whose pixels are all opaque: copied without blending unless drawn translucent or
    /// through geometry.
    private var opaqueTextures = Set<UInt>()
    private let premultipliedBlendMode: SDL_BlendMode

    /// SDL's `SDL_FRAMEBUFFER_ACCELERATION` hint as it stands (tests of the software renderer's surface).
    static var framebufferAccelerationHint: String? {
        SDL_GetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION).map { String(cString: $0) }
    }

    /// The window's pixels per point (`SDLWindow.scale`).
    public var scale: Double { window.scale }
    /// The window it draws into, as a platform window.
    public var platformWindow: PlatformWindow? { window }

    /// Opens a window as `configuration` says and a renderer on it.
    /// - Throws: `SDLBackendError` when SDL cannot open the window, or gives no renderer or another
    ///   renderer than the one asked for.
    public convenience init(_ configuration: Configuration) throws {
        let window = try SDLWindow(configuration.window)
        try self.init(window: window, renderDriver: configuration.renderDriver,
                      vsync: configuration.vsync && !configuration.headless)
    }

    /// Makes a renderer on `window` (one renderer per window; each window of an application has its own).
    /// - Throws: `SDLBackendError` when SDL gives no renderer, or another than `renderDriver`.
    public init(window: SDLWindow, renderDriver asked: RenderDriver = .auto, vsync: Bool = false) throws {
        // SDL's choice left to the environment, which names the software renderer: taken as asked for
        // by name, so that it draws on the window system's surface, with no OpenGL loaded for it.
        let renderDriver = asked == .auto && getenv("SDL_RENDER_DRIVER").map({ String(cString: $0) }) == "software"
            ? RenderDriver.software : asked
        // The hint is process-wide: set (or reset to the environment's) for every backend made, so one
        // backend's choice never carries over to the next.
        if renderDriver == .auto {
            SDL_ResetHint(SDL_HINT_RENDER_DRIVER)
        } else {
            // Over the environment's `SDL_RENDER_DRIVER`: the caller asked for this one.
            SDL_SetHintWithPriority(SDL_HINT_RENDER_DRIVER, renderDriver.rawValue, SDL_HINT_OVERRIDE)
        }
        // SDL's software renderer draws into the window's surface, which SDL on X11 would keep in an
        // OpenGL texture of its own and show through a GL renderer (on Mesa's llvmpipe under Xvfb:
        // 3–5 ms to show even a few pixels). Asked for by name, the software renderer gets the window
        // system's own surface instead (shared-memory images on X11: a whole 960×720 frame shown in
        // 0.3 ms, a line of text in 0.1 ms). The environment's `SDL_FRAMEBUFFER_ACCELERATION` still wins.
        // SDL 2.26's Wayland driver has no surface of its own: there the software renderer draws into a
        // surface of the drawable's size that an accelerated renderer shows (`SDLPixelSurface`), and
        // the hint is left alone.
        if renderDriver == .software && window.videoDriverName != "wayland" {
            SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        }
        let rendererFlags = vsync ? UInt32(SDL_RENDERER_PRESENTVSYNC.rawValue) : 0
        let pixelSurface = renderDriver == .software ? SDLPixelSurface.make(for: window, vsync: vsync) : nil
        let made = pixelSurface.map { SDL_CreateSoftwareRenderer($0.surface) } ?? SDL_CreateRenderer(window.window, -1, rendererFlags)
        guard let renderer = made else {
            throw SDLBackendError(message: "SDL could not create a renderer: \(String(cString: SDL_GetError()))")
        }
        // A renderer that needs another visual made the X window anew, under a new id (and, without a
        // window manager, SDL gave the new one the focus: a popup hands it back again).
        window.updateWindowSystemIdentifier()
        window.returnFocusFromPopup()
        // A dialog window is shown now, its X window final: marked modal for its parent.
        window.showAsModalDialog()
        var info = SDL_RendererInfo()
        SDL_GetRendererInfo(renderer, &info)
        let rendererName = info.name.map { String(cString: $0) } ?? "unknown"
        if renderDriver != .auto && rendererName != renderDriver.rawValue {
            let driver = window.videoDriverName
            SDL_DestroyRenderer(renderer)
            throw SDLBackendError(message: "SDL could not start the \(renderDriver.rawValue) renderer "
                + "with the \(driver) video driver (it offered \(rendererName))"
                + (driver == "dummy" ? "; it needs a display: DISPLAY set and no --headless" : ""))
        }
        self.window = window
        self.renderer = renderer
        self.pixelSurface = pixelSurface
        self.rendererName = rendererName
        self.graphicsDeviceName = rendererName.hasPrefix("opengl") ? Self.currentGLRendererString() : nil
        let side = Int(min(info.max_texture_width, info.max_texture_height))
        self.maximumTextureSize = side > 0 ? side : Int.max

        // Probe for premultiplied blending on a 1×1 texture.
        premultipliedBlendMode = SDL_ComposeCustomBlendMode(
            SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD,
            SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD)
        var premultiplied = false
        if let probe = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ARGB8888.rawValue,
                                         Int32(SDL_TEXTUREACCESS_STATIC.rawValue), 1, 1) {
            premultiplied = SDL_SetTextureBlendMode(probe, premultipliedBlendMode) == 0
            SDL_DestroyTexture(probe)
        }
        self.usesPremultipliedBlending = premultiplied
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        // The software renderer draws into the window's surface, which the window sends again when
        // the window system lost what it showed; a device reset takes the retained frame with it.
        window.presentsThroughSurface = rendererName == "software" && pixelSurface == nil
        window.deviceResetHandler = { [unowned self] in
            if let texture = retainedFrame { SDL_DestroyTexture(texture) }
            retainedFrame = nil
        }
        window.drawableChangeHandler = { [unowned self] in fitPixelSurfaceToDrawable() }
        if window.followsDisplayScale, let scale = window.displayScale() { window.scale = scale }
    }

    /// Called as the window's events say it changed: where the software renderer draws into a pixel
    /// surface that the window's drawable outgrew (the window moved to an output of a larger scale),
    /// or that holds over twice what the drawable can grow to (moved to an output of a smaller
    /// scale: its memory is given back), the surface is made anew at the new size and the software
    /// renderer on it, and true is returned: every texture (the retained frame too) went with the
    /// old renderer, and the compositor drops its handles as for a renderer reset, uploading again
    /// what it draws next. Where SDL cannot allocate the new surface, nothing is made anew (false):
    /// the old surface is kept (an outgrown one cuts the frame).
    func fitPixelSurfaceToDrawable() -> Bool {
        owner.precondition("SDLRenderBackend.fitPixelSurfaceToDrawable")
        guard let pixelSurface, pixelSurface.isOutgrown || pixelSurface.isOversized,
              let replacement = pixelSurface.makeFittingSurface() else { return false }
        // The renderer draws into the surface: it goes first (its textures with it).
        SDL_DestroyRenderer(renderer)
        liveTextures.removeAll()
        opaqueTextures.removeAll()
        retainedFrame = nil
        retainedFrameSize = (0, 0)
        drawsIntoRetainedFrame = false
        drawsRegionInPlace = false
        pixelSurface.replaceSurface(with: replacement)
        guard let made = SDL_CreateSoftwareRenderer(pixelSurface.surface) else {
            fatalError("SDL could not make the software renderer anew: \(String(cString: SDL_GetError()))")
        }
        renderer = made
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        return true
    }

    /// `glGetString(GL_RENDERER)` of the current OpenGL context (the renderer's, just made); nil
    /// without one.
    private static func currentGLRendererString() -> String? {
        guard SDL_GL_GetCurrentContext() != nil, let address = SDL_GL_GetProcAddress("glGetString") else { return nil }
        typealias GetString = @convention(c) (UInt32) -> UnsafePointer<UInt8>?
        let glRenderer: UInt32 = 0x1F01
        guard let text = unsafeBitCast(address, to: GetString.self)(glRenderer) else { return nil }
        return String(cString: text)
    }

    deinit {
        window.deviceResetHandler = nil
        window.drawableChangeHandler = nil
        window.presentsThroughSurface = false
        // Textures belong to the renderer; destroying it frees them. The window goes after it.
        SDL_DestroyRenderer(renderer)
        pixelSurface = nil
    }

    public var outputPixelSize: (width: Int, height: Int) {
        if let pixelSurface { return pixelSurface.visibleSize }
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &w, &h)
        return (Int(w), Int(h))
    }

    public func makeTexture(from bitmap: Bitmap, region: PixelRect) -> TextureHandle? {
        guard !region.isEmpty, region.x >= 0, region.y >= 0,
              region.x + region.width <= bitmap.width, region.y + region.height <= bitmap.height,
              let texture = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ARGB8888.rawValue,
                                              Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
                                              Int32(region.width), Int32(region.height))
        else { return nil }
        // Opaque pixels need no blending: copying them is several times cheaper on the software renderer.
        // The answer was recorded where the bitmap was made (see `Bitmap.prepared(forUpload:)`), and
        // the pixels are already in the layout this renderer blends: the upload is a copy.
        let opaque = bitmap.isOpaque
        SDL_SetTextureBlendMode(texture, opaque ? SDL_BLENDMODE_NONE
                                                : (usesPremultipliedBlending ? premultipliedBlendMode : SDL_BLENDMODE_BLEND))
        let status = bitmap.withPixels(in: uploadAlphaLayout) { buffer -> Int32 in
            var rect = SDL_Rect(x: 0, y: 0, w: Int32(region.width), h: Int32(region.height))
            return SDL_UpdateTexture(texture, &rect, buffer.baseAddress! + (region.y * bitmap.width + region.x),
                                     Int32(bitmap.width * 4))
        }
        guard status == 0 else {
            SDL_DestroyTexture(texture)
            return nil
        }
        let handle = TextureHandle(rawValue: UInt(bitPattern: Int(bitPattern: UnsafeMutableRawPointer(texture))))
        liveTextures.insert(handle.rawValue)
        if opaque { opaqueTextures.insert(handle.rawValue) }
        return handle
    }

    private func texture(_ handle: TextureHandle) -> OpaquePointer? {
        guard liveTextures.contains(handle.rawValue),
              let raw = UnsafeMutableRawPointer(bitPattern: handle.rawValue) else { return nil }
        return OpaquePointer(raw)
    }

    public func destroyTexture(_ handle: TextureHandle) {
        guard let texture = texture(handle) else { return }
        liveTextures.remove(handle.rawValue)
        opaqueTextures.remove(handle.rawValue)
        SDL_DestroyTexture(texture)
    }

    /// On a pixel surface, the renderer draws within the drawable's size of the moment.
    private func fitViewportToDrawable() {
        guard let pixelSurface else { return }
        let size = pixelSurface.visibleSize
        var viewport = SDL_Rect(x: 0, y: 0, w: Int32(size.width), h: Int32(size.height))
        SDL_RenderSetViewport(renderer, &viewport)
    }

    public func beginFrame(clearColor: Color) {
        fitViewportToDrawable()
        drawsRegionInPlace = false
        if drawsIntoRetainedFrame {
            SDL_SetRenderTarget(renderer, nil)
            drawsIntoRetainedFrame = false
        }
        SDL_RenderSetClipRect(renderer, nil)
        SDL_SetRenderDrawColor(renderer, clearColor.red, clearColor.green, clearColor.blue, clearColor.alpha)
        SDL_RenderClear(renderer)
    }

    public func setClip(_ rect: PixelRect?) {
        if let rect {
            // SDL treats an empty clip rectangle as "no clip"; keep an empty clip empty.
            var sdlRect = rect.isEmpty ? SDL_Rect(x: -2, y: -2, w: 1, h: 1)
                                       : SDL_Rect(x: Int32(clamping: rect.x), y: Int32(clamping: rect.y),
                                                  w: Int32(clamping: rect.width), h: Int32(clamping: rect.height))
            SDL_RenderSetClipRect(renderer, &sdlRect)
        } else {
            SDL_RenderSetClipRect(renderer, nil)
        }
    }

    public func fill(_ rect: Rect, color: Color) {
        // An opaque fill needs no blending; the software renderer blends every pixel when asked to.
        SDL_SetRenderDrawBlendMode(renderer, color.alpha == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND)
        SDL_SetRenderDrawColor(renderer, color.red, color.green, color.blue, color.alpha)
        var sdlRect = SDL_FRect(x: Float(rect.minX), y: Float(rect.minY), w: Float(rect.width), h: Float(rect.height))
        SDL_RenderFillRectF(renderer, &sdlRect)
    }

    public func drawTexture(_ handle: TextureHandle, source: PixelRect, destination: Rect, opacity: Double) {
        guard let texture = texture(handle) else { return }
        let alpha = UInt8((min(1, max(0, opacity)) * 255).rounded())
        if opaqueTextures.contains(handle.rawValue) { setBlending(of: texture, opaque: alpha == 255) }
        SDL_SetTextureAlphaMod(texture, alpha)
        if usesPremultipliedBlending { SDL_SetTextureColorMod(texture, alpha, alpha, alpha) }
        if drawsRegionInPlace && !Self.copiesPixelForPixel(source, to: destination) { regionWasInexact = true }
        var sourceRect = SDL_Rect(x: Int32(source.x), y: Int32(source.y), w: Int32(source.width), h: Int32(source.height))
        var destinationRect = SDL_FRect(x: Float(destination.minX), y: Float(destination.minY),
                                        w: Float(destination.width), h: Float(destination.height))
        SDL_RenderCopyF(renderer, texture, &sourceRect, &destinationRect)
    }

    public func drawGeometry(texture handle: TextureHandle?, vertices: [GeometryVertex], indices: [Int32]) {
        var texture: OpaquePointer?
        if let handle {
            guard let live = self.texture(handle) else { return }
            // A textured polygon is sampled from where the clip starts it: not known to be exact.
            if drawsRegionInPlace { regionWasInexact = true }
            texture = live
            // The fringe of a rounded polygon fades out through vertex alpha, so even opaque pixels blend.
            if opaqueTextures.contains(handle.rawValue) { setBlending(of: live, opaque: false) }
            SDL_SetTextureAlphaMod(texture, 255)
            SDL_SetTextureColorMod(texture, 255, 255, 255)
        }
        let premultiplyColors = texture != nil && usesPremultipliedBlending
        let sdlVertices = vertices.map { vertex -> SDL_Vertex in
            var color = SDL_Color(r: vertex.color.red, g: vertex.color.green, b: vertex.color.blue, a: vertex.color.alpha)
            if premultiplyColors {
                let a = UInt16(vertex.color.alpha)
                color = SDL_Color(r: UInt8(UInt16(color.r) * a / 255), g: UInt8(UInt16(color.g) * a / 255),
                                  b: UInt8(UInt16(color.b) * a / 255), a: color.a)
            }
            return SDL_Vertex(position: SDL_FPoint(x: vertex.x, y: vertex.y), color: color,
                              tex_coord: SDL_FPoint(x: vertex.u, y: vertex.v))
        }
        // Untextured triangles blend with the renderer's draw mode, which an opaque fill may have changed.
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        sdlVertices.withUnsafeBufferPointer { v in
            indices.withUnsafeBufferPointer { i in
                _ = SDL_RenderGeometry(renderer, texture, v.baseAddress, Int32(v.count), i.baseAddress, Int32(i.count))
            }
        }
    }

    /// Opaque textures copy without blending when drawn fully opaque, and blend otherwise.
    private func setBlending(of texture: OpaquePointer, opaque: Bool) {
        SDL_SetTextureBlendMode(texture, opaque ? SDL_BLENDMODE_NONE
                                                : (usesPremultipliedBlending ? premultipliedBlendMode : SDL_BLENDMODE_BLEND))
    }

    public func readPixels() -> Bitmap? {
        let (width, height) = outputPixelSize
        guard width > 0, height > 0 else { return nil }
        var pixels = [UInt32](repeating: 0, count: width * height)
        let status = pixels.withUnsafeMutableBytes { raw in
            SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_ARGB8888.rawValue, raw.baseAddress, Int32(width * 4))
        }
        guard status == 0 else { return nil }
        PixelPass.premultiplyInPlace(&pixels)
        return try? Bitmap(width: width, height: height, scale: scale, premultipliedARGB: pixels)
    }

    /// On the GPU renderers (OpenGL, OpenGL ES), which offer render targets: a frame kept in a
    /// texture, of which a later frame redraws only what changed and which is copied whole to the
    /// window at `present`. There a clip (a scissor) leaves what it keeps drawn exactly as without it.
    /// Not on the software renderer, whose scaled copies round differently where a clip cuts them: it
    /// draws every changed frame whole.
    public var retainsFrames: Bool {
        retainsFramesInOutput || SDL_RenderTargetSupported(renderer) == SDL_TRUE
    }

    /// On the software renderer the window's surface, which it draws into, is the retained frame: it
    /// keeps the last frame, so a small change is drawn in place under a clip and only its region
    /// goes to the window. Where a clip would change how a copy is rounded (a scaled copy, a textured
    /// polygon), `retainedRegionIsExact` turns false and the compositor draws the frame whole.
    public var retainsFramesInOutput: Bool { rendererName == "software" }

    public var retainedRegionIsExact: Bool { !regionWasInexact }

    /// True when `source` lands on `destination` pixel for pixel: the same size, at whole pixels. Such a
    /// copy is the same under any clip.
    static func copiesPixelForPixel(_ source: PixelRect, to destination: Rect) -> Bool {
        Double(source.width) == destination.width && Double(source.height) == destination.height
            && destination.minX == destination.minX.rounded() && destination.minY == destination.minY.rounded()
    }

    /// The retained frame's pixels (tests compare them with the whole tree drawn), or nil.
    func readRetainedFrame() -> Bitmap? {
        guard let texture = retainedFrame, !drawsIntoRetainedFrame else { return nil }
        guard SDL_SetRenderTarget(renderer, texture) == 0 else { return nil }
        defer { SDL_SetRenderTarget(renderer, nil) }
        return readPixels()
    }

    public func beginRetainedFrame(clearColor: Color, region: PixelRect?) -> Bool {
        regionWasInexact = false
        if retainsFramesInOutput {
            fitViewportToDrawable()
            SDL_RenderSetClipRect(renderer, nil)
            SDL_SetRenderDrawColor(renderer, clearColor.red, clearColor.green, clearColor.blue, clearColor.alpha)
            guard let region else {
                drawsRegionInPlace = false
                SDL_RenderClear(renderer)
                return false
            }
            drawsRegionInPlace = true
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
            var rect = SDL_Rect(x: Int32(clamping: region.x), y: Int32(clamping: region.y),
                                w: Int32(clamping: region.width), h: Int32(clamping: region.height))
            SDL_RenderFillRect(renderer, &rect)
            return true
        }
        if drawsIntoRetainedFrame { SDL_SetRenderTarget(renderer, nil) }
        drawsIntoRetainedFrame = false
        var region = region
        var honoured = region != nil
        let size = outputPixelSize
        if retainedFrame == nil || retainedFrameSize != size {
            if let old = retainedFrame { SDL_DestroyTexture(old) }
            retainedFrame = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ARGB8888.rawValue,
                                              Int32(SDL_TEXTUREACCESS_TARGET.rawValue), Int32(size.width), Int32(size.height))
            retainedFrameSize = size
            if let texture = retainedFrame { SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_NONE) }
            region = nil
            honoured = false
        }
        guard let texture = retainedFrame, SDL_SetRenderTarget(renderer, texture) == 0 else {
            // No texture to keep the frame in: an ordinary frame, which the compositor draws whole.
            if let texture = retainedFrame { SDL_DestroyTexture(texture) }
            retainedFrame = nil
            beginFrame(clearColor: clearColor)
            return false
        }
        drawsIntoRetainedFrame = true
        SDL_RenderSetClipRect(renderer, nil)
        SDL_SetRenderDrawColor(renderer, clearColor.red, clearColor.green, clearColor.blue, clearColor.alpha)
        if let region {
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
            var rect = SDL_Rect(x: Int32(clamping: region.x), y: Int32(clamping: region.y),
                                w: Int32(clamping: region.width), h: Int32(clamping: region.height))
            SDL_RenderFillRect(renderer, &rect)
        } else {
            SDL_RenderClear(renderer)
        }
        return honoured
    }

    public func present() {
        present(region: nil)
    }

    /// Shows the frame. On the software renderer, which draws into the window's own surface, a frame
    /// of which only `region` changed sends only that region to the window
    /// (`SDL_UpdateWindowSurfaceRects`): a keystroke's line is not a whole window's worth of pixels to
    /// the X server. Elsewhere the whole frame is shown.
    public func present(region: PixelRect?) {
        var region = region
        if window.waitsForFirstPresent {
            // A popup window appears with its first frame, shown whole: drawn into the retained frame
            // (or the window's surface) while the window was hidden, and presented now it is mapped.
            window.showForFirstPresent()
            region = nil
        }
        if drawsIntoRetainedFrame, let texture = retainedFrame {
            SDL_SetRenderTarget(renderer, nil)
            drawsIntoRetainedFrame = false
            SDL_RenderSetClipRect(renderer, nil)
            SDL_RenderCopy(renderer, texture, nil, nil)
        } else if let region, rendererName == "software" {
            let (width, height) = outputPixelSize
            let clipped = region.intersection(PixelRect(x: 0, y: 0, width: width, height: height))
            SDL_RenderFlush(renderer)
            guard !clipped.isEmpty else { return }
            if let pixelSurface {
                pixelSurface.present(region: clipped)
                return
            }
            var rect = SDL_Rect(x: Int32(clamping: clipped.x), y: Int32(clamping: clipped.y),
                                w: Int32(clamping: clipped.width), h: Int32(clamping: clipped.height))
            SDL_UpdateWindowSurfaceRects(window.window, &rect, 1)
            return
        }
        if let pixelSurface {
            SDL_RenderFlush(renderer)
            pixelSurface.present(region: nil)
            return
        }
        SDL_RenderPresent(renderer)
    }

}

extension Size {
    /// A window size: non-finite or smaller than 1 point becomes 1.
    var sanitizedForWindow: Size {
        Size(width: width.isFinite ? max(1, width) : 1, height: height.isFinite ? max(1, height) : 1)
    }
}
