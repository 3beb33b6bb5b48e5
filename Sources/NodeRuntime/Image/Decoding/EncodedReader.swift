#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encoded bytes of one decode, read as the header walks and the codecs ask: from memory, or from
/// an open regular file by offset (`pread`), so reading stops where the decoder stops.
///
/// A file is read through a read-ahead buffer that starts at 1 KB after every jump and doubles (to
/// 64 KB) while reading runs on, so a skipped block costs no read at all and the header behind it a
/// small one, while image data streams in large reads. Every file a decoder reads is opened by
/// `RegularFile`, so a directory or a named pipe is refused before it is opened.
/// - Thread: the one decoding thread that made it
final class EncodedReader {
    /// The source's name, for errors.
    let name: String
    /// The length of the bytes or the file, in bytes.
    let size: Int
    /// Where the next read starts; may pass `size` after a skip (reads there return nothing).
    private(set) var position = 0
    /// An I/O error met inside a codec's callback, which cannot throw: the decoder reports it.
    private(set) var failure: ImageError?

    private let bytes: [UInt8]?
    private let descriptor: Int32
    /// File bytes `bufferStart..<bufferStart + bufferCount`, read ahead.
    private let buffer: UnsafeMutableRawBufferPointer
    private var bufferStart = 0
    private var bufferCount = 0
    private var readAhead = EncodedReader.minimumReadAhead

    static let minimumReadAhead = 1 << 10
    static let maximumReadAhead = 64 << 10

    /// Reads `bytes` in memory.
    init(bytes: [UInt8], name: String) {
        self.name = name
        self.bytes = bytes
        self.size = bytes.count
        self.descriptor = -1
        self.buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    /// Opens the regular file at `path` (refusing anything else before opening it).
    /// - Throws: `ImageError` as `RegularFile.openForReading` does, or `unreadable`.
    init(openingFile path: String) throws {
        let descriptor = try RegularFile.openForReading(path)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ImageError.unreadable(path, reason: reason)
        }
        self.name = path
        self.bytes = nil
        self.size = Int(info.st_size)
        self.descriptor = descriptor
        self.buffer = .allocate(byteCount: EncodedReader.maximumReadAhead, alignment: 16)
    }

    deinit {
        if descriptor >= 0 {
            close(descriptor)
            buffer.deallocate()
        }
    }

    /// Moves to `offset` (at or past the end is allowed; reads there return nothing).
    func seek(to offset: Int) { position = max(0, offset) }

    /// Moves `count` bytes on without reading them.
    func skip(_ count: Int) {
        let (next, overflow) = position.addingReportingOverflow(max(0, count))
        position = overflow ? Int.max : next
    }

    /// Copies up to `count` bytes from the position into `destination` and moves past them: `count`,
    /// fewer only at the end of the bytes.
    func read(into destination: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var done = 0
        while done < count {
            let got = try readSome(into: destination + done, maximum: count - done)
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// Copies between 1 and `maximum` bytes (0 only at the end): what the read-ahead holds, or one
    /// more read of the file.
    func readSome(into destination: UnsafeMutableRawPointer, maximum: Int) throws -> Int {
        guard maximum > 0, position < size else { return 0 }
        if let bytes {
            let count = min(maximum, size - position)
            bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + position, byteCount: count) }
            position += count
            return count
        }
        if position < bufferStart || position >= bufferStart + bufferCount {
            // Reading on from the end of the buffer widens the read-ahead; a jump starts it small again.
            readAhead = position == bufferStart + bufferCount
                ? min(EncodedReader.maximumReadAhead, readAhead * 2) : EncodedReader.minimumReadAhead
            let wanted = min(readAhead, size - position)
            bufferStart = position
            bufferCount = 0
            bufferCount = try readFile(into: buffer.baseAddress!, count: wanted, at: position)
            if bufferCount == 0 { return 0 }
        }
        let offset = position - bufferStart
        let count = min(maximum, bufferCount - offset)
        destination.copyMemory(from: buffer.baseAddress! + offset, byteCount: count)
        position += count
        return count
    }

    /// Up to `count` bytes from the position (fewer only at the end), moving past them.
    func bytes(_ count: Int) throws -> [UInt8] {
        let wanted = max(0, min(count, size - min(size, position)))
        guard wanted > 0 else { return [] }
        return try [UInt8](unsafeUninitializedCapacity: wanted) { out, initialized in
            initialized = try read(into: out.baseAddress!, count: wanted)
        }
    }

    /// One byte, or nil at the end.
    func byte() throws -> UInt8? {
        var value: UInt8 = 0
        return try read(into: &value, count: 1) == 1 ? value : nil
    }

    /// The whole of the bytes from offset 0 to `end` (clamped to the size), leaving the position there.
    func prefix(_ end: Int) throws -> [UInt8] {
        if let bytes, end >= size { position = size; return bytes }
        seek(to: 0)
        return try self.bytes(end)
    }

    /// `pread` until `count` bytes arrive or the file ends.
    private func readFile(into destination: UnsafeMutableRawPointer, count: Int, at offset: Int) throws -> Int {
        var done = 0
        while done < count {
            let got = pread(descriptor, destination + done, count - done, off_t(offset + done))
            if got < 0 {
                if errno == EINTR { continue }
                throw ImageError.unreadable(name, reason: String(cString: strerror(errno)))
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    // MARK: For the codecs' C callbacks, which cannot throw

    /// `read(into:count:)`, or -1 with `failure` set.
    func callbackRead(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        do { return try read(into: destination, count: count) } catch { return fail(error) }
    }

    /// `readSome(into:maximum:)`, or -1 with `failure` set.
    func callbackReadSome(into destination: UnsafeMutableRawPointer, maximum: Int) -> Int {
        do { return try readSome(into: destination, maximum: maximum) } catch { return fail(error) }
    }

    /// Records `error` for the decoder to report once the codec gives up; returns -1.
    func fail(_ error: any Error) -> Int {
        if failure == nil {
            failure = error as? ImageError ?? .unreadable(name, reason: "\(error)")
        }
        return -1
    }
}
