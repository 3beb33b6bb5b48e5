import Compositor
import FoundationEssentials
import Dispatch
internal import CCurl
internal import CCurlLoader
#if canImport(Glibc)
import Glibc
#endif

/// The `ImageFetcher` image loaders use unless given another: libcurl, on one thread of its own.
///
/// Why libcurl (not FoundationNetworking's `URLSession`, not AsyncHTTPClient): see `docs/images.md`.
/// In short, libcurl is the client the system already has (Debian's, with OpenSSL, nghttp2, zlib,
/// brotli and zstd), it gives every limit the loader needs directly (a connect time-out of its own,
/// body bytes handed over as they arrive, a transfer stopped at once from the thread that runs it),
/// and it costs no build time.
///
/// - One thread (`tessera.network`) runs every fetch of this fetcher in one libcurl multi handle: one
///   pool of connections kept alive and reused, HTTP/2 (offered over TLS by ALPN; several fetches
///   to one host then share one connection), every address of a host tried in turn (IPv6 and IPv4
///   raced). The thread starts with the first fetch and ends 15 s after the last.
/// - HTTPS checks the server's certificate against the system's trust store
///   (`/etc/ssl/certs/ca-certificates.crt`, or the file `SSL_CERT_FILE` names, as OpenSSL's tools
///   read it), plus `additionalTrustedCertificates`.
/// - Redirects are followed (`maximumRedirects`, `http` and `https` only), bodies are decoded
///   (gzip, deflate, brotli, zstd: `Accept-Encoding` lists what libcurl decodes), proxies come from
///   the environment (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`, as curl reads them)
///   unless `proxy` is set.
/// - Limits, whatever the server sends: connecting within the request's `connectTimeout`, silence
///   once connected within `idleTimeout`, the whole attempt within `totalTimeout`, the decoded body
///   within `maximumBodyBytes` (an announced length over it is refused before the body is read),
///   and the status lines and headers of one attempt — interim `100 Continue` heads, redirects and
///   trailers included — within 64 KB. Memory for one fetch is its body plus libcurl's fixed buffers.
/// - Thread: any
public final class CurlImageFetcher: ImageFetcher {
    /// What every fetch of this fetcher shares.
    /// - Thread: any (a value)
    public struct Configuration: Sendable, Equatable {
        /// Certificate authorities trusted besides the system's, as PEM text (one or more
        /// `-----BEGIN CERTIFICATE-----` blocks each): a company's own CA, a test's.
        public var additionalTrustedCertificates: [String] = []
        /// The proxy for every fetch ("http://proxy.example:3128"; "" for none); nil: from the
        /// environment, as curl reads it.
        public var proxy: String?
        /// The most redirects followed in a row.
        public var maximumRedirects = 5

        /// Host names to resolve to given addresses, as curl's `--resolve` ("host:port:address[,address]").
        var resolve: [String] = []
        /// Seconds the fetcher's thread waits for another fetch after the last one before it ends.
        var threadLinger = 15.0

        /// The defaults.
        public init() {}
    }

    /// The longest status lines and headers one attempt may receive, interim heads and trailers
    /// included.
    public static let maximumHeaderBytes = 64 << 10

    /// What this fetcher was made with.
    public let configuration: Configuration
    private let engine: CurlEngine

    /// A fetcher with `configuration`. Nothing runs (and no descriptor is open) until the first fetch.
    /// - Thread: any
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        engine = CurlEngine(configuration: configuration)
    }

    /// Starts fetching `request.url` on the fetcher's thread. A URL that is not `http://` or
    /// `https://`, or has no host, fails at once, on this thread, with `NetworkImageError.unsupportedURL`.
    /// - Thread: any
    public func startFetch(_ request: ImageFetchRequest, delegate: any ImageFetchDelegate) -> any ImageFetchTask {
        let text = request.url.absoluteString
        let scheme = request.url.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            delegate.didFail(.unsupportedURL(text, reason: scheme.isEmpty ? "no scheme" : "the \(scheme):// scheme; Tessera fetches http:// and https://"))
            return CurlFetchTask(engine: nil, transfer: nil)
        }
        guard let host = request.url.host, !host.isEmpty else {
            delegate.didFail(.unsupportedURL(text, reason: "no host"))
            return CurlFetchTask(engine: nil, transfer: nil)
        }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            delegate.didFail(.unsupportedURL(text, reason: "white space or a control character in the URL"))
            return CurlFetchTask(engine: nil, transfer: nil)
        }
        let transfer = CurlTransfer(request: request, delegate: delegate)
        engine.add(transfer)
        return CurlFetchTask(engine: engine, transfer: transfer)
    }
}

/// A fetch of a `CurlImageFetcher`.
private struct CurlFetchTask: ImageFetchTask {
    let engine: CurlEngine?
    let transfer: CurlTransfer?

    func cancel() {
        guard let engine, let transfer else { return }
        engine.cancel(transfer)
    }
}

/// libcurl loaded and made ready for threads once per process, by the first fetcher thread that
/// needs it (an app that never fetches by URL maps none of it).
private enum CurlGlobal {
    /// Nil once libcurl is loaded and initialised; else why it cannot be (each fetch fails with it).
    static let failure: String? = {
        var reason: UnsafePointer<CChar>?
        guard tessera_curl_load(&reason) != 0 else {
            let text = reason.map { String(cString: $0) } ?? "libcurl could not be loaded"
            TesseraLog.images.error("\(text): images are not fetched by URL")
            return text
        }
        return tessera_curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK ? nil : "libcurl could not be initialised"
    }()
    /// `TESSERA_CURL_VERBOSE=1`: libcurl tells what each fetch does on standard error.
    static let verbose = ProcessInfo.processInfo.environment["TESSERA_CURL_VERBOSE"] == "1"
}

/// The fetcher's thread and what it is given to do.
private final class CurlEngine: @unchecked Sendable {
    private struct State {
        /// Transfers to start and to stop, in the order asked.
        var adding: [CurlTransfer] = []
        var removing: [CurlTransfer] = []
        /// The thread's multi handle while it runs (woken through it); nil with no thread.
        var multi: UnsafeMutableRawPointer?
        var threadRunning = false
    }

    let configuration: CurlImageFetcher.Configuration
    /// The trust store for `additionalTrustedCertificates`: the system's bundle and them, made once.
    private let trustBundle: [UInt8]?
    private let state = Locked(State())

    init(configuration: CurlImageFetcher.Configuration) {
        self.configuration = configuration
        let environmentStore = ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        if configuration.additionalTrustedCertificates.isEmpty && environmentStore == nil {
            trustBundle = nil
        } else {
            var bundle: [UInt8] = []
            let base = environmentStore ?? Self.systemTrustBundlePath
            if let system = Self.readTrustStore(base) {
                bundle += system
            } else {
                TesseraLog.images.warning("the trust store \(base) cannot be read; HTTPS trusts only the app's own authorities")
            }
            for certificate in configuration.additionalTrustedCertificates {
                bundle += Array("\n".utf8) + Array(certificate.utf8) + Array("\n".utf8)
            }
            trustBundle = bundle
        }
    }

    /// The PEM text of the trust store at `path`: a regular file of at most 16 MB, else nil.
    private static func readTrustStore(_ path: String) -> [UInt8]? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= 16 << 20,
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }

    /// Where libcurl was built to find the system's certificate authorities.
    static let systemTrustBundlePath: String = {
        if CurlGlobal.failure == nil, let info = tessera_curl_version_info(CURLVERSION_NINTH), info.pointee.age.rawValue >= CURLVERSION_NINTH.rawValue,
           let path = info.pointee.cainfo {
            return String(cString: path)
        }
        return "/etc/ssl/certs/ca-certificates.crt"
    }()

    func add(_ transfer: CurlTransfer) {
        let start = state.withLock { state -> Bool in
            state.adding.append(transfer)
            if let multi = state.multi { tessera_curl_multi_wakeup(multi) }
            guard !state.threadRunning else { return false }
            state.threadRunning = true
            return true
        }
        if start {
            PlatformThread.detach(name: "tessera.network", stackSize: 1 << 20) { [self] in run() }
        }
    }

    func cancel(_ transfer: CurlTransfer) {
        guard transfer.markCancelled() else { return }
        state.withLock { state in
            if let index = state.adding.firstIndex(where: { $0 === transfer }) {
                state.adding.remove(at: index)  // never started: nothing to stop
                return
            }
            // No thread: the transfer ended with the last one (nothing to stop, and nobody would
            // let go of it until the next fetch).
            guard state.threadRunning else { return }
            state.removing.append(transfer)
            if let multi = state.multi { tessera_curl_multi_wakeup(multi) }
        }
    }

    // MARK: The thread

    private func run() {
        // Loaded here, on the fetcher's thread, the first time: never on the thread that asked.
        let failure = CurlGlobal.failure
        guard failure == nil, let multi = tessera_curl_multi_init() else {
            let orphans = state.withLock { state -> [CurlTransfer] in
                defer { state.adding.removeAll(); state.threadRunning = false }
                return state.adding
            }
            for transfer in orphans { transfer.fail(.connectionFailed(reason: failure ?? "libcurl could not start")) }
            return
        }
        _ = tessera_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        state.withLock { $0.multi = multi }
        var running: [ObjectIdentifier: CurlTransfer] = [:]
        var idleSince = MonotonicTime.now
        while true {
            var (adding, removing, exits) = state.withLock { state -> ([CurlTransfer], [CurlTransfer], Bool) in
                let adding = state.adding, removing = state.removing
                state.adding.removeAll()
                state.removing.removeAll()
                if adding.isEmpty && removing.isEmpty && running.isEmpty && MonotonicTime.now - idleSince >= configuration.threadLinger {
                    state.multi = nil
                    state.threadRunning = false
                    return ([], [], true)
                }
                return (adding, removing, false)
            }
            if exits { break }
            for transfer in removing where running.removeValue(forKey: ObjectIdentifier(transfer)) != nil {
                transfer.detach(from: multi)
            }
            for transfer in adding {
                if let error = transfer.attach(to: multi, configuration: configuration, trustBundle: trustBundle) {
                    transfer.fail(error)
                } else {
                    running[ObjectIdentifier(transfer)] = transfer
                }
            }
            var stillRunning: Int32 = 0
            _ = tessera_curl_multi_perform(multi, &stillRunning)
            var left: Int32 = 0
            while let message = tessera_curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                guard let transfer = running.values.first(where: { $0.easy == easy }) else { continue }
                running[ObjectIdentifier(transfer)] = nil
                let outcome = transfer.outcome(code)
                transfer.detach(from: multi)
                switch outcome {
                case .finished: transfer.finish()
                case .failed(let error): transfer.fail(error)
                case .cancelled: break
                }
            }
            // The time limits the fetcher keeps itself: silence once connected, and the whole attempt.
            let now = MonotonicTime.now
            var nextDeadline = Double.infinity
            for (key, transfer) in running {
                if let (error, deadline) = transfer.overdue(now: now) {
                    if let error {
                        running[key] = nil
                        transfer.detach(from: multi)
                        transfer.fail(error)
                    } else {
                        nextDeadline = min(nextDeadline, deadline)
                    }
                }
            }
            if !running.isEmpty || !adding.isEmpty || !removing.isEmpty { idleSince = now }
            // Transfers stopped or started are let go of now, not when the thread next wakes (a cancelled
            // one holds its delegate, and through it the fetch and its loader).
            adding.removeAll()
            removing.removeAll()
            var curlTimeout = -1
            _ = tessera_curl_multi_timeout(multi, &curlTimeout)
            var wait = running.isEmpty ? max(0, configuration.threadLinger - (now - idleSince)) : nextDeadline - now
            if curlTimeout >= 0 { wait = min(wait, Double(curlTimeout) / 1000) }
            // When a host's first address times out and the next is tried, libcurl 7.88 does not
            // watch the new socket until it is driven again: while a transfer is connecting, it is
            // driven every 200 ms so the next address's connection is seen when it is made.
            if running.values.contains(where: { !$0.isConnected }) { wait = min(wait, 0.2) }
            let milliseconds = Int32(min(60_000, max(0, (wait * 1000).rounded(.up))))
            _ = tessera_curl_multi_poll(multi, nil, 0, milliseconds, nil)
        }
        tessera_curl_multi_cleanup(multi)
    }
}

/// One attempt's easy handle and what it has seen. Everything but `cancelled` is touched only on the
/// fetcher's thread.
private final class CurlTransfer: @unchecked Sendable {
    enum Outcome {
        case finished
        case failed(NetworkImageError)
        case cancelled
    }

    let request: ImageFetchRequest
    private let delegate: any ImageFetchDelegate
    private let cancelled = Locked(false)

    private(set) var easy: UnsafeMutableRawPointer?
    private var headers: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var started = 0.0
    private var lastActivity = 0.0
    private var connected = false
    private var headerBytes = 0
    private var bodyBytes = 0
    /// Set by a callback that stopped the transfer, for `outcome` to report.
    private var failure: NetworkImageError?
    /// The delegate has heard its last call.
    private var ended = false

    init(request: ImageFetchRequest, delegate: any ImageFetchDelegate) {
        self.request = request
        self.delegate = delegate
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        if let headers { tessera_curl_slist_free_all(headers) }
        errorBuffer.deallocate()
    }

    /// True the first time.
    func markCancelled() -> Bool {
        cancelled.withLock { state in
            defer { state = true }
            return !state
        }
    }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    // MARK: Delegate calls (the fetcher's thread)

    func finish() {
        guard !ended, !isCancelled else { return }
        ended = true
        delegate.didFinish()
    }

    func fail(_ error: NetworkImageError) {
        guard !ended, !isCancelled else { return }
        ended = true
        delegate.didFail(error)
    }

    // MARK: The easy handle

    /// Makes the easy handle and adds it to `multi`; an error when libcurl refuses.
    func attach(to multi: UnsafeMutableRawPointer, configuration: CurlImageFetcher.Configuration, trustBundle: [UInt8]?) -> NetworkImageError? {
        guard let easy = tessera_curl_easy_init() else { return .connectionFailed(reason: "libcurl could not make a transfer") }
        self.easy = easy
        maximumRedirects = configuration.maximumRedirects
        let me = Unmanaged.passUnretained(self).toOpaque()
        var status = CURLE_OK
        func set(_ option: CURLoption, _ value: Int) {
            if status == CURLE_OK { status = tessera_curl_easy_setopt_long(easy, option, value) }
        }
        func set(_ option: CURLoption, _ value: String) {
            if status == CURLE_OK { status = tessera_curl_easy_setopt_string(easy, option, value) }  // libcurl copies strings
        }
        set(CURLOPT_URL, request.url.absoluteString)
        set(CURLOPT_NOSIGNAL, 1)
        if CurlGlobal.verbose { set(CURLOPT_VERBOSE, 1) }
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 1)
        set(CURLOPT_MAXREDIRS, configuration.maximumRedirects)
        set(CURLOPT_ACCEPT_ENCODING, "")
        set(CURLOPT_USERAGENT, request.userAgent)
        set(CURLOPT_FAILONERROR, 1)
        set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        // Over TLS a connection says at its handshake whether it multiplexes (ALPN): a second fetch to
        // the host waits that long to share it. Plain HTTP/1.1 says nothing until a response ends.
        if request.url.scheme?.lowercased() == "https" { set(CURLOPT_PIPEWAIT, 1) }
        set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout))
        if status == CURLE_OK {
            status = tessera_curl_easy_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, request.maximumBodyBytes)))
        }
        if let proxy = configuration.proxy { set(CURLOPT_PROXY, proxy) }
        if status == CURLE_OK, let trustBundle {
            status = trustBundle.withUnsafeBytes { bytes in
                var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: bytes.baseAddress), len: bytes.count,
                                     flags: UInt32(CURL_BLOB_COPY))
                return tessera_curl_easy_setopt_blob(easy, CURLOPT_CAINFO_BLOB, &blob)
            }
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key })
        where !name.isEmpty && !(name + value).utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            list = tessera_curl_slist_append(list, "\(name): \(value)")
        }
        headers = list
        if status == CURLE_OK, let list { status = tessera_curl_easy_setopt_list(easy, CURLOPT_HTTPHEADER, list) }
        if status == CURLE_OK, !configuration.resolve.isEmpty {
            var resolve: UnsafeMutablePointer<curl_slist>?
            for entry in configuration.resolve { resolve = tessera_curl_slist_append(resolve, entry) }
            status = tessera_curl_easy_setopt_list(easy, CURLOPT_RESOLVE, resolve)
            resolveList = resolve
        }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, curlWriteBody) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_prereq_function(easy, curlConnected) }
        if status == CURLE_OK { status = tessera_curl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, me) }
        guard status == CURLE_OK else {
            let reason = String(cString: tessera_curl_easy_strerror(status))
            releaseHandle()
            return .unsupportedURL(request.url.absoluteString, reason: reason)
        }
        started = MonotonicTime.now
        lastActivity = started
        guard tessera_curl_multi_add_handle(multi, easy) == CURLM_OK else {
            releaseHandle()
            return .connectionFailed(reason: "libcurl could not start the transfer")
        }
        return nil
    }

    private var resolveList: UnsafeMutablePointer<curl_slist>?
    private var maximumRedirects = 0

    /// Takes the handle out of `multi` (closing its connection if the transfer was under way) and frees it.
    func detach(from multi: UnsafeMutableRawPointer) {
        guard let easy else { return }
        tessera_curl_multi_remove_handle(multi, easy)
        releaseHandle()
    }

    private func releaseHandle() {
        if let easy { tessera_curl_easy_cleanup(easy) }
        easy = nil
        if let headers { tessera_curl_slist_free_all(headers) }
        headers = nil
        if let resolveList { tessera_curl_slist_free_all(resolveList) }
        resolveList = nil
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return seconds > 0 ? Int(Int32.max) : 1 }
        return Int(min(Double(Int32.max), max(1, (seconds * 1000).rounded(.up))))
    }

    /// A time limit that ran out (with its error), or the time the next one runs out (error nil);
    /// nil when none applies.
    func overdue(now: Double) -> (NetworkImageError?, Double)? {
        let total = request.totalTimeout.isFinite ? started + max(0, request.totalTimeout) : Double.infinity
        if now >= total { return (.timedOut(.total, seconds: request.totalTimeout), total) }
        var deadline = total
        if connected && request.idleTimeout.isFinite {
            let idle = lastActivity + max(0, request.idleTimeout)
            if now >= idle { return (.timedOut(.idle, seconds: request.idleTimeout), idle) }
            deadline = min(deadline, idle)
        }
        return deadline.isFinite ? (nil, deadline) : nil
    }

    // MARK: Callbacks (the fetcher's thread, inside curl_multi_perform)

    /// The connection for the current request is made (read on the fetcher's thread).
    var isConnected: Bool { connected }

    fileprivate func connectionMade() {
        connected = true
        lastActivity = MonotonicTime.now
    }

    fileprivate func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        headerBytes += count
        lastActivity = MonotonicTime.now
        guard headerBytes <= CurlImageFetcher.maximumHeaderBytes else {
            failure = .malformedResponse(reason: "status lines and headers longer than \(CurlImageFetcher.maximumHeaderBytes) bytes")
            return 0
        }
        if let data, count > 0 {
            let line = UnsafeRawBufferPointer(start: data, count: count)
            if line.starts(with: "HTTP/".utf8) {
                headSaysLocation = false
            } else if line.count >= 9, line.prefix(9).map({ $0 | 0x20 }).elementsEqual("location:".utf8) {
                headSaysLocation = true
            } else if line.first == 0x0D || line.first == 0x0A, headSaysLocation, let easy {
                // The end of a redirect's head: the redirect is followed on a connection made (or taken
                // from the pool) anew, timed by the connect limit until it is (`connectionMade`).
                var status = 0
                _ = tessera_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                if (300...399).contains(status) { connected = false }
            }
        }
        return count
    }

    /// The head being received has a Location header.
    private var headSaysLocation = false

    fileprivate func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard !isCancelled, let easy else { return 0 }
        lastActivity = MonotonicTime.now
        if bodyBytes == 0 {
            var status = 0
            _ = tessera_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            guard (200...299).contains(status) else {
                failure = .httpStatus(status)
                return 0
            }
        }
        guard count <= request.maximumBodyBytes - bodyBytes else {
            failure = .tooLarge(limit: request.maximumBodyBytes)
            return 0
        }
        bodyBytes += count
        if count > 0, !ended { delegate.didReceive(UnsafeRawBufferPointer(start: data, count: count)) }
        return count
    }

    // MARK: How it ended

    func outcome(_ code: CURLcode) -> Outcome {
        if isCancelled { return .cancelled }
        if let failure { return .failed(failure) }
        guard let easy else { return .failed(.connectionFailed(reason: "no transfer")) }
        var status = 0
        _ = tessera_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var osError = 0
        _ = tessera_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osError)
        let message = String(cString: errorBuffer)
        let reason = message.isEmpty ? String(cString: tessera_curl_easy_strerror(code)) : message
        switch code {
        case CURLE_OK:
            return (200...299).contains(status) ? .finished : .failed(.httpStatus(status))
        case CURLE_HTTP_RETURNED_ERROR:
            return .failed(.httpStatus(status))
        case CURLE_COULDNT_RESOLVE_HOST:
            return .failed(.hostNotFound(request.url.host ?? ""))
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .failed(.connectionFailed(reason: "the proxy's name does not resolve (\(reason))"))
        case CURLE_COULDNT_CONNECT:
            return .failed(.connectionFailed(reason: osError != 0 ? String(cString: strerror(Int32(osError))) : reason))
        case CURLE_OPERATION_TIMEDOUT:
            return .failed(.timedOut(.connect, seconds: request.connectTimeout))
        case CURLE_PARTIAL_FILE:
            var length: curl_off_t = -1
            _ = tessera_curl_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            return .failed(.truncatedBody(received: bodyBytes, expected: length >= 0 ? Int(length) : nil))
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            if osError == Int(ECONNRESET) || osError == Int(EPIPE) { return .failed(.connectionReset(received: bodyBytes)) }
            if bodyBytes > 0 { return .failed(.truncatedBody(received: bodyBytes, expected: nil)) }
            return .failed(.connectionFailed(reason: reason))
        case CURLE_GOT_NOTHING:
            return .failed(.connectionReset(received: 0))
        case CURLE_FILESIZE_EXCEEDED:
            return .failed(.tooLarge(limit: request.maximumBodyBytes))
        case CURLE_TOO_MANY_REDIRECTS:
            return .failed(.tooManyRedirects(limit: maximumRedirects))
        case CURLE_UNSUPPORTED_PROTOCOL where message.contains("HTTP/0.9"):
            return .failed(.malformedResponse(reason: "not an HTTP response"))
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .failed(.unsupportedURL(request.url.absoluteString, reason: reason))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED:
            return .failed(.tlsFailed(reason: reason))
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3,
             CURLE_RANGE_ERROR, CURLE_BAD_DOWNLOAD_RESUME:
            return .failed(.malformedResponse(reason: reason))
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK:
            // Only a callback of this fetcher stops a transfer this way, and each says why (a cancel
            // or `failure`, both handled above); should libcurl report it otherwise, the fetch still ends.
            return .failed(.connectionFailed(reason: reason))
        default:
            return .failed(.connectionFailed(reason: reason))
        }
    }

}

private func transfer(_ pointer: UnsafeMutableRawPointer?) -> CurlTransfer? {
    pointer.map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
}

private let curlWriteBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, user in
    transfer(user)?.receiveBody(data, size * count) ?? 0
}

private let curlWriteHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, user in
    transfer(user)?.receiveHeader(data, size * count) ?? 0
}

private let curlConnected: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = { user, _, _, _, _ in
    transfer(user)?.connectionMade()
    return 0
}
