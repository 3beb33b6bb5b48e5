public import Compositor
import Foundation

/// Decodes image sources into bitmaps at the size they will be shown, off the UI thread.
///
/// The header is read first: the format comes from the bytes (a PNG named `.jpg` still decodes), and the
/// claimed pixel size is checked against `Limits` before any pixel is decoded, so a decompression bomb
/// costs a few bytes of reading. The full image is then decoded by SDL_image (premultiplied ARGB8888)
/// and shrunk at once with an area filter to the target pixel size: a 1411×1411 photo shown at 52×52
/// points at scale 1 leaves a 52×52 bitmap behind.
/// - Thread: any (display workers in practice)
public enum ImageDecoder {
    /// Caps on what a header may claim.
    public struct Limits: Sendable, Hashable {
        public var maximumSide: Int
        public var maximumPixelCount: Int
        public init(maximumSide: Int = 16_384, maximumPixelCount: Int = 40_000_000) {
            self.maximumSide = maximumSide
            self.maximumPixelCount = maximumPixelCount
        }
    }

    /// Formats recognised from their first bytes.
    public enum Format: String, Sendable {
        case png, jpeg, gif, bmp
    }

    /// The format and pixel size an encoded image claims, read from its header only.
    public struct Header: Sendable, Equatable {
        public var format: Format
        public var width: Int
        public var height: Int
    }

    /// Reads the header of `bytes`.
    public static func header(of bytes: [UInt8], source: String) throws -> Header {
        guard !bytes.isEmpty else { throw ImageError.empty(source) }
        func u16be(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        func u32be(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        func u16le(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        func s32le(_ i: Int) -> Int { Int(Int32(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)) }

        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            // Signature, then the IHDR chunk: length, "IHDR", width, height.
            guard bytes.count >= 24 else { throw ImageError.truncated(source) }
            return Header(format: .png, width: u32be(16), height: u32be(20))
        }
        if bytes.starts(with: [0xFF, 0xD8]) {
            // Walk the markers to the first start-of-frame.
            var i = 2
            while i + 3 < bytes.count {
                guard bytes[i] == 0xFF else { i += 1; continue }
                let marker = bytes[i + 1]
                if marker == 0xFF { i += 1; continue }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
                let length = u16be(i + 2)
                let isFrame = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
                if isFrame {
                    guard i + 8 < bytes.count else { throw ImageError.truncated(source) }
                    return Header(format: .jpeg, width: u16be(i + 7), height: u16be(i + 5))
                }
                guard length >= 2 else { throw ImageError.decodeFailed(source, reason: "bad JPEG marker length") }
                i += 2 + length
            }
            throw ImageError.truncated(source)
        }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            guard bytes.count >= 10 else { throw ImageError.truncated(source) }
            return Header(format: .gif, width: u16le(6), height: u16le(8))
        }
        if bytes.starts(with: Array("BM".utf8)) {
            guard bytes.count >= 26 else { throw ImageError.truncated(source) }
            return Header(format: .bmp, width: abs(s32le(18)), height: abs(s32le(22)))
        }
        throw ImageError.unsupportedFormat(source)
    }

    /// The encoded bytes of a file or data source (nil for a bitmap source).
    static func bytes(of source: ImageSource) throws -> [UInt8]? {
        switch source {
        case .bitmap: return nil
        case .encoded(let image): return image.bytes
        case .file(let path):
            guard FileManager.default.fileExists(atPath: path) else { throw ImageError.missingFile(path) }
            do {
                return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw ImageError.unreadable(path, reason: "\(error)")
            }
        }
    }

    /// Decodes `source` at its natural size. Checks `isCancelled` between reading and decoding.
    /// - Returns: nil when cancelled.
    public static func decode(_ source: ImageSource, limits: Limits = Limits(),
                              isCancelled: @Sendable () -> Bool = { false }) throws -> Bitmap? {
        if case .bitmap(let bitmap) = source { return bitmap }
        guard let bytes = try bytes(of: source) else { return nil }
        let header = try header(of: bytes, source: source.description)
        guard header.width > 0, header.height > 0 else {
            throw ImageError.decodeFailed(source.description, reason: "zero-sized image")
        }
        guard header.width <= limits.maximumSide, header.height <= limits.maximumSide,
              header.width * header.height <= limits.maximumPixelCount else {
            throw ImageError.tooLarge(source.description, width: header.width, height: header.height)
        }
        if isCancelled() { return nil }
        do {
            return try Bitmap(encoded: bytes, sourceName: source.description)
        } catch {
            throw ImageError.decodeFailed(source.description, reason: "\(error)")
        }
    }

    /// The pixel size at which `imageSize` (after cropping) is kept to be shown in `target` pixels with
    /// `mode`: never larger than the image itself, and exactly as large as the node will show it.
    public static func displayPixelSize(of imageSize: (width: Int, height: Int),
                                        for mode: ContentMode,
                                        in target: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let w = Double(imageSize.width), h = Double(imageSize.height)
        let tw = Double(target.width), th = Double(target.height)
        guard w > 0, h > 0, tw > 0, th > 0 else { return imageSize }
        let factor: Double
        switch mode {
        case .scaleToFill:
            return (min(imageSize.width, target.width), min(imageSize.height, target.height))
        case .aspectFit: factor = min(tw / w, th / h)
        case .aspectFill: factor = max(tw / w, th / h)
        case .center: factor = 1
        }
        let f = min(1, factor)
        return (max(1, Int((w * f).rounded())), max(1, Int((h * f).rounded())))
    }

    /// Crops `bitmap` to `crop` (in the bitmap's pixels; nil for all of it) and shrinks the result with an
    /// area filter to what `mode` shows in `target` pixels. Returns the bitmap itself when nothing changes.
    public static func prepareForDisplay(_ bitmap: Bitmap, crop: Rect?, mode: ContentMode,
                                         target: (width: Int, height: Int), scale: Double) throws -> Bitmap {
        let full = Rect(x: 0, y: 0, width: Double(bitmap.width), height: Double(bitmap.height))
        let region = crop.map { $0.sanitized.intersection(full) }.flatMap { $0.isEmpty ? nil : $0 } ?? full
        let regionSize = (Int(region.width.rounded()), Int(region.height.rounded()))
        let size = displayPixelSize(of: regionSize, for: mode, in: target)
        if region == full && size.width == bitmap.width && size.height == bitmap.height {
            return try bitmap.withScale(scale)
        }
        var context = try BitmapContext(pixelWidth: size.width, pixelHeight: size.height, scale: scale)
        context.draw(bitmap, in: context.bounds, from: region)
        return context.makeBitmap()
    }
}
