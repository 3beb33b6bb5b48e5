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
/// The file is read as the frames are decoded, never held, and its chunks are walked once: the first
/// play notes where each frame's control chunk and data lie (`FrameLocation`, 24 bytes a frame, for
/// the first 65,536 frames), and later plays go straight to them, so what lies between frames is never
/// walked again. A frame's data may not pass twice what its pixels need stored uncompressed (plus
/// 64 KB), as for a still PNG, nor come in more than `64 + uncompressed / 64` chunks
/// (`PNGDataAllowance`); nor may a hidden default image's. Between two frames, more than
/// `maximumMetadataBlocks` chunks that belong to no frame (metadata, and data chunks outside a
/// frame's data) are refused; a frame outside the canvas, an unknown dispose or blend operation, a
/// data chunk whose CRC does not match, are errors.
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
    /// Where the walk for the next frame's `fcTL` starts, when the next frame is not indexed.
    private var position: Int
    private var framesRead = 0
    private var canvas: AnimationCanvas
    private var disposal: PendingDisposal?
    let playCount: Int

    /// Where a frame lies in the file, noted when the first play reaches it.
    private struct FrameLocation {
        /// Its `fcTL` chunk.
        var control: Int
        /// Its first data chunk.
        var data: Int
        /// The chunk after its data.
        var end: Int
    }
    /// The frames found so far, in order (at most `maximumIndexedFrames`).
    private var index: [FrameLocation] = []
    /// Whether the walk after the last indexed frame found no further frame (the end chunk, or the
    /// end of the bytes).
    private var indexEndsSequence = false
    /// Frames beyond this many are found by walking on every play (their locations not kept).
    static let maximumIndexedFrames = 1 << 16

    var canvasSize: (width: Int, height: Int) { (canvas.width, canvas.height) }
    var heldBytes: Int {
        ByteCount.sum(ByteCount.product(canvas.byteCount, 2), ByteCount.product(index.capacity, MemoryLayout<FrameLocation>.stride))
    }
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

    private static func u32be(_ bytes: [UInt8], _ i: Int) -> Int {
        Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
    }

    /// The animation in a PNG: nil unless an `acTL` chunk before the image data claims two frames or
    /// more (a plain PNG, or an APNG of one frame, is a still image).
    static func open(_ reader: EncodedReader, limits: ImageDecoder.Limits) throws -> APNGAnimation? {
        let name = reader.name
        guard let first = try PNGChunkHeader.read(reader, at: 8), first.type == .IHDR, first.length == 13 else { return nil }
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
            guard let chunk = try PNGChunkHeader.read(reader, at: offset) else { throw ImageError.truncated(name) }
            if chunk.type == .IDAT { break }
            if chunk.type == .IEND { throw ImageError.truncated(name) }
            if chunk.type == .acTL {
                guard chunk.length == 8 else { throw ImageError.decodeFailed(name, reason: "an acTL chunk of \(chunk.length) bytes") }
                let data = try reader.bytes(8)
                guard data.count == 8 else { throw ImageError.truncated(name) }
                control = (u32be(data, 0), u32be(data, 4))
            } else if chunk.type == .fcTL {
                if firstFrameControl == nil { firstFrameControl = offset }
            } else if chunk.type == .PLTE || chunk.type == .tRNS {
                guard chunk.length <= 4_096 else {
                    throw ImageError.decodeFailed(name, reason: "a PNG \(chunk.type.name) chunk of \(chunk.length) bytes")
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
        var chunksRead = 0
        defer { DecodeWork.add(\.apngChunks, chunksRead) }
        let known = framesRead < index.count ? index[framesRead] : nil
        let control: PNGChunkHeader
        if let known {
            chunksRead += 1
            guard let chunk = try PNGChunkHeader.read(reader, at: known.control), chunk.type == .fcTL else {
                throw ImageError.decodeFailed(name, reason: "the APNG's frames moved")  // the bytes are the same on every play
            }
            control = chunk
        } else {
            if indexEndsSequence && framesRead == index.count { return nil }
            guard let found = try nextFrameControl(chunksRead: &chunksRead, isCancelled: isCancelled) else {
                if framesRead == index.count { indexEndsSequence = true }
                return nil
            }
            control = found
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
        if let done = disposal { canvas.dispose(done) }
        let rect = PixelRect(x: x, y: y, width: width, height: height, clippedTo: canvasSize)
        let pending = canvas.pending([FrameDisposal.keep, .clear, .restore][dispose], over: rect)
        let stream = APNGFrameStream(reader: reader, name: name, header: header, frameWidth: width, frameHeight: height,
                                     keptChunks: keptChunks, dataStart: known?.data ?? control.end,
                                     metadataLimit: limits.maximumMetadataBlocks)
        defer { chunksRead += stream.chunksRead }
        try decode(stream, into: rect, blendOver: blend == 1, isCancelled: isCancelled)
        if let known {
            position = known.end
        } else {
            position = try stream.endOfFrameData()
            if index.count < Self.maximumIndexedFrames, let data = stream.firstDataChunk {
                index.append(FrameLocation(control: control.offset, data: data, end: position))
            }
        }
        disposal = pending
        framesRead += 1
        return Double(delayNumerator) / Double(delayDenominator == 0 ? 100 : delayDenominator)
    }

    /// Walks from `position` to the next frame's `fcTL` chunk (nil at the end chunk or the end of the
    /// bytes), past metadata chunks and, before the first frame, a hidden default image's data: at
    /// most `maximumMetadataBlocks` chunks that belong to no frame (a data chunk there carries no
    /// frame's data, so it counts as one), and the default image's data within its
    /// `PNGDataAllowance`. Counts the chunks it reads in `chunksRead`.
    private func nextFrameControl(chunksRead: inout Int, isCancelled: () -> Bool) throws -> PNGChunkHeader? {
        var skipped = 0
        var offset = position
        // Before the first frame, the walk starts at a hidden default image's first data chunk.
        var hiddenImage = PNGDataAllowance(width: header.width, height: header.height, colourType: Int(header.colour),
                                           depth: Int(header.depth), capsChunks: true)
        var inHiddenImage = framesRead == 0
        while true {
            chunksRead += 1
            guard let chunk = try PNGChunkHeader.read(reader, at: offset), chunk.type != .IEND else { return nil }
            if chunk.type == .fcTL { return chunk }
            if chunk.type == .IDAT && inHiddenImage {
                switch hiddenImage.spend(chunkLength: chunk.length) {
                case nil: break
                case .bytes?: throw ImageError.decodeFailed(name, reason: "more compressed image data than an APNG's default image can need")
                case .chunks?:
                    throw ImageError.decodeFailed(name, reason: "an APNG's default image in more than \(hiddenImage.chunkLimit) data chunks")
                }
            } else {
                inHiddenImage = false
                skipped += 1
                guard skipped <= limits.maximumMetadataBlocks else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: limits.maximumMetadataBlocks, "PNG chunks between frames")
                }
            }
            if chunksRead & 1023 == 0, isCancelled() { throw AnimationStepCancelled() }
            offset = chunk.end
        }
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
    private var dataType: PNGChunkType?
    private var ended = false
    /// What the frame's data chunks may still take: bytes, headers included, and chunks.
    private var allowance: PNGDataAllowance
    private let metadataLimit: Int
    /// Where the frame's first data chunk starts, once found.
    private(set) var firstDataChunk: Int?
    /// Chunk headers read so far.
    private(set) var chunksRead = 0

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
        allowance = PNGDataAllowance(width: frameWidth, height: frameHeight, colourType: Int(header.colour),
                                     depth: Int(header.depth), capsChunks: true)
    }

    /// The next chunk's header, counted; nil where the bytes end.
    private func chunk(at offset: Int) throws -> PNGChunkHeader? {
        chunksRead += 1
        return try PNGChunkHeader.read(reader, at: offset)
    }

    /// Takes a data chunk of `length` bytes out of the allowance, or refuses the frame.
    private func spend(_ length: Int) throws {
        switch allowance.spend(chunkLength: length) {
        case nil: return
        case .bytes?: throw ImageError.decodeFailed(name, reason: "more compressed image data than an APNG frame can need")
        case .chunks?: throw ImageError.decodeFailed(name, reason: "an APNG frame's data in more than \(allowance.chunkLimit) data chunks")
        }
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
            guard let chunk = try chunk(at: nextChunk) else {
                // The file ends after the frame's data: libpng has all there is.
                guard dataType != nil else { throw ImageError.truncated(name) }
                ended = true
                pending = PNGChunkHeader.endChunk
                return true
            }
            let length = chunk.length, type = chunk.type
            let isData = type == .IDAT || type == .fdAT
            if let dataType, type != dataType {
                ended = true
                pending = PNGChunkHeader.endChunk
                return true
            }
            guard isData else {
                // Before the frame's data stand ancillary chunks, and the palette and transparency
                // chunks (given already) when the first frame's control chunk precedes them.
                let isGiven = type == .PLTE || type == .tRNS
                let isFrameBoundary = type == .fcTL || type == .IEND
                guard isGiven || (type.isAncillary && !isFrameBoundary) else {
                    throw ImageError.decodeFailed(name, reason: "an APNG frame without image data")
                }
                metadataPassed += 1
                guard metadataPassed <= metadataLimit else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: metadataLimit, "PNG chunks before a frame's data")
                }
                nextChunk = chunk.end
                continue
            }
            if dataType == nil { firstDataChunk = chunk.offset }
            dataType = type
            let isSequenced = type == .fdAT
            guard !isSequenced || length >= 4 else { throw ImageError.decodeFailed(name, reason: "an fdAT chunk of \(length) bytes") }
            try spend(length)
            storedCRC = CRC32()
            storedCRC.add(Array(chunk.bytes[4..<8]))
            madeCRC = CRC32()
            madeCRC.add(Array("IDAT".utf8))
            chunkOffset = chunk.dataOffset
            if isSequenced {
                let sequence = try reader.bytes(4)
                guard sequence.count == 4 else { throw ImageError.truncated(name) }
                storedCRC.add(sequence)
                chunkOffset += 4
            }
            let dataLength = isSequenced ? length - 4 : length
            chunkLeft = dataLength
            nextChunk = chunk.end
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

    /// Walks past what is left of the frame's data chunks (libpng stops reading once it has its rows),
    /// within the frame's allowance, and returns where the chunk after them starts.
    func endOfFrameData() throws -> Int {
        guard let dataType else { return nextChunk }
        while !ended {
            guard let chunk = try chunk(at: nextChunk), chunk.type == dataType else { break }
            try spend(chunk.length)
            nextChunk = chunk.end
        }
        return nextChunk
    }
}
