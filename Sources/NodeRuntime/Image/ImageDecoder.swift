public import Compositor
import Foundation
internal import CWebP

/// Decodes image sources into bitmaps at the size they will be shown, off the UI thread.
///
/// The header is read first: the format comes from the bytes (a PNG named `.jpg` still decodes), and the
/// claimed pixel size is checked against `Limits` before any pixel is decoded, so a decompression bomb
/// costs a few bytes of reading. Then each format decodes at the size shown:
/// - JPEG through libjpeg, reduced 2, 4 or 8 times by its scaled IDCT while decoding, EXIF orientation
///   applied;
/// - PNG through libpng, one row at a time folded into an area filter (memory follows the width);
/// - WebP through libwebp, which crops and scales as it decodes;
/// - GIF (first frame) through giflib;
/// - BMP through the Compositor's SDL_image decode (`Bitmap(encoded:)`) whole, then shrunk, behind the
///   same checks and a working-memory check of its full size.
/// Every decode reserves its working memory among the decodes running at once (`concurrentDecodeBytes`).
/// - Thread: any (display workers in practice)
public enum ImageDecoder {
    /// Caps on what a header may claim.
    /// - Thread: any (a value)
    public struct Limits: Sendable, Hashable {
        /// The longest side a header may claim, in pixels.
        public var maximumSide: Int
        /// The most pixels a header may claim.
        public var maximumPixelCount: Int
        /// The most memory one decode may work in, in bytes: rows, filters and the codec's own buffers
        /// (a progressive JPEG's coefficients, an interlaced PNG, a lossless WebP, a whole-image decode).
        public var workingMemoryBytes: Int
        /// The largest encoded file read, in bytes.
        public var maximumEncodedBytes: Int
        public init(maximumSide: Int = 16_384, maximumPixelCount: Int = 40_000_000,
                    workingMemoryBytes: Int = 48 << 20, maximumEncodedBytes: Int = 64 << 20) {
            self.maximumSide = maximumSide
            self.maximumPixelCount = maximumPixelCount
            self.workingMemoryBytes = workingMemoryBytes
            self.maximumEncodedBytes = maximumEncodedBytes
        }
    }

    /// Working memory reserved by the decodes running now (see `concurrentDecodeBytes`).
    static let memory = DecodeMemory(capacity: 96 << 20)

    /// The most working memory all decodes running at once may reserve, in bytes (default 96 MB):
    /// a decode that would pass it waits for others to finish. One decode alone always runs.
    public static var concurrentDecodeBytes: Int {
        get { memory.capacity }
        set { memory.capacity = newValue }
    }

    /// Working memory reserved now and the most reserved at once since the process started.
    public static var decodeMemoryUsage: (inUse: Int, peak: Int) { memory.usage }

    /// Formats recognised from their first bytes.
    public enum Format: String, Sendable {
        case png, jpeg, gif, bmp, webp
    }

    /// The format and pixel size an encoded image claims, read from its header only.
    /// - Thread: any (a value)
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
            // Signature, then the IHDR chunk: length 13, "IHDR", width, height, bit depth, colour type.
            guard bytes.count >= 26 else { throw ImageError.truncated(source) }
            guard u32be(8) == 13, bytes[12..<16].elementsEqual("IHDR".utf8) else {
                throw ImageError.decodeFailed(source, reason: "the PNG does not start with a valid IHDR chunk")
            }
            let width = u32be(16), height = u32be(20)
            guard width <= Int(Int32.max), height <= Int(Int32.max) else {
                throw ImageError.decodeFailed(source, reason: "the PNG claims a size over 2³¹−1")
            }
            let depth = Int(bytes[24]), colour = Int(bytes[25])
            let allowed: [Int: Set<Int>] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
            guard allowed[colour]?.contains(depth) == true else {
                throw ImageError.decodeFailed(source, reason: "PNG colour type \(colour) with bit depth \(depth)")
            }
            return Header(format: .png, width: width, height: height)
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
            return try gifHeader(of: bytes, source: source)
        }
        if bytes.starts(with: Array("BM".utf8)) {
            return try bmpHeader(of: bytes, source: source)
        }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), bytes[8..<12].elementsEqual("WEBP".utf8) {
            var width: Int32 = 0, height: Int32 = 0
            guard bytes.withUnsafeBufferPointer({ WebPGetInfo($0.baseAddress, $0.count, &width, &height) }) != 0 else {
                throw bytes.count < 30 ? ImageError.truncated(source)
                    : ImageError.decodeFailed(source, reason: "the WebP header is not valid")
            }
            return Header(format: .webp, width: Int(width), height: Int(height))
        }
        throw ImageError.unsupportedFormat(source)
    }

    /// Walks a PNG's chunks by their lengths: every chunk must fit in the file, image data must be
    /// there, and the file must reach its end chunk. A PNG cut short is refused here, before decoding:
    /// SDL_image's reader can spin forever on some truncated files.
    static func checkPNGChunks(_ bytes: [UInt8], source: String) throws {
        try checkPNGChunks(length: bytes.count, source: source) { offset, count in
            Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    /// The same walk over `length` bytes read through `read(offset, count)`: only the chunk headers
    /// are read, so a file on disk is walked without loading it.
    static func checkPNGChunks(length: Int, source: String, read: (Int, Int) throws -> [UInt8]) throws {
        var i = 8
        var sawImageData = false
        while i + 8 <= length {
            let head = try read(i, 8)
            guard head.count == 8 else { throw ImageError.truncated(source) }
            let chunkLength = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            guard chunkLength <= Int(Int32.max) else {
                throw ImageError.decodeFailed(source, reason: "a PNG chunk of \(chunkLength) bytes")
            }
            let type = head[4..<8]
            let end = i + 12 + chunkLength
            guard end <= length else { throw ImageError.truncated(source) }
            if type.elementsEqual("IDAT".utf8) { sawImageData = true }
            if type.elementsEqual("IEND".utf8) {
                guard sawImageData else { throw ImageError.decodeFailed(source, reason: "a PNG with no image data") }
                return
            }
            i = end
        }
        throw ImageError.truncated(source)
    }

    /// A GIF's claimed size: the logical screen and every frame descriptor, each frame's extent
    /// (offset plus size) included, read by walking the blocks without decoding a pixel. A file cut
    /// short after its first complete frame is accepted (only what is there can be decoded); one cut
    /// before any frame is truncated.
    static func gifHeader(of bytes: [UInt8], source: String) throws -> Header {
        func u16le(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        guard bytes.count >= 13 else { throw ImageError.truncated(source) }
        var width = u16le(6), height = u16le(8)
        var i = 13
        if bytes[10] & 0x80 != 0 { i += 3 << (Int(bytes[10] & 0x07) + 1) }
        var frames = 0
        /// Skips a run of data sub-blocks; false when the bytes end first.
        func skipSubBlocks() -> Bool {
            while i < bytes.count {
                let size = Int(bytes[i])
                i += 1 + size
                if size == 0 { return true }
            }
            return false
        }
        walk: while i < bytes.count {
            switch bytes[i] {
            case 0x3B:
                break walk
            case 0x21:
                i += 2
                guard i <= bytes.count, skipSubBlocks() else { break walk }
            case 0x2C:
                guard i + 10 <= bytes.count else { break walk }
                let left = u16le(i + 1), top = u16le(i + 3), frameWidth = u16le(i + 5), frameHeight = u16le(i + 7)
                guard frameWidth > 0, frameHeight > 0 else {
                    throw ImageError.decodeFailed(source, reason: "a GIF frame of \(frameWidth)×\(frameHeight) pixels")
                }
                width = max(width, left + frameWidth)
                height = max(height, top + frameHeight)
                frames += 1
                let packed = bytes[i + 9]
                i += 10
                if packed & 0x80 != 0 { i += 3 << (Int(packed & 0x07) + 1) }
                // The LZW minimum code size is 2–8 bits (SDL_image's reader crashes on larger ones).
                if i < bytes.count, !(2...8).contains(bytes[i]) {
                    throw ImageError.decodeFailed(source, reason: "a GIF frame with an LZW code size of \(bytes[i]) bits")
                }
                i += 1
                guard i <= bytes.count, skipSubBlocks() else { break walk }
            default:
                throw ImageError.decodeFailed(source, reason: "an unknown GIF block 0x\(String(bytes[i], radix: 16))")
            }
        }
        guard frames > 0 else { throw ImageError.truncated(source) }
        return Header(format: .gif, width: width, height: height)
    }

    /// A BMP's claimed size, checked against the file's length: uncompressed pixel rows must all be
    /// there (a 154-byte file cannot hold 6000×6000 pixels), and the pixel data must start inside the file.
    static func bmpHeader(of bytes: [UInt8], source: String) throws -> Header {
        func u16le(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        func u32le(_ i: Int) -> Int { u16le(i) | u16le(i + 2) << 16 }
        func s32le(_ i: Int) -> Int { Int(Int32(bitPattern: UInt32(u32le(i)))) }
        guard bytes.count >= 26 else { throw ImageError.truncated(source) }
        let dataOffset = u32le(10), infoSize = u32le(14)
        let width: Int, height: Int, bitsPerPixel: Int, compression: Int
        if infoSize == 12 {
            (width, height) = (u16le(18), u16le(20))
            (bitsPerPixel, compression) = (u16le(24), 0)
        } else if infoSize >= 40 {
            guard bytes.count >= 34 else { throw ImageError.truncated(source) }
            (width, height) = (s32le(18), abs(s32le(22)))
            (bitsPerPixel, compression) = (u16le(28), u32le(30))
        } else {
            throw ImageError.decodeFailed(source, reason: "a BMP info header of \(infoSize) bytes")
        }
        guard width > 0, height > 0 else {
            throw ImageError.decodeFailed(source, reason: "a BMP of \(width)×\(height) pixels")
        }
        guard [1, 4, 8, 16, 24, 32].contains(bitsPerPixel) else {
            throw ImageError.decodeFailed(source, reason: "a BMP of \(bitsPerPixel) bits per pixel")
        }
        guard dataOffset >= 14 + infoSize, dataOffset < bytes.count else { throw ImageError.truncated(source) }
        if compression == 0 || compression == 3 || compression == 6 {
            // Rows padded to four bytes; every multiplication checked, whatever the claimed size.
            let (bits, o1) = width.multipliedReportingOverflow(by: bitsPerPixel)
            let stride = (bits + 31) / 32 * 4
            let (pixels, o2) = stride.multipliedReportingOverflow(by: height)
            let (needed, o3) = pixels.addingReportingOverflow(dataOffset)
            guard !o1, !o2, !o3, needed <= bytes.count else { throw ImageError.truncated(source) }
        }
        return Header(format: .bmp, width: width, height: height)
    }

    /// What an image is decoded for: the pixels it is shown at, how it fills them, and the scale of
    /// the bitmap made (pixels per point).
    /// - Thread: any (a value)
    public struct Target: Sendable, Hashable {
        /// Pixels shown across; at least 1 to be decodable.
        public var width: Int
        /// Pixels shown down; at least 1 to be decodable.
        public var height: Int
        /// How the image fills the target.
        public var mode: ContentMode
        /// The part of the image to show, in the image's pixels (nil: all of it).
        public var crop: Rect?
        /// The made bitmap's scale; a value that is not finite and positive counts as 1.
        public var scale: Double

        public init(width: Int, height: Int, mode: ContentMode, crop: Rect? = nil, scale: Double = 1) {
            self.width = width; self.height = height; self.mode = mode; self.crop = crop; self.scale = scale
        }
    }

    /// Decodes `source` to show it at `target`: the header is checked against `limits` first, then
    /// the image is decoded and kept at the size the target shows (never larger than the image).
    /// - Returns: the bitmap, or nil only when `isCancelled` became true.
    /// - Throws: `ImageError` for every file that cannot be shown: missing, unreadable, empty, an
    ///   unknown format, a header that lies or is cut short, a size over the limits, a target of no
    ///   pixels, or a failed decode. A path that is not a regular file (a directory, a named pipe, a
    ///   socket, a device) is refused as `notARegularFile`, naming what it is, before it is opened: a
    ///   named pipe never keeps the decoding thread waiting for a writer.
    /// - Thread: any (display workers in practice)
    public static func decode(_ source: ImageSource, for target: Target, limits: Limits = Limits(),
                              isCancelled: @Sendable () -> Bool = { false }) throws -> Bitmap? {
        guard target.width > 0, target.height > 0 else {
            throw ImageError.decodeFailed(source.description, reason: "a target of \(target.width)×\(target.height) pixels")
        }
        let side = limits.maximumSide
        let pixels = (min(target.width, max(1, side)), min(target.height, max(1, side)))
        let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
        if case .bitmap(let bitmap) = source {
            return try prepareForDisplay(bitmap, crop: target.crop, mode: target.mode, target: pixels, scale: scale)
        }
        let (input, header) = try openInput(source, limits: limits)
        if isCancelled() { return nil }
        return try withoutActuallyEscaping(isCancelled) { isCancelled in
            try decode(input, header: header, source: source, for: target, limits: limits, isCancelled: isCancelled)
        }
    }

    /// How much of a file is read to find its header; more only when the header lies further in.
    static let headerPrefixBytes = 1 << 20

    /// The input for a decode and its checked header. JPEG and PNG files stay on disk (the codec reads
    /// them as it goes); everything else is read whole, within `maximumEncodedBytes`.
    static func openInput(_ source: ImageSource, limits: Limits) throws -> (EncodedInput, Header) {
        let path: String
        switch source {
        case .file(let file):
            path = file
        case .encoded(let image):
            try checkEncodedSize(image.bytes.count, source: source.description, limits: limits)
            return (.bytes(image.bytes), try checkedHeader(of: image.bytes, source: source.description, limits: limits))
        case .bitmap:
            Contract.violated("a bitmap source is shown as it is, never opened as encoded bytes")
        }
        // Only a regular file is opened: a directory or a named pipe is refused here, by its kind.
        let handle = FileHandle(fileDescriptor: try RegularFile.openForReading(path), closeOnDealloc: true)
        defer { try? handle.close() }
        let size: Int
        do { size = Int(try handle.seekToEnd()) } catch { throw ImageError.unreadable(path, reason: "\(error)") }
        try checkEncodedSize(size, source: path, limits: limits)
        func read(_ offset: Int, _ count: Int) throws -> [UInt8] {
            do {
                try handle.seek(toOffset: UInt64(offset))
                return [UInt8](try handle.read(upToCount: count) ?? Data())
            } catch {
                throw ImageError.unreadable(path, reason: "\(error)")
            }
        }
        var prefix = try read(0, min(size, headerPrefixBytes))
        var header: Header
        do {
            header = try self.header(of: prefix, source: path)
        } catch ImageError.truncated(let name) where prefix.count < size {
            prefix = try read(0, size)
            guard prefix.count == size else { throw ImageError.truncated(name) }
            header = try self.header(of: prefix, source: path)
        }
        try checkSize(header, source: path, limits: limits)
        switch header.format {
        case .png:
            try checkPNGChunks(length: size, source: path, read: read)
            return (.file(path: path, size: size), header)
        case .jpeg:
            return (.file(path: path, size: size), header)
        case .gif, .bmp, .webp:
            let bytes = prefix.count == size ? prefix : try read(0, size)
            // Checked again over the whole file: a GIF's frames and a BMP's rows are measured against it.
            return (.bytes(bytes), try checkedHeader(of: bytes, source: path, limits: limits))
        }
    }

    private static func decode(_ input: EncodedInput, header: Header, source: ImageSource, for target: Target,
                               limits: Limits, isCancelled: @escaping @Sendable () -> Bool) throws -> Bitmap? {
        let side = limits.maximumSide
        let pixels = (min(target.width, max(1, side)), min(target.height, max(1, side)))
        let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
        let sized = SizedDecode(input: input, name: source.description, target: target, limits: limits,
                                isCancelled: isCancelled)
        switch header.format {
        case .jpeg: return try sized.decodeJPEG()
        case .png: return try sized.decodePNG()
        case .webp: return try sized.decodeWebP()
        case .gif: return try sized.decodeGIF(canvasWidth: header.width, canvasHeight: header.height)
        case .bmp:
            guard case .bytes(let bytes) = input else { Contract.violated("BMP is decoded from bytes") }
            // Decoded whole by SDL_image: the surface it makes and the converted copy.
            let working = ByteCount.product(header.width, header.height, 8)
            return try sized.withWorkingMemory(working, "this \(header.format.rawValue.uppercased())") { () -> Bitmap? in
                if isCancelled() { return nil }
                let decoded: Bitmap
                do {
                    decoded = try Bitmap(encoded: bytes, sourceName: source.description)
                } catch {
                    throw ImageError.decodeFailed(source.description, reason: "\(error)")
                }
                if isCancelled() { return nil }
                return try prepareForDisplay(decoded, crop: target.crop, mode: target.mode, target: pixels, scale: scale)
            }
        }
    }

    /// The header of `bytes`, checked against `limits` (and, for a PNG, its chunks walked to the end).
    static func checkedHeader(of bytes: [UInt8], source: String, limits: Limits) throws -> Header {
        let header = try header(of: bytes, source: source)
        try checkSize(header, source: source, limits: limits)
        // After the size check, so a bomb is named as one; before decoding, which a cut PNG can hang.
        if header.format == .png { try checkPNGChunks(bytes, source: source) }
        return header
    }

    static func checkSize(_ header: Header, source: String, limits: Limits) throws {
        guard header.width > 0, header.height > 0 else {
            throw ImageError.decodeFailed(source, reason: "zero-sized image")
        }
        let (pixelCount, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        guard header.width <= limits.maximumSide, header.height <= limits.maximumSide,
              !overflow, pixelCount <= limits.maximumPixelCount else {
            throw ImageError.tooLarge(source, width: header.width, height: header.height)
        }
    }

    /// Refuses an encoded file or byte run over `maximumEncodedBytes`.
    static func checkEncodedSize(_ count: Int, source: String, limits: Limits) throws {
        guard count <= limits.maximumEncodedBytes else {
            throw ImageError.overLimit(source, reason: "\(count) bytes is over the \(limits.maximumEncodedBytes)-byte file limit")
        }
    }

    /// Decodes `source` at its natural size (in its shown orientation), through the same decoders and
    /// checks as `decode(_:for:)`. Checks `isCancelled` between reading and decoding.
    /// - Returns: nil when cancelled.
    public static func decode(_ source: ImageSource, limits: Limits = Limits(),
                              isCancelled: @Sendable () -> Bool = { false }) throws -> Bitmap? {
        if case .bitmap(let bitmap) = source { return bitmap }
        let (input, header) = try openInput(source, limits: limits)
        if isCancelled() { return nil }
        // A square target as large as the longer side, fitted: the whole image, turned if EXIF says so.
        let side = max(header.width, header.height)
        let target = Target(width: side, height: side, mode: .aspectFit)
        return try withoutActuallyEscaping(isCancelled) { isCancelled in
            try decode(input, header: header, source: source, for: target, limits: limits, isCancelled: isCancelled)
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
