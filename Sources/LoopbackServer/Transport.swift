internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// What one read or write on a connection did.
enum TransferResult {
    case transferred(Int)
    /// Nothing could move now: wait for the socket to be readable (`wantsWrite` false) or writable.
    case wouldBlock(wantsWrite: Bool)
    /// The peer closed (an orderly end of the stream).
    case closed
    /// The connection failed (reset, a TLS error).
    case failed
}

/// The bytes of one connection, over a non-blocking socket: plain TCP, or TLS whose records
/// OpenSSL makes in memory and this type moves (with `MSG_NOSIGNAL`, so a peer that went away never
/// raises SIGPIPE).
/// - Thread: the connection's thread only
protocol Transport: AnyObject {
    var descriptor: Int32 { get }
    /// Reads what has arrived, up to the buffer's size.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TransferResult
    /// Takes as many of `bytes` as it can now.
    func send(_ bytes: UnsafeRawBufferPointer) -> TransferResult
    /// Pushes bytes it accepted but could not yet put on the socket; `.wouldBlock(wantsWrite: true)`
    /// while some remain.
    func flush() -> TransferResult
    /// Bytes accepted but not yet on the socket.
    var hasPendingOutput: Bool { get }
    /// Bytes already read from the socket but not yet returned by `receive` (TLS records).
    var hasBufferedInput: Bool { get }
    /// Ends the stream in order: a close_notify on TLS (sent best effort), then FIN.
    func finish()
}

final class PlainTransport: Transport {
    let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TransferResult {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { return .transferred(count) }
            if count == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantsWrite: false)
            default: return .failed
            }
        }
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> TransferResult {
        while true {
            let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if count >= 0 { return .transferred(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantsWrite: true)
            default: return .failed
            }
        }
    }

    func flush() -> TransferResult { .transferred(0) }
    var hasPendingOutput: Bool { false }
    var hasBufferedInput: Bool { false }
    func finish() { shutdown(descriptor, Int32(SHUT_WR)) }
}

/// An OpenSSL server context made from a `TLSIdentity`: TLS 1.2 or later, ALPN choosing "h2" (when
/// allowed) or "http/1.1".
/// - Thread: any (immutable once made; OpenSSL makes connections from it on any thread)
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    init(identity: LoopbackServer.TLSIdentity, allowsHTTP2: Bool) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSCertificates.failure("SSL_CTX_new") }
        self.context = context
        guard tessera_ssl_ctx_configure(context) == 1 else { throw TLSCertificates.failure("configuring TLS") }
        let (certificate, key) = try TLSCertificates.read(certificatePEM: identity.certificatePEM, keyPEM: identity.privateKeyPEM)
        defer {
            X509_free(certificate)
            EVP_PKEY_free(key)
        }
        guard SSL_CTX_use_certificate(context, certificate) == 1, SSL_CTX_use_PrivateKey(context, key) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            throw TLSCertificates.failure("using the identity (does the key match the certificate?)")
        }
        tessera_ssl_ctx_select_alpn(context, allowsHTTP2 ? 1 : 0)
    }

    deinit { SSL_CTX_free(context) }
}

/// TLS over a non-blocking socket, through memory BIOs: OpenSSL reads records from `incoming` and
/// writes them to `outgoing`; this type fills the one from the socket and drains the other to it.
final class TLSTransport: Transport {
    let descriptor: Int32
    private let ssl: OpaquePointer
    private let incoming: OpaquePointer  // owned by ssl
    private let outgoing: OpaquePointer  // owned by ssl
    /// Encrypted bytes taken from `outgoing` that the socket has not taken yet.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var scratch = [UInt8](repeating: 0, count: 32 << 10)
    private var socketClosed = false
    /// The last read returned bytes, so `incoming` may hold whole records OpenSSL has not read yet
    /// (one socket read can bring several); cleared once a read finds nothing.
    private var incomingMayHoldRecords = false

    init(context: TLSContext, descriptor: Int32) throws {
        self.descriptor = descriptor
        guard let ssl = SSL_new(context.context) else { throw TLSCertificates.failure("SSL_new") }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSCertificates.failure("BIO_new")
        }
        // A memory BIO that is empty asks to be retried rather than reporting the end of the stream.
        BIO_ctrl(incoming, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        BIO_ctrl(outgoing, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, incoming, outgoing)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
    }

    deinit { SSL_free(ssl) }

    /// The protocol ALPN agreed on ("h2", "http/1.1"), nil when none was.
    var negotiatedProtocol: String? {
        var name = [CChar](repeating: 0, count: 32)
        let length = tessera_ssl_alpn_selected(ssl, &name, Int32(name.count))
        guard length > 0 else { return nil }
        return String(decoding: name.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One step of the handshake: `.transferred(0)` once it is done.
    func handshake() -> TransferResult {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        let drained = drain()
        if result == 1 {
            if case .failed = drained { return .failed }
            return hasPendingOutput ? .wouldBlock(wantsWrite: true) : .transferred(0)
        }
        return retry(after: result, drained: drained) { self.handshake() }
    }

    var isHandshakeComplete: Bool { SSL_is_init_finished(ssl) == 1 }

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TransferResult {
        ERR_clear_error()
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        let drained = drain()
        if result == 1 {
            incomingMayHoldRecords = true
            return .transferred(count)
        }
        incomingMayHoldRecords = false
        return retry(after: result, drained: drained) { self.receive(into: buffer) }
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> TransferResult {
        // Records wait in memory only while the socket takes them: at most one write's worth.
        if hasPendingOutput {
            let flushed = flush()
            if case .failed = flushed { return .failed }
            if hasPendingOutput { return .wouldBlock(wantsWrite: true) }
        }
        guard !bytes.isEmpty else { return .transferred(0) }
        ERR_clear_error()
        var count = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, min(bytes.count, 64 << 10), &count)
        let drained = drain()
        if case .failed = drained { return .failed }
        if result == 1 { return .transferred(count) }
        return retry(after: result, drained: drained) { self.send(bytes) }
    }

    func flush() -> TransferResult {
        let drained = drain()
        if case .failed = drained { return .failed }
        return hasPendingOutput ? .wouldBlock(wantsWrite: true) : .transferred(0)
    }

    var hasPendingOutput: Bool { pendingStart < pending.count || BIO_ctrl_pending(outgoing) > 0 }

    /// Decrypted bytes waiting, or possibly whole records: a partial record in `incoming` alone is
    /// not input (the socket must bring the rest).
    var hasBufferedInput: Bool { SSL_pending(ssl) > 0 || (incomingMayHoldRecords && BIO_ctrl_pending(incoming) > 0) }

    func finish() {
        if isHandshakeComplete {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            _ = drain()
        }
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// After an OpenSSL call returned `result`: reads more from the socket and calls `again` when
    /// OpenSSL wants to read and the socket has bytes; otherwise says what to wait for.
    private func retry(after result: Int32, drained: TransferResult, again: () -> TransferResult) -> TransferResult {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            if case .failed = drained { return .failed }
            switch fill() {
            case .transferred: return again()
            case .closed: return .closed
            case .failed: return .failed
            case .wouldBlock: return .wouldBlock(wantsWrite: hasPendingOutput)
            }
        case SSL_ERROR_WANT_WRITE:
            return .wouldBlock(wantsWrite: true)
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            return socketClosed ? .closed : .failed
        }
    }

    /// Reads what the socket has into `incoming`.
    private func fill() -> TransferResult {
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                _ = scratch.withUnsafeBytes { BIO_write(incoming, $0.baseAddress, Int32(count)) }
                return .transferred(count)
            }
            if count == 0 {
                socketClosed = true
                return .closed
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(wantsWrite: false)
            default: return .failed
            }
        }
    }

    /// Moves `outgoing`'s records to `pending` and as much of `pending` as the socket takes onto it.
    private func drain() -> TransferResult {
        while BIO_ctrl_pending(outgoing) > 0 {
            let count = scratch.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            pending += scratch[..<Int(count)]
        }
        while pendingStart < pending.count {
            let count = pending.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + pendingStart, $0.count - pendingStart, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if count > 0 {
                pendingStart += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock(wantsWrite: true) }
            return .failed
        }
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        return .transferred(0)
    }
}
