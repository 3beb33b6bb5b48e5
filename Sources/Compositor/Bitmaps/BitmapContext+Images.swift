// Drawing bitmaps into the canvas, scaled and filtered (the filters are in `BitmapResampler.swift`).

extension BitmapContext {
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
}
