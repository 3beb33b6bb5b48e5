import Compositor
internal import CPNG

/// An APNG's frames: the animation control chunk (`acTL`) before the image data says how many frames
/// and plays; each frame is a frame control chunk (`fcTL`: size, offset, delay, dispose and blend
/// operations) followed by its data, the default image's `IDAT` chunks for a first frame whose `fcTL`
/// comes before them, `fdAT` chunks (a sequence number, then image data) for the others.
///
/// libpng has no APNG support here, so each frame reaches it as a PNG of its own (`APNGFrameStream`):
/// the signature, a header chunk with the frame's size (the file's bit depth, colour type and
/// interlacing), the file's palette and transparency chunks, the frame's data as `IDAT` chunks and an
/// end chunk. Its rows are composited onto the canvas: blend 0 replaces the frame's rectangle, blend
/// 1 draws over it; before the next frame, dispose 1 clears the rectangle and dispose 2 puts back
/// what was under it (on the first frame, 2 counts as 1, as the specification says).
///
/// The file is read as the frames are decoded, never held. A frame's data may not pass twice what
/// its pixels need stored uncompressed (plus 64 KB), as for a still PNG; more metadata chunks between
/// two frames than `maximumMetadataBlocks` are refused; a frame outside the canvas, an unknown
/// dispose or blend operation, a data chunk whose CRC does not match, are errors.
/// - Thread: one at a time (owned by its `AnimatedImageDecoder`)
final class APNGAnimation: AnimationBackend {
    /// The file's header chunk fields.
    struct Header {
        var width: Int, height: Int, depth: UInt8, colour: UInt8, interlace: UInt8
    }

    private let reader: EncodedReader
    private let name: String
    private let limits: ImageDecoder.Limits
    private let header: Header
    /// The palette and transparency chunks, whole, given to libpng with every frame.
    private let keptChunks: [UInt8]
    /// The frames `acTL` claims; playing stops there even if the file holds more.
    private let declaredFrames: Int
    /// Where the first frame's `fcTL` starts.
    private let sequenceStart: Int
    /// Where the walk for the next frame's `fcTL` starts.
    private var position: Int
    private var framesRead = 0
    private var canvas: AnimationCanvas
    private var disposal: (operation: Int, rect: PixelRect, saved: [UInt8])?
    let playCount: Int

    var canvasSize: (width: Int, height: Int) { (canvas.width, canvas.height) }
    var heldBytes: Int { ByteCount.product(canvas.byteCount, 2) }
    var stepBytes: Int {
        // libpng's rows and, for an interlaced frame, the frame held whole.
        ByteCount.sum(ByteCount.product(canvas.width, 4, 4), header.interlace != 0 ? canvas.byteCount : 0)
    }

    private init(reader: EncodedReader, limits: ImageDecoder.Limits, header: Header, keptChunks: [UInt8],
                 declaredFrames: Int, playCount: Int, sequenceStart: Int) {
        self.reader = reader
        self.name = reader.name
        self.limits = limits
        self.header = header
        self.keptChunks = keptChunks
        self.declaredFrames = declaredFrames
        self.playCount = playCount
        self.sequenceStart = sequenceStart
        position = sequenceStart
        canvas = AnimationCanvas(width: header.width, height: header.height)
    }

    // MARK: Chunks

    /// A chunk's type, data length and where its data starts.
    private struct Chunk {
        var type: [UInt8]
        var length: Int
        var dataOffset: Int
        var end: Int { dataOffset + length + 4 }
        func `is`(_ name: String) -> Bool { type.elementsEqual(name.utf8) }
    }

    /// The chunk starting at `offset`, or nil where the bytes end.
    private static func chunk(at offset: Int, in reader: EncodedReader) throws -> Chunk? {
        reader.seek(to: offset)
        let head = try reader.bytes(8)
        guard head.count == 8 else { return nil }
        let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard length <= Int(Int32.max) else {
            throw ImageError.decodeFailed(reader.name, reason: "a PNG chunk of \(length) bytes")
        }
        return Chunk(type: Array(head[4..<8]), length: length, dataOffset: offset + 8)
    }

    private static func u32be(_ bytes: [UInt8], _ i: Int) -> Int {
        Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
    }

    /// The animation in a PNG: nil unless an `acTL` chunk before the image data claims two frames or
    /// more (a plain PNG, or an APNG of one frame, is a still image).
    static func open(_ reader: EncodedReader, limits: ImageDecoder.Limits) throws -> APNGAnimation? {
        let name = reader.name
        guard let first = try chunk(at: 8, in: reader), first.is("IHDR"), first.length == 13 else { return nil }
        let ihdr = try reader.bytes(13)
        guard ihdr.count == 13 else { throw ImageError.truncated(name) }
        let header = Header(width: u32be(ihdr, 0), height: u32be(ihdr, 4), depth: ihdr[8], colour: ihdr[9], interlace: ihdr[12])
        var kept: [UInt8] = []
        var control: (frames: Int, plays: Int)?
        var firstFrameControl: Int?
        var skipped = 0
        var offset = first.end
        // The chunks before the image data.
        while true {
            guard let chunk = try chunk(at: offset, in: reader) else { throw ImageError.truncated(name) }
            if chunk.is("IDAT") { break }
            if chunk.is("IEND") { throw ImageError.truncated(name) }
            if chunk.is("acTL") {
                guard chunk.length == 8 else { throw ImageError.decodeFailed(name, reason: "an acTL chunk of \(chunk.length) bytes") }
                let data = try reader.bytes(8)
                guard data.count == 8 else { throw ImageError.truncated(name) }
                control = (u32be(data, 0), u32be(data, 4))
            } else if chunk.is("fcTL") {
                if firstFrameControl == nil { firstFrameControl = offset }
            } else if chunk.is("PLTE") || chunk.is("tRNS") {
                guard chunk.length <= 4_096 else {
                    throw ImageError.decodeFailed(name, reason: "a PNG \(String(decoding: chunk.type, as: UTF8.self)) chunk of \(chunk.length) bytes")
                }
                reader.seek(to: offset)
                let whole = try reader.bytes(chunk.length + 12)
                guard whole.count == chunk.length + 12 else { throw ImageError.truncated(name) }
                kept += whole
            } else {
                skipped += 1
                guard skipped <= limits.maximumMetadataBlocks else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: limits.maximumMetadataBlocks, "PNG chunks")
                }
            }
            offset = chunk.end
        }
        guard let control, control.frames >= 2 else { return nil }
        try AnimatedImageDecoder.checkHeldBytes(ByteCount.product(header.width, header.height, 4, 2),
                                                "this APNG", source: name, limits: limits)
        // Without an fcTL before the image data, the default image is not a frame: the first frame's
        // fcTL follows the image data.
        let start = firstFrameControl ?? offset
        return APNGAnimation(reader: reader, limits: limits, header: header, keptChunks: kept,
                             declaredFrames: control.frames, playCount: control.plays, sequenceStart: start)
    }

    // MARK: Frames

    func compositeNextFrame(isCancelled: () -> Bool) throws -> Double? {
        guard framesRead < declaredFrames else { return nil }
        // The next fcTL: metadata chunks and a default image that is no frame are passed over.
        var skipped = 0, passed = 0
        var offset = position
        var control: Chunk
        while true {
            guard let chunk = try Self.chunk(at: offset, in: reader), !chunk.is("IEND") else { return nil }
            if chunk.is("fcTL") { control = chunk; break }
            if !chunk.is("IDAT") && !chunk.is("fdAT") {
                skipped += 1
                guard skipped <= limits.maximumMetadataBlocks else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: limits.maximumMetadataBlocks, "PNG chunks between frames")
                }
            }
            passed += 1
            if passed & 1023 == 0, isCancelled() { throw AnimationStepCancelled() }
            offset = chunk.end
        }
        guard control.length == 26 else { throw ImageError.decodeFailed(name, reason: "an fcTL chunk of \(control.length) bytes") }
        let fields = try reader.bytes(26)
        guard fields.count == 26 else { throw ImageError.truncated(name) }
        let width = Self.u32be(fields, 4), height = Self.u32be(fields, 8)
        let x = Self.u32be(fields, 12), y = Self.u32be(fields, 16)
        let delayNumerator = Int(fields[20]) << 8 | Int(fields[21]), delayDenominator = Int(fields[22]) << 8 | Int(fields[23])
        var dispose = Int(fields[24])
        let blend = Int(fields[25])
        guard width > 0, height > 0, x <= canvas.width - width, y <= canvas.height - height else {
            throw ImageError.decodeFailed(name, reason: "an APNG frame of \(width)×\(height) at (\(x), \(y)) outside its "
                                          + "\(canvas.width)×\(canvas.height) canvas")
        }
        guard dispose <= 2, blend <= 1 else {
            throw ImageError.decodeFailed(name, reason: "an APNG frame with dispose operation \(dispose) and blend operation \(blend)")
        }
        if framesRead == 0 && dispose == 2 { dispose = 1 }
        // The previous frame goes as it asked only now that a frame follows it: at the end of the
        // sequence the canvas still shows the last frame.
        if let done = disposal {
            switch done.operation {
            case 1: canvas.clear(done.rect)
            case 2: canvas.restore(done.rect, from: done.saved)
            default: break
            }
            disposal = nil
        }
        let rect = PixelRect(x: x, y: y, width: width, height: height, clippedTo: canvasSize)
        let saved = dispose == 2 ? canvas.copy(rect) : []
        let stream = APNGFrameStream(reader: reader, name: name, header: header, frameWidth: width, frameHeight: height,
                                     keptChunks: keptChunks, dataStart: control.end, metadataLimit: limits.maximumMetadataBlocks)
        try decode(stream, into: rect, blendOver: blend == 1, isCancelled: isCancelled)
        position = try stream.endOfFrameData()
        disposal = (dispose, rect, saved)
        framesRead += 1
        return Double(delayNumerator) / Double(delayDenominator == 0 ? 100 : delayDenominator)
    }

    /// libpng decodes the frame's rows from `stream`; each is composited into `rect`.
    private func decode(_ stream: APNGFrameStream, into rect: PixelRect, blendOver: Bool, isCancelled: () -> Bool) throws {
        let png = UnsafeMutablePointer<TesseraPNG>.allocate(capacity: 1)
        png.initialize(to: TesseraPNG())
        defer { tessera_png_close(png); png.deallocate() }
        let context = Unmanaged.passUnretained(stream).toOpaque()
        let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int) -> Int = { context, out, count in
            Unmanaged<APNGFrameStream>.fromOpaque(context!).takeUnretainedValue().read(into: out!, count: count)
        }
        try withExtendedLifetime(stream) {
            let side = UInt32(clamping: max(1, limits.maximumSide))
            guard tessera_png_open(png, context, read, side, SizedDecode.pngChunkLimit) == 0 else { throw failure(png, stream) }
            let rowBytes = tessera_png_row_bytes(png)
            guard Int(tessera_png_width(png)) == rect.width, Int(tessera_png_height(png)) == rect.height, rowBytes == rect.width * 4 else {
                throw ImageError.decodeFailed(name, reason: "an APNG frame whose rows are not \(rect.width) pixels of RGBA")
            }
            let canvasWidth = canvas.width
            func composite(_ row: UnsafePointer<UInt8>, y: Int, into pixels: UnsafeMutablePointer<UInt8>) {
                let base = pixels + ((rect.y + y) * canvasWidth + rect.x) * 4
                for i in 0..<rect.width {
                    let s = row + i * 4, d = base + i * 4
                    let alpha = s[3]
                    let r = AnimationCanvas.premultiply(s[0], alpha), g = AnimationCanvas.premultiply(s[1], alpha)
                    let b = AnimationCanvas.premultiply(s[2], alpha)
                    if !blendOver || alpha == 255 {
                        d[0] = r; d[1] = g; d[2] = b; d[3] = alpha
                    } else if alpha != 0 {
                        let rest = UInt32(255 - alpha)
                        func over(_ source: UInt8, _ destination: UInt8) -> UInt8 {
                            UInt8(min(255, UInt32(source) + (UInt32(destination) * rest + 127) / 255))
                        }
                        d[0] = over(r, d[0]); d[1] = over(g, d[1]); d[2] = over(b, d[2]); d[3] = over(alpha, d[3])
                    }
                }
            }
            if tessera_png_interlaced(png) != 0 {
                guard ByteCount.product(rowBytes, rect.height) <= limits.workingMemoryBytes else {
                    throw ImageError.overLimit(name, reason: "an interlaced APNG frame of \(rect.width)×\(rect.height) pixels is over the working-memory limit")
                }
                var image = [UInt8](repeating: 0, count: rowBytes * rect.height)
                try image.withUnsafeMutableBufferPointer { image in
                    var rows = (0..<rect.height).map { Optional(image.baseAddress! + $0 * rowBytes) }
                    guard tessera_png_read_image(png, &rows) == 0 else { throw failure(png, stream) }
                    if isCancelled() { throw AnimationStepCancelled() }
                    canvas.withPixels { pixels in
                        for y in 0..<rect.height { composite(image.baseAddress! + y * rowBytes, y: y, into: pixels) }
                    }
                }
            } else {
                var row = [UInt8](repeating: 0, count: rowBytes)
                try row.withUnsafeMutableBufferPointer { row in
                    for y in 0..<rect.height {
                        if y & 63 == 0, isCancelled() { throw AnimationStepCancelled() }
                        guard tessera_png_read_row(png, row.baseAddress) == 0 else { throw failure(png, stream) }
                        canvas.withPixels { composite(row.baseAddress!, y: y, into: $0) }
                    }
                }
            }
        }
    }

    private func failure(_ png: UnsafeMutablePointer<TesseraPNG>, _ stream: APNGFrameStream) -> ImageError {
        if let failure = reader.failure { return failure }
        let message = withUnsafeBytes(of: png.pointee.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if message.contains("cut short") { return .truncated(name) }
        return .decodeFailed(name, reason: message.isEmpty ? "libpng failed on an APNG frame" : message)
    }

    func withCanvas<R>(_ body: (UnsafePointer<UInt8>) throws -> R) throws -> R {
        try canvas.withPixels { try body(UnsafePointer($0)) }
    }

    func rewind() throws {
        canvas.clear()
        disposal = nil
        position = sequenceStart
        framesRead = 0
    }
}

/// One APNG frame as a PNG of its own, read by libpng as it asks: the signature, a header chunk with
/// the frame's size, the file's palette and transparency chunks, then the frame's data chunks from the
/// file as `IDAT` chunks (an `fdAT` chunk loses its sequence number and gets a CRC of its own, its
/// stored CRC checked as it streams past), then an end chunk. Nothing is held but the chunk in hand.
/// - Thread: the one decoding thread that made it
final class APNGFrameStream {
    private let reader: EncodedReader
    private let name: String
    /// Bytes to give before anything else: the made-up start, a chunk header, a CRC.
    private var pending: [UInt8]
    private var pendingOffset = 0
    /// The data chunk being streamed: where it is read from, how much is left, its CRCs.
    private var chunkOffset = 0
    private var chunkLeft = 0
    private var storedCRC = CRC32()
    private var madeCRC = CRC32()
    /// Ancillary chunks passed between the frame's control chunk and its data.
    private var metadataPassed = 0
    /// Where the next chunk of the frame's data may start.
    private var nextChunk: Int
    /// The kind of data chunk the frame uses (IDAT or fdAT), set by its first.
    private var dataType: [UInt8]?
    private var ended = false
    /// What the frame's data chunks may still take, headers included.
    private var budget: Int
    private let metadataLimit: Int

    private static let endChunk: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    init(reader: EncodedReader, name: String, header: APNGAnimation.Header, frameWidth: Int, frameHeight: Int,
         keptChunks: [UInt8], dataStart: Int, metadataLimit: Int) {
        self.reader = reader
        self.name = name
        self.metadataLimit = metadataLimit
        nextChunk = dataStart
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xFF) } }
        let ihdr = Array("IHDR".utf8) + be32(frameWidth) + be32(frameHeight) + [header.depth, header.colour, 0, 0, header.interlace]
        var crc = CRC32()
        crc.add(ihdr)
        pending = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ihdr + be32(Int(crc.value)) + keptChunks
        let channels = PNGChunkStream.channels(colourType: Int(header.colour), depth: Int(header.depth)) ?? 4
        let rowBits = ByteCount.product(frameWidth, channels, Int(header.depth))
        let rowBytes = ByteCount.sum(rowBits / 8, rowBits % 8 == 0 ? 0 : 1, 1)
        let raw = ByteCount.sum(ByteCount.product(rowBytes, frameHeight), ByteCount.product(frameHeight, 7))
        budget = ByteCount.sum(ByteCount.product(raw, 2), 64 << 10)
    }

    /// Gives libpng `count` bytes (fewer only where the frame's data ends), or -1 with the reader's
    /// failure set.
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
                    reader.seek(to: chunkOffset)
                    let n = try reader.read(into: destination + done, count: min(count - done, chunkLeft))
                    if n == 0 { break }
                    let bytes = UnsafeBufferPointer(start: destination + done, count: n)
                    storedCRC.add(bytes)
                    madeCRC.add(bytes)
                    chunkOffset += n
                    chunkLeft -= n
                    done += n
                    if chunkLeft == 0 { try finishChunk() }
                } else if !(try startNextChunk()) {
                    break
                }
            }
            return done
        } catch {
            return reader.fail(error)
        }
    }

    /// Readies the next data chunk (its made-up header), or the end chunk once the data ends; false
    /// after the end chunk.
    private func startNextChunk() throws -> Bool {
        pending = []
        pendingOffset = 0
        guard !ended else { return false }
        while true {
            reader.seek(to: nextChunk)
            let head = try reader.bytes(8)
            guard head.count == 8 else {
                // The file ends after the frame's data: libpng has all there is.
                guard dataType != nil else { throw ImageError.truncated(name) }
                ended = true
                pending = Self.endChunk
                return true
            }
            let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            guard length <= Int(Int32.max) else { throw ImageError.decodeFailed(name, reason: "a PNG chunk of \(length) bytes") }
            let type = Array(head[4..<8])
            let isData = type.elementsEqual("IDAT".utf8) || type.elementsEqual("fdAT".utf8)
            if let dataType, type != dataType {
                ended = true
                pending = Self.endChunk
                return true
            }
            guard isData else {
                // Before the frame's data stand ancillary chunks, and the palette and transparency
                // chunks (given already) when the first frame's control chunk precedes them.
                let isGiven = type.elementsEqual("PLTE".utf8) || type.elementsEqual("tRNS".utf8)
                let isFrameBoundary = type.elementsEqual("fcTL".utf8) || type.elementsEqual("IEND".utf8)
                guard isGiven || (type[0] & 0x20 != 0 && !isFrameBoundary) else {
                    throw ImageError.decodeFailed(name, reason: "an APNG frame without image data")
                }
                metadataPassed += 1
                guard metadataPassed <= metadataLimit else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: metadataLimit, "PNG chunks before a frame's data")
                }
                nextChunk += 12 + length
                continue
            }
            dataType = type
            let isSequenced = type.elementsEqual("fdAT".utf8)
            guard !isSequenced || length >= 4 else { throw ImageError.decodeFailed(name, reason: "an fdAT chunk of \(length) bytes") }
            let (spent, overflow) = budget.subtractingReportingOverflow(12 + length)
            guard !overflow, spent >= 0 else {
                throw ImageError.decodeFailed(name, reason: "more compressed image data than an APNG frame can need")
            }
            budget = spent
            storedCRC = CRC32()
            storedCRC.add(type)
            madeCRC = CRC32()
            madeCRC.add(Array("IDAT".utf8))
            chunkOffset = nextChunk + 8
            if isSequenced {
                let sequence = try reader.bytes(4)
                guard sequence.count == 4 else { throw ImageError.truncated(name) }
                storedCRC.add(sequence)
                chunkOffset += 4
            }
            let dataLength = isSequenced ? length - 4 : length
            chunkLeft = dataLength
            nextChunk += 12 + length
            pending = [UInt8((dataLength >> 24) & 0xFF), UInt8((dataLength >> 16) & 0xFF), UInt8((dataLength >> 8) & 0xFF),
                       UInt8(dataLength & 0xFF)] + Array("IDAT".utf8)
            if dataLength == 0 { try finishChunk() }
            return true
        }
    }

    /// The data chunk has been given whole: its stored CRC is checked and the made one follows.
    private func finishChunk() throws {
        reader.seek(to: chunkOffset)
        let stored = try reader.bytes(4)
        guard stored.count == 4 else { throw ImageError.truncated(name) }
        let value = UInt32(stored[0]) << 24 | UInt32(stored[1]) << 16 | UInt32(stored[2]) << 8 | UInt32(stored[3])
        guard value == storedCRC.value else {
            throw ImageError.decodeFailed(name, reason: "a CRC error in an APNG frame's data")
        }
        let made = madeCRC.value
        pending += [UInt8(made >> 24), UInt8((made >> 16) & 0xFF), UInt8((made >> 8) & 0xFF), UInt8(made & 0xFF)]
    }

    /// Walks past what is left of the frame's data chunks (libpng stops reading once it has its rows)
    /// and returns where the chunk after them starts.
    func endOfFrameData() throws -> Int {
        guard let dataType else { return nextChunk }
        while !ended {
            reader.seek(to: nextChunk)
            let head = try reader.bytes(8)
            guard head.count == 8, Array(head[4..<8]) == dataType else { break }
            let length = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
            let (spent, overflow) = budget.subtractingReportingOverflow(12 + length)
            guard !overflow, spent >= 0 else {
                throw ImageError.decodeFailed(name, reason: "more compressed image data than an APNG frame can need")
            }
            budget = spent
            nextChunk += 12 + length
        }
        return nextChunk
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
