public import Foundation
import Compositor

/// Fetches images by URL for `ImageSource.url` sources: from memory, from disk, or over HTTP on
/// threads of its own, with retries, time limits and a body limit.
///
/// - Order of lookup: the encoded bytes kept in memory (`memoryCacheBytes`, least recently used out
///   first), then the disk cache (`diskCacheDirectory`, `diskCacheBytes`; see `ImageDiskCache`), then
///   the network (`HTTPClient`: plain HTTP/1.1 over POSIX sockets, `http://` only; its doc comment
///   says why). What the network brings is kept in both caches before it is handed on.
/// - Threads: at most `maximumConcurrentFetches` fetch threads, made as fetches wait and ended when
///   none do; the rest wait their turn in order. Never the UI thread and never a display worker, so
///   a slow server holds no drawing back. Bytes are handed on as they arrive, on the fetch thread
///   (an image node decodes a progressive JPEG's passes there).
/// - Requests for one URL while it is being fetched share the fetch; the fetch stops (its socket is
///   closed) when every request for it is cancelled.
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
        /// The most fetches over the network at once (each on a thread of its own).
        public var maximumConcurrentFetches = 6
        /// The budget of encoded bytes kept in memory.
        public var memoryCacheBytes = 32 << 20
        /// Where fetched images are kept on disk; nil keeps none. Default:
        /// `ImageDiskCache.defaultDirectory`. Opened on a fetch thread when first needed; a directory
        /// that cannot be used is reported once in `TesseraLog.images` and the loader works without.
        public var diskCacheDirectory: String? = ImageDiskCache.defaultDirectory
        /// The budget of the disk cache, in bytes.
        public var diskCacheBytes = 256 << 20
        /// How transient failures are tried again.
        public var retry = RetryPolicy()
        /// The User-Agent header sent.
        public var userAgent = "Tessera"

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
        /// Fetches waiting for a thread, oldest first (`head` is the next).
        var waiting: [SharedFetch] = []
        var head = 0
        var threads = 0
        var nextMember: UInt64 = 0
        var statistics = Statistics()
        /// The disk cache opened for `configuration`'s directory and budget, once first needed.
        var disk: DiskCacheSlot = .unopened
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
            state.withLock { $0.configuration = newValue }
            let evicted = memory.withLock { cache -> [LRUCache<String, [UInt8]>.Entry] in
                cache.budget = max(0, newValue.memoryCacheBytes)
                return cache.evict()
            }
            _ = evicted  // released here, after unlocking
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
    /// once, on this thread; otherwise on a fetch thread. Cancel the returned request when the bytes
    /// are no longer wanted.
    func fetch(_ url: URL, consumer: any NetworkImageConsumer) -> NetworkImageRequest {
        let key = url.absoluteString
        if let bytes = memory.withLock({ $0.value(for: key) }) {
            state.withLock { $0.statistics.memoryHits += 1 }
            consumer.fetchDidFinish(bytes, origin: .memory)
            return NetworkImageRequest(loader: nil, key: key, fetch: nil, member: 0)
        }
        let (request, startThread) = state.withLock { state -> (NetworkImageRequest, Bool) in
            state.nextMember += 1
            let member = state.nextMember
            if var entry = state.fetches[key] {
                entry.members[member] = Member(consumer: consumer, streams: !entry.bodyStarted)
                state.fetches[key] = entry
                state.statistics.sharedFetches += 1
                return (NetworkImageRequest(loader: self, key: key, fetch: entry.fetch, member: member), false)
            }
            let fetch = SharedFetch(url: url)
            var entry = FetchEntry(fetch: fetch)
            entry.members[member] = Member(consumer: consumer, streams: true)
            state.fetches[key] = entry
            state.waiting.append(fetch)
            let startThread = state.threads < max(1, state.configuration.maximumConcurrentFetches)
            if startThread { state.threads += 1 }
            return (NetworkImageRequest(loader: self, key: key, fetch: fetch, member: member), startThread)
        }
        if startThread {
            let thread = Thread { [self] in runFetches() }
            thread.name = "tessera.fetch"
            thread.stackSize = 512 << 10
            thread.start()
        }
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
            return true
        }
        if stop { fetch.cancellation.cancel() }
    }

    /// A fetch thread: runs waiting fetches until none is left.
    private func runFetches() {
        while let fetch = state.withLock({ state -> SharedFetch? in
            guard state.head < state.waiting.count else {
                state.waiting.removeAll()
                state.head = 0
                state.threads -= 1
                return nil
            }
            defer {
                state.head += 1
                if state.head >= 64 {
                    state.waiting.removeFirst(state.head)
                    state.head = 0
                }
            }
            return state.waiting[state.head]
        }) {
            run(fetch)
        }
    }

    private func run(_ fetch: SharedFetch) {
        guard !fetch.cancellation.isCancelled else { return }
        let key = fetch.url.absoluteString
        if let bytes = memory.withLock({ $0.value(for: key) }) {
            state.withLock { $0.statistics.memoryHits += 1 }
            finish(fetch, .success((bytes, .memory)))
            return
        }
        if let disk = diskCache, let bytes = disk.bytes(for: fetch.url) {
            keepInMemory(bytes, for: key)
            state.withLock { $0.statistics.diskHits += 1 }
            finish(fetch, .success((bytes, .disk)))
            return
        }
        let configuration = self.configuration
        let options = HTTPClient.Options(connectTimeout: configuration.connectTimeout, idleTimeout: configuration.idleTimeout,
                                         totalTimeout: configuration.totalTimeout,
                                         maximumBodyBytes: configuration.maximumBodyBytes, userAgent: configuration.userAgent)
        let retry = configuration.retry
        var attempt = 1
        while true {
            state.withLock { $0.statistics.networkAttempts += 1 }
            do {
                var handedOn = 0
                guard let body = try HTTPClient.get(fetch.url, options: options, cancellation: fetch.cancellation,
                                                    onBody: { body in
                                                        self.deliverProgress(fetch, body)
                                                        let arrived = body.count - handedOn
                                                        handedOn = body.count
                                                        self.state.withLock { $0.statistics.bytesReceived += arrived }
                                                    }) else { return }
                keepInMemory(body, for: key)
                diskCache?.store(body, for: fetch.url)
                finish(fetch, .success((body, .network)))
                return
            } catch {
                guard error.isTransient, attempt < max(1, retry.maximumAttempts) else {
                    state.withLock { $0.statistics.failures += 1 }
                    finish(fetch, .failure(error))
                    return
                }
                let delay = retry.delay(beforeRetry: attempt, random: retry.random())
                guard retry.clock.sleep(seconds: delay, cancellation: fetch.cancellation),
                      !fetch.cancellation.isCancelled else { return }
                attempt += 1
                state.withLock { $0.statistics.retries += 1 }
                restart(fetch)
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

    private func deliverProgress(_ fetch: SharedFetch, _ body: [UInt8]) {
        for consumer in streamingMembers(of: fetch, startingBody: true) { consumer.fetchDidReceive(body) }
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

/// Where fetched bytes came from.
/// - Thread: any (a value)
enum NetworkImageOrigin: Sendable, Equatable {
    case memory, disk, network
}

/// What hears how a fetch goes, on the fetch thread (or, for a memory hit, on the thread that asked).
/// Calls for one request come one at a time, in order; none come after `fetchDidFinish` or
/// `fetchDidFail`. After a cancel, a call already under way may still arrive.
/// - Thread: the fetch thread
protocol NetworkImageConsumer: AnyObject, Sendable {
    /// The body so far (it grows by what just arrived). Do not keep the array: the next bytes are
    /// appended to it. Only requests that were there from the first byte receive this.
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

/// A fetch under way, shared by the requests for one URL.
final class SharedFetch: Sendable {
    let url: URL
    let cancellation = FetchCancellation()
    init(url: URL) { self.url = url }
}

/// What waits between retries.
/// - Thread: any (the fetch threads call it)
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
