public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// An animated image (GIF, APNG, animated WebP) decoded one frame at a time: each step composites the
/// next frame onto a canvas the size of the animation's canvas, as the file says (GIF disposal and
/// transparency; APNG dispose and blend operations; WebP through libwebp's `WebPAnimDecoder`), and
/// `render(for:)` shrinks the canvas to the size shown. Only the canvas is held between steps (plus,
/// for GIF and APNG, the part of it a "restore to previous" frame covers, and for WebP the file's
/// bytes, which libwebp reads in place): never the frames, so memory does not grow with the length
/// of the animation.
///
/// The timing follows the browsers: a frame delay of 10 ms or less shows for 100 ms
/// (`displayedDelay(_:)`). `playCount` says how often the sequence plays (0: for ever): a GIF's
/// NETSCAPE2.0 loop count `n` plays it `n + 1` times, a GIF without one once; an APNG's `num_plays`
/// and a WebP's loop count are the number of plays.
///
/// Hostile files: the canvas is checked against `ImageDecoder.Limits` (its side and pixel count, and
/// what the decoder holds against `workingMemoryBytes`) before anything is decoded; a frame larger
/// than the limits, an APNG frame outside its canvas, more metadata blocks between two frames than
/// `maximumMetadataBlocks`, a frame cut short or corrupt are `ImageError`s thrown by `advance`, after
/// which the decoder is spent. A GIF frame reaching outside the canvas is clipped to it, as browsers
/// do, and only what lies on the canvas is decompressed (a frame wholly outside keeps its delay and
/// costs its compressed bytes' reading; one that would cost more than four times the canvas is an
/// error); a file whose bytes end between two frames (a GIF without its trailer, an APNG without IEND)
/// ends its sequence there; an APNG holding fewer frames than its `acTL` claims plays those it has,
/// and stops at the claimed count when it holds more.
/// - Thread: any, one thread at a time: a decoder may be handed from one thread to another, never
///   used by two at once.
public final class AnimatedImageDecoder {
    /// What one `advance` did.
    /// - Thread: any (a value)
    public enum Step: Sendable, Equatable {
        /// The next frame is on the canvas; it shows for `delay` seconds (the browsers' rule applied).
        case frame(delay: Double)
        /// The sequence is over: `rewind()` to play it again.
        case endOfSequence
        /// `isCancelled` became true while the frame was decoded: the canvas is incomplete, and the
        /// next `advance` starts again from the first frame (`frameIndex` is back to -1).
        case cancelled
    }

    /// The format of the file.
    public let format: ImageDecoder.Format
    /// The canvas the frames are composited on, in pixels.
    public let canvasWidth: Int
    /// The canvas the frames are composited on, in pixels.
    public let canvasHeight: Int
    /// How many times the sequence plays; 0 plays it for ever. A GIF's loop count is read with its
    /// frames, so it is final once the first frame has been decoded.
    public var playCount: Int { backend.playCount }
    /// The index of the frame on the canvas in the sequence (0 for the first), -1 before the first.
    public private(set) var frameIndex = -1
    /// The bytes the decoder holds between steps: the canvas, a saved region, a WebP's file bytes
    /// and libwebp's canvases. Counted against `workingMemoryBytes` when the decoder is opened.
    public var heldBytes: Int { backend.heldBytes }

    private let backend: any AnimationBackend
    private let name: String
    private let limits: ImageDecoder.Limits
    /// Set by a cancelled step: the next `advance` rewinds first.
    private var needsRewind = false
    /// The error that spent the decoder.
    private var failure: ImageError?

    init(format: ImageDecoder.Format, backend: any AnimationBackend, canvas: (width: Int, height: Int),
         name: String, limits: ImageDecoder.Limits) {
        self.format = format
        self.backend = backend
        self.canvasWidth = canvas.width
        self.canvasHeight = canvas.height
        self.name = name
        self.limits = limits
    }

    /// Opens `source` for playing when it is an animation of more than one frame: a GIF with a
    /// second frame, a PNG with an `acTL` chunk before its image data claiming two frames or more, a
    /// WebP whose header has the animation flag and which holds two frames or more.
    /// - Returns: the decoder, before its first frame; nil for a still image (any other format, a
    ///   single frame, a bitmap source).
    /// - Throws: `ImageError`, as `ImageDecoder.decode` does for the header, or for an animation
    ///   whose canvas, and what the decoder holds for it, are over `limits`.
    /// - Thread: any
    public static func open(_ source: ImageSource, limits: ImageDecoder.Limits = ImageDecoder.Limits(),
                            loader: NetworkImageLoader = .shared) throws -> AnimatedImageDecoder? {
        if case .bitmap = source { return nil }
        var opened = source
        if case .url(let url) = source {
            // An image by URL is looked at in the bytes its node fetched, never fetched again: out of
            // the loader's memory cache, it shows as a still picture.
            guard let bytes = loader.memoryCachedBytes(for: url) else { return nil }
            opened = .encoded(EncodedImage(bytes: bytes, name: source.description))
        }
        let (reader, layout) = try ImageDecoder.open(opened, limits: limits)
        let name = source.description
        let backend: (any AnimationBackend)?
        switch layout.header.format {
        case .gif: backend = try GIFAnimation.open(reader, layout: layout, limits: limits)
        case .png: backend = try APNGAnimation.open(reader, limits: limits)
        case .webp: backend = try WebPAnimation.open(reader, limits: limits)
        case .jpeg, .bmp: backend = nil
        }
        guard let backend else { return nil }
        let canvas = backend.canvasSize
        try ImageDecoder.checkSize(ImageDecoder.Header(format: layout.header.format, width: canvas.width, height: canvas.height),
                                   source: name, limits: limits)
        return AnimatedImageDecoder(format: layout.header.format, backend: backend, canvas: canvas, name: name, limits: limits)
    }

    /// Refuses an animation that would hold more than `workingMemoryBytes` while it plays; each
    /// format calls it before it allocates its canvas.
    static func checkHeldBytes(_ bytes: Int, _ what: String, source: String, limits: ImageDecoder.Limits) throws {
        guard bytes <= limits.workingMemoryBytes else {
            throw ImageError.overLimit(source, reason: "\(what) holds \(bytes / 1_000_000) MB while it plays; the limit is "
                                       + "\(limits.workingMemoryBytes / 1_000_000) MB")
        }
    }

    /// How long a frame whose file says `seconds` is shown: as browsers do, 10 ms or less (and a
    /// delay that is not a finite positive number) counts as 100 ms.
    /// - Thread: any
    public static func displayedDelay(_ seconds: Double) -> Double {
        guard seconds.isFinite, seconds > 0.0105 else { return 0.1 }
        return seconds
    }

    /// Composites the next frame onto the canvas (after the previous frame's disposal).
    /// - Returns: `.frame` with its delay, `.endOfSequence` after the last frame, or `.cancelled`.
    /// - Throws: `ImageError` for a frame that cannot be decoded (cut short, corrupt, over the limits);
    ///   the decoder is spent, and every later call throws the same error.
    /// - Thread: any (one at a time)
    public func advance(isCancelled: () -> Bool = { false }) throws -> Step {
        if let failure { throw failure }
        if needsRewind { try rewind() }
        let working = ByteCount.sum(backend.heldBytes, backend.stepBytes)
        do {
            return try withoutActuallyEscaping(isCancelled) { isCancelled -> Step in
                guard ImageDecoder.memory.reserve(working, isCancelled: isCancelled) else { return .cancelled }
                defer { ImageDecoder.memory.release(working) }
                guard let delay = try backend.compositeNextFrame(isCancelled: isCancelled) else { return .endOfSequence }
                frameIndex += 1
                return .frame(delay: Self.displayedDelay(delay))
            }
        } catch is AnimationStepCancelled {
            needsRewind = true
            frameIndex = -1
            return .cancelled
        } catch let error as ImageError {
            failure = error
            throw error
        } catch {
            let wrapped = ImageError.decodeFailed(name, reason: "\(error)")
            failure = wrapped
            throw wrapped
        }
    }

    /// Goes back to before the first frame: the canvas is cleared, and the next `advance` decodes the
    /// first frame again.
    /// - Throws: `ImageError` when the decoder is spent.
    /// - Thread: any (one at a time)
    public func rewind() throws {
        if let failure { throw failure }
        do {
            try backend.rewind()
        } catch let error as ImageError {
            failure = error
            throw error
        }
        needsRewind = false
        frameIndex = -1
    }

    /// The canvas as it stands after the last frame, shrunk (and cropped) to `target` as
    /// `ImageDecoder.decode(_:for:)` would shrink a still image.
    /// - Returns: the bitmap, or nil when cancelled while waiting for working memory.
    /// - Throws: `ImageError` when no frame is on the canvas, the decoder is spent or the target has no
    ///   pixels.
    /// - Thread: any (one at a time)
    public func render(for target: ImageDecoder.Target, isCancelled: () -> Bool = { false }) throws -> Bitmap? {
        if let failure { throw failure }
        guard frameIndex >= 0, !needsRewind else {
            throw ImageError.decodeFailed(name, reason: "no frame of the animation is decoded yet")
        }
        guard target.width > 0, target.height > 0 else {
            throw ImageError.decodeFailed(name, reason: "a target of \(target.width)×\(target.height) pixels")
        }
        let plan = DecodePlan(storedWidth: canvasWidth, storedHeight: canvasHeight, orientation: .up,
                              target: target, maximumSide: limits.maximumSide)
        let working = AreaRowFilter.workingBytes(sourceWidth: canvasWidth, outputWidth: plan.storedOutput.width,
                                                 outputHeight: plan.storedOutput.height)
        return try withoutActuallyEscaping(isCancelled) { isCancelled -> Bitmap? in
            guard ImageDecoder.memory.reserve(working, isCancelled: isCancelled) else { return nil }
            defer { ImageDecoder.memory.release(working) }
            let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
            do {
                return try backend.withCanvas { canvas in
                    try AnimationCanvas.render(canvas, width: canvasWidth, height: canvasHeight, plan: plan, scale: scale)
                }
            } catch let error as ImageError {
                throw error
            } catch {
                throw ImageError.decodeFailed(name, reason: "\(error)")
            }
        }
    }
}

// MARK: - What each format provides

/// Thrown inside a step when its cancellation check became true.
struct AnimationStepCancelled: Error {}

/// One format's frames: the canvas, the next frame composited onto it, the way back to the start.
/// - Thread: one at a time (owned by its `AnimatedImageDecoder`)
protocol AnimationBackend: AnyObject {
    /// The canvas's size in pixels.
    var canvasSize: (width: Int, height: Int) { get }
    /// Plays of the sequence; 0 for ever.
    var playCount: Int { get }
    /// What the backend holds between steps.
    var heldBytes: Int { get }
    /// What one step needs on top of it, at most.
    var stepBytes: Int { get }
    /// Disposes of the previous frame as it says, then composites the next one; returns its delay in
    /// seconds as the file gives it, or nil when the sequence is over. Throws `AnimationStepCancelled`
    /// when `isCancelled` became true part way.
    func compositeNextFrame(isCancelled: () -> Bool) throws -> Double?
    /// Calls `body` with the canvas: `width × height` premultiplied RGBA pixels, rows packed.
    func withCanvas<R>(_ body: (UnsafePointer<UInt8>) throws -> R) throws -> R
    /// Back to before the first frame, with a clear canvas.
    func rewind() throws
}

/// A rectangle of canvas pixels, clipped to the canvas (it may be empty).
/// - Thread: any (a value)
struct PixelRect: Equatable {
    var x = 0, y = 0, width = 0, height = 0

    /// The part of the rectangle `x, y, width × height` inside a canvas of `canvasWidth × canvasHeight`.
    init(x: Int, y: Int, width: Int, height: Int, clippedTo canvas: (width: Int, height: Int)) {
        let left = max(0, x), top = max(0, y)
        let right = min(canvas.width, x + max(0, width)), bottom = min(canvas.height, y + max(0, height))
        self.x = left
        self.y = top
        self.width = max(0, right - left)
        self.height = max(0, bottom - top)
    }

    init() {}

    var isEmpty: Bool { width == 0 || height == 0 }
    var pixelCount: Int { width * height }
}

/// What a GIF or APNG frame asks to be done with its rectangle before the next frame is drawn: left
/// as drawn, cleared to transparent, or put back as it was before the frame (GIF disposal 0–1, 2, 3;
/// APNG dispose operation 0, 1, 2).
/// - Thread: any (a value)
enum FrameDisposal: Equatable {
    case keep
    case clear
    case restore
}

/// A frame's disposal waiting for the next frame: what to do, where, and for `.restore` the pixels
/// the frame covered.
/// - Thread: any (a value)
struct PendingDisposal {
    var disposal: FrameDisposal
    var rect: PixelRect
    var saved: [UInt8]
}

/// The canvas a GIF or an APNG is composited on: premultiplied RGBA, 4 bytes a pixel, transparent
/// where nothing was drawn.
/// - Thread: one at a time (owned by its backend)
struct AnimationCanvas {
    let width: Int
    let height: Int
    private(set) var pixels: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: ByteCount.product(width, height, 4))
    }

    var byteCount: Int { pixels.count }

    /// Clears the whole canvas to transparent.
    mutating func clear() {
        pixels.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// Clears `rect` to transparent.
    mutating func clear(_ rect: PixelRect) {
        guard !rect.isEmpty else { return }
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { canvas in
            for y in rect.y..<(rect.y + rect.height) {
                let start = (y * width + rect.x) * 4
                (canvas.baseAddress! + start).update(repeating: 0, count: rect.width * 4)
            }
        }
    }

    /// The pixels under `rect`, rows packed.
    func copy(_ rect: PixelRect) -> [UInt8] {
        guard !rect.isEmpty else { return [] }
        var out = [UInt8](repeating: 0, count: rect.pixelCount * 4)
        let width = self.width
        out.withUnsafeMutableBufferPointer { out in
            pixels.withUnsafeBufferPointer { canvas in
                for row in 0..<rect.height {
                    let from = ((rect.y + row) * width + rect.x) * 4
                    (out.baseAddress! + row * rect.width * 4).update(from: canvas.baseAddress! + from, count: rect.width * 4)
                }
            }
        }
        return out
    }

    /// Puts back pixels `copy(rect)` took.
    mutating func restore(_ rect: PixelRect, from saved: [UInt8]) {
        guard !rect.isEmpty, saved.count == rect.pixelCount * 4 else { return }
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { canvas in
            saved.withUnsafeBufferPointer { saved in
                for row in 0..<rect.height {
                    let to = ((rect.y + row) * width + rect.x) * 4
                    (canvas.baseAddress! + to).update(from: saved.baseAddress! + row * rect.width * 4, count: rect.width * 4)
                }
            }
        }
    }

    /// What a frame about to be drawn into `rect` asks for once the next frame comes, with the pixels
    /// it covers saved now when they are to be put back.
    func pending(_ disposal: FrameDisposal, over rect: PixelRect) -> PendingDisposal {
        PendingDisposal(disposal: disposal, rect: rect, saved: disposal == .restore ? copy(rect) : [])
    }

    /// Does what the previous frame asked, now that a frame follows it (at the end of the sequence the
    /// canvas still shows the last frame).
    mutating func dispose(_ pending: PendingDisposal) {
        switch pending.disposal {
        case .keep: break
        case .clear: clear(pending.rect)
        case .restore: restore(pending.rect, from: pending.saved)
        }
    }

    /// Gives `body` the canvas's bytes to change in place.
    mutating func withPixels<R>(_ body: (UnsafeMutablePointer<UInt8>) throws -> R) rethrows -> R {
        try pixels.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
    }

    /// Shrinks `canvas` (premultiplied RGBA, `width × height`) to what `plan` shows, through the same
    /// area filter the still decoders use.
    static func render(_ canvas: UnsafePointer<UInt8>, width: Int, height: Int, plan: DecodePlan, scale: Double) throws -> Bitmap {
        var filter = AreaRowFilter(sourceWidth: width, region: plan.storedRegion,
                                   outputWidth: plan.storedOutput.width, outputHeight: plan.storedOutput.height)
        for y in filter.neededRows.clamped(to: 0..<height) {
            filter.add(row: y, rgba: canvas + y * width * 4, premultiplied: true)
        }
        return try Bitmap(width: plan.storedOutput.width, height: plan.storedOutput.height, scale: scale,
                          premultipliedARGB: filter.finish())
    }

    /// Premultiplies a straight-alpha colour channel.
    @inline(__always)
    static func premultiply(_ channel: UInt8, _ alpha: UInt8) -> UInt8 {
        UInt8((UInt32(channel) * UInt32(alpha) + 127) / 255)
    }
}
