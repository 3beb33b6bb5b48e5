import Compositor
import Foundation

extension ImageDecoder {
    /// How much of a file is read first for its natural size; more only when the header lies further
    /// in (a JPEG with a large embedded thumbnail), and a GIF or BMP cut there is read whole.
    static let naturalSizePrefixBytes = 64 << 10

    /// The pixel size `source` shows at when decoded at its natural size (`decode(_:limits:)`), read
    /// from its header alone: the format's stored size, turned by a JPEG's EXIF orientation, the
    /// canvas the frames of a GIF reach. A file is read only as far as its header (the first 64 KB,
    /// rarely more), never decoded; a bitmap source answers with its own size.
    ///
    /// The size limits of `Limits` are not applied (the size is what the header says, not a promise
    /// that it decodes); the file must be within `maximumEncodedBytes` and a regular file.
    /// - Throws: `ImageError` as `decode` does for a source it cannot read: missing, not a regular
    ///   file, empty, an unknown format, a header cut short or refused, a zero-sized image.
    /// - Thread: any (it reads the file: a display worker or a measuring thread in practice)
    public static func naturalPixelSize(of source: ImageSource,
                                        limits: Limits = Limits()) throws -> (width: Int, height: Int) {
        let bytes: [UInt8]
        let name = source.description
        switch source {
        case .bitmap(let bitmap):
            return (bitmap.width, bitmap.height)
        case .encoded(let image):
            try checkEncodedSize(image.bytes.count, source: name, limits: limits)
            bytes = image.bytes
        case .file(let path):
            bytes = try naturalSizePrefix(ofFile: path, limits: limits)
        }
        let header = try self.header(of: bytes, source: name)
        guard header.width > 0, header.height > 0 else {
            throw ImageError.decodeFailed(name, reason: "zero-sized image")
        }
        let orientation = header.format == .jpeg ? jpegOrientation(bytes) : .up
        return orientation.swapsSides ? (header.height, header.width) : (header.width, header.height)
    }

    /// The first bytes of the file at `path`, as many as its header needs: the prefix, else the first
    /// megabyte, else the whole file (within `maximumEncodedBytes`).
    private static func naturalSizePrefix(ofFile path: String, limits: Limits) throws -> [UInt8] {
        let handle = FileHandle(fileDescriptor: try RegularFile.openForReading(path), closeOnDealloc: true)
        defer { try? handle.close() }
        func read(_ count: Int) throws -> [UInt8] {
            do {
                try handle.seek(toOffset: 0)
                return [UInt8](try handle.read(upToCount: count) ?? Data())
            } catch {
                throw ImageError.unreadable(path, reason: "\(error)")
            }
        }
        let size: Int
        do { size = Int(try handle.seekToEnd()) } catch { throw ImageError.unreadable(path, reason: "\(error)") }
        try checkEncodedSize(size, source: path, limits: limits)
        for count in [naturalSizePrefixBytes, headerPrefixBytes, size] {
            let prefix = try read(min(size, count))
            do {
                _ = try header(of: prefix, source: path)
                return prefix
            } catch ImageError.truncated(_) where prefix.count < size {
                continue
            }
        }
        return try read(size)
    }

    /// A JPEG's EXIF orientation, from the APP1 segments before its first frame header; `.up` when
    /// there is none or the markers are cut short.
    static func jpegOrientation(_ bytes: [UInt8]) -> ImageOrientation {
        var i = 2
        while i + 3 < bytes.count {
            guard bytes[i] == 0xFF else { i += 1; continue }
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            // A frame header or the scan: the metadata segments are behind.
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC { return .up }
            if marker == 0xDA { return .up }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2 else { return .up }
            let payloadStart = i + 4, payloadEnd = min(bytes.count, i + 2 + length)
            if marker == 0xE1, payloadStart < payloadEnd {
                let orientation = bytes[payloadStart..<payloadEnd].withUnsafeBufferPointer { ImageOrientation.fromEXIF($0) }
                if orientation != .up { return orientation }
            }
            i += 2 + length
        }
        return .up
    }
}

/// Natural pixel sizes read from image headers, by source, so an image node measured again (or a
/// hundred nodes showing one avatar) reads the header once. Only sizes that were read are kept: a
/// source that failed is tried again by the next node that shows it (the file may have appeared).
/// - Thread: any
final class ImageHeaderCache: Sendable {
    /// The sizes by source identity (which holds no encoded bytes or bitmap alive), least recently
    /// used first, at most `countLimit`. (guarded by its lock)
    private let sizes: Locked<LRUCache<ImageSource.Identity, PixelSize>>

    struct PixelSize: Sendable, Equatable {
        var width: Int
        var height: Int
    }

    /// The cache image nodes share.
    static let shared = ImageHeaderCache(countLimit: 2_048)

    init(countLimit: Int) {
        sizes = Locked(LRUCache(countLimit: max(1, countLimit)))
    }

    /// The size cached for `source`, without reading anything.
    func cachedSize(of source: ImageSource) -> PixelSize? {
        let identity = source.identity
        return sizes.withLock { $0.value(for: identity) }
    }

    /// The size of `source`, from the cache or read from its header (on the calling thread, outside
    /// the lock) and kept.
    func size(of source: ImageSource, limits: ImageDecoder.Limits) throws -> PixelSize {
        if let cached = cachedSize(of: source) { return cached }
        let read = try ImageDecoder.naturalPixelSize(of: source, limits: limits)
        let size = PixelSize(width: read.width, height: read.height)
        let identity = source.identity
        let evicted = sizes.withLock { $0.insert(size, for: identity, cost: 1) }
        _ = evicted  // released here, after unlocking
        return size
    }
}
