public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 for tests, on POSIX sockets: a port the system assigns, a thread
/// per connection, and for each path a script of what to send, when to pause (at gates the test
/// opens), and how to end (close, reset, or not at all). It records the requests it was sent and the
/// connections whose client went away, so a test can wait for "the client closed the connection"
/// instead of sleeping.
///
/// Nothing here waits without a bound: a gate not opened, a client that never reads, a request that
/// never ends, each gives up after `safetyLimit` seconds, and `stop()` ends every wait at once.
/// - Thread: any
public final class TestHTTPServer: @unchecked Sendable {
    /// One step of a response's script.
    /// - Thread: any (a value)
    public enum Step: Sendable {
        /// Sends the bytes.
        case send([UInt8])
        /// Waits until the gate is opened (or the client goes away, or the server stops).
        case wait(Gate)
        /// Closes the connection (FIN).
        case close
        /// Resets the connection (RST: a close with a zero linger time).
        case reset
        /// Sends nothing more and keeps the connection open until the client goes away.
        case stall
        /// Sends `chunk` again and again until the client goes away.
        case endless([UInt8])
    }

    /// A pause the test ends: `open()` lets every script waiting on it (and every later one) go on.
    /// - Thread: any
    public final class Gate: @unchecked Sendable {
        fileprivate let ends: (read: Int32, write: Int32)
        private let condition = NSCondition()
        private var isOpen = false  // guarded by condition
        private var waiting = 0  // guarded by condition

        /// A closed gate.
        public init() {
            var fds: [Int32] = [-1, -1]
            precondition(pipe(&fds) == 0, "pipe: \(String(cString: strerror(errno)))")
            ends = (fds[0], fds[1])
        }

        deinit {
            close(ends.read)
            close(ends.write)
        }

        /// Opens the gate.
        public func open() {
            condition.lock()
            let first = !isOpen
            isOpen = true
            condition.broadcast()
            condition.unlock()
            if first {
                var byte: UInt8 = 1
                _ = write(ends.write, &byte, 1)
            }
        }

        /// Waits until a script is waiting at the gate (false after `timeout` seconds).
        public func waitUntilReached(timeout: Double = 30) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while waiting == 0 {
                if !condition.wait(until: deadline) { return waiting > 0 }
            }
            return true
        }

        fileprivate func arrive() {
            condition.lock()
            waiting += 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The longest any wait of the server lasts, in seconds.
    public let safetyLimit: Double
    /// The port the server listens on.
    public let port: Int

    private let listener: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let condition = NSCondition()
    // Guarded by condition:
    private var scripts: [String: [[Step]]] = [:]
    private var requests: [String] = []
    private var clientCloses: [String: Int] = [:]
    private var connections: Set<Int32> = []
    private var stopped = false
    private var threads = 0

    /// Starts listening on 127.0.0.1 at a port the system assigns.
    public init(safetyLimit: Double = 30) throws {
        self.safetyLimit = safetyLimit
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Self.failure("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            close(socket)
            throw Self.failure("bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socket
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Self.failure("pipe") }
        stopPipe = (fds[0], fds[1])
        condition.lock()
        threads += 1
        condition.unlock()
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "test-http-accept"
        thread.start()
    }

    deinit {
        stop()
        close(listener)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    private static func failure(_ what: String) -> NSError {
        NSError(domain: "TestHTTPServer", code: Int(errno),
                userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(errno)))"])
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// What `path` answers: the first request the first script, the second the second, and so on;
    /// the last script answers every request after. A path with no script answers 404.
    public func route(_ path: String, _ scripts: [Step]...) {
        condition.lock()
        self.scripts[path] = scripts
        condition.unlock()
    }

    /// The requests received, their paths in order.
    public var receivedPaths: [String] {
        condition.lock()
        defer { condition.unlock() }
        return requests
    }

    /// How many requests for `path` were received.
    public func requestCount(_ path: String) -> Int { receivedPaths.filter { $0 == path }.count }

    /// How many connections for `path` the client closed while the server still had things to send or
    /// was waiting.
    public func clientCloseCount(_ path: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return clientCloses[path] ?? 0
    }

    /// Waits until the client has closed `count` connections for `path` (false after `timeout`).
    public func waitForClientClose(_ path: String, count: Int = 1, timeout: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while (clientCloses[path] ?? 0) < count {
            if !condition.wait(until: deadline) { return (clientCloses[path] ?? 0) >= count }
        }
        return true
    }

    /// Waits until `count` requests for `path` have been received (false after `timeout`).
    public func waitForRequests(_ path: String, count: Int = 1, timeout: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while requests.filter({ $0 == path }).count < count {
            if !condition.wait(until: deadline) { return requests.filter({ $0 == path }).count >= count }
        }
        return true
    }

    /// Stops listening, ends every script's wait and closes every connection; returns once every
    /// thread of the server has ended. After it, connecting is refused.
    public func stop() {
        condition.lock()
        let first = !stopped
        stopped = true
        let open = connections
        condition.unlock()
        if first {
            var byte: UInt8 = 1
            _ = write(stopPipe.write, &byte, 1)
            shutdown(listener, Int32(SHUT_RDWR))
            for connection in open { shutdown(connection, Int32(SHUT_RDWR)) }
        }
        let deadline = Date(timeIntervalSinceNow: safetyLimit)
        condition.lock()
        while threads > 0 { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }

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

    // MARK: Threads

    private func finishThread() {
        condition.lock()
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func acceptLoop() {
        defer { finishThread() }
        while true {
            var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            _ = poll(&entries, 2, -1)
            if entries[1].revents != 0 { return }
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            condition.lock()
            if stopped {
                condition.unlock()
                close(client)
                return
            }
            connections.insert(client)
            threads += 1
            condition.unlock()
            let thread = Thread { [self] in serve(client) }
            thread.name = "test-http-connection"
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer {
            condition.lock()
            connections.remove(client)
            condition.unlock()
            close(client)
            finishThread()
        }
        var timeout = timeval(tv_sec: Int(safetyLimit), tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let path = readRequestPath(client) else { return }
        condition.lock()
        let index = requests.filter { $0 == path }.count
        requests.append(path)
        let script = scripts[path].map { $0[min(index, $0.count - 1)] }
        condition.broadcast()
        condition.unlock()
        guard let script else {
            sendAll(client, Self.response(status: 404, body: Array("no such path".utf8), contentType: "text/plain"))
            return
        }
        for step in script {
            switch step {
            case .send(let bytes):
                guard sendAll(client, bytes) else { return clientClosed(path) }
            case .wait(let gate):
                gate.arrive()
                guard waitForGate(gate, client: client) else { return clientClosed(path) }
            case .close:
                return
            case .reset:
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return
            case .stall:
                if !waitForGate(nil, client: client) { clientClosed(path) }
                return
            case .endless(let chunk):
                while sendAll(client, chunk) {
                    if isStopped { return }
                }
                return clientClosed(path)
            }
        }
    }

    private var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    private func clientClosed(_ path: String) {
        condition.lock()
        if !stopped { clientCloses[path, default: 0] += 1 }
        condition.broadcast()
        condition.unlock()
    }

    /// The request's path, once its head has arrived.
    private func readRequestPath(_ client: Int32) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date(timeIntervalSinceNow: safetyLimit)
        while head.count < 65_536 {
            if let end = head.indices.dropLast(3).first(where: { head[$0] == 13 && head[$0 + 1] == 10 && head[$0 + 2] == 13 && head[$0 + 3] == 10 }) {
                let line = String(decoding: head[..<end], as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
                let parts = line.split(separator: " ")
                return parts.count >= 2 ? String(parts[1]) : nil
            }
            var entries = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            _ = poll(&entries, 2, Int32(max(0, deadline.timeIntervalSinceNow) * 1000))
            if entries[1].revents != 0 || entries[0].revents == 0 { return nil }
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            head += buffer[0..<count]
        }
        return nil
    }

    @discardableResult
    private func sendAll(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(client, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Waits for `gate` (nil: for nothing) while watching the client: false when the client closed
    /// the connection (or the safety limit passed), true when the gate opened. A stop ends the wait
    /// as a close would, without counting it.
    private func waitForGate(_ gate: Gate?, client: Int32) -> Bool {
        let deadline = Date(timeIntervalSinceNow: safetyLimit)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while deadline.timeIntervalSinceNow > 0 {
            var entries = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: gate?.ends.read ?? -1, events: Int16(POLLIN), revents: 0)]
            _ = poll(&entries, 3, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if entries[1].revents != 0 { return false }
            if entries[2].revents != 0 { return true }
            if entries[0].revents != 0 {
                // The client sends nothing after its request: readable means it closed (or reset).
                let count = recv(client, &scratch, scratch.count, 0)
                if count <= 0 { return false }
            }
        }
        return false
    }
}
