public import Foundation
public import LoopbackServer

/// An HTTP/1.1 server on 127.0.0.1 for tests, over plain TCP or TLS: a `LoopbackServer` whose
/// every path answers with a script of what to send, when to pause (at gates the test opens), and
/// how to end (close, reset, or not at all). It records the requests it was sent and the
/// connections whose client went away, so a test can wait for "the client closed the connection"
/// instead of sleeping.
///
/// Nothing here waits without a bound: a gate not opened, a client that never reads, a request that
/// never ends, each gives up after `safetyLimit` seconds (the server's script wait limit, and its
/// rate window with no minimum rate: a client that moves no byte for that long is dropped), and
/// `stop()` ends every wait at once. Each connection carries one request (the script ends it).
/// - Thread: any
public final class TestHTTPServer: Sendable {
    /// One step of a response's script (`LoopbackServer.Step`).
    public typealias Step = LoopbackServer.Step
    /// A pause the test ends (`LoopbackServer.Gate`): `open()` lets every script waiting on it (and
    /// every later one) go on; `waitUntilReached` waits for a script to arrive.
    public typealias Gate = LoopbackServer.Gate

    /// The longest any wait of the server lasts, in seconds.
    public let safetyLimit: Double
    /// The port the server listens on.
    public let port: Int
    /// The identity served over TLS (its `authorityCertificatePEM` is what a client trusts); nil
    /// for plain HTTP.
    public let tls: LoopbackServer.TLSIdentity?
    /// The server underneath, for its statistics.
    public let server: LoopbackServer
    private let record: Record

    /// Starts listening on 127.0.0.1 at a port the system assigns; over TLS with `tls` (HTTP/1.1
    /// only: ALPN never chooses h2, since scripts are HTTP/1.1 byte streams).
    public init(safetyLimit: Double = 30, tls: LoopbackServer.TLSIdentity? = nil) throws {
        self.safetyLimit = safetyLimit
        self.tls = tls
        var configuration = LoopbackServer.Configuration()
        configuration.tls = tls
        configuration.allowsHTTP2 = false
        configuration.maximumConnections = 64
        configuration.minimumBytesPerSecond = 0
        configuration.rateWindow = safetyLimit
        configuration.idleTimeout = safetyLimit
        configuration.scriptWaitLimit = safetyLimit
        configuration.stopTimeout = safetyLimit
        let record = Record()
        self.record = record
        server = try LoopbackServer(configuration: configuration) { request in record.answer(request) }
        port = server.port
    }

    /// The URL of `path` on this server (https:// with TLS).
    public func url(_ path: String) -> URL { URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)\(path)")! }

    /// What `path` answers: the first request the first script, the second the second, and so on;
    /// the last script answers every request after. A path with no script answers 404.
    public func route(_ path: String, _ scripts: [Step]...) {
        let replaced = record.state.withLock { state in state.scripts.updateValue(scripts, forKey: path) }
        _ = replaced  // released here, outside the lock
    }

    /// The requests received, their paths in order.
    public var receivedPaths: [String] { record.state.withLock { $0.requests } }

    /// How many requests for `path` were received.
    public func requestCount(_ path: String) -> Int { receivedPaths.filter { $0 == path }.count }

    /// How many connections for `path` the client closed while the server still had things to send or
    /// was waiting.
    public func clientCloseCount(_ path: String) -> Int { record.state.withLock { $0.clientCloses[path] ?? 0 } }

    /// Waits until the client has closed `count` connections for `path` (false after `timeout`).
    public func waitForClientClose(_ path: String, count: Int = 1, timeout: Double = 30) -> Bool {
        record.state.wait(timeout: timeout) { ($0.clientCloses[path] ?? 0) < count }
    }

    /// Waits until `count` requests for `path` have been received (false after `timeout`).
    public func waitForRequests(_ path: String, count: Int = 1, timeout: Double = 30) -> Bool {
        record.state.wait(timeout: timeout) { state in state.requests.lazy.filter { $0 == path }.count < count }
    }

    /// Stops listening, ends every script's wait and closes every connection; returns once every
    /// thread of the server has ended. After it, connecting is refused.
    public func stop() { server.stop() }

    /// A standard response: status line, Content-Length (unless `contentLength` says otherwise),
    /// Content-Type and `headers`, then the body, then close.
    public static func response(status: Int = 200, body: [UInt8], contentType: String = "image/jpeg",
                                contentLength: Int? = nil, headers: [String] = []) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n"
        head += "Content-Length: \(contentLength ?? body.count)\r\nContent-Type: \(contentType)\r\nConnection: close\r\n"
        for header in headers { head += header + "\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// The head of a response without a Content-Length (its body runs to the close, or is chunked
    /// when `headers` says so).
    public static func head(status: Int = 200, headers: [String] = []) -> [UInt8] {
        var head = "HTTP/1.1 \(status) OK\r\nContent-Type: image/jpeg\r\nConnection: close\r\n"
        for header in headers { head += header + "\r\n" }
        return Array((head + "\r\n").utf8)
    }

    /// The routes and what was received, shared with the server's handler (which must not hold the
    /// `TestHTTPServer`, or the server would keep itself alive).
    private final class Record: Sendable {
        struct State {
            var scripts: [String: [[Step]]] = [:]
            var requests: [String] = []
            var clientCloses: [String: Int] = [:]
        }

        let state = ConditionLocked(State())

        func answer(_ request: LoopbackServer.Request) -> LoopbackServer.Response {
            let path = request.path
            let script = state.withLock { state -> [Step]? in
                let index = state.requests.lazy.filter { $0 == path }.count
                state.requests.append(path)
                return state.scripts[path].map { $0[min(index, $0.count - 1)] }
            }
            let steps = script ?? [.send(TestHTTPServer.response(status: 404, body: Array("no such path".utf8),
                                                                 contentType: "text/plain")), .close]
            return .script(steps) { [self] in
                state.withLock { $0.clientCloses[path, default: 0] += 1 }
            }
        }
    }
}

/// A value reached only inside its lock, with bounded waits on its changes (every change wakes the
/// waiters).
/// - Thread: any
final class ConditionLocked<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value  // guarded by condition

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// Waits while `predicate` holds, for at most `timeout` seconds; false when it still held then.
    func wait(timeout: Double, while predicate: (Value) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while predicate(value) {
            if !condition.wait(until: deadline) { return !predicate(value) }
        }
        return true
    }
}
