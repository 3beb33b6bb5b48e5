#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The UI thread: the one thread that owns the compositor, loads layers and applies contents.
///
/// "Main thread" in Tessera means this thread, recorded by identity when the first `Compositor` is made
/// (or by an explicit `claim()`), not `Thread.isMainThread`: test runners and SDL loops do not always run
/// UI work on the process's first thread. Until something claims it, the process's first thread counts
/// as the UI thread.
///
/// Checks here go through `Contract`: they run, and print their message, in release builds too,
/// because a layer touched from a worker corrupts state silently, which is worse than a clear trap.
/// - Thread: any (the checks); `claim()` from the thread that will run the frame loop.
public enum UIThread {
    /// The owner's thread identity, or 0 while unclaimed.
    private static let owner = Atomic<UInt>(0)

    private static var currentIdentity: UInt {
        #if canImport(Glibc)
        return UInt(pthread_self())
        #else
        return UInt(bitPattern: pthread_self())
        #endif
    }

    private static var isProcessMainThread: Bool {
        Thread.isMainThread
    }

    /// Makes the calling thread the UI thread. Calling it again from the same thread is harmless;
    /// the last claim wins (tests that run on different threads each claim before they start).
    public static func claim() {
        owner.store(currentIdentity, ordering: .sequentiallyConsistent)
    }

    /// True when the caller runs on the UI thread.
    public static var isCurrent: Bool {
        let recorded = owner.load(ordering: .sequentiallyConsistent)
        return recorded == 0 ? isProcessMainThread : recorded == currentIdentity
    }

    /// Traps, naming `operation`, unless the caller runs on the UI thread.
    @inline(__always)
    public static func precondition(_ operation: @autoclosure () -> String,
                                    file: StaticString = #fileID, line: UInt = #line) {
        Contract.require(isCurrent, "\(operation()) must run on the UI thread", file: file, line: line)
    }
}
