// The drawing kit: a software canvas of premultiplied ARGB8888 pixels.
//
// Everything here is plain Swift on a pixel array, so a layer's contents can be drawn on any
// thread without an SDL renderer. Geometry arrives in points and is multiplied by the context's
// scale; all coverage is computed in pixel space.
//
// Anti-aliasing: a shape's coverage of a pixel is the area of the pixel inside the shape. Each pixel
// row is cut into horizontal sub-scanlines (one where the row has only straight edges, sixteen where
// it crosses a corner arc); on each sub-scanline the shape is an exact interval [left, right], and the
// pixel's share of that interval is measured exactly. Straight edges are therefore exact (crisp on
// integer pixel boundaries, exact area on fractional ones) and arcs are exact horizontally and
// sixteen-fold supersampled vertically. Only pixels the edges pass through are measured one by one;
// the run between them is filled as a span.

internal import CSDL

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

    /// Premultiplied ARGB8888, row by row, `pixelWidth × pixelHeight`.
    private var pixels: [UInt32]
    private var currentClip: ClipState
    private var savedClips: [ClipState] = []
    /// Where the drawing coordinates' origin is on the canvas, in points (see `drawing(in:_:)`).
    private var origin = Point.zero
    /// The size `bounds` reports inside `drawing(in:_:)`; nil for the whole canvas.
    private var regionSize: Size?

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

    // MARK: Fills

    /// Paints `rect` with `color`, source-over. Edges on fractional pixel positions get the pixel's
    /// covered area as partial alpha; edges on whole pixels are exactly crisp. Respects the clip.
    ///
    /// Fallbacks: a rect with a NaN or infinite component, or a negative side, draws nothing; parts
    /// outside the canvas are dropped.
    /// - Thread: any
    public mutating func fill(_ rect: Rect, color: Color) {
        fillRoundedRect(rect, radii: .zero, color: color)
    }

    /// Paints a rectangle with rounded corners (a radius per corner), source-over, with anti-aliased
    /// edges. Respects the clip.
    ///
    /// Fallbacks: bad rects as in `fill(_:color:)`; NaN, infinite or negative radii count as 0, and
    /// radii too large for the rect shrink together (`CornerRadii.clamped(to:)`), so a radius larger
    /// than half of every side gives a circle or capsule.
    /// - Thread: any
    public mutating func fillRoundedRect(_ rect: Rect, radii: CornerRadii, color: Color) {
        guard let shape = pixelShape(rect, radii: radii) else { return }
        let premultiplied = color.premultipliedARGB
        guard premultiplied >> 24 != 0, !currentClip.isEmpty else { return }
        let clip = currentClip
        let limitX = clip.minX..<clip.maxX
        let rows = clampedRange(shape.minY, shape.maxY, clip.minY, clip.maxY)
        guard !rows.isEmpty, !limitX.isEmpty else { return }
        var scratch = [UInt8](repeating: 0, count: pixelWidth)
        let width = pixelWidth
        withCanvas { canvas, mask in
            scratch.withUnsafeMutableBufferPointer { cov in
                for y in rows {
                    let spans = shape.row(y, limit: limitX, coverage: cov)
                    let base = y * width
                    Self.blendVarying(canvas, base, spans.left, cov, premultiplied, mask)
                    Self.blendSpan(canvas, base, spans.solid, spans.solidCoverage, premultiplied, mask)
                    Self.blendVarying(canvas, base, spans.right, cov, premultiplied, mask)
                }
            }
        }
    }

    /// Paints `color × (1 − coverage of the rounded rect)` over every pixel of the context, source-over:
    /// the exact complement of `fillRoundedRect` with the same arguments (their premultiplied results,
    /// drawn into two clear contexts, add up to the plain colour within rounding). Used to make the
    /// pieces that mask a layer's corners. Respects the clip.
    ///
    /// Fallbacks: a rect with a NaN or infinite component or a negative side draws nothing (bad geometry
    /// is not treated as "no shape"); a valid zero-area rect has nothing inside, so the whole canvas is
    /// painted. Radii are clamped as in `fillRoundedRect`.
    /// - Thread: any
    public mutating func fill(outsideRoundedRect rect: Rect, radii: CornerRadii, color: Color) {
        guard rect.isFinite, rect.width >= 0, rect.height >= 0 else { return }
        let premultiplied = color.premultipliedARGB
        guard premultiplied >> 24 != 0, !currentClip.isEmpty else { return }
        let clip = currentClip
        let limitX = clip.minX..<clip.maxX
        let shape = pixelShape(rect, radii: radii)  // nil for a zero-area rect: everything is outside
        var scratch = [UInt8](repeating: 0, count: pixelWidth)
        let width = pixelWidth
        withCanvas { canvas, mask in
            scratch.withUnsafeMutableBufferPointer { cov in
                for y in clip.minY..<clip.maxY {
                    let base = y * width
                    guard let shape, y >= shape.minY, y < shape.maxY else {
                        Self.blendSpan(canvas, base, limitX, 255, premultiplied, mask)
                        continue
                    }
                    let spans = shape.row(y, limit: limitX, coverage: cov)
                    for x in spans.left { cov[x] = 255 - cov[x] }
                    for x in spans.right { cov[x] = 255 - cov[x] }
                    Self.blendSpan(canvas, base, limitX.lowerBound..<spans.left.lowerBound, 255, premultiplied, mask)
                    Self.blendVarying(canvas, base, spans.left, cov, premultiplied, mask)
                    Self.blendSpan(canvas, base, spans.solid, 255 - spans.solidCoverage, premultiplied, mask)
                    Self.blendVarying(canvas, base, spans.right, cov, premultiplied, mask)
                    Self.blendSpan(canvas, base, spans.right.upperBound..<limitX.upperBound, 255, premultiplied, mask)
                }
            }
        }
    }

    // MARK: Clipping

    /// Intersects the clip with `rect`. A fractional edge clips with partial coverage, like a fill's edge.
    ///
    /// Fallback: a rect with a NaN or infinite component or a negative side makes the clip empty, so
    /// nothing is drawn until the next `restoreClip()`.
    /// - Thread: any
    public mutating func clip(to rect: Rect) {
        clip(toRoundedRect: rect, radii: .zero)
    }

    /// Intersects the clip with an anti-aliased rounded rectangle: later drawing is multiplied by the
    /// shape's coverage of each pixel.
    ///
    /// Fallbacks: bad rects make the clip empty, as in `clip(to:)`; radii are clamped as in
    /// `fillRoundedRect`.
    /// - Thread: any
    public mutating func clip(toRoundedRect rect: Rect, radii: CornerRadii) {
        guard let shape = pixelShape(rect, radii: radii) else { currentClip.makeEmpty(); return }
        var clip = currentClip
        clip.minX = max(clip.minX, shape.minX); clip.maxX = min(clip.maxX, shape.maxX)
        clip.minY = max(clip.minY, shape.minY); clip.maxY = min(clip.maxY, shape.maxY)
        guard !clip.isEmpty else { currentClip.makeEmpty(); return }
        if !shape.isPixelAligned {
            // Only pixels inside the bounds are ever read, so the mask needs no clearing elsewhere.
            var mask = clip.mask ?? [UInt8](repeating: 255, count: pixelWidth * pixelHeight)
            var solid = clip.solid ?? [Int](repeating: 0, count: 2 * pixelHeight)
            if clip.solid == nil {
                for y in 0..<pixelHeight { solid[2 * y + 1] = pixelWidth }
            }
            var scratch = [UInt8](repeating: 0, count: pixelWidth)
            let limitX = clip.minX..<clip.maxX
            let width = pixelWidth
            mask.withUnsafeMutableBufferPointer { m in
                scratch.withUnsafeMutableBufferPointer { cov in
                    for y in clip.minY..<clip.maxY {
                        let base = y * width
                        let spans = shape.row(y, limit: limitX, coverage: cov)
                        // The fully covered run of both the old clip and this shape (an interval, as
                        // both are), so that blending can skip the mask there.
                        let inside = spans.solidCoverage == 255 ? spans.solid : limitX.lowerBound..<limitX.lowerBound
                        solid[2 * y] = max(solid[2 * y], inside.lowerBound)
                        solid[2 * y + 1] = min(solid[2 * y + 1], inside.upperBound)
                        for x in limitX.lowerBound..<spans.left.lowerBound { m[base + x] = 0 }
                        for x in spans.left { m[base + x] = UInt8(mul255(UInt32(m[base + x]), UInt32(cov[x]))) }
                        if spans.solidCoverage != 255 {
                            let c = UInt32(spans.solidCoverage)
                            for x in spans.solid { m[base + x] = UInt8(mul255(UInt32(m[base + x]), c)) }
                        }
                        for x in spans.right { m[base + x] = UInt8(mul255(UInt32(m[base + x]), UInt32(cov[x]))) }
                        for x in spans.right.upperBound..<limitX.upperBound { m[base + x] = 0 }
                    }
                }
            }
            clip.mask = mask
            clip.solid = solid
        }
        currentClip = clip
    }

    /// Intersects the clip with a coverage mask (row by row, `width × height` values, 255 = inside)
    /// laid on the canvas at the top-left pixel of `bounds` (the region's, inside `drawing(in:_:)`):
    /// for shapes that are no rounded rectangle, such as a bubble with a tail. Pixels the mask does
    /// not reach are outside.
    ///
    /// Fallback: a mask whose count is not `width × height`, or a negative side, leaves nothing
    /// inside.
    /// - Thread: any
    public mutating func clip(toCoverage coverage: [UInt8], width: Int, height: Int) {
        guard width >= 0, height >= 0, coverage.count == width * height,
              let region = pixelRect(bounds) else { currentClip.makeEmpty(); return }
        let offsetX = PixelGeometry.nearestIndex(region.minX), offsetY = PixelGeometry.nearestIndex(region.minY)
        var clip = currentClip
        clip.minX = max(clip.minX, offsetX); clip.maxX = min(clip.maxX, offsetX + width)
        clip.minY = max(clip.minY, offsetY); clip.maxY = min(clip.maxY, offsetY + height)
        guard !clip.isEmpty else { currentClip.makeEmpty(); return }
        let canvasWidth = pixelWidth
        var mask = clip.mask ?? [UInt8](repeating: 255, count: pixelWidth * pixelHeight)
        var solid = clip.solid ?? [Int](repeating: 0, count: 2 * pixelHeight)
        if clip.solid == nil {
            for y in 0..<pixelHeight { solid[2 * y + 1] = pixelWidth }
        }
        for y in clip.minY..<clip.maxY {
            let base = y * canvasWidth, source = (y - offsetY) * width - offsetX
            for x in clip.minX..<clip.maxX {
                mask[base + x] = UInt8(mul255(UInt32(mask[base + x]), UInt32(coverage[source + x])))
            }
            // The run where the mask is now 255: from the first full pixel to the next that is not.
            var lo = clip.minX
            while lo < clip.maxX && mask[base + lo] != 255 { lo += 1 }
            var hi = lo
            while hi < clip.maxX && mask[base + hi] == 255 { hi += 1 }
            solid[2 * y] = lo
            solid[2 * y + 1] = hi
        }
        clip.mask = mask
        clip.solid = solid
        currentClip = clip
    }

    /// Pushes the current clip, to be brought back by `restoreClip()`.
    /// - Thread: any
    public mutating func saveClip() {
        savedClips.append(currentClip)
    }

    /// Pops the clip pushed by the matching `saveClip()`.
    ///
    /// Fallback: with nothing saved, the clip resets to the whole canvas (never traps).
    /// - Thread: any
    public mutating func restoreClip() {
        currentClip = savedClips.popLast() ?? ClipState.unclipped(width: pixelWidth, height: pixelHeight)
    }

    // MARK: Bitmaps

    /// Draws `bitmap`, or its sub-rectangle `sourceRect` (in the bitmap's pixels), scaled into `rect`
    /// (points), source-over, multiplied by `opacity`. Respects the clip; fractional destination edges
    /// are anti-aliased by area.
    ///
    /// Filtering per axis: bilinear when enlarging or shrinking by up to 2×, and an area (box) filter
    /// that averages every covered source pixel when shrinking by more, so a large photo drawn small
    /// does not alias. Samples never reach outside `sourceRect` (edge pixels are repeated), so a
    /// sub-rectangle of an atlas does not bleed. All math is premultiplied.
    ///
    /// Fallbacks: an empty bitmap, a rect with a NaN or infinite component or a negative side, or a
    /// non-finite or empty `sourceRect` draws nothing. A `sourceRect` reaching outside the bitmap is
    /// cut to the bitmap and `rect` shrinks in proportion (the picture is not stretched). NaN opacity
    /// counts as 0; opacity is clamped to 0...1.
    /// - Thread: any
    public mutating func draw(_ bitmap: Bitmap, in rect: Rect, from sourceRect: Rect? = nil, opacity: Double = 1) {
        guard !bitmap.isEmpty, !currentClip.isEmpty else { return }
        let alpha = opacity.isNaN ? 0 : min(1, max(0, opacity))
        guard alpha > 0 else { return }
        guard var dst = pixelRect(rect), !dst.isEmpty else { return }
        let full = Rect(x: 0, y: 0, width: Double(bitmap.width), height: Double(bitmap.height))
        var src = full
        if let sourceRect {
            guard sourceRect.isFinite, !sourceRect.isEmpty else { return }
            let cut = sourceRect.intersection(full)
            guard !cut.isEmpty else { return }
            let kx = dst.width / sourceRect.width, ky = dst.height / sourceRect.height
            dst = Rect(x: dst.minX + (cut.minX - sourceRect.minX) * kx,
                       y: dst.minY + (cut.minY - sourceRect.minY) * ky,
                       width: cut.width * kx, height: cut.height * ky)
            src = cut
            guard dst.isFinite, !dst.isEmpty else { return }
        }
        let clip = currentClip
        let cols = clampedRange(PixelGeometry.lowerPixel(dst.minX), PixelGeometry.upperPixel(dst.maxX),
                                clip.minX, clip.maxX)
        let rows = clampedRange(PixelGeometry.lowerPixel(dst.minY), PixelGeometry.upperPixel(dst.maxY),
                                clip.minY, clip.maxY)
        guard !cols.isEmpty, !rows.isEmpty else { return }

        // Per-column and per-row factors: the destination rect's area coverage, with opacity folded
        // into the columns, so a pixel's factor is one multiply.
        let colFactor = cols.map { 255 * alpha * overlap(Double($0), dst.minX, dst.maxX) }
        let rowFactor = rows.map { overlap(Double($0), dst.minY, dst.maxY) }

        let colTaps = FilterTaps(destination: cols, dstMin: dst.minX, dstExtent: dst.width,
                                 srcMin: src.minX, srcExtent: src.width, sourceCount: bitmap.width)
        let rowTaps = FilterTaps(destination: rows, dstMin: dst.minY, dstExtent: dst.height,
                                 srcMin: src.minY, srcExtent: src.height, sourceCount: bitmap.height)
        let job = ResampleJob(width: pixelWidth, sourceWidth: bitmap.width, cols: cols, rows: rows,
                              colTaps: colTaps, rowTaps: rowTaps, colFactor: colFactor, rowFactor: rowFactor)
        withCanvas { canvas, mask in
            bitmap.withPixels(in: .premultiplied) { source in
                guard let canvas = canvas.baseAddress, let source = source.baseAddress else { return }
                job.run(canvas: canvas, source: source, mask: mask)
            }
        }
    }

    /// Converts an SDL surface of any pixel format (premultiplying on the way) and draws it into `rect`
    /// as `draw(_:in:)` does. The surface is only read; the caller keeps ownership.
    /// - Throws: `BitmapError` when the surface cannot be converted.
    /// - Thread: any
    mutating func draw(surface: UnsafeMutablePointer<SDL_Surface>, in rect: Rect) throws {
        draw(try Bitmap(surface: surface), in: rect)
    }

    /// `draw(surface:in:)` for sibling modules, with the surface as an opaque `SDL_Surface *`.
    /// - Throws: `BitmapError` when the surface cannot be converted.
    /// - Thread: any
    package mutating func draw(sdlSurface: UnsafeMutableRawPointer, in rect: Rect) throws {
        try draw(surface: sdlSurface.assumingMemoryBound(to: SDL_Surface.self), in: rect)
    }
}

// MARK: - Geometry in pixel space

extension BitmapContext {
    /// `rect` in pixels, or nil for bad geometry (non-finite, negative side, or overflowing when scaled).
    private func pixelRect(_ rect: Rect) -> Rect? {
        guard rect.isFinite, rect.width >= 0, rect.height >= 0 else { return nil }
        let rect = origin == .zero ? rect : rect.offsetBy(dx: origin.x, dy: origin.y)
        return PixelGeometry.snappedPixelEdges(of: rect, scale: scale)
    }

    /// The rasterizer for a rounded rect in points, or nil when it covers no pixel area.
    private func pixelShape(_ rect: Rect, radii: CornerRadii) -> RoundedRectRaster? {
        guard let r = pixelRect(rect), !r.isEmpty else { return nil }
        // Clamp in pixels, after scaling, so that the "radii fit the sides" guarantee holds exactly
        // for the numbers the rasterizer uses.
        return RoundedRectRaster(x0: r.minX, y0: r.minY, x1: r.maxX, y1: r.maxY,
                                 radii: radii.scaled(by: scale).clamped(to: r.size))
    }

    /// Runs `body` on the pixels and on the clip mask (nil when the clip is a plain pixel rectangle).
    private mutating func withCanvas(_ body: (UnsafeMutableBufferPointer<UInt32>, MaskView?) -> Void) {
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

/// `lower..<upper` cut to `minimum..<maximum` (assumed `minimum <= maximum`). Both ends are pinned
/// into the limit, so the result is never inverted and adjacent runs stay adjacent after cutting.
func clampedRange(_ lower: Int, _ upper: Int, _ minimum: Int, _ maximum: Int) -> Range<Int> {
    let lo = min(max(lower, minimum), maximum)
    return lo..<max(lo, min(upper, maximum))
}

/// How much of the unit interval [i, i+1] lies in [lo, hi], 0...1.
@inline(__always)
func overlap(_ i: Double, _ lo: Double, _ hi: Double) -> Double {
    let v = min(i + 1, hi) - max(i, lo)
    return v > 0 ? min(v, 1) : 0
}

/// A coverage fraction as 0...255; NaN counts as 0.
@inline(__always)
func coverageByte(_ c: Double) -> UInt8 {
    guard c > 0 else { return 0 }
    guard c < 1 else { return 255 }
    return UInt8(c * 255 + 0.5)
}

// MARK: - Pixel arithmetic (premultiplied ARGB8888)

/// a × b / 255, rounded, for a, b in 0...255.
@inline(__always)
func mul255(_ a: UInt32, _ b: UInt32) -> UInt32 {
    let t = a * b + 128
    return (t + (t >> 8)) >> 8
}

/// Every channel of `p` × f / 255, rounded (f in 0...255). Two channels share each 32-bit multiply;
/// a lane peaks at 255 × 255 + 128 + 254 < 65536, so lanes never carry into each other.
@inline(__always)
func scalePixel(_ p: UInt32, _ f: UInt32) -> UInt32 {
    var rb = (p & 0x00FF_00FF) &* f &+ 0x0080_0080
    rb = ((rb &+ ((rb >> 8) & 0x00FF_00FF)) >> 8) & 0x00FF_00FF
    var ag = ((p >> 8) & 0x00FF_00FF) &* f &+ 0x0080_0080
    ag = (ag &+ ((ag >> 8) & 0x00FF_00FF)) & 0xFF00_FF00
    return rb | ag
}

/// Source-over of premultiplied pixels. Branch-free so that loops over it vectorize (about five times
/// faster than with an early exit for opaque sources); `over(0, d) == d` and an opaque `s` gives `s`
/// exactly, since `scalePixel(x, 255) == x` and `scalePixel(x, 0) == 0`. Channels saturate at 255, so
/// malformed input (a colour channel above its alpha, which `Bitmap` does not reject) gives odd
/// colours, never a carry into the next channel.
@inline(__always)
func over(_ s: UInt32, _ d: UInt32) -> UInt32 {
    let t = scalePixel(d, 255 &- (s >> 24))
    var rb = (s & 0x00FF_00FF) &+ (t & 0x00FF_00FF)
    var ag = ((s >> 8) & 0x00FF_00FF) &+ ((t >> 8) & 0x00FF_00FF)
    rb |= 0x0100_0100 &- ((rb >> 8) & 0x0001_0001)
    ag |= 0x0100_0100 &- ((ag >> 8) & 0x0001_0001)
    return (rb & 0x00FF_00FF) | ((ag & 0x00FF_00FF) << 8)
}

// MARK: - Blending spans
//
// The per-pixel loops use raw pointers and `while`: pointer subscripts are transparent and inline even
// in debug builds, where buffer subscripts and range iterators are out-of-line calls that would make
// a full-canvas fill several times slower.

extension BitmapContext {
    /// Blends `color` at one coverage over `span` of the row starting at `base`.
    fileprivate static func blendSpan(
        _ canvas: UnsafeMutableBufferPointer<UInt32>, _ base: Int, _ span: Range<Int>, _ coverage: UInt8,
        _ color: UInt32, _ mask: MaskView?
    ) {
        guard !span.isEmpty, coverage != 0, let dst = canvas.baseAddress else { return }
        let s = scalePixel(color, UInt32(coverage))
        guard s >> 24 != 0 else { return }
        let start = base + span.lowerBound, end = base + span.upperBound
        guard let mask else { return plainSpan(dst, start, end, s) }
        let (lo, hi) = mask.solidRun(start, end)
        maskedSpan(dst, start, lo, s, mask.coverage)
        plainSpan(dst, lo, hi, s)
        maskedSpan(dst, hi, end, s, mask.coverage)
    }

    @inline(__always)
    private static func plainSpan(_ dst: UnsafeMutablePointer<UInt32>, _ start: Int, _ end: Int, _ s: UInt32) {
        guard start < end else { return }
        if s >> 24 == 255 {
            (dst + start).update(repeating: s, count: end - start)
            return
        }
        var i = start
        while i < end {
            dst[i] = over(s, dst[i])
            i += 1
        }
    }

    @inline(__always)
    private static func maskedSpan(_ dst: UnsafeMutablePointer<UInt32>, _ start: Int, _ end: Int, _ s: UInt32,
                                   _ mask: UnsafePointer<UInt8>) {
        var i = start
        while i < end {
            dst[i] = over(scalePixel(s, UInt32(mask[i])), dst[i])
            i += 1
        }
    }

    /// Blends `color` over `span`, each pixel at its own coverage from `coverage[x]`.
    fileprivate static func blendVarying(
        _ canvas: UnsafeMutableBufferPointer<UInt32>, _ base: Int, _ span: Range<Int>,
        _ coverage: UnsafeMutableBufferPointer<UInt8>, _ color: UInt32, _ mask: MaskView?
    ) {
        guard !span.isEmpty, let canvasBase = canvas.baseAddress, let cov = coverage.baseAddress else { return }
        let maskRow = mask.map { $0.coverage + base }
        let dst = canvasBase + base
        var x = span.lowerBound
        while x < span.upperBound {
            var c = UInt32(cov[x])
            if let maskRow { c = mul255(c, UInt32(maskRow[x])) }
            dst[x] = over(scalePixel(color, c), dst[x])
            x += 1
        }
    }
}

// MARK: - Clip state

/// The clip: a pixel rectangle, optionally refined by a coverage mask.
struct ClipState {
    /// Half-open pixel bounds; nothing outside is drawn.
    var minX: Int, minY: Int, maxX: Int, maxY: Int
    /// Canvas-sized coverage (0...255) of the rounded or fractional clips applied so far; read only
    /// inside the bounds. Nil when the clip is exactly the bounds.
    var mask: [UInt8]?
    /// With `mask`: for each canvas row y, `solid[2y]..<solid[2y + 1]` is a run where the mask is
    /// known to be 255 (possibly empty, and not necessarily all such pixels).
    var solid: [Int]?

    var isEmpty: Bool { minX >= maxX || minY >= maxY }

    static func unclipped(width: Int, height: Int) -> ClipState {
        ClipState(minX: 0, minY: 0, maxX: width, maxY: height, mask: nil, solid: nil)
    }

    mutating func makeEmpty() {
        self = ClipState(minX: 0, minY: 0, maxX: 0, maxY: 0, mask: nil, solid: nil)
    }
}

/// The clip mask as the blending loops see it.
struct MaskView {
    let coverage: UnsafePointer<UInt8>
    let solid: UnsafePointer<Int>
    let width: Int

    /// The part of the canvas indices `start..<end` (all on one row) where the mask is 255, as
    /// `lo..<hi`; `(end, end)` when there is none. Blending leaves the mask out there.
    @inline(__always)
    func solidRun(_ start: Int, _ end: Int) -> (Int, Int) {
        let y = start / width, base = start - start % width
        let lo = max(start, base + solid[2 * y]), hi = min(end, base + solid[2 * y + 1])
        return lo < hi ? (lo, hi) : (end, end)
    }
}
