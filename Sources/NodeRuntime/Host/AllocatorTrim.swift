internal import CSDL
import Dispatch
import Synchronization

/// Gives the C allocator's free pages back to the system (glibc's `malloc_trim`). Bitmaps, layouts
/// and strings are made on the display workers and freed on the UI thread; glibc keeps what is freed
/// in the arena of the thread that allocated it, page by page resident, for that thread's next
/// allocations. A long session (screens visited, lists scrolled far, images shown and evicted) so
/// holds many megabytes that nothing uses. `Application` asks for a trim when it comes to rest after
/// frames, at most once per `interval`, and after a memory warning; the trim runs on a utility
/// queue, never on the UI thread, one at a time (a trim asked for while one runs is that one).
/// Under AddressSanitizer or ThreadSanitizer, whose allocators replace glibc's, it finds nothing to
/// give back.
/// - Thread: any
public enum AllocatorTrim {
    /// The least time between two trims asked for at rest (`Application`'s event loop), in seconds.
    public static let interval = 10.0

    private static let queue = DispatchQueue(label: "tessera.allocator-trim", qos: .utility)
    private static let running = Atomic<Bool>(false)
    private static let finished = Atomic<Int>(0)

    /// Starts a trim on the utility queue unless one is running. Returns true when one was started.
    /// - Thread: any
    @discardableResult
    public static func start() -> Bool {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return false
        }
        queue.async {
            _ = tessera_malloc_trim()
            finished.add(1, ordering: .relaxed)
            running.store(false, ordering: .releasing)
        }
        return true
    }

    /// Trims finished so far in this process.
    /// - Thread: any
    public static var finishedCount: Int { finished.load(ordering: .relaxed) }

    /// Waits for the trim under way, if any, to finish (for tests and benchmarks).
    /// - Thread: any
    public static func waitUntilIdle() {
        queue.sync {}
    }

    /// Bytes of free chunks the allocator keeps (glibc's `mallinfo2().fordblks`): what a trim may give
    /// back, as far as those pages are still resident.
    /// - Thread: any
    public static var freeBytes: Int { Int(clamping: tessera_malloc_free_bytes()) }
}
