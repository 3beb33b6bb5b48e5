import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// State that can be reached only through its lock: `withLock` is the single door. Nodes keep their
/// state in one, and a node subclass keeps its own mutable state in one too, which is what makes it
/// safe to share across threads (`Node` is `Sendable`).
///
/// Tessera uses this rather than `Synchronization.Mutex` for two reasons: node state holds values that
/// `Mutex`'s `sending` rules reject for a stored lock; and on Linux `Mutex` locks with raw futex calls
/// that the thread sanitizer cannot see, so every access it guards would be reported as a race.
/// `Atomic` is used as is.
///
/// ## Lock order: every lock is a leaf
/// No code holds one `Locked` while taking another, and none calls out (to a subclass hook, another
/// node, the scheduler, a job, a transaction, user code) from inside `withLock`: it copies what it
/// needs, releases the lock, then acts. With no nesting there is no order to get wrong and no
/// deadlock between Tessera's locks. Debug builds check it: taking a `Locked` while the same thread
/// holds another is a precondition failure naming both sites.
///
/// Keep a closure in a struct rather than as the bare `State`: a function value passed `inout` through
/// the generic `withLock` is re-wrapped in a reabstraction thunk on each pass, so the chain (and the
/// cost of a call, and finally the stack depth of its release) grows with every access.
/// - Thread: any
public final class Locked<State>: @unchecked Sendable {
    private let lock = PlatformLock()
    private var state: State  // guarded by lock

    /// Guards `state`. - Thread: any
    public init(_ state: State) { self.state = state }

    /// Runs `body` with the state, under the lock. Keep it short and call nothing that may lock
    /// (another node, `setNeedsDisplay`, a callback): copy what is needed, return, then act.
    /// - Thread: any
    @inline(__always)
    public func withLock<Result>(file: StaticString = #fileID, line: UInt = #line,
                          _ body: (inout State) throws -> Result) rethrows -> Result {
        #if DEBUG
        LockOrder.willLock(file: file, line: line)
        defer { LockOrder.didUnlock() }
        #endif
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

#if DEBUG
/// The debug check behind "every lock is a leaf" (see `Locked`): the site of the lock a thread holds
/// is kept in two thread-local slots, so the check costs two slot reads and writes per lock.
enum LockOrder {
    private static let heldFile = ThreadLocalCounter()
    private static let heldLine = ThreadLocalCounter()

    @inline(__always)
    static func willLock(file: StaticString, line: UInt) {
        let outer = heldFile.value
        if outer != 0 {
            let outerFile = UnsafePointer<CChar>(bitPattern: outer).map { String(cString: $0) } ?? "?"
            Contract.violated("Tessera lock order: a lock taken at \(file):\(line) while this thread holds "
                              + "the one taken at \(outerFile):\(heldLine.value); every Locked is a leaf "
                              + "(see Locked.swift)")
        }
        heldFile.value = Int(bitPattern: file.utf8Start)
        heldLine.value = Int(line)
    }

    @inline(__always)
    static func didUnlock() { heldFile.value = 0 }
}
#endif

/// Carries a value that is not `Sendable` to another thread where the runtime itself guarantees the
/// access pattern and no thread check can state it (a node handed to the background layout queue,
/// which may measure on any thread). Values bound for the UI thread travel in `UIThreadBound`, which
/// checks.
/// - Thread: any; what may be done with `value` is the caller's contract.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// State behind a condition variable: reached only through its lock, with a wait for the state to
/// become ready. For the one place a thread sleeps until another changes a value (a worker's parker).
/// Not part of the lock-order check: nothing is taken while it is held.
/// - Thread: any
final class ConditionLocked<State>: @unchecked Sendable {
    private let condition = PlatformCondition()
    private var state: State  // guarded by condition

    init(_ state: State) { self.state = state }

    /// Changes the state and wakes one waiter.
    func withLockSignalling(_ body: (inout State) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        body(&state)
        condition.signal()
    }

    /// Sleeps until `ready(state)` is true, then runs `body` on the state, all under the lock.
    func wait<Result>(until ready: (State) -> Bool, then body: (inout State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) { condition.wait() }
        return body(&state)
    }

    /// Like `wait(until:then:)`, but gives up after `timeout` seconds: nil when the state did not
    /// become ready by then (the caller can check its own cancellation outside the lock and wait again).
    func wait<Result>(until ready: (State) -> Bool, timeout: Double, then body: (inout State) -> Result) -> Result? {
        let deadline = PlatformCondition.Deadline(after: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) {
            if !condition.wait(until: deadline) { return ready(state) ? body(&state) : nil }
        }
        return body(&state)
    }

    /// Reads or changes the state without waking anyone.
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    /// Changes the state and wakes every waiter.
    func withLockBroadcasting<Result>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        let result = body(&state)
        condition.broadcast()
        return result
    }
}
