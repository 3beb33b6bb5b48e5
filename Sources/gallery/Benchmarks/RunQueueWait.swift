import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How long one thread has waited for a core: ready to run while other threads ran on every core.
/// Read from the kernel's scheduler statistics of the thread that made it
/// (`/proc/thread-self/schedstat`, Linux). Of a frame's interference (wall minus CPU time), this is
/// the part spent waiting for a core; the rest the thread was blocked (a lock, the GPU driver, the
/// X server).
/// - Thread: the thread that made it, only
final class RunQueueWait {
    /// The statistics file of the thread that opened it, kept open. (immutable)
    private let file: Int32

    /// Nil where the kernel gives no scheduler statistics.
    init?() {
        file = open("/proc/thread-self/schedstat", O_RDONLY)
        guard file >= 0 else { return nil }
        guard nanoseconds() != nil else {
            close(file)
            return nil
        }
    }

    deinit { close(file) }

    /// Nanoseconds the thread has waited on a run queue since it started; nil if the file cannot be
    /// read. The file is "on-core ns, run-queue ns, time slices", made anew on each read.
    func nanoseconds() -> UInt64? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer -> UInt64? in
            let count = pread(file, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
            guard fields.count >= 2 else { return nil }
            return UInt64(String(decoding: fields[1], as: UTF8.self))
        }
    }
}
