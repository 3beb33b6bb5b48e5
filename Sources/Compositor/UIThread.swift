import Dispatch
import FoundationEssentials
import Glibc

/// The UI thread: the main actor's thread, which owns the compositor, loads layers and applies
/// contents.
///
/// UI-thread API is isolated to `@MainActor`, so the compiler refuses a call from another isolation
/// (a detached task, a worker's closure). These checks are the second line, for code that crosses
/// anyway (an `@unchecked Sendable` box, `unsafeBitCast`, a C callback): each traps with a message
/// naming the operation, in release builds too, because a layer touched from a worker corrupts state
/// silently, which is worse than a clear trap.
///
/// "On the UI thread" means running as the main actor: on the process's main thread, or in a job of
/// the main dispatch queue (Swift Testing runs `@MainActor` tests there, on a pool thread).
/// - Thread: any
public enum UIThread {
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// True when the caller runs as the main actor.
    public static var isCurrent: Bool {
        PlatformThread.isMain || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// Traps, naming `operation`, unless the caller runs on the UI thread. The message is printed in
    /// every build.
    @inline(__always)
    public static func precondition(_ operation: @autoclosure () -> String,
                                    file: StaticString = #fileID, line: UInt = #line) {
        Contract.require(isCurrent, "\(operation()) must run on the UI thread", file: file, line: line)
    }
}

/// The thread an object of the compositor belongs to: the one that made it. A compositor and its
/// backend run either on the UI thread (made there: a synchronous compositor, tests) or on a
/// compositor thread of their own (`CompositorThread`); every use checks it and traps, naming the
/// operation and the thread, when it comes from elsewhere (in release builds too).
/// - Thread: any (a value)
public struct ThreadOwner: Sendable {
    private let thread: pthread_t
    private let isUIThread: Bool

    /// The calling thread.
    public init() {
        thread = pthread_self()
        isUIThread = UIThread.isCurrent
    }

    /// True when the caller runs on the owning thread (for an object of the UI thread: as the main
    /// actor, wherever its jobs run).
    public var isCurrent: Bool {
        isUIThread ? UIThread.isCurrent : pthread_equal(thread, pthread_self()) != 0
    }

    /// Traps, naming `operation` and the owning thread, unless the caller runs on it.
    @inline(__always)
    public func precondition(_ operation: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        Contract.require(isCurrent, "\(operation()) must run on \(isUIThread ? "the UI thread" : "the compositor's thread")",
                         file: file, line: line)
    }
}
