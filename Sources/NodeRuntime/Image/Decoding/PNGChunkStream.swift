/// What libpng is given of a PNG: the signature, the header, palette and transparency chunks, the
/// colour profile (`iCCP`, up to `SizedDecode.pngChunkLimit` compressed, for libpng to inflate and
/// check), and the image data, read as libpng asks. The other colour chunks (`cICP`, `sRGB`, `gAMA`,
/// `cHRM`: a few bytes each) are read here into `colour`, their CRCs checked; every other chunk before
/// the image data (text, compressed text, private chunks) is skipped by its length without being
/// read — at most `metadataLimit` ancillary chunks in all, one more is refused — and once the image
/// data ends nothing more of the file is read: libpng is shown an end chunk instead. The image data itself may not pass twice what
/// the header's pixels need when stored uncompressed (plus 64 KB), so neither empty data chunks nor
/// bytes after the compressed stream can make a decode read more than its pixels call for.
/// - Thread: the one decoding thread that made it
final class PNGChunkStream {
    private let reader: EncodedReader
    private let metadataLimit: Int
    /// Bytes ready to give before anything else: the signature, a chunk kept whole, a chunk header.
    private var pending: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private var pendingOffset = 0
    /// Bytes of the image-data chunk being given (its data and CRC) still to come from the file.
    private var chunkLeft = 0
    private var sawImageData = false
    private var imageDataEnded = false
    private var endChunkGiven = false
    private var skipped = 0
    /// What the image data may still give, set from the header chunk.
    private var imageDataBudget = Int.max
    private var header: (width: Int, height: Int, depth: Int, colour: Int)?
    /// The colour chunks met before the image data.
    private(set) var colour = PNGColourChunks()

    /// The header's colour type (0 grey, 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA), once libpng has
    /// read the header.
    var colourType: Int? { header?.colour }

    /// The longest header, palette or transparency chunk read (a palette holds at most 768 bytes).
    private static let largestKeptChunk = 4_096

    /// The end chunk libpng sees once the file's image data ends.
    private static let endChunk: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    init(reader: EncodedReader, metadataLimit: Int) {
        self.reader = reader
        self.metadataLimit = metadataLimit
        reader.seek(to: 8)
    }

    /// Samples a pixel has for a PNG colour type, when `depth` is legal for it.
    static func channels(colourType: Int, depth: Int) -> Int? {
        let allowed: [Int: (channels: Int, depths: Set<Int>)] = [
            0: (1, [1, 2, 4, 8, 16]), 2: (3, [8, 16]), 3: (1, [1, 2, 4, 8]), 4: (2, [8, 16]), 6: (4, [8, 16]),
        ]
        guard let entry = allowed[colourType], entry.depths.contains(depth) else { return nil }
        return entry.channels
    }

    /// Gives libpng `count` bytes (fewer only where the file ends), or -1 with the reader's failure set.
    func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        do {
            var done = 0
            while done < count {
                if pendingOffset < pending.count {
                    let n = min(count - done, pending.count - pendingOffset)
                    pending.withUnsafeBufferPointer { (destination + done).update(from: $0.baseAddress! + pendingOffset, count: n) }
                    pendingOffset += n
                    done += n
                } else if chunkLeft > 0 {
                    let n = try reader.read(into: destination + done, count: min(count - done, chunkLeft))
                    if n == 0 { break }
                    chunkLeft -= n
                    done += n
                } else if !(try nextChunk()) {
                    break
                }
            }
            return done
        } catch {
            return reader.fail(error)
        }
    }

    /// Makes the next chunk libpng is to see ready; false at the end of the file (or after the end
    /// chunk was given).
    private func nextChunk() throws -> Bool {
        let source = reader.name
        pending = []
        pendingOffset = 0
        while true {
            if imageDataEnded {
                guard !endChunkGiven else { return false }
                endChunkGiven = true
                pending = Self.endChunk
                return true
            }
            let head = try reader.bytes(8)
            guard head.count == 8 else { return false }
            let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            guard length <= Int(Int32.max) else {
                throw ImageError.decodeFailed(source, reason: "a PNG chunk of \(length) bytes")
            }
            let type = Array(head[4..<8])
            let isImageData = type.elementsEqual("IDAT".utf8)
            if sawImageData && !isImageData {
                imageDataEnded = true  // nothing after the image data is read
                continue
            }
            if isImageData {
                sawImageData = true
                let (spent, overflow) = imageDataBudget.subtractingReportingOverflow(12 + length)
                guard !overflow, spent >= 0 else {
                    let size = header.map { "\($0.width)×\($0.height)" } ?? "this"
                    throw ImageError.decodeFailed(source, reason: "more compressed image data than a \(size) PNG can need")
                }
                imageDataBudget = spent
                pending = head
                chunkLeft = length + 4
                return true
            }
            let isCritical = type[0] & 0x20 == 0
            if isCritical || type.elementsEqual("tRNS".utf8) {
                // The header, palette, transparency and end: small, kept whole. libpng refuses an
                // unknown critical chunk; it is refused here without reading it.
                let known = ["IHDR", "PLTE", "IEND", "tRNS"].contains { type.elementsEqual($0.utf8) }
                let name = String(decoding: type, as: UTF8.self)
                guard known else {
                    throw ImageError.decodeFailed(source, reason: "an unknown critical PNG chunk \(name.debugDescription)")
                }
                guard length <= Self.largestKeptChunk else {
                    throw ImageError.decodeFailed(source, reason: "a PNG \(name) chunk of \(length) bytes")
                }
                let body = try reader.bytes(length + 4)
                guard body.count == length + 4 else { return false }
                if type.elementsEqual("IHDR".utf8), length == 13 { noteHeader(body) }
                pending = head + body
                return true
            }
            skipped += 1
            guard skipped <= metadataLimit else {
                throw ImageDecoder.tooManyMetadataBlocks(source, limit: metadataLimit, "PNG chunks")
            }
            let name = String(decoding: type, as: UTF8.self)
            if name == "iCCP" && !colour.sawProfile {
                colour.sawProfile = true
                if length <= SizedDecode.pngChunkLimit {
                    let body = try reader.bytes(length + 4)
                    guard body.count == length + 4 else { return false }
                    pending = head + body
                    return true
                }
                colour.profileSkipped = "\(length) bytes compressed, over the \(SizedDecode.pngChunkLimit)-byte limit"
            } else if let expected = Self.colourChunkLengths[name] {
                try readColourChunk(name, head: head, length: length, expected: expected)
                continue
            }
            reader.skip(length + 4)
        }
    }

    /// The length each colour chunk read here must have.
    private static let colourChunkLengths = ["cICP": 4, "sRGB": 1, "gAMA": 4, "cHRM": 32]

    /// Reads a `cICP`, `sRGB`, `gAMA` or `cHRM` chunk into `colour`: the first of each kind, when its
    /// length and CRC are right (a wrong one is noted and ignored, as libpng ignores a damaged chunk).
    private func readColourChunk(_ name: String, head: [UInt8], length: Int, expected: Int) throws {
        guard length == expected else {
            colour.malformed.append("\(name) (\(length) bytes, not \(expected))")
            reader.skip(length + 4)
            return
        }
        let body = try reader.bytes(length + 4)
        guard body.count == length + 4 else { return }
        let data = Array(body[0..<length])
        let stored = body[length..<(length + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard PNGChunkStream.crc32(Array(head[4..<8]) + data) == stored else {
            colour.malformed.append("\(name) (its CRC is wrong)")
            return
        }
        func u32be(_ i: Int) -> Int { Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3]) }
        switch name {
        case "cICP": if colour.codingPoints == nil { colour.codingPoints = data }
        case "sRGB": colour.sRGB = true
        case "gAMA": if colour.gamma == nil { colour.gamma = u32be(0) }
        case "cHRM": if colour.chromaticities == nil { colour.chromaticities = (0..<8).map { u32be($0 * 4) } }
        default: break
        }
    }

    /// The CRC-32 of PNG chunks (ISO 3309, the polynomial 0xEDB88320 reflected).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return ~crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// Records the header's size and sets the image-data budget: twice the filtered rows stored
    /// uncompressed, plus 64 KB.
    private func noteHeader(_ body: [UInt8]) {
        func u32be(_ i: Int) -> Int { Int(body[i]) << 24 | Int(body[i + 1]) << 16 | Int(body[i + 2]) << 8 | Int(body[i + 3]) }
        let width = u32be(0), height = u32be(4), depth = Int(body[8]), colour = Int(body[9])
        header = (width, height, depth, colour)
        guard let channels = Self.channels(colourType: colour, depth: depth) else { return }
        let rowBits = ByteCount.product(width, channels, depth)
        let rowBytes = ByteCount.sum(rowBits / 8, rowBits % 8 == 0 ? 0 : 1, 1)
        // Interlaced rows carry a filter byte per pass row: seven passes at most.
        let raw = ByteCount.sum(ByteCount.product(rowBytes, height), ByteCount.product(height, 7))
        imageDataBudget = ByteCount.sum(ByteCount.product(raw, 2), 64 << 10)
    }
}
