// Rounded-rect coverage, for the drawing kit's fills and clips.
//
// Anti-aliasing: a shape's coverage of a pixel is the area of the pixel inside the shape. Each pixel
// row is cut into horizontal sub-scanlines (one where the row has only straight edges, sixteen where
// it crosses a corner arc); on each sub-scanline the shape is an exact interval [left, right], and the
// pixel's share of that interval is measured exactly. Straight edges are therefore exact (crisp on
// integer pixel boundaries, exact area on fractional ones) and arcs are exact horizontally and
// sixteen-fold supersampled vertically. Only pixels the edges pass through are measured one by one;
// the run between them is filled as a span.

/// One pixel row of a shape's coverage, as three adjacent runs: `left` and `right` hold the pixels
/// an edge passes through (their coverage is in the caller's scratch row), `solid` lies between them
/// at one coverage (255 unless the row is cut by a fractional top or bottom edge).
struct RowSpans {
    var left: Range<Int>
    var solid: Range<Int>
    var solidCoverage: UInt8
    var right: Range<Int>
}

/// Area coverage of a rounded rectangle in pixel space, row by row (see the file header for the method).
struct RoundedRectRaster {
    let x0: Double, y0: Double, x1: Double, y1: Double
    let radii: CornerRadii
    /// Pixel bounds of the shape (half-open).
    let minX: Int, minY: Int, maxX: Int, maxY: Int
    /// Sub-scanlines per pixel row where a corner arc passes.
    static let arcSamples = 16

    init(x0: Double, y0: Double, x1: Double, y1: Double, radii: CornerRadii) {
        self.x0 = x0; self.y0 = y0; self.x1 = x1; self.y1 = y1
        self.radii = radii
        minX = PixelGeometry.lowerPixel(x0); maxX = PixelGeometry.upperPixel(x1)
        minY = PixelGeometry.lowerPixel(y0); maxY = PixelGeometry.upperPixel(y1)
    }

    /// True when every pixel is fully in or fully out, so clipping to it needs no mask.
    var isPixelAligned: Bool {
        radii.isZero && x0 == x0.rounded() && y0 == y0.rounded() && x1 == x1.rounded() && y1 == y1.rounded()
    }

    /// The shape's left and right ends on the horizontal line at height `t` (y0 < t < y1).
    @inline(__always)
    private func ends(at t: Double) -> (Double, Double) {
        // sqrt((r - d)(r + d)) rather than sqrt(r² - d²): huge radii must not overflow to infinity.
        func inset(_ r: Double, _ d: Double) -> Double { r - ((r - d) * (r + d)).squareRoot() }
        var left = x0, right = x1
        if t < y0 + radii.topLeft {
            left = x0 + inset(radii.topLeft, max(0, y0 + radii.topLeft - t))
        } else if t > y1 - radii.bottomLeft {
            left = x0 + inset(radii.bottomLeft, max(0, t - (y1 - radii.bottomLeft)))
        }
        if t < y0 + radii.topRight {
            right = x1 - inset(radii.topRight, max(0, y0 + radii.topRight - t))
        } else if t > y1 - radii.bottomRight {
            right = x1 - inset(radii.bottomRight, max(0, t - (y1 - radii.bottomRight)))
        }
        return (left, right)
    }

    /// Row `y`'s runs, cut to `limit`; the coverage of the pixels in `left` and `right` is written to
    /// `coverage[x]`.
    func row(_ y: Int, limit: Range<Int>, coverage: UnsafeMutableBufferPointer<UInt8>) -> RowSpans {
        let top = max(Double(y), y0), bottom = min(Double(y + 1), y1)
        let height = bottom - top
        let empty = limit.lowerBound..<limit.lowerBound
        guard height > 0 else {
            return RowSpans(left: empty, solid: empty, solidCoverage: 0, right: empty)
        }
        let straight = top >= y0 + max(radii.topLeft, radii.topRight)
            && bottom <= y1 - max(radii.bottomLeft, radii.bottomRight)
        let count = straight ? 1 : Self.arcSamples
        let weight = height / Double(count)
        // Fixed-size storage on the stack: no allocation per row.
        var lefts: (Double, Double, Double, Double, Double, Double, Double, Double,
                    Double, Double, Double, Double, Double, Double, Double, Double)
            = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var rights = lefts
        var minL = Double.infinity, maxL = -Double.infinity
        var minR = Double.infinity, maxR = -Double.infinity
        withUnsafeMutableBytes(of: &lefts) { lb in
            withUnsafeMutableBytes(of: &rights) { rb in
                let ls = lb.assumingMemoryBound(to: Double.self), rs = rb.assumingMemoryBound(to: Double.self)
                for k in 0..<count {
                    let (l, r) = straight ? (x0, x1) : ends(at: top + (Double(k) + 0.5) * weight)
                    ls[k] = l; rs[k] = r
                    minL = min(minL, l); maxL = max(maxL, l)
                    minR = min(minR, r); maxR = max(maxR, r)
                }
            }
        }
        let leftStart = PixelGeometry.lowerPixel(minL), leftEnd = PixelGeometry.upperPixel(maxL)
        let rightStart = PixelGeometry.lowerPixel(minR), rightEnd = PixelGeometry.upperPixel(maxR)
        let spans: RowSpans
        if leftEnd > rightStart {
            // The edges share pixels (a thin shape or the tip of an arc): measure the whole run.
            let all = clampedRange(leftStart, rightEnd, limit.lowerBound, limit.upperBound)
            spans = RowSpans(left: all, solid: all.upperBound..<all.upperBound, solidCoverage: 0,
                             right: all.upperBound..<all.upperBound)
        } else {
            // The three runs are adjacent before cutting and clampedRange keeps them so.
            spans = RowSpans(left: clampedRange(leftStart, leftEnd, limit.lowerBound, limit.upperBound),
                             solid: clampedRange(leftEnd, rightStart, limit.lowerBound, limit.upperBound),
                             solidCoverage: coverageByte(height),
                             right: clampedRange(rightStart, rightEnd, limit.lowerBound, limit.upperBound))
        }
        withUnsafeBytes(of: &lefts) { lb in
            withUnsafeBytes(of: &rights) { rb in
                let ls = lb.assumingMemoryBound(to: Double.self), rs = rb.assumingMemoryBound(to: Double.self)
                func measure(_ run: Range<Int>) {
                    for x in run {
                        let px = Double(x)
                        var sum = 0.0
                        for k in 0..<count { sum += overlap(px, ls[k], rs[k]) }
                        coverage[x] = coverageByte(sum * weight)
                    }
                }
                measure(spans.left)
                measure(spans.right)
            }
        }
        return spans
    }
}
