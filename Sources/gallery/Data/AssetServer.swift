import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The gallery's asset server (`gallery --serve-assets`): plain HTTP/1.1 on 127.0.0.1, at a port the
/// system assigns, answering GET requests for
/// - `/<path>`: the file at `path` under the assets folder, whole, with its Content-Length. A path
///   that would leave the folder (a `..` component, a symbolic link pointing out of it) and anything
///   but a regular file (a folder, a pipe, a device) are refused with 403; a missing file is 404.
/// - `/messages?chat=ID&before=MESSAGE_ID&count=N`: up to N messages of chat ID just older than its
///   message MESSAGE_ID (the newest N without `before`; N is 30 unless given, at most 500), as JSON
///   (`MessagesPage`). A missing or malformed parameter is 400, an unknown chat or message 404.
///
/// One thread accepts, blocked in `poll` on the listening socket and a stop pipe; each connection is
/// served on a thread of its own, at most `maximumConnections` at once (more are answered 503), one
/// request per connection (`Connection: close`). A client that goes away mid-answer ends its
/// connection quietly (no SIGPIPE: sends use `MSG_NOSIGNAL`); one that sends no request, or stops
/// reading, is dropped after `clientTimeout` seconds. The server runs until `stop()`.
/// - Thread: any
final class AssetServer: @unchecked Sendable {
    /// One page of a chat's history, as `/messages` answers it.
    /// - Thread: any (a value)
    struct MessagesPage: Codable, Sendable {
        /// The chat's id.
        var chat: Int
        /// The messages, oldest first.
        var messages: [ChatData.Message]
        /// The messages those reply to that are not among them, so each reply can quote its message.
        var quoted: [ChatData.Message]
        /// How many of the chat's messages are older than the first one here (0: it is the first).
        var remaining: Int
    }

    /// A request the server answered.
    /// - Thread: any (a value)
    struct Request: Sendable, Equatable {
        /// The method and the target as the client sent them ("GET", "/photos/brick.jpg").
        var method: String
        var target: String
        /// The status it was answered with.
        var status: Int
    }

    /// The server could not start listening.
    /// - Thread: any (a value)
    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// Connections served at once; the next one is answered 503 until one ends.
    static let maximumConnections = 32
    /// The longest request head read, in bytes.
    static let maximumHeadBytes = 16 << 10
    /// Messages in a page when the request does not say, and the most one may ask for.
    static let defaultPageSize = 30, maximumPageSize = 500
    /// Requests kept in `requests`, the most recent.
    static let requestLogLimit = 256

    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT/`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    /// Seconds a client may take to send its request, and to take each part of the answer.
    let clientTimeout: Double

    /// The assets folder with its symbolic links resolved: every file served resolves to a path
    /// under it.
    private let root: String
    private let data: ChatData
    private let listener: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var state = State()

    private struct State {
        var stopped = false
        /// Threads running: the accept loop and one per connection.
        var threads = 0
        /// Connections being served.
        var connections: Set<Int32> = []
        var requests: [Request] = []
    }

    /// Starts serving `folder` (the gallery's `Assets`) and the messages of `data` on a port the
    /// system assigns.
    /// - Throws: `StartError` when the folder cannot be resolved or no socket can listen.
    init(folder: URL, data: ChatData, clientTimeout: Double = 10) throws {
        guard let resolved = realpath(folder.path, nil) else {
            throw StartError(description: "gallery: cannot serve \(folder.path): \(String(cString: strerror(errno)))")
        }
        root = String(cString: resolved)
        free(resolved)
        self.data = data
        self.clientTimeout = clientTimeout
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Self.startError("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            let error = Self.startError("bind/listen")
            close(socket)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let error = Self.startError("pipe")
            close(socket)
            throw error
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socket
        stopPipe = (ends[0], ends[1])
        state.threads = 1
        let thread = Thread { [self] in acceptConnections() }
        thread.name = "gallery.assets"
        thread.start()
    }

    deinit {
        close(listener)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    private static func startError(_ call: String) -> StartError {
        StartError(description: "gallery: the asset server cannot listen on 127.0.0.1 (\(call): \(String(cString: strerror(errno))))")
    }

    /// The requests answered, oldest first (the most recent `requestLogLimit`).
    var requests: [Request] {
        condition.lock()
        defer { condition.unlock() }
        return state.requests
    }

    /// Connections being served now.
    var openConnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.connections.count
    }

    /// Waits until no connection is being served (false after `timeout` seconds).
    func waitUntilNoConnections(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !state.connections.isEmpty {
            if !condition.wait(until: deadline) { return state.connections.isEmpty }
        }
        return true
    }

    /// Stops listening, ends every connection, and returns once the server's threads have ended (or
    /// after `clientTimeout` seconds). Later connections are refused by the system.
    func stop() {
        condition.lock()
        let first = !state.stopped
        state.stopped = true
        if first {
            var byte: UInt8 = 1
            _ = write(stopPipe.write, &byte, 1)
            shutdown(listener, Int32(SHUT_RDWR))
            // Under the lock: a connection leaves the set before its descriptor is closed, so no
            // descriptor shut here can have been closed and reused meanwhile.
            for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
        }
        condition.unlock()
        let deadline = Date(timeIntervalSinceNow: clientTimeout)
        condition.lock()
        while state.threads > 0 { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }

    // MARK: Connections

    private func threadDidEnd() {
        condition.lock()
        state.threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func acceptConnections() {
        defer { threadDidEnd() }
        while true {
            var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            if poll(&entries, 2, -1) < 0 && errno != EINTR { return }
            if entries[1].revents != 0 { return }
            guard entries[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            if client < 0 {
                switch errno {
                case EINTR, EAGAIN, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The connection stays queued and the listener readable: wait a moment (or for
                    // the stop) rather than spin on it.
                    var stopEntry = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
                    _ = poll(&stopEntry, 1, 100)
                    continue
                default: return
                }
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            condition.lock()
            let stopped = state.stopped
            let admitted = !stopped && state.connections.count < Self.maximumConnections
            if admitted {
                state.connections.insert(client)
                state.threads += 1
            }
            condition.unlock()
            guard admitted else {
                if !stopped {
                    // Never blocks the accept loop: what does not fit the socket's buffer is dropped.
                    let busy = Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                    _ = busy.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                }
                close(client)
                if stopped { return }
                continue
            }
            let thread = Thread { [self] in serve(client) }
            thread.name = "gallery.assets.connection"
            thread.start()
        }
    }

    /// Reads one request on `client`, answers it and closes the connection.
    private func serve(_ client: Int32) {
        defer {
            condition.lock()
            state.connections.remove(client)
            condition.broadcast()
            condition.unlock()
            shutdown(client, Int32(SHUT_WR))
            close(client)
            threadDidEnd()
        }
        var timeout = timeval(tv_sec: Int(clientTimeout), tv_usec: Int((clientTimeout - clientTimeout.rounded(.down)) * 1e6))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let head = readHead(client) else { return }
        let (request, response) = answer(head)
        defer { if case .file(let descriptor, _) = response.body { close(descriptor) } }
        condition.lock()
        state.requests.append(request)
        if state.requests.count > Self.requestLogLimit { state.requests.removeFirst(state.requests.count - Self.requestLogLimit) }
        condition.unlock()
        guard sendAll(client, response.head[...]) else { return }
        switch response.body {
        case .bytes(let bytes):
            _ = sendAll(client, bytes[...])
        case .file(let descriptor, let length):
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            var left = length
            while left > 0 {
                let count = read(descriptor, &buffer, min(buffer.count, left))
                if count < 0 && errno == EINTR { continue }
                // A file that shrank while being sent: the client sees a body shorter than its length.
                guard count > 0 else { return }
                guard sendAll(client, buffer[..<count]) else { return }
                left -= count
            }
        }
    }

    private enum Head {
        case head(String)
        /// More than `maximumHeadBytes` without a blank line.
        case tooLong
    }

    /// The request's head (up to its blank line), or nil when the client went away, took longer
    /// than `clientTimeout` or the server stopped.
    private func readHead(_ client: Int32) -> Head? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date(timeIntervalSinceNow: clientTimeout)
        let blankLine: [UInt8] = [13, 10, 13, 10]
        while head.count <= Self.maximumHeadBytes {
            if let end = head.firstRange(of: blankLine) {
                return .head(String(decoding: head[..<end.lowerBound], as: UTF8.self))
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var entries = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, Int32(min(left * 1000 + 1, 60_000)))
            if ready < 0 && errno != EINTR { return nil }
            if entries[1].revents != 0 { return nil }
            guard entries[0].revents != 0 else { continue }
            let count = recv(client, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            head += buffer[..<count]
        }
        return .tooLong
    }

    /// Sends every byte, or false when the client went away (or stopped reading for
    /// `clientTimeout`).
    private func sendAll(_ client: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var sent = bytes.startIndex
        while sent < bytes.endIndex {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    // MARK: Answers

    private struct Response {
        enum Body {
            case bytes([UInt8])
            /// An open file, closed once sent.
            case file(descriptor: Int32, length: Int)
        }

        var status: Int
        var head: [UInt8]
        var body: Body
    }

    private static func response(status: Int, contentType: String = "text/plain; charset=utf-8", length: Int,
                                 extraHeaders: [String] = [], body: Response.Body) -> Response {
        let reasons = [200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
                       500: "Internal Server Error"]
        var head = "HTTP/1.1 \(status) \(reasons[status] ?? "Status")\r\nContent-Length: \(length)\r\n"
        head += "Content-Type: \(contentType)\r\nConnection: close\r\n"
        for header in extraHeaders { head += header + "\r\n" }
        return Response(status: status, head: Array((head + "\r\n").utf8), body: body)
    }

    /// A short text answer: an error's reason, one line.
    private static func response(status: Int, text: String, extraHeaders: [String] = []) -> Response {
        let bytes = Array((text + "\n").utf8)
        return response(status: status, length: bytes.count, extraHeaders: extraHeaders, body: .bytes(bytes))
    }

    /// The request a head makes, and its answer.
    private func answer(_ head: Head) -> (Request, Response) {
        guard case .head(let text) = head else {
            return (Request(method: "", target: "", status: 400),
                    Self.response(status: 400, text: "the request head is longer than \(Self.maximumHeadBytes) bytes"))
        }
        let line = text.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return (Request(method: "", target: "", status: 400), Self.response(status: 400, text: "not an HTTP/1.x request line"))
        }
        let method = String(parts[0]), target = String(parts[1])
        let response = answer(method: method, target: target)
        return (Request(method: method, target: target, status: response.status), response)
    }

    private func answer(method: String, target: String) -> Response {
        guard method == "GET" else {
            return Self.response(status: 405, text: "only GET is served", extraHeaders: ["Allow: GET"])
        }
        guard target.hasPrefix("/") else { return Self.response(status: 400, text: "the target is not a path") }
        let path = target.prefix { $0 != "?" }
        if path == "/messages" {
            return messages(query: String(target.dropFirst(path.count + 1)))
        }
        return file(at: String(path))
    }

    /// The file at `path` (percent-encoded, from the request) under the folder.
    private func file(at path: String) -> Response {
        guard let decoded = path.removingPercentEncoding, !decoded.contains("\0") else {
            return Self.response(status: 400, text: "the path is not percent-encoded UTF-8")
        }
        let components = decoded.split(separator: "/")
        if components.contains("..") {
            return Self.response(status: 403, text: "the path leaves the assets folder")
        }
        let candidate = ([root] + components.map(String.init)).joined(separator: "/")
        guard let resolvedPointer = realpath(candidate, nil) else {
            return errno == EACCES ? Self.response(status: 403, text: "not readable")
                                   : Self.response(status: 404, text: "no such file")
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        guard resolved == root || resolved.hasPrefix(root + "/") else {
            return Self.response(status: 403, text: "the path leads out of the assets folder")
        }
        // Non-blocking, so opening a named pipe does not wait for a writer; the kind is checked on
        // the descriptor itself, so what is sent is what was checked.
        let descriptor = open(resolved, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            return errno == ENOENT ? Self.response(status: 404, text: "no such file")
                                   : Self.response(status: 403, text: "cannot be opened")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return Self.response(status: 403, text: "not a regular file")
        }
        let length = Int(info.st_size)
        return Self.response(status: 200, contentType: Self.contentType(of: resolved), length: length,
                             body: .file(descriptor: descriptor, length: length))
    }

    private static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        case "json": return "application/json"
        case "md", "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }

    /// `/messages`: a page of a chat's history as JSON.
    private func messages(query: String) -> Response {
        var parameters: [String: String] = [:]
        for item in URLComponents(string: "/?" + query)?.queryItems ?? [] {
            parameters[item.name] = item.value ?? ""
        }
        guard let chatID = parameters["chat"].flatMap({ Int($0) }) else {
            return Self.response(status: 400, text: "chat=ID is required")
        }
        guard let chat = data.chats.first(where: { $0.id == chatID }) else {
            return Self.response(status: 404, text: "no chat \(chatID)")
        }
        var count = Self.defaultPageSize
        if let text = parameters["count"] {
            guard let value = Int(text), (1...Self.maximumPageSize).contains(value) else {
                return Self.response(status: 400, text: "count must be in 1...\(Self.maximumPageSize) (got \(text))")
            }
            count = value
        }
        var end = chat.messages.count
        if let text = parameters["before"] {
            guard let id = Int(text) else { return Self.response(status: 400, text: "before must be a message id (got \(text))") }
            guard let index = chat.messages.firstIndex(where: { $0.id == id }) else {
                return Self.response(status: 404, text: "chat \(chatID) has no message \(id)")
            }
            end = index
        }
        let start = max(0, end - count)
        let page = Array(chat.messages[start..<end])
        let inPage = Set(page.map(\.id))
        var quotedIDs: [Int] = []
        for id in page.compactMap(\.replyTo) where !inPage.contains(id) && !quotedIDs.contains(id) { quotedIDs.append(id) }
        let quoted = quotedIDs.compactMap { id in chat.messages.first { $0.id == id } }
        do {
            let json = Array(try JSONEncoder().encode(MessagesPage(chat: chatID, messages: page, quoted: quoted, remaining: start)))
            return Self.response(status: 200, contentType: "application/json", length: json.count, body: .bytes(json))
        } catch {
            return Self.response(status: 500, text: "the page could not be encoded: \(error)")
        }
    }
}
