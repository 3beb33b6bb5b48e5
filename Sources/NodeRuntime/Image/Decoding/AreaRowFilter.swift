import Compositor

/// Shrinks an image with an area filter while its rows arrive one at a time, so a decoder never needs
/// the whole image: memory is a few rows of the output plus one source row, whatever the source height.
///
/// The source is `sourceWidth` pixels wide; `region` (in source pixels, fractional edges allowed) is
/// mapped onto `outputWidth` × `outputHeight`. Each output pixel is the coverage-weighted mean of the
/// source pixels under it, in premultiplied space; rows may be fed in any order only in the sense that
/// rows outside the region are ignored (feed them top to bottom).
/// - Thread: any (a value owned by one decode)
struct AreaRowFilter {
    let sourceWidth: Int
    let outputWidth: Int
    let outputHeight: Int
    private let regionY: Double
    private let rowStep: Double        // source rows per output row
    // Horizontal taps: output column i reads `tapCount[i]` source columns from `tapStart[i]`, with
    // weights `weights[tapOffset[i]...]` that sum to 1.
    private var tapStart: [Int32]
    private var tapCount: [Int32]
    private var tapOffset: [Int32]
    private var weights: [Float]
    private var reduced: [Float]       // one source row reduced horizontally, 4 floats per output pixel
    private var pending: [(row: Int, weight: Double, sums: [Float])] = []
    private(set) var output: [UInt32]
    private var nextRowToFlush = 0
    /// The region is the whole width at whole-pixel rows and the output its size: rows are copied.
    private let isIdentity: Bool

    /// Bytes this filter holds while it works, for the decoder's memory accounting.
    static func workingBytes(sourceWidth: Int, outputWidth: Int, outputHeight: Int) -> Int {
        ByteCount.sum(ByteCount.product(sourceWidth, 4), ByteCount.product(outputWidth, 64),
                      ByteCount.product(outputWidth, outputHeight, 4))
    }

    init(sourceWidth: Int, region: Rect, outputWidth: Int, outputHeight: Int) {
        self.sourceWidth = max(1, sourceWidth)
        self.outputWidth = max(1, outputWidth)
        self.outputHeight = max(1, outputHeight)
        regionY = region.minY
        isIdentity = region.minX == 0 && region.width == Double(self.sourceWidth) && outputWidth == self.sourceWidth
            && region.height == Double(self.outputHeight) && region.minY == region.minY.rounded()
        rowStep = max(region.height, 1e-9) / Double(self.outputHeight)
        let columnStep = max(region.width, 1e-9) / Double(self.outputWidth)
        tapStart = []; tapCount = []; tapOffset = []; weights = []
        tapStart.reserveCapacity(self.outputWidth)
        weights.reserveCapacity(self.sourceWidth + 2 * self.outputWidth)
        for i in 0..<self.outputWidth {
            let a = region.minX + Double(i) * columnStep, b = a + columnStep
            var first = Int(a.rounded(.down)), last = Int(b.rounded(.up)) - 1
            first = min(max(first, 0), self.sourceWidth - 1)
            last = min(max(last, first), self.sourceWidth - 1)
            var taps: [Double] = []
            for x in first...last {
                taps.append(max(0, min(b, Double(x + 1)) - max(a, Double(x))))
            }
            var total = taps.reduce(0, +)
            if total <= 0 { taps = Array(repeating: 1, count: taps.count); total = Double(taps.count) }
            tapStart.append(Int32(first))
            tapCount.append(Int32(taps.count))
            tapOffset.append(Int32(weights.count))
            weights.append(contentsOf: taps.map { Float($0 / total) })
        }
        reduced = Array(repeating: 0, count: self.outputWidth * 4)
        output = Array(repeating: 0, count: self.outputWidth * self.outputHeight)
    }

    /// The source rows that matter: those under the region (others may be skipped by the decoder).
    var neededRows: Range<Int> {
        let top = max(0, Int(regionY.rounded(.down)))
        let bottom = Int((regionY + rowStep * Double(outputHeight)).rounded(.up))
        return top..<max(top, bottom)
    }

    /// Adds source row `y`: `pixels` holds `sourceWidth` RGBA pixels (4 bytes each, alpha straight
    /// unless `premultiplied`).
    mutating func add(row y: Int, rgba pixels: UnsafePointer<UInt8>, premultiplied: Bool) {
        if isIdentity { return copy(row: y - Int(regionY), pixels, premultiplied: premultiplied) }
        let top = Double(y), bottom = top + 1
        let firstOut = max(0, Int(((top - regionY) / rowStep).rounded(.down)))
        let lastOut = min(outputHeight - 1, Int(((bottom - regionY) / rowStep).rounded(.up)) - 1)
        guard firstOut <= lastOut else { return }
        reduce(pixels, premultiplied: premultiplied)
        for k in firstOut...lastOut {
            let a = regionY + Double(k) * rowStep, b = a + rowStep
            let overlap = min(b, bottom) - max(a, top)
            guard overlap > 0 else { continue }
            accumulate(into: k, weight: overlap / rowStep)
        }
        // Rows that end above the next source row are complete.
        while nextRowToFlush < outputHeight, regionY + Double(nextRowToFlush + 1) * rowStep <= bottom {
            flush(nextRowToFlush)
        }
    }

    /// Completes every output row (rows no source row reached stay transparent) and returns the
    /// premultiplied ARGB pixels.
    mutating func finish() -> [UInt32] {
        while nextRowToFlush < outputHeight { flush(nextRowToFlush) }
        return output
    }

    private mutating func copy(row: Int, _ pixels: UnsafePointer<UInt8>, premultiplied: Bool) {
        guard row >= 0, row < outputHeight else { return }
        let base = row * outputWidth
        output.withUnsafeMutableBufferPointer { out in
            for i in 0..<outputWidth {
                let p = pixels + i * 4
                let a = UInt32(p[3])
                var r = UInt32(p[0]), g = UInt32(p[1]), b = UInt32(p[2])
                if !premultiplied && a != 255 {
                    r = (r * a + 127) / 255; g = (g * a + 127) / 255; b = (b * a + 127) / 255
                }
                out[base + i] = a << 24 | min(a, r) << 16 | min(a, g) << 8 | min(a, b)
            }
        }
        nextRowToFlush = max(nextRowToFlush, row + 1)
    }

    private mutating func reduce(_ pixels: UnsafePointer<UInt8>, premultiplied: Bool) {
        tapStart.withUnsafeBufferPointer { starts in
        tapCount.withUnsafeBufferPointer { counts in
        tapOffset.withUnsafeBufferPointer { offsets in
        weights.withUnsafeBufferPointer { w in
        reduced.withUnsafeMutableBufferPointer { out in
            for i in 0..<outputWidth {
                var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                var p = pixels + Int(starts[i]) * 4
                var o = Int(offsets[i])
                for _ in 0..<Int(counts[i]) {
                    let alpha = Float(p[3])
                    let weight = w[o]
                    if premultiplied || alpha == 255 {
                        r += weight * Float(p[0]); g += weight * Float(p[1]); b += weight * Float(p[2])
                    } else {
                        let f = weight * alpha * (1 / 255)
                        r += f * Float(p[0]); g += f * Float(p[1]); b += f * Float(p[2])
                    }
                    a += weight * alpha
                    p += 4
                    o += 1
                }
                out[i * 4] = r; out[i * 4 + 1] = g; out[i * 4 + 2] = b; out[i * 4 + 3] = a
            }
        }}}}}
    }

    private mutating func accumulate(into row: Int, weight: Double) {
        let index: Int
        if let found = pending.firstIndex(where: { $0.row == row }) {
            index = found
        } else {
            pending.append((row, 0, Array(repeating: 0, count: outputWidth * 4)))
            index = pending.count - 1
        }
        pending[index].weight += weight
        let w = Float(weight)
        reduced.withUnsafeBufferPointer { source in
            pending[index].sums.withUnsafeMutableBufferPointer { sums in
                for j in 0..<sums.count { sums[j] += w * source[j] }
            }
        }
    }

    private mutating func flush(_ row: Int) {
        nextRowToFlush = row + 1
        guard let index = pending.firstIndex(where: { $0.row == row }) else { return }
        let entry = pending.remove(at: index)
        guard entry.weight > 0 else { return }
        let scale = Float(1 / entry.weight)
        func byte(_ v: Float) -> UInt32 { UInt32(min(255, max(0, (v * scale).rounded()))) }
        let base = row * outputWidth
        for i in 0..<outputWidth {
            let a = byte(entry.sums[i * 4 + 3])
            // Premultiplied: no colour channel may exceed alpha after rounding.
            let r = min(a, byte(entry.sums[i * 4])), g = min(a, byte(entry.sums[i * 4 + 1]))
            let b = min(a, byte(entry.sums[i * 4 + 2]))
            output[base + i] = a << 24 | r << 16 | g << 8 | b
        }
    }
}
