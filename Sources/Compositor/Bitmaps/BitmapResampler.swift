// MARK: - Resampling

/// For each destination pixel along one axis, the source pixels that contribute and their weights
/// (fixed point, summing to exactly `FilterTaps.one`), flattened so no pixel allocates.
struct FilterTaps {
    static let shift = 12
    static let one = 1 << shift
    /// Destination i (counted from the start of the destination range) takes the consecutive source
    /// pixels `first[i]...` with the weights `weight[start[i]..<start[i + 1]]`. Consecutive taps let
    /// the inner loop walk a pointer instead of looking up an index per tap.
    var start: [Int] = [0]
    var first: [Int] = []
    var weight: [UInt32] = []
    /// True when each destination pixel takes exactly one whole source pixel, each the next one along.
    var isIdentity = true
    /// The most taps any destination pixel has.
    var maxTaps = 0

    init(destination: Range<Int>, dstMin: Double, dstExtent: Double,
         srcMin: Double, srcExtent: Double, sourceCount: Int) {
        let step = srcExtent / dstExtent  // source pixels per destination pixel
        let srcMax = srcMin + srcExtent
        // Sample only pixels the source rect touches, so an atlas cell never bleeds into its neighbour.
        let lo = max(0, min(sourceCount - 1, PixelGeometry.lowerPixel(srcMin)))
        let hi = max(lo, min(sourceCount - 1, PixelGeometry.upperPixel(srcMax) - 1))
        let boxFilter = step > 2
        var taps: [(Int, Double)] = []
        taps.reserveCapacity(boxFilter ? Int(min(step, Double(sourceCount))) + 3 : 2)
        start.reserveCapacity(destination.count + 1)
        for d in destination {
            taps.removeAll(keepingCapacity: true)
            if boxFilter {
                // The source interval this destination pixel maps onto, cut to the source rect.
                let a = max(srcMin, srcMin + (Double(d) - dstMin) * step)
                let b = min(srcMax, srcMin + (Double(d) + 1 - dstMin) * step)
                if b > a {
                    let first = max(lo, PixelGeometry.lowerPixel(a)), last = min(hi, PixelGeometry.upperPixel(b) - 1)
                    if first <= last {
                        for s in first...last {
                            let w = min(b, Double(s + 1)) - max(a, Double(s))
                            if w > 0 { taps.append((s, w)) }
                        }
                    }
                }
                if taps.isEmpty {
                    // A pixel only partly inside the destination can map just outside the source: repeat the edge.
                    let centre = srcMin + (Double(d) + 0.5 - dstMin) * step
                    taps.append((max(lo, min(hi, PixelGeometry.lowerPixel(centre))), 1))
                }
            } else {
                let p = srcMin + (Double(d) + 0.5 - dstMin) * step - 0.5
                let pf = p.rounded(.down)
                let t = p - pf
                let i0 = PixelGeometry.index(pf)
                let a = max(lo, min(hi, i0)), b = max(lo, min(hi, i0 + 1))
                if a == b || !(t > 0) {
                    taps.append((a, 1))
                } else {
                    taps.append((a, 1 - t)); taps.append((b, t))
                }
            }
            append(taps)
        }
    }

    /// Adds one destination pixel's taps (consecutive source pixels with fractional weights).
    private mutating func append(_ taps: [(Int, Double)]) {
        var total = 0.0
        for tap in taps { total += tap.1 }
        let base = weight.count
        if total > 0 && total.isFinite {
            // Rounding the running sum (not each weight) keeps every weight non-negative and makes them
            // add up to exactly one, so flat colours stay exact and the accumulators cannot overflow.
            var running = 0.0, previous = 0
            for tap in taps {
                running += tap.1
                let boundary = max(previous, min(Self.one, Int((running / total * Double(Self.one)).rounded())))
                weight.append(UInt32(boundary - previous))
                previous = boundary
            }
            weight[weight.count - 1] += UInt32(Self.one - previous)  // no-op unless float noise
            // Zero weights at the ends are dropped; inside they stay, to keep the taps consecutive.
            var lead = 0
            while weight[base + lead] == 0 { lead += 1 }  // stops: the weights sum to one
            while weight.last == 0 { weight.removeLast() }
            weight.removeSubrange(base..<base + lead)
            first.append(taps[0].0 + lead)
        } else {
            weight.append(UInt32(Self.one))
            first.append(taps[0].0)
        }
        let kept = weight.count - base
        if kept != 1 || (first.count >= 2 && first[first.count - 1] != first[first.count - 2] + 1) {
            isIdentity = false
        }
        maxTaps = max(maxTaps, kept)
        start.append(weight.count)
    }
}

/// One bitmap draw, prepared: where each destination pixel samples and how strongly it is blended.
struct ResampleJob {
    let width: Int, sourceWidth: Int
    let cols: Range<Int>, rows: Range<Int>
    let colTaps: FilterTaps, rowTaps: FilterTaps
    /// 255 × opacity × horizontal coverage of the destination rect, per column.
    let colFactor: [Double]
    /// Vertical coverage of the destination rect, per row.
    let rowFactor: [Double]
    /// `colFactor` as bytes, for rows that are wholly covered (all but at most two).
    let colBytes: [UInt32]
    /// True when every column is drawn at full strength (opacity 1, no partial column).
    let fullColumns: Bool

    init(width: Int, sourceWidth: Int, cols: Range<Int>, rows: Range<Int>,
         colTaps: FilterTaps, rowTaps: FilterTaps, colFactor: [Double], rowFactor: [Double]) {
        self.width = width; self.sourceWidth = sourceWidth
        self.cols = cols; self.rows = rows
        self.colTaps = colTaps; self.rowTaps = rowTaps
        self.colFactor = colFactor; self.rowFactor = rowFactor
        self.colBytes = colFactor.map { factorByte($0) }
        self.fullColumns = !colBytes.contains { $0 != 255 }
    }

    func run(canvas: UnsafeMutablePointer<UInt32>, source: UnsafePointer<UInt32>, mask: MaskView?) {
        colFactor.withUnsafeBufferPointer { cf in
            colBytes.withUnsafeBufferPointer { cb in
                guard let cf = cf.baseAddress, let cb = cb.baseAddress else { return }
                if colTaps.isIdentity && rowTaps.isIdentity {
                    copy(canvas, source, cf, cb, mask)
                } else {
                    resample(canvas, source, cf, cb, mask)
                }
            }
        }
    }

    /// Blends one row of `count` (filtered) source pixels into the canvas row at `offset`, scaled by
    /// coverage × opacity × clip.
    private func blendRow(_ canvas: UnsafeMutablePointer<UInt32>, _ offset: Int, _ src: UnsafePointer<UInt32>,
                          _ j: Int, _ cf: UnsafePointer<Double>, _ cb: UnsafePointer<UInt32>,
                          _ mask: MaskView?) {
        let rf = rowFactor[j]
        let count = cols.count
        guard let mask else { return blendRun(canvas + offset, src, 0, count, rf, cf, cb, nil) }
        let (lo, hi) = mask.solidRun(offset, offset + count)
        let m = mask.coverage + offset
        blendRun(canvas + offset, src, 0, lo - offset, rf, cf, cb, m)
        blendRun(canvas + offset, src, lo - offset, hi - offset, rf, cf, cb, nil)
        blendRun(canvas + offset, src, hi - offset, count, rf, cf, cb, m)
    }

    /// `blendRow` for the columns `start..<end`, with the clip mask row `mask` or none.
    @inline(__always)
    private func blendRun(_ dst: UnsafeMutablePointer<UInt32>, _ src: UnsafePointer<UInt32>, _ start: Int, _ end: Int,
                          _ rf: Double, _ cf: UnsafePointer<Double>, _ cb: UnsafePointer<UInt32>,
                          _ mask: UnsafePointer<UInt8>?) {
        var k = start
        // Branch-free loops (see `over`); a factor of 255 leaves a pixel unchanged through scalePixel.
        if let mask {
            while k < end {
                let f = mul255(rf == 1 ? cb[k] : factorByte(cf[k] * rf), UInt32(mask[k]))
                dst[k] = over(scalePixel(src[k], f), dst[k])
                k += 1
            }
        } else if rf == 1 && fullColumns {
            while k < end {
                dst[k] = over(src[k], dst[k])
                k += 1
            }
        } else if rf == 1 {
            while k < end {
                dst[k] = over(scalePixel(src[k], cb[k]), dst[k])
                k += 1
            }
        } else {
            while k < end {
                dst[k] = over(scalePixel(src[k], factorByte(cf[k] * rf)), dst[k])
                k += 1
            }
        }
    }

    /// A draw where every destination pixel takes one whole source pixel: no filtering needed.
    private func copy(_ canvas: UnsafeMutablePointer<UInt32>, _ source: UnsafePointer<UInt32>,
                      _ cf: UnsafePointer<Double>, _ cb: UnsafePointer<UInt32>, _ mask: MaskView?) {
        let firstColumn = colTaps.first[0]
        var j = 0
        while j < rows.count {
            blendRow(canvas, (rows.lowerBound + j) * width + cols.lowerBound,
                     source + rowTaps.first[j] * sourceWidth + firstColumn, j, cf, cb, mask)
            j += 1
        }
    }

    /// A scaled draw, filtered separably: each needed source row is filtered horizontally once into a
    /// small ring of rows, and each destination row sums the ring rows its vertical taps name.
    ///
    /// Channels travel in pairs, alpha+green and red+blue, in the two 32-bit lanes of a UInt64, which
    /// halves the multiplies. With non-negative weights summing to 4096 per axis a lane peaks at
    /// 255 × 4096 × 4096 + 2²³ < 2³², so lanes never carry into each other.
    private func resample(_ canvas: UnsafeMutablePointer<UInt32>, _ source: UnsafePointer<UInt32>,
                          _ cf: UnsafePointer<Double>, _ cb: UnsafePointer<UInt32>, _ mask: MaskView?) {
        let columns = cols.count, lanes = columns * 2
        // Vertical tap windows only move forward, so a ring as deep as the widest window holds every
        // row still needed, and each source row is filtered horizontally once.
        let ringSize = max(1, rowTaps.maxTaps + 1)
        let ring = UnsafeMutablePointer<UInt64>.allocate(capacity: ringSize * lanes)
        let ringRow = UnsafeMutablePointer<Int>.allocate(capacity: ringSize)
        let acc = UnsafeMutablePointer<UInt64>.allocate(capacity: lanes)
        let out = UnsafeMutablePointer<UInt32>.allocate(capacity: columns)
        defer { ring.deallocate(); ringRow.deallocate(); acc.deallocate(); out.deallocate() }
        ringRow.initialize(repeating: -1, count: ringSize)
        let half: UInt64 = 1 << UInt64(2 * FilterTaps.shift - 1)
        let halves = half | (half << 32), shift = UInt64(2 * FilterTaps.shift)

        colTaps.start.withUnsafeBufferPointer { cs in
        colTaps.first.withUnsafeBufferPointer { cfirst in
        colTaps.weight.withUnsafeBufferPointer { cw in
        rowTaps.start.withUnsafeBufferPointer { rs in
        rowTaps.first.withUnsafeBufferPointer { rfirst in
        rowTaps.weight.withUnsafeBufferPointer { rw in
            guard let cs = cs.baseAddress, let cfirst = cfirst.baseAddress, let cw = cw.baseAddress,
                  let rs = rs.baseAddress, let rfirst = rfirst.baseAddress, let rw = rw.baseAddress
            else { return }
            var j = 0
            while j < rows.count {
                acc.update(repeating: 0, count: lanes)
                var t = rs[j]
                while t < rs[j + 1] {
                    let sy = rfirst[j] + (t - rs[j]), wy = UInt64(rw[t])
                    let slot = sy % ringSize
                    let line = ring + slot * lanes
                    if ringRow[slot] != sy {
                        ringRow[slot] = sy
                        let sourceRow = source + sy * sourceWidth
                        var i = 0
                        while i < columns {
                            var ag: UInt64 = 0, rb: UInt64 = 0
                            var u = cs[i]
                            let end = cs[i + 1]
                            var q = sourceRow + cfirst[i]
                            while u < end {
                                let p = UInt64(q.pointee), w = UInt64(cw[u])
                                q += 1
                                ag &+= (((p &>> 8) & 0xFF) | ((p & 0xFF00_0000) &<< 8)) &* w
                                rb &+= ((p & 0xFF) | ((p & 0xFF_0000) &<< 16)) &* w
                                u &+= 1
                            }
                            line[2 * i] = ag; line[2 * i + 1] = rb
                            i &+= 1
                        }
                    }
                    var v = 0
                    while v < lanes { acc[v] &+= line[v] &* wy; v &+= 1 }
                    t &+= 1
                }
                var i = 0
                while i < columns {
                    let ag = (acc[2 * i] &+ halves) &>> shift, rb = (acc[2 * i + 1] &+ halves) &>> shift
                    let a = UInt32(truncatingIfNeeded: (ag &>> 32) & 0xFF)
                    // Malformed input (a colour above its alpha) is clamped to stay premultiplied.
                    var r = UInt32(truncatingIfNeeded: (rb &>> 32) & 0xFF); if r > a { r = a }
                    var g = UInt32(truncatingIfNeeded: ag & 0xFF); if g > a { g = a }
                    var b = UInt32(truncatingIfNeeded: rb & 0xFF); if b > a { b = a }
                    out[i] = (a << 24) | (r << 16) | (g << 8) | b
                    i &+= 1
                }
                blendRow(canvas, (rows.lowerBound + j) * width + cols.lowerBound, out, j, cf, cb, mask)
                j += 1
            }
        }}}}}}
    }
}

/// A blend factor (0...255 as a Double) as an integer; NaN counts as 0.
@inline(__always)
func factorByte(_ v: Double) -> UInt32 {
    guard v > 0 else { return 0 }
    return v >= 254.5 ? 255 : UInt32(v + 0.5)
}
