#if canImport(Glibc)
import Glibc
#endif

/// The rate a client must keep while the server waits on it: at least `minimum` bytes a second
/// over each window of `window` seconds, and at least one byte a window.
/// - Thread: the connection's thread only
struct RateMeter {
    let minimumBytesPerSecond: Double
    let window: Double
    private(set) var windowStart: Double
    private var bytes = 0

    init(minimumBytesPerSecond: Double, window: Double) {
        self.minimumBytesPerSecond = minimumBytesPerSecond
        self.window = window
        windowStart = MonotonicTime.now()
    }

    /// Starts measuring afresh (a new request, a new response: the time in between is not the client's).
    mutating func restart() {
        windowStart = MonotonicTime.now()
        bytes = 0
    }

    mutating func add(_ count: Int) { bytes += count }

    var windowEnd: Double { windowStart + window }

    /// At or after the window's end: whether the client moved too few bytes in it. A client fast
    /// enough starts a new window.
    mutating func windowEndedTooSlow(now: Double = MonotonicTime.now()) -> Bool {
        guard now >= windowEnd else { return false }
        let needed = max(1, minimumBytesPerSecond * (now - windowStart))
        if Double(bytes) < needed { return true }
        windowStart = now
        bytes = 0
        return false
    }
}

/// How a wait on the client ended.
enum Progress: Equatable {
    /// Bytes moved (or what was asked for is done).
    case moved
    /// The client closed the connection in order.
    case clientClosed
    /// The connection failed (reset, TLS error).
    case clientFailed
    /// The server is stopping (or the connection was shut to make room).
    case stopped
    /// The client moved fewer bytes than the rate asks in a window.
    case tooSlow
    /// The idle deadline passed with nothing from the client.
    case idleExpired
}

/// One connection on its own thread: the transport, what was read and not yet used, the rate meter,
/// and waits that watch the stop pipe beside the socket.
/// - Thread: the connection's thread only
final class Channel {
    let core: ServerCore
    let id: Int
    let descriptor: Int32
    var transport: any Transport
    /// Bytes read from the client and not yet consumed.
    var input: [UInt8] = []
    var meter: RateMeter
    private var scratch = [UInt8](repeating: 0, count: 32 << 10)

    var configuration: LoopbackServer.Configuration { core.configuration }

    init(core: ServerCore, id: Int, descriptor: Int32) {
        self.core = core
        self.id = id
        self.descriptor = descriptor
        transport = PlainTransport(descriptor: descriptor)
        meter = RateMeter(minimumBytesPerSecond: core.configuration.minimumBytesPerSecond,
                          window: core.configuration.rateWindow)
    }

    /// Serves the connection to its end: the TLS handshake when configured, then HTTP/2 or HTTP/1.1.
    func run() {
        if let context = core.tls {
            guard let tlsTransport = try? TLSTransport(context: context, descriptor: descriptor) else { return }
            transport = tlsTransport
            switch handshake(tlsTransport) {
            case .moved: break
            case .tooSlow:
                shed(.slowRequest)
                return
            case .clientClosed, .clientFailed:
                core.record { $0.tlsHandshakeFailures += 1 }
                return
            case .stopped, .idleExpired:
                return
            }
            if tlsTransport.negotiatedProtocol == "h2" {
                HTTP2Session(channel: self).run()
                return
            }
        }
        serveHTTP1()
    }

    private func handshake(_ tlsTransport: TLSTransport) -> Progress {
        while true {
            switch tlsTransport.handshake() {
            case .transferred:
                return .moved
            case .wouldBlock(let wantsWrite):
                let outcome = waitOnClient(read: !wantsWrite, write: wantsWrite)
                if outcome != .moved { return outcome }
            case .closed: return .clientClosed
            case .failed: return .clientFailed
            }
        }
    }

    /// Counts the connection as shed for `reason`. A slow reader is then reset rather than closed:
    /// the bytes still queued for it are dropped at once, not trickled out before the FIN.
    func shed(_ reason: LoopbackServer.ShedReason) {
        core.record { $0.shed[reason, default: 0] += 1 }
        if reason == .slowReader { abortOnClose() }
    }

    /// Makes the coming close a reset (RST: a zero linger time).
    func abortOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// `.stopped` when the server is stopping (a socket shut by the stop fails as a client gone
    /// would), else `progress`.
    func unlessStopping(_ progress: Progress) -> Progress { core.isStopping ? .stopped : progress }

    // MARK: Waiting

    struct Readiness {
        var readable = false
        var writable = false
        var gateOpened = false
        var otherReady = false
        var stopped = false
        var timedOut = false
    }

    /// Waits until the socket is readable (`read`) or writable (`write`, or whenever the transport
    /// holds bytes for it, which are then pushed), `gate` opens, `other` is ready for `otherEvents`,
    /// the server stops, or `deadline` (monotonic) passes.
    func wait(read: Bool, write: Bool, gate: WakePipe? = nil, other: Int32? = nil, otherEvents: Int16 = Int16(POLLIN),
              deadline: Double?) -> Readiness {
        var readiness = Readiness()
        if read && transport.hasBufferedInput {
            readiness.readable = true
            return readiness
        }
        let wantsWrite = write || transport.hasPendingOutput
        var events: Int16 = 0
        if read { events |= Int16(POLLIN) }
        if wantsWrite { events |= Int16(POLLOUT) }
        var entries = [pollfd(fd: descriptor, events: events, revents: 0),
                       pollfd(fd: core.stopPipe.readEnd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: gate?.readEnd ?? -1, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: other ?? -1, events: otherEvents, revents: 0)]
        let count = poll(&entries, nfds_t(entries.count), MonotonicTime.pollTimeout(until: deadline))
        if count < 0 { return readiness }  // EINTR: the caller looks again
        if count == 0 {
            readiness.timedOut = true
            return readiness
        }
        readiness.stopped = entries[1].revents != 0
        readiness.gateOpened = entries[2].revents != 0
        readiness.otherReady = entries[3].revents != 0
        let socketEvents = entries[0].revents
        let hangUp = socketEvents & Int16(POLLERR | POLLHUP) != 0
        readiness.readable = read && (socketEvents & Int16(POLLIN) != 0 || hangUp)
        readiness.writable = socketEvents & Int16(POLLOUT) != 0 || (wantsWrite && hangUp)
        if readiness.writable && transport.hasPendingOutput { _ = transport.flush() }
        return readiness
    }

    /// Waits for the socket while the server waits on the client, under the rate meter: `.moved`
    /// when it is ready, `.tooSlow` when a window ended with too few bytes, `.stopped` on a stop.
    func waitOnClient(read: Bool, write: Bool) -> Progress {
        while true {
            let readiness = wait(read: read, write: write, deadline: meter.windowEnd)
            if readiness.stopped { return .stopped }
            // Checked whatever woke the wait: a socket that is ready but moves nothing is no excuse.
            if MonotonicTime.now() >= meter.windowEnd && meter.windowEndedTooSlow() { return .tooSlow }
            if readiness.readable || readiness.writable { return .moved }
        }
    }

    // MARK: Reading and writing

    /// Reads what the client sent into `input` (at least a byte). Between requests, pass the idle
    /// deadline: nothing by then is `.idleExpired`; otherwise the rate meter bounds the wait.
    func readSome(idleDeadline: Double? = nil) -> Progress {
        while true {
            let result = scratch.withUnsafeMutableBytes { transport.receive(into: $0) }
            switch result {
            case .transferred(let count) where count > 0:
                input += scratch[..<count]
                meter.add(count)
                return .moved
            case .transferred, .wouldBlock:
                var wantsWrite = false
                if case .wouldBlock(let write) = result { wantsWrite = write }
                if let idleDeadline {
                    let readiness = wait(read: !wantsWrite, write: wantsWrite, deadline: idleDeadline)
                    if readiness.stopped { return .stopped }
                    if readiness.timedOut && MonotonicTime.now() >= idleDeadline { return .idleExpired }
                } else {
                    let outcome = waitOnClient(read: !wantsWrite, write: wantsWrite)
                    if outcome != .moved { return outcome }
                }
            case .closed:
                return unlessStopping(.clientClosed)
            case .failed:
                return unlessStopping(.clientFailed)
            }
        }
    }

    /// Sends every byte (and pushes what the transport holds), under the rate meter.
    func writeAll(_ bytes: UnsafeRawBufferPointer) -> Progress {
        var offset = 0
        while offset < bytes.count || transport.hasPendingOutput {
            let result = offset < bytes.count
                ? transport.send(UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + (256 << 10))]))
                : transport.flush()
            switch result {
            case .transferred(let count):
                offset += count
                meter.add(count)
                if count == 0 && offset < bytes.count {
                    let outcome = waitOnClient(read: false, write: true)
                    if outcome != .moved { return outcome }
                }
            case .wouldBlock(let wantsWrite):
                let outcome = waitOnClient(read: !wantsWrite, write: wantsWrite)
                if outcome != .moved { return outcome }
            case .closed:
                return unlessStopping(.clientClosed)
            case .failed:
                return unlessStopping(.clientFailed)
            }
        }
        return .moved
    }

    func writeAll(_ bytes: [UInt8]) -> Progress {
        bytes.withUnsafeBytes { writeAll($0) }
    }

    /// Sends `length` bytes of the open file `file` from its start.
    func writeFile(_ file: Int32, length: Int) -> Progress {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var offset = 0
        while offset < length {
            let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, min($0.count, length - offset), off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            // A file that shrank while being sent: the client sees a body shorter than its length.
            guard count > 0 else { return .clientFailed }
            let outcome = buffer.withUnsafeBytes { writeAll(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            if outcome != .moved { return outcome }
            offset += count
        }
        return .moved
    }

    /// Ends the connection after an error answer: FIN, then what the client still sends is read and
    /// dropped for a moment (at most a second and 256 KB), so the answer is not lost to a reset.
    func lingeringClose() {
        _ = writeAll([UInt8]())
        transport.finish()
        let deadline = MonotonicTime.now() + 1
        var drained = 0
        while drained < 256 << 10 {
            let result = scratch.withUnsafeMutableBytes { transport.receive(into: $0) }
            switch result {
            case .transferred(let count): drained += max(count, 1)
            case .wouldBlock:
                let readiness = wait(read: true, write: false, deadline: deadline)
                if readiness.stopped || readiness.timedOut { return }
            case .closed, .failed: return
            }
        }
    }

    /// Watches the client while a script waits for `gate` (nil: for nothing), for at most the
    /// script wait limit: `.moved` when the gate opened, `.clientClosed` when the client went away.
    func waitWatchingClient(gate: WakePipe?) -> Progress {
        let deadline = MonotonicTime.now() + configuration.scriptWaitLimit
        while true {
            if let gate, gate.isSignalled { return .moved }
            let readiness = wait(read: true, write: false, gate: gate, deadline: deadline)
            if readiness.stopped { return .stopped }
            if readiness.gateOpened { return .moved }
            if readiness.timedOut && MonotonicTime.now() >= deadline { return .idleExpired }
            if readiness.readable {
                // The client sends nothing after its request: readable means it closed (or reset).
                let result = scratch.withUnsafeMutableBytes { transport.receive(into: $0) }
                switch result {
                case .closed: return unlessStopping(.clientClosed)
                case .failed: return unlessStopping(.clientFailed)
                case .transferred, .wouldBlock: continue
                }
            }
        }
    }
}
