import Compositor
import Foundation
import Synchronization

/// The runtime's own main queue: work posted from any thread, run on the UI thread when the frame loop
/// drains it, once a frame. Tessera does not rely on `DispatchQueue.main`, which nothing drains inside
/// an SDL loop on Linux.
/// - Thread: `enqueue` from any thread; `drain` on the UI thread.
public final class MainQueue: Sendable {
    private let pending = Locked<[@Sendable () -> Void]>([])

    public init() {}

    /// Posts `work` to run on the UI thread at the next drain.
    public func enqueue(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
    }

    /// Number of items waiting.
    public var count: Int { pending.withLock { $0.count } }

    /// Runs everything posted so far, in order. Work posted while draining runs at the next drain, so a
    /// drain always ends. Returns how many items ran.
    @discardableResult
    public func drain() -> Int {
        UIThread.precondition("MainQueue.drain")
        let work = pending.withLock { queue -> [@Sendable () -> Void] in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
        return work.count
    }
}
