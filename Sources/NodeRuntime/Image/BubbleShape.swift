public import Compositor

/// The tail of a chat bubble: a small hook at a bottom corner, curving out of the bubble's side.
/// - Thread: any
public struct BubbleTail: Sendable, Hashable {
    public enum Side: Sendable, Hashable { case left, right }
    /// Which bottom corner carries the tail (incoming messages: left; outgoing: right).
    public var side: Side
    /// How far the tail reaches out of the bubble's side, in points.
    public var width: Double
    public init(side: Side, width: Double = 6) {
        self.side = side
        self.width = width.isFinite ? max(0, width) : 0
    }
}

/// Coverage masks for the shapes an image node bakes into its bitmap: a rounded rectangle with a radius
/// per corner, optionally with a bubble tail.
/// - Thread: any (pure)
enum BubbleShape {
    /// The body's frame within `bounds` when a tail takes part of the width.
    static func bodyRect(in bounds: Rect, tail: BubbleTail?) -> Rect {
        guard let tail, tail.width > 0 else { return bounds }
        let width = max(0, bounds.width - tail.width)
        return Rect(x: tail.side == .left ? bounds.minX + tail.width : bounds.minX, y: bounds.minY,
                    width: width, height: bounds.height)
    }

    /// Coverage (0...255) of the shape for every pixel of a `pixelWidth × pixelHeight` canvas at `scale`.
    static func mask(pixelWidth: Int, pixelHeight: Int, scale: Double, radii: CornerRadii, tail: BubbleTail?) -> [UInt8] {
        guard let bodyContext = try? BitmapContext(pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
        else { return [] }
        var body = bodyContext
        let bounds = body.bounds
        let bodyRect = bodyRect(in: bounds, tail: tail)
        var bodyRadii = radii
        if let tail, tail.width > 0 {
            // The corner the tail grows from stays nearly square so the hook joins it smoothly.
            if tail.side == .left { bodyRadii.bottomLeft = min(bodyRadii.bottomLeft, 2) } else {
                bodyRadii.bottomRight = min(bodyRadii.bottomRight, 2)
            }
        }
        body.fillRoundedRect(bodyRect, radii: bodyRadii.clamped(to: bodyRect.size), color: .white)
        var coverage = body.makeBitmap().pixels.map { UInt8($0 >> 24) }
        guard let tail, tail.width > 0, bounds.height > 0 else { return coverage }

        // The tail: a box at the bottom corner, minus a circle that carves its concave edge, so the hook
        // comes to a point at the outer bottom corner.
        let reach = tail.width
        let height = min(bounds.height, reach * 1.25)
        let box = tail.side == .right
            ? Rect(x: bounds.maxX - reach - 4, y: bounds.maxY - height, width: reach + 4, height: height)
            : Rect(x: bounds.minX, y: bounds.maxY - height, width: reach + 4, height: height)
        let centre = Point(x: tail.side == .right ? bounds.maxX : bounds.minX, y: bounds.maxY - height)
        let circle = Rect(x: centre.x - reach, y: centre.y - reach, width: 2 * reach, height: 2 * reach)
        guard var boxContext = try? BitmapContext(pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale),
              var outside = try? BitmapContext(pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
        else { return coverage }
        boxContext.fill(box, color: .white)
        outside.fill(outsideRoundedRect: circle, radii: CornerRadii(reach), color: .white)
        let boxPixels = boxContext.makeBitmap().pixels, outsidePixels = outside.makeBitmap().pixels
        for i in coverage.indices {
            let tailCoverage = (boxPixels[i] >> 24) * (outsidePixels[i] >> 24) / 255
            coverage[i] = max(coverage[i], UInt8(tailCoverage))
        }
        return coverage
    }

    /// `bitmap` with every pixel multiplied by the coverage mask.
    static func apply(_ mask: [UInt8], to bitmap: Bitmap) -> Bitmap {
        guard mask.count == bitmap.width * bitmap.height else { return bitmap }
        var pixels = bitmap.pixels
        for i in pixels.indices {
            let m = UInt32(mask[i])
            if m == 255 { continue }
            let p = pixels[i]
            if m == 0 { pixels[i] = 0; continue }
            let a = ((p >> 24) * m + 127) / 255, r = (((p >> 16) & 0xFF) * m + 127) / 255
            let g = (((p >> 8) & 0xFF) * m + 127) / 255, b = ((p & 0xFF) * m + 127) / 255
            pixels[i] = (a << 24) | (r << 16) | (g << 8) | b
        }
        return (try? Bitmap(width: bitmap.width, height: bitmap.height, scale: bitmap.scale, premultipliedARGB: pixels)) ?? bitmap
    }
}
