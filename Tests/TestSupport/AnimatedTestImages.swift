public import Compositor
internal import CGIF
internal import CWebP
import Foundation

/// Animated images made by the tests at test time: GIFs through giflib's encoder, APNGs chunk by
/// chunk (stored deflate blocks in their image data), animated WebPs through libwebpmux's
/// `WebPAnimEncoder` (lossless, so every pixel comes back exactly).
/// - Thread: any
public enum AnimatedTestImages {
    // MARK: GIF

    /// One GIF frame: a rectangle of palette indices with its graphic-control fields.
    /// - Thread: any (a value)
    public struct GIFFrame {
        public var left: Int, top: Int, width: Int, height: Int
        /// `width × height` palette indices, rows top to bottom.
        public var indices: [UInt8]
        /// Centiseconds.
        public var delay: Int
        /// 0 unspecified, 1 leave, 2 clear to background, 3 restore the previous pixels.
        public var disposal: Int
        public var transparentIndex: Int?
        public var interlaced: Bool

        public init(left: Int = 0, top: Int = 0, width: Int, height: Int, indices: [UInt8], delay: Int,
                    disposal: Int = 1, transparentIndex: Int? = nil, interlaced: Bool = false) {
            self.left = left; self.top = top; self.width = width; self.height = height
            self.indices = indices; self.delay = delay; self.disposal = disposal
            self.transparentIndex = transparentIndex; self.interlaced = interlaced
        }

        /// A frame of one index.
        public static func filled(_ index: UInt8, left: Int = 0, top: Int = 0, width: Int, height: Int, delay: Int,
                                  disposal: Int = 1, transparentIndex: Int? = nil) -> GIFFrame {
            GIFFrame(left: left, top: top, width: width, height: height,
                     indices: [UInt8](repeating: index, count: width * height), delay: delay, disposal: disposal,
                     transparentIndex: transparentIndex)
        }
    }

    private final class Sink { var bytes: [UInt8] = [] }

    /// An animated GIF: a logical screen of `width × height`, a global colour table of `palette`
    /// (padded to a power of two), a NETSCAPE2.0 loop count when `loopCount` is given (0: for ever;
    /// nil: no extension, one play), then the frames.
    public static func gif(width: Int, height: Int, palette: [Color], loopCount: Int?, frames: [GIFFrame]) -> [UInt8] {
        let sink = Sink()
        let write: OutputFunc = { gif, data, count in
            guard let gif, let data else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(gif.pointee.UserData).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
            return count
        }
        var error: Int32 = 0
        guard let gif = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), write, &error) else {
            fatalError("EGifOpen failed: \(error)")
        }
        EGifSetGifVersion(gif, true)
        var size = 2
        while size < palette.count { size *= 2 }
        var colours = (0..<size).map { i -> GifColorType in
            let c = i < palette.count ? palette[i] : Color(rgb: 0)
            return GifColorType(Red: c.red, Green: c.green, Blue: c.blue)
        }
        let map = GifMakeMapObject(Int32(size), &colours)
        defer { GifFreeMapObject(map) }
        precondition(EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, map) == GIF_OK)
        if let loopCount {
            precondition(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK)
            var identifier = Array("NETSCAPE2.0".utf8)
            precondition(EGifPutExtensionBlock(gif, 11, &identifier) == GIF_OK)
            var count: [UInt8] = [1, UInt8(loopCount & 0xFF), UInt8((loopCount >> 8) & 0xFF)]
            precondition(EGifPutExtensionBlock(gif, 3, &count) == GIF_OK)
            precondition(EGifPutExtensionTrailer(gif) == GIF_OK)
        }
        for frame in frames {
            var control = GraphicsControlBlock(DisposalMode: Int32(frame.disposal), UserInputFlag: false,
                                               DelayTime: Int32(frame.delay),
                                               TransparentColor: frame.transparentIndex.map(Int32.init) ?? Int32(NO_TRANSPARENT_COLOR))
            var extensionBytes = [GifByteType](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&control, &extensionBytes)
            precondition(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), &extensionBytes) == GIF_OK)
            precondition(EGifPutImageDesc(gif, Int32(frame.left), Int32(frame.top), Int32(frame.width), Int32(frame.height),
                                          frame.interlaced, nil) == GIF_OK)
            var rows = Array(0..<frame.height)
            if frame.interlaced {
                rows = [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { stride(from: $0.0, to: frame.height, by: $0.1) }
            }
            for y in rows {
                var line = Array(frame.indices[(y * frame.width)..<((y + 1) * frame.width)])
                precondition(EGifPutLine(gif, &line, Int32(frame.width)) == GIF_OK)
            }
        }
        precondition(EGifCloseFile(gif, &error) == GIF_OK, "EGifCloseFile: \(error)")
        return sink.bytes
    }

    // MARK: APNG

    /// One APNG frame: straight RGBA pixels at an offset, its delay and operations.
    /// - Thread: any (a value)
    public struct APNGFrame {
        public var x: Int, y: Int, width: Int, height: Int
        /// `width × height` straight RGBA pixels, 4 bytes each.
        public var rgba: [UInt8]
        public var delayNumerator: Int, delayDenominator: Int
        /// 0 none, 1 background, 2 previous.
        public var dispose: Int
        /// 0 source, 1 over.
        public var blend: Int

        public init(x: Int = 0, y: Int = 0, width: Int, height: Int, rgba: [UInt8], delayNumerator: Int,
                    delayDenominator: Int = 1000, dispose: Int = 0, blend: Int = 0) {
            self.x = x; self.y = y; self.width = width; self.height = height; self.rgba = rgba
            self.delayNumerator = delayNumerator; self.delayDenominator = delayDenominator
            self.dispose = dispose; self.blend = blend
        }

        /// A frame of one colour (straight alpha).
        public static func filled(_ colour: Color, x: Int = 0, y: Int = 0, width: Int, height: Int, delayMilliseconds: Int,
                                  dispose: Int = 0, blend: Int = 0) -> APNGFrame {
            let pixel = [colour.red, colour.green, colour.blue, colour.alpha]
            return APNGFrame(x: x, y: y, width: width, height: height,
                             rgba: Array((0..<(width * height)).map { _ in pixel }.joined()),
                             delayNumerator: delayMilliseconds, delayDenominator: 1000, dispose: dispose, blend: blend)
        }
    }

    /// An APNG of `width × height`, RGBA 8-bit, `plays` plays (0: for ever), `declaredFrames` in its
    /// `acTL` (by default the frames given). With `firstFrameIsDefaultImage` the first frame is the
    /// default image (its `fcTL` before the `IDAT`); otherwise `defaultImage` is a hidden default
    /// image and every frame is in `fdAT` chunks.
    public static func apng(width: Int, height: Int, plays: Int, frames: [APNGFrame], declaredFrames: Int? = nil,
                            firstFrameIsDefaultImage: Bool = true, defaultImage: Color = Color(rgb: 0xFF00FF)) -> [UInt8] {
        func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func data(_ rgba: [UInt8], width: Int, height: Int) -> [UInt8] {
            var raw: [UInt8] = []
            for y in 0..<height { raw += [0] + rgba[(y * width * 4)..<((y + 1) * width * 4)] }
            return TestImageFiles.zlibStored(raw)
        }
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += TestImageFiles.chunk("IHDR", TestImageFiles.be32(width) + TestImageFiles.be32(height) + [8, 6, 0, 0, 0])
        file += TestImageFiles.chunk("acTL", TestImageFiles.be32(declaredFrames ?? frames.count) + TestImageFiles.be32(plays))
        var sequence = 0
        func control(_ frame: APNGFrame) -> [UInt8] {
            defer { sequence += 1 }
            return TestImageFiles.chunk("fcTL", TestImageFiles.be32(sequence) + TestImageFiles.be32(frame.width)
                                        + TestImageFiles.be32(frame.height) + TestImageFiles.be32(frame.x) + TestImageFiles.be32(frame.y)
                                        + be16(frame.delayNumerator) + be16(frame.delayDenominator)
                                        + [UInt8(frame.dispose), UInt8(frame.blend)])
        }
        for (index, frame) in frames.enumerated() {
            if index == 0 {
                if firstFrameIsDefaultImage {
                    file += control(frame)
                    file += TestImageFiles.chunk("IDAT", data(frame.rgba, width: frame.width, height: frame.height))
                    continue
                }
                let pixel = [defaultImage.red, defaultImage.green, defaultImage.blue, defaultImage.alpha]
                let hidden = Array((0..<(width * height)).map { _ in pixel }.joined())
                file += TestImageFiles.chunk("IDAT", data(hidden, width: width, height: height))
            }
            file += control(frame)
            let compressed = data(frame.rgba, width: frame.width, height: frame.height)
            // Two data chunks a frame, to cover a frame's data spread over several.
            let half = compressed.count / 2
            for part in [Array(compressed[..<half]), Array(compressed[half...])] {
                file += TestImageFiles.chunk("fdAT", TestImageFiles.be32(sequence) + part)
                sequence += 1
            }
        }
        file += TestImageFiles.chunk("IEND", [])
        return file
    }

    // MARK: WebP

    /// An animated WebP through `WebPAnimEncoder`, lossless: each frame is `width × height` straight
    /// RGBA pixels shown for its delay in milliseconds; `loopCount` plays (0: for ever).
    public static func webp(width: Int, height: Int, loopCount: Int, frames: [(rgba: [UInt8], milliseconds: Int)]) -> [UInt8] {
        var options = WebPAnimEncoderOptions()
        precondition(WebPAnimEncoderOptionsInit(&options) != 0)
        options.anim_params.loop_count = Int32(loopCount)
        options.kmin = 0
        options.kmax = 0
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else { fatalError("WebPAnimEncoderNew failed") }
        defer { WebPAnimEncoderDelete(encoder) }
        var timestamp: Int32 = 0
        for frame in frames {
            var picture = WebPPicture()
            precondition(WebPPictureInit(&picture) != 0)
            picture.use_argb = 1
            picture.width = Int32(width)
            picture.height = Int32(height)
            var rgba = frame.rgba
            precondition(WebPPictureImportRGBA(&picture, &rgba, Int32(width * 4)) != 0)
            var config = WebPConfig()
            precondition(WebPConfigInit(&config) != 0)
            config.lossless = 1
            config.exact = 1
            precondition(WebPAnimEncoderAdd(encoder, &picture, timestamp, &config) != 0)
            WebPPictureFree(&picture)
            timestamp += Int32(frame.milliseconds)
        }
        precondition(WebPAnimEncoderAdd(encoder, nil, timestamp, nil) != 0)
        var data = WebPData()
        WebPDataInit(&data)
        precondition(WebPAnimEncoderAssemble(encoder, &data) != 0)
        defer { WebPDataClear(&data) }
        return Array(UnsafeBufferPointer(start: data.bytes, count: data.size))
    }

    /// `width × height` straight RGBA pixels of one colour.
    public static func rgba(_ colour: Color, width: Int, height: Int) -> [UInt8] {
        Array((0..<(width * height)).map { _ in [colour.red, colour.green, colour.blue, colour.alpha] }.joined())
    }
}
