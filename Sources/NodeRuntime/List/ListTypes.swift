import Compositor

/// Where a list's rows come from.
///
/// The list asks for the row count when it loads its data (`reloadData`) and after each batch update,
/// never per frame. For each row that comes near the viewport it asks for a node block on the UI
/// thread and runs the block on a display worker, where the node is made and measured; so the block
/// must capture only `Sendable` values (the row's model), never the data source or other nodes.
/// - Thread: main, every member; the blocks run on display workers.
@MainActor
public protocol ListDataSource: AnyObject {
    /// How many rows the list has.
    /// - Thread: main
    @MainActor
    func numberOfRows(in list: ListNode) -> Int

    /// A block that makes the node for `row`. The list runs it on a display worker (or on the UI thread
    /// when `ListNode.loadsRowsOnMainThread` is set), measures the node at the list's width, and shows
    /// it once it is measured.
    /// - Thread: main (the block: display worker)
    @MainActor
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock

    /// The height to assume for `row` until it is measured; nil uses `ListNode.estimatedRowHeight`.
    /// Called for every row on `reloadData` and for inserted rows. The default returns nil.
    ///
    /// 0 and NaN mean no estimate, like nil. A negative or infinite value is no estimate too, and the
    /// list reports it once (`Node.diagnostics`, `TesseraLog.layout`). A row's own measured height,
    /// 0 included, always replaces what was assumed.
    /// - Thread: main
    @MainActor
    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double?
}

extension ListDataSource {
    public func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { nil }
}

/// Where `ListNode.scroll(to:at:animated:)` puts a row.
/// - Thread: any
public enum ListScrollPosition: Sendable, Hashable, CaseIterable {
    /// The row's top at the viewport's top.
    case top
    /// The row's middle at the viewport's middle.
    case center
    /// The row's bottom at the viewport's bottom.
    case bottom
    /// The least movement that shows the whole row (its top when it is taller than the viewport);
    /// nothing moves when it is already fully visible.
    case visible
}

/// How far ahead of and behind the viewport each interface state reaches, in screenfuls (multiples of
/// the viewport's height). "Leading" is the side the list last scrolled towards; it flips when the
/// direction does.
///
/// The ranges nest: every row in the display range is also in the preload range, and every row in the
/// preload range also in the measure range. Extents that would break this are widened to nest.
/// - Thread: any
public struct ListRangeTuning: Hashable, Sendable {
    /// One range's extent beyond the viewport, in screenfuls.
    /// - Thread: any (a value)
    public struct Extent: Hashable, Sendable {
        public var leading: Double
        public var trailing: Double
        public init(leading: Double, trailing: Double) {
            self.leading = leading.isFinite ? max(0, leading) : 0
            self.trailing = trailing.isFinite ? max(0, trailing) : 0
        }
        public static let zero = Extent(leading: 0, trailing: 0)
    }

    /// Rows here have their contents drawn (and their layers on the list).
    public var display: Extent
    /// Rows here fetch and decode their data (`didEnterPreloadState`).
    public var preload: Extent
    /// Rows here have a node, made and measured in the background; rows beyond it are released (their
    /// measured heights are kept).
    public var measure: Extent

    public init(display: Extent, preload: Extent, measure: Extent) {
        self.display = display
        self.preload = preload
        self.measure = measure
    }

    /// Texture's defaults while the list is on screen and scrolling: display 1 screen ahead and ½ behind,
    /// preload 2½ ahead and 1½ behind; nodes made and measured 3½ ahead and 2 behind.
    public static let full = ListRangeTuning(display: Extent(leading: 1.0, trailing: 0.5),
                                             preload: Extent(leading: 2.5, trailing: 1.5),
                                             measure: Extent(leading: 3.5, trailing: 2.0))
    /// The smaller set used while the list is hidden or has not scrolled since it appeared.
    public static let minimum = ListRangeTuning(display: Extent(leading: 0.25, trailing: 0.25),
                                                preload: Extent(leading: 0.5, trailing: 0.25),
                                                measure: Extent(leading: 1.0, trailing: 0.5))
    /// Only what is on screen: the way a list that draws on demand behaves (the synchronous baseline).
    public static let visibleOnly = ListRangeTuning(display: .zero, preload: .zero, measure: .zero)

    /// The extents widened so that display ⊆ preload ⊆ measure.
    var nested: ListRangeTuning {
        var result = self
        result.preload = Extent(leading: max(preload.leading, display.leading),
                                trailing: max(preload.trailing, display.trailing))
        result.measure = Extent(leading: max(measure.leading, result.preload.leading),
                                trailing: max(measure.trailing, result.preload.trailing))
        return result
    }
}

/// Which tuning a list is using.
/// - Thread: any
public enum ListRangeMode: Sendable, Hashable {
    /// `ListNode.fullRangeTuning`: on screen and scrolling (or scrolled since it appeared).
    case full
    /// `ListNode.minimumRangeTuning`: hidden, idle since it appeared, or idle longer than
    /// `ListNode.idleRangeDelay`.
    case minimum
}

/// One batch of changes to a list's rows, applied together by `ListNode.performBatchUpdates`.
///
/// Indices follow the usual table-view rule: deletions, reloads and move sources name rows as they were
/// before the update; insertions and move destinations name rows as they are after it. A row may appear
/// in at most one of deletions, reloads and move sources.
/// - Thread: any
public struct ListUpdate: Hashable, Sendable {
    public var deletions: [Int]
    public var insertions: [Int]
    public var reloads: [Int]
    public var moves: [Move]

    /// - Thread: any (a value)
    public struct Move: Hashable, Sendable {
        public var from: Int
        public var to: Int
        public init(from: Int, to: Int) { self.from = from; self.to = to }
    }

    public init(deletions: [Int] = [], insertions: [Int] = [], reloads: [Int] = [], moves: [Move] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.reloads = reloads
        self.moves = moves
    }
}

/// What stays put on screen when rows change above, below or inside the viewport.
/// - Thread: any
public enum ListAnchor: Sendable, Hashable {
    /// A stack-from-bottom list pinned to its bottom stays pinned; any other list keeps its first
    /// visible row where it is.
    case automatic
    /// The first visible row that survives the change keeps its position on screen: rows inserted or
    /// deleted above it, or measured taller, do not move what the user is looking at.
    case firstVisibleRow
    /// The last visible row that survives keeps its position on screen.
    case lastVisibleRow
    /// The content offset does not change: rows inserted above push the visible ones down.
    case contentOffset
}

/// Running counts of a list's work, for tests, the perf overlay and the benchmark.
/// - Thread: any (a value)
public struct ListStatistics: Sendable, Equatable {
    /// Row nodes made by node blocks.
    public var nodesMade = 0
    /// Batch fetches the list asked its `batchFetchingDelegate` for.
    public var batchFetches = 0
    /// Row nodes released (left the measure range, deleted, reloaded, or the data reloaded).
    public var nodesReleased = 0
    /// Measure jobs queued on the scheduler.
    public var measuresScheduled = 0
    /// Measure jobs that made and measured their node.
    public var measuresCompleted = 0
    /// Measure jobs dropped or stopped because their row left the measure range first.
    public var measuresCancelled = 0
    /// Measured heights that differed from the estimate.
    public var heightCorrections = 0
    /// Row nodes measured again because a node of the row called `setNeedsLayout`.
    public var rowsRemeasured = 0
    /// Rows that have a node or a measure job now.
    public var liveRows = 0
    /// Visible row area, in square points, summed over frames.
    public var visibleRowArea = 0.0
    /// The part of `visibleRowArea` shown without committed contents, summed over frames.
    public var checkerboardArea = 0.0

    public init() {}

    /// `checkerboardArea / visibleRowArea`, 0 when nothing was visible.
    public var checkerboardFraction: Double { visibleRowArea > 0 ? checkerboardArea / visibleRowArea : 0 }
}
