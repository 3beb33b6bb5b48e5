import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// An end of a list.
/// - Thread: any
public enum ListEdge: Sendable, Hashable, CaseIterable {
    case top, bottom
}

/// Loads more rows for a list when the user comes near one of its ends (Texture's batch fetching).
/// - Thread: main
@MainActor
public protocol ListBatchFetchingDelegate: AnyObject {
    /// The user came within `leadingScreensForBatching` screenfuls of `context.edge`: load more rows
    /// (on any thread), insert them on the UI thread (`insertRows`, with `anchor: .firstVisibleRow` at
    /// the top so nothing on screen moves), then call `context.complete(loadedMore:)`. The list asks
    /// for one batch per edge at a time.
    func list(_ list: ListNode, beginBatchFetch context: ListBatchFetchContext)
}

/// One batch fetch in progress. Complete it once, on the UI thread, when its rows are in the list (or
/// when there were none).
/// - Thread: main
@MainActor
public final class ListBatchFetchContext {
    /// The end the rows are for.
    public let edge: ListEdge
    private weak var list: ListNode?
    /// True once `complete(loadedMore:)` was called.
    public private(set) var isCompleted = false

    init(edge: ListEdge, list: ListNode) {
        self.edge = edge
        self.list = list
    }

    /// Ends the fetch. `loadedMore: false` says the end has no more rows: the list stops asking there
    /// until `ListNode.resetBatchFetching()`. A second call does nothing.
    public func complete(loadedMore: Bool) {
        UIThread.precondition("ListBatchFetchContext.complete")
        guard !isCompleted else { return }
        isCompleted = true
        list?.batchFetchDidComplete(self, loadedMore: loadedMore)
    }
}

extension ListNode {
    /// True while a batch fetch at `edge` waits for its completion. - Thread: main
    public func isBatchFetching(at edge: ListEdge) -> Bool {
        UIThread.precondition("ListNode.isBatchFetching")
        return batchFetches[edge] != nil
    }

    /// Asks again at ends that had no more rows (after a refresh, say). - Thread: main
    public func resetBatchFetching() {
        UIThread.precondition("ListNode.resetBatchFetching")
        exhaustedBatchEdges.removeAll()
        if isReady { beginBatchFetchesIfNear() }
    }

    /// Starts a fetch at each edge the viewport is near, with none running and not exhausted.
    func beginBatchFetchesIfNear() {
        guard let delegate = batchFetchingDelegate, isReady, interfaceState.contains(.visible) else { return }
        let height = viewportLength
        guard height > 0 else { return }
        let screens = leadingScreensForBatching.isFinite ? max(0, leadingScreensForBatching) : 0
        for edge in ListEdge.allCases where batchFetchingEdges.contains(edge) {
            guard batchFetches[edge] == nil, !exhaustedBatchEdges.contains(edge) else { continue }
            let distance = edge == .top ? offset - minimumOffset : maximumOffset - offset
            guard distance <= screens * height else { continue }
            let context = ListBatchFetchContext(edge: edge, list: self)
            batchFetches[edge] = context
            counts.batchFetches += 1
            delegate.list(self, beginBatchFetch: context)
        }
    }

    func batchFetchDidComplete(_ context: ListBatchFetchContext, loadedMore: Bool) {
        guard batchFetches[context.edge] === context else { return }
        batchFetches[context.edge] = nil
        if !loadedMore { exhaustedBatchEdges.insert(context.edge) }
        // Still near (a batch too small to fill the screens ahead): the next one starts at the next frame.
        runtime.mainQueue.enqueue { [weak self] in self?.beginBatchFetchesIfNear() }
    }
}
