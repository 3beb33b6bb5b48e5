#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJPEG

/// Counts a JPEG's scans (start-of-scan markers) in its bytes, before libjpeg decodes any: marker
/// segments are passed by their lengths (the caller may move past them unread) and entropy-coded data
/// is searched for the next marker (`memchr` for each 0xFF). A file whose coefficients libjpeg must
/// buffer (progressive, or a first scan without every component) is decoded scan by scan, each scan a
/// pass over every block of the components it holds however few bytes it takes, so 400 scans of a few
/// bytes each would cost as much as 400 pictures; counted first, the 401st is refused at the cost of
/// reading up to it. Bytes may come in pieces (the counter keeps its place between them).
/// - Thread: one at a time (a value)
struct JPEGScanCount {
    /// The most scans a file may have (`TESSERA_JPEG_MAX_SCANS`, which libjpeg's progress monitor
    /// also enforces).
    static let limit = Int(TESSERA_JPEG_MAX_SCANS)

    private enum State {
        /// Entropy-coded data, or bytes between segments: looking for 0xFF.
        case data
        /// After a 0xFF: the marker comes next.
        case marker
        /// A marker with a length: its high byte next (nil), or its low byte.
        case length(marker: UInt8, high: Int?)
        /// Inside a segment: bytes left to pass.
        case skip(Int)
        /// After the end-of-image marker.
        case ended
    }

    private var state = State.data
    /// Start-of-scan markers met so far.
    private(set) var scans = 0

    /// Whether the end-of-image marker was met (nothing after it is looked at).
    var isAtEnd: Bool {
        if case .ended = state { return true }
        return false
    }

    /// The rest of a segment the counter stands inside, for a caller that moves past it unread; the
    /// counter then stands after it.
    mutating func takeSkip() -> Int {
        guard case .skip(let count) = state else { return 0 }
        state = .data
        return count
    }

    /// Reads `bytes`, the next bytes of the file; returns false as soon as there are more scans than
    /// `limit` (the rest is not looked at).
    mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return scans <= Self.limit }
        var i = 0
        let count = bytes.count
        while i < count {
            switch state {
            case .ended:
                return scans <= Self.limit
            case .skip(let left):
                let n = min(left, count - i)
                i += n
                state = left == n ? .data : .skip(left - n)
            case .data:
                guard let found = memchr(base + i, 0xFF, count - i) else { return true }
                i = UnsafeRawPointer(found) - UnsafeRawPointer(base) + 1
                state = .marker
            case .marker:
                let byte = base[i]
                i += 1
                switch byte {
                case 0xFF: state = .marker  // fill bytes
                case 0x00, 0x01, 0xD0...0xD8: state = .data  // stuffed zero, TEM, restart markers, SOI
                case 0xD9: state = .ended
                default: state = .length(marker: byte, high: nil)
                }
            case .length(let marker, nil):
                state = .length(marker: marker, high: Int(base[i]))
                i += 1
            case .length(let marker, let high?):
                let length = high << 8 | Int(base[i])
                i += 1
                if marker == 0xDA {
                    scans += 1
                    if scans > Self.limit { return false }
                }
                state = length > 2 ? .skip(length - 2) : .data
            }
        }
        return true
    }

    /// Counts the scans of the file in `reader` from `offset` (the first scan's marker) to its end or
    /// its end-of-image marker, moving past segments unread.
    /// - Throws: `decodeFailed` at the scan past `limit`, having read no further; the reader's errors.
    static func check(_ reader: EncodedReader, from offset: Int) throws {
        var counter = JPEGScanCount()
        reader.seek(to: offset)
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !counter.isAtEnd {
            reader.skip(counter.takeSkip())
            let got = try buffer.withUnsafeMutableBytes { try reader.readSome(into: $0.baseAddress!, maximum: $0.count) }
            if got == 0 { return }
            let within = buffer.withUnsafeBufferPointer { counter.add(UnsafeBufferPointer(rebasing: $0[..<got])) }
            guard within else { throw refusal(reader.name) }
        }
    }

    /// The refusal of a file of more than `limit` scans (libjpeg's progress monitor says the same).
    static func refusal(_ name: String) -> ImageError {
        .decodeFailed(name, reason: "more than \(limit) scans")
    }
}
