#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one composited frame cost and did. The perf overlay and the benchmarks read the same record.
/// - Thread: any (a value)
public struct FrameStatistics: Sendable, Equatable {
    /// The frame's number, from 1.
    public var frameIndex = 0
    /// Layers reached by the walk (hidden and fully transparent subtrees are not entered).
    public var layersVisited = 0
    /// Layers whose own background or contents were drawn.
    public var layersDrawn = 0
    /// Layers skipped because they lay outside the output or their clip.
    public var layersCulled = 0
    /// Calls into the backend that draw: texture copies, fills and geometry.
    public var drawCalls = 0
    /// Draw calls that take a texture other than the one the previous draw call took, an untextured
    /// fill or triangle counting as no texture: the texture binds of a renderer that keeps its last
    /// state between draws, as SDL's OpenGL renderers do. A frame copying N distinct textures makes
    /// at least N; the software renderer binds nothing but is drawn the same calls.
    public var textureBinds = 0
    /// Textures made from contents this frame (a tiled bitmap counts one per tile).
    public var uploads = 0
    /// Pixel bytes sent in those uploads.
    public var uploadBytes = 0
    /// Passes over every pixel that those uploads made on the UI thread: opacity scans and alpha
    /// conversions of bitmaps that were not prepared for the renderer where they were made
    /// (`Bitmap.prepared(forUpload:)`). 0 when every upload was a copy, as for all contents the display
    /// pipeline commits.
    public var uploadPixelPasses = 0
    /// Textures dropped by the byte budget this frame.
    public var evictions = 0
    /// Textures dropped because their bitmap no longer exists anywhere.
    public var texturesReleased = 0
    /// Corner pieces drawn for `.clipping` layers.
    public var cornerPieceDraws = 0
    /// Bytes held by the cached corner pieces at the end of the frame.
    public var cornerPieceBytes = 0
    /// Textures alive at the end of the frame, contents and corner pieces.
    public var liveTextures = 0
    /// Bytes of those textures.
    public var liveTextureBytes = 0
    /// Renderer resets handled since the previous frame.
    public var rendererResets = 0
    /// Milliseconds spent uploading (inside `drawMilliseconds`).
    public var uploadMilliseconds = 0.0
    /// Milliseconds from the start of the walk to the last draw call, uploads included.
    public var drawMilliseconds = 0.0
    /// Milliseconds spent in `present`.
    public var presentMilliseconds = 0.0
    /// False for a frame in which nothing had changed since the last one drawn: nothing was drawn or
    /// presented (`Compositor.renderIfChanged`).
    public var presented = true
    /// True for a frame handed to a compositor thread (`Compositor(thread:)`): the UI thread committed
    /// its layers' snapshot and that thread draws and presents it (its own statistics:
    /// `CompositorThread.lastFrameStatistics`).
    public var handedToThread = false
    /// The region of the output drawn again, on a backend that keeps the last frame
    /// (`Compositor.redrawsChangedRegionsOnly`); nil when the whole output was drawn.
    public var redrawnRegion: PixelRect?
    /// 1 when a region was drawn and then the whole frame instead, because the region held a draw the
    /// backend does not draw the same under a clip (`RenderBackend.retainedRegionIsExact`).
    public var regionRedrawsAbandoned = 0
    /// The only part of the output sent to the window, when the backend sends changed regions alone
    /// (the software renderer); nil: the whole frame.
    public var presentedRegion: PixelRect?
    /// The output's width in pixels (the window's drawable's) the frame was drawn at; 0 for a frame
    /// not drawn.
    public var outputPixelWidth = 0
    /// The output's height in pixels the frame was drawn at; 0 for a frame not drawn.
    public var outputPixelHeight = 0
    /// The pixels per point the frame was drawn at (the compositor's scale); 0 for a frame not drawn.
    public var scale = 0.0

    public init() {}
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): the time it ran on a core, without the
/// time it waited for one or was blocked. Wall time minus this is what the thread lost.
/// - Thread: any (each thread reads its own)
public enum ThreadCPUClock {
    /// Nanoseconds of CPU time the calling thread has used.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds of the calling thread's CPU time since `start` (from `nanoseconds()`).
    @inline(__always)
    public static func milliseconds(since start: UInt64) -> Double {
        Double(nanoseconds() &- start) / 1_000_000
    }
}

/// Monotonic time for measuring frames.
/// - Thread: any
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds elapsed since `start` (from `nanoseconds()`).
    @inline(__always)
    public static func milliseconds(since start: UInt64) -> Double {
        Double(nanoseconds() &- start) / 1_000_000
    }
}
