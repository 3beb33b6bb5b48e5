import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock: every deadline and rate window of the server is measured on it.
/// - Thread: any
enum MonotonicTime {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Milliseconds from now until `deadline` for `poll` (at least 0, at most a minute; -1 for none).
    static func pollTimeout(until deadline: Double?) -> Int32 {
        guard let deadline else { return -1 }
        let left = (deadline - now()) * 1000
        return Int32(max(0, min(60_000, left.rounded(.up))))
    }
}

/// A value reached only inside its lock, with waits on its changes. Every `withLock` wakes the
/// waiters, so a wait sees each change.
/// - Thread: any
final class Guarded<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value  // guarded by condition
    /// Counts the `withLock` calls, so a waiter outside the lock can tell a change happened.
    private var generation = 0  // guarded by condition

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            generation &+= 1
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// A copy of part of the value, and the generation it was read at (for `waitForChange`).
    func snapshot<Part>(_ read: (Value) -> Part) -> (part: Part, generation: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (read(value), generation)
    }

    /// Waits until a `withLock` after `generation`; false when none came by the monotonic `deadline`.
    func waitForChange(after generation: Int, until deadline: Double) -> Bool {
        wait(until: deadline) { _ in self.generation == generation }
    }

    /// Waits while `predicate` holds, until the monotonic `deadline`; false when it still held then.
    func wait(until deadline: Double, while predicate: (Value) -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while predicate(value) {
            let left = deadline - MonotonicTime.now()
            if left <= 0 { return false }
            _ = condition.wait(until: Date(timeIntervalSinceNow: left))
        }
        return true
    }
}

/// A pipe whose read end becomes readable for good once `signal()` is called: what the server's
/// threads poll beside their sockets to learn of a stop, and what a `Gate` opens.
/// - Thread: any
final class WakePipe: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: Int32
    /// Whether `signal()` was called, and whether `close()` was.
    private let state = Guarded((signalled: false, closed: false))

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw LoopbackServerError.system("pipe") }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit { close() }

    var isSignalled: Bool { state.withLock { $0.signalled } }

    /// Makes the read end readable (once; later calls, and calls after `close()`, do nothing).
    func signal() {
        state.withLock { state in
            guard !state.signalled, !state.closed else { return }
            state.signalled = true
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
    }

    /// Closes both ends, once nothing polls them any more.
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
        }
    }
}

/// Why the server could not start, or a system call failed.
/// - Thread: any (a value)
public struct LoopbackServerError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }

    static func system(_ call: String) -> LoopbackServerError {
        LoopbackServerError("\(call): \(String(cString: strerror(errno)))")
    }
}

/// Sockets on 127.0.0.1.
enum LoopbackSocket {
    /// A listening TCP socket on 127.0.0.1 at a port the system assigns (close-on-exec, non-blocking).
    static func listen(backlog: Int32 = 128) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw LoopbackServerError.system("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let error = LoopbackServerError.system("bind/listen on 127.0.0.1")
            close(descriptor)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        setNonBlocking(descriptor)
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func setNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// A non-blocking connection to `address` (IPv4 loopback) at `port`, or nil with the reason,
    /// after at most `timeout` seconds or a signal on `stop`.
    static func connect(ipv4 address: String, port: Int, timeout: Double, stop: WakePipe) -> Result<Int32, LoopbackServerError> {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.system("socket")) }
        setNonBlocking(descriptor)
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = UInt16(port).bigEndian
        target.sin_addr.s_addr = inet_addr(address)
        let started = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if started != 0 && errno != EINPROGRESS {
            let error = LoopbackServerError.system("connect to \(address):\(port)")
            close(descriptor)
            return .failure(error)
        }
        if started != 0 {
            var entries = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0),
                           pollfd(fd: stop.readEnd, events: Int16(POLLIN), revents: 0)]
            _ = poll(&entries, 2, Int32(timeout * 1000))
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
            if entries[0].revents == 0 || failure != 0 {
                let reason = entries[0].revents == 0 ? "timed out" : String(cString: strerror(failure))
                close(descriptor)
                return .failure(LoopbackServerError("connect to \(address):\(port): \(reason)"))
            }
        }
        return .success(descriptor)
    }
}
