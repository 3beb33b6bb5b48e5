import Synchronization

/// Why a bitmap could not be made, read or written.
/// - Thread: any (a value)
public enum BitmapError: Error, Equatable, CustomStringConvertible {
    /// A side was negative, or width × height × 4 does not fit in memory's address space.
    case invalidSize(width: Int, height: Int)
    /// The pixel array does not hold width × height pixels.
    case pixelCountMismatch(expected: Int, actual: Int)
    /// The scale is not a finite number greater than zero.
    case invalidScale(Double)
    /// Rows of pixels in memory cannot hold the size claimed: a row's stride is shorter than its
    /// pixels, or the bytes end before the last row's pixels do.
    case invalidRows(width: Int, height: Int, bytesPerRow: Int, byteCount: Int)
    /// SDL_image could not decode the data (the reason is SDL's).
    case decodeFailed(source: String, reason: String)
    /// The PNG could not be written (the reason is SDL's).
    case encodeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .invalidSize(w, h): return "invalid bitmap size \(w)×\(h)"
        case let .pixelCountMismatch(e, a): return "bitmap needs \(e) pixels, got \(a)"
        case let .invalidScale(s): return "invalid bitmap scale \(s)"
        case let .invalidRows(w, h, stride, count):
            return "\(count) bytes in rows of \(stride) cannot hold \(w)×\(h) pixels"
        case let .decodeFailed(source, reason): return "cannot decode \(source): \(reason)"
        case let .encodeFailed(path, reason): return "cannot write PNG \(path): \(reason)"
        }
    }
}

/// The process-wide count of bytes held by live bitmaps (for frame statistics).
private let liveBitmapBytes = Atomic<Int>(0)
/// Source of bitmap identities; 0 is never handed out.
private let nextBitmapIdentity = Atomic<UInt64>(1)

/// Identifies one bitmap's pixels. Copies of a `Bitmap` share it; two bitmaps made separately never do,
/// even with equal pixels. The compositor uploads a layer's contents again only when this changes.
/// - Thread: any
public struct BitmapIdentity: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public var description: String { "bitmap#\(rawValue)" }
}

/// An immutable image: ARGB8888 pixels (one `UInt32` per pixel, alpha in the high byte), rows top to
/// bottom, with a scale that maps points to pixels (`pointSize × scale = pixel size`).
///
/// The pixels are premultiplied unless the bitmap was prepared for a renderer that uploads straight
/// alpha (`prepared(forUpload:)`, `alphaLayout`); every reading accessor (`pixels`, `pixel(x:y:)`,
/// drawing it into a `BitmapContext`) still sees premultiplied values, converting if it must.
///
/// A `Bitmap` is a value: copying it copies a reference to the same pixels, and the copy keeps the same
/// `identity`. It may be made, passed and released on any thread.
/// - Thread: any
public struct Bitmap: Sendable, CustomStringConvertible {
    /// How colour channels relate to alpha in stored pixels.
    /// - Thread: any
    public enum AlphaLayout: Sendable, Hashable, CustomStringConvertible {
        /// Each channel is already multiplied by alpha (what drawing and blending work in).
        case premultiplied
        /// Channels are the colour itself, alpha apart (what a renderer without premultiplied blending
        /// wants, such as SDL's `software` renderer).
        case straight

        public var description: String { self == .premultiplied ? "premultiplied" : "straight" }
    }

    /// The pixels, shared by every copy of the value. Immutable after init, but for the opacity answer,
    /// which is computed at most once per value it can take and then only read.
    final class Storage: Sendable {
        /// The pixels in `alphaLayout`.
        let pixels: [UInt32]
        let alphaLayout: AlphaLayout
        let identity: BitmapIdentity
        /// Whether every pixel is opaque: `unknownOpacity` until someone asks (or the maker knew),
        /// then `opaque` or `translucent`. Two threads asking at once both scan and store the same
        /// answer, so the value never changes once set.
        let opacity: Atomic<UInt8>
        static let unknownOpacity: UInt8 = 0, opaque: UInt8 = 1, translucent: UInt8 = 2

        init(pixels: [UInt32], alphaLayout: AlphaLayout = .premultiplied, isOpaque: Bool? = nil) {
            self.pixels = pixels
            self.alphaLayout = alphaLayout
            self.identity = BitmapIdentity(rawValue: nextBitmapIdentity.add(1, ordering: .relaxed).oldValue)
            self.opacity = Atomic(isOpaque.map { $0 ? Storage.opaque : Storage.translucent } ?? Storage.unknownOpacity)
            liveBitmapBytes.add(pixels.count * 4, ordering: .relaxed)
        }
        deinit { liveBitmapBytes.subtract(pixels.count * 4, ordering: .relaxed) }

        /// True when the bitmap is known to be opaque (recorded when made or by an earlier scan);
        /// never scans.
        var isKnownOpaque: Bool { opacity.load(ordering: .acquiring) == Storage.opaque }

        /// True when every pixel's alpha is 255; scans once, on the first caller's thread.
        var isOpaque: Bool {
            switch opacity.load(ordering: .acquiring) {
            case Storage.opaque: return true
            case Storage.translucent: return false
            default:
                PixelPass.record()
                let answer = pixels.withUnsafeBufferPointer { PixelPass.allOpaque($0) }
                opacity.store(answer ? Storage.opaque : Storage.translucent, ordering: .releasing)
                return answer
            }
        }
    }

    let storage: Storage
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Pixels per point.
    public let scale: Double

    /// The largest side accepted, so that width × height × 4 stays far from overflow.
    public static let maximumSide = 1 << 15

    /// A bitmap from premultiplied ARGB8888 pixels, `width × height` of them, row by row.
    /// - Throws: `BitmapError` for a negative or oversized side, a wrong pixel count or a bad scale.
    public init(width: Int, height: Int, scale: Double = 1, premultipliedARGB pixels: [UInt32]) throws {
        try Bitmap.validate(width: width, height: height, scale: scale)
        guard pixels.count == width * height else {
            throw BitmapError.pixelCountMismatch(expected: width * height, actual: pixels.count)
        }
        self.storage = Storage(pixels: pixels)
        self.width = width
        self.height = height
        self.scale = scale
    }

    /// A bitmap from straight (not premultiplied) RGBA bytes, four per pixel, converted on the way in.
    public init(width: Int, height: Int, scale: Double = 1, straightRGBA bytes: [UInt8]) throws {
        try Bitmap.validate(width: width, height: height, scale: scale)
        guard bytes.count == width * height * 4 else {
            throw BitmapError.pixelCountMismatch(expected: width * height, actual: bytes.count / 4)
        }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for i in 0..<pixels.count {
            pixels[i] = Color(red: bytes[4 * i], green: bytes[4 * i + 1], blue: bytes[4 * i + 2],
                              alpha: bytes[4 * i + 3]).premultipliedARGB
        }
        try self.init(width: width, height: height, scale: scale, premultipliedARGB: pixels)
    }

    /// A bitmap of one colour (its opacity is known from the colour, without a scan).
    public init(width: Int, height: Int, scale: Double = 1, filledWith color: Color) throws {
        try Bitmap.validate(width: width, height: height, scale: scale)
        self.init(storage: Storage(pixels: [UInt32](repeating: color.premultipliedARGB, count: width * height),
                                   isOpaque: color.alpha == 255),
                  width: width, height: height, scale: scale)
    }

    /// How the pixels handed to `init(width:height:scale:format:bytesPerRow:rows:)` are laid out.
    /// - Thread: any
    public enum PixelFormat: Sendable, Hashable {
        /// Four bytes a pixel, read as one native-endian 32-bit word: alpha in the high byte, then red,
        /// green and blue, the colour not multiplied by alpha (SDL's `ARGB8888`).
        case straightARGB8888
        /// The same word, of which only alpha is read: how much of `tint` covers the pixel, as in a
        /// rendered glyph. The pixel is `tint` with its alpha multiplied by that coverage.
        case coverageARGB8888(tint: Color)
    }

    /// A bitmap copied from rows of pixels in memory, such as a surface another library drew into.
    /// Row `y` starts `y × bytesPerRow` bytes into `rows`; its first `width × 4` bytes are its pixels
    /// in `format`, and any bytes after them up to the next row are skipped. The bytes are read during
    /// the call only and need not be aligned; the pixels are premultiplied on the way in.
    /// - Throws: `BitmapError.invalidSize` or `.invalidScale` as `init(width:height:scale:premultipliedARGB:)`
    ///   does; `BitmapError.invalidRows` when `bytesPerRow` is shorter than `width × 4` or `rows` ends
    ///   before the last row's pixels do. Nothing is read unless the whole size fits.
    /// - Thread: any
    public init(width: Int, height: Int, scale: Double = 1, format: PixelFormat, bytesPerRow: Int,
                rows: UnsafeRawBufferPointer) throws {
        try Bitmap.validate(width: width, height: height, scale: scale)
        let pixelBytes = width * 4  // cannot overflow: width <= maximumSide
        let (lastRowStart, overflow) = bytesPerRow.multipliedReportingOverflow(by: max(0, height - 1))
        guard bytesPerRow >= pixelBytes, !overflow,
              width == 0 || height == 0 || lastRowStart <= rows.count - pixelBytes else {
            throw BitmapError.invalidRows(width: width, height: height, bytesPerRow: bytesPerRow,
                                          byteCount: rows.count)
        }
        // One premultiplied pixel for each of the 256 alphas of a coverage format, looked up per pixel.
        var shades: [UInt32] = []
        if case .coverageARGB8888(let tint) = format {
            shades = (0..<256).map { coverage in
                var shade = tint
                shade.alpha = UInt8((coverage * Int(tint.alpha) + 127) / 255)
                return coverage == 0 ? 0 : shade.premultipliedARGB
            }
        }
        let pixels = [UInt32](unsafeUninitializedCapacity: width * height) { out, count in
            // The checks above keep every read below inside `rows`.
            guard width > 0, height > 0, let base = rows.baseAddress else { count = 0; return }
            shades.withUnsafeBufferPointer { shades in
                for y in 0..<height {
                    let row = base + y * bytesPerRow, first = y * width
                    if shades.isEmpty {
                        for x in 0..<width {
                            out[first + x] = premultiply(straightARGB: row.loadUnaligned(fromByteOffset: 4 * x, as: UInt32.self))
                        }
                    } else {
                        for x in 0..<width {
                            out[first + x] = shades[Int(row.loadUnaligned(fromByteOffset: 4 * x, as: UInt32.self) >> 24)]
                        }
                    }
                }
            }
            count = width * height
        }
        try self.init(width: width, height: height, scale: scale, premultipliedARGB: pixels)
    }

    /// An empty (0×0) bitmap. It is valid everywhere and draws nothing.
    public static func empty(scale: Double = 1) -> Bitmap {
        // Cannot fail: 0×0 with a positive scale.
        try! Bitmap(width: 0, height: 0, scale: scale > 0 && scale.isFinite ? scale : 1, premultipliedARGB: [])
    }

    static func validate(width: Int, height: Int, scale: Double) throws {
        guard width >= 0, height >= 0, width <= maximumSide, height <= maximumSide else {
            throw BitmapError.invalidSize(width: width, height: height)
        }
        guard scale.isFinite, scale > 0 else { throw BitmapError.invalidScale(scale) }
    }

    /// Identity of the pixels: equal for copies of this value, distinct from every other bitmap.
    public var identity: BitmapIdentity { storage.identity }
    /// Size in points: the pixel size divided by the scale.
    public var pointSize: Size { Size(width: Double(width) / scale, height: Double(height) / scale) }
    /// True for a bitmap with no pixels.
    public var isEmpty: Bool { width == 0 || height == 0 }
    /// Bytes of pixel memory (4 per pixel).
    public var byteCount: Int { width * height * 4 }
    /// The layout the pixels are stored in: premultiplied, unless `prepared(forUpload: .straight)` made
    /// this bitmap from a translucent one.
    public var alphaLayout: AlphaLayout { storage.alphaLayout }

    /// True when every pixel's alpha is 255 (then both alpha layouts hold the same values, and a
    /// renderer may copy the pixels without blending).
    ///
    /// Known without looking at a pixel for a bitmap the display pipeline prepared on a worker
    /// (`prepared(forUpload:)`), one of a single colour, or a converted copy. Otherwise the first call
    /// scans the pixels (stopping at the first translucent run) on the calling thread and stores the
    /// answer for every copy of this value.
    public var isOpaque: Bool { storage.isOpaque }
    /// True when the bitmap is already known to be opaque (a worker prepared it, or it was scanned);
    /// false when it is translucent or not yet scanned. Never scans: for the UI thread.
    /// - Thread: any
    public var isKnownOpaque: Bool { storage.isKnownOpaque }

    /// The pixels, premultiplied ARGB8888, row by row. For a bitmap stored straight (see
    /// `alphaLayout`) each call converts all of them: read single pixels with `pixel(x:y:)`, or use
    /// `withPixels(in:_:)`.
    public var pixels: [UInt32] {
        if storage.alphaLayout == .premultiplied || storage.isOpaque { return storage.pixels }
        return PixelPass.converted(storage.pixels, to: .premultiplied)
    }

    /// Calls `body` with the pixels in `layout`, row by row: the stored pixels themselves when they are
    /// in that layout or opaque (no copy, no per-pixel work), else a converted copy made for the call.
    public func withPixels<Result>(in layout: AlphaLayout,
                                   _ body: (UnsafeBufferPointer<UInt32>) throws -> Result) rethrows -> Result {
        if storage.alphaLayout == layout || isOpaque {
            return try storage.pixels.withUnsafeBufferPointer(body)
        }
        return try PixelPass.converted(storage.pixels, to: layout).withUnsafeBufferPointer(body)
    }

    /// This bitmap ready for a renderer that uploads `layout` with a plain copy: its opacity is
    /// recorded (a scan, once), and a translucent bitmap stored in the other layout is converted into a
    /// new bitmap (with its own identity). An opaque bitmap, or one already in `layout`, is returned as
    /// it is. O(pixels): call it where the bitmap is made, on a worker, so the UI thread only copies.
    /// The display pipeline does this for every draw it commits.
    public func prepared(forUpload layout: AlphaLayout) -> Bitmap {
        if storage.isOpaque || storage.alphaLayout == layout { return self }
        let converted = Storage(pixels: PixelPass.converted(storage.pixels, to: layout), alphaLayout: layout,
                                isOpaque: false)
        return Bitmap(storage: converted, width: width, height: height, scale: scale)
    }

    /// The premultiplied ARGB8888 pixel at (x, y); out-of-range coordinates give transparent black.
    public func pixel(x: Int, y: Int) -> UInt32 {
        guard x >= 0, y >= 0, x < width, y < height else { return 0 }
        let stored = storage.pixels[y * width + x]
        return storage.alphaLayout == .premultiplied ? stored : premultiply(straightARGB: stored)
    }

    /// The same pixels seen at another scale (same identity and layout: the texture is shared).
    public func withScale(_ newScale: Double) throws -> Bitmap {
        try Bitmap.validate(width: width, height: height, scale: newScale)
        return Bitmap(storage: storage, width: width, height: height, scale: newScale)
    }

    init(storage: Storage, width: Int, height: Int, scale: Double) {
        self.storage = storage; self.width = width; self.height = height; self.scale = scale
    }

    /// Bytes held by every live bitmap in the process, summed (copies counted once).
    public static var liveByteCount: Int { liveBitmapBytes.load(ordering: .relaxed) }

    public var description: String {
        "Bitmap(\(width)×\(height) @\(scale)x, \(identity)\(storage.alphaLayout == .straight ? ", straight" : ""))"
    }
}

@inline(__always)
func premultiply(straightARGB p: UInt32) -> UInt32 {
    let a = p >> 24
    if a == 255 { return p }
    if a == 0 { return 0 }
    let r = (((p >> 16) & 0xFF) * a + 127) / 255
    let g = (((p >> 8) & 0xFF) * a + 127) / 255
    let b = ((p & 0xFF) * a + 127) / 255
    return (a << 24) | (r << 16) | (g << 8) | b
}

@inline(__always)
func unpremultiply(premultipliedARGB p: UInt32) -> UInt32 {
    let a = p >> 24
    if a == 255 { return p }
    if a == 0 { return 0 }
    let r = min(255, (((p >> 16) & 0xFF) * 255 + a / 2) / a)
    let g = min(255, (((p >> 8) & 0xFF) * 255 + a / 2) / a)
    let b = min(255, ((p & 0xFF) * 255 + a / 2) / a)
    return (a << 24) | (r << 16) | (g << 8) | b
}
