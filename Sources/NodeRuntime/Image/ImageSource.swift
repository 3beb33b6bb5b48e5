public import Compositor
import Foundation

/// Where an image node's picture comes from.
/// - Thread: any
public enum ImageSource: Sendable, Hashable, CustomStringConvertible {
    /// An encoded file (PNG, JPEG, GIF, BMP, …); the format is read from its bytes, not its name.
    case file(String)
    /// Encoded bytes in memory (see `data(_:name:)`).
    case encoded(EncodedImage)
    /// A bitmap that is already decoded.
    case bitmap(Bitmap)

    /// Encoded bytes in memory, with a name for messages. The bytes' digest, which cache keys and
    /// comparisons use, is computed once here rather than on every comparison.
    public static func data(_ bytes: [UInt8], name: String) -> ImageSource {
        .encoded(EncodedImage(bytes: bytes, name: name))
    }

    /// What the decoded-image cache keys on: the path, the bytes' digest, or the bitmap's identity.
    public var cacheKey: String {
        switch self {
        case .file(let path): return "file:" + path
        case .encoded(let image): return "data:\(image.name):\(image.bytes.count):\(image.digest)"
        case .bitmap(let bitmap): return "bitmap:\(bitmap.identity.rawValue)"
        }
    }

    public var description: String {
        switch self {
        case .file(let path): return path
        case .encoded(let image): return "\(image.name) (\(image.bytes.count) bytes)"
        case .bitmap(let bitmap): return bitmap.description
        }
    }

    /// Files are equal by path and bitmaps by identity; byte sources only when their bytes are (the
    /// digest decides quickly when they differ, never alone when it matches).
    public static func == (a: ImageSource, b: ImageSource) -> Bool {
        switch (a, b) {
        case let (.file(x), .file(y)): return x == y
        case let (.bitmap(x), .bitmap(y)): return x.identity == y.identity
        case let (.encoded(x), .encoded(y)):
            return x.digest == y.digest && x.bytes.count == y.bytes.count && x.bytes == y.bytes
        default: return false
        }
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(cacheKey) }

    /// FNV-1a over the bytes: a stable digest for cache keys (not for security).
    static func digest(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01B3
        }
        return hash
    }
}

/// Encoded image bytes with a name and their digest.
/// - Thread: any
public struct EncodedImage: Sendable {
    public let bytes: [UInt8]
    public let name: String
    /// FNV-1a of the bytes, computed once.
    public let digest: UInt64

    public init(bytes: [UInt8], name: String) {
        self.bytes = bytes
        self.name = name
        self.digest = ImageSource.digest(bytes)
    }

    /// With a digest given: for tests of what happens when two different byte runs share one.
    init(bytes: [UInt8], name: String, digest: UInt64) {
        self.bytes = bytes
        self.name = name
        self.digest = digest
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
        }
    }
}
