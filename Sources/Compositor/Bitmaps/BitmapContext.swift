// The drawing kit: a software canvas of premultiplied ARGB8888 pixels.
//
// Everything here is plain Swift on a pixel array, so a layer's contents can be drawn on any
// thread without an SDL renderer. Geometry arrives in points and is multiplied by the context's
// scale; all coverage is computed in pixel space (see `RoundedRectRaster` for how). The context is
// split by concern: this file holds its state and whole-canvas operations; fills, clipping and
// drawing bitmaps are in `BitmapContext+Fills`, `+Clipping` and `+Images`, and the blending loops
// they share in `Blending.swift`.

/// A mutable canvas of premultiplied ARGB8888 pixels, drawn in points (pixel = point × scale).
///
/// Drawing is source-over with premultiplied alpha, clipped to the canvas and to the current clip
/// (an intersection of rectangles and anti-aliased rounded rectangles). Bad input never traps: each
/// method documents the fallback it takes instead.
///
/// A context is a value; copying it copies the pixels (lazily). It is meant to be used by one thread
/// at a time and is not `Sendable`: draw into it, then hand the immutable result of `makeBitmap()`
/// to other threads.
/// - Thread: any
public struct BitmapContext {
    /// Width of the canvas in pixels.
    /// - Thread: any
    public let pixelWidth: Int
    /// Height of the canvas in pixels.
    /// - Thread: any
    public let pixelHeight: Int
    /// Pixels per point.
    /// - Thread: any
    public let scale: Double

    // Shared with the drawing kit's other files (`BitmapContext+Fills`, `+Clipping`, `+Images`).

    /// Premultiplied ARGB8888, row by row, `pixelWidth × pixelHeight`.
    var pixels: [UInt32]
    /// Where drawing may reach, and with what coverage (see `ClipState`).
    var currentClip: ClipState
    /// The clips `saveClip()` pushed, innermost last.
    var savedClips: [ClipState] = []
    /// Where the drawing coordinates' origin is on the canvas, in points (see `drawing(in:_:)`).
    var origin = Point.zero
    /// The size `bounds` reports inside `drawing(in:_:)`; nil for the whole canvas.
    var regionSize: Size?

    /// The canvas in points: `(0, 0, pixelWidth / scale, pixelHeight / scale)`; inside
    /// `drawing(in:_:)`, the region's size at origin zero.
    /// - Thread: any
    public var bounds: Rect {
        if let regionSize { return Rect(origin: .zero, size: regionSize) }
        return Rect(x: 0, y: 0, width: Double(pixelWidth) / scale, height: Double(pixelHeight) / scale)
    }

    /// Runs `body` on this canvas narrowed to `rect`: coordinates start at `rect`'s origin, `bounds`
    /// is `rect`'s size, and everything drawn (a `clear` too) stays inside it. A parent draws its
    /// subtree's nodes straight into its own canvas this way, each at its frame, instead of each into
    /// a bitmap of its own that is then copied in. Regions nest.
    ///
    /// Fallback: a rect with a NaN or infinite component or a negative side draws nothing.
    /// - Thread: any
    public mutating func drawing(in rect: Rect, _ body: (inout BitmapContext) -> Void) {
        guard rect.isFinite, rect.width >= 0, rect.height >= 0 else { return }
        let savedOrigin = origin, savedSize = regionSize
        saveClip()
        clip(to: rect)
        origin = Point(x: origin.x + rect.minX, y: origin.y + rect.minY)
        regionSize = rect.size
        body(&self)
        origin = savedOrigin
        regionSize = savedSize
        restoreClip()
    }

    /// A fully transparent canvas of `pixelWidth × pixelHeight` pixels.
    /// - Throws: `BitmapError.invalidSize` for a negative or oversized side (limit `Bitmap.maximumSide`),
    ///   `BitmapError.invalidScale` for a scale that is not finite and positive. A 0×0 canvas is valid
    ///   and draws nothing.
    /// - Thread: any
    public init(pixelWidth: Int, pixelHeight: Int, scale: Double = 1) throws {
        try Bitmap.validate(width: pixelWidth, height: pixelHeight, scale: scale)
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
        self.pixels = [UInt32](repeating: 0, count: pixelWidth * pixelHeight)
        self.currentClip = ClipState.unclipped(width: pixelWidth, height: pixelHeight)
    }

    /// A fully transparent canvas of `size` points: each pixel side is `side × scale` rounded up,
    /// so the canvas always covers the whole size.
    ///
    /// Fallbacks: a NaN, negative or zero side gives 0 pixels (a valid 0×0 or N×0 canvas that draws
    /// nothing). A side within 1e-9 of a whole pixel count is taken as that count, so float noise such
    /// as `30.000000000000004` does not add a column.
    /// - Throws: `BitmapError.invalidScale` for a bad scale; `BitmapError.invalidSize` for an infinite
    ///   side or one beyond `Bitmap.maximumSide` pixels.
    /// - Thread: any
    public init(size: Size, scale: Double = 1) throws {
        guard scale.isFinite, scale > 0 else { throw BitmapError.invalidScale(scale) }
        guard let w = PixelGeometry.pixelCount(covering: size.width, scale: scale),
              let h = PixelGeometry.pixelCount(covering: size.height, scale: scale) else {
            throw BitmapError.invalidSize(width: Bitmap.maximumSide + 1, height: Bitmap.maximumSide + 1)
        }
        try self.init(pixelWidth: w, pixelHeight: h, scale: scale)
    }

    // MARK: Whole-canvas operations

    /// Replaces every pixel with `color` (no blending), ignoring the clip.
    /// - Thread: any
    public mutating func clear(_ color: Color = .clear) {
        let value = color.premultipliedARGB
        guard regionSize != nil else {
            pixels.withUnsafeMutableBufferPointer { $0.update(repeating: value) }
            return
        }
        // Inside a region: only its pixels (its clip's bounds), without blending.
        let clip = currentClip
        guard !clip.isEmpty else { return }
        let width = pixelWidth
        pixels.withUnsafeMutableBufferPointer { p in
            for y in clip.minY..<clip.maxY {
                for x in clip.minX..<clip.maxX { p[y * width + x] = value }
            }
        }
    }

    /// The pixels as an immutable `Bitmap` with this context's scale. The context stays usable.
    /// - Thread: any
    public func makeBitmap() -> Bitmap {
        // Cannot throw: the size and scale were validated by init. The fallback keeps it trap-free anyway.
        (try? Bitmap(width: pixelWidth, height: pixelHeight, scale: scale, premultipliedARGB: pixels))
            ?? Bitmap.empty(scale: scale)
    }

    /// The premultiplied ARGB8888 pixel at (x, y); out-of-range coordinates give transparent black.
    /// For tests and diagnostics.
    func pixel(x: Int, y: Int) -> UInt32 {
        guard x >= 0, y >= 0, x < pixelWidth, y < pixelHeight else { return 0 }
        return pixels[y * pixelWidth + x]
    }
}

// MARK: - Geometry in pixel space

extension BitmapContext {
    /// `rect` in pixels, or nil for bad geometry (non-finite, negative side, or overflowing when scaled).
    func pixelRect(_ rect: Rect) -> Rect? {
        guard rect.isFinite, rect.width >= 0, rect.height >= 0 else { return nil }
        let rect = origin == .zero ? rect : rect.offsetBy(dx: origin.x, dy: origin.y)
        return PixelGeometry.snappedPixelEdges(of: rect, scale: scale)
    }

    /// The rasterizer for a rounded rect in points, or nil when it covers no pixel area.
    func pixelShape(_ rect: Rect, radii: CornerRadii) -> RoundedRectRaster? {
        guard let r = pixelRect(rect), !r.isEmpty else { return nil }
        // Clamp in pixels, after scaling, so that the "radii fit the sides" guarantee holds exactly
        // for the numbers the rasterizer uses.
        return RoundedRectRaster(x0: r.minX, y0: r.minY, x1: r.maxX, y1: r.maxY,
                                 radii: radii.scaled(by: scale).clamped(to: r.size))
    }

    /// Runs `body` on the pixels and on the clip mask (nil when the clip is a plain pixel rectangle).
    mutating func withCanvas(_ body: (UnsafeMutableBufferPointer<UInt32>, MaskView?) -> Void) {
        let mask = currentClip.mask, solid = currentClip.solid, width = pixelWidth
        pixels.withUnsafeMutableBufferPointer { canvas in
            guard let mask, let solid else { return body(canvas, nil) }
            mask.withUnsafeBufferPointer { m in
                solid.withUnsafeBufferPointer { sr in
                    guard let m = m.baseAddress, let sr = sr.baseAddress else { return body(canvas, nil) }
                    body(canvas, MaskView(coverage: m, solid: sr, width: width))
                }
            }
        }
    }
}
