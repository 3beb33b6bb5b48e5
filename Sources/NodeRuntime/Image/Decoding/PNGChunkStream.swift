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
    /// What the image data may still take, set from the header chunk.
    private var imageData = PNGDataAllowance.unlimited
    private var header: (width: Int, height: Int, depth: Int, colour: Int)?
    /// The colour chunks met before the image data.
    private(set) var colour = PNGColourChunks()

    /// The header's colour type (0 grey, 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA), once libpng has
    /// read the header.
    var colourType: Int? { header?.colour }

    /// The longest header, palette or transparency chunk read (a palette holds at most 768 bytes).
    private static let largestKeptChunk = 4_096

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
                pending = PNGChunkHeader.endChunk
                return true
            }
            guard let chunk = try PNGChunkHeader.read(reader, at: reader.position) else { return false }
            let length = chunk.length, type = chunk.type
            let isImageData = type == .IDAT
            if sawImageData && !isImageData {
                imageDataEnded = true  // nothing after the image data is read
                continue
            }
            if isImageData {
                sawImageData = true
                if imageData.spend(chunkLength: length) != nil {
                    let size = header.map { "\($0.width)×\($0.height)" } ?? "this"
                    throw ImageError.decodeFailed(source, reason: "more compressed image data than a \(size) PNG can need")
                }
                pending = chunk.bytes
                chunkLeft = length + 4
                return true
            }
            if !type.isAncillary || type == .tRNS {
                // The header, palette, transparency and end: small, kept whole. libpng refuses an
                // unknown critical chunk; it is refused here without reading it.
                let known = [PNGChunkType.IHDR, .PLTE, .IEND, .tRNS].contains(type)
                guard known else {
                    throw ImageError.decodeFailed(source, reason: "an unknown critical PNG chunk \(type.name.debugDescription)")
                }
                guard length <= Self.largestKeptChunk else {
                    throw ImageError.decodeFailed(source, reason: "a PNG \(type.name) chunk of \(length) bytes")
                }
                let body = try reader.bytes(length + 4)
                guard body.count == length + 4 else { return false }
                if type == .IHDR, length == 13 { noteHeader(body) }
                pending = chunk.bytes + body
                return true
            }
            skipped += 1
            guard skipped <= metadataLimit else {
                throw ImageDecoder.tooManyMetadataBlocks(source, limit: metadataLimit, "PNG chunks")
            }
            let head = chunk.bytes
            let name = type.name
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
        var crc = CRC32()
        crc.add(bytes)
        return crc.value
    }

    /// Records the header's size and sets what the image data may take (`PNGDataAllowance`).
    private func noteHeader(_ body: [UInt8]) {
        func u32be(_ i: Int) -> Int { Int(body[i]) << 24 | Int(body[i + 1]) << 16 | Int(body[i + 2]) << 8 | Int(body[i + 3]) }
        let width = u32be(0), height = u32be(4), depth = Int(body[8]), colour = Int(body[9])
        header = (width, height, depth, colour)
        guard Self.channels(colourType: colour, depth: depth) != nil else { return }
        imageData = PNGDataAllowance(width: width, height: height, colourType: colour, depth: depth, capsChunks: false)
    }
}

// MARK: - What PNG and APNG reading share

/// A PNG chunk's four-letter type, its bytes as one big-endian number.
/// - Thread: any (a value)
struct PNGChunkType: Hashable, Sendable {
    let value: UInt32

    init(_ bytes: some Collection<UInt8>) {
        value = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    init(_ name: String) { self.init(Array(name.utf8)) }

    static let IHDR = PNGChunkType("IHDR"), PLTE = PNGChunkType("PLTE"), IDAT = PNGChunkType("IDAT")
    static let IEND = PNGChunkType("IEND"), tRNS = PNGChunkType("tRNS"), eXIf = PNGChunkType("eXIf")
    static let acTL = PNGChunkType("acTL"), fcTL = PNGChunkType("fcTL"), fdAT = PNGChunkType("fdAT")

    /// Bit 5 of the first letter (lower case): a chunk a decoder may skip.
    var isAncillary: Bool { value & 0x2000_0000 != 0 }

    /// The four letters, as stored.
    var name: String { String(decoding: [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) }, as: UTF8.self) }
}

/// A chunk's header as it stands in a PNG: where it starts, its type and its data's length.
/// - Thread: any (a value)
struct PNGChunkHeader {
    let offset: Int
    let type: PNGChunkType
    let length: Int

    var dataOffset: Int { offset + 8 }
    /// Where the next chunk starts (after the data and the CRC).
    var end: Int { offset + 12 + length }

    /// The header's eight bytes, as stored.
    var bytes: [UInt8] {
        [24, 16, 8, 0].map { UInt8((length >> $0) & 0xFF) } + [24, 16, 8, 0].map { UInt8((type.value >> $0) & 0xFF) }
    }

    /// The header at `offset` of `reader`, which is left after it; nil where the bytes end first.
    /// - Throws: `decodeFailed` for a length over 2³¹ − 1, which no chunk may have; the reader's errors.
    static func read(_ reader: EncodedReader, at offset: Int) throws -> PNGChunkHeader? {
        reader.seek(to: offset)
        let head = try reader.bytes(8)
        guard head.count == 8 else { return nil }
        let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard length <= Int(Int32.max) else { throw ImageError.decodeFailed(reader.name, reason: "a PNG chunk of \(length) bytes") }
        return PNGChunkHeader(offset: offset, type: PNGChunkType(head[4..<8]), length: length)
    }

    /// The end chunk a stream shows libpng once the image data it gives has ended.
    static let endChunk: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
}

/// What the compressed data of a PNG image, or of an APNG frame, may take: twice its rows stored
/// uncompressed (a filter byte a row, seven passes' worth for interlacing), plus 64 KB, chunk headers
/// included; so neither empty data chunks nor bytes after the compressed stream cost more than the
/// pixels. An APNG frame's data, read again on every play, may also come in at most
/// `64 + uncompressed / 64` chunks: a flood of tiny or empty chunks costs no more to walk than the
/// frame's own pixels cost to decode (real encoders write 8 KB chunks or larger).
/// - Thread: any (a value)
struct PNGDataAllowance {
    private var bytesLeft: Int
    private var chunksLeft: Int
    /// The most chunks allowed (`Int.max` when not capped).
    let chunkLimit: Int

    /// No limit (before a header says how large the image is).
    static let unlimited = PNGDataAllowance(bytes: .max, chunks: .max)

    private init(bytes: Int, chunks: Int) {
        bytesLeft = bytes
        chunksLeft = chunks
        chunkLimit = chunks
    }

    /// The allowance for a `width × height` image of `colourType` and `depth` (an unknown colour
    /// type counted as four channels), its chunks capped when `capsChunks`.
    init(width: Int, height: Int, colourType: Int, depth: Int, capsChunks: Bool) {
        let channels = PNGChunkStream.channels(colourType: colourType, depth: depth) ?? 4
        let rowBits = ByteCount.product(width, channels, depth)
        let rowBytes = ByteCount.sum(rowBits / 8, rowBits % 8 == 0 ? 0 : 1, 1)
        let raw = ByteCount.sum(ByteCount.product(rowBytes, height), ByteCount.product(height, 7))
        self.init(bytes: ByteCount.sum(ByteCount.product(raw, 2), 64 << 10), chunks: capsChunks ? ByteCount.sum(64, raw / 64) : .max)
    }

    /// What passing the allowance ran out of.
    enum Overrun { case bytes, chunks }

    /// Takes one data chunk of `length` bytes; nil when it fits, else what it passes.
    mutating func spend(chunkLength length: Int) -> Overrun? {
        let (spent, overflow) = bytesLeft.subtractingReportingOverflow(12 + length)
        guard !overflow, spent >= 0 else { return .bytes }
        guard chunksLeft > 0 else { return .chunks }
        bytesLeft = spent
        if chunksLeft != .max { chunksLeft -= 1 }
        return nil
    }
}

/// The CRC-32 PNG chunks carry (ISO 3309, the polynomial 0xEDB88320 reflected), computed a byte run
/// at a time.
/// - Thread: any (a value)
struct CRC32 {
    private var crc: UInt32 = 0xFFFF_FFFF

    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        Self.table.withUnsafeBufferPointer { table in
            var c = crc
            for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
            crc = c
        }
    }

    mutating func add(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { add($0) } }

    var value: UInt32 { ~crc }
}
