/// Places committed layer contents on the screen: each frame it walks the layer tree, uploads contents
/// whose bitmap identity it has not uploaded yet, draws textures at their frames with opacity, clipping
/// and corner rounding, presents, and records the frame's statistics.
///
/// The compositor owns the only renderer in the process and runs on the UI thread (the main actor;
/// see `UIThread`). It never draws contents itself: what it shows is exactly what was committed
/// to `Layer.contents`.
/// - Thread: main
@MainActor
public final class Compositor {
    /// Tunables.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// Byte budget of the content textures (corner pieces are not counted against it).
        public var textureBudgetBytes: Int
        /// Caps the tile side below the renderer's own maximum texture size (tests use it to force tiling).
        public var maximumTextureSide: Int?
        /// The colour each frame starts from.
        public var clearColor: Color
        /// Byte budget of the cached corner pieces (one small texture per radius, colour and corner):
        /// past it, pieces the frame did not draw go, least recently drawn first.
        public var cornerPieceBudgetBytes: Int
        public init(textureBudgetBytes: Int = 256 << 20, maximumTextureSide: Int? = nil,
                    clearColor: Color = Color(rgb: 0x000000), cornerPieceBudgetBytes: Int = 2 << 20) {
            self.cornerPieceBudgetBytes = max(0, cornerPieceBudgetBytes)
            self.textureBudgetBytes = textureBudgetBytes
            self.maximumTextureSide = maximumTextureSide
            self.clearColor = clearColor
        }
    }

    /// One texture copy of the last frame, kept when `recordsDrawList` is on, so a benchmark can replay
    /// the same copies without the compositor in between.
    /// - Thread: any (a value)
    public struct TextureDraw: Sendable {
        public let texture: TextureHandle
        public let source: PixelRect
        public let destination: Rect
        public let opacity: Double
    }

    public let backend: RenderBackend
    /// Output pixels per point. (main thread only)
    public var scale: Double
    public var configuration: Configuration {
        didSet { textureCache.budgetBytes = configuration.textureBudgetBytes }
    }
    /// Statistics of the most recent frame. (main thread only)
    public private(set) var lastFrameStatistics = FrameStatistics()
    /// Frames presented so far. (main thread only)
    public private(set) var presentCount = 0
    /// What the last frame drawn showed: the layers' change count, the root and the output size.
    /// (main thread only)
    private var drawnChangeCount = -1
    private weak var drawnRoot: Layer?
    private var drawnOutputSize = (width: 0, height: 0)
    /// Frames rendered so far. (main thread only)
    public private(set) var frameIndex = 0
    /// When true, `lastDrawList` holds the texture copies of the last frame. (main thread only)
    public var recordsDrawList = false
    /// The texture copies of the last frame (empty unless `recordsDrawList`). (main thread only)
    public private(set) var lastDrawList: [TextureDraw] = []

    private let textureCache: TextureCache
    /// Corner pieces in least-recently-drawn order as of the last frame's end, costed in bytes; a draw
    /// stamps its piece, and the end of the frame orders them and trims them to the budget, like the
    /// content textures. (main thread only)
    private var cornerPieces = LRUCache<CornerPieceKey, CornerPiece>()
    private var pendingResets = 0
    /// The clip currently set on the backend, to avoid redundant calls. (main thread only)
    private var currentClip: PixelRect?
    /// Statistics of the frame being rendered. (main thread only)
    private var statistics = FrameStatistics()
    /// The texture the previous draw call of this frame took; nil after an untextured one or before
    /// the first. (main thread only)
    private var lastDrawTexture: TextureHandle?

    /// Makes a compositor on `backend`.
    public init(backend: RenderBackend, scale: Double = 1, configuration: Configuration = Configuration()) {
        self.backend = backend
        self.scale = scale.isFinite && scale > 0 ? scale : 1
        self.configuration = configuration
        self.textureCache = TextureCache(budgetBytes: configuration.textureBudgetBytes)
    }

    isolated deinit {
        textureCache.removeAll(backend: backend)
        cornerPieces.values.forEach { backend.destroyTexture($0.texture) }
    }

    /// The output's size in points.
    public var viewportSize: Size {
        let (w, h) = backend.outputPixelSize
        return Size(width: Double(w) / scale, height: Double(h) / scale)
    }

    /// Bytes of live textures: contents and corner pieces.
    public var liveTextureBytes: Int { textureCache.liveBytes + cornerPieces.totalCost }

    /// True when `bitmap` currently has textures (it was drawn and not evicted or reset since).
    public func isResident(_ bitmap: Bitmap) -> Bool { textureCache.isResident(bitmap) }

    // MARK: Events

    /// Text input and the clipboard, when the backend offers them. (main thread only)
    public var textInputPlatform: TextInputPlatform? { backend as? TextInputPlatform }

    /// Drains the platform's events. Renderer resets are handled here (every texture is dropped and
    /// uploaded again when next drawn); the rest is returned for the app to route.
    public func pollEvents() -> [InputEvent] {
        UIThread.precondition("Compositor.pollEvents")
        return handle(backend.pollEvents())
    }

    /// Blocks until the platform has an event, `UIWakeup.shared` is woken, or `timeout` seconds pass
    /// (nil: no limit), then returns the events, as `pollEvents()` does. An app with nothing to do
    /// waits here instead of running frames. - Thread: main
    public func waitForEvents(timeout: Double?) -> [InputEvent] {
        UIThread.precondition("Compositor.waitForEvents")
        return handle(backend.waitForEvents(timeout: timeout))
    }

    private func handle(_ events: [BackendEvent]) -> [InputEvent] {
        var input: [InputEvent] = []
        for event in events {
            switch event {
            case .input(let e): input.append(e)
            case .renderTargetsReset, .renderDeviceReset: handleRendererReset()
            }
        }
        return input
    }

    /// Drops every texture; each is uploaded again from its layer's committed contents when next drawn.
    /// Nothing the layers hold is lost.
    public func handleRendererReset() {
        UIThread.precondition("Compositor.handleRendererReset")
        textureCache.removeAll(backend: backend)
        cornerPieces.removeAll().forEach { backend.destroyTexture($0.value.texture) }
        pendingResets += 1
    }

    // MARK: Frames

    /// Draws the tree under `root` and presents it. Returns the frame's statistics.
    @discardableResult
    public func render(_ root: Layer?) -> FrameStatistics {
        compose(root)
        let presentStart = MonotonicClock.nanoseconds()
        backend.present()
        statistics.presentMilliseconds = MonotonicClock.milliseconds(since: presentStart)
        lastFrameStatistics = statistics
        presentCount += 1
        return statistics
    }

    /// Draws and presents `root` only when something on screen may differ from the last frame drawn:
    /// a layer changed (`Layer.changeCount`), another root, another output size, or the renderer lost
    /// its textures. Otherwise nothing is drawn or presented, and the statistics say so
    /// (`presented == false`): a window at rest costs nothing here.
    @discardableResult
    public func renderIfChanged(_ root: Layer?) -> FrameStatistics {
        guard needsRender(root) else {
            var skipped = FrameStatistics()
            skipped.frameIndex = frameIndex
            skipped.presented = false
            skipped.liveTextures = lastFrameStatistics.liveTextures
            skipped.liveTextureBytes = lastFrameStatistics.liveTextureBytes
            skipped.cornerPieceBytes = lastFrameStatistics.cornerPieceBytes
            return skipped
        }
        return render(root)
    }

    /// True when `root` may look different from the last frame drawn.
    public func needsRender(_ root: Layer?) -> Bool {
        let (w, h) = backend.outputPixelSize
        return Layer.changeCount != drawnChangeCount || root !== drawnRoot || pendingResets > 0
            || w != drawnOutputSize.width || h != drawnOutputSize.height || frameIndex == 0
    }

    /// Draws the tree under `root`, reads the pixels back, then presents. For tests and screenshots.
    public func capture(_ root: Layer?) -> Bitmap? {
        compose(root)
        let pixels = backend.readPixels()
        let presentStart = MonotonicClock.nanoseconds()
        backend.present()
        statistics.presentMilliseconds = MonotonicClock.milliseconds(since: presentStart)
        lastFrameStatistics = statistics
        presentCount += 1
        return pixels
    }

    private func compose(_ root: Layer?) {
        UIThread.precondition("Compositor.render")
        drawnChangeCount = Layer.changeCount
        drawnRoot = root
        let outputSize = backend.outputPixelSize
        drawnOutputSize = (outputSize.width, outputSize.height)
        frameIndex += 1
        statistics = FrameStatistics()
        statistics.frameIndex = frameIndex
        statistics.rendererResets = pendingResets
        pendingResets = 0
        lastDrawList.removeAll(keepingCapacity: true)
        lastDrawTexture = nil

        let start = MonotonicClock.nanoseconds()
        backend.beginFrame(clearColor: configuration.clearColor)
        currentClip = nil
        let (w, h) = backend.outputPixelSize
        let output = PixelRect(x: 0, y: 0, width: w, height: h)
        if let root { draw(root, parentOrigin: .zero, parentOpacity: 1, clip: output) }
        setClip(nil)
        statistics.drawMilliseconds = MonotonicClock.milliseconds(since: start)

        textureCache.finishFrame(frameIndex, backend: backend, statistics: &statistics)
        finishCornerPieces()
        statistics.cornerPieceBytes = cornerPieces.totalCost
        statistics.liveTextures = textureCache.liveTextureCount + cornerPieces.count
        statistics.liveTextureBytes = liveTextureBytes
    }

    /// The walk. `parentOrigin` is in points (root coordinates), `clip` in output pixels.
    private func draw(_ layer: Layer, parentOrigin: Point, parentOpacity: Double, clip: PixelRect) {
        let opacity = parentOpacity * (layer.opacity.isNaN ? 0 : min(1, max(0, layer.opacity)))
        guard !layer.isHidden, opacity > 0 else { return }
        statistics.layersVisited += 1

        let frame = layer.frame.sanitized
        let origin = Point(x: parentOrigin.x + frame.minX, y: parentOrigin.y + frame.minY)
        let pixelRect = Rect(origin: origin, size: frame.size).scaled(by: scale)
        let pixelRadii = layer.effectiveCornerRadii.scaled(by: scale)
        var mode = layer.cornerRoundingMode
        if mode == .clipping && layer.cornerClipColor == nil { mode = .compositorClip }
        let rounded = !pixelRadii.isZero

        let visible = !pixelRect.isEmpty && pixelRect.intersects(clip.rect)
        if visible && (layer.backgroundColor != nil || layer.contents.map({ !$0.isEmpty }) == true) {
            setClip(clip)
            drawOwnContent(layer, in: pixelRect, radii: pixelRadii, rounded: rounded, mode: mode, opacity: opacity)
            statistics.layersDrawn += 1
        } else if !pixelRect.isEmpty && !visible {
            statistics.layersCulled += 1
        }

        let sublayers = layer.sublayersInDrawOrder
        if !sublayers.isEmpty {
            var childClip = clip
            if layer.clipsToBounds { childClip = clip.intersection(pixelRect.nearestPixelRect) }
            if !(layer.clipsToBounds && childClip.isEmpty) {
                for sublayer in sublayers {
                    draw(sublayer, parentOrigin: origin, parentOpacity: opacity, clip: childClip)
                }
            }
        }

        if visible && rounded && mode == .clipping, let color = layer.cornerClipColor {
            setClip(clip)
            drawCornerPieces(in: pixelRect, radii: pixelRadii, color: color, opacity: opacity)
        }
    }

    private func drawOwnContent(_ layer: Layer, in rect: Rect, radii: CornerRadii, rounded: Bool,
                                mode: CornerRoundingMode, opacity: Double) {
        // Opaque contents that fill the layer hide its background: the fill would be drawn for nothing.
        let contentsCover = !rounded && opacity >= 1 && layer.contents.map { !$0.isEmpty && $0.isKnownOpaque } == true
        if let background = layer.backgroundColor, background.alpha > 0, !contentsCover {
            let color = background.withAlphaMultiplied(by: opacity)
            if rounded && mode != .clipping {
                var mesh = RoundedGeometry.Mesh()
                for piece in RoundedGeometry.pieces(rect, radii: radii, color: color) {
                    RoundedGeometry.appendFan(piece, to: &mesh)
                }
                backend.drawGeometry(texture: nil, vertices: mesh.vertices, indices: mesh.indices)
            } else {
                backend.fill(rect, color: color)
            }
            countDrawCall(texture: nil)
        }
        guard let bitmap = layer.contents, !bitmap.isEmpty else { return }
        let tileSide = min(backend.maximumTextureSize, configuration.maximumTextureSide ?? Int.max)
        guard let tiles = textureCache.tiles(for: bitmap, frame: frameIndex, tileSide: tileSide,
                                             backend: backend, statistics: &statistics) else { return }
        let scaleX = rect.width / Double(bitmap.width)
        let scaleY = rect.height / Double(bitmap.height)
        if rounded && mode == .compositorClip {
            let alphaColor = Color(red: 255, green: 255, blue: 255, alpha: UInt8((opacity * 255).rounded()))
            let pieces = RoundedGeometry.pieces(rect, radii: radii, color: alphaColor)
            for tile in tiles {
                let tileRect = Rect(x: rect.minX + Double(tile.region.x) * scaleX,
                                    y: rect.minY + Double(tile.region.y) * scaleY,
                                    width: Double(tile.region.width) * scaleX,
                                    height: Double(tile.region.height) * scaleY)
                var mesh = RoundedGeometry.Mesh()
                let single = tiles.count == 1
                for piece in pieces {
                    var polygon = single ? piece : RoundedGeometry.clip(piece, to: tileRect)
                    if !single {
                        // Texture coordinates within this tile, from positions (texture mapping is affine
                        // in position, and recomputing in double keeps whole-pixel edges exact).
                        for i in polygon.indices {
                            let u = (Double(polygon[i].x) - tileRect.minX) / tileRect.width
                            let v = (Double(polygon[i].y) - tileRect.minY) / tileRect.height
                            polygon[i].u = Float(min(1, max(0, u)))
                            polygon[i].v = Float(min(1, max(0, v)))
                        }
                    }
                    RoundedGeometry.appendFan(polygon, to: &mesh)
                }
                if !mesh.isEmpty {
                    backend.drawGeometry(texture: tile.texture, vertices: mesh.vertices, indices: mesh.indices)
                    countDrawCall(texture: tile.texture)
                }
            }
        } else {
            for tile in tiles {
                var destination = Rect(x: rect.minX + Double(tile.region.x) * scaleX,
                                       y: rect.minY + Double(tile.region.y) * scaleY,
                                       width: Double(tile.region.width) * scaleX,
                                       height: Double(tile.region.height) * scaleY)
                // Contents shown pixel for pixel land on whole pixels: renderers round a fractional
                // position differently (and blur it when they filter), and text must stay crisp.
                if abs(scaleX - 1) < 1e-9 && abs(scaleY - 1) < 1e-9 {
                    destination.origin = Point(x: PixelGeometry.nearestWhole(destination.minX),
                                               y: PixelGeometry.nearestWhole(destination.minY))
                }
                let source = PixelRect(x: 0, y: 0, width: tile.region.width, height: tile.region.height)
                backend.drawTexture(tile.texture, source: source, destination: destination, opacity: opacity)
                countDrawCall(texture: tile.texture)
                if recordsDrawList {
                    lastDrawList.append(TextureDraw(texture: tile.texture, source: source,
                                                    destination: destination, opacity: opacity))
                }
            }
        }
    }

    /// Counts a draw call made with `texture` (nil: a fill or untextured triangles), and a texture
    /// bind when it takes another texture than the previous draw call.
    private func countDrawCall(texture: TextureHandle?) {
        statistics.drawCalls += 1
        if let texture, texture != lastDrawTexture { statistics.textureBinds += 1 }
        lastDrawTexture = texture
    }

    private func setClip(_ clip: PixelRect?) {
        guard clip != currentClip else { return }
        currentClip = clip
        backend.setClip(clip)
    }

    // MARK: Corner pieces

    struct CornerPieceKey: Hashable {
        let radius: Int
        let color: Color
        let corner: UInt8
    }

    final class CornerPiece {
        let texture: TextureHandle
        /// The last frame that drew the piece: the frame's end orders pieces by it, and that frame
        /// spares the piece from eviction.
        var lastDrawnFrame: Int
        init(texture: TextureHandle, frame: Int) { self.texture = texture; self.lastDrawnFrame = frame }
    }

    private func drawCornerPieces(in rect: Rect, radii: CornerRadii, color: Color, opacity: Double) {
        let corners: [(CornerMask, Double, Double, Double)] = [
            (.topLeft, radii.topLeft, rect.minX, rect.minY),
            (.topRight, radii.topRight, rect.maxX - radii.topRight, rect.minY),
            (.bottomLeft, radii.bottomLeft, rect.minX, rect.maxY - radii.bottomLeft),
            (.bottomRight, radii.bottomRight, rect.maxX - radii.bottomRight, rect.maxY - radii.bottomRight),
        ]
        for (corner, radius, x, y) in corners {
            let side = PixelGeometry.nearestIndex(radius)
            guard side > 0, let texture = cornerPiece(corner: corner, side: side, color: color) else { continue }
            // Snap the piece to the corner so it meets the edges exactly.
            let px = corner.contains(.topRight) || corner.contains(.bottomRight) ? (x + radius) - Double(side) : x
            let py = corner.contains(.bottomLeft) || corner.contains(.bottomRight) ? (y + radius) - Double(side) : y
            backend.drawTexture(texture, source: PixelRect(x: 0, y: 0, width: side, height: side),
                                destination: Rect(x: px, y: py, width: Double(side), height: Double(side)),
                                opacity: opacity)
            countDrawCall(texture: texture)
            statistics.cornerPieceDraws += 1
        }
    }

    /// The piece for one corner: `color` outside a quarter circle of radius `side` pixels, clear inside.
    private func cornerPiece(corner: CornerMask, side: Int, color: Color) -> TextureHandle? {
        let key = CornerPieceKey(radius: side, color: color, corner: corner.rawValue)
        if let piece = cornerPieces.peekValue(for: key) {
            piece.lastDrawnFrame = frameIndex
            return piece.texture
        }
        guard var context = try? BitmapContext(pixelWidth: side, pixelHeight: side, scale: 1) else { return nil }
        let s = Double(side)
        let circle: Rect
        switch corner {
        case .topLeft: circle = Rect(x: 0, y: 0, width: 2 * s, height: 2 * s)
        case .topRight: circle = Rect(x: -s, y: 0, width: 2 * s, height: 2 * s)
        case .bottomLeft: circle = Rect(x: 0, y: -s, width: 2 * s, height: 2 * s)
        default: circle = Rect(x: -s, y: -s, width: 2 * s, height: 2 * s)
        }
        context.fill(outsideRoundedRect: circle, radii: CornerRadii(s), color: color)
        // Drawn here, on the UI thread, so prepared here too: once per radius, colour and corner.
        let bitmap = context.makeBitmap().prepared(forUpload: backend.uploadAlphaLayout)
        guard let texture = backend.makeTexture(from: bitmap, region: PixelRect(x: 0, y: 0, width: side, height: side))
        else { return nil }
        // Unbounded, so this evicts nothing; the key had no piece.
        _ = cornerPieces.insert(CornerPiece(texture: texture, frame: frameIndex), for: key, cost: side * side * 4)
        return texture
    }

    /// Makes the pieces this frame drew the most recently drawn, then destroys pieces it did not draw,
    /// least recently drawn first, until the cache is within its budget.
    private func finishCornerPieces() {
        let frame = frameIndex
        cornerPieces.markUsed(where: { $1.lastDrawnFrame == frame })
        guard cornerPieces.totalCost > configuration.cornerPieceBudgetBytes else { return }
        let evicted = cornerPieces.evict(toBudget: configuration.cornerPieceBudgetBytes,
                                         sparing: { $1.lastDrawnFrame >= frame })
        evicted.forEach { backend.destroyTexture($0.value.texture) }
        statistics.evictions += evicted.count
    }

    /// Bytes held by cached corner pieces. (main thread only)
    public var cornerPieceCacheBytes: Int { cornerPieces.totalCost }
}
