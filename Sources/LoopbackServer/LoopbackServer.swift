public import Foundation

/// A small HTTP server on 127.0.0.1, for the gallery's `--serve-assets` and for tests: HTTP/1.1 with
/// keep-alive over plain TCP or TLS (OpenSSL), HTTP/2 over TLS when ALPN agrees on "h2"
/// (libnghttp2's server session), scripted raw answers for tests of hostile servers, and a
/// forward-proxy mode (`proxy(configuration:)`).
///
/// One thread accepts, blocked in `poll` on the listening socket and a stop pipe; each connection
/// is served on a thread of its own, at most `Configuration.maximumConnections` at once. When all
/// are taken, the connection idle the longest between keep-alive requests is closed to make room;
/// when none is idle, the newcomer is answered 503 (plain HTTP) or closed (TLS).
///
/// Slow clients are shed by a minimum transfer rate: while the server waits on a client (for its
/// request, TLS handshake included, or for it to take the response), a client that moves fewer
/// than `minimumBytesPerSecond` × `rateWindow` bytes in a window of `rateWindow` seconds (at least
/// one byte) is closed. A connection idle between requests is closed after `idleTimeout`. So
/// slowloris clients and readers that never read cannot hold every slot for longer than a window.
/// Time the handler takes is not the client's and is not measured.
///
/// Handlers run on the connection's thread, with no lock of the server held, and may block it.
/// `stop()` (and `deinit`) ends every connection at once.
/// - Thread: any
public final class LoopbackServer: Sendable {
    /// Answers a request. Runs on the connection's thread; several at once on several connections.
    /// - Thread: a connection's
    public typealias Handler = @Sendable (Request) -> Response

    /// Limits and timing of a server.
    /// - Thread: any (a value)
    public struct Configuration: Sendable {
        /// Connections served at once (the accept thread aside).
        public var maximumConnections = 32
        /// The longest request head (request line and header fields; on HTTP/2 the decoded header
        /// list), in bytes: a longer one is answered 431 and the connection closed.
        public var maximumHeadBytes = 16 << 10
        /// The longest request body: a longer one is answered 413 (and on HTTP/1.1 the connection
        /// closed). An HTTP/2 connection holds at most twice this across its streams' bodies.
        public var maximumBodyBytes = 1 << 20
        /// The slowest a client may send its request or take its response, averaged over a
        /// `rateWindow`; 0 asks only for one byte a window.
        public var minimumBytesPerSecond: Double = 1024
        /// The window over which the rate is measured, in seconds.
        public var rateWindow: Double = 10
        /// How long a connection may wait between requests, in seconds.
        public var idleTimeout: Double = 5
        /// The longest a script waits at a gate or stalls, in seconds.
        public var scriptWaitLimit: Double = 30
        /// Serve TLS with this identity (and HTTP/2 when `allowsHTTP2`); plain TCP when nil.
        public var tls: TLSIdentity?
        /// Whether ALPN may choose "h2" on a TLS server.
        public var allowsHTTP2 = true
        /// Streams a client may have open at once on one HTTP/2 connection.
        public var maximumConcurrentStreams = 100
        /// The longest `stop()` waits for handlers still running, in seconds.
        public var stopTimeout: Double = 10

        public init() {}
    }

    /// Why a connection was closed by the server before its client was done.
    /// - Thread: any (a value)
    public enum ShedReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Sent its request (or TLS handshake) slower than the minimum rate.
        case slowRequest
        /// Took its response slower than the minimum rate.
        case slowReader
        /// Sent no request for `idleTimeout` after its last one.
        case idle
        /// Idle the longest when every connection was taken and a new one came.
        case makingRoom

        public var description: String { rawValue }
    }

    /// What the server has done, for tests to read.
    /// - Thread: any (a value)
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted and served (not counting those refused as busy).
        public var connectionsAccepted = 0
        /// Connections being served now.
        public var openConnections = 0
        /// Requests answered, by protocol version ("HTTP/1.1", "HTTP/1.0", "HTTP/2").
        public var requestsByVersion: [String: Int] = [:]
        /// Connections the server closed on a client, by why.
        public var shed: [ShedReason: Int] = [:]
        /// Connections refused because every slot was taken by a busy connection.
        public var refusedBusy = 0
        /// Request heads longer than `maximumHeadBytes` (answered 431).
        public var headsTooLarge = 0
        /// TLS handshakes that failed (a client that does not trust the certificate, or speaks no TLS).
        public var tlsHandshakeFailures = 0
        /// Connections whose client closed or reset them while a response was being sent.
        public var clientsGoneMidResponse = 0

        /// Requests answered over `version`.
        public func requests(_ version: String) -> Int { requestsByVersion[version] ?? 0 }
        /// Connections shed for `reason`.
        public func shed(_ reason: ShedReason) -> Int { shed[reason] ?? 0 }
        /// Requests answered over every version.
        public var totalRequests: Int { requestsByVersion.values.reduce(0, +) }
    }

    /// The port it listens on.
    public let port: Int
    /// Its limits and timing.
    public let configuration: Configuration
    /// `http://127.0.0.1:PORT/`, or `https://…` with TLS.
    public var baseURL: URL { URL(string: "\(configuration.tls == nil ? "http" : "https")://127.0.0.1:\(port)/")! }

    let core: ServerCore

    /// Starts a server answering every request with `handler`.
    /// - Throws: `LoopbackServerError` when no socket can listen, or the TLS identity cannot be used.
    /// - Thread: any
    public convenience init(configuration: Configuration = Configuration(), handler: @escaping Handler) throws {
        try self.init(configuration: configuration, role: .handler(handler))
    }

    /// Starts a forward proxy: `CONNECT host:port` opens a tunnel and an absolute-form request
    /// (`GET http://host:port/path`) is forwarded, each only to 127.0.0.1 (or `localhost`); any other
    /// target is answered 403, and a request that is neither 400. The targets asked for are kept in
    /// `proxiedTargets`. A tunnel or forwarded exchange ends when either side closes, or when
    /// nothing moves for `rateWindow`.
    /// - Thread: any
    public static func proxy(configuration: Configuration = Configuration()) throws -> LoopbackServer {
        try LoopbackServer(configuration: configuration, role: .proxy)
    }

    private init(configuration: Configuration, role: ServerCore.Role) throws {
        precondition(configuration.maximumConnections > 0, "a server serves at least one connection")
        precondition(configuration.rateWindow > 0 && configuration.idleTimeout > 0, "windows are positive")
        self.configuration = configuration
        core = try ServerCore(configuration: configuration, role: role)
        port = core.port
        core.start()
    }

    deinit { core.stop() }

    /// A snapshot of what it has done.
    /// - Thread: any
    public var statistics: Statistics { core.state.withLock { $0.statistics } }

    /// The targets a proxy was asked for, in order ("127.0.0.1:8080"), whether or not it reached them.
    /// - Thread: any
    public var proxiedTargets: [String] { core.state.withLock { $0.proxiedTargets } }

    /// Waits until `condition` holds of the statistics; false when it still does not after
    /// `timeout` seconds. `condition` runs on the calling thread, on copies, outside the server's lock.
    /// - Thread: any
    public func waitForStatistics(timeout: Double, until condition: (Statistics) -> Bool) -> Bool {
        let deadline = MonotonicTime.now() + timeout
        while true {
            let (statistics, generation) = core.state.snapshot { $0.statistics }
            if condition(statistics) { return true }
            if !core.state.waitForChange(after: generation, until: deadline) { return condition(self.statistics) }
        }
    }

    /// Stops listening, ends every connection (scripts' waits and tunnels too) and returns once
    /// every thread of the server has ended and its descriptors are closed (or after
    /// `stopTimeout`, when a handler still runs). Later connections are refused by the system.
    /// Calling it again does nothing.
    /// - Thread: any but a handler's (it waits for the handlers to end)
    public func stop() { core.stop() }
}
