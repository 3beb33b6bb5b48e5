public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A node that shows an image: decoded in the background at the size it is shown at once it is in the
/// preload range and its frame is known, drawn with its corners (and an optional chat-bubble tail)
/// baked into the bitmap.
///
/// - Decoding starts on entering preload, or when the frame gets a size while in preload, and is
///   cancelled on leaving preload, which also lets the decoded image go (the cache may keep it). A
///   frame that grows past what was decoded decodes again; the old image shows until the new one
///   arrives. Drawing happens in the display range like any node's.
/// - Decoded bitmaps are shared through an `ImageCache` keyed by source and pixel size.
/// - A `.url` source is fetched by `networkLoader` on its threads once the node is in preload with a
///   size; leaving preload, or the node going away, cancels the fetch (its socket closes when no other
///   node wants the same URL), and coming back starts it again (or finds the bytes in the loader's
///   caches). A progressive JPEG shows each better pass as its bytes arrive (`isShowingPartialImage`);
///   other images show once whole. See `ImageNode+Network.swift`.
/// - A failed load (missing file, bad bytes, a header over the limits, …) ends in `.failed` with the
///   reason, and the node draws an error placeholder; nothing traps.
/// - Display arguments (size, corners, tail, colour, content mode, image) are compared with those of
///   the last draw: setting the same ones again draws nothing.
/// - Its natural size, when its layout gives it none, comes from the image's header (see
///   `calculateSizeThatFits(_:)`).
/// - An animated GIF, APNG or WebP plays while the node is visible (see `ImageNode+Animation.swift`).
/// - Thread: properties any; hooks main; drawing on display workers.
public final class ImageNode: Node, NodeDrawing, @unchecked Sendable {
    // MARK: Accessibility

    /// An image is an element (label it with `accessibilityLabel`; one without a label is read as
    /// "image"). - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .image)
    }

    /// Where loading stands.
    public enum LoadState: Sendable, Equatable {
        case empty
        case loading
        case loaded
        case failed(ImageError)
    }

    /// Everything a draw needs; compared with the last draw's to skip redundant draws.
    public struct DrawParameters: Sendable, Equatable {
        var image: Bitmap?
        var imageIdentity: BitmapIdentity?
        var failed: Bool
        var contentMode: ContentMode
        var radii: CornerRadii
        var tail: BubbleTail?
        var emptyColor: Color?
        var size: Size

        public static func == (a: Self, b: Self) -> Bool {
            a.imageIdentity == b.imageIdentity && a.failed == b.failed && a.contentMode == b.contentMode
                && a.radii == b.radii && a.tail == b.tail && a.emptyColor == b.emptyColor && a.size == b.size
        }
    }

    struct ImageState {
        var source: ImageSource?
        var contentMode: ContentMode = .aspectFill
        var cropRect: Rect?
        var imageCornerRadii: CornerRadii = .zero
        var bubbleTail: BubbleTail?
        var emptyColor: Color?
        var limits = ImageDecoder.Limits()
        var cache: ImageCache = .shared
        var loadState: LoadState = .empty
        var image: Bitmap?
        /// The pixel size the image (or the decode in flight) was made for.
        var decodedFor: (width: Int, height: Int)?
        var decodeJob: DisplayJob?
        /// The fetch of a `.url` source under way for the current decode.
        var fetch: NetworkImageRequest?
        /// What fetches `.url` sources.
        var networkLoader: NetworkImageLoader = .shared
        /// True while `image` is a pass of a progressive JPEG still arriving.
        var showsPartialImage = false
        /// The fetch reading a `.url` source's header for the natural size.
        var naturalSizeFetch: NetworkImageRequest?
        /// What the last request asked to be drawn: a change back to it asks for nothing. Compared and
        /// set in one step under the lock, and never written by the capture (a draw captures the
        /// latest state anyway), so a value changed back while a draw of another is captured still
        /// asks for its draw.
        var lastRequested: DrawParameters?
        /// The source whose header a worker is reading for the natural size (asked from the UI thread).
        var naturalSizeRead: ImageSource?
        /// The source whose header could not be read: measured as zero until the source changes.
        var naturalSizeFailed: ImageSource?
        /// Told when a load ends (`loadStateHandler`).
        var loadStateHandler: (@MainActor @Sendable (LoadState) -> Void)?
    }

    /// Called on the UI thread each time a load of the source ends: `.loaded` with the image shown,
    /// or `.failed` with the reason (a placeholder for a progress indicator while a picture comes by
    /// URL: `isLoadingOverNetwork` says whether one is under way). Not called for a load that a newer
    /// source replaced. - Thread: any (to set)
    public var loadStateHandler: (@MainActor @Sendable (LoadState) -> Void)? {
        get { imageState.withLock { $0.loadStateHandler } }
        set {
            let old = imageState.withLock { state in
                defer { state.loadStateHandler = newValue }
                return state.loadStateHandler
            }
            withExtendedLifetime(old) {}  // let go of after unlocking
        }
    }
    private let lockedImageState = Locked(ImageState())
    /// The image state; out of a draw function's reach like all node state (checked).
    var imageState: Locked<ImageState> {
        DrawScope.check(self)
        return lockedImageState
    }
    /// Invalidates decodes in flight when the source changes or the node leaves preload. Bumped only
    /// under the image state's lock, and a decode's result is stored only if it still matches under
    /// that same lock, so a result can never outlive the change that made it stale.
    let decodeSentinel = DisplaySentinel()
    /// Plays the source when it is an animation (see `ImageNode+Animation.swift`).
    let animationPlayer = AnimatedImagePlayer()

    public override init() {
        super.init()
        contentsCrossFadeDuration = 0.15
        animationPlayer.attach(self)
    }

    deinit {
        // Nothing else holds the fetches for this node: let them go (a fetch no node wants stops).
        let (fetch, naturalSizeFetch) = lockedImageState.withLock { state in
            defer { state.fetch = nil; state.naturalSizeFetch = nil }
            return (state.fetch, state.naturalSizeFetch)
        }
        fetch?.cancel()
        naturalSizeFetch?.cancel()
    }

    // MARK: Properties (any thread)

    /// The picture. Setting it drops the current one and decodes the new one if the node is in preload;
    /// a node whose layout does not give it a size is measured again (its natural size may change).
    public var source: ImageSource? {
        get { imageState.withLock { $0.source } }
        set {
            let (changed, work, naturalSizeFetch) = imageState.withLock { state -> (Bool, LoadWork, NetworkImageRequest?) in
                guard state.source != newValue else { return (false, LoadWork(), nil) }
                state.source = newValue
                state.naturalSizeFailed = nil
                state.naturalSizeRead = nil
                defer { state.naturalSizeFetch = nil }
                return (true, Self.dropImage(&state, sentinel: decodeSentinel), state.naturalSizeFetch)
            }
            work.cancel()
            naturalSizeFetch?.cancel()
            guard changed else { return }
            animationPlayer.reset()
            if preferredSize == nil { setNeedsLayout() }
            if interfaceState.contains(.preload) { startDecode() }
            displayArgumentsDidChange()
        }
    }

    /// How the image fills the bounds. Default: aspect fill.
    public var contentMode: ContentMode {
        get { imageState.withLock { $0.contentMode } }
        set { updateDecodeInput { $0.contentMode = newValue } }
    }

    /// The part of the image to show, in the decoded image's pixels (nil: all of it).
    public var cropRect: Rect? {
        get { imageState.withLock { $0.cropRect } }
        set { updateDecodeInput { $0.cropRect = newValue } }
    }

    /// Corner radii baked into the bitmap, one per corner, in points; radii that add up to more than a
    /// side are scaled down together to fit it.
    ///
    /// Fallback: a NaN, negative or infinite radius draws that corner square (0), and is reported once
    /// per node (`diagnostics`, `TesseraLog.layout`).
    public var imageCornerRadii: CornerRadii {
        get { imageState.withLock { $0.imageCornerRadii } }
        set {
            let corners = [newValue.topLeft, newValue.topRight, newValue.bottomLeft, newValue.bottomRight]
            if corners.contains(where: { !($0.isFinite && $0 >= 0) }) {
                reportOnce(.invalidProperty, property: "imageCornerRadii",
                           "image corner radii set to \(newValue); a NaN, negative or infinite corner is drawn square (0)")
            }
            imageState.withLock { $0.imageCornerRadii = newValue }
            displayArgumentsDidChange()
        }
    }

    /// A chat-bubble tail baked into the bitmap, or nil.
    public var bubbleTail: BubbleTail? {
        get { imageState.withLock { $0.bubbleTail } }
        set {
            imageState.withLock { $0.bubbleTail = newValue }
            displayArgumentsDidChange()
        }
    }

    /// Drawn (in the image's shape) while there is no image yet.
    public var emptyColor: Color? {
        get { imageState.withLock { $0.emptyColor } }
        set {
            imageState.withLock { $0.emptyColor = newValue }
            displayArgumentsDidChange()
        }
    }

    /// Caps on what an image header may claim before it is decoded.
    public var decodeLimits: ImageDecoder.Limits {
        get { imageState.withLock { $0.limits } }
        set { imageState.withLock { $0.limits = newValue } }
    }

    /// Where decoded images are shared. Default: `ImageCache.shared`.
    public var imageCache: ImageCache {
        get { imageState.withLock { $0.cache } }
        set { imageState.withLock { $0.cache = newValue } }
    }

    /// Where loading stands.
    public var loadState: LoadState { imageState.withLock { $0.loadState } }

    /// The decoded (and shrunk) bitmap, once loaded.
    public var image: Bitmap? { imageState.withLock { $0.image } }

    /// Changes what the decode depends on; setting the value a field already has does nothing (no
    /// re-decode, no flash of the empty colour).
    private func updateDecodeInput(_ change: (inout ImageState) -> Void) {
        let (reload, work) = imageState.withLock { state -> (Bool, LoadWork) in
            let before = (state.contentMode, state.cropRect)
            change(&state)
            guard before != (state.contentMode, state.cropRect) else { return (false, LoadWork()) }
            guard state.source != nil, state.loadState != .empty else { return (false, LoadWork()) }
            return (true, Self.dropImage(&state, sentinel: decodeSentinel))
        }
        work.cancel()
        if reload { animationPlayer.reset() }
        if reload && interfaceState.contains(.preload) { startDecode() }
        displayArgumentsDidChange()
    }

    /// Forgets the image and invalidates any decode of it, inside the image state's lock; returns the
    /// decode job and fetch to cancel once the lock is released.
    private static func dropImage(_ state: inout ImageState, sentinel: DisplaySentinel) -> LoadWork {
        sentinel.bump()
        state.image = nil
        state.decodedFor = nil
        state.loadState = .empty
        state.showsPartialImage = false
        return takeLoadWork(&state)
    }

    /// Takes the decode job and fetch out of the state, for cancelling once the lock is released.
    static func takeLoadWork(_ state: inout ImageState) -> LoadWork {
        defer { state.decodeJob = nil; state.fetch = nil }
        return LoadWork(job: state.decodeJob, fetch: state.fetch)
    }

    /// A decode job and a fetch, cancelled together outside the image state's lock.
    struct LoadWork {
        var job: DisplayJob?
        var fetch: NetworkImageRequest?

        func cancel() {
            job?.cancel()
            fetch?.cancel()
        }
    }

    /// Asks for a draw only when what would be drawn differs from what the last request asked for.
    func displayArgumentsDidChange() {
        let current = currentParameters()
        let changed = imageState.withLock { state -> Bool in
            guard state.lastRequested != current else { return false }
            state.lastRequested = current
            return true
        }
        if changed { setNeedsDisplay() }
    }

    private func currentParameters() -> DrawParameters {
        let size = frame.sanitized.size
        return imageState.withLock { state in
            DrawParameters(image: state.image, imageIdentity: state.image?.identity,
                           failed: { if case .failed = state.loadState { return true } else { return false } }(),
                           contentMode: state.contentMode, radii: state.imageCornerRadii.clamped(to: size),
                           tail: state.bubbleTail, emptyColor: state.emptyColor, size: size)
        }
    }

    // MARK: Natural size (any thread)

    /// The node's size when its layout gives it none: the image's natural size.
    ///
    /// - `preferredSize` (width and height set in points in `style`) wins, as for any node.
    /// - Otherwise the natural size is the image's pixel size from its header (EXIF orientation
    ///   applied) divided by the node's `contentsScale`, so the image is shown one image pixel to one
    ///   screen pixel, as `.center` mode shows it; a `.bitmap` source's natural size is its own
    ///   `pointSize`. A style that sets only the width (or only the height) in points gets the other
    ///   side from the image's aspect ratio; otherwise the natural size is scaled down, aspect kept, to
    ///   fit `constrainedSize` (never up).
    /// - The header is read once per source (its first 64 KB, rarely more; never decoded) and kept in a
    ///   shared cache, and only when the layout leaves the size open: a node measured for an exact size
    ///   reads nothing. Measured off the UI thread (a list's rows, a host laying out in the background),
    ///   the header is read there; measured on the UI thread before it is known, the node measures as
    ///   zero for now, a display worker reads it, and the node asks for layout again once it is known.
    ///   A `.url` source is never waited for: it measures as zero until the first bytes holding its
    ///   header have been fetched (by `networkLoader`, on its threads; the bytes go to its caches for
    ///   the decode), then the node asks for layout again.
    /// - Fallback: no source, or a source whose header cannot be read (a missing file, not an image, a
    ///   directory), measures as zero; the reason is reported once per node (`diagnostics`,
    ///   `TesseraLog.layout`), and the decode, once the node has a size, fails with it as usual.
    /// - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        if let preferredSize { return preferredSize }
        guard let natural = naturalSize() else { return .zero }
        guard natural.width > 0, natural.height > 0 else { return .zero }
        let style = self.style
        switch (style.width, style.height) {
        case (.points(let width), .auto) where width.isFinite && width >= 0:
            return Size(width: width, height: width * natural.height / natural.width)
        case (.auto, .points(let height)) where height.isFinite && height >= 0:
            return Size(width: height * natural.width / natural.height, height: height)
        default:
            func room(_ value: Double) -> Double { value.isNaN ? .infinity : max(0, value) }
            let factor = min(1, room(constrainedSize.width) / natural.width, room(constrainedSize.height) / natural.height)
            return Size(width: natural.width * factor, height: natural.height * factor)
        }
    }

    /// A range that leaves no choice is the size: no header is read for it.
    override func calculateSize(for range: SizeRange) -> Size {
        range.min == range.max ? range.min : calculateSizeThatFits(range.max)
    }

    /// The image's natural size in points; nil while unknown (being read, unreadable, no source).
    private func naturalSize() -> Size? {
        let (source, limits, failed) = imageState.withLock { ($0.source, $0.limits, $0.naturalSizeFailed) }
        guard let source, source != failed else { return nil }
        if case .bitmap(let bitmap) = source { return bitmap.pointSize }
        let cache = ImageHeaderCache.shared
        let pixels: ImageHeaderCache.PixelSize
        if let cached = cache.cachedSize(of: source) {
            pixels = cached
        } else if case .url(let url) = source {
            // Never waited for on a measuring thread: fetched, and measured again once known.
            readNaturalSizeOverNetwork(source, url: url, limits: limits)
            return nil
        } else if UIThread.isCurrent {
            readNaturalSizeOnWorker(source, limits: limits)
            return nil
        } else {
            do {
                pixels = try cache.size(of: source, limits: limits)
            } catch {
                naturalSizeReadFailed(source, error)
                return nil
            }
        }
        let scale = contentsScale
        return Size(width: Double(pixels.width) / scale, height: Double(pixels.height) / scale)
    }

    /// Reads the header of `source` on a display worker, then has the node measured again; once per
    /// source at a time.
    private func readNaturalSizeOnWorker(_ source: ImageSource, limits: ImageDecoder.Limits) {
        let isNew = imageState.withLock { state -> Bool in
            guard state.naturalSizeRead != source else { return false }
            state.naturalSizeRead = source
            return true
        }
        guard isNew else { return }
        let box = UIThreadBound(WeakNode(self))
        let mainQueue = runtime.mainQueue
        runtime.scheduler.schedule(priority: displayPriority, kind: .decode) { _ in
            let result = Result { try ImageHeaderCache.shared.size(of: source, limits: limits) }
            mainQueue.enqueue { (box.value.node as? ImageNode)?.naturalSizeDidArrive(for: source, result) }
            return .completed
        }
    }

    /// The worker's header read finished: measure again with the size, or remember the failure.
    /// (UI thread)
    func naturalSizeDidArrive(for source: ImageSource, _ result: Result<ImageHeaderCache.PixelSize, any Error>) {
        let current = imageState.withLock { state -> Bool in
            if state.naturalSizeRead == source { state.naturalSizeRead = nil }
            return state.source == source
        }
        guard current else { return }
        switch result {
        case .success: setNeedsLayout()
        case .failure(let error): naturalSizeReadFailed(source, error)
        }
    }

    func naturalSizeReadFailed(_ source: ImageSource, _ error: any Error) {
        imageState.withLock { state in if state.source == source { state.naturalSizeFailed = source } }
        reportOnce(.noNaturalSize, property: "naturalSize",
                   "its layout gives it no size and the image header cannot be read (\(error)); it measures as zero")
    }

    // MARK: Interface states (main)

    public override func didEnterPreloadState() {
        super.didEnterPreloadState()
        startDecode()
    }

    public override func didExitPreloadState() {
        super.didExitPreloadState()
        // The decoded image goes with the preload range; a failure is remembered (it would fail again).
        let work = imageState.withLock { state -> LoadWork in
            if case .failed = state.loadState {
                decodeSentinel.bump()
                return Self.takeLoadWork(&state)
            }
            return Self.dropImage(&state, sentinel: decodeSentinel)
        }
        work.cancel()
        animationPlayer.reset()
    }

    public override func didEnterVisibleState() {
        super.didEnterVisibleState()
        // An animation holds on its frame while the appearance asks for reduced motion.
        dependOnAppearance(.motion)
        animationPlayer.holdsForReducedMotion = runtime.appearance.reducedMotion
        animationPlayer.setVisible(true)
    }

    /// Reduced motion holds an animated image on the frame it shows (as `isAnimationPaused` does);
    /// turned off, it goes on from there.
    /// - Thread: main
    public override func appearanceDidChange(_ change: AppearanceChange) {
        if change.contains(.motion) { animationPlayer.holdsForReducedMotion = runtime.appearance.reducedMotion }
        super.appearanceDidChange(change)
    }

    public override func didExitVisibleState() {
        super.didExitVisibleState()
        animationPlayer.setVisible(false)
    }

    public override func frameSizeDidChange() {
        super.frameSizeDidChange()
        if interfaceState.contains(.preload) { startDecode() }
    }

    public override func didExitDisplayState() {
        super.didExitDisplayState()
        imageState.withLock { $0.lastRequested = nil }  // contents are cleared: the next entry draws again
    }

    /// True while a decode job for the current source is queued or running.
    public var isDecoding: Bool { imageState.withLock { $0.decodeJob != nil && $0.loadState == .loading } }

    /// True while a `.url` source is being fetched for the current decode.
    public var isFetching: Bool { imageState.withLock { $0.fetch != nil && $0.loadState == .loading } }

    /// Starts decoding the source at the frame's pixel size: unless the frame has no size yet (the
    /// decode waits for it), or what is loaded or loading was made for at least this size. A larger
    /// frame replaces a decode in flight; the image shown stays until the new one arrives. - Thread: any
    private func startDecode() {
        let pointSize = frame.sanitized.size
        let scale = contentsScale
        let target = (width: PixelGeometry.pixelCount(strictlyCovering: pointSize.width, scale: scale),
                      height: PixelGeometry.pixelCount(strictlyCovering: pointSize.height, scale: scale))
        guard target.width > 0, target.height > 0 else { return }
        typealias Request = (ImageSource, Rect?, ContentMode, ImageDecoder.Limits, ImageCache, UInt64, LoadWork,
                             NetworkImageLoader)
        guard let request = imageState.withLock({ state -> Request? in
            guard let source = state.source else { return nil }
            switch state.loadState {
            case .failed: return nil
            case .empty: break
            case .loading, .loaded:
                if let made = state.decodedFor, target.width <= made.width, target.height <= made.height { return nil }
                decodeSentinel.bump()  // the decode in flight, if any, is for a smaller size
            }
            state.loadState = .loading
            state.decodedFor = target
            return (source, state.cropRect, state.contentMode, state.limits, state.cache, decodeSentinel.value,
                    Self.takeLoadWork(&state), state.networkLoader)
        }) else { return }
        let (source, crop, mode, limits, cache, token, replaced, loader) = request
        let key = ImageCache.Key(source: source, crop: crop, contentMode: mode,
                                 pixelWidth: target.width, pixelHeight: target.height)
        if let cached = cache.bitmap(for: key) {
            replaced.cancel()
            finishDecode(.success(cached), token: token)
            return
        }
        if case .url(let url) = source {
            // The new request first: a fetch of the same URL under way goes on for it.
            startFetch(url, source: source, key: key, limits: limits, cache: cache, token: token, loader: loader,
                       target: ImageDecoder.Target(width: target.width, height: target.height, mode: mode, crop: crop, scale: scale))
            replaced.cancel()
            return
        }
        replaced.cancel()
        let sentinel = decodeSentinel
        let box = UIThreadBound(WeakNode(self))
        let mainQueue = runtime.mainQueue
        let deliver: @Sendable (Result<Bitmap, ImageError>) -> Void = { result in
            mainQueue.enqueue { (box.value.node as? ImageNode)?.finishDecode(result, token: token) }
        }
        let decodeTarget = ImageDecoder.Target(width: target.width, height: target.height, mode: mode, crop: crop, scale: scale)
        let job = runtime.scheduler.schedule(
            priority: displayPriority,
            kind: .decode,
            isCancelled: { sentinel.value != token },
            work: { isCancelled in
                do {
                    guard let bitmap = try ImageDecoder.decode(source, for: decodeTarget, limits: limits,
                                                               isCancelled: isCancelled),
                          !isCancelled() else { return .cancelled }
                    cache.store(bitmap, for: key)
                    deliver(.success(bitmap))
                } catch let error as ImageError {
                    deliver(.failure(error))
                } catch {
                    deliver(.failure(.decodeFailed(source.description, reason: "\(error)")))
                }
                return .completed
            })
        // A change since the claim above already bumped the sentinel: the job is dropped at start.
        imageState.withLock { state in if decodeSentinel.value == token { state.decodeJob = job } }
    }

    /// Stores a decode's result if nothing made it stale since the decode was claimed: the check and
    /// the store are one step under the image state's lock, where every invalidation happens too.
    func finishDecode(_ result: Result<Bitmap, ImageError>, token: UInt64) {
        let stored = imageState.withLock { state -> Bool in
            guard decodeSentinel.value == token else { return false }
            state.decodeJob = nil
            state.fetch = nil
            state.showsPartialImage = false
            switch result {
            case .success(let bitmap):
                state.image = bitmap
                state.loadState = .loaded
            case .failure(let error):
                state.image = nil
                state.loadState = .failed(error)
            }
            return true
        }
        if stored { displayArgumentsDidChange() }
        if stored, let handler = imageState.withLock({ $0.loadStateHandler }) {
            let state: LoadState
            switch result {
            case .success: state = .loaded
            case .failure(let error): state = .failed(error)
            }
            // On the UI thread, where results arrive (a cached image found while asked on another
            // thread is told there too).
            runtime.mainQueue.performOrEnqueue { handler(state) }
        }
        if stored, case .success = result, let (source, target, limits) = animationRequest() {
            animationPlayer.stillImageDidLoad(source: source, target: target, limits: limits)
        }
        if stored, case .failure(let error) = result {
            // The placeholder shows; the reason is said once, where a developer will look.
            reportOnce(.imageLoadFailed, property: "image \(error)",
                       "its picture could not be loaded: \(error); the error placeholder is drawn")
        }
    }

    // MARK: Animation (see ImageNode+Animation.swift)

    /// What the animation player decodes frames for: the source, the pixel size the image was decoded
    /// at (with the content mode, crop and scale) and the limits; nil unless an image is loaded.
    func animationRequest() -> (ImageSource, ImageDecoder.Target, ImageDecoder.Limits)? {
        let scale = contentsScale
        return imageState.withLock { state in
            guard state.loadState == .loaded, let source = state.source, let made = state.decodedFor else { return nil }
            let target = ImageDecoder.Target(width: made.width, height: made.height, mode: state.contentMode,
                                             crop: state.cropRect, scale: scale)
            return (source, target, state.limits)
        }
    }

    /// Shows `frame`, a frame of the animation of `source`, in place of the image; false when the node
    /// has moved on (another source, or no image loaded).
    @discardableResult
    func showAnimationFrame(_ frame: Bitmap, of source: ImageSource) -> Bool {
        let (shown, replaced) = imageState.withLock { state -> (Bool, Bitmap?) in
            guard state.source == source, state.loadState == .loaded else { return (false, nil) }
            defer { state.image = frame }
            return (true, state.image)
        }
        withExtendedLifetime(replaced) {}  // the frame it replaces goes outside the lock
        if shown { displayArgumentsDidChange() }
        return shown
    }

    // MARK: Readiness

    /// An image node loads its picture: a list waits for it and queues its decode by distance.
    public override var loadsContent: Bool { true }

    /// True when there is nothing left to load: no source, or its image loaded or failed.
    public override var isContentReady: Bool {
        guard source != nil else { return true }
        switch loadState {
        case .loaded, .failed: return true
        case .empty, .loading: return false
        }
    }

    // MARK: Drawing

    public func drawParameters() -> DrawParameters {
        let parameters = currentParameters()
        #if DEBUG
        Self.parametersCapturedForTesting?(self)
        #endif
        return parameters
    }

    #if DEBUG
    /// Called by `drawParameters()` once the parameters are captured: a test changes the node there,
    /// as another thread could. Debug builds only.
    nonisolated(unsafe) static var parametersCapturedForTesting: ((ImageNode) -> Void)?
    #endif

    public static func draw(_ p: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        // The picture fills the whole bounds, drawn once through the shape's clip: the corners, and a
        // tail that reaches into the bounds' side margin.
        let bounds = info.bounds
        context.saveClip()
        defer { context.restoreClip() }
        if let tail = p.tail, tail.width > 0 {
            guard let mask = BubbleShape.mask(size: bounds.size, scale: context.scale, radii: p.radii, tail: tail) else { return }
            context.clip(toCoverage: mask.coverage, width: mask.width, height: mask.height)
        } else if !p.radii.isZero {
            context.clip(toRoundedRect: bounds, radii: p.radii.clamped(to: bounds.size))
        }
        if p.failed {
            drawErrorPlaceholder(in: &context, rect: BubbleShape.bodyRect(in: bounds, tail: p.tail))
        } else if let image = p.image, !image.isEmpty {
            let placement = placement(of: image, in: bounds, mode: p.contentMode)
            context.saveClip()
            context.clip(to: bounds)
            context.draw(image, in: placement)
            context.restoreClip()
        } else if let empty = p.emptyColor {
            context.fill(bounds, color: empty)
        }
    }

    /// Where an image of `image`'s aspect goes in `rect` for `mode`.
    static func placement(of image: Bitmap, in rect: Rect, mode: ContentMode) -> Rect {
        let w = Double(image.width), h = Double(image.height)
        guard w > 0, h > 0, rect.width > 0, rect.height > 0 else { return rect }
        switch mode {
        case .scaleToFill:
            return rect
        case .aspectFit, .aspectFill:
            let factor = mode == .aspectFit ? min(rect.width / w, rect.height / h) : max(rect.width / w, rect.height / h)
            let size = Size(width: w * factor, height: h * factor)
            return Rect(x: rect.midX - size.width / 2, y: rect.midY - size.height / 2, width: size.width, height: size.height)
        case .center:
            let size = image.pointSize
            return Rect(x: rect.midX - size.width / 2, y: rect.midY - size.height / 2, width: size.width, height: size.height)
        }
    }

    /// A grey tile with a broken-picture mark: a frame with a diagonal break.
    static func drawErrorPlaceholder(in context: inout BitmapContext, rect: Rect) {
        context.fill(rect, color: Color(rgb: 0xE4E7EC))
        let side = min(rect.width, rect.height) * 0.4
        guard side >= 4 else { return }
        let mark = Rect(x: rect.midX - side / 2, y: rect.midY - side / 2, width: side, height: side)
        let stroke = max(1, side / 12)
        let ink = Color(rgb: 0x9AA3B0)
        context.fillRoundedRect(mark, radii: CornerRadii(stroke * 1.5), color: ink)
        context.fillRoundedRect(mark.insetBy(dx: stroke, dy: stroke), radii: CornerRadii(stroke / 2), color: Color(rgb: 0xE4E7EC))
        // A mountain and a sun, with a stepped crack through the middle.
        context.fillRoundedRect(Rect(x: mark.minX + side * 0.58, y: mark.minY + side * 0.2, width: side * 0.18, height: side * 0.18),
                                radii: CornerRadii(side * 0.09), color: ink)
        let steps = 6
        for i in 0..<steps {
            let t = Double(i) / Double(steps)
            let x = mark.minX + stroke + (side - 2 * stroke) * t
            let top = mark.maxY - stroke - (side * 0.45) * (1 - abs(t - 0.4) * 1.6)
            context.fill(Rect(x: x, y: top, width: (side - 2 * stroke) / Double(steps) + 0.5, height: mark.maxY - stroke - top), color: ink)
        }
        context.fill(Rect(x: mark.midX - stroke, y: mark.minY - stroke, width: stroke * 2, height: side + 2 * stroke),
                     color: Color(rgb: 0xE4E7EC))
    }
}
