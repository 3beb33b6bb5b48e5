import Foundation

/// State that can be reached only through its lock: `withLock` is the single door.
///
/// `Synchronization.Mutex` is used where the guarded value is `Sendable`; node state holds references to
/// other nodes (not `Sendable` by design, so draw parameters cannot carry them), which `Mutex`'s
/// `sending` rules reject. This wrapper keeps the same discipline for that case.
/// - Thread: any
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State  // guarded by lock

    init(_ state: State) { self.state = state }

    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

/// Carries a value that is not `Sendable` across threads where the runtime guarantees the access
/// pattern itself (for example, a layer handed to the main queue to be released there).
/// - Thread: any; what may be done with `value` is the caller's contract.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
