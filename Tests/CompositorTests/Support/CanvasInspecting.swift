@testable import Compositor

/// Shorthands for tests that make small drawing-kit canvases and read them pixel by pixel.
protocol CanvasInspecting {}

extension CanvasInspecting {
    func context(_ w: Int, _ h: Int, scale: Double = 1) throws -> BitmapContext {
        try BitmapContext(pixelWidth: w, pixelHeight: h, scale: scale)
    }

    func alpha(_ c: BitmapContext, _ x: Int, _ y: Int) -> Int { Int(c.pixel(x: x, y: y) >> 24) }

    /// Alpha, red, green and blue of a pixel.
    func channels(_ p: UInt32) -> [Int] {
        [Int(p >> 24), Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF)]
    }

    func allPixels(_ c: BitmapContext) -> [UInt32] { c.makeBitmap().pixels }

    /// An opaque grey of level `v`.
    func grey(_ v: UInt32) -> UInt32 { 0xFF00_0000 | (v << 16) | (v << 8) | v }
}
