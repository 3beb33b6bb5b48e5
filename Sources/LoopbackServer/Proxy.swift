import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Channel {
    /// Serves one request of a proxy: a CONNECT tunnel or a forwarded absolute-form request, to
    /// 127.0.0.1 only; the connection ends with it.
    func serveProxy(_ head: RequestHead, body: [UInt8]) {
        core.record { $0.requestsByVersion[head.version, default: 0] += 1 }
        if head.method == "CONNECT" {
            guard let (host, port) = Self.authority(head.target) else {
                answerAndClose(.text("CONNECT takes host:port", status: 400))
                return
            }
            core.recordProxyTarget(head.target)
            guard let target = connectToLoopback(host: host, port: port) else { return }
            defer { close(target) }
            guard writeAll(Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)) == .moved else { return }
            let early = input
            input.removeAll()
            relay(with: target, toTarget: early)
            return
        }
        guard let url = URLComponents(string: head.target), url.scheme?.lowercased() == "http", let host = url.host else {
            answerAndClose(.text("a proxy takes CONNECT host:port or an absolute http:// URL", status: 400))
            return
        }
        let port = url.port ?? 80
        core.recordProxyTarget("\(host):\(port)")
        guard let target = connectToLoopback(host: host, port: port) else { return }
        defer { close(target) }
        var path = url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath
        if let query = url.percentEncodedQuery { path += "?" + query }
        var request = "\(head.method) \(path) \(head.version)\r\n"
        var hasHost = false
        for header in head.headers {
            switch header.name.lowercased() {
            case "proxy-connection", "connection", "keep-alive", "proxy-authorization": continue
            case "host": hasHost = true
            default: break
            }
            request += "\(header.name): \(header.value)\r\n"
        }
        if !hasHost { request += "Host: \(host):\(port)\r\n" }
        request += "Connection: close\r\n\r\n"
        relay(with: target, toTarget: Array(request.utf8) + body)
    }

    /// `host:port` (a bracketed IPv6 host too).
    static func authority(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// A connection to `host` at `port` when it names this machine (127.0.0.1, `localhost`);
    /// otherwise, or when it cannot be reached, answers the client (403, 502) and returns nil.
    private func connectToLoopback(host: String, port: Int) -> Int32? {
        guard ["127.0.0.1", "localhost"].contains(host.lowercased()) else {
            answerAndClose(.text("this proxy reaches 127.0.0.1 only, not \(host)", status: 403))
            return nil
        }
        switch LoopbackSocket.connect(ipv4: "127.0.0.1", port: port, timeout: configuration.rateWindow, stop: core.stopPipe) {
        case .success(let descriptor): return descriptor
        case .failure(let error):
            answerAndClose(.text("\(error)", status: 502))
            return nil
        }
    }

    /// Moves bytes both ways between the client and `target` until the target has closed and its
    /// bytes are delivered, either side fails, nothing moves for `rateWindow`, or the server stops.
    private func relay(with target: Int32, toTarget initial: [UInt8]) {
        var toTarget = initial, toClient: [UInt8] = []
        var clientEnded = false, targetEnded = false
        var lastActivity = MonotonicTime.now()
        var buffer = [UInt8](repeating: 0, count: 32 << 10)
        while true {
            if !toTarget.isEmpty {
                let sent = toTarget.withUnsafeBytes { send(target, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent > 0 {
                    toTarget.removeFirst(sent)
                    lastActivity = MonotonicTime.now()
                } else if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    return
                }
                if toTarget.isEmpty && clientEnded { shutdown(target, Int32(SHUT_WR)) }
            }
            if !toClient.isEmpty || transport.hasPendingOutput {
                let result = toClient.isEmpty ? transport.flush() : toClient.withUnsafeBytes { transport.send($0) }
                switch result {
                case .transferred(let count):
                    toClient.removeFirst(count)
                    if count > 0 { lastActivity = MonotonicTime.now() }
                case .wouldBlock: break
                case .closed, .failed: return
                }
            }
            if targetEnded && toClient.isEmpty && !transport.hasPendingOutput {
                transport.finish()
                return
            }
            var targetEvents: Int16 = 0
            if toClient.isEmpty && !targetEnded { targetEvents |= Int16(POLLIN) }
            if !toTarget.isEmpty { targetEvents |= Int16(POLLOUT) }
            let readiness = wait(read: toTarget.isEmpty && !clientEnded, write: !toClient.isEmpty, other: targetEvents == 0 ? nil : target,
                                 otherEvents: targetEvents, deadline: lastActivity + configuration.rateWindow)
            if readiness.stopped { return }
            if readiness.timedOut && MonotonicTime.now() >= lastActivity + configuration.rateWindow { return }
            if readiness.readable {
                let result = buffer.withUnsafeMutableBytes { transport.receive(into: $0) }
                switch result {
                case .transferred(let count):
                    toTarget += buffer[..<count]
                    if count > 0 { lastActivity = MonotonicTime.now() }
                case .wouldBlock: break
                case .closed:
                    clientEnded = true
                    if toTarget.isEmpty { shutdown(target, Int32(SHUT_WR)) }
                case .failed: return
                }
            }
            if readiness.otherReady && toClient.isEmpty && !targetEnded {
                let count = buffer.withUnsafeMutableBytes { recv(target, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    toClient += buffer[..<count]
                    lastActivity = MonotonicTime.now()
                } else if count == 0 {
                    targetEnded = true
                } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    return
                }
            }
        }
    }
}
