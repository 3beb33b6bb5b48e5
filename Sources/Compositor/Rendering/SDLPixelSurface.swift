internal import CSDL

/// The software renderer's output on Wayland, where SDL 2.26 would give it a window surface at
/// window-unit size: SDL's Wayland driver has no surface of its own, and SDL's stand-in (its texture
/// framebuffer) is `window->w × window->h`, so at an output scale of 2 the renderer drew a quarter of
/// the frame into it and the compositor scaled that up, blurry. Here the software renderer draws
/// into a surface of the window's drawable size (allocated for the largest drawable the window's
/// display allows, and used up to the drawable's size of the moment), and each present uploads what
/// changed into a drawable-sized streaming texture of an accelerated renderer on the window, which
/// shows it pixel for pixel: the same path SDL's stand-in takes, at the right size. Made at any
/// scale, 1 too: a window moved to an output of a larger scale keeps it, made anew larger when the
/// drawable outgrows it, and smaller when it holds far more than the drawable can grow to (a move
/// to an output of a smaller scale); the software renderer on it is made anew with it.
/// - Thread: the backend's (its owner's)
final class SDLPixelSurface {
    private(set) var surface: UnsafeMutablePointer<SDL_Surface>
    private let presenter: OpaquePointer
    private var texture: OpaquePointer?
    private var textureSize = (width: 0, height: 0)
    private let window: OpaquePointer

    /// A pixel surface for `window` where it needs one (the Wayland driver); nil elsewhere, or when no
    /// accelerated renderer shows it.
    static func make(for window: SDLWindow, vsync: Bool) -> SDLPixelSurface? {
        guard window.videoDriverName == "wayland" else { return nil }
        var windowWidth: Int32 = 0, windowHeight: Int32 = 0
        SDL_GetWindowSize(window.window, &windowWidth, &windowHeight)
        guard windowWidth > 0, windowHeight > 0 else { return nil }
        let size = largestDrawable(of: window.window)
        return SDLPixelSurface(window: window.window, width: size.width, height: size.height, vsync: vsync)
    }

    /// As large as the window's drawable can grow on its display, at its density now: the drawable,
    /// or the display's bounds at the drawable's pixels per window unit where larger.
    private static func largestDrawable(of window: OpaquePointer) -> (width: Int, height: Int) {
        var windowWidth: Int32 = 0, windowHeight: Int32 = 0
        SDL_GetWindowSize(window, &windowWidth, &windowHeight)
        var pixelWidth: Int32 = 0, pixelHeight: Int32 = 0
        SDL_GetWindowSizeInPixels(window, &pixelWidth, &pixelHeight)
        var width = max(1, Int(pixelWidth)), height = max(1, Int(pixelHeight))
        guard windowWidth > 0 else { return (width, height) }
        let ratio = Double(pixelWidth) / Double(windowWidth)
        var bounds = SDL_Rect()
        if SDL_GetDisplayBounds(max(0, SDL_GetWindowDisplayIndex(window)), &bounds) == 0 {
            width = max(width, Int((Double(bounds.w) * ratio).rounded(.up)))
            height = max(height, Int((Double(bounds.h) * ratio).rounded(.up)))
        }
        return (width, height)
    }

    /// True when the window's drawable is larger than the surface (the window moved to an output of
    /// a larger scale, or grew past its display's size): `makeFittingSurface()` makes it anew.
    var isOutgrown: Bool {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(presenter, &w, &h)
        return w > surface.pointee.w || h > surface.pointee.h
    }

    /// True when the surface holds over twice the pixels of the largest drawable the window's display
    /// allows at its density now (the window moved to an output of a smaller scale):
    /// `makeFittingSurface()` makes it anew, smaller, giving the memory back. Never while SDL reports
    /// no drawable (a size of 0, whose density says nothing).
    var isOversized: Bool {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(presenter, &w, &h)
        guard w > 0, h > 0 else { return false }
        let largest = Self.largestDrawable(of: window)
        return Int(surface.pointee.w) * Int(surface.pointee.h) > 2 * largest.width * largest.height
    }

    /// A surface for the largest drawable the window's display allows at its density now (see
    /// `isOutgrown`, `isOversized`); nil when SDL cannot allocate it. The surface in use is left as
    /// it is: `replaceSurface(with:)` takes the new one once the renderer drawing into the old one is
    /// destroyed.
    func makeFittingSurface() -> UnsafeMutablePointer<SDL_Surface>? {
        let size = Self.largestDrawable(of: window)
        return SDL_CreateRGBSurfaceWithFormat(0, Int32(clamping: size.width), Int32(clamping: size.height), 32,
                                              SDL_PIXELFORMAT_ARGB8888.rawValue)
    }

    /// Takes `replacement` (from `makeFittingSurface()`) as the surface, freeing the old one: the
    /// renderer that drew into the old one must be destroyed first, and made anew on the new one.
    func replaceSurface(with replacement: UnsafeMutablePointer<SDL_Surface>) {
        SDL_FreeSurface(surface)
        surface = replacement
    }

    private init?(window: OpaquePointer, width: Int, height: Int, vsync: Bool) {
        self.window = window
        // The backend asked SDL for its software renderer by name (a hint over the environment's):
        // the renderer that shows the frame is an accelerated one.
        let asked = SDL_GetHint(SDL_HINT_RENDER_DRIVER).map { String(cString: $0) }
        SDL_SetHintWithPriority(SDL_HINT_RENDER_DRIVER, "opengl", SDL_HINT_OVERRIDE)
        defer { if let asked { SDL_SetHintWithPriority(SDL_HINT_RENDER_DRIVER, asked, SDL_HINT_OVERRIDE) } }
        let flags = UInt32(SDL_RENDERER_ACCELERATED.rawValue) | (vsync ? UInt32(SDL_RENDERER_PRESENTVSYNC.rawValue) : 0)
        guard let presenter = SDL_CreateRenderer(window, -1, flags) else { return nil }
        guard let surface = SDL_CreateRGBSurfaceWithFormat(0, Int32(clamping: width), Int32(clamping: height), 32,
                                                           SDL_PIXELFORMAT_ARGB8888.rawValue) else {
            SDL_DestroyRenderer(presenter)
            return nil
        }
        self.presenter = presenter
        self.surface = surface
    }

    /// The part of the surface in use: the window's drawable size (within the surface).
    var visibleSize: (width: Int, height: Int) {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetRendererOutputSize(presenter, &w, &h)
        return (min(Int(w), Int(surface.pointee.w)), min(Int(h), Int(surface.pointee.h)))
    }

    /// Shows the surface's visible part: only `region` uploaded when the texture already holds the
    /// rest (nil: all of it).
    func present(region: PixelRect?) {
        let size = visibleSize
        guard size.width > 0, size.height > 0 else { return }
        var region = region
        if texture == nil || textureSize != size {
            if let texture { SDL_DestroyTexture(texture) }
            texture = SDL_CreateTexture(presenter, SDL_PIXELFORMAT_ARGB8888.rawValue, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
                                        Int32(size.width), Int32(size.height))
            if let texture { SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_NONE) }
            textureSize = size
            region = nil
        }
        guard let texture else { return }
        let whole = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        let upload = region.map { $0.intersection(whole) } ?? whole
        if !upload.isEmpty, let pixels = surface.pointee.pixels {
            let pitch = Int(surface.pointee.pitch)
            var rect = SDL_Rect(x: Int32(upload.x), y: Int32(upload.y), w: Int32(upload.width), h: Int32(upload.height))
            SDL_UpdateTexture(texture, &rect, pixels + upload.y * pitch + upload.x * 4, Int32(pitch))
        }
        SDL_RenderCopy(presenter, texture, nil, nil)
        SDL_RenderPresent(presenter)
    }

    deinit {
        if let texture { SDL_DestroyTexture(texture) }
        SDL_DestroyRenderer(presenter)
        SDL_FreeSurface(surface)
    }
}
