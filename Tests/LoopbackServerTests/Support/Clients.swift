import Foundation
import LoopbackServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

struct ClientFailure: Error, CustomStringConvertible {
    let description: String
}

/// An HTTP answer as a raw client read it.
struct HTTPAnswer {
    var status: Int
    /// Header names lowercased.
    var headers: [String: String]
    var body: [UInt8]
}

/// A plain TCP client on 127.0.0.1 that writes bytes as given and reads with deadlines: what a
/// hostile or careless client does, byte for byte.
final class RawClient {
    private(set) var descriptor: Int32
    /// Bytes received and not yet taken by `readAnswer`.
    private var received: [UInt8] = []

    /// Connects to `port`; with `receiveBuffer`, the socket's receive buffer is set that small first.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ClientFailure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = ClientFailure(description: "connect: \(String(cString: strerror(errno)))")
            Glibc.close(descriptor)
            descriptor = -1
            throw failure
        }
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Closes with a reset (RST: a zero linger time).
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Sends every byte; false when the connection is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what arrives into `received`: false at the end of the stream (or a reset), or after
    /// `deadline` with nothing.
    private func receiveMore(until deadline: Date) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(left * 1000) + 1)
            guard entry.revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            received += buffer[..<count]
            return true
        }
    }

    /// Reads one answer: its head and Content-Length bytes of body (to the close without one; none
    /// when `bodyless`, as for HEAD).
    func readAnswer(timeout: Double = 10, bodyless: Bool = false) throws -> HTTPAnswer {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let end = received.firstRange(of: [13, 10, 13, 10] as [UInt8]) {
                let lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let parts = lines[0].split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else {
                    throw ClientFailure(description: "not a status line: \(lines[0])")
                }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                if bodyless {
                    received.removeFirst(end.upperBound)
                    return HTTPAnswer(status: status, headers: headers, body: [])
                }
                if let length = headers["content-length"].flatMap({ Int($0) }) {
                    while received.count - end.upperBound < length {
                        guard receiveMore(until: deadline) else {
                            throw ClientFailure(description: "the body ended at \(received.count - end.upperBound) of \(length) bytes")
                        }
                    }
                    let body = Array(received[end.upperBound..<(end.upperBound + length)])
                    received.removeFirst(end.upperBound + length)
                    return HTTPAnswer(status: status, headers: headers, body: body)
                }
                while receiveMore(until: deadline) {}
                let body = Array(received[end.upperBound...])
                received.removeAll()
                return HTTPAnswer(status: status, headers: headers, body: body)
            }
            guard receiveMore(until: deadline) else {
                throw ClientFailure(description: "no answer's head in \(received.count) bytes: \(String(decoding: received.prefix(200), as: UTF8.self))")
            }
        }
    }

    /// A GET on this connection, and its answer.
    func get(_ path: String, headers: String = "", timeout: Double = 10) throws -> HTTPAnswer {
        guard send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n") else {
            throw ClientFailure(description: "the connection is gone")
        }
        return try readAnswer(timeout: timeout)
    }

    /// Waits until the server closed the connection (what it still sends is read and dropped);
    /// false after `timeout` seconds.
    func waitForClose(timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(left * 1000) + 1)
            guard entry.revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return true }
        }
    }
}

/// One GET on a connection of its own.
func get(_ path: String, port: Int, timeout: Double = 10) throws -> HTTPAnswer {
    try RawClient(port: port).get(path, headers: "Connection: close\r\n", timeout: timeout)
}

/// Debian's curl, run with no configuration file and no proxy from the environment, bounded by
/// `--max-time`.
enum Curl {
    struct Result {
        var exitCode: Int32
        var output: String
        var errors: String
    }

    static let path = "/usr/bin/curl"

    /// Starts curl without waiting for it (its output discarded); the caller terminates it.
    static func start(_ arguments: [String], maximumTime: Int = 60) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-q", "--silent", "--max-time", String(maximumTime), "--connect-timeout", "5"] + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": FileManager.default.temporaryDirectory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func run(_ arguments: [String], maximumTime: Int = 20) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputURL = folder.appendingPathComponent("stdout"), errorsURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL), errors = try FileHandle(forWritingTo: errorsURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-q", "--silent", "--show-error", "--max-time", String(maximumTime), "--connect-timeout", "5"] + arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": folder.path]
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try output.close()
        try errors.close()
        return Result(exitCode: process.terminationStatus,
                      output: String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self),
                      errors: String(decoding: (try? Data(contentsOf: errorsURL)) ?? Data(), as: UTF8.self))
    }
}

/// The descriptors this process has open.
func openDescriptors() -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    // The listing's own descriptor is among them and closed by now.
    return names.compactMap { Int32($0) }.filter { fcntl($0, F_GETFD) >= 0 }.sorted()
}

/// A test identity's authority certificate written to a file, for `curl --cacert`.
func writeAuthority(of identity: LoopbackServer.TLSIdentity) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-ca-\(UUID().uuidString).pem")
    try identity.writeAuthorityCertificate(to: url)
    return url
}

/// `count` clients that send a request head a byte at a time, one byte each per tick (every
/// `interval` seconds), never finishing it, and connect again at their next tick when dropped or
/// refused: slowloris, on a thread of its own until `stop()`.
final class SlowlorisClients: @unchecked Sendable {
    private let port: Int
    private let count: Int
    private let interval: Double
    private let stopEnds: (read: Int32, write: Int32)
    private let condition = NSCondition()
    private var reconnections = 0  // guarded by condition
    private var running = false  // guarded by condition
    private static let head = Array("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never-Ends: ".utf8)

    init(port: Int, count: Int, interval: Double = 0.1) {
        self.port = port
        self.count = count
        self.interval = interval
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0)
        stopEnds = (ends[0], ends[1])
    }

    deinit {
        Glibc.close(stopEnds.read)
        Glibc.close(stopEnds.write)
    }

    /// How many times a client was dropped (or refused) and connected again.
    var reconnectionCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return reconnections
    }

    /// Connects every client, then starts the thread that feeds them.
    func start() {
        let connected: [(descriptor: Int32, sent: Int)] = (0..<count).map { _ in (connect(), 0) }
        condition.lock()
        running = true
        condition.unlock()
        let thread = Thread { [self] in
            var clients = connected
            var tick = Date()
            while true {
                var entries = clients.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
                entries.append(pollfd(fd: stopEnds.read, events: Int16(POLLIN), revents: 0))
                let wait = max(0, tick.timeIntervalSinceNow)
                _ = poll(&entries, nfds_t(entries.count), Int32(wait * 1000))
                if entries.last!.revents != 0 { break }
                var scratch = [UInt8](repeating: 0, count: 4096)
                for index in clients.indices where entries[index].revents != 0 && clients[index].descriptor >= 0 {
                    // Whatever the server sends (a 503, a 408) or its close: this client is done.
                    _ = recv(clients[index].descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
                    Glibc.close(clients[index].descriptor)
                    clients[index] = (-1, 0)
                }
                guard tick.timeIntervalSinceNow <= 0 else { continue }
                tick = Date(timeIntervalSinceNow: interval)
                for index in clients.indices {
                    if clients[index].descriptor < 0 {
                        clients[index] = (connect(), 0)
                        condition.lock()
                        reconnections += 1
                        condition.unlock()
                        continue
                    }
                    let sent = clients[index].sent
                    var byte = sent < Self.head.count ? Self.head[sent] : UInt8(ascii: "a")
                    if Glibc.send(clients[index].descriptor, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == 1 {
                        clients[index].sent += 1
                    }
                }
            }
            for client in clients where client.descriptor >= 0 { Glibc.close(client.descriptor) }
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    /// Ends the thread and closes every client.
    func stop() {
        var byte: UInt8 = 1
        _ = write(stopEnds.write, &byte, 1)
        let deadline = Date(timeIntervalSinceNow: 10)
        condition.lock()
        while running { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }

    private func connect() -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            Glibc.close(descriptor)
            return -1
        }
        return descriptor
    }
}
