// Filling rectangles, rounded rectangles and their outsides, with area coverage at every edge.

extension BitmapContext {
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
}
