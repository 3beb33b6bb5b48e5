import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension ImageDecoder {
    /// The pixel size `source` shows at when decoded at its natural size (`decode(_:limits:)`), read
    /// from its header alone: the format's stored size, turned by a JPEG's EXIF orientation, the
    /// canvas a GIF's first frame reaches. A file is read only as far as its header (a few small
    /// reads: a JPEG's segments and a GIF's extensions are skipped by their lengths), never decoded; a
    /// bitmap source answers with its own size.
    ///
    /// The size limits of `Limits` are not applied (the size is what the header says, not a promise
    /// that it decodes); the file must be within `maximumEncodedBytes`, carry no more metadata blocks
    /// than `maximumMetadataBlocks` before its image, and be a regular file.
    /// - Throws: `ImageError` as `decode` does for a source it cannot read: missing, not a regular
    ///   file, empty, an unknown format, a header cut short or refused, a zero-sized image.
    /// A `.url` source is fetched whole through `NetworkImageLoader.shared`, this thread waiting.
    /// - Thread: any (it reads the file: a display worker or a measuring thread in practice; for a
    ///   `.url` source, not the UI thread)
    public static func naturalPixelSize(of source: ImageSource,
                                        limits: Limits = Limits()) throws -> (width: Int, height: Int) {
        let reader: EncodedReader
        switch source {
        case .bitmap(let bitmap):
            return (bitmap.width, bitmap.height)
        case .encoded(let image):
            reader = EncodedReader(bytes: image.bytes, name: source.description)
        case .file(let path):
            // The same door as decoding: only a regular file is opened.
            reader = try EncodedReader(openingFile: path)
        case .url(let url):
            reader = EncodedReader(bytes: try fetch(url, isCancelled: { false }), name: source.description)
        }
        try checkEncodedSize(reader.size, source: reader.name, limits: limits)
        let layout = try readLayout(reader, metadataLimit: limits.maximumMetadataBlocks)
        let header = layout.header
        guard header.width > 0, header.height > 0 else {
            throw ImageError.decodeFailed(reader.name, reason: "zero-sized image")
        }
        return layout.orientation.swapsSides ? (header.height, header.width) : (header.width, header.height)
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

    /// Keeps `size` for `source` (read elsewhere: from the first bytes of a fetch).
    func store(_ size: PixelSize, for source: ImageSource) {
        let identity = source.identity
        let evicted = sizes.withLock { $0.insert(size, for: identity, cost: 1) }
        _ = evicted  // released here, after unlocking
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
