#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Compositor

/// A per-thread integer kept in a POSIX thread-specific slot: no allocation, one call to read.
///
/// Tessera keeps two: how deep the calling thread is inside a draw function (`DrawScope`), and, in
/// debug builds, how many `Locked` locks it holds (the lock-order check).
/// - Thread: any; each thread sees its own value, starting at zero.
final class ThreadLocalCounter: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        Contract.require(status == 0, "pthread_key_create failed (\(status))")
        self.key = key
    }

    /// The calling thread's value.
    var value: Int {
        @inline(__always) get { Int(bitPattern: pthread_getspecific(key)) }
        @inline(__always) set { _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }
}
