// Value types shared by the compositor, the drawing kit and the layers.
//
// Geometry is in points; a bitmap or a renderer multiplies by its scale to reach pixels.
// Every type here is a plain `Sendable` value and may be used on any thread.

/// A point in points.
/// - Thread: any
public struct Point: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public static let zero = Point(x: 0, y: 0)
    public var description: String { "(\(x), \(y))" }
}

/// A size in points.
/// - Thread: any
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) { self.width = width; self.height = height }
    public static let zero = Size(width: 0, height: 0)
    public var description: String { "\(width)×\(height)" }
}

/// A rectangle in points: an origin (top-left, y grows downwards) and a size.
/// - Thread: any
public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var origin: Point
    public var size: Size

    public init(origin: Point, size: Size) { self.origin = origin; self.size = size }
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.origin = Point(x: x, y: y)
        self.size = Size(width: width, height: height)
    }
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    public var minX: Double { origin.x }
    public var minY: Double { origin.y }
    public var maxX: Double { origin.x + size.width }
    public var maxY: Double { origin.y + size.height }
    public var width: Double { size.width }
    public var height: Double { size.height }
    public var midX: Double { origin.x + size.width / 2 }
    public var midY: Double { origin.y + size.height / 2 }

    /// True when the rectangle covers no area (a zero or negative side).
    public var isEmpty: Bool { !(size.width > 0 && size.height > 0) }

    /// True when every component is a finite number.
    public var isFinite: Bool {
        origin.x.isFinite && origin.y.isFinite && size.width.isFinite && size.height.isFinite
    }

    /// The largest coordinate or side that drawing accepts, in points; beyond it values are clamped,
    /// so that pixel arithmetic and the renderer's single-precision coordinates stay exact enough.
    public static let drawableLimit = 10_000_000.0

    /// The defined fallback for bad geometry, used wherever a frame reaches drawing:
    /// a non-finite component (NaN or ±infinity) becomes 0, a negative side becomes 0, and a component
    /// beyond ±`drawableLimit` is clamped to it. A sanitized rectangle is always finite with
    /// non-negative sides.
    public var sanitized: Rect {
        func finite(_ value: Double) -> Double {
            value.isFinite ? min(Rect.drawableLimit, max(-Rect.drawableLimit, value)) : 0
        }
        return Rect(
            x: finite(origin.x), y: finite(origin.y),
            width: max(0, finite(size.width)), height: max(0, finite(size.height)))
    }

    public func offsetBy(dx: Double, dy: Double) -> Rect {
        Rect(x: origin.x + dx, y: origin.y + dy, width: size.width, height: size.height)
    }

    public func insetBy(dx: Double, dy: Double) -> Rect {
        Rect(x: origin.x + dx, y: origin.y + dy,
             width: max(0, size.width - 2 * dx), height: max(0, size.height - 2 * dy))
    }

    /// The common area of two rectangles, or `.zero`-sized at the nearer corner when they do not meet.
    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(minX, other.minX), y0 = max(minY, other.minY)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public func intersects(_ other: Rect) -> Bool { !intersection(other).isEmpty }

    /// The smallest rectangle holding both.
    public func union(_ other: Rect) -> Rect {
        let x0 = min(minX, other.minX), y0 = min(minY, other.minY)
        let x1 = max(maxX, other.maxX), y1 = max(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public func contains(_ point: Point) -> Bool {
        point.x >= minX && point.x < maxX && point.y >= minY && point.y < maxY
    }

    /// The rectangle multiplied by `factor` (points to pixels).
    public func scaled(by factor: Double) -> Rect {
        Rect(x: origin.x * factor, y: origin.y * factor,
             width: size.width * factor, height: size.height * factor)
    }

    public var description: String { "(\(minX), \(minY), \(width)×\(height))" }
}

/// A colour with straight (not premultiplied) 8-bit channels.
/// - Thread: any
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red; self.green = green; self.blue = blue; self.alpha = alpha
    }

    /// A colour from `0xRRGGBB`, opaque unless `alpha` says otherwise.
    public init(rgb: UInt32, alpha: UInt8 = 255) {
        self.init(red: UInt8((rgb >> 16) & 0xFF), green: UInt8((rgb >> 8) & 0xFF),
                  blue: UInt8(rgb & 0xFF), alpha: alpha)
    }

    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 255, green: 255, blue: 255)

    /// The colour with its alpha multiplied by `factor` (clamped to 0...1; NaN counts as 0).
    public func withAlphaMultiplied(by factor: Double) -> Color {
        let f = factor.isNaN ? 0 : min(1, max(0, factor))
        var copy = self
        copy.alpha = UInt8((Double(alpha) * f).rounded())
        return copy
    }

    /// The colour as one premultiplied ARGB8888 pixel, the format of `Bitmap`.
    public var premultipliedARGB: UInt32 {
        let a = UInt32(alpha)
        let r = (UInt32(red) * a + 127) / 255
        let g = (UInt32(green) * a + 127) / 255
        let b = (UInt32(blue) * a + 127) / 255
        return (a << 24) | (r << 16) | (g << 8) | b
    }

    /// The straight colour of a premultiplied ARGB8888 pixel.
    public init(premultipliedARGB pixel: UInt32) {
        let a = (pixel >> 24) & 0xFF
        func unpremultiply(_ c: UInt32) -> UInt8 {
            a == 0 ? 0 : UInt8(min(255, (c * 255 + a / 2) / a))
        }
        self.init(red: unpremultiply((pixel >> 16) & 0xFF), green: unpremultiply((pixel >> 8) & 0xFF),
                  blue: unpremultiply(pixel & 0xFF), alpha: UInt8(a))
    }

    public var description: String {
        func hex(_ v: UInt8) -> String { let s = String(v, radix: 16); return s.count == 1 ? "0" + s : s }
        return "#" + hex(red) + hex(green) + hex(blue) + hex(alpha)
    }
}

/// Which corners of a rectangle are rounded.
/// - Thread: any
public struct CornerMask: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let topLeft = CornerMask(rawValue: 1 << 0)
    public static let topRight = CornerMask(rawValue: 1 << 1)
    public static let bottomLeft = CornerMask(rawValue: 1 << 2)
    public static let bottomRight = CornerMask(rawValue: 1 << 3)
    public static let all: CornerMask = [.topLeft, .topRight, .bottomLeft, .bottomRight]
}

/// A radius for each corner of a rectangle, in points.
/// - Thread: any
public struct CornerRadii: Hashable, Sendable, CustomStringConvertible {
    public var topLeft: Double
    public var topRight: Double
    public var bottomLeft: Double
    public var bottomRight: Double

    public init(topLeft: Double, topRight: Double, bottomLeft: Double, bottomRight: Double) {
        self.topLeft = topLeft; self.topRight = topRight
        self.bottomLeft = bottomLeft; self.bottomRight = bottomRight
    }

    /// `radius` on the corners in `mask`, 0 on the others.
    public init(_ radius: Double, corners mask: CornerMask = .all) {
        self.init(topLeft: mask.contains(.topLeft) ? radius : 0,
                  topRight: mask.contains(.topRight) ? radius : 0,
                  bottomLeft: mask.contains(.bottomLeft) ? radius : 0,
                  bottomRight: mask.contains(.bottomRight) ? radius : 0)
    }

    public static let zero = CornerRadii(0)

    public var isZero: Bool { topLeft == 0 && topRight == 0 && bottomLeft == 0 && bottomRight == 0 }

    /// The radii made safe for a rectangle of `size`: non-finite or negative radii become 0, and
    /// when two radii on one side add up to more than that side, all four shrink by the same factor
    /// (so a radius larger than half the short side gives a capsule or circle, never overlapping arcs).
    public func clamped(to size: Size) -> CornerRadii {
        func clean(_ r: Double) -> Double { r.isFinite && r > 0 ? r : 0 }
        var result = CornerRadii(topLeft: clean(topLeft), topRight: clean(topRight),
                                 bottomLeft: clean(bottomLeft), bottomRight: clean(bottomRight))
        let w = size.width.isFinite ? max(0, size.width) : 0
        let h = size.height.isFinite ? max(0, size.height) : 0
        var factor = 1.0
        func limit(_ sum: Double, _ side: Double) {
            if sum > side { factor = min(factor, sum > 0 ? side / sum : 0) }
        }
        limit(result.topLeft + result.topRight, w)
        limit(result.bottomLeft + result.bottomRight, w)
        limit(result.topLeft + result.bottomLeft, h)
        limit(result.topRight + result.bottomRight, h)
        if factor < 1 {
            result.topLeft *= factor; result.topRight *= factor
            result.bottomLeft *= factor; result.bottomRight *= factor
        }
        return result
    }

    public var description: String { "[\(topLeft), \(topRight), \(bottomLeft), \(bottomRight)]" }
}
