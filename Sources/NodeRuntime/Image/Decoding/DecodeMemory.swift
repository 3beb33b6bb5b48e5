import FoundationEssentials
import Glibc
import Dispatch

/// Bounds the working memory of all decodes running at once: a decode reserves its estimate before
/// it allocates and gives it back when it ends. A decode that does not fit waits (checking its
/// cancellation between short waits) until others finish; a decode is always admitted when nothing
/// else holds memory, so a single large decode never waits forever.
/// - Thread: any
final class DecodeMemory: Sendable {
    private struct State {
        var capacity: Int
        var inUse = 0
        var peakInUse = 0

        func fits(_ bytes: Int) -> Bool {
            let (total, overflow) = inUse.addingReportingOverflow(bytes)
            return inUse == 0 || (!overflow && total <= capacity)
        }
    }
    private let state: ConditionLocked<State>

    init(capacity: Int) { state = ConditionLocked(State(capacity: capacity)) }

    var capacity: Int {
        get { state.withLock { $0.capacity } }
        set { state.withLockBroadcasting { $0.capacity = max(0, newValue) } }
    }

    /// Bytes reserved now, and the most reserved at once since start.
    var usage: (inUse: Int, peak: Int) { state.withLock { ($0.inUse, $0.peakInUse) } }

    /// Reserves `bytes`, waiting while others hold too much. Returns false when cancelled first.
    func reserve(_ bytes: Int, isCancelled: () -> Bool) -> Bool {
        let bytes = max(0, bytes)
        while true {
            let admitted = state.wait(until: { $0.fits(bytes) }, timeout: 0.005) { state -> Bool in
                let (total, overflow) = state.inUse.addingReportingOverflow(bytes)
                state.inUse = overflow ? Int.max : total
                state.peakInUse = max(state.peakInUse, state.inUse)
                return true
            }
            if admitted == true { return true }
            if isCancelled() { return false }
        }
    }

    func release(_ bytes: Int) {
        state.withLockBroadcasting { $0.inUse = max(0, $0.inUse - max(0, bytes)) }
    }
}

/// Byte counts for memory estimates: products and sums that stop at `Int.max` instead of trapping,
/// whatever sizes a header claims and whatever the limits are set to.
enum ByteCount {
    static func product(_ factors: Int...) -> Int {
        var result = 1
        for factor in factors {
            let (value, overflow) = result.multipliedReportingOverflow(by: max(0, factor))
            if overflow { return .max }
            result = value
        }
        return result
    }

    static func sum(_ terms: Int...) -> Int {
        var result = 0
        for term in terms {
            let (value, overflow) = result.addingReportingOverflow(max(0, term))
            if overflow { return .max }
            result = value
        }
        return result
    }
}
