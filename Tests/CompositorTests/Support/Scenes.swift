import Foundation
@testable import Compositor
import TestSupport

/// Content bitmaps for the compositor's tests, made from pixels so every run is identical.
enum TestContent {
    /// A diagonal colour gradient with a white grid every 8 pixels: scaling and clipping show at once.
    static func gradient(width: Int, height: Int, scale: Double = 1) -> Bitmap {
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let grid = (Int(Double(x) / scale) % 8 == 0) || (Int(Double(y) / scale) % 8 == 0)
                let r = UInt32(40 + 200 * x / max(1, width - 1))
                let g = UInt32(60 + 150 * y / max(1, height - 1))
                let b = UInt32(200 - 150 * x / max(1, width - 1))
                pixels[y * width + x] = grid ? 0xFFF0_F0F0 : (0xFF00_0000 | (r << 16) | (g << 8) | b)
            }
        }
        return try! Bitmap(width: width, height: height, scale: scale, premultipliedARGB: pixels)
    }

    /// A solid bitmap.
    static func solid(_ color: Color, width: Int = 8, height: Int = 8, scale: Double = 1) -> Bitmap {
        try! Bitmap(width: width, height: height, scale: scale, filledWith: color)
    }

    /// A photo from Assets/photos, drawn by the drawing kit into `size` points at `scale`.
    static func photo(_ name: String, size: Size, scale: Double = 1, radii: CornerRadii = .zero) -> Bitmap {
        let path = GoldenImage.asset("photos/\(name)")
        let source = try! Bitmap(contentsOfFile: path)
        var context = try! BitmapContext(size: size, scale: scale)
        let bounds = context.bounds
        if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
        // Aspect fill: crop the source's centre to the target's aspect ratio.
        let targetAspect = size.width / size.height
        let sourceAspect = Double(source.width) / Double(source.height)
        var crop = Rect(x: 0, y: 0, width: Double(source.width), height: Double(source.height))
        if sourceAspect > targetAspect {
            let w = Double(source.height) * targetAspect
            crop = Rect(x: (Double(source.width) - w) / 2, y: 0, width: w, height: Double(source.height))
        } else {
            let h = Double(source.width) / targetAspect
            crop = Rect(x: 0, y: (Double(source.height) - h) / 2, width: Double(source.width), height: h)
        }
        context.draw(source, in: bounds, from: crop)
        return context.makeBitmap()
    }
}
