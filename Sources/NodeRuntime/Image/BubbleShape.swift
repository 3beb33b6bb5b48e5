import Compositor

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

    /// Coverage (0...255) of the bubble (body with its tail) for every pixel of a canvas of `size`
    /// points at `scale` (as `BitmapContext(size:scale:)` sizes it), and that canvas's pixel size.
    /// The body is one anti-aliased rounded rectangle; the tail, a box minus a circle carving its
    /// concave edge, is computed over its own small box only.
    static func mask(size: Size, scale: Double, radii: CornerRadii, tail: BubbleTail)
        -> (coverage: [UInt8], width: Int, height: Int)? {
        guard var body = try? BitmapContext(size: size, scale: scale) else { return nil }
        let width = body.pixelWidth, height = body.pixelHeight
        let bounds = body.bounds
        let bodyRect = bodyRect(in: bounds, tail: tail)
        var bodyRadii = radii
        // The corner the tail grows from stays nearly square so the hook joins it smoothly.
        if tail.side == .left { bodyRadii.bottomLeft = min(bodyRadii.bottomLeft, 2) } else {
            bodyRadii.bottomRight = min(bodyRadii.bottomRight, 2)
        }
        body.fillRoundedRect(bodyRect, radii: bodyRadii.clamped(to: bodyRect.size), color: .white)
        var coverage = body.makeBitmap().pixels.map { UInt8($0 >> 24) }
        guard tail.width > 0, bounds.height > 0 else { return (coverage, width, height) }

        let reach = tail.width
        let tailHeight = min(bounds.height, reach * 1.25)
        let box = tail.side == .right
            ? Rect(x: bounds.maxX - reach - 4, y: bounds.maxY - tailHeight, width: reach + 4, height: tailHeight)
            : Rect(x: bounds.minX, y: bounds.maxY - tailHeight, width: reach + 4, height: tailHeight)
        let centre = Point(x: tail.side == .right ? bounds.maxX : bounds.minX, y: bounds.maxY - tailHeight)
        let circle = Rect(x: centre.x - reach, y: centre.y - reach, width: 2 * reach, height: 2 * reach)
        // Two small canvases over the box's pixels, with the shapes moved to their origin.
        let x0 = max(0, PixelGeometry.lowerPixel(box.minX * scale)), y0 = max(0, PixelGeometry.lowerPixel(box.minY * scale))
        let x1 = min(width, PixelGeometry.upperPixel(box.maxX * scale)), y1 = min(height, PixelGeometry.upperPixel(box.maxY * scale))
        guard x1 > x0, y1 > y0,
              var boxContext = try? BitmapContext(pixelWidth: x1 - x0, pixelHeight: y1 - y0, scale: scale),
              var outside = try? BitmapContext(pixelWidth: x1 - x0, pixelHeight: y1 - y0, scale: scale)
        else { return (coverage, width, height) }
        let dx = -Double(x0) / scale, dy = -Double(y0) / scale
        boxContext.fill(box.offsetBy(dx: dx, dy: dy), color: .white)
        outside.fill(outsideRoundedRect: circle.offsetBy(dx: dx, dy: dy), radii: CornerRadii(reach), color: .white)
        let boxPixels = boxContext.makeBitmap().pixels, outsidePixels = outside.makeBitmap().pixels
        let boxWidth = x1 - x0
        for y in y0..<y1 {
            for x in x0..<x1 {
                let k = (y - y0) * boxWidth + (x - x0)
                let tailCoverage = UInt8((boxPixels[k] >> 24) * (outsidePixels[k] >> 24) / 255)
                coverage[y * width + x] = max(coverage[y * width + x], tailCoverage)
            }
        }
        return (coverage, width, height)
    }
}
