import FoundationEssentials
import Glibc
import Dispatch

/// Places committed layer contents on the screen: each frame it walks the layer tree, uploads contents
/// whose bitmap identity it has not uploaded yet, draws textures at their frames with opacity, clipping
/// and corner rounding, presents, and records the frame's statistics.
///
/// The compositor runs one frame path; how a frame reaches the screen is its delivery: drawn here on
/// its renderer (`init(backend:)`, inline), or handed as a snapshot to a `CompositorThread` that draws
/// it (`init(thread:)`, threaded). Its window (`window`) gives the events, the cursor, text input and
/// the clipboard; its renderer (`backend`) only makes textures, draws and presents. It never draws
/// contents itself: what it shows is exactly what was committed to `Layer.contents`.
/// - Thread: the thread that made it (see `ThreadOwner`): the UI thread, or a `CompositorThread`.
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
        /// Draw only the changed region of a frame where the backend keeps the last frame
        /// (`Compositor.redrawsChangedRegionsOnly`). Default: true, unless the environment says
        /// `TESSERA_WHOLE_FRAMES=1` (to compare the two from outside, or to rule region drawing out).
        public var redrawsChangedRegionsOnly: Bool
        /// False when the environment says `TESSERA_WHOLE_FRAMES=1`.
        public static var redrawsChangedRegionsByDefault: Bool {
            ProcessInfo.processInfo.environment["TESSERA_WHOLE_FRAMES"] != "1"
        }
        public init(textureBudgetBytes: Int = 256 << 20, maximumTextureSide: Int? = nil,
                    clearColor: Color = Color(rgb: 0x000000), cornerPieceBudgetBytes: Int = 2 << 20,
                    redrawsChangedRegionsOnly: Bool = Configuration.redrawsChangedRegionsByDefault) {
            self.redrawsChangedRegionsOnly = redrawsChangedRegionsOnly
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

    /// The renderer the frames are drawn with; nil for a compositor whose frames are drawn on a
    /// `CompositorThread` (`init(thread:)`), whose own compositor has it.
    public let backend: RenderBackend!
    /// The thread that made the compositor, the only one that may use it.
    public let owner = ThreadOwner()
    /// How frames reach the screen: drawn here, or handed to a compositor thread.
    let delivery: FrameDelivery
    /// Output pixels per point. (main thread only)
    public var scale: Double {
        didSet { if scale != oldValue { delivery.scaleChanged(self) } }
    }
    public var configuration: Configuration {
        didSet {
            textureCache.budgetBytes = configuration.textureBudgetBytes
            delivery.configurationChanged(self)
        }
    }
    /// The compositor thread this compositor hands its frames to; nil when it draws them itself.
    public let thread: CompositorThread?
    /// The window the frames show in: its events, the pointer's shape, text input and the
    /// clipboard. Nil for an output without one (a renderer with no `platformWindow`).
    public var window: PlatformWindow? { delivery.window }
    /// When each event `pollEvents` or `waitForEvents` returned last was read, in frame time (a
    /// compositor thread's events only; empty otherwise).
    public internal(set) var lastEventTimes: [Double] = []
    /// What the compositor thread did with each event `pollEvents` or `waitForEvents` returned last:
    /// the scroll it moved itself, if any (a compositor thread's events only; empty otherwise).
    public internal(set) var lastScrollUpdates: [ScrollUpdate?] = []
    /// Statistics of the most recent frame. (main thread only)
    public var lastFrameStatistics: FrameStatistics {
        get { delivery.drawnElsewhere?.lastFrameStatistics ?? localFrameStatistics }
        set { localFrameStatistics = newValue }
    }
    private var localFrameStatistics = FrameStatistics()
    /// Frames presented so far. (main thread only)
    public var presentCount: Int {
        get { delivery.drawnElsewhere?.presentCount ?? localPresentCount }
        set { localPresentCount = newValue }
    }
    private var localPresentCount = 0
    /// What the last frame drawn (or handed over) showed: the layers' change count, the root and the
    /// output size. (main thread only)
    var drawnChangeCount = -1
    /// `Layer.snapshotChangeCount` then: changes that do not show (a layer's input role) still give
    /// the window the layers a press is tested against. (main thread only)
    var drawnSnapshotChangeCount = -1
    /// The snapshot last drawn, and the time it was drawn at when it had animations. (main thread only)
    var drawnSnapshot: LayerSnapshot?
    var drawnRootSerial: Int?
    private var drawnOutputSize = (width: 0, height: 0)
    /// Frames rendered so far. (main thread only)
    public private(set) var frameIndex = 0
    /// Redraw only the changed region of frames drawn by `renderIfChanged`, on backends that keep the
    /// last frame (`RenderBackend.retainsFrames`). (main thread only)
    public var redrawsChangedRegionsOnly = true
    /// What each layer looked like when last drawn, to find the region a frame must draw again.
    /// (main thread only)
    private var drawnLayers: [Int: DrawnLayer] = [:]
    private var seenLayers: [Int: DrawnLayer] = [:]
    /// True when the backend's retained frame holds the last frame drawn. (main thread only)
    private var retainedFrameIsCurrent = false
    /// True when the last frame was drawn into the retained frame (tests compare it). (main thread only)
    private(set) var lastFrameWasRetained = false
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
    /// True after `releaseTextures` until a frame is drawn: that frame is drawn whole.
    private var texturesReleased = false
    /// True after `setNeedsWholeFrame` until a frame is drawn: one is drawn, whole.
    private var wholeFrameRequested = false
    /// True after `releaseTextures` until `setNeedsWholeFrame`: the window is out of sight, and
    /// `renderIfChanged` draws nothing for it (a change is taken as seen; the window shown again is
    /// drawn whole), so that a change while minimized (a caret's blink, an animation, data arriving)
    /// uploads no texture again.
    private(set) var outOfSight = false
    /// The clip currently set on the backend, to avoid redundant calls. (main thread only)
    private var currentClip: PixelRect?
    /// Statistics of the frame being rendered. (main thread only)
    private var statistics = FrameStatistics()
    /// The texture the previous draw call of this frame took; nil after an untextured one or before
    /// the first. (main thread only)
    private var lastDrawTexture: TextureHandle?

    /// Makes a compositor that draws its frames on `backend`, inline, and reads the events of
    /// `window` (by default the window the backend draws into).
    public init(backend: RenderBackend, window: PlatformWindow? = nil, scale: Double = 1,
                configuration: Configuration = Configuration()) {
        self.backend = backend
        self.delivery = InlineDelivery(window: window ?? backend.platformWindow)
        self.scale = scale.isFinite && scale > 0 ? scale : 1
        self.configuration = configuration
        redrawsChangedRegionsOnly = configuration.redrawsChangedRegionsOnly
        self.textureCache = TextureCache(budgetBytes: configuration.textureBudgetBytes)
        self.thread = nil
    }

    /// The UI thread's compositor for a compositor thread: its frames commit the layers' snapshot to
    /// `thread`, which draws and presents them; its events are the ones `thread` read; its size, scale
    /// and renderer are what `thread` published; text input, the clipboard and the cursor go to
    /// `thread` as commands (`window`). A `NodeHost` runs the same frames on it.
    public init(thread: CompositorThread, configuration: Configuration = Configuration()) {
        let info = thread.info
        self.backend = nil
        self.delivery = ThreadedDelivery(thread: thread)
        self.scale = info.scale
        self.configuration = configuration
        self.textureCache = TextureCache(budgetBytes: configuration.textureBudgetBytes)
        self.thread = thread
    }

    deinit {
        guard let backend else { return }
        textureCache.removeAll(backend: backend)
        cornerPieces.values.forEach { backend.destroyTexture($0.texture) }
    }

    /// The output's size in pixels: the renderer's, or what the compositor thread published.
    public var outputPixelSize: (width: Int, height: Int) {
        delivery.drawnElsewhere?.info.outputPixelSize ?? backend.outputPixelSize
    }

    /// The alpha layout uploads take without converting (`RenderBackend.uploadAlphaLayout`): what
    /// workers prepare bitmaps for.
    public var uploadAlphaLayout: Bitmap.AlphaLayout {
        delivery.drawnElsewhere?.info.uploadAlphaLayout ?? backend.uploadAlphaLayout
    }

    /// The renderer's name ("software", "opengl", "recording").
    public var rendererName: String {
        delivery.drawnElsewhere?.info.rendererName ?? backend.rendererName
    }

    /// The output's size in points.
    public var viewportSize: Size {
        let (w, h) = outputPixelSize
        return Size(width: Double(w) / scale, height: Double(h) / scale)
    }

    /// Bytes of live textures: contents and corner pieces.
    public var liveTextureBytes: Int {
        delivery.drawnElsewhere?.lastFrameStatistics.liveTextureBytes ?? textureCache.liveBytes + cornerPieces.totalCost
    }

    /// Stops the process unless this compositor draws its frames itself: `what` draws, reads the
    /// renderer or its textures.
    func requireRenderer(_ what: String) {
        Contract.require(backend != nil,
                         "\(what) draws: this compositor's frames are drawn on its compositor thread, not here")
    }

    /// True when `bitmap` currently has textures (it was drawn and not evicted or reset since).
    public func isResident(_ bitmap: Bitmap) -> Bool { textureCache.isResident(bitmap) }

    // MARK: Events

    /// Text input and the clipboard: the window's. (main thread only)
    public var textInputPlatform: TextInputPlatform? { window }

    /// Drains the window's events. Renderer resets are handled here (every texture is dropped and
    /// uploaded again when next drawn); the rest is returned for the app to route.
    public func pollEvents() -> [InputEvent] {
        owner.precondition("Compositor.pollEvents")
        return delivery.events(self, waiting: nil)
    }

    /// Blocks until the platform has an event, `UIWakeup.shared` is woken, or `timeout` seconds pass
    /// (nil: no limit), then returns the events, as `pollEvents()` does. An app with nothing to do
    /// waits here instead of running frames. With a compositor thread, the wait is `UIWakeup.shared`'s,
    /// which that thread wakes when it has read input.
    public func waitForEvents(timeout: Double?) -> [InputEvent] {
        owner.precondition("Compositor.waitForEvents")
        return delivery.events(self, waiting: .some(timeout))
    }

    /// The input among `events`; renderer resets are handled on the way.
    func handle(_ events: [BackendEvent]) -> [InputEvent] {
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
        owner.precondition("Compositor.handleRendererReset")
        delivery.rendererReset(self)
    }

    /// Lets go of every texture, as a window out of sight (minimized) does: nothing is drawn for it
    /// from now until `setNeedsWholeFrame` (a change meanwhile uploads nothing), and that frame is
    /// drawn whole, uploading the layers' committed contents again. Nothing the layers hold is lost.
    public func releaseTextures() {
        owner.precondition("Compositor.releaseTextures")
        delivery.releaseTextures(self)
    }

    /// Draws the next frame whole, now, though nothing changed: a window shown again after it was out
    /// of sight (its textures released, what the window system kept of it perhaps lost).
    public func setNeedsWholeFrame() {
        owner.precondition("Compositor.setNeedsWholeFrame")
        delivery.requestWholeFrame(self)
    }

    /// Marks the next frame to be drawn whole and drawn (`setNeedsWholeFrame`), on the renderer's thread.
    func requestWholeFrame() {
        requireRenderer("Compositor.setNeedsWholeFrame")
        wholeFrameRequested = true
        outOfSight = false
    }

    /// Drops every texture of this compositor's renderer (see `handleRendererReset`); a renderer's
    /// reset is counted and draws at once, a release (`releaseTextures`) waits for a reason to draw.
    func dropTextures(countingReset: Bool = true) {
        requireRenderer(countingReset ? "Compositor.handleRendererReset" : "Compositor.releaseTextures")
        textureCache.removeAll(backend: backend)
        cornerPieces.removeAll().forEach { backend.destroyTexture($0.value.texture) }
        if countingReset {
            pendingResets += 1
        } else {
            texturesReleased = true
            outOfSight = true
        }
        // Skipped frames report the textures held now (none), not those of the last frame drawn.
        localFrameStatistics.liveTextures = 0
        localFrameStatistics.liveTextureBytes = 0
        localFrameStatistics.cornerPieceBytes = 0
    }

    // MARK: Frames

    /// Draws the tree under `root` and presents it. Returns the frame's statistics. With `time`,
    /// layers' animations are drawn at that time (`LayerAnimation`); without, their model values.
    @discardableResult
    @MainActor
    public func render(_ root: Layer?, at time: Double? = nil) -> FrameStatistics {
        owner.precondition("Compositor.render")
        defer { drawnChangeCount = Layer.changeCount; drawnSnapshotChangeCount = Layer.snapshotChangeCount }
        return delivery.frame(self, root, at: time, ifChanged: false)
    }

    /// Draws `snapshot` and presents it. Returns the frame's statistics.
    @discardableResult
    public func render(snapshot: LayerSnapshot?, at time: Double? = nil) -> FrameStatistics {
        owner.precondition("Compositor.render")
        requireRenderer("Compositor.render(snapshot:)")
        _ = changedRegion(snapshot, at: time)
        compose(snapshot, at: time)
        return present()
    }

    /// Draws and presents `root` only when something on screen may differ from the last frame drawn:
    /// a layer changed (`Layer.changeCount`), another root, another output size, an animation still
    /// running, or the renderer lost its textures. Otherwise nothing is drawn or presented, and the
    /// statistics say so (`presented == false`): a window at rest costs nothing here.
    ///
    /// Only what changed is drawn again where the backend keeps the last frame
    /// (`redrawsChangedRegionsOnly`): the region covering every layer whose picture, place, opacity,
    /// clip or order changed (where it was and where it is) is cleared and redrawn, and a change that
    /// shows nowhere (a hidden layer's) draws and presents nothing. A region over a third of the
    /// output (a scroll, a new screen) is drawn whole and directly, without the retained frame's copy.
    /// With `time`, animations are drawn at that time.
    @discardableResult
    @MainActor
    public func renderIfChanged(_ root: Layer?, at time: Double? = nil) -> FrameStatistics {
        owner.precondition("Compositor.renderIfChanged")
        guard needsRender(root, at: time) else {
            // Input taken in that changed nothing on screen is acknowledged all the same: a scroll the
            // compositor thread drove for it goes back to the snapshot.
            delivery.acknowledgeInput(self)
            return skippedFrame()
        }
        defer { drawnChangeCount = Layer.changeCount; drawnSnapshotChangeCount = Layer.snapshotChangeCount }
        return delivery.frame(self, root, at: time, ifChanged: true)
    }

    /// `renderIfChanged` for a snapshot: what a compositor with a thread of its own calls with the
    /// snapshot the UI thread last committed and the time of the frame it presents.
    @discardableResult
    public func renderIfChanged(snapshot root: LayerSnapshot?, at time: Double? = nil) -> FrameStatistics {
        owner.precondition("Compositor.renderIfChanged")
        requireRenderer("Compositor.renderIfChanged(snapshot:)")
        guard needsRender(snapshot: root, at: time) else { return skippedFrame() }
        if outOfSight {
            // Out of sight (minimized): nothing drawn, no texture uploaded again. The change is taken
            // as seen; the window shown again is drawn whole (`setNeedsWholeFrame`).
            noteDrawn(root, at: time)
            return skippedFrame()
        }
        let (w, h) = backend.outputPixelSize
        let wholeFrameNeeded = root?.id != drawnRootSerial || pendingResets > 0 || texturesReleased || wholeFrameRequested
            || frameIndex == 0
            || w != drawnOutputSize.width || h != drawnOutputSize.height
        let region = changedRegion(root, at: time)
        if !wholeFrameNeeded && (region?.isEmpty ?? true) {
            // Layers changed, but none that shows: the screen is as drawn.
            noteDrawn(root, at: time)
            return skippedFrame()
        }
        guard redrawsChangedRegionsOnly && backend.retainsFrames else {
            // Drawn whole; where the backend can, only the changed region goes to the window (the
            // rest of it shows the same pixels already).
            compose(root, at: time)
            return present(region: wholeFrameNeeded ? nil : region)
        }
        guard let region, region.width * region.height * 3 <= w * h else {
            // A large change (a scroll, a new screen): drawn whole and directly, with no copy.
            compose(root, at: time)
            return present(region: wholeFrameNeeded ? nil : region)
        }
        // A small change: only its region is drawn again when the retained frame holds the last frame;
        // otherwise the whole frame is drawn into it, so that the next small change can be.
        compose(root, at: time, into: .retained(region: !wholeFrameNeeded && retainedFrameIsCurrent ? region : nil))
        if statistics.redrawnRegion != nil && !backend.retainedRegionIsExact {
            // Something in the region would be drawn otherwise under its clip (a scaled copy on the
            // software renderer): the frame is drawn whole, which leaves the rest as it was.
            compose(root, at: time)
            statistics.regionRedrawsAbandoned = 1
            return present(region: region)
        }
        return present(region: statistics.redrawnRegion)
    }

    func skippedFrame() -> FrameStatistics {
        var skipped = FrameStatistics()
        skipped.frameIndex = frameIndex
        skipped.presented = false
        skipped.liveTextures = lastFrameStatistics.liveTextures
        skipped.liveTextureBytes = lastFrameStatistics.liveTextureBytes
        skipped.cornerPieceBytes = lastFrameStatistics.cornerPieceBytes
        return skipped
    }

    private func present(region: PixelRect? = nil) -> FrameStatistics {
        let presentStart = MonotonicClock.nanoseconds()
        statistics.presentedRegion = region
        backend.present(region: region)
        statistics.presentMilliseconds = MonotonicClock.milliseconds(since: presentStart)
        lastFrameStatistics = statistics
        presentCount += 1
        return statistics
    }

    /// True when `root` may look different from the last frame drawn.
    @MainActor
    public func needsRender(_ root: Layer?, at time: Double? = nil) -> Bool {
        owner.precondition("Compositor.needsRender")
        return delivery.needsFrame(self, root, at: time)
    }

    /// True when `snapshot` drawn at `time` may look different from the last frame drawn: another
    /// snapshot, another output size, lost textures, or animations that were running at the last frame.
    public func needsRender(snapshot: LayerSnapshot?, at time: Double? = nil) -> Bool {
        requireRenderer("Compositor.needsRender(snapshot:)")
        // Out of sight, only another snapshot is looked at (and not drawn): no animation's pace.
        if outOfSight { return snapshot !== drawnSnapshot }
        let (w, h) = backend.outputPixelSize
        if snapshot !== drawnSnapshot || pendingResets > 0 || wholeFrameRequested || frameIndex == 0
            || w != drawnOutputSize.width || h != drawnOutputSize.height { return true }
        guard let time, let snapshot, let drawnTime, time != drawnTime else { return false }
        return snapshot.isAnimating(at: drawnTime)
    }

    /// The time the last frame's animations were drawn at (nil: model values).
    private var drawnTime: Double?

    private func noteDrawn(_ root: LayerSnapshot?, at time: Double?) {
        (backend?.platformWindow as? SDLWindow)?.showed(root)
        drawnSnapshot = root
        drawnRootSerial = root?.id
        drawnTime = time
    }

    /// Draws the tree under `root`, reads the pixels back, then presents. For tests and screenshots.
    @MainActor
    public func capture(_ root: Layer?, at time: Double? = nil) -> Bitmap? {
        owner.precondition("Compositor.capture")
        defer { drawnChangeCount = Layer.changeCount; drawnSnapshotChangeCount = Layer.snapshotChangeCount }
        return delivery.capture(self, root, at: time)
    }

    /// Draws `snapshot`, reads the pixels back, then presents.
    public func capture(snapshot root: LayerSnapshot?, at time: Double? = nil) -> Bitmap? {
        owner.precondition("Compositor.capture")
        requireRenderer("Compositor.capture(snapshot:)")
        _ = changedRegion(root, at: time)
        compose(root, at: time)
        let pixels = backend.readPixels()
        _ = present()
        return pixels
    }

    /// Draws the tree: whole and directly, or into the backend's retained frame, whole or only a
    /// region of it.
    private enum Target {
        /// The whole output, drawn directly.
        case direct
        /// The backend's retained frame: `region` of it, or all of it.
        case retained(region: PixelRect?)
    }

    private func compose(_ root: LayerSnapshot?, at time: Double?, into target: Target = .direct) {
        noteDrawn(root, at: time)
        let outputSize = backend.outputPixelSize
        drawnOutputSize = (outputSize.width, outputSize.height)
        frameIndex += 1
        statistics = FrameStatistics()
        statistics.frameIndex = frameIndex
        statistics.outputPixelWidth = outputSize.width
        statistics.outputPixelHeight = outputSize.height
        statistics.scale = scale
        statistics.rendererResets = pendingResets
        pendingResets = 0
        texturesReleased = false
        wholeFrameRequested = false
        lastDrawList.removeAll(keepingCapacity: true)
        lastDrawTexture = nil

        let start = MonotonicClock.nanoseconds()
        let (w, h) = backend.outputPixelSize
        let output = PixelRect(x: 0, y: 0, width: w, height: h)
        var clip = output
        switch target {
        case .retained(let region):
            // Only `region` when the backend still holds the last frame; otherwise all of it.
            if backend.beginRetainedFrame(clearColor: configuration.clearColor, region: region), let region {
                clip = region.intersection(output)
                statistics.redrawnRegion = clip
            }
            retainedFrameIsCurrent = true
            lastFrameWasRetained = true
        case .direct:
            lastFrameWasRetained = false
            backend.beginFrame(clearColor: configuration.clearColor)
            // Drawn whole into the output: where the output is the retained frame, it is current.
            retainedFrameIsCurrent = backend.retainsFramesInOutput
        }
        currentClip = nil
        if let root { draw(root, at: time, parentOrigin: .zero, parentOpacity: 1, clip: clip) }
        setClip(nil)
        statistics.drawMilliseconds = MonotonicClock.milliseconds(since: start)

        textureCache.finishFrame(frameIndex, backend: backend, statistics: &statistics)
        finishCornerPieces()
        statistics.cornerPieceBytes = cornerPieces.totalCost
        statistics.liveTextures = textureCache.liveTextureCount + cornerPieces.count
        statistics.liveTextureBytes = liveTextureBytes
    }

    /// The walk. `parentOrigin` is in points (root coordinates), `clip` in output pixels.
    private func draw(_ layer: LayerSnapshot, at time: Double?, parentOrigin: Point, parentOpacity: Double,
                      clip: PixelRect) {
        let opacity = parentOpacity * layer.presentedOpacity(at: time)
        guard !layer.isHidden, opacity > 0 else { return }
        statistics.layersVisited += 1

        let frame = layer.presentedFrame(at: time)
        let origin = Point(x: parentOrigin.x + frame.minX, y: parentOrigin.y + frame.minY)
        let pixelRect = Rect(origin: origin, size: frame.size).scaled(by: scale)
        let pixelRadii = layer.cornerRadii.scaled(by: scale)
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

        let sublayers = layer.sublayers
        if !sublayers.isEmpty {
            var childClip = clip
            if layer.clipsToBounds { childClip = clip.intersection(pixelRect.nearestPixelRect) }
            if !(layer.clipsToBounds && childClip.isEmpty) {
                for sublayer in sublayers {
                    draw(sublayer, at: time, parentOrigin: origin, parentOpacity: opacity, clip: childClip)
                }
            }
        }

        if visible && rounded && mode == .clipping, let color = layer.cornerClipColor {
            setClip(clip)
            drawCornerPieces(in: pixelRect, radii: pixelRadii, color: color, opacity: opacity)
        }
    }

    private func drawOwnContent(_ layer: LayerSnapshot, in rect: Rect, radii: CornerRadii, rounded: Bool,
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

    // MARK: Changed regions

    /// What a layer looked like when drawn: the pixels it may touch (its rectangle widened by two
    /// pixels for anti-aliased edges, within its ancestors' clips), its version, its opacity with its
    /// ancestors', and its place in the drawing order.
    struct DrawnLayer: Equatable {
        var pixels: PixelRect
        /// Where the layer lands, in output pixels, unrounded: a move of less than a pixel changes
        /// which pixels its fractional edges cover. (Zero for a layer that shows nowhere.)
        var placement: Rect
        var version: Int
        var opacity: Double
        var parent: Int?
        var position: Int
    }

    /// Compares the tree with how it was last drawn and remembers it as it is now. Returns the region
    /// covering every layer that changed, where it was and where it is (empty: nothing that shows
    /// changed), or nil when nothing changed at all.
    private func changedRegion(_ root: LayerSnapshot?, at time: Double?) -> PixelRect? {
        seenLayers.removeAll(keepingCapacity: true)
        var region: PixelRect?
        let (w, h) = backend.outputPixelSize
        let output = PixelRect(x: 0, y: 0, width: w, height: h)
        if let root {
            collect(root, at: time, parentOrigin: .zero, parentOpacity: 1, clip: output, parent: nil, position: 0,
                    reordered: false, into: &region)
        }
        for (key, drawn) in drawnLayers where seenLayers[key] == nil { Self.add(drawn.pixels, to: &region) }
        swap(&drawnLayers, &seenLayers)
        return region ?? (root !== drawnSnapshot ? PixelRect(x: 0, y: 0, width: 0, height: 0) : nil)
    }

    /// `reordered`: an ancestor took another place in the drawing order (another parent, another
    /// place among its siblings), which puts this layer over or under other layers than before even
    /// where nothing of its own changed.
    private func collect(_ layer: LayerSnapshot, at time: Double?, parentOrigin: Point, parentOpacity: Double,
                         clip: PixelRect, parent: Int?, position: Int, reordered: Bool, into region: inout PixelRect?) {
        let opacity = parentOpacity * layer.presentedOpacity(at: time)
        guard !layer.isHidden, opacity > 0 else { return }
        let frame = layer.presentedFrame(at: time)
        let origin = Point(x: parentOrigin.x + frame.minX, y: parentOrigin.y + frame.minY)
        let pixelRect = Rect(origin: origin, size: frame.size).scaled(by: scale)
        let widened = Rect(x: pixelRect.minX - 2, y: pixelRect.minY - 2,
                           width: pixelRect.width + 4, height: pixelRect.height + 4).nearestPixelRect
        let pixels = pixelRect.isEmpty ? PixelRect(x: 0, y: 0, width: 0, height: 0) : widened.intersection(clip)
        let id = layer.id
        let now = DrawnLayer(pixels: pixels, placement: pixels.isEmpty ? .zero : pixelRect, version: layer.version,
                             opacity: opacity, parent: parent, position: position)
        seenLayers[id] = now
        var subtreeReordered = reordered
        if let before = drawnLayers[id] {
            if before != now || reordered {
                Self.add(before.pixels, to: &region)
                Self.add(now.pixels, to: &region)
            }
            if before.parent != now.parent || before.position != now.position { subtreeReordered = true }
        } else {
            Self.add(now.pixels, to: &region)
        }
        let sublayers = layer.sublayers
        guard !sublayers.isEmpty else { return }
        var childClip = clip
        if layer.clipsToBounds { childClip = clip.intersection(pixelRect.nearestPixelRect) }
        if layer.clipsToBounds && childClip.isEmpty { return }
        for (index, sublayer) in sublayers.enumerated() {
            collect(sublayer, at: time, parentOrigin: origin, parentOpacity: opacity, clip: childClip, parent: id,
                    position: index, reordered: subtreeReordered, into: &region)
        }
    }

    /// Grows `region` to cover `pixels` (an empty rectangle adds nothing but makes the region non-nil).
    private static func add(_ pixels: PixelRect, to region: inout PixelRect?) {
        guard !pixels.isEmpty else {
            if region == nil { region = PixelRect(x: 0, y: 0, width: 0, height: 0) }
            return
        }
        guard let current = region, !current.isEmpty else {
            region = pixels
            return
        }
        let x0 = min(current.x, pixels.x), y0 = min(current.y, pixels.y)
        let x1 = max(current.x + current.width, pixels.x + pixels.width)
        let y1 = max(current.y + current.height, pixels.y + pixels.height)
        region = PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
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
