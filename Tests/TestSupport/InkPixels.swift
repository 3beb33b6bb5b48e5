public import Compositor

/// Counts the pixels of a picture that carry ink: dark marks (text, outlines) on a light ground.
/// - Thread: any
public enum InkPixels {
    /// The pixels of `bitmap` inside `rect` (in points; the whole picture when nil) whose luminance
    /// (Rec. 601 weights, 0–255) is below `threshold`.
    public static func count(in bitmap: Bitmap, rect: Rect? = nil, threshold: Int = 160) -> Int {
        let scale = bitmap.scale
        let area = rect ?? Rect(x: 0, y: 0, width: Double(bitmap.width) / scale, height: Double(bitmap.height) / scale)
        let minX = max(0, Int((area.minX * scale).rounded())), maxX = min(bitmap.width, Int((area.maxX * scale).rounded()))
        let minY = max(0, Int((area.minY * scale).rounded())), maxY = min(bitmap.height, Int((area.maxY * scale).rounded()))
        guard minX < maxX, minY < maxY else { return 0 }
        var count = 0
        for y in minY..<maxY {
            for x in minX..<maxX {
                let pixel = bitmap.pixel(x: x, y: y)
                let red = Int((pixel >> 16) & 0xFF), green = Int((pixel >> 8) & 0xFF), blue = Int(pixel & 0xFF)
                if (red * 299 + green * 587 + blue * 114) / 1000 < threshold { count += 1 }
            }
        }
        return count
    }
}
