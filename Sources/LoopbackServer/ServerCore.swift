import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the server's threads share: the listening socket, the stop pipe, the TLS context, and the
/// registry of connections with the statistics. `LoopbackServer` is only a handle on it, so the
/// threads (which hold the core) never keep the handle alive: releasing the handle stops the server.
/// - Thread: any
final class ServerCore: @unchecked Sendable {
    enum Role: Sendable {
        case handler(LoopbackServer.Handler)
        case proxy
    }

    /// One connection being served.
    struct Entry {
        var descriptor: Int32
        /// When it became idle between requests; nil while a request is under way.
        var idleSince: Double?
        /// Shut down to make room for a newer connection.
        var evicted = false
    }

    struct State {
        var stopped = false
        /// The accept thread and one per connection.
        var threads = 0
        /// The listening socket and the stop pipe were closed (by the stop, once every thread ended).
        var closed = false
        var connections: [Int: Entry] = [:]
        var nextID = 0
        var statistics = LoopbackServer.Statistics()
        var proxiedTargets: [String] = []
    }

    let configuration: LoopbackServer.Configuration
    let role: Role
    let port: Int
    let listener: Int32
    let stopPipe: WakePipe
    let tls: TLSContext?
    let state = Guarded(State())

    init(configuration: LoopbackServer.Configuration, role: Role) throws {
        self.configuration = configuration
        self.role = role
        tls = try configuration.tls.map { try TLSContext(identity: $0, allowsHTTP2: configuration.allowsHTTP2) }
        stopPipe = try WakePipe()
        (listener, port) = try LoopbackSocket.listen()
    }

    deinit {
        // Only once every thread has ended (they hold the core): a stop that timed out closes here.
        let closed = state.withLock { $0.closed }
        if !closed {
            close(listener)
            stopPipe.close()
        }
    }

    func start() {
        state.withLock { $0.threads += 1 }
        let thread = Thread { [self] in
            acceptConnections()
            threadDidEnd()
        }
        thread.name = "loopback-server.accept"
        thread.start()
    }

    var isStopping: Bool { stopPipe.isSignalled }

    func stop() {
        // The pipe first: a connection whose socket is shut down below sees the stop, not a client
        // gone.
        stopPipe.signal()
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            // Under the lock: a connection leaves the registry before its descriptor is closed, so
            // no descriptor shut here was closed and reused meanwhile.
            for entry in state.connections.values { shutdown(entry.descriptor, Int32(SHUT_RDWR)) }
        }
        let ended = state.wait(until: MonotonicTime.now() + configuration.stopTimeout) { $0.threads > 0 }
        guard ended else { return }
        let closeNow = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        if closeNow {
            close(listener)
            stopPipe.close()
        }
    }

    private func threadDidEnd() {
        state.withLock { $0.threads -= 1 }
    }

    // MARK: Accepting

    private func acceptConnections() {
        while true {
            var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: stopPipe.readEnd, events: Int16(POLLIN), revents: 0)]
            if poll(&entries, 2, -1) < 0 && errno != EINTR { return }
            if entries[1].revents != 0 { return }
            guard entries[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            if client < 0 {
                switch errno {
                case EINTR, EAGAIN, EWOULDBLOCK, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The connection stays queued and the listener readable: wait a moment (or for
                    // the stop) rather than spin on it.
                    var stopEntry = [pollfd(fd: stopPipe.readEnd, events: Int16(POLLIN), revents: 0)]
                    _ = poll(&stopEntry, 1, 100)
                    continue
                default: return
                }
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            LoopbackSocket.setNonBlocking(client)
            var noDelay: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            admit(client)
        }
    }

    private enum Admission {
        case admitted(Int)
        case madeRoom
        case busy
        case stopped
    }

    /// Registers `client` and starts its thread, making room by closing the connection idle the
    /// longest when every slot is taken; refuses it when none is idle.
    private func admit(_ client: Int32) {
        var admission = register(client, mayEvict: true)
        if case .madeRoom = admission {
            // The evicted connection's thread sees its socket shut and leaves at once.
            _ = state.wait(until: MonotonicTime.now() + 2) { !$0.stopped && $0.connections.count >= configuration.maximumConnections }
            admission = register(client, mayEvict: false)
        }
        switch admission {
        case .admitted(let id):
            let thread = Thread { [self] in
                serveConnection(id: id, descriptor: client)
                threadDidEnd()
            }
            thread.name = "loopback-server.connection"
            thread.start()
        case .busy:
            if configuration.tls == nil {
                // Never blocks the accept thread: what does not fit the socket's buffer is dropped.
                let busy = Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n".utf8)
                _ = busy.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            close(client)
        case .stopped, .madeRoom:
            close(client)
        }
    }

    private func register(_ client: Int32, mayEvict: Bool) -> Admission {
        state.withLock { state -> Admission in
            if state.stopped { return .stopped }
            if state.connections.count < configuration.maximumConnections {
                state.nextID += 1
                state.connections[state.nextID] = Entry(descriptor: client)
                state.threads += 1
                state.statistics.connectionsAccepted += 1
                state.statistics.openConnections = state.connections.count
                return .admitted(state.nextID)
            }
            var oldestIdle: (id: Int, since: Double)?
            if mayEvict {
                for (id, entry) in state.connections where !entry.evicted {
                    if let since = entry.idleSince, since < oldestIdle?.since ?? .infinity { oldestIdle = (id, since) }
                }
            }
            if let oldestIdle, let entry = state.connections[oldestIdle.id] {
                state.connections[oldestIdle.id]?.evicted = true
                shutdown(entry.descriptor, Int32(SHUT_RDWR))
                state.statistics.shed[.makingRoom, default: 0] += 1
                return .madeRoom
            }
            state.statistics.refusedBusy += 1
            return .busy
        }
    }

    private func serveConnection(id: Int, descriptor: Int32) {
        do {
            let channel = Channel(core: self, id: id, descriptor: descriptor)
            channel.run()
        }
        // The channel (and its TLS state) is gone; the descriptor leaves the registry before it closes.
        state.withLock { state in
            state.connections[id] = nil
            state.statistics.openConnections = state.connections.count
        }
        close(descriptor)
    }

    // MARK: For the connections

    /// Marks connection `id` idle between requests (from `since`), or busy (nil).
    func setIdle(_ id: Int, since: Double?) {
        state.withLock { $0.connections[id]?.idleSince = since }
    }

    func record(_ change: (inout LoopbackServer.Statistics) -> Void) {
        state.withLock { change(&$0.statistics) }
    }

    func recordProxyTarget(_ target: String) {
        state.withLock { $0.proxiedTargets.append(target) }
    }
}
