public import Compositor
import FoundationEssentials
import Glibc
import Dispatch
internal import CWebP

/// Decodes image sources into bitmaps at the size they will be shown, off the UI thread.
///
/// The header is read first: the format comes from the bytes (a PNG named `.jpg` still decodes), and the
/// claimed pixel size is checked against `Limits` before any pixel is decoded, so a decompression bomb
/// costs a few bytes of reading. Then each format decodes at the size shown:
/// - JPEG through libjpeg, reduced 2, 4 or 8 times by its scaled IDCT while decoding, EXIF orientation
///   applied;
/// - PNG through libpng, one row at a time folded into an area filter (memory follows the width),
///   `eXIf` orientation applied;
/// - WebP through libwebp, which crops and scales as it decodes; a bitstream without alpha is opaque;
/// - GIF (first frame) through giflib;
/// - BMP through the Compositor's SDL_image decode (`Bitmap(encoded:)`) whole, then shrunk, behind the
///   same checks and a working-memory check of its full size.
/// Every decode reserves its working memory among the decodes running at once (`concurrentDecodeBytes`).
///
/// Colours come out in sRGB, converted with LittleCMS from what the file says they are: a JPEG's ICC
/// profile (APP2 segments, RGB, grey or CMYK), a WebP's (`ICCP`), and a PNG's colour chunks in the
/// order its specification gives them, `cICP` (BT.709, Display P3, DCI-P3 and BT.2020 primaries with
/// the sRGB, BT.709, linear or power curves), then `iCCP`, then `sRGB`, then `gAMA` and `cHRM`. GIF
/// and BMP colours are shown as stored. Fallback: colour information that cannot be used (a profile
/// LittleCMS cannot read, one of the wrong colour space for the pixels, one over 4 MB or cut short, one
/// whose lookup tables do not fit in their tags or would take LittleCMS past its memory limit,
/// `cICP`'s HDR curves PQ and HLG, a malformed chunk) is ignored — a PNG's next colour chunk is used,
/// else the pixels are shown as stored, as sRGB — and said once per image and reason through
/// `TesseraLog.images`. Conversions are made once per profile and kept (`ColourConversions`).
///
/// The work follows the pixels the image declares, not what else the file holds: a file is read only
/// as far as its image needs (`EncodedReader`), metadata is skipped by its length without being read
/// or kept (but for orientation and colour), at most `maximumMetadataBlocks` blocks of it, and a
/// progressive JPEG's scans are counted before libjpeg decodes any, the file refused at its 401st.
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
        /// The largest encoded file or byte run accepted, in bytes (only what the image needs is read).
        public var maximumEncodedBytes: Int
        /// The most metadata blocks a file may carry before its image data: PNG chunks other than the
        /// header, palette and transparency; JPEG segments (application and comment segments in the
        /// whole file); GIF extensions before the first frame; WebP chunks before the image. Each is
        /// skipped at a small fixed cost, and one more than this refuses the file before its pixels
        /// are decoded.
        public var maximumMetadataBlocks: Int
        public init(maximumSide: Int = 16_384, maximumPixelCount: Int = 40_000_000,
                    workingMemoryBytes: Int = 48 << 20, maximumEncodedBytes: Int = 64 << 20,
                    maximumMetadataBlocks: Int = 1_000) {
            self.maximumSide = maximumSide
            self.maximumPixelCount = maximumPixelCount
            self.workingMemoryBytes = workingMemoryBytes
            self.maximumEncodedBytes = maximumEncodedBytes
            self.maximumMetadataBlocks = maximumMetadataBlocks
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

    /// Reads the header of `bytes`: the format, from the bytes, and the size the image claims (a
    /// GIF's canvas takes in its first frame's extent). Only the header is looked at, as far as it
    /// goes: a JPEG's segments are walked to its first scan, a GIF's blocks to its first frame.
    /// - Throws: `ImageError`: empty, an unknown format, a header cut short or refused.
    /// - Thread: any
    public static func header(of bytes: [UInt8], source: String) throws -> Header {
        try readLayout(EncodedReader(bytes: bytes, name: source), metadataLimit: Limits().maximumMetadataBlocks).header
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
    ///   unknown format, a header that lies or is cut short, a size over the limits, more metadata
    ///   blocks than the limits allow, a target of no pixels, or a failed decode. A path that is not a regular file (a directory, a named pipe, a
    ///   socket, a device) is refused as `notARegularFile`, naming what it is, before it is opened: a
    ///   named pipe never keeps the decoding thread waiting for a writer. A `.url` source is fetched
    ///   first through `NetworkImageLoader.shared`, this thread waiting for its bytes (an image node
    ///   fetches on the loader's threads instead); a fetch that fails throws `ImageError.network`.
    /// - Thread: any (display workers in practice; for a `.url` source, not the UI thread)
    public static func decode(_ source: ImageSource, for target: Target, limits: Limits = Limits(),
                              isCancelled: @Sendable () -> Bool = { false }) throws -> Bitmap? {
        try decode(source, for: target, limits: limits, notes: DecodeNotes(source: source.description), isCancelled: isCancelled)
    }

    /// `decode(_:for:limits:isCancelled:)`, keeping in `notes` what the decode did instead of what the
    /// file asked (colour information it could not use).
    static func decode(_ source: ImageSource, for target: Target, limits: Limits, notes: DecodeNotes,
                       isCancelled: @Sendable () -> Bool) throws -> Bitmap? {
        guard target.width > 0, target.height > 0 else {
            throw ImageError.decodeFailed(source.description, reason: "a target of \(target.width)×\(target.height) pixels")
        }
        let side = limits.maximumSide
        let pixels = (min(target.width, max(1, side)), min(target.height, max(1, side)))
        let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
        if case .bitmap(let bitmap) = source {
            return try prepareForDisplay(bitmap, crop: target.crop, mode: target.mode, target: pixels, scale: scale)
        }
        let (reader, layout) = try open(source, limits: limits, isCancelled: isCancelled)
        if isCancelled() { return nil }
        return try withoutActuallyEscaping(isCancelled) { isCancelled in
            try decode(reader, layout: layout, name: source.description, for: target, limits: limits, notes: notes, isCancelled: isCancelled)
        }
    }

    /// The reader for a decode and what its header walk found, checked against `limits`. A file is
    /// opened once, and only when it is a regular file; it is read only as far as the decoders ask.
    static func open(_ source: ImageSource, limits: Limits,
                     isCancelled: () -> Bool = { false }) throws -> (EncodedReader, Layout) {
        let reader: EncodedReader
        switch source {
        case .file(let path):
            // Only a regular file is opened: a directory or a named pipe is refused here, by its kind.
            reader = try EncodedReader(openingFile: path)
        case .encoded(let image):
            reader = EncodedReader(bytes: image.bytes, name: source.description)
        case .url(let url):
            reader = EncodedReader(bytes: try fetch(url, isCancelled: isCancelled), name: source.description)
        case .bitmap:
            Contract.violated("a bitmap source is shown as it is, never opened as encoded bytes")
        }
        try checkEncodedSize(reader.size, source: reader.name, limits: limits)
        let layout = try readLayout(reader, metadataLimit: limits.maximumMetadataBlocks)
        try checkSize(layout.header, source: reader.name, limits: limits)
        return (reader, layout)
    }

    private static func decode(_ reader: EncodedReader, layout: Layout, name: String, for target: Target,
                               limits: Limits, notes: DecodeNotes,
                               isCancelled: @escaping @Sendable () -> Bool) throws -> Bitmap? {
        let side = limits.maximumSide
        let pixels = (min(target.width, max(1, side)), min(target.height, max(1, side)))
        let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
        let header = layout.header
        let sized = SizedDecode(reader: reader, name: name, target: target, limits: limits,
                                isCancelled: isCancelled, notes: notes)
        switch header.format {
        case .jpeg: return try sized.decodeJPEG(layout: layout)
        case .png: return try sized.decodePNG(orientation: layout.orientation)
        case .webp: return try sized.decodeWebP()
        case .gif: return try sized.decodeGIF(layout: layout)
        case .bmp:
            // Decoded whole by SDL_image: the surface it makes and the converted copy.
            let working = ByteCount.product(header.width, header.height, 8)
            return try sized.withWorkingMemory(working, "this \(header.format.rawValue.uppercased())") { () -> Bitmap? in
                if isCancelled() { return nil }
                let bytes = try reader.prefix(layout.bmpEnd)
                let decoded: Bitmap
                do {
                    decoded = try Bitmap(encoded: bytes, sourceName: name)
                } catch {
                    throw ImageError.decodeFailed(name, reason: "\(error)")
                }
                if isCancelled() { return nil }
                return try prepareForDisplay(decoded, crop: target.crop, mode: target.mode, target: pixels, scale: scale)
            }
        }
    }

    /// The bytes of `url` from `NetworkImageLoader.shared`, waiting for them on this thread; an empty
    /// run when cancelled first (the caller checks `isCancelled` next).
    static func fetch(_ url: URL, isCancelled: () -> Bool) throws -> [UInt8] {
        do {
            return try NetworkImageLoader.shared.bytes(for: url, isCancelled: isCancelled) ?? []
        } catch {
            throw ImageError.network(url.absoluteString, error)
        }
    }

    /// Decodes encoded `bytes` named `name` (for errors) to show at `target`, as `decode(_:for:)`
    /// decodes a byte source, without digesting the bytes first (they are no source's identity).
    static func decode(encoded bytes: [UInt8], name: String, for target: Target, limits: Limits,
                       isCancelled: @escaping @Sendable () -> Bool) throws -> Bitmap? {
        guard target.width > 0, target.height > 0 else {
            throw ImageError.decodeFailed(name, reason: "a target of \(target.width)×\(target.height) pixels")
        }
        let reader = EncodedReader(bytes: bytes, name: name)
        try checkEncodedSize(reader.size, source: name, limits: limits)
        let layout = try readLayout(reader, metadataLimit: limits.maximumMetadataBlocks)
        try checkSize(layout.header, source: name, limits: limits)
        if isCancelled() { return nil }
        return try decode(reader, layout: layout, name: name, for: target, limits: limits, notes: DecodeNotes(source: name),
                          isCancelled: isCancelled)
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
    /// checks as `decode(_:for:)` (a `.url` source fetched first, as there). Checks `isCancelled`
    /// while fetching and between reading and decoding.
    /// - Returns: nil when cancelled.
    public static func decode(_ source: ImageSource, limits: Limits = Limits(),
                              isCancelled: @Sendable () -> Bool = { false }) throws -> Bitmap? {
        if case .bitmap(let bitmap) = source { return bitmap }
        let notes = DecodeNotes(source: source.description)
        let (reader, layout) = try open(source, limits: limits, isCancelled: isCancelled)
        if isCancelled() { return nil }
        // A square target as large as the longer side, fitted: the whole image, turned if EXIF says so.
        let side = max(layout.header.width, layout.header.height)
        let target = Target(width: side, height: side, mode: .aspectFit)
        return try withoutActuallyEscaping(isCancelled) { isCancelled in
            try decode(reader, layout: layout, name: source.description, for: target, limits: limits, notes: notes, isCancelled: isCancelled)
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
