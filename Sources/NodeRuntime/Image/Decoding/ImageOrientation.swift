import Compositor

/// How the stored pixels are turned to be shown, as EXIF's Orientation tag says (values 1–8).
/// - Thread: any (a value)
public enum ImageOrientation: Int, Sendable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether the shown image is the stored one turned a quarter (width and height swap).
    var swapsSides: Bool { rawValue >= 5 }

    /// The stored-image point under the shown point (x, y), for a stored image of `width` × `height`.
    /// Continuous: (0, 0) is a corner, not a pixel centre.
    func storedPoint(x: Double, y: Double, width: Double, height: Double) -> (x: Double, y: Double) {
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (width - x, y)
        case .down: return (width - x, height - y)
        case .downMirrored: return (x, height - y)
        case .leftMirrored: return (y, x)
        case .right: return (y, height - x)
        case .rightMirrored: return (width - y, height - x)
        case .left: return (width - y, x)
        }
    }

    /// The stored-image rectangle under a shown rectangle.
    func storedRect(_ rect: Rect, width: Int, height: Int) -> Rect {
        let w = Double(width), h = Double(height)
        let a = storedPoint(x: rect.minX, y: rect.minY, width: w, height: h)
        let b = storedPoint(x: rect.maxX, y: rect.maxY, width: w, height: h)
        return Rect(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x), height: abs(a.y - b.y))
    }

    /// Turns `pixels` (stored orientation, `width` × `height`) into the shown orientation.
    func apply(_ pixels: [UInt32], width: Int, height: Int) -> (pixels: [UInt32], width: Int, height: Int) {
        guard self != .up else { return (pixels, width, height) }
        let (outWidth, outHeight) = swapsSides ? (height, width) : (width, height)
        var out = [UInt32](repeating: 0, count: pixels.count)
        let w = Double(width), h = Double(height)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                // Pixel centres map to pixel centres.
                let p = storedPoint(x: Double(x) + 0.5, y: Double(y) + 0.5, width: w, height: h)
                out[y * outWidth + x] = pixels[Int(p.y) * width + Int(p.x)]
            }
        }
        return (out, outWidth, outHeight)
    }

    /// Reads the Orientation tag from an EXIF block (the APP1 payload, starting "Exif\0\0"); `.up`
    /// when it is absent, out of range or the block is malformed.
    static func fromEXIF(_ exif: UnsafeBufferPointer<UInt8>) -> ImageOrientation {
        guard exif.count >= 14, exif.starts(with: exifPrefix) else { return .up }
        return fromTIFF(UnsafeBufferPointer(rebasing: exif[6...]))
    }

    /// Reads the Orientation tag from a PNG's `eXIf` chunk, which holds the EXIF data from its TIFF
    /// header on; a chunk that starts with JPEG's "Exif\0\0" as well (some writers copy it) is read
    /// too. `.up` when the tag is absent, out of range or the chunk is malformed.
    static func fromPNGEXIF(_ chunk: UnsafeBufferPointer<UInt8>) -> ImageOrientation {
        chunk.starts(with: exifPrefix) ? fromEXIF(chunk) : fromTIFF(chunk)
    }

    private static let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    /// The Orientation tag of the first image directory of the TIFF structure `tiff` (from its byte
    /// order mark on); `.up` when it is absent, out of range or the structure is malformed.
    static func fromTIFF(_ tiff: UnsafeBufferPointer<UInt8>) -> ImageOrientation {
        guard tiff.count >= 8 else { return .up }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return .up
        }
        func u16(_ i: Int) -> Int? {
            guard i >= 0, i + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[i]) | Int(tiff[i + 1]) << 8 : Int(tiff[i]) << 8 | Int(tiff[i + 1])
        }
        func u32(_ i: Int) -> Int? {
            guard let a = u16(i), let b = u16(i + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return .up }
        for entry in 0..<min(count, 512) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return .up }
            if tag == 0x0112 {
                guard u16(at + 2) == 3, let value = u16(at + 8) else { return .up }
                return ImageOrientation(rawValue: value) ?? .up
            }
        }
        return .up
    }
}

/// What one decode makes: the part of the stored image it reads and the bitmap size it fills, worked
/// out from the target once the stored size and orientation are known.
struct DecodePlan {
    let storedWidth: Int
    let storedHeight: Int
    let orientation: ImageOrientation
    /// The stored pixels to read (fractional edges allowed).
    let storedRegion: Rect
    /// The size made in the stored orientation (before `orientation` is applied).
    let storedOutput: (width: Int, height: Int)
    /// The size shown.
    let shownOutput: (width: Int, height: Int)

    init(storedWidth: Int, storedHeight: Int, orientation: ImageOrientation,
         target: ImageDecoder.Target, maximumSide: Int) {
        self.storedWidth = storedWidth
        self.storedHeight = storedHeight
        self.orientation = orientation
        let (shownWidth, shownHeight) = orientation.swapsSides ? (storedHeight, storedWidth) : (storedWidth, storedHeight)
        let full = Rect(x: 0, y: 0, width: Double(shownWidth), height: Double(shownHeight))
        let region = target.crop.map { $0.sanitized.intersection(full) }.flatMap { $0.isEmpty ? nil : $0 } ?? full
        let regionSize = (max(1, Int(region.width.rounded())), max(1, Int(region.height.rounded())))
        let side = max(1, maximumSide)
        let size = ImageDecoder.displayPixelSize(of: regionSize, for: target.mode,
                                                 in: (min(target.width, side), min(target.height, side)))
        shownOutput = size
        storedOutput = orientation.swapsSides ? (size.height, size.width) : size
        storedRegion = orientation.storedRect(region, width: storedWidth, height: storedHeight)
    }

    /// The largest of `denominators` (each a power of two) at which the stored region, decoded at
    /// 1/d of its size, still has `oversampling` times the output's pixels on each side. Reducing to
    /// exactly the output size leaves the area filter nothing to average, and a picture of fine
    /// texture comes out blocky; twice the output keeps it as sharp as a full decode shrunk.
    func largestReduction(among denominators: [Int], oversampling: Double = 2) -> Int {
        denominators.sorted(by: >).first { d in
            storedRegion.width / Double(d) >= oversampling * Double(storedOutput.width)
                && storedRegion.height / Double(d) >= oversampling * Double(storedOutput.height)
        } ?? 1
    }
}
