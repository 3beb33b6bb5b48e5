import Foundation
import LoopbackServer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The gallery's asset server (`gallery --serve-assets`): a `LoopbackServer` on 127.0.0.1 (plain
/// HTTP/1.1 with keep-alive), at a port the system assigns, answering GET requests for
/// - `/<path>`: the file at `path` under the assets folder, whole, with its Content-Length. A path
///   that would leave the folder (a `..` component, a symbolic link pointing out of it) and anything
///   but a regular file (a folder, a pipe, a device) are refused with 403; a missing file is 404.
/// - `/messages?chat=ID&before=MESSAGE_ID&count=N`: up to N messages of chat ID just older than its
///   message MESSAGE_ID (the newest N without `before`; N is 30 unless given, at most 500), as JSON
///   (`MessagesPage`). A missing or malformed parameter is 400, an unknown chat or message 404.
///
/// LoopbackServer's rules hold: at most `maximumConnections` at once (a new one closes the
/// connection idle the longest, or is answered 503 when none is idle); a request head longer than
/// `maximumHeadBytes` is answered 431. A client that sends its request, or takes its answer, at
/// less than `minimumBytesPerSecond` averaged over a window of `clientTimeout` seconds (one that
/// sends nothing, or stops reading, included) is dropped at the end of the window in which it fell
/// short (a reader reset, so what is queued for it goes at once); for a reader that stops, what the sockets' buffers took counts in its first window, so it
/// goes within about two windows. A connection idle between requests is closed after `idleTimeout`
/// (at most `clientTimeout`). A client that goes away mid-answer ends only its own connection. The
/// server runs until `stop()` (or its release).
/// - Thread: any
final class AssetServer: Sendable {
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

    /// Connections served at once.
    static let maximumConnections = 32
    /// The longest request head read, in bytes.
    static let maximumHeadBytes = 16 << 10
    /// The slowest a client may send its request or take its answer, averaged over `clientTimeout`.
    static let minimumBytesPerSecond = 1024.0
    /// Seconds a connection may wait between requests (at most `clientTimeout`).
    static let idleTimeout = 5.0
    /// Messages in a page when the request does not say, and the most one may ask for.
    static let defaultPageSize = 30, maximumPageSize = 500
    /// Requests kept in `requests`, the most recent.
    static let requestLogLimit = 256

    /// The port it listens on.
    var port: Int { server.port }
    /// `http://127.0.0.1:PORT/`.
    var baseURL: URL { server.baseURL }
    /// The window, in seconds, over which a client's rate is measured.
    let clientTimeout: Double
    /// The server underneath, for its statistics.
    let server: LoopbackServer
    private let answers: Answers

    /// Starts serving `folder` (the gallery's `Assets`) and the messages of `data` on a port the
    /// system assigns; over HTTPS (and HTTP/2) with `tls`.
    /// - Throws: `StartError` when the folder cannot be resolved or no socket can listen.
    init(folder: URL, data: ChatData, clientTimeout: Double = 10, tls: LoopbackServer.TLSIdentity? = nil) throws {
        guard let resolved = realpath(folder.path, nil) else {
            throw StartError(description: "gallery: cannot serve \(folder.path): \(String(cString: strerror(errno)))")
        }
        let root = String(cString: resolved)
        free(resolved)
        self.clientTimeout = clientTimeout
        let answers = Answers(root: root, data: data)
        self.answers = answers
        var configuration = LoopbackServer.Configuration()
        configuration.maximumConnections = Self.maximumConnections
        configuration.maximumHeadBytes = Self.maximumHeadBytes
        configuration.minimumBytesPerSecond = Self.minimumBytesPerSecond
        configuration.rateWindow = clientTimeout
        configuration.idleTimeout = min(Self.idleTimeout, clientTimeout)
        configuration.tls = tls
        do {
            server = try LoopbackServer(configuration: configuration) { request in answers.answer(request) }
        } catch {
            throw StartError(description: "gallery: the asset server cannot listen on 127.0.0.1 (\(error))")
        }
    }

    /// The requests answered, oldest first (the most recent `requestLogLimit`).
    var requests: [Request] { answers.log.withLock { $0 } }

    /// Connections being served now.
    var openConnections: Int { server.statistics.openConnections }

    /// Waits until no connection is being served (false after `timeout` seconds).
    func waitUntilNoConnections(timeout: Double) -> Bool {
        server.waitForStatistics(timeout: timeout) { $0.openConnections == 0 }
    }

    /// Stops listening, ends every connection, and returns once the server's threads have ended.
    /// Later connections are refused by the system.
    func stop() { server.stop() }
}

/// What the asset server answers: its handler, and the log of what it answered.
/// - Thread: any (the handler runs on the server's connection threads)
private final class Answers: Sendable {
    /// The assets folder with its symbolic links resolved: every file served resolves to a path
    /// under it.
    let root: String
    let data: ChatData
    /// The requests answered, the most recent `requestLogLimit`.
    let log = Mutex<[AssetServer.Request]>([])

    init(root: String, data: ChatData) {
        self.root = root
        self.data = data
    }

    func answer(_ request: LoopbackServer.Request) -> LoopbackServer.Response {
        let response = respond(method: request.method, target: request.path)
        log.withLock { requests in
            requests.append(AssetServer.Request(method: request.method, target: request.path, status: response.status))
            if requests.count > AssetServer.requestLogLimit { requests.removeFirst(requests.count - AssetServer.requestLogLimit) }
        }
        return response
    }

    private func respond(method: String, target: String) -> LoopbackServer.Response {
        guard method == "GET" else {
            return .text("only GET is served", status: 405, headers: [LoopbackServer.Header("Allow", "GET")])
        }
        guard target.hasPrefix("/") else { return .text("the target is not a path", status: 400) }
        let path = target.prefix { $0 != "?" }
        if path == "/messages" {
            return messages(query: String(target.dropFirst(path.count + 1)))
        }
        return file(at: String(path))
    }

    /// The file at `path` (percent-encoded, from the request) under the folder.
    private func file(at path: String) -> LoopbackServer.Response {
        guard let decoded = path.removingPercentEncoding, !decoded.contains("\0") else {
            return .text("the path is not percent-encoded UTF-8", status: 400)
        }
        let components = decoded.split(separator: "/")
        if components.contains("..") {
            return .text("the path leaves the assets folder", status: 403)
        }
        let candidate = ([root] + components.map(String.init)).joined(separator: "/")
        guard let resolvedPointer = realpath(candidate, nil) else {
            return errno == EACCES ? .text("not readable", status: 403) : .text("no such file", status: 404)
        }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        guard resolved == root || resolved.hasPrefix(root + "/") else {
            return .text("the path leads out of the assets folder", status: 403)
        }
        // Non-blocking, so opening a named pipe does not wait for a writer; the kind is checked on
        // the descriptor itself, so what is sent is what was checked. The server closes it.
        let descriptor = open(resolved, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            return errno == ENOENT ? .text("no such file", status: 404) : .text("cannot be opened", status: 403)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return .text("not a regular file", status: 403)
        }
        return LoopbackServer.Response(status: 200, headers: [LoopbackServer.Header("Content-Type", Self.contentType(of: resolved))],
                                       body: .file(descriptor: descriptor, length: Int(info.st_size)))
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
    private func messages(query: String) -> LoopbackServer.Response {
        var parameters: [String: String] = [:]
        for item in URLComponents(string: "/?" + query)?.queryItems ?? [] {
            parameters[item.name] = item.value ?? ""
        }
        guard let chatID = parameters["chat"].flatMap({ Int($0) }) else {
            return .text("chat=ID is required", status: 400)
        }
        guard let chat = data.chats.first(where: { $0.id == chatID }) else {
            return .text("no chat \(chatID)", status: 404)
        }
        var count = AssetServer.defaultPageSize
        if let text = parameters["count"] {
            guard let value = Int(text), (1...AssetServer.maximumPageSize).contains(value) else {
                return .text("count must be in 1...\(AssetServer.maximumPageSize) (got \(text))", status: 400)
            }
            count = value
        }
        var end = chat.messages.count
        if let text = parameters["before"] {
            guard let id = Int(text) else { return .text("before must be a message id (got \(text))", status: 400) }
            guard let index = chat.messages.firstIndex(where: { $0.id == id }) else {
                return .text("chat \(chatID) has no message \(id)", status: 404)
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
            let json = Array(try JSONEncoder().encode(AssetServer.MessagesPage(chat: chatID, messages: page, quoted: quoted, remaining: start)))
            return LoopbackServer.Response(status: 200, headers: [LoopbackServer.Header("Content-Type", "application/json")], body: json)
        } catch {
            return .text("the page could not be encoded: \(error)", status: 500)
        }
    }
}
