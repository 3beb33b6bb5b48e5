import Compositor
internal import CWebP

/// An animated WebP's frames through libwebp's `WebPAnimDecoder` (libwebpdemux), which composites
/// each frame onto its own canvas (blending, disposal to transparent, the background colour ignored
/// as browsers ignore it) in premultiplied RGBA. `WebPAnimDecoder` reads the file in place, so the
/// file's bytes are held while the animation plays, with libwebp's two canvases and its index of
/// frames (about 128 bytes a frame, counted from the file's `ANMF` chunks before libwebp sees it):
/// all of it is counted against `workingMemoryBytes` when the decoder is opened.
/// - Thread: one at a time (owned by its `AnimatedImageDecoder`)
final class WebPAnimation: AnimationBackend {
    private let name: String
    /// The file's bytes, which libwebp reads from for as long as its decoder lives.
    private let data: UnsafeMutableRawBufferPointer
    private let decoder: OpaquePointer
    private let frameCount: Int
    /// The canvas of the last frame, owned by libwebp (valid until the next step or rewind).
    private var canvas: UnsafeMutablePointer<UInt8>?
    /// The end time of the last frame, in milliseconds from the start of the sequence.
    private var lastTimestamp: Int32 = 0
    let canvasSize: (width: Int, height: Int)
    let playCount: Int
    let heldBytes: Int
    var stepBytes: Int { 0 }

    /// The estimated cost of one frame in libwebp's index of them.
    static let bytesPerFrameIndexed = 128

    private init(name: String, data: UnsafeMutableRawBufferPointer, decoder: OpaquePointer, info: WebPAnimInfo, heldBytes: Int) {
        self.name = name
        self.data = data
        self.decoder = decoder
        frameCount = Int(info.frame_count)
        canvasSize = (Int(info.canvas_width), Int(info.canvas_height))
        playCount = Int(info.loop_count)
        self.heldBytes = heldBytes
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
        data.deallocate()
    }

    /// The animation in a WebP file: nil unless its extended header has the animation flag and it
    /// holds two frames or more.
    static func open(_ reader: EncodedReader, limits: ImageDecoder.Limits) throws -> WebPAnimation? {
        let name = reader.name
        reader.seek(to: 0)
        let head = try reader.bytes(30)
        guard head.count >= 30, head[12..<16].elementsEqual("VP8X".utf8), head[20] & 0x02 != 0 else { return nil }
        func u24le(_ i: Int) -> Int { Int(head[i]) | Int(head[i + 1]) << 8 | Int(head[i + 2]) << 16 }
        let canvasBytes = ByteCount.product(u24le(24) + 1, u24le(27) + 1, 4, 2)
        // The container's end, from its header: bytes after it are not the image's; a container that
        // ends past the bytes is cut short.
        let riffEnd = 8 + (Int(head[4]) | Int(head[5]) << 8 | Int(head[6]) << 16 | Int(head[7]) << 24)
        guard riffEnd <= reader.size else { throw ImageError.truncated(name) }
        // The frames, counted by walking the chunks by their lengths before libwebp indexes them.
        var frames = 0
        var offset = 12
        while offset + 8 <= riffEnd {
            reader.seek(to: offset)
            let chunk = try reader.bytes(8)
            guard chunk.count == 8 else { break }
            if chunk[0..<4].elementsEqual("ANMF".utf8) { frames += 1 }
            let length = Int(chunk[4]) | Int(chunk[5]) << 8 | Int(chunk[6]) << 16 | Int(chunk[7]) << 24
            // A chunk that runs past the end: the animation is cut short.
            guard offset + 8 + length <= riffEnd else { throw ImageError.truncated(name) }
            offset += 8 + length + (length & 1)
        }
        guard frames >= 2 else { return nil }
        let held = ByteCount.sum(riffEnd, canvasBytes, ByteCount.product(frames, bytesPerFrameIndexed))
        guard held <= limits.workingMemoryBytes else {
            throw ImageError.overLimit(name, reason: "this animated WebP of \(frames) frames holds \(held / 1_000_000) MB "
                                       + "while it plays; the limit is \(limits.workingMemoryBytes / 1_000_000) MB")
        }
        // The file's bytes, read straight into the buffer libwebp keeps reading from.
        let size = riffEnd
        let data = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, size), alignment: 16)
        do {
            reader.seek(to: 0)
            guard try reader.read(into: data.baseAddress!, count: size) == size else { throw ImageError.truncated(name) }
        } catch {
            data.deallocate()
            throw error
        }
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            data.deallocate()
            throw ImageError.decodeFailed(name, reason: "libwebp's animation decoder could not be set up")
        }
        options.color_mode = MODE_rgbA
        options.use_threads = 0
        var webpData = WebPData(bytes: data.baseAddress!.assumingMemoryBound(to: UInt8.self), size: size)
        guard let decoder = WebPAnimDecoderNew(&webpData, &options) else {
            data.deallocate()
            throw ImageError.decodeFailed(name, reason: "not a valid animated WebP (libwebp's demuxer refused it)")
        }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, info.frame_count >= 2 else {
            WebPAnimDecoderDelete(decoder)
            data.deallocate()
            return nil
        }
        return WebPAnimation(name: name, data: data, decoder: decoder, info: info, heldBytes: held)
    }

    func compositeNextFrame(isCancelled: () -> Bool) throws -> Double? {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else { return nil }
        if isCancelled() { throw AnimationStepCancelled() }
        var buffer: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
            canvas = nil
            throw ImageError.decodeFailed(name, reason: "a frame of the animated WebP cannot be decoded")
        }
        canvas = buffer
        defer { lastTimestamp = timestamp }
        return Double(Int(timestamp) - Int(lastTimestamp)) / 1000
    }

    func withCanvas<R>(_ body: (UnsafePointer<UInt8>) throws -> R) throws -> R {
        guard let canvas else { throw ImageError.decodeFailed(name, reason: "no frame of the animated WebP is decoded") }
        return try body(UnsafePointer(canvas))
    }

    func rewind() throws {
        WebPAnimDecoderReset(decoder)
        canvas = nil
        lastTimestamp = 0
    }
}
