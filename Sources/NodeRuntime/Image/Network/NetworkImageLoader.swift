public import FoundationEssentials
import Glibc
import Dispatch
import Compositor

/// Fetches images by URL for `ImageSource.url` sources: from memory, from disk, or over the network,
/// with retries, time limits, a body limit and a fair share for every host.
///
/// - Order of lookup: the encoded bytes kept in memory (`memoryCacheBytes`, least recently used out
///   first), then the disk cache (`diskCacheDirectory`, `diskCacheBytes`; see `ImageDiskCache`), then
///   the network, through `Configuration.fetcher` (default: a `CurlImageFetcher`, libcurl: HTTP/1.1
///   and HTTP/2, HTTPS, redirects, compression, proxies, connections kept and reused). What the
///   network brings is kept in both caches before it is handed on.
/// - At most `maximumConcurrentFetches` fetches at once and `maximumFetchesPerHost` to one host; the
///   rest wait their turn in order, a host at its share passed over for the next one that is not (a
///   host that never answers holds its own share, never everyone's). A waiting fetch holds no
///   descriptor and no thread.
/// - Bytes are handed on as they arrive, on a serial queue of the fetch's own (never the UI thread,
///   never a display worker, never the network thread): an image node decodes a progressive JPEG's
///   passes there, and when it is slower than the network it is handed the newest bytes, not every
///   piece.
/// - Requests for one URL while it is being fetched share the fetch; the fetch stops (its transfer
///   and connection closed) when every request for it is cancelled.
/// - Transient failures (`NetworkImageError.isTransient`) are tried again up to
///   `RetryPolicy.maximumAttempts` times, after exponentially growing delays with random jitter.
/// - Thread: any
public final class NetworkImageLoader: Sendable {
    /// Limits, caches and retries.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// Seconds to wait for a connection.
        public var connectTimeout = 10.0
        /// Seconds of silence allowed while waiting for the response or the next body bytes.
        public var idleTimeout = 20.0
        /// Seconds one attempt may take in all (connecting, headers, body).
        public var totalTimeout = 120.0
        /// The longest body accepted, in bytes: one announced longer is refused before it is read,
        /// one that streams past it is cut off there (`NetworkImageError.tooLarge`).
        public var maximumBodyBytes = 32 << 20
        /// The most fetches over the network at once.
        public var maximumConcurrentFetches = 8
        /// The most fetches at once from one host (scheme, name and port): the others wait while
        /// other hosts' fetches go ahead.
        public var maximumFetchesPerHost = 4
        /// The budget of encoded bytes kept in memory.
        public var memoryCacheBytes = 32 << 20
        /// Where fetched images are kept on disk; nil keeps none. Default:
        /// `ImageDiskCache.defaultDirectory`. Opened off the UI thread when first needed; a directory
        /// that cannot be used is reported once in `TesseraLog.images` and the loader works without.
        public var diskCacheDirectory: String? = ImageDiskCache.defaultDirectory
        /// The budget of the disk cache, in bytes.
        public var diskCacheBytes = 256 << 20
        /// How transient failures are tried again.
        public var retry = RetryPolicy()
        /// The User-Agent header sent.
        public var userAgent = "Tessera"
        /// More request headers sent with every fetch ("Authorization": "Bearer …").
        public var headers: [String: String] = [:]
        /// Certificate authorities trusted besides the system's, as PEM text (see
        /// `CurlImageFetcher.Configuration`). Used by the default fetcher.
        public var additionalTrustedCertificates: [String] = []
        /// The proxy ("http://proxy.example:3128"; "" for none); nil: from the environment
        /// (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`). Used by the default fetcher.
        public var proxy: String?
        /// The most redirects followed in a row. Used by the default fetcher.
        public var maximumRedirects = 5
        /// What fetches over the network; nil: a `CurlImageFetcher` made from the settings above.
        public var fetcher: (any ImageFetcher)?
        /// Host names resolved to given addresses by the default fetcher ("host:port:address[,address]").
        var resolve: [String] = []

        /// The defaults.
        public init() {}
    }

    /// How transient failures are tried again: attempt n + 1 starts after
    /// `min(maximumDelay, initialDelay × multiplier^(n−1)) × (1 − jitter × r)`, r drawn from `random`
    /// in 0..<1, waited through `clock`.
    /// - Thread: any (a value)
    public struct RetryPolicy: Sendable {
        /// Attempts in all, the first included (1: no retry).
        public var maximumAttempts = 3
        /// Seconds before the first retry, before jitter.
        public var initialDelay = 0.5
        /// Each retry waits this many times longer than the one before.
        public var multiplier = 2.0
        /// The longest wait, before jitter.
        public var maximumDelay = 8.0
        /// The share of each wait taken off at random (0: none; 0.5: between half and all of it), so
        /// many clients that failed together do not come back together.
        public var jitter = 0.5
        /// Where the jitter's random numbers come from (in 0..<1).
        public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
        /// What waits between attempts.
        public var clock: any NetworkRetryClock = SystemRetryClock()

        /// The defaults.
        public init() {}

        /// Seconds to wait before retry number `retry` (1 for the second attempt), with `random` in
        /// 0..<1.
        public func delay(beforeRetry retry: Int, random: Double) -> Double {
            let exponent = Double(max(0, retry - 1))
            let base = min(maximumDelay, initialDelay * pow(max(1, multiplier), exponent))
            let share = min(1, max(0, jitter)) * min(1, max(0, random))
            return max(0, base * (1 - share))
        }
    }

    /// Counts since the loader was made.
    /// - Thread: any (a value)
    public struct Statistics: Sendable, Equatable {
        /// Requests answered from the encoded bytes in memory.
        public var memoryHits = 0
        /// Requests answered from the disk cache.
        public var diskHits = 0
        /// HTTP attempts made (a retry is another).
        public var networkAttempts = 0
        /// Retries after transient failures.
        public var retries = 0
        /// Fetches that ended in an error.
        public var failures = 0
        /// Fetches stopped because every request for them was cancelled.
        public var cancellations = 0
        /// Requests that joined a fetch already under way for their URL.
        public var sharedFetches = 0
        /// Body bytes received over the network, counted once the requests streaming them have been
        /// handed them.
        public var bytesReceived = 0
    }

    /// The loader image nodes use unless given another. Its configuration can be changed
    /// (`configuration`), its disk cache included.
    public static let shared = NetworkImageLoader()

    private struct State {
        var configuration: Configuration
        /// Fetches under way or waiting, by URL.
        var fetches: [String: FetchEntry] = [:]
        /// Fetches waiting for their turn, oldest first.
        var waiting: [SharedFetch] = []
        /// Fetches holding a turn, and how many each host holds.
        var running: Set<ObjectIdentifier> = []
        var runningPerHost: [String: Int] = [:]
        var nextMember: UInt64 = 0
        var statistics = Statistics()
        /// The disk cache opened for `configuration`'s directory and budget, once first needed.
        var disk: DiskCacheSlot = .unopened
        /// The default fetcher, made for the configuration's settings when first needed.
        var defaultFetcher: CurlImageFetcher?
    }

    private enum DiskCacheSlot {
        case unopened
        case opened(ImageDiskCache?, directory: String?, budget: Int)
    }

    private struct FetchEntry {
        let fetch: SharedFetch
        var members: [UInt64: Member] = [:]
        /// Body bytes have been handed on since the (last) attempt began: a request joining now
        /// is told only how the fetch ends.
        var bodyStarted = false
    }

    private struct Member {
        let consumer: any NetworkImageConsumer
        var streams: Bool
    }

    private let state: Locked<State>
    /// Encoded bytes by URL, least recently used first, within `memoryCacheBytes`.
    private let memory: Locked<LRUCache<String, [UInt8]>>

    /// A loader with `configuration`.
    /// - Thread: any
    public init(configuration: Configuration = Configuration()) {
        state = Locked(State(configuration: configuration))
        memory = Locked(LRUCache(budget: max(0, configuration.memoryCacheBytes)))
    }

    /// The limits, caches and retries. A change applies to fetches that start after it; a lower
    /// memory budget evicts at once; another disk directory or budget opens the disk cache again
    /// when next needed.
    /// - Thread: any
    public var configuration: Configuration {
        get { state.withLock { $0.configuration } }
        set {
            let dropped = state.withLock { state -> CurlImageFetcher? in
                state.configuration = newValue
                guard let fetcher = state.defaultFetcher, fetcher.configuration != Self.fetcherConfiguration(newValue) else { return nil }
                state.defaultFetcher = nil
                return fetcher
            }
            _ = dropped  // released here, after unlocking
            let evicted = memory.withLock { cache -> [LRUCache<String, [UInt8]>.Entry] in
                cache.budget = max(0, newValue.memoryCacheBytes)
                return cache.evict()
            }
            _ = evicted  // released here, after unlocking
            admitWaiting()  // higher limits let waiting fetches go now
        }
    }

    /// Counts since the loader was made.
    /// - Thread: any
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The disk cache for the configuration's directory and budget, opened now if it was not yet
    /// (nil: none configured, or the directory cannot be used).
    /// - Thread: any (opening lists the directory: not the UI thread)
    public var diskCache: ImageDiskCache? {
        let (slot, directory, budget, maximumBody) = state.withLock {
            ($0.disk, $0.configuration.diskCacheDirectory, $0.configuration.diskCacheBytes, $0.configuration.maximumBodyBytes)
        }
        if case let .opened(cache, openedDirectory, openedBudget) = slot, openedDirectory == directory {
            if openedBudget != budget {
                cache?.budgetBytes = budget
                state.withLock { $0.disk = .opened(cache, directory: directory, budget: budget) }
            }
            if let cache, cache.maximumBodyBytes != maximumBody { cache.maximumBodyBytes = maximumBody }
            return cache
        }
        var opened: ImageDiskCache?
        var failure: ImageDiskCache.OpenError?
        if let directory {
            do {
                opened = try ImageDiskCache(directory: directory, budgetBytes: budget, maximumBodyBytes: maximumBody)
            } catch {
                failure = error
            }
        }
        // Two threads may open it at once: the first to publish wins, so one object owns the directory.
        let (cache, published) = state.withLock { state -> (ImageDiskCache?, Bool) in
            if case let .opened(existing, openedDirectory, _) = state.disk, openedDirectory == directory {
                return (existing, false)
            }
            state.disk = .opened(opened, directory: directory, budget: budget)
            return (opened, true)
        }
        if published, let failure {
            TesseraLog.images.warning("\(failure); images fetched by URL are kept in memory only")
        }
        return cache
    }

    /// The encoded bytes kept in memory for `url`, without fetching or reading the disk.
    /// - Thread: any
    public func memoryCachedBytes(for url: URL) -> [UInt8]? {
        memory.withLock { $0.value(for: url.absoluteString) }
    }

    /// Empties the memory cache of encoded bytes (the disk cache is left as it is).
    /// - Thread: any
    public func removeAllFromMemory() {
        let removed = memory.withLock { $0.removeAll() }
        _ = removed  // released here, after unlocking
    }

    /// The encoded bytes of `url`, from a cache or the network, waiting for them on this thread:
    /// for tools and decodes off the UI thread (`ImageDecoder.decode(.url(…))`). `isCancelled` is
    /// asked every 50 ms; when it becomes true the request is cancelled and nil returned.
    /// - Throws: `NetworkImageError`.
    /// - Thread: any but the UI thread (it blocks)
    public func bytes(for url: URL, isCancelled: () -> Bool = { false }) throws(NetworkImageError) -> [UInt8]? {
        let waiter = BlockingConsumer()
        let request = fetch(url, consumer: waiter)
        while !waiter.wait(seconds: 0.05) {
            if isCancelled() {
                request.cancel()
                return nil
            }
        }
        return try waiter.result?.get()
    }

    // MARK: Fetching

    /// Starts (or joins) the fetch of `url` for `consumer`, which hears how it goes: from memory at
    /// once, on this thread; otherwise on the fetch's own queue. Cancel the returned request when the
    /// bytes are no longer wanted.
    func fetch(_ url: URL, consumer: any NetworkImageConsumer) -> NetworkImageRequest {
        let key = url.absoluteString
        if let bytes = memory.withLock({ $0.value(for: key) }) {
            state.withLock { $0.statistics.memoryHits += 1 }
            consumer.fetchDidFinish(bytes, origin: .memory)
            return NetworkImageRequest(loader: nil, key: key, fetch: nil, member: 0)
        }
        let request = state.withLock { state -> NetworkImageRequest in
            state.nextMember += 1
            let member = state.nextMember
            if var entry = state.fetches[key] {
                entry.members[member] = Member(consumer: consumer, streams: !entry.bodyStarted)
                state.fetches[key] = entry
                state.statistics.sharedFetches += 1
                return NetworkImageRequest(loader: self, key: key, fetch: entry.fetch, member: member)
            }
            let fetch = SharedFetch(url: url)
            var entry = FetchEntry(fetch: fetch)
            entry.members[member] = Member(consumer: consumer, streams: true)
            state.fetches[key] = entry
            state.waiting.append(fetch)
            return NetworkImageRequest(loader: self, key: key, fetch: fetch, member: member)
        }
        admitWaiting()
        return request
    }

    /// Takes `member` off its fetch; the last one off stops the fetch.
    fileprivate func cancel(_ request: NetworkImageRequest) {
        guard let fetch = request.fetch else { return }
        let stop = state.withLock { state -> Bool in
            guard var entry = state.fetches[request.key], entry.fetch === fetch else { return false }
            entry.members[request.member] = nil
            guard entry.members.isEmpty else {
                state.fetches[request.key] = entry
                return false
            }
            state.fetches[request.key] = nil
            state.statistics.cancellations += 1
            if let index = state.waiting.firstIndex(where: { $0 === fetch }) { state.waiting.remove(at: index) }
            return true
        }
        guard stop else { return }
        fetch.cancellation.cancel()
        // An attempt being started keeps the turn until its task is cancelled (`startAttempt`).
        if fetch.stop() { endTurn(fetch) }
    }

    /// The fetcher for the current configuration.
    private func currentFetcher() -> any ImageFetcher {
        let (existing, settings) = state.withLock { state -> ((any ImageFetcher)?, CurlImageFetcher.Configuration) in
            if let fetcher = state.configuration.fetcher { return (fetcher, CurlImageFetcher.Configuration()) }
            return (state.defaultFetcher, Self.fetcherConfiguration(state.configuration))
        }
        if let existing { return existing }
        // Made outside the lock (it reads the trust store when the app adds authorities); the first
        // one stored is the one every fetch shares.
        let made = CurlImageFetcher(configuration: settings)
        let (chosen, extra) = state.withLock { state -> (any ImageFetcher, CurlImageFetcher?) in
            if let fetcher = state.configuration.fetcher { return (fetcher, made) }
            if let fetcher = state.defaultFetcher { return (fetcher, made) }
            state.defaultFetcher = made
            return (made, nil)
        }
        _ = extra  // released here, after unlocking
        return chosen
    }

    private static func fetcherConfiguration(_ configuration: Configuration) -> CurlImageFetcher.Configuration {
        var settings = CurlImageFetcher.Configuration()
        settings.additionalTrustedCertificates = configuration.additionalTrustedCertificates
        settings.proxy = configuration.proxy
        settings.maximumRedirects = configuration.maximumRedirects
        settings.resolve = configuration.resolve
        return settings
    }

    /// Gives turns to waiting fetches, oldest first, within the limits in all and per host.
    private func admitWaiting() {
        let admitted = state.withLock { state -> [SharedFetch] in
            var admitted: [SharedFetch] = []
            let total = max(1, state.configuration.maximumConcurrentFetches)
            let perHost = max(1, state.configuration.maximumFetchesPerHost)
            var index = 0
            while index < state.waiting.count && state.running.count < total {
                let fetch = state.waiting[index]
                if state.runningPerHost[fetch.host, default: 0] >= perHost {
                    index += 1
                    continue
                }
                state.waiting.remove(at: index)
                state.running.insert(ObjectIdentifier(fetch))
                state.runningPerHost[fetch.host, default: 0] += 1
                admitted.append(fetch)
            }
            return admitted
        }
        for fetch in admitted {
            fetch.queue.async { [self] in begin(fetch) }
        }
    }

    /// Gives back `fetch`'s turn (once) and lets the next waiting fetch have it.
    private func endTurn(_ fetch: SharedFetch) {
        let ended = state.withLock { state -> Bool in
            guard state.running.remove(ObjectIdentifier(fetch)) != nil else { return false }
            let left = state.runningPerHost[fetch.host, default: 1] - 1
            state.runningPerHost[fetch.host] = left > 0 ? left : nil
            return true
        }
        if ended { admitWaiting() }
    }

    /// A fetch's turn (on its queue): the caches, then the network.
    private func begin(_ fetch: SharedFetch) {
        guard !fetch.cancellation.isCancelled else { return endTurn(fetch) }
        let key = fetch.url.absoluteString
        if let bytes = memory.withLock({ $0.value(for: key) }) {
            state.withLock { $0.statistics.memoryHits += 1 }
            endTurn(fetch)
            finish(fetch, .success((bytes, .memory)))
            return
        }
        if let disk = diskCache, let bytes = disk.bytes(for: fetch.url) {
            keepInMemory(bytes, for: key)
            state.withLock { $0.statistics.diskHits += 1 }
            endTurn(fetch)
            finish(fetch, .success((bytes, .disk)))
            return
        }
        startAttempt(fetch)
    }

    /// Asks the fetcher for the bytes (on the fetch's queue).
    private func startAttempt(_ fetch: SharedFetch) {
        let configuration = self.configuration
        let request = ImageFetchRequest(url: fetch.url, connectTimeout: configuration.connectTimeout,
                                        idleTimeout: configuration.idleTimeout, totalTimeout: configuration.totalTimeout,
                                        maximumBodyBytes: configuration.maximumBodyBytes, userAgent: configuration.userAgent,
                                        headers: configuration.headers)
        // Cancelled since the turn began (while the caches were read): the turn is already back.
        guard let attempt = fetch.beginAttempt(limit: configuration.maximumBodyBytes) else { return endTurn(fetch) }
        state.withLock { $0.statistics.networkAttempts += 1 }
        let delegate = AttemptDelegate(loader: self, fetch: fetch, attempt: attempt)
        let task = currentFetcher().startFetch(request, delegate: delegate)
        if !fetch.setTask(task, attempt: attempt) {
            task.cancel()
            // Cancelled while it started: the turn comes back now that its task is cancelled.
            if fetch.cancellation.isCancelled { endTurn(fetch) }
        }
    }

    /// Bytes of attempt `attempt` arrived (on the fetcher's thread): kept, and the newest handed on
    /// from the fetch's queue.
    fileprivate func attempt(_ attempt: UInt64, of fetch: SharedFetch, received bytes: UnsafeRawBufferPointer) {
        switch fetch.append(bytes, attempt: attempt) {
        case .ignored:
            return
        case .appended(let scheduleDelivery):
            state.withLock { $0.statistics.bytesReceived += bytes.count }
            guard scheduleDelivery else { return }
            fetch.queue.async { [self] in
                guard let body = fetch.takeBodyForDelivery(attempt: attempt) else { return }
                for consumer in streamingMembers(of: fetch, startingBody: true) { consumer.fetchDidReceive(body) }
            }
        case .overLimit(let limit):
            fetch.cancelAttempt()
            attemptEnded(attempt, of: fetch, .failure(.tooLarge(limit: limit)))
        }
    }

    /// Attempt `attempt` ended (on the fetcher's thread, or whichever thread it failed on).
    fileprivate func attemptEnded(_ attempt: UInt64, of fetch: SharedFetch, _ result: Result<Void, NetworkImageError>) {
        guard let body = fetch.endAttempt(attempt) else { return }
        fetch.queue.async { [self] in
            guard !fetch.cancellation.isCancelled else { return }
            switch result {
            case .success:
                endTurn(fetch)
                let key = fetch.url.absoluteString
                keepInMemory(body, for: key)
                diskCache?.store(body, for: fetch.url)
                finish(fetch, .success((body, .network)))
            case .failure(let error):
                endTurn(fetch)
                retryOrFail(fetch, error)
            }
        }
    }

    /// After a failed attempt (on the fetch's queue): waits and queues the fetch again when the
    /// error may pass and attempts are left, otherwise reports it.
    private func retryOrFail(_ fetch: SharedFetch, _ error: NetworkImageError) {
        let retry = configuration.retry
        guard error.isTransient, fetch.attempts < max(1, retry.maximumAttempts) else {
            state.withLock { $0.statistics.failures += 1 }
            finish(fetch, .failure(error))
            return
        }
        let delay = retry.delay(beforeRetry: fetch.attempts, random: retry.random())
        let requeue: @Sendable () -> Void = { [self] in
            guard !fetch.cancellation.isCancelled else { return }
            state.withLock { $0.statistics.retries += 1 }
            restart(fetch)
            let queued = state.withLock { state -> Bool in
                guard let entry = state.fetches[fetch.url.absoluteString], entry.fetch === fetch else { return false }
                state.waiting.append(fetch)
                return true
            }
            if queued { admitWaiting() }
        }
        if retry.clock is SystemRetryClock {
            // Real time: no thread waits; the fetch is queued again when the delay is over.
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { fetch.queue.async(execute: requeue) }
        } else {
            let clock = retry.clock
            PlatformThread.detach(name: "tessera.fetch-retry", stackSize: 256 << 10) {
                guard clock.sleep(seconds: delay, cancellation: fetch.cancellation) else { return }
                fetch.queue.async(execute: requeue)
            }
        }
    }

    private func keepInMemory(_ bytes: [UInt8], for key: String) {
        let evicted = memory.withLock { cache -> [LRUCache<String, [UInt8]>.Entry] in
            guard bytes.count <= cache.budget else { return [] }
            return cache.insert(bytes, for: key, cost: bytes.count)
        }
        _ = evicted  // released here, after unlocking
    }

    /// The consumers of `fetch` that receive its bytes as they arrive.
    private func streamingMembers(of fetch: SharedFetch, startingBody: Bool) -> [any NetworkImageConsumer] {
        state.withLock { state in
            let key = fetch.url.absoluteString
            guard var entry = state.fetches[key], entry.fetch === fetch else { return [] }
            if startingBody && !entry.bodyStarted {
                entry.bodyStarted = true
                state.fetches[key] = entry
            }
            return entry.members.values.filter(\.streams).map(\.consumer)
        }
    }

    /// A new attempt starts from the first byte: every request now receives its bytes.
    private func restart(_ fetch: SharedFetch) {
        let consumers = state.withLock { state -> [any NetworkImageConsumer] in
            let key = fetch.url.absoluteString
            guard var entry = state.fetches[key], entry.fetch === fetch else { return [] }
            let streaming = entry.members.values.filter(\.streams).map(\.consumer)
            entry.bodyStarted = false
            for id in entry.members.keys { entry.members[id]?.streams = true }
            state.fetches[key] = entry
            return streaming
        }
        for consumer in consumers { consumer.fetchDidRestart() }
    }

    private func finish(_ fetch: SharedFetch, _ result: Result<([UInt8], NetworkImageOrigin), NetworkImageError>) {
        let consumers = state.withLock { state -> [any NetworkImageConsumer] in
            let key = fetch.url.absoluteString
            guard let entry = state.fetches[key], entry.fetch === fetch else { return [] }
            state.fetches[key] = nil
            return entry.members.values.map(\.consumer)
        }
        for consumer in consumers {
            switch result {
            case .success(let (body, origin)): consumer.fetchDidFinish(body, origin: origin)
            case .failure(let error): consumer.fetchDidFail(error)
            }
        }
    }
}

/// What a fetcher tells about one attempt, passed on to the loader.
private struct AttemptDelegate: ImageFetchDelegate {
    let loader: NetworkImageLoader
    let fetch: SharedFetch
    let attempt: UInt64

    func didReceive(_ bytes: UnsafeRawBufferPointer) { loader.attempt(attempt, of: fetch, received: bytes) }
    func didFinish() { loader.attemptEnded(attempt, of: fetch, .success(())) }
    func didFail(_ error: NetworkImageError) { loader.attemptEnded(attempt, of: fetch, .failure(error)) }
}

/// Where fetched bytes came from.
/// - Thread: any (a value)
enum NetworkImageOrigin: Sendable, Equatable {
    case memory, disk, network
}

/// What hears how a fetch goes, on the fetch's queue (or, for a memory hit, on the thread that asked).
/// Calls for one request come one at a time, in order; none come after `fetchDidFinish` or
/// `fetchDidFail`. After a cancel, a call already under way may still arrive.
/// - Thread: the fetch's queue
protocol NetworkImageConsumer: AnyObject, Sendable {
    /// The body so far (it grows by what arrived since the last call; when the consumer is slower than
    /// the network, several pieces arrive as one). Only requests that were there from the first byte receive this.
    func fetchDidReceive(_ body: [UInt8])
    /// A transient failure: the next attempt starts from the first byte.
    func fetchDidRestart()
    /// The whole body.
    func fetchDidFinish(_ body: [UInt8], origin: NetworkImageOrigin)
    /// The fetch failed (after its retries).
    func fetchDidFail(_ error: NetworkImageError)
}

/// One request's hold on a fetch.
/// - Thread: any
struct NetworkImageRequest: Sendable {
    fileprivate let loader: NetworkImageLoader?
    fileprivate let key: String
    fileprivate let fetch: SharedFetch?
    fileprivate let member: UInt64

    /// Lets go of the fetch: when no request holds it any more, it stops and its socket closes.
    func cancel() { loader?.cancel(self) }
}

/// A fetch under way, shared by the requests for one URL: its queue (where its consumers hear from
/// it, one call at a time), and the body of its current attempt.
final class SharedFetch: Sendable {
    let url: URL
    /// Scheme, host and port: what the per-host limit counts.
    let host: String
    let cancellation = FetchCancellation()
    let queue: DispatchQueue

    private struct Attempt {
        var number: UInt64 = 0
        var task: (any ImageFetchTask)?
        var body: [UInt8] = []
        var limit = 0
        var ended = true
        /// The whole fetch was cancelled: no task is kept from now on.
        var stopped = false
        /// A delivery of the newest bytes is queued and has not taken them yet.
        var deliveryQueued = false
        /// The attempt was to be cancelled before its task was kept: `setTask` has it cancelled.
        var cancelPending = false
        /// The fetcher is being asked for the attempt (between `beginAttempt` and `setTask`).
        var starting = false
    }

    private let current = Locked(Attempt())

    init(url: URL) {
        self.url = url
        let scheme = url.scheme?.lowercased() ?? ""
        // "http://h/" and "http://h:80/" are one host: the scheme's port is written out.
        let port = url.port ?? (scheme == "http" ? 80 : scheme == "https" ? 443 : nil)
        host = "\(scheme)://\(url.host?.lowercased() ?? ""):\(port.map(String.init) ?? "")"
        queue = DispatchQueue(label: "tessera.fetch", qos: .userInitiated)
    }

    /// Attempts made so far.
    var attempts: Int { Int(current.withLock { $0.number }) }

    enum Appended {
        case ignored
        case appended(scheduleDelivery: Bool)
        case overLimit(Int)
    }

    /// Starts a new attempt with an empty body; returns its number, or nil when the fetch was
    /// cancelled.
    func beginAttempt(limit: Int) -> UInt64? {
        let (number, old) = current.withLock { state -> (UInt64?, Attempt?) in
            guard !state.stopped else { return (nil, nil) }
            let old = state
            state = Attempt(number: state.number + 1, body: [], limit: limit, ended: false, stopped: false, starting: true)
            return (state.number, old)
        }
        _ = old  // released here, after unlocking
        return number
    }

    /// Keeps the task of attempt `attempt`; false when the fetch was cancelled, or the attempt was
    /// cancelled before its task was kept (the caller cancels the task).
    func setTask(_ task: any ImageFetchTask, attempt: UInt64) -> Bool {
        current.withLock { state in
            if state.number == attempt { state.starting = false }
            guard !state.stopped else { return false }
            guard state.number == attempt else { return false }
            guard !state.cancelPending else { return false }
            guard !state.ended else { return true }
            state.task = task
            return true
        }
    }

    /// Cancels the current attempt's task and every later one (the whole fetch is cancelled).
    /// Returns false while an attempt is being started: its starter cancels it and gives the turn back.
    func stop() -> Bool {
        let (task, starting, body) = current.withLock { state -> ((any ImageFetchTask)?, Bool, [UInt8]) in
            state.stopped = true
            // The body goes now, not when the fetcher lets go of the attempt's delegate.
            defer { state.task = nil; state.body = [] }
            return (state.task, state.starting, state.body)
        }
        _ = body  // released here, after unlocking
        task?.cancel()
        return !starting
    }

    /// Cancels the current attempt's task; one not kept yet is cancelled as `setTask` is given it.
    func cancelAttempt() {
        let task = current.withLock { state -> (any ImageFetchTask)? in
            defer { state.task = nil }
            if state.task == nil { state.cancelPending = true }
            return state.task
        }
        task?.cancel()
    }

    func append(_ bytes: UnsafeRawBufferPointer, attempt: UInt64) -> Appended {
        guard !cancellation.isCancelled else { return .ignored }
        return current.withLock { state in
            guard state.number == attempt, !state.ended else { return .ignored }
            guard bytes.count <= state.limit - state.body.count else { return .overLimit(state.limit) }
            state.body.append(contentsOf: bytes)
            defer { state.deliveryQueued = true }
            return .appended(scheduleDelivery: !state.deliveryQueued)
        }
    }

    /// The body so far, for a queued delivery; nil when the attempt is over or no longer current.
    func takeBodyForDelivery(attempt: UInt64) -> [UInt8]? {
        current.withLock { state in
            guard state.number == attempt, !state.ended else { return nil }
            state.deliveryQueued = false
            return state.body
        }
    }

    /// Ends attempt `attempt`: its body, or nil when it had already ended or is not current.
    func endAttempt(_ attempt: UInt64) -> [UInt8]? {
        current.withLock { state in
            guard state.number == attempt, !state.ended else { return nil }
            state.ended = true
            state.task = nil
            defer { state.body = [] }
            return state.body
        }
    }
}

/// What waits between retries.
/// - Thread: any (a retry's wait calls it, on a thread of its own)
public protocol NetworkRetryClock: Sendable {
    /// Waits `seconds`, ending early when `cancellation` is cancelled. Returns false when cancelled.
    func sleep(seconds: Double, cancellation: FetchCancellation) -> Bool
}

/// Real time: waits on the cancellation's pipe, so a cancel ends the wait at once.
/// - Thread: any
public struct SystemRetryClock: NetworkRetryClock {
    /// The system's clock.
    public init() {}

    /// Waits on `cancellation` for `seconds`.
    public func sleep(seconds: Double, cancellation: FetchCancellation) -> Bool {
        cancellation.wait(seconds: seconds)
    }
}

/// A consumer a thread waits on (`NetworkImageLoader.bytes(for:)`).
private final class BlockingConsumer: NetworkImageConsumer {
    private let state = ConditionLocked<Result<[UInt8], NetworkImageError>?>(nil)

    var result: Result<[UInt8], NetworkImageError>? { state.withLock { $0 } }

    /// True once a result arrived.
    func wait(seconds: Double) -> Bool {
        state.wait(until: { $0 != nil }, timeout: seconds) { _ in true } ?? false
    }

    func fetchDidReceive(_ body: [UInt8]) {}
    func fetchDidRestart() {}
    func fetchDidFinish(_ body: [UInt8], origin: NetworkImageOrigin) { state.withLockBroadcasting { $0 = .success(body) } }
    func fetchDidFail(_ error: NetworkImageError) { state.withLockBroadcasting { $0 = .failure(error) } }
}
