internal import CSDL
import Synchronization

/// Why a bitmap could not be made, read or written.
public enum BitmapError: Error, Equatable, CustomStringConvertible {
    /// A side was negative, or width × height × 4 does not fit in memory's address space.
    case invalidSize(width: Int, height: Int)
    /// The pixel array does not hold width × height pixels.
    case pixelCountMismatch(expected: Int, actual: Int)
    /// The scale is not a finite number greater than zero.
    case invalidScale(Double)
    /// SDL_image could not decode the data (the reason is SDL's).
    case decodeFailed(source: String, reason: String)
    /// The PNG could not be written (the reason is SDL's).
    case encodeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .invalidSize(w, h): return "invalid bitmap size \(w)×\(h)"
        case let .pixelCountMismatch(e, a): return "bitmap needs \(e) pixels, got \(a)"
        case let .invalidScale(s): return "invalid bitmap scale \(s)"
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

// MARK: - SDL surfaces, decoding and PNG

extension Bitmap {
    /// A bitmap from an SDL surface of any pixel format, converted to premultiplied ARGB8888.
    /// The surface is only read; the caller keeps ownership.
    init(surface: UnsafeMutablePointer<SDL_Surface>, scale: Double = 1) throws {
        let width = Int(surface.pointee.w), height = Int(surface.pointee.h)
        try Bitmap.validate(width: width, height: height, scale: scale)
        guard let converted = SDL_ConvertSurfaceFormat(surface, SDL_PIXELFORMAT_ARGB8888.rawValue, 0) else {
            throw BitmapError.decodeFailed(source: "SDL surface", reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(converted) }
        // Locking is a no-op for a surface that is not RLE-encoded, and required for one that is.
        SDL_LockSurface(converted)
        defer { SDL_UnlockSurface(converted) }
        var pixels = [UInt32](repeating: 0, count: width * height)
        if let base = converted.pointee.pixels {
            let pitch = Int(converted.pointee.pitch)
            pixels.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    let row = base.advanced(by: y * pitch).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<width { out[y * width + x] = premultiply(straightARGB: row[x]) }
                }
            }
        }
        try self.init(width: width, height: height, scale: scale, premultipliedARGB: pixels)
    }

    /// A bitmap from an SDL surface passed as an opaque pointer (`SDL_Surface *`), for sibling modules
    /// that use SDL_ttf or SDL_image without exposing SDL types. The caller keeps ownership.
    package init(sdlSurface: UnsafeMutableRawPointer, scale: Double = 1) throws {
        try self.init(surface: sdlSurface.assumingMemoryBound(to: SDL_Surface.self), scale: scale)
    }

    /// Decodes PNG, JPEG or any format SDL_image reads, from bytes in memory.
    /// - Throws: `BitmapError.decodeFailed` with SDL_image's reason; never traps on bad data.
    public init(encoded data: [UInt8], scale: Double = 1, sourceName: String = "image data") throws {
        guard !data.isEmpty else { throw BitmapError.decodeFailed(source: sourceName, reason: "no bytes") }
        let surface: UnsafeMutablePointer<SDL_Surface>? = data.withUnsafeBytes { raw in
            guard let stream = SDL_RWFromConstMem(raw.baseAddress, Int32(clamping: raw.count)) else { return nil }
            return IMG_Load_RW(stream, 1)
        }
        guard let surface else {
            throw BitmapError.decodeFailed(source: sourceName, reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(surface) }
        try self.init(surface: surface, scale: scale)
    }

    /// Decodes an image file (PNG, JPEG, …).
    /// - Throws: `BitmapError.decodeFailed` naming the path when it is missing or unreadable.
    public init(contentsOfFile path: String, scale: Double = 1) throws {
        guard let surface = IMG_Load(path) else {
            throw BitmapError.decodeFailed(source: path, reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(surface) }
        try self.init(surface: surface, scale: scale)
    }

    /// Writes the bitmap as a PNG with straight alpha. An empty bitmap cannot be written.
    public func writePNG(to path: String) throws {
        try write(to: path) { IMG_SavePNG($0, path) }
    }

    /// Writes the bitmap as a baseline JPEG of `quality` (1–100); alpha is dropped. For tests and
    /// benchmarks that need JPEG files of a known picture.
    public func writeJPEG(to path: String, quality: Int = 90) throws {
        try write(to: path) { IMG_SaveJPG($0, path, Int32(min(100, max(1, quality)))) }
    }

    private func write(to path: String, _ save: (UnsafeMutablePointer<SDL_Surface>) -> Int32) throws {
        guard !isEmpty else { throw BitmapError.encodeFailed(path: path, reason: "empty bitmap") }
        var straight = withPixels(in: .straight) { Array($0) }
        let status: Int32 = straight.withUnsafeMutableBytes { raw in
            guard let surface = SDL_CreateRGBSurfaceWithFormatFrom(
                raw.baseAddress, Int32(width), Int32(height), 32, Int32(width * 4),
                SDL_PIXELFORMAT_ARGB8888.rawValue)
            else { return -1 }
            defer { SDL_FreeSurface(surface) }
            return save(surface)
        }
        guard status == 0 else {
            throw BitmapError.encodeFailed(path: path, reason: String(cString: SDL_GetError()))
        }
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
