// Points to pixels, and pixel coordinates to whole pixels: the rounding rules of the drawing kit, the
// compositor, the SDL backend and the runtime's drawing, in one place.

/// A rectangle of whole pixels.
/// - Thread: any
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var description: String { "[\(x),\(y) \(width)×\(height)]" }
}

/// The rounding rules that turn point geometry into pixels.
///
/// A pixel coordinate is a point coordinate times the scale; scaling itself rounds nothing. Whole
/// pixels come from one of three rules, chosen by what the result is for:
///
/// - **Extents round outward.** A canvas, a decode target or the run of pixels a shape touches must hold
///   every fraction of what it covers: a lower edge rounds down (`lowerPixel`), an upper edge or a size
///   rounds up (`upperPixel`, `coveredPixels(from:to:)`, `pixelCount(covering:scale:)`).
/// - **Placement rounds to the nearest.** Where an edge is to land on a pixel boundary (contents shown
///   pixel for pixel, a renderer's clip, a corner piece, a mesh's edges, a text baseline, a window's
///   size), it goes to the nearest whole number, halves away from zero as `Double.rounded()` does
///   (`nearestWhole`, `nearestIndex`, `aligned(_:scale:)`, `Rect.nearestPixelRect`).
/// - **Float noise is forgiven where a size or an edge comes from points.** Scaling by 3 or adding
///   fractions must not turn an edge meant to be on a pixel boundary into a one-in-a-billion partial
///   pixel, so a coordinate within `snapTolerance` of a whole number counts as that number (`snapped`).
///   The drawing kit snaps every edge it scales (`snappedPixelEdges(of:scale:)`), and sizes rounded up
///   from points snap first (`pixelCount(covering:scale:)`, `alignedUp(_:scale:)`). Coordinates already
///   in pixels (a shape's edges inside the rasterizer, resampling taps) are not snapped, and neither is
///   `pixelCount(strictlyCovering:scale:)`.
///
/// Conversions to `Int` never trap: NaN and values beyond ±2⁴⁰ are pinned (`index`).
/// - Thread: any (pure functions)
package enum PixelGeometry {
    /// How close to a whole number a pixel coordinate must be to count as that number.
    package static let snapTolerance = 1e-9

    /// `pixels`, or the whole number within `snapTolerance` of it.
    @inline(__always)
    package static func snapped(_ pixels: Double) -> Double {
        let whole = pixels.rounded()
        return abs(pixels - whole) < snapTolerance ? whole : pixels
    }

    /// A whole-numbered Double as an `Int` index, without trapping: NaN and values beyond ±2⁴⁰ are
    /// pinned to that range (NaN to its lower end). A fraction is cut toward zero.
    @inline(__always)
    package static func index(_ pixels: Double) -> Int {
        let limit = Double(1 << 40)
        guard pixels > -limit else { return -(1 << 40) }  // also NaN
        guard pixels < limit else { return 1 << 40 }
        return Int(pixels)
    }

    // MARK: Extents: outward

    /// The first pixel at or after a lower edge at `pixels`: rounds down.
    @inline(__always)
    package static func lowerPixel(_ pixels: Double) -> Int { index(pixels.rounded(.down)) }

    /// One past the last pixel before an upper edge at `pixels`: rounds up.
    @inline(__always)
    package static func upperPixel(_ pixels: Double) -> Int { index(pixels.rounded(.up)) }

    /// The pixels that the interval `lower..<upper` (in pixels) touches at all; empty, never inverted,
    /// when `upper` is not past `lower`.
    package static func coveredPixels(from lower: Double, to upper: Double) -> Range<Int> {
        let first = lowerPixel(lower)
        return first..<max(first, upperPixel(upper))
    }

    /// The pixels needed to cover `points` at `scale`, for a canvas: snapped, then rounded up, so the
    /// canvas holds the whole length and float noise such as `30.000000000000004` adds no column.
    /// 0 for a NaN, negative or zero length; nil for one beyond `Bitmap.maximumSide` pixels (infinity too).
    package static func pixelCount(covering points: Double, scale: Double) -> Int? {
        guard points > 0 else { return 0 }  // also NaN
        let exact = points * scale
        guard exact <= Double(Bitmap.maximumSide) else { return nil }  // also +infinity
        return Int(snapped(exact).rounded(.up))
    }

    /// The pixels needed to cover `points` at `scale`, rounded up without forgiving float noise: a
    /// length a hair over a whole pixel count gets one pixel more. An image node sizes its decode
    /// target this way.
    package static func pixelCount(strictlyCovering points: Double, scale: Double) -> Int {
        upperPixel(points * scale)
    }

    /// `points` moved up onto the pixel grid of `scale` (snapped, then rounded up), in points: a
    /// length that whole pixels add up to exactly, as a list's row heights and offsets are.
    package static func alignedUp(_ points: Double, scale: Double) -> Double {
        snapped(points * scale).rounded(.up) / scale
    }

    // MARK: Placement: nearest

    /// The whole number nearest to `pixels` (halves away from zero).
    @inline(__always)
    package static func nearestWhole(_ pixels: Double) -> Double { pixels.rounded() }

    /// `nearestWhole(pixels)` as an `Int`, pinned as `index` pins.
    @inline(__always)
    package static func nearestIndex(_ pixels: Double) -> Int { index(pixels.rounded()) }

    /// `points` moved to the nearest pixel boundary of `scale`, in points: where text puts its lines,
    /// runs and decorations so their edges are crisp.
    @inline(__always)
    package static func aligned(_ points: Double, scale: Double) -> Double { (points * scale).rounded() / scale }

    // MARK: Rectangles

    /// `rect` (in points) in pixels with each edge snapped, or nil when that is not finite. Sides stay
    /// fractional: the drawing kit covers partial pixels by area.
    package static func snappedPixelEdges(of rect: Rect, scale: Double) -> Rect? {
        let x0 = snapped(rect.minX * scale), y0 = snapped(rect.minY * scale)
        let x1 = snapped(rect.maxX * scale), y1 = snapped(rect.maxY * scale)
        let result = Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        return result.isFinite ? result : nil
    }
}

extension Rect {
    /// The whole pixels whose centres lie inside the rectangle (in pixels): each edge at its nearest
    /// whole number, pinned to ±`Int32.max / 2`. The clip a pixel-exact renderer applies.
    var nearestPixelRect: PixelRect {
        let limit = Double(Int32.max / 2)
        func clampToInt(_ v: Double) -> Int { Int(min(limit, max(-limit, PixelGeometry.nearestWhole(v)))) }
        let x0 = clampToInt(minX), y0 = clampToInt(minY)
        let x1 = clampToInt(maxX), y1 = clampToInt(maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}

extension PixelRect {
    /// The rectangle as point-typed geometry (in pixels).
    var rect: Rect { Rect(x: Double(x), y: Double(y), width: Double(width), height: Double(height)) }

    /// The common pixels of two rectangles; empty (at the nearer corner) when they do not meet.
    func intersection(_ other: PixelRect) -> PixelRect {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(x + width, other.x + other.width), y1 = min(y + height, other.y + other.height)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}

extension CornerRadii {
    /// Every radius multiplied by `factor` (points to pixels).
    func scaled(by factor: Double) -> CornerRadii {
        CornerRadii(topLeft: topLeft * factor, topRight: topRight * factor,
                    bottomLeft: bottomLeft * factor, bottomRight: bottomRight * factor)
    }

    /// Every radius at its nearest whole number of pixels.
    var nearestWholePixels: CornerRadii {
        CornerRadii(topLeft: PixelGeometry.nearestWhole(topLeft), topRight: PixelGeometry.nearestWhole(topRight),
                    bottomLeft: PixelGeometry.nearestWhole(bottomLeft),
                    bottomRight: PixelGeometry.nearestWhole(bottomRight))
    }
}
