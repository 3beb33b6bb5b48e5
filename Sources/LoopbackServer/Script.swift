#if canImport(Glibc)
import Glibc
#endif

extension LoopbackServer {
    /// One step of a scripted answer.
    /// - Thread: any (a value)
    public enum Step: Sendable {
        /// Sends the bytes.
        case send([UInt8])
        /// Waits until the gate is opened (or the client goes away, or the server stops, or the
        /// configuration's `scriptWaitLimit` passes).
        case wait(Gate)
        /// Closes the connection (FIN; on TLS after a close_notify).
        case close
        /// Resets the connection (RST: a close with a zero linger time; on TLS without a close_notify).
        case reset
        /// Sends nothing more and keeps the connection open until the client goes away (or the limit).
        case stall
        /// Sends `chunk` again and again until the client goes away.
        case endless([UInt8])
    }

    /// Raw bytes sent in place of an HTTP/1.1 response, with pauses and a chosen end: what a test
    /// needs of a hostile or slow server. The request is read and handed to the handler as any
    /// other; the script runs on the connection's thread; the connection always ends with it (a
    /// script that ends without `.close` or `.reset` closes). Served over HTTP/2, a script resets
    /// its stream instead.
    ///
    /// Every wait is bounded by the configuration's `scriptWaitLimit` (and sends by its rate
    /// rules); a stop ends every wait at once.
    /// - Thread: any (a value)
    public struct Script: Sendable {
        public var steps: [Step]
        /// Called (on the connection's thread, once) when the client closed or reset the connection
        /// while the script still had something to send or was waiting; not when the server stopped.
        public var whenClientLeaves: (@Sendable () -> Void)?
    }

    /// A pause a test ends: `open()` lets every script waiting at it (and every later one) go on.
    /// - Thread: any
    public final class Gate: Sendable {
        let pipe: WakePipe
        private let arrivals = Guarded(0)

        /// A closed gate (it holds a pipe, two descriptors, until released).
        public init() {
            do {
                pipe = try WakePipe()
            } catch {
                preconditionFailure("LoopbackServer.Gate: \(error)")
            }
        }

        /// Opens the gate.
        /// - Thread: any
        public func open() { pipe.signal() }

        /// Whether `open()` was called.
        public var isOpen: Bool { pipe.isSignalled }

        /// How many times a script arrived at the gate.
        public var arrivalCount: Int { arrivals.withLock { $0 } }

        /// Waits until a script is waiting at the gate (or has been); false after `timeout` seconds.
        /// - Thread: any
        public func waitUntilReached(timeout: Double = 30) -> Bool {
            arrivals.wait(until: MonotonicTime.now() + timeout) { $0 == 0 }
        }

        func arrive() {
            arrivals.withLock { $0 += 1 }
        }
    }
}
