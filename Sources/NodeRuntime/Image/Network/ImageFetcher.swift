public import FoundationEssentials
import Glibc
import Dispatch

/// What fetches one URL's bytes for a `NetworkImageLoader`: one attempt, no caching, no retries (the
/// loader keeps the caches, shares a fetch between requests for one URL, limits how many run at once
/// and per host, and tries transient failures again).
///
/// The loader's default is `CurlImageFetcher` (libcurl). Give a loader a fetcher of your own
/// (`NetworkImageLoader.Configuration.fetcher`) to sign requests, fetch through a client of your own,
/// or serve URLs of a scheme of your own.
///
/// A fetcher calls its delegate from any thread, one call at a time and in order: `didReceive` for
/// each piece of the body as it arrives, then exactly one of `didFinish` or `didFail`; nothing after
/// that, and nothing once `cancel()` has returned (a call already under way may finish). The loader
/// enforces `ImageFetchRequest.maximumBodyBytes` on what it is given too: a fetcher that passes more
/// is cancelled and the fetch fails with `NetworkImageError.tooLarge`.
/// - Thread: any
public protocol ImageFetcher: Sendable {
    /// Starts fetching `request.url`, telling `delegate` how it goes. Returns at once.
    func startFetch(_ request: ImageFetchRequest, delegate: any ImageFetchDelegate) -> any ImageFetchTask
}

/// One fetch a loader asks an `ImageFetcher` for, with the loader's limits.
/// - Thread: any (a value)
public struct ImageFetchRequest: Sendable {
    /// What to fetch.
    public var url: URL
    /// Seconds to wait for a connection (name lookup, TCP and TLS handshakes, a proxy's included).
    public var connectTimeout: Double
    /// Seconds of silence allowed once connected, while waiting for the response or its body.
    public var idleTimeout: Double
    /// Seconds the whole attempt may take.
    public var totalTimeout: Double
    /// The longest body accepted, in bytes (after content decoding).
    public var maximumBodyBytes: Int
    /// The User-Agent header to send.
    public var userAgent: String
    /// More request headers ("Authorization": "Bearer …").
    public var headers: [String: String]

    /// A request with the loader's default limits.
    public init(url: URL, connectTimeout: Double = 10, idleTimeout: Double = 20, totalTimeout: Double = 120,
                maximumBodyBytes: Int = 32 << 20, userAgent: String = "Tessera", headers: [String: String] = [:]) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.totalTimeout = totalTimeout
        self.maximumBodyBytes = maximumBodyBytes
        self.userAgent = userAgent
        self.headers = headers
    }
}

/// Hears how one fetch goes (see `ImageFetcher` for the order of calls).
/// - Thread: any (the fetcher's)
public protocol ImageFetchDelegate: Sendable {
    /// The next piece of the body, decoded (no transfer or content coding left).
    func didReceive(_ bytes: UnsafeRawBufferPointer)
    /// The body is whole.
    func didFinish()
    /// The attempt failed.
    func didFail(_ error: NetworkImageError)
}

/// A fetch under way.
/// - Thread: any
public protocol ImageFetchTask: Sendable {
    /// Stops the fetch and lets its connection go; no delegate call starts after this returns.
    func cancel()
}
