import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.x request head, parsed.
struct RequestHead {
    var method: String
    var target: String
    var version: String
    var headers: [LoopbackServer.Header]

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the `Connection` header lists `token`.
    func connectionHas(_ token: String) -> Bool {
        headers.contains { header in
            header.name.caseInsensitiveCompare("Connection") == .orderedSame
                && header.value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(token) == .orderedSame }
        }
    }
}

/// The small HTTP/1.1 request parser: the request line and header fields, up to a blank line.
enum HTTP1Parser {
    enum Result {
        case needMore
        case complete(RequestHead, consumed: Int)
        /// No blank line within `limit` bytes (431).
        case tooLarge
        case malformed(status: Int, reason: String)
    }

    static func parse(_ bytes: [UInt8], limit: Int) -> Result {
        // Empty lines before a request line are allowed (RFC 9112 §2.2).
        var start = 0
        while start + 1 < bytes.count && bytes[start] == 13 && bytes[start + 1] == 10 { start += 2 }
        guard let end = bytes[start...].firstRange(of: [13, 10, 13, 10] as [UInt8]) else {
            return bytes.count - start > limit ? .tooLarge : .needMore
        }
        guard end.lowerBound - start <= limit else { return .tooLarge }
        let text = String(decoding: bytes[start..<end.lowerBound], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].allSatisfy({ $0.isLetter || $0 == "-" }) else {
            return .malformed(status: 400, reason: "not an HTTP/1.x request line")
        }
        let version = String(parts[2])
        guard version.hasPrefix("HTTP/") else { return .malformed(status: 400, reason: "not an HTTP/1.x request line") }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .malformed(status: 505, reason: "\(version) is not served here")
        }
        var headers: [LoopbackServer.Header] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                return .malformed(status: 400, reason: "a header line without a name")
            }
            let name = line[..<colon]
            guard !name.contains(where: { $0 == " " || $0 == "\t" }), line.first != " ", line.first != "\t" else {
                return .malformed(status: 400, reason: "white space in a header name (or a folded line)")
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append(LoopbackServer.Header(String(name), value))
        }
        return .complete(RequestHead(method: String(parts[0]), target: String(parts[1]), version: version, headers: headers),
                         consumed: end.upperBound)
    }

    /// The head of `response` for HTTP/1.1.
    static func head(of response: LoopbackServer.Response, keepAlive: Bool, bodyLength: Int, sendsLength: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(LoopbackServer.reasonPhrase(response.status))\r\n"
        for header in response.headers where !LoopbackServer.isFramingHeader(header.name) {
            head += "\(header.name): \(header.value)\r\n"
        }
        if sendsLength { head += "Content-Length: \(bodyLength)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8)
    }
}

extension Channel {
    /// Serves HTTP/1.1 requests one after another until either side closes, a request asks to, a
    /// script runs, the connection is shed, or the server stops.
    func serveHTTP1() {
        var first = true
        while true {
            if !first {
                if input.isEmpty {
                    let now = MonotonicTime.now()
                    core.setIdle(id, since: now)
                    let outcome = readSome(idleDeadline: now + configuration.idleTimeout)
                    core.setIdle(id, since: nil)
                    switch outcome {
                    case .moved: break
                    case .idleExpired:
                        shed(.idle)
                        transport.finish()
                        return
                    default: return
                    }
                }
                meter.restart()
            }
            first = false
            guard let head = readHead() else { return }
            guard let body = readBody(of: head) else { return }
            if case .proxy = core.role {
                serveProxy(head, body: body)
                return
            }
            guard case .handler(let handler) = core.role else { return }
            let request = LoopbackServer.Request(method: head.method, path: head.target, headers: head.headers,
                                                 version: head.version, body: body)
            let response = handler(request)
            core.record { $0.requestsByVersion[head.version, default: 0] += 1 }
            if let script = response.script {
                runScript(script)
                return
            }
            let keepAlive = !head.connectionHas("close") && (head.version == "HTTP/1.1" || head.connectionHas("keep-alive"))
                && !response.headers.contains { $0.name.caseInsensitiveCompare("Connection") == .orderedSame && $0.value.lowercased().contains("close") }
                && !core.isStopping
            guard send(response, keepAlive: keepAlive, isHead: head.method == "HEAD") else { return }
            if !keepAlive {
                transport.finish()
                return
            }
        }
    }

    /// Reads the request head (the meter running), answering a malformed or too long one itself;
    /// nil when the connection ends.
    private func readHead() -> RequestHead? {
        while true {
            switch HTTP1Parser.parse(input, limit: configuration.maximumHeadBytes) {
            case .complete(let head, let consumed):
                input.removeFirst(consumed)
                return head
            case .tooLarge:
                core.record { $0.headsTooLarge += 1 }
                answerAndClose(.text("the request head is longer than \(configuration.maximumHeadBytes) bytes", status: 431))
                return nil
            case .malformed(let status, let reason):
                answerAndClose(.text(reason, status: status))
                return nil
            case .needMore:
                switch readSome() {
                case .moved: continue
                case .tooSlow:
                    shed(.slowRequest)
                    return nil
                default: return nil
                }
            }
        }
    }

    /// Reads the body a Content-Length announces (none without one); nil when the connection ends.
    private func readBody(of head: RequestHead) -> [UInt8]? {
        if head.header("Transfer-Encoding") != nil {
            answerAndClose(.text("chunked request bodies are not accepted; send a Content-Length", status: 501))
            return nil
        }
        let lengths = Set(head.headers.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }.map(\.value))
        guard lengths.count <= 1 else {
            answerAndClose(.text("conflicting Content-Length headers", status: 400))
            return nil
        }
        guard let text = lengths.first else { return [] }
        guard let length = Int(text), length >= 0 else {
            answerAndClose(.text("Content-Length is not a number", status: 400))
            return nil
        }
        guard length <= configuration.maximumBodyBytes else {
            answerAndClose(.text("the body is longer than \(configuration.maximumBodyBytes) bytes", status: 413))
            return nil
        }
        if length > input.count, head.header("Expect")?.lowercased() == "100-continue" {
            guard writeAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) == .moved else { return nil }
        }
        while input.count < length {
            switch readSome() {
            case .moved: continue
            case .tooSlow:
                shed(.slowRequest)
                return nil
            default: return nil
            }
        }
        let body = Array(input.prefix(length))
        input.removeFirst(length)
        return body
    }

    /// Sends `response`; false when the connection ended on the way.
    private func send(_ response: LoopbackServer.Response, keepAlive: Bool, isHead: Bool) -> Bool {
        defer { response.discard() }
        let status = response.status
        let hasBody = !(100..<200).contains(status) && status != 204 && status != 304
        let length = hasBody ? response.body.count : 0
        meter.restart()
        var outcome = writeAll(HTTP1Parser.head(of: response, keepAlive: keepAlive, bodyLength: length, sendsLength: hasBody))
        if outcome == .moved && hasBody && !isHead {
            switch response.body {
            case .bytes(let bytes): outcome = writeAll(bytes)
            case .file(let descriptor, let length): outcome = writeFile(descriptor, length: length)
            }
        }
        switch outcome {
        case .moved: return true
        case .tooSlow: shed(.slowReader)
        case .clientClosed, .clientFailed: core.record { $0.clientsGoneMidResponse += 1 }
        case .stopped, .idleExpired: break
        }
        return false
    }

    /// Answers an error and closes the connection (lingering, so the answer is read).
    func answerAndClose(_ response: LoopbackServer.Response) {
        var response = response
        response.headers.append(LoopbackServer.Header("Connection", "close"))
        guard send(response, keepAlive: false, isHead: false) else { return }
        lingeringClose()
    }

    // MARK: Scripts

    /// Runs a script in place of a response; the connection ends with it.
    private func runScript(_ script: LoopbackServer.Script) {
        func clientLeft() { script.whenClientLeaves?() }
        for step in script.steps {
            switch step {
            case .send(let bytes):
                meter.restart()
                switch writeAll(bytes) {
                case .moved: continue
                case .clientClosed, .clientFailed: return clientLeft()
                case .tooSlow:
                    shed(.slowReader)
                    return
                case .stopped, .idleExpired: return
                }
            case .wait(let gate):
                gate.arrive()
                switch waitWatchingClient(gate: gate.pipe) {
                case .moved: continue
                case .clientClosed, .clientFailed: return clientLeft()
                default: return
                }
            case .close:
                transport.finish()
                return
            case .reset:
                abortOnClose()
                return
            case .stall:
                switch waitWatchingClient(gate: nil) {
                case .clientClosed, .clientFailed: clientLeft()
                default: break
                }
                return
            case .endless(let chunk):
                precondition(!chunk.isEmpty, "an endless step sends a chunk that is not empty")
                meter.restart()
                let deadline = MonotonicTime.now() + configuration.scriptWaitLimit
                while MonotonicTime.now() < deadline && !core.isStopping {
                    switch writeAll(chunk) {
                    case .moved: continue
                    case .clientClosed, .clientFailed: return clientLeft()
                    case .tooSlow:
                        shed(.slowReader)
                        return
                    case .stopped, .idleExpired: return
                    }
                }
                return
            }
        }
        transport.finish()
    }
}
