import Compositor
internal import CGIF

/// A GIF's frames composited as browsers do, through giflib's sequential reader: the canvas starts
/// transparent; each frame is drawn at its offset (clipped to the canvas: a frame wholly outside it
/// is passed over undecompressed, one partly on it decompressed down to its last row on the canvas,
/// and one that would still cost more than four times the canvas is refused), its transparent colour
/// index leaving the canvas as it was; before the next frame, disposal 2 clears the frame's
/// rectangle to transparent and disposal 3 puts back what was under it (0 and 1 leave it). The
/// graphic-control extension before a frame gives its delay (centiseconds), transparency and
/// disposal; the NETSCAPE2.0 (or ANIMEXTS1.0) application extension the loop count.
///
/// The file is read as the frames are decoded, never held: giflib reads through the decode's
/// `EncodedReader`, and rewinding moves the reader back to the block after the global colour table.
/// giflib is only asked for image headers (`DGifGetImageHeader`), which keep nothing per frame, so
/// memory stays flat however long the animation plays.
/// - Thread: one at a time (owned by its `AnimatedImageDecoder`)
final class GIFAnimation: AnimationBackend {
    private let reader: EncodedReader
    private let name: String
    private let limits: ImageDecoder.Limits
    /// The read function and its context, which giflib keeps a pointer to: allocated here, freed last.
    private let gifReader: UnsafeMutablePointer<TesseraGIFReader>
    private let gif: UnsafeMutablePointer<GifFileType>
    /// Where the blocks start: after the screen descriptor and the global colour table.
    private let firstBlockOffset: Int
    private var canvas: AnimationCanvas
    /// What the frame on the canvas asks to be done before the next one.
    private var disposal: PendingDisposal?
    private(set) var playCount = 1

    var canvasSize: (width: Int, height: Int) { (canvas.width, canvas.height) }
    var heldBytes: Int { ByteCount.product(canvas.byteCount, 2) }
    var stepBytes: Int {
        // A row of indices, or a whole interlaced frame as large as the canvas.
        ByteCount.sum(ByteCount.product(canvas.width, canvas.height), ByteCount.product(canvas.width, 8))
    }

    /// The animation in `reader`, when its header walk found a GIF with a second frame; nil for a
    /// GIF of one frame.
    static func open(_ reader: EncodedReader, layout: ImageDecoder.Layout, limits: ImageDecoder.Limits) throws -> GIFAnimation? {
        guard try hasSecondFrame(reader, layout: layout, metadataLimit: limits.maximumMetadataBlocks) else { return nil }
        try AnimatedImageDecoder.checkHeldBytes(ByteCount.product(layout.header.width, layout.header.height, 4, 2),
                                                "this animated GIF", source: reader.name, limits: limits)
        return try GIFAnimation(reader: reader, canvas: (layout.header.width, layout.header.height), limits: limits)
    }

    private init(reader: EncodedReader, canvas size: (width: Int, height: Int), limits: ImageDecoder.Limits) throws {
        self.reader = reader
        self.name = reader.name
        self.limits = limits
        canvas = AnimationCanvas(width: size.width, height: size.height)
        reader.seek(to: 0)
        gifReader = .allocate(capacity: 1)
        gifReader.initialize(to: TesseraGIFReader(context: Unmanaged.passUnretained(reader).toOpaque(), read: ReaderCallbacks.read))
        var error: Int32 = 0
        guard let gif = tessera_gif_open(gifReader, &error) else {
            gifReader.deallocate()
            throw Self.failure(error, reader: reader)
        }
        self.gif = gif
        firstBlockOffset = reader.position
    }

    deinit {
        var error: Int32 = 0
        _ = DGifCloseFile(gif, &error)
        gifReader.deallocate()
    }

    /// Walks the blocks after the first frame (whose descriptor the header walk found) by their
    /// lengths, without decoding, until a second image descriptor (true) or the trailer or the end of
    /// the bytes (false).
    private static func hasSecondFrame(_ reader: EncodedReader, layout: ImageDecoder.Layout, metadataLimit: Int) throws -> Bool {
        reader.seek(to: layout.gifFrameOffset + 1)
        let descriptor = try reader.bytes(9)
        guard descriptor.count == 9 else { return false }
        if descriptor[8] & 0x80 != 0 { reader.skip(3 << (Int(descriptor[8] & 0x07) + 1)) }
        reader.skip(1)  // the LZW code size
        func skipSubBlocks() throws -> Bool {
            while true {
                guard let size = try reader.byte() else { return false }
                if size == 0 { return true }
                reader.skip(Int(size))
            }
        }
        guard try skipSubBlocks() else { return false }
        var extensions = 0
        while let introducer = try reader.byte() {
            switch introducer {
            case 0x2C: return true
            case 0x21:
                extensions += 1
                guard extensions <= metadataLimit else {
                    throw ImageDecoder.tooManyMetadataBlocks(reader.name, limit: metadataLimit, "GIF extensions between frames")
                }
                reader.skip(1)  // the label
                guard try skipSubBlocks() else { return false }
            default:
                return false  // the trailer, or bytes that are no block: the first frame is all there is
            }
        }
        return false
    }

    func compositeNextFrame(isCancelled: () -> Bool) throws -> Double? {
        var delay = 0, transparentIndex = -1, disposalMethod = 0
        var extensions = 0
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                // The bytes end between two blocks: a GIF without its trailer ends its sequence here.
                if reader.failure == nil, gif.pointee.Error == D_GIF_ERR_READ_FAILED, reader.position >= reader.size { return nil }
                throw failure()
            }
            switch record {
            case TERMINATE_RECORD_TYPE:
                return nil
            case EXTENSION_RECORD_TYPE:
                extensions += 1
                guard extensions <= limits.maximumMetadataBlocks else {
                    throw ImageDecoder.tooManyMetadataBlocks(name, limit: limits.maximumMetadataBlocks, "GIF extensions before a frame")
                }
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure() }
                var loopCountFollows = false
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                    disposalMethod = Int(block[1] >> 2) & 0x07
                    delay = Int(block[2]) | Int(block[3]) << 8
                    transparentIndex = block[1] & 0x01 != 0 ? Int(block[4]) : -1
                } else if code == APPLICATION_EXT_FUNC_CODE, let block, block[0] == 11 {
                    let identifier = (1...11).map { block[$0] }
                    loopCountFollows = identifier.elementsEqual("NETSCAPE2.0".utf8) || identifier.elementsEqual("ANIMEXTS1.0".utf8)
                }
                var subBlocks = 0
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure() }
                    if loopCountFollows, let data = block, data[0] >= 3, data[1] == 1 {
                        let count = Int(data[2]) | Int(data[3]) << 8
                        playCount = count == 0 ? 0 : count + 1
                        loopCountFollows = false
                    }
                    subBlocks += 1
                    if subBlocks & 4095 == 0, isCancelled() { throw AnimationStepCancelled() }
                }
            case IMAGE_DESC_RECORD_TYPE:
                try checkCodeSize()
                guard DGifGetImageHeader(gif) == GIF_OK else { throw failure() }
                try drawFrame(transparentIndex: transparentIndex, disposal: disposalMethod, isCancelled: isCancelled)
                return Double(delay) / 100
            default:
                throw ImageError.decodeFailed(name, reason: "an unknown GIF block")
            }
        }
    }

    /// Refuses an LZW code size outside 2–8 bits before giflib reads it (as the header walk does for
    /// the first frame): the reader stands at the image descriptor, after its introducer.
    private func checkCodeSize() throws {
        let start = reader.position
        defer { reader.seek(to: start) }
        let descriptor = try reader.bytes(9)
        guard descriptor.count == 9 else { throw ImageError.truncated(name) }
        if descriptor[8] & 0x80 != 0 { reader.skip(3 << (Int(descriptor[8] & 0x07) + 1)) }
        guard let codeSize = try reader.byte() else { throw ImageError.truncated(name) }
        guard (2...8).contains(codeSize) else {
            throw ImageError.decodeFailed(name, reason: "a GIF frame with an LZW code size of \(codeSize) bits")
        }
    }

    private func drawFrame(transparentIndex: Int, disposal method: Int, isCancelled: () -> Bool) throws {
        let image = gif.pointee.Image
        let left = Int(image.Left), top = Int(image.Top), width = Int(image.Width), height = Int(image.Height)
        guard width > 0, height > 0 else {
            throw ImageError.decodeFailed(name, reason: "a GIF frame of \(width)×\(height) pixels")
        }
        guard width <= limits.maximumSide, height <= limits.maximumSide, width * height <= limits.maximumPixelCount else {
            throw ImageError.tooLarge(name, width: width, height: height)
        }
        guard let map = image.ColorMap ?? gif.pointee.SColorMap, map.pointee.ColorCount > 0 else {
            throw ImageError.decodeFailed(name, reason: "a GIF frame without a colour table")
        }
        // Indices past the colour table, like the transparent one, leave the canvas as it is.
        var palette = [UInt32](repeating: 0, count: 256)
        var drawn = [Bool](repeating: false, count: 256)
        for i in 0..<min(256, Int(map.pointee.ColorCount)) where i != transparentIndex {
            let c = map.pointee.Colors[i]
            palette[i] = UInt32(c.Red) | UInt32(c.Green) << 8 | UInt32(c.Blue) << 16 | 0xFF00_0000
            drawn[i] = true
        }
        // The previous frame goes as it asked only now that a frame follows it: at the end of the
        // sequence the canvas still shows the last frame.
        if let done = disposal { canvas.dispose(done) }
        let rect = PixelRect(x: left, y: top, width: width, height: height, clippedTo: canvasSize)
        disposal = canvas.pending(method == 2 ? .clear : method == 3 ? .restore : .keep, over: rect)
        // A frame wholly outside the canvas shows nothing: its data is passed over, not decompressed.
        guard !rect.isEmpty else { return try skipFrameData(isCancelled: isCancelled) }
        let interlaced = image.Interlace
        guard !interlaced || ByteCount.product(width, height) <= limits.workingMemoryBytes else {
            throw ImageError.overLimit(name, reason: "an interlaced GIF frame of \(width)×\(height) pixels is over the working-memory limit")
        }
        // Rows are decompressed in order down to the last one on the canvas (an interlaced frame's
        // passes cover every row); the rest of the data is passed over. What that costs is bounded
        // by the canvas.
        let rowsNeeded = interlaced ? height : min(height, canvas.height - top)
        let work = ByteCount.product(rowsNeeded, width)
        guard work <= maximumFrameWork else {
            throw ImageError.overLimit(name, reason: "a GIF frame of \(width)×\(height) at (\(left), \(top)) would decompress "
                                       + "\(work) pixels for its \(canvas.width)×\(canvas.height) canvas; the most a frame may is "
                                       + "\(maximumFrameWork)")
        }
        var indices = [GifPixelType](repeating: 0, count: interlaced ? width * height : width)
        let canvasWidth = canvas.width, canvasHeight = canvas.height
        let gif = self.gif
        /// Draws frame row `row` (in the frame) from `line` onto the canvas.
        func draw(_ line: UnsafePointer<GifPixelType>, row: Int, into pixels: UnsafeMutablePointer<UInt8>) {
            let y = top + row
            guard y >= 0, y < canvasHeight, !rect.isEmpty else { return }
            let base = pixels + y * canvasWidth * 4
            for x in max(0, -left)..<min(width, canvasWidth - left) {
                let index = Int(line[x])
                guard drawn[index] else { continue }
                let colour = palette[index]
                let p = base + (left + x) * 4
                p[0] = UInt8(colour & 0xFF); p[1] = UInt8((colour >> 8) & 0xFF); p[2] = UInt8((colour >> 16) & 0xFF); p[3] = 255
            }
        }
        var rowsDecoded = 0
        defer { DecodeWork.add(\.gifFramePixels, rowsDecoded * width) }
        try indices.withUnsafeMutableBufferPointer { indices in
            try canvas.withPixels { pixels in
                if interlaced {
                    for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
                        for y in stride(from: start, to: height, by: step) {
                            if y & 63 == 0, isCancelled() { throw AnimationStepCancelled() }
                            guard DGifGetLine(gif, indices.baseAddress! + y * width, Int32(width)) == GIF_OK else { throw failure() }
                            rowsDecoded += 1
                        }
                    }
                    for y in 0..<height { draw(indices.baseAddress! + y * width, row: y, into: pixels) }
                } else {
                    for y in 0..<rowsNeeded {
                        if y & 63 == 0, isCancelled() { throw AnimationStepCancelled() }
                        guard DGifGetLine(gif, indices.baseAddress!, Int32(width)) == GIF_OK else { throw failure() }
                        rowsDecoded += 1
                        draw(indices.baseAddress!, row: y, into: pixels)
                    }
                }
            }
        }
        if rowsDecoded < height { try skipFrameData(isCancelled: isCancelled) }
    }

    /// The most pixels one frame may have decompressed: four times the canvas, or 256 K pixels for a
    /// small one. A frame within the canvas costs at most the canvas; one reaching far past it (wider,
    /// or above a canvas it only touches at its last rows) is refused rather than decompressed.
    private var maximumFrameWork: Int { max(ByteCount.product(canvas.width, canvas.height, 4), 1 << 18) }

    /// Passes over the rest of the frame's compressed data, its sub-blocks read but not decompressed
    /// (giflib then stands at the next block, as after a frame's last row).
    private func skipFrameData(isCancelled: () -> Bool) throws {
        var block: UnsafeMutablePointer<GifByteType>?
        var codeSize: Int32 = 0
        guard DGifGetCode(gif, &codeSize, &block) == GIF_OK else { throw failure() }
        var blocks = 0
        while block != nil {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { throw failure() }
            blocks += 1
            if blocks & 4095 == 0, isCancelled() { throw AnimationStepCancelled() }
        }
    }

    func withCanvas<R>(_ body: (UnsafePointer<UInt8>) throws -> R) throws -> R {
        try canvas.withPixels { try body(UnsafePointer($0)) }
    }

    func rewind() throws {
        canvas.clear()
        disposal = nil
        reader.seek(to: firstBlockOffset)
    }

    private func failure() -> ImageError { Self.failure(gif.pointee.Error, reader: reader) }

    private static func failure(_ code: Int32, reader: EncodedReader) -> ImageError {
        if let failure = reader.failure { return failure }
        if code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON { return .truncated(reader.name) }
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return .decodeFailed(reader.name, reason: message)
    }
}
