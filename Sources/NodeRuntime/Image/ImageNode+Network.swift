import Compositor
import FoundationEssentials
import Glibc
import Dispatch

// MARK: - Images by URL

extension ImageNode {
    /// What fetches this node's `.url` sources. Default: `NetworkImageLoader.shared`. A change applies
    /// to the next fetch.
    /// - Thread: any
    public var networkLoader: NetworkImageLoader {
        get { imageState.withLock { $0.networkLoader } }
        set { imageState.withLock { $0.networkLoader = newValue } }
    }

    /// True while the image shown is a pass of a progressive JPEG whose bytes are still arriving
    /// (`loadState` is `.loading`); a sharper pass, and finally the whole image, replace it.
    /// - Thread: any
    public var isShowingPartialImage: Bool { imageState.withLock { $0.showsPartialImage } }

    /// Why the image could not be shown (`loadState`'s error), or nil. A `.url` source that could not
    /// be fetched gives `ImageError.network(url, reason)`; bytes that are not an image give the
    /// decoder's own error.
    /// - Thread: any
    public var loadError: ImageError? {
        if case .failed(let error) = loadState { return error }
        return nil
    }

    /// Image nodes that started a fetch by URL (of an image or of its natural size): a host counts
    /// those of its tree still fetching as work pending (`PendingWork.imagesLoading`), which `settle`
    /// waits for. Entries go when their node does. (any thread)
    static let networkLoads = Locked<[ObjectIdentifier: WeakImageNode]>([:])

    struct WeakImageNode: @unchecked Sendable {
        weak var node: ImageNode?
    }

    /// True while a fetch by URL for the image to show, or for its natural size, is under way.
    /// - Thread: any
    public var isLoadingOverNetwork: Bool {
        imageState.withLock { ($0.fetch != nil && $0.loadState == .loading) || $0.naturalSizeRead != nil }
    }

    private func noteNetworkLoad() {
        let entry = WeakImageNode(node: self)
        Self.networkLoads.withLock { $0[ObjectIdentifier(self)] = entry }
    }

    /// Fetches `url` for the decode claimed with `token`; its passes and its result come back to the
    /// UI thread, and count only while `token` is current. (any thread)
    func startFetch(_ url: URL, source: ImageSource, key: ImageCache.Key, limits: ImageDecoder.Limits, cache: ImageCache,
                    token: UInt64, loader: NetworkImageLoader, target: ImageDecoder.Target) {
        noteNetworkLoad()
        let box = UIThreadBound(WeakNode(self))
        let mainQueue = runtime.mainQueue
        let load = URLImageLoad(
            name: source.description, target: target, limits: limits, key: key, cache: cache,
            token: token, sentinel: decodeSentinel, scheduler: runtime.scheduler, priority: displayPriority,
            deliver: { result in
                mainQueue.enqueue { (box.value.node as? ImageNode)?.finishDecode(result, token: token) }
            },
            deliverPass: { pass in
                mainQueue.enqueue { (box.value.node as? ImageNode)?.passDidArrive(pass, token: token) }
            })
        let request = loader.fetch(url, consumer: load)
        // A change since the claim already bumped the sentinel: the request is let go at once.
        let stale = imageState.withLock { state -> Bool in
            guard decodeSentinel.value == token, state.loadState == .loading else { return true }
            state.fetch = request
            return false
        }
        if stale { request.cancel() }
    }

    /// A progressive JPEG's better pass: shown while the decode that asked for it is current and
    /// still loading. (UI thread)
    func passDidArrive(_ pass: Bitmap, token: UInt64) {
        let stored = imageState.withLock { state -> Bool in
            guard decodeSentinel.value == token, state.loadState == .loading else { return false }
            state.image = pass
            state.showsPartialImage = true
            return true
        }
        if stored { displayArgumentsDidChange() }
    }

    /// Fetches a `.url` source for its natural size, once per source at a time, then has the node
    /// measured again: the size is known from the first bytes that hold the header. The bytes fetched
    /// go to the loader's caches, where the decode finds them. (any thread)
    func readNaturalSizeOverNetwork(_ source: ImageSource, url: URL, limits: ImageDecoder.Limits) {
        let loader = imageState.withLock { state -> NetworkImageLoader? in
            guard state.naturalSizeRead != source else { return nil }
            state.naturalSizeRead = source
            return state.networkLoader
        }
        guard let loader else { return }
        noteNetworkLoad()
        let box = UIThreadBound(WeakNode(self))
        let mainQueue = runtime.mainQueue
        let load = NaturalSizeLoad(source: source, limits: limits) { result in
            mainQueue.enqueue { (box.value.node as? ImageNode)?.naturalSizeDidArrive(for: source, result) }
        }
        let request = loader.fetch(url, consumer: load)
        let (stale, replaced) = imageState.withLock { state -> (Bool, NetworkImageRequest?) in
            guard state.source == source else { return (true, nil) }
            defer { state.naturalSizeFetch = request }
            return (false, state.naturalSizeFetch)
        }
        replaced?.cancel()
        if stale { request.cancel() }
    }
}

/// One image node's fetch of a `.url` source for one decode: decodes a progressive JPEG's passes as
/// its bytes arrive, then the whole image on a display worker.
/// - Thread: the fetch's queue (one call at a time; `progressive` is touched only there)
final class URLImageLoad: NetworkImageConsumer, @unchecked Sendable {
    private let name: String
    private let target: ImageDecoder.Target
    private let limits: ImageDecoder.Limits
    private let key: ImageCache.Key
    private let cache: ImageCache
    private let token: UInt64
    private let sentinel: DisplaySentinel
    private let scheduler: DisplayScheduler
    private let priority: DisplayPriority
    private let deliver: @Sendable (Result<Bitmap, ImageError>) -> Void
    private let deliverPass: @Sendable (Bitmap) -> Void
    /// The passes' decoder, made at the first bytes of a JPEG. (the fetch's queue only)
    private var progressive: ProgressiveJPEGDecoder?
    /// No passes for these bytes: not a JPEG, not progressive, or refused. (the fetch's queue only)
    private var noPasses = false

    init(name: String, target: ImageDecoder.Target, limits: ImageDecoder.Limits, key: ImageCache.Key, cache: ImageCache,
         token: UInt64, sentinel: DisplaySentinel, scheduler: DisplayScheduler, priority: DisplayPriority,
         deliver: @escaping @Sendable (Result<Bitmap, ImageError>) -> Void,
         deliverPass: @escaping @Sendable (Bitmap) -> Void) {
        self.name = name; self.target = target; self.limits = limits; self.key = key; self.cache = cache
        self.token = token; self.sentinel = sentinel; self.scheduler = scheduler; self.priority = priority
        self.deliver = deliver; self.deliverPass = deliverPass
    }

    private var isStale: Bool { sentinel.value != token }

    func fetchDidReceive(_ body: [UInt8]) {
        guard !noPasses, !isStale else { return }
        if progressive == nil {
            guard body.count >= 2 else { return }
            guard body[0] == 0xFF, body[1] == 0xD8,
                  let decoder = ProgressiveJPEGDecoder(name: name, target: target, limits: limits) else {
                noPasses = true
                return
            }
            progressive = decoder
        }
        guard let decoder = progressive else { return }
        let (sentinel, token) = (self.sentinel, self.token)
        if let pass = decoder.update(body, isCancelled: { sentinel.value != token }) { deliverPass(pass) }
        if decoder.isFinished {
            progressive = nil  // libjpeg's buffers go now, not at the end of the fetch
            noPasses = true
        }
    }

    func fetchDidRestart() {
        progressive = nil
        noPasses = false
    }

    func fetchDidFinish(_ body: [UInt8], origin: NetworkImageOrigin) {
        progressive = nil
        guard !isStale else { return }
        let (name, target, limits, key, cache, sentinel, token, deliver) =
            (self.name, self.target, self.limits, self.key, self.cache, self.sentinel, self.token, self.deliver)
        // The whole image decodes as any other source's bytes, on a display worker by priority.
        scheduler.schedule(priority: priority, kind: .decode, isCancelled: { sentinel.value != token }) { isCancelled in
            do {
                guard let bitmap = try ImageDecoder.decode(encoded: body, name: name, for: target, limits: limits,
                                                           isCancelled: isCancelled),
                      !isCancelled() else { return .cancelled }
                cache.store(bitmap, for: key)
                deliver(.success(bitmap))
            } catch let error as ImageError {
                deliver(.failure(error))
            } catch {
                deliver(.failure(.decodeFailed(name, reason: "\(error)")))
            }
            return .completed
        }
    }

    func fetchDidFail(_ error: NetworkImageError) {
        progressive = nil
        guard !isStale else { return }
        deliver(.failure(.network(name, error)))
    }
}

/// A fetch for a `.url` source's natural size: the header is read from the first bytes that hold
/// it, kept in the shared header cache, and handed on once.
/// - Thread: the fetch's queue (one call at a time; `delivered` is touched only there)
final class NaturalSizeLoad: NetworkImageConsumer, @unchecked Sendable {
    private let source: ImageSource
    private let limits: ImageDecoder.Limits
    private let deliver: @Sendable (Result<ImageHeaderCache.PixelSize, any Error>) -> Void
    /// The size (or the failure) was handed on. (the fetch's queue only)
    private var delivered = false

    init(source: ImageSource, limits: ImageDecoder.Limits,
         deliver: @escaping @Sendable (Result<ImageHeaderCache.PixelSize, any Error>) -> Void) {
        self.source = source
        self.limits = limits
        self.deliver = deliver
    }

    /// The size from `body`'s header; nil while the header is cut short and more bytes may come.
    private func read(_ body: [UInt8], isWhole: Bool) -> Result<ImageHeaderCache.PixelSize, any Error>? {
        do {
            let layout = try ImageDecoder.readLayout(EncodedReader(bytes: body, name: source.description),
                                                     metadataLimit: limits.maximumMetadataBlocks)
            let header = layout.header
            guard header.width > 0, header.height > 0 else {
                throw ImageError.decodeFailed(source.description, reason: "zero-sized image")
            }
            let size = layout.orientation.swapsSides
                ? ImageHeaderCache.PixelSize(width: header.height, height: header.width)
                : ImageHeaderCache.PixelSize(width: header.width, height: header.height)
            ImageHeaderCache.shared.store(size, for: source)
            return .success(size)
        } catch ImageError.truncated(_) where !isWhole {
            return nil
        } catch {
            return isWhole ? .failure(error) : nil
        }
    }

    func fetchDidReceive(_ body: [UInt8]) {
        guard !delivered, let result = read(body, isWhole: false), case .success = result else { return }
        delivered = true
        deliver(result)
    }

    func fetchDidRestart() {}

    func fetchDidFinish(_ body: [UInt8], origin: NetworkImageOrigin) {
        guard !delivered, let result = read(body, isWhole: true) else { return }
        delivered = true
        deliver(result)
    }

    func fetchDidFail(_ error: NetworkImageError) {
        guard !delivered else { return }
        delivered = true
        deliver(.failure(ImageError.network(source.description, error)))
    }
}
