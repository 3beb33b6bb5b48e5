public import Compositor

/// How two pictures differ, channel by channel.
/// - Thread: any (a value)
public struct ImageDifference: Sendable, Equatable, CustomStringConvertible {
    /// The largest difference in any channel of any pixel (0–255); 255 when the sizes differ.
    public var maximumChannelDelta = 0
    /// Pixels where some channel differs by more than the tolerance (every pixel when the sizes differ).
    public var differingPixels = 0
    /// True when the two pictures had different sizes.
    public var sizesDiffer = false

    public init() {}

    public var description: String {
        sizesDiffer ? "the sizes differ"
            : "\(differingPixels) pixels differ (largest channel difference \(maximumChannelDelta))"
    }
}

/// Compares pictures the way Tessera's own pixel tests do.
/// - Thread: any
public enum ImageComparison {
    /// Compares `actual` with `expected` channel by channel (premultiplied ARGB).
    /// - Returns: the difference, and a picture of it (pixels over `tolerance` in red over a dimmed
    ///   grey copy of `expected`); no picture when the sizes differ.
    public static func compare(_ actual: Bitmap, _ expected: Bitmap, tolerance: Int) -> (ImageDifference, Bitmap?) {
        var difference = ImageDifference()
        guard actual.width == expected.width, actual.height == expected.height else {
            difference.maximumChannelDelta = 255
            difference.differingPixels = max(actual.width * actual.height, expected.width * expected.height)
            difference.sizesDiffer = true
            return (difference, nil)
        }
        var diffPixels = [UInt32](repeating: 0, count: actual.width * actual.height)
        let pa = actual.pixels, pb = expected.pixels
        for i in 0..<pa.count {
            var delta = 0
            for shift in stride(from: 0, through: 24, by: 8) {
                let ca = Int((pa[i] >> UInt32(shift)) & 0xFF), cb = Int((pb[i] >> UInt32(shift)) & 0xFF)
                delta = max(delta, abs(ca - cb))
            }
            difference.maximumChannelDelta = max(difference.maximumChannelDelta, delta)
            if delta > tolerance {
                difference.differingPixels += 1
                diffPixels[i] = 0xFFFF_0000
            } else {
                // Dimmed grey of the expected picture, so the red stays readable in context.
                let p = pb[i]
                let grey = (((p >> 16) & 0xFF) + ((p >> 8) & 0xFF) + (p & 0xFF)) / 3 / 3 + 40
                diffPixels[i] = 0xFF00_0000 | (grey << 16) | (grey << 8) | grey
            }
        }
        let diff = try? Bitmap(width: actual.width, height: actual.height, premultipliedARGB: diffPixels)
        return (difference, diff)
    }
}
