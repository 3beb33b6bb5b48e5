// Coverage and blending shared by the drawing kit's fills, clips and images: premultiplied ARGB8888
// arithmetic and the loops that blend a colour over runs of pixels.

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
    static func blendSpan(
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
    static func blendVarying(
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
