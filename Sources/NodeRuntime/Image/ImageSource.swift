public import Compositor
public import FoundationEssentials
import Glibc
import Dispatch

/// Where an image node's picture comes from.
///
/// Sources are equal, and hash, by their `identity`: files by path, byte sources by their contents'
/// digest and length (never by name), bitmaps by identity, URLs by their absolute string. Comparing
/// and hashing take constant time whatever the size of the bytes.
/// - Thread: any
public enum ImageSource: Sendable, Hashable, CustomStringConvertible {
    /// An encoded file (PNG, JPEG, GIF, BMP, …); the format is read from its bytes, not its name.
    case file(String)
    /// Encoded bytes in memory (see `data(_:name:)`).
    case encoded(EncodedImage)
    /// A bitmap that is already decoded.
    case bitmap(Bitmap)
    /// An encoded image fetched over HTTP or HTTPS by the image node's `networkLoader`
    /// (`NetworkImageLoader.shared` unless set): from its memory or disk cache, else from the network
    /// (libcurl, off the UI thread), with time limits, a body limit and retries. A progressive JPEG shows coarse
    /// while it arrives and sharpens with each scan; other images show once whole. A failure ends in
    /// `ImageError.network` (or the decode's own error for bytes that are not an image).
    case url(URL)

    /// Encoded bytes in memory, with a name for messages. The bytes' digest, which comparisons and
    /// cache keys use, is computed once here (about half a millisecond a megabyte), never under a lock.
    public static func data(_ bytes: [UInt8], name: String) -> ImageSource {
        .encoded(EncodedImage(bytes: bytes, name: name))
    }

    /// What caches key a source by: small, compared and hashed in constant time, and holding nothing
    /// large alive — a path, a digest of the bytes, or a bitmap's identity (not the bitmap).
    /// - Thread: any (a value)
    public struct Identity: Hashable, Sendable, CustomStringConvertible {
        enum Kind: Hashable, Sendable {
            case file(String)
            case bytes(ContentDigest)
            case bitmap(BitmapIdentity)
            case url(String)
        }
        let kind: Kind

        /// Heap bytes the identity holds: a path's or URL's characters; nothing for a digest or an
        /// identity.
        public var retainedBytes: Int {
            switch kind {
            case .file(let path): return path.utf8.count
            case .url(let url): return url.utf8.count
            case .bytes, .bitmap: return 0
            }
        }

        public var description: String {
            switch kind {
            case .file(let path): return "file:" + path
            case .bytes(let digest): return "bytes:\(digest)"
            case .bitmap(let identity): return "\(identity)"
            case .url(let url): return url
            }
        }
    }

    /// The source's identity (see `Identity`).
    public var identity: Identity {
        switch self {
        case .file(let path): return Identity(kind: .file(path))
        case .encoded(let image): return Identity(kind: .bytes(image.digest))
        case .bitmap(let bitmap): return Identity(kind: .bitmap(bitmap.identity))
        case .url(let url): return Identity(kind: .url(url.absoluteString))
        }
    }

    public var description: String {
        switch self {
        case .file(let path): return path
        case .encoded(let image): return "\(image.name) (\(image.bytes.count) bytes)"
        case .bitmap(let bitmap): return bitmap.description
        case .url(let url): return url.absoluteString
        }
    }

    public static func == (a: ImageSource, b: ImageSource) -> Bool { a.identity == b.identity }
    public func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}

/// A 128-bit digest of a run of bytes and its length, which stands for the bytes in comparisons and
/// cache keys. It is two SipHash values (the standard library's `Hasher`) under the process's random
/// seed: two different runs share one with a chance of about 2⁻¹²⁸, and as the seed is never seen
/// outside the process, no one can make two that do. (With `SWIFT_DETERMINISTIC_HASHING` set the seed
/// is fixed and known: only tests set it.) Digests differ between processes; none is stored.
/// - Thread: any (a value)
public struct ContentDigest: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes digested.
    public let count: Int
    let first: UInt64
    let second: UInt64

    /// Digests `bytes` (about half a millisecond a megabyte).
    public init(_ bytes: [UInt8]) {
        count = bytes.count
        (first, second) = bytes.withUnsafeBytes { raw in
            var a = Hasher()
            a.combine(0x5465_7373_6572_6101 as UInt64)
            a.combine(bytes: raw)
            var b = Hasher()
            b.combine(0x5465_7373_6572_6102 as UInt64)
            b.combine(bytes: raw)
            return (UInt64(bitPattern: Int64(a.finalize())), UInt64(bitPattern: Int64(b.finalize())))
        }
    }

    public var description: String {
        String(first, radix: 16) + String(second, radix: 16) + "/\(count)"
    }
}

/// Encoded image bytes with a name and their digest.
/// - Thread: any
public struct EncodedImage: Sendable {
    public let bytes: [UInt8]
    public let name: String
    /// The digest of the bytes, computed once, when the value is made.
    public let digest: ContentDigest

    public init(bytes: [UInt8], name: String) {
        self.bytes = bytes
        self.name = name
        self.digest = ContentDigest(bytes)
    }
}

/// How an image fills its node.
/// - Thread: any
public enum ContentMode: Sendable, Hashable, CaseIterable {
    /// Stretched to the bounds, ignoring the aspect ratio.
    case scaleToFill
    /// Whole image inside the bounds, aspect ratio kept (bars where it does not fill).
    case aspectFit
    /// Bounds covered, aspect ratio kept, the overflow cropped evenly.
    case aspectFill
    /// Natural size (in points at the bitmap's scale), centred, cropped by the bounds.
    case center
}

/// Why an image could not be shown.
/// - Thread: any
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingFile(String)
    case unreadable(String, reason: String)
    case empty(String)
    case unsupportedFormat(String)
    case truncated(String)
    /// The header claims more pixels than `ImageDecoder.Limits` allow: never decoded.
    case tooLarge(String, width: Int, height: Int)
    case decodeFailed(String, reason: String)
    /// Decoding would pass a byte limit of `ImageDecoder.Limits` (file size or working memory).
    case overLimit(String, reason: String)
    /// The path names something other than a regular file: `kind` says what ("a directory", "a named
    /// pipe (FIFO)", "a socket", "a character device", "a block device"). Refused before it is opened,
    /// so a named pipe never keeps a worker waiting for a writer.
    case notARegularFile(String, kind: String)
    /// A `.url` source could not be fetched (the string is the URL): see `NetworkImageError`.
    case network(String, NetworkImageError)

    public var description: String {
        switch self {
        case .missingFile(let source): return "\(source): no such file"
        case let .unreadable(source, reason): return "\(source): cannot read (\(reason))"
        case .empty(let source): return "\(source): no bytes"
        case .unsupportedFormat(let source): return "\(source): not an image format Tessera decodes"
        case .truncated(let source): return "\(source): the image header is cut short"
        case let .tooLarge(source, width, height):
            return "\(source): \(width)×\(height) pixels is over the decode limit"
        case let .decodeFailed(source, reason): return "\(source): decoding failed (\(reason))"
        case let .overLimit(source, reason): return "\(source): refused, \(reason)"
        case let .notARegularFile(source, kind): return "\(source): \(kind), not a file"
        case let .network(source, error): return "\(source): \(error)"
        }
    }
}
