import FoundationEssentials
import Glibc
import Dispatch

/// Why an image could not be fetched over the network. An image node that fails with one shows its
/// error placeholder and reports `ImageError.network(url, error)` in its `loadState` (and once in its
/// `diagnostics`).
///
/// Errors that may pass on their own (`isTransient`: connection refused or reset, a time-out, a 5xx
/// status, a body cut short) are retried with back-off (`NetworkImageLoader.RetryPolicy`) before they
/// are reported; the others are reported at once.
/// - Thread: any (a value)
public enum NetworkImageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which time limit ran out.
    /// - Thread: any (a value)
    public enum Timeout: String, Sendable, Equatable {
        /// No connection within `connectTimeout`.
        case connect
        /// No byte for `idleTimeout` while waiting for the response or its body.
        case idle
        /// The whole fetch took longer than `totalTimeout` (a body trickling in too slowly).
        case total
    }

    /// The URL cannot be fetched: not `http://` or `https://` (a redirect's target included), or
    /// without a host. Never retried.
    case unsupportedURL(String, reason: String)
    /// The host name does not resolve. Never retried.
    case hostNotFound(String)
    /// The connection could not be made (refused, unreachable, a proxy that failed): transient.
    case connectionFailed(reason: String)
    /// The connection was reset (TCP RST) after `received` body bytes: transient.
    case connectionReset(received: Int)
    /// A time limit ran out (`seconds` is the limit): transient.
    case timedOut(Timeout, seconds: Double)
    /// The server answered with a status other than 2xx (or a redirect it follows). 5xx is transient;
    /// 4xx (404 and the rest) is not.
    case httpStatus(Int)
    /// The connection closed after `received` body bytes, before the `expected` bytes its
    /// Content-Length announced (nil: a chunked body that ended without its last chunk): transient.
    case truncatedBody(received: Int, expected: Int?)
    /// The TLS handshake failed: a certificate not trusted (see
    /// `NetworkImageLoader.Configuration.additionalTrustedCertificates`), expired or for another
    /// name, or no protocol or cipher in common. Never retried.
    case tlsFailed(reason: String)
    /// The body is longer than `limit` bytes (`NetworkImageLoader.Configuration.maximumBodyBytes`),
    /// as announced or as it streamed in: reading stopped at the limit. Never retried.
    case tooLarge(limit: Int)
    /// The response is not HTTP as Tessera reads it (no status line, status lines and headers over
    /// 64 KB, interim heads and trailers included, a bad chunk, a content coding it cannot decode, an
    /// HTTP/2 protocol error). Never retried.
    case malformedResponse(reason: String)
    /// More than `limit` redirects in a row. Never retried.
    case tooManyRedirects(limit: Int)

    /// Whether the error may pass on its own, so that trying again may succeed.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .connectionReset, .timedOut, .truncatedBody: return true
        case .httpStatus(let status): return (500...599).contains(status)
        case .unsupportedURL, .hostNotFound, .tlsFailed, .tooLarge, .malformedResponse, .tooManyRedirects:
            return false
        }
    }

    public var description: String {
        switch self {
        case let .unsupportedURL(url, reason): return "cannot fetch \(url): \(reason)"
        case .hostNotFound(let host): return "host \(host) not found"
        case .connectionFailed(let reason): return "cannot connect (\(reason))"
        case .connectionReset(let received): return "connection reset after \(received) body bytes"
        case let .timedOut(which, seconds):
            switch which {
            case .connect: return "no connection within \(seconds) s"
            case .idle: return "no data for \(seconds) s"
            case .total: return "not finished within \(seconds) s"
            }
        case .httpStatus(let status): return "HTTP status \(status)"
        case let .truncatedBody(received, expected):
            if let expected { return "body cut short: \(received) of \(expected) bytes" }
            return "body cut short after \(received) bytes (no last chunk)"
        case .tlsFailed(let reason): return "TLS failed (\(reason))"
        case .tooLarge(let limit): return "body over the \(limit)-byte limit"
        case .malformedResponse(let reason): return "malformed response (\(reason))"
        case .tooManyRedirects(let limit): return "more than \(limit) redirects"
        }
    }
}
