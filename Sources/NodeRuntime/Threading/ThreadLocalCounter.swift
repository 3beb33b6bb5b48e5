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

/// A per-thread object reference kept in a POSIX thread-specific slot; the thread's reference is
/// released when the thread ends.
/// - Thread: any; each thread sees its own value, starting at nil.
final class ThreadLocalObject<Object: AnyObject & Sendable>: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            if let raw { Unmanaged<AnyObject>.fromOpaque(raw).release() }
        }
        Contract.require(status == 0, "pthread_key_create failed (\(status))")
        self.key = key
    }

    /// The calling thread's object.
    var value: Object? {
        get { pthread_getspecific(key).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() as! Object } }
        set {
            let old = pthread_getspecific(key)
            _ = pthread_setspecific(key, newValue.map { Unmanaged.passRetained($0 as AnyObject).toOpaque() })
            if let old { Unmanaged<AnyObject>.fromOpaque(old).release() }
        }
    }
}
