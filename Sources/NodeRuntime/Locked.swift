import Foundation

/// State that can be reached only through its lock: `withLock` is the single door.
///
/// Tessera uses this rather than `Synchronization.Mutex` for two reasons: node state holds references
/// to other nodes (deliberately not `Sendable`, so draw parameters cannot carry them), which `Mutex`'s
/// `sending` rules reject; and on Linux `Mutex` locks with raw futex calls that the thread sanitizer
/// cannot see, so every access it guards would be reported as a race. `Atomic` is used as is.
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
