// The clip: rectangles, anti-aliased rounded rectangles and coverage masks, intersected, with a stack
// to save and restore them.

extension BitmapContext {
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
