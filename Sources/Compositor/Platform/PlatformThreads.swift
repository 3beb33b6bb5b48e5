import CTessera
import Glibc

// The threads, locks and conditions Tessera's modules use, on POSIX threads directly. The runtime
// links FoundationEssentials only (not Foundation, whose library and the internationalization and ICU
// libraries it brings cost an app about 6 MB of memory), and these are what it would otherwise take
// from Foundation. POSIX primitives, so ThreadSanitizer sees every lock and wait.

/// A mutual-exclusion lock.
/// - Thread: any
package final class PlatformLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        Contract.require(status == 0, "pthread_mutex_init failed (\(status))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` under the lock.
    @inline(__always)
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A lock with a condition variable, for a thread that sleeps until another changes a value. Timed
/// waits run on the monotonic clock, so a change of the wall clock neither ends nor stretches them.
/// - Thread: any
package final class PlatformCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let statuses = (pthread_mutex_init(mutex, nil), pthread_cond_init(condition, &attributes))
        pthread_condattr_destroy(&attributes)
        Contract.require(statuses == (0, 0), "pthread_mutex_init / pthread_cond_init failed \(statuses)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes one waiter (call with the lock held).
    package func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiter (call with the lock held).
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// Releases the lock, sleeps until signalled (or woken spuriously), takes the lock again.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Like `wait()`, but returns false, with the lock taken again, once `seconds` have passed.
    package func wait(seconds: Double) -> Bool { wait(until: Deadline(after: seconds)) }

    /// Like `wait()`, but returns false, with the lock taken again, once `deadline` has passed. A
    /// waiter that loops keeps one deadline for all its waits.
    package func wait(until deadline: Deadline) -> Bool {
        guard !deadline.isPassedAtStart else { return false }
        guard var time = deadline.time else { wait(); return true }
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    /// An instant on the monotonic clock (what timed waits use), fixed when made.
    package struct Deadline: Sendable {
        /// Nil: no limit.
        fileprivate let time: timespec?
        /// Made with no time left (zero, negative or NaN seconds).
        fileprivate let isPassedAtStart: Bool

        /// `seconds` from now; no limit when infinite or over 1e9 s.
        package init(after seconds: Double) {
            guard seconds > 0 else {
                time = nil
                isPassedAtStart = true
                return
            }
            isPassedAtStart = false
            guard seconds.isFinite, seconds < 1e9 else {
                time = nil
                return
            }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let whole = seconds.rounded(.down)
            var nanoseconds = Int(now.tv_nsec) + Int((seconds - whole) * 1e9)
            var deadline = timespec(tv_sec: now.tv_sec + Int(whole), tv_nsec: 0)
            if nanoseconds >= 1_000_000_000 {
                nanoseconds -= 1_000_000_000
                deadline.tv_sec += 1
            }
            deadline.tv_nsec = nanoseconds
            time = deadline
        }
    }
}

/// Threads of Tessera's own (the compositor thread, display workers, the network and bus threads).
/// - Thread: any
package enum PlatformThread {
    /// True on the process's main thread (the one that ran the program's start).
    package static var isMain: Bool { tessera_is_main_thread() != 0 }

    /// Starts a detached thread named `name` (the first 15 bytes: Linux's limit) running `body`.
    /// - Parameter stackSize: bytes of stack; nil for the system's default.
    package static func detach(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            PlatformThread.setCurrentName(start.name)
            start.body()
            return nil
        }, start)
        if status != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            Contract.violated("a thread (\(name)) could not be started: pthread_create failed (\(status))")
        }
    }

    /// Names the calling thread (as `ps -L` and debuggers show it).
    package static func setCurrentName(_ name: String) {
        // Cut by whole characters: a character cut in two would become U+FFFD (3 bytes), the name
        // would pass the limit and the call would fail, leaving the thread its creator's name.
        var kept = Substring(name)
        while kept.utf8.count > 15 { kept.removeLast() }
        _ = String(kept).withCString { tessera_set_thread_name($0) }
    }

    private final class Start: @unchecked Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// Writes `text` to standard error as is (one `write` call per chunk the system takes).
/// - Thread: any
package func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
    bytes.removeAll()
}

extension StringProtocol {
    /// The string without the spaces and tabs (and, with `newlines`, the line ends) at either end:
    /// code points with Unicode's White_Space property, less the line ends unless asked. Trimmed by
    /// code point, so a combining mark after a space stays.
    package func trimmingWhitespace(newlines: Bool = false) -> String {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.properties.isWhitespace else { return false }
            if newlines { return true }
            switch scalar.value {
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return false
            default: return true
            }
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isBlank($0) })!
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }
}

/// `value` with `digits` digits after the point (`%.Nf`: rounded half to even as C prints it).
/// - Thread: any
package func formatFixed(_ value: Double, digits: Int) -> String {
    let digits = max(0, min(digits, 30))
    var buffer = [CChar](repeating: 0, count: 400)
    let count = withVaList([Int32(digits), value]) { arguments in
        buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress!, $0.count, "%.*f", arguments) }
    }
    guard count >= 0 else { return "\(value)" }
    return String(decoding: buffer.prefix(min(Int(count), buffer.count - 1)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
