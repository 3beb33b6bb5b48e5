import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension LoopbackServer {
    /// One header field, as sent (names keep their case on HTTP/1.1; HTTP/2 sends them lowercase).
    /// - Thread: any (a value)
    public struct Header: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A request as the handler gets it, whichever protocol carried it.
    /// - Thread: any (a value)
    public struct Request: Sendable {
        /// "GET", "HEAD", "POST", …
        public var method: String
        /// The request target: the path with its query ("/photos/a.jpg?size=2"), or on a proxy the
        /// absolute URL or the CONNECT authority.
        public var path: String
        /// The header fields in the order they came. On HTTP/2, the `:authority` pseudo-header is
        /// given as `host` (when the request has no `host` of its own); the other pseudo-headers are left out.
        public var headers: [Header]
        /// "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
        public var version: String
        /// The body (Content-Length bytes on HTTP/1.1; the DATA frames on HTTP/2).
        public var body: [UInt8]

        public init(method: String, path: String, headers: [Header] = [], version: String = "HTTP/1.1", body: [UInt8] = []) {
            self.method = method
            self.path = path
            self.headers = headers
            self.version = version
            self.body = body
        }

        /// The value of the first header named `name` (any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// `path` without its query.
        public var pathWithoutQuery: Substring { path.prefix { $0 != "?" } }

        /// The query after `?`, empty when there is none.
        public var query: Substring {
            guard let mark = path.firstIndex(of: "?") else { return "" }
            return path[path.index(after: mark)...]
        }
    }

    /// What a handler answers.
    ///
    /// The server writes the framing itself: Content-Length (HTTP/1.1, and `content-length` on
    /// HTTP/2) from the body, `Connection` from whether the connection stays open, and no
    /// Transfer-Encoding; a handler's own headers of those names are dropped. A `script` response
    /// sends raw bytes instead (HTTP/1.1 only).
    /// - Thread: any (a value)
    public struct Response: Sendable {
        /// Where a body's bytes come from.
        /// - Thread: any (a value)
        public enum Body: Sendable {
            case bytes([UInt8])
            /// `length` bytes read from the open file `descriptor`, from its start; the server closes
            /// the descriptor once the response is sent or dropped (a file that shrank meanwhile ends
            /// the body early and the connection with it).
            case file(descriptor: Int32, length: Int)

            /// How many bytes the body has.
            public var count: Int {
                switch self {
                case .bytes(let bytes): bytes.count
                case .file(_, let length): length
                }
            }
        }

        public var status: Int
        public var headers: [Header]
        public var body: Body
        /// Raw bytes and pauses sent in place of a response, for tests of hostile servers; the
        /// connection ends after it. Nil for an ordinary response.
        public var script: Script?

        public init(status: Int = 200, headers: [Header] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = .bytes(body)
        }

        public init(status: Int = 200, headers: [Header] = [], body: Body) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A short `text/plain` answer (an error's reason).
        public static func text(_ text: String, status: Int, headers: [Header] = []) -> Response {
            Response(status: status, headers: [Header("Content-Type", "text/plain; charset=utf-8")] + headers,
                     body: Array((text + "\n").utf8))
        }

        /// A script instead of a response (see `Script`).
        public static func script(_ steps: [Step], whenClientLeaves: (@Sendable () -> Void)? = nil) -> Response {
            var response = Response(status: 0)
            response.script = Script(steps: steps, whenClientLeaves: whenClientLeaves)
            return response
        }

        /// This response with its body gzip-compressed and `Content-Encoding: gzip` (a file body is
        /// read first, and its descriptor closed).
        /// - Thread: any
        public func gzipped(level: Int32 = 6) -> Response {
            var copy = self
            let plain: [UInt8]
            switch body {
            case .bytes(let bytes): plain = bytes
            case .file(let descriptor, let length):
                var bytes = [UInt8](repeating: 0, count: length)
                let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, 0) }
                close(descriptor)
                plain = Array(bytes.prefix(max(0, count)))
            }
            copy.body = .bytes(Gzip.compress(plain, level: level))
            copy.headers.removeAll { $0.name.caseInsensitiveCompare("Content-Encoding") == .orderedSame }
            copy.headers.append(Header("Content-Encoding", "gzip"))
            return copy
        }

        /// Closes the body's file, for a response that will not be sent.
        func discard() {
            if case .file(let descriptor, _) = body { close(descriptor) }
        }
    }

    /// The standard reason phrase of `status` ("Status" for one without).
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    /// Headers the server writes itself (framing and the connection's fate), dropped from a handler's.
    static func isFramingHeader(_ name: String) -> Bool {
        switch name.lowercased() {
        case "content-length", "connection", "transfer-encoding", "keep-alive", "proxy-connection", "upgrade": true
        default: false
        }
    }
}
