import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain HTTP/1.1 client over POSIX sockets, for `http://` URLs: one GET per connection
/// (`Connection: close`), redirects followed, the body handed on as it arrives.
///
/// Why not `URLSession` (FoundationNetworking over libcurl): an image fetch needs exact control of four
/// things, and over sockets of its own the client has each of them directly. Bytes are handed on as
/// each `recv` returns them, on the fetching thread, so a progressive JPEG decodes as it streams with
/// no delegate queue between. Cancellation closes the socket at once: the thread waits in `poll` on
/// the socket and on the `FetchCancellation`'s pipe together. The body limit stops reading at the
/// limit, and a body longer than its Content-Length is seen and refused (libcurl drops such bytes
/// without a word). Time limits are separate for connecting, for silence between bytes and for the
/// whole fetch (URLSession on Linux has no connect time-out of its own). The price: no TLS, so
/// `https://` is refused with a clear error (`NetworkImageError.unsupportedURL`), and no
/// compression (it asks for `identity`). Name resolution is `getaddrinfo`'s, bounded by the system
/// resolver's own time-outs rather than `connectTimeout`.
/// - Thread: any (the loader's fetch threads in practice); one call, one thread.
enum HTTPClient {
    /// The limits of one fetch.
    struct Options: Sendable {
        var connectTimeout: Double
        var idleTimeout: Double
        var totalTimeout: Double
        var maximumBodyBytes: Int
        var userAgent: String
        var maximumRedirects = 5
        /// How long, after the last byte a Content-Length announced, the client waits for the server
        /// to close before taking the body as whole: a byte arriving in that time is a body longer
        /// than declared. Servers close at once on `Connection: close`, so this is rarely waited.
        var trailingGrace = 0.25
    }

    /// The longest status line and headers accepted.
    static let maximumHeaderBytes = 64 << 10

    /// Fetches `url`: the body, or nil when `cancellation` fired first. `onBody` is called on this
    /// thread with the body received so far each time bytes arrive (it must not keep the array: the
    /// next bytes are appended to it).
    /// - Throws: `NetworkImageError`.
    static func get(_ url: URL, options: Options, cancellation: FetchCancellation,
                    onBody: ([UInt8]) -> Void) throws(NetworkImageError) -> [UInt8]? {
        let deadline = MonotonicTime.now + options.totalTimeout
        var current = url
        var redirects = 0
        while true {
            let target = try Target(current)
            let connection = try Connection.open(target, options: options, deadline: deadline, cancellation: cancellation)
            guard let connection else { return nil }
            defer { connection.close() }
            guard try connection.send(target.request(userAgent: options.userAgent)) else { return nil }
            guard let head = try connection.readHead() else { return nil }
            if [301, 302, 303, 307, 308].contains(head.status), let location = head.field("location") {
                redirects += 1
                guard redirects <= options.maximumRedirects else {
                    throw .tooManyRedirects(limit: options.maximumRedirects)
                }
                guard let next = URL(string: location, relativeTo: current)?.absoluteURL else {
                    throw .malformedResponse(reason: "a redirect to \"\(location)\", which is not a URL")
                }
                current = next
                continue
            }
            guard (200...299).contains(head.status) else { throw .httpStatus(head.status) }
            return try connection.readBody(head, onBody: onBody)
        }
    }

    /// Where a URL leads: host, port and the request's target.
    struct Target {
        let url: URL
        let host: String
        let port: Int
        let path: String

        init(_ url: URL) throws(NetworkImageError) {
            let text = url.absoluteString
            guard url.scheme?.lowercased() == "http" else {
                let scheme = url.scheme.map { "the \($0):// scheme" } ?? "no scheme"
                throw .unsupportedURL(text, reason: "\(scheme); Tessera fetches http:// only")
            }
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
                  var host = components.host, !host.isEmpty else {
                throw .unsupportedURL(text, reason: "no host")
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let port = components.port ?? 80
            guard (1...65_535).contains(port) else { throw .unsupportedURL(text, reason: "port \(port)") }
            var path = components.percentEncodedPath
            if path.isEmpty { path = "/" }
            if let query = components.percentEncodedQuery { path += "?" + query }
            guard !path.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw .unsupportedURL(text, reason: "white space in the path")
            }
            self.url = url
            self.host = host
            self.port = port
            self.path = path
        }

        func request(userAgent: String) -> [UInt8] {
            let hostField = (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")
            let agent = userAgent.filter { !$0.isNewline }
            let text = "GET \(path) HTTP/1.1\r\nHost: \(hostField)\r\nUser-Agent: \(agent)\r\n"
                + "Accept: image/*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n"
            return Array(text.utf8)
        }
    }

    /// A response's status and header fields.
    struct Head {
        var status: Int
        /// Field names lowercased, in order.
        var fields: [(name: String, value: String)]

        func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
        func fields(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }

        /// Parses the status line and fields (without the blank line that ends them).
        init(_ bytes: ArraySlice<UInt8>) throws(NetworkImageError) {
            let text = String(decoding: bytes, as: UTF8.self)
            var lines = text.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
                  let status = Int(parts[1]), (100...599).contains(status) else {
                throw .malformedResponse(reason: "status line \"\(statusLine.prefix(80))\"")
            }
            self.status = status
            fields = []
            for line in lines where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else {
                    throw .malformedResponse(reason: "header line \"\(line.prefix(80))\"")
                }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                fields.append((name, value))
            }
        }

        /// The body's length as Content-Length announces it; nil when absent.
        func contentLength() throws(NetworkImageError) -> Int? {
            let values = Set(fields("content-length"))
            guard let value = values.first else { return nil }
            guard values.count == 1, let length = Int(value), length >= 0 else {
                throw .malformedResponse(reason: "Content-Length \(values.sorted().joined(separator: ", "))")
            }
            return length
        }

        var isChunked: Bool {
            fields("transfer-encoding").contains { $0.lowercased().contains("chunked") }
        }
    }

    /// One connection: a non-blocking socket waited on together with the cancellation's pipe.
    final class Connection {
        private var socket: Int32
        private let options: Options
        private let deadline: Double
        private let cancellation: FetchCancellation
        /// Bytes received and not yet taken by the reader.
        private var pending: [UInt8] = []
        private var pendingStart = 0
        private var receivedEnd = false
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)

        private init(socket: Int32, options: Options, deadline: Double, cancellation: FetchCancellation) {
            self.socket = socket
            self.options = options
            self.deadline = deadline
            self.cancellation = cancellation
        }

        deinit {
            close()
            buffer.deallocate()
        }

        func close() {
            if socket >= 0 { closeDescriptor(socket) }
            socket = -1
        }

        /// Connects to the first address of `target` that answers; nil when cancelled.
        static func open(_ target: Target, options: Options, deadline: Double,
                         cancellation: FetchCancellation) throws(NetworkImageError) -> Connection? {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_ADDRCONFIG
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(target.host, String(target.port), &hints, &list)
            guard status == 0, let first = list else {
                if status == EAI_AGAIN { throw .connectionFailed(reason: "name lookup of \(target.host) failed for now") }
                throw .hostNotFound(target.host)
            }
            defer { freeaddrinfo(first) }
            let connectDeadline = min(deadline, MonotonicTime.now + options.connectTimeout)
            var lastError = NetworkImageError.connectionFailed(reason: "no address for \(target.host)")
            var entry: UnsafeMutablePointer<addrinfo>? = first
            while let address = entry {
                entry = address.pointee.ai_next
                let socket = openSocket(address.pointee.ai_family,
                                      Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue))
                guard socket >= 0 else {
                    lastError = .connectionFailed(reason: String(cString: strerror(errno)))
                    continue
                }
                let connection = Connection(socket: socket, options: options, deadline: deadline, cancellation: cancellation)
                var one: Int32 = 1
                _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                if connectSocket(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return connection }
                guard errno == EINPROGRESS else {
                    lastError = .connectionFailed(reason: String(cString: strerror(errno)))
                    continue
                }
                switch connection.wait(for: Int16(POLLOUT), until: connectDeadline) {
                case .cancelled: return nil
                case .timedOut:
                    throw MonotonicTime.now >= deadline ? .timedOut(.total, seconds: options.totalTimeout)
                        : .timedOut(.connect, seconds: options.connectTimeout)
                case .ready:
                    var failure: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length)
                    if failure == 0 { return connection }
                    lastError = .connectionFailed(reason: String(cString: strerror(failure)))
                }
            }
            throw lastError
        }

        enum WaitResult { case ready, timedOut, cancelled }

        /// Waits until the socket is ready for `events`, `limit` passes or the fetch is cancelled.
        private func wait(for events: Int16, until limit: Double) -> WaitResult {
            while true {
                if cancellation.isCancelled { return .cancelled }
                let left = limit - MonotonicTime.now
                if left <= 0 { return .timedOut }
                var entries = [pollfd(fd: socket, events: events, revents: 0), cancellation.pollEntry]
                let slice = cancellation.wakesPoll ? left : min(left, 0.05)
                let count = poll(&entries, 2, MonotonicTime.milliseconds(slice))
                if count < 0 && errno != EINTR { return .ready }  // the socket call that follows reports it
                if entries[1].revents != 0 || cancellation.isCancelled { return .cancelled }
                if entries[0].revents != 0 { return .ready }
            }
        }

        /// The deadline of the next wait for bytes: the idle limit, or the whole fetch's if sooner.
        private func idleLimit() -> Double { min(deadline, MonotonicTime.now + options.idleTimeout) }

        private func timeout() -> NetworkImageError {
            MonotonicTime.now >= deadline ? .timedOut(.total, seconds: options.totalTimeout)
                : .timedOut(.idle, seconds: options.idleTimeout)
        }

        /// Sends all of `bytes`; false when cancelled.
        func send(_ bytes: [UInt8]) throws(NetworkImageError) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { raw in
                    sendBytes(socket, raw.baseAddress! + sent, raw.count - sent)
                }
                if count > 0 { sent += count; continue }
                if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    switch wait(for: Int16(POLLOUT), until: idleLimit()) {
                    case .cancelled: return false
                    case .timedOut: throw timeout()
                    case .ready: continue
                    }
                }
                if errno == ECONNRESET || errno == EPIPE { throw .connectionReset(received: 0) }
                throw .connectionFailed(reason: String(cString: strerror(errno)))
            }
            return true
        }

        enum ReceiveResult { case bytes, end, cancelled }

        /// Receives what has arrived into `pending` (waiting for it up to the idle limit).
        private func receive(bodyReceived: Int, until limit: Double? = nil) throws(NetworkImageError) -> ReceiveResult {
            while true {
                let count = recv(socket, buffer.baseAddress, buffer.count, 0)
                if count > 0 {
                    if pendingStart > 0 && pendingStart == pending.count {
                        pending.removeAll(keepingCapacity: true)
                        pendingStart = 0
                    }
                    pending.append(contentsOf: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
                    return .bytes
                }
                if count == 0 { receivedEnd = true; return .end }
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    switch wait(for: Int16(POLLIN), until: limit ?? idleLimit()) {
                    case .cancelled: return .cancelled
                    case .timedOut: throw timeout()
                    case .ready: continue
                    }
                }
                if errno == ECONNRESET { throw .connectionReset(received: bodyReceived) }
                throw .connectionFailed(reason: String(cString: strerror(errno)))
            }
        }

        private var available: Int { pending.count - pendingStart }

        /// Takes up to `count` received bytes.
        private func take(_ count: Int) -> ArraySlice<UInt8> {
            let end = pendingStart + min(count, available)
            defer { pendingStart = end }
            return pending[pendingStart..<end]
        }

        /// Reads the status line and fields; nil when cancelled. Interim (1xx) responses are skipped.
        func readHead() throws(NetworkImageError) -> Head? {
            while true {
                let terminator: [UInt8] = [13, 10, 13, 10]
                var searched = 0  // bytes after `pendingStart` already searched
                while true {
                    if let end = Self.find(terminator, in: pending, from: pendingStart + max(0, searched - 3)) {
                        let head = try Head(pending[pendingStart..<end])
                        pendingStart = end + 4
                        if (100...199).contains(head.status) { break }
                        return head
                    }
                    guard available <= HTTPClient.maximumHeaderBytes else {
                        throw .malformedResponse(reason: "status line and headers longer than \(HTTPClient.maximumHeaderBytes) bytes")
                    }
                    searched = available
                    switch try receive(bodyReceived: 0) {
                    case .cancelled: return nil
                    case .bytes: continue
                    case .end:
                        throw available == 0 ? .connectionFailed(reason: "the server closed the connection without a response")
                            : .malformedResponse(reason: "the connection closed inside the headers")
                    }
                }
            }
        }

        private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
            guard bytes.count >= needle.count else { return nil }
            var index = max(0, start)
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0] && bytes[index + 1] == needle[1] && bytes[index + 2] == needle[2]
                    && bytes[index + 3] == needle[3] { return index }
                index += 1
            }
            return nil
        }

        /// Reads the body as the head frames it: by Content-Length, in chunks, or to the end of the
        /// connection. nil when cancelled.
        func readBody(_ head: Head, onBody: ([UInt8]) -> Void) throws(NetworkImageError) -> [UInt8]? {
            if let encoding = head.field("content-encoding")?.lowercased(), encoding != "identity" {
                throw .malformedResponse(reason: "Content-Encoding \(encoding), which Tessera does not decode")
            }
            let limit = options.maximumBodyBytes
            if head.isChunked { return try readChunkedBody(limit: limit, onBody: onBody) }
            let declared = try head.contentLength()
            if let declared, declared > limit { throw .tooLarge(limit: limit) }
            var body: [UInt8] = []
            body.reserveCapacity(min(declared ?? 64 << 10, limit))
            while true {
                if available > 0 {
                    let room = (declared ?? limit + 1) - body.count
                    let chunk = take(room)
                    body.append(contentsOf: chunk)
                    if available > 0 {
                        if let declared { throw .bodyLongerThanDeclared(declared: declared) }
                        throw .tooLarge(limit: limit)
                    }
                    if declared == nil && body.count > limit { throw .tooLarge(limit: limit) }
                    if !chunk.isEmpty { onBody(body) }
                }
                if let declared, body.count == declared {
                    try expectEnd(declared: declared)
                    return body
                }
                switch try receive(bodyReceived: body.count) {
                case .cancelled: return nil
                case .bytes: continue
                case .end:
                    if let declared { throw .truncatedBody(received: body.count, expected: declared) }
                    return body
                }
            }
        }

        /// After the announced bytes: the server closes (the body is whole), stays silent for the
        /// grace period (taken as whole), or sends more (refused).
        private func expectEnd(declared: Int) throws(NetworkImageError) {
            guard !receivedEnd else { return }
            let limit = min(deadline, MonotonicTime.now + options.trailingGrace)
            let outcome: ReceiveResult
            do {
                outcome = try receive(bodyReceived: declared, until: limit)
            } catch {
                switch error {
                case .timedOut: return  // the server keeps the connection open; the announced bytes all came
                case .connectionReset: return  // the body was whole before the reset
                default: throw error
                }
            }
            if case .bytes = outcome { throw .bodyLongerThanDeclared(declared: declared) }
        }

        /// A chunked body: each chunk's size line, its bytes and its line end, then the last chunk
        /// and its trailer.
        private func readChunkedBody(limit: Int, onBody: ([UInt8]) -> Void) throws(NetworkImageError) -> [UInt8]? {
            var body: [UInt8] = []
            /// The next line (without its CRLF), or nil when cancelled.
            func line() throws(NetworkImageError) -> String? {
                while true {
                    if let end = Self.findLineEnd(in: pending, from: pendingStart) {
                        let text = String(decoding: pending[pendingStart..<end], as: UTF8.self)
                        pendingStart = end + 2
                        return text
                    }
                    guard available <= 4096 else { throw .malformedResponse(reason: "a chunk line over 4 KB") }
                    switch try receive(bodyReceived: body.count) {
                    case .cancelled: return nil
                    case .bytes: continue
                    case .end: throw .truncatedBody(received: body.count, expected: nil)
                    }
                }
            }
            while true {
                guard let sizeLine = try line() else { return nil }
                let digits = sizeLine.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                guard !digits.isEmpty, digits.count <= 16, let size = Int(digits, radix: 16), size >= 0 else {
                    throw .malformedResponse(reason: "chunk size \"\(sizeLine.prefix(40))\"")
                }
                if size == 0 {
                    // The trailer: fields up to an empty line.
                    while true {
                        guard let trailer = try line() else { return nil }
                        if trailer.isEmpty { return body }
                    }
                }
                guard size <= limit - body.count else { throw .tooLarge(limit: limit) }
                var left = size
                while left > 0 {
                    if available == 0 {
                        switch try receive(bodyReceived: body.count) {
                        case .cancelled: return nil
                        case .bytes: break
                        case .end: throw .truncatedBody(received: body.count, expected: nil)
                        }
                    }
                    let chunk = take(left)
                    left -= chunk.count
                    body.append(contentsOf: chunk)
                    onBody(body)
                }
                guard let end = try line() else { return nil }
                guard end.isEmpty else { throw .malformedResponse(reason: "chunk longer than its size") }
            }
        }

        private static func findLineEnd(in bytes: [UInt8], from start: Int) -> Int? {
            var index = start
            while index + 1 < bytes.count {
                if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
                index += 1
            }
            return nil
        }
    }
}

// The socket calls by their C names, outside `Connection`, whose methods of the same names hide them.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func openSocket(_ family: Int32, _ type: Int32) -> Int32 { socket(family, type, 0) }
private func connectSocket(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
}
