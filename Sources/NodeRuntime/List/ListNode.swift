public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A vertical list of rows of any length that scrolls smoothly: rows are made and measured in the
/// background as they come near, drawn before they scroll in, and released once they are far behind.
///
/// ## How it works
/// - Row heights live in a Fenwick tree (`RowGeometry`): every row has a height from the start (its
///   estimate), so offsets and "which rows does this interval cover" cost O(log n), and a frame's work
///   depends on how many rows are near the viewport, never on how many rows there are.
/// - Each frame (the list is a `FrameParticipant` of its host) the list moves its scroll position to
///   the frame's time, takes in the rows measured since the last frame, and moves every row near the
///   viewport through its interface states: measure layout → preload → display → visible, and back out.
///   The reach of each state is set in screenfuls by `fullRangeTuning` / `minimumRangeTuning`, leading
///   in the direction of the last scroll. Each range is a contiguous interval of rows, so a frame
///   visits only the rows at the intervals' moving edges and the rows still being drawn.
/// - A row in the measure range gets a node: the data source's node block runs on a display worker,
///   which also measures the node at the list's width. A measured height replaces the estimate without
///   moving what is on screen: the first visible row keeps its place (see `ListAnchor`).
/// - A row in the display range has its drawing nodes' draws scheduled, ahead of the viewport by
///   `displayDistance` so the scheduler draws what will be needed first; it is a transaction container,
///   so it appears whole. Its layer is on the list while it is within a quarter screen of the viewport
///   (the compositor walks a screenful of rows, whatever the ranges). Leaving the display range clears
///   its contents; leaving the preload range cancels its loads; leaving the measure range releases its
///   node (its measured height stays).
///
/// Rows are not subnodes of the list: the list places their layers itself, like Telegram's ListView,
/// so a row's interface state follows the ranges and not the list's own state (a list off screen caps
/// its rows' states at its own). Hit testing searches the visible rows; a tap that lands on no
/// interactive row content selects the row through `onSelectRow`.
///
/// For events a row node leads to the list (its event parent, set while the list holds the node), so
/// the list arbitrates like a scroll view: a touch that starts on a row's link, spoiler or button goes
/// to that content, and a clean tap still activates it; once the touch moves more than the pan's
/// `minimumDistance` (10 points, the slop) the list's pan claims it, the content's touch is cancelled
/// (the link does not open) and the list scrolls. A touch while the list is moving (a fling, a bounce,
/// an animated or wheel scroll) stops it and belongs to the list, whatever row content it lands on.
/// The wheel scrolls the list over its rows too, and keeps it moving after the last wheel event
/// (`ScrollPhysics.wheelDecelerationRate`).
///
/// ## Using it
/// Set `dataSource` and add the list to a node tree: once it has an interface state in a host's tree,
/// it joins that host's frames by itself (it is a `FrameParticipant`; no `addFrameParticipant` call is
/// needed) and leaves them when it leaves the tree. Route keys to `handleKey(_:modifiers:)` from a
/// controller; the wheel reaches the list through the host.
///
/// - Thread: the list may be made on any thread like any node; every list member below is UI-thread
///   only (checked), except where noted. Row nodes are made on display workers.
@MainActor
public class ListNode: Node, @unchecked Sendable {
    // MARK: Accessibility

    /// A list is an element; its rows are list items, read by index whether or not they have a node.
    /// - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// A list that scrolls by a screenful. - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .list, actions: [.scrollForward, .scrollBackward])
    }

    /// Scrolls by a screenful (a page for a pager). - Thread: main
    public override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        switch action {
        case .scrollForward, .increment:
            if isPagingEnabled { turnPage(by: 1) } else { scrollAccessibly(by: viewportLength * 0.9) }
            return true
        case .scrollBackward, .decrement:
            if isPagingEnabled { turnPage(by: -1) } else { scrollAccessibly(by: -viewportLength * 0.9) }
            return true
        default:
            return super.performAccessibilityAction(action)
        }
    }

    /// Enter or Space on a focused row (or a node inside it that did not take the key) selects the
    /// row, as a click does (`onSelectRow`). - Thread: main
    public override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard key == .enter || key == .space, modifiers.isDisjoint(with: [.control, .alt, .command, .shift]),
              var node = frameHost?.focusedNode else { return super.keyDown(key, modifiers: modifiers) }
        while node.eventParent !== self, let parent = node.supernode { node = parent }
        guard let row = row(of: node) else { return super.keyDown(key, modifiers: modifiers) }
        onSelectRow?(row)
        return true
    }

    /// The row whose node is `node`, if `node` is one of the list's row nodes. - Thread: main
    public func row(of node: Node) -> Int? {
        UIThread.precondition("ListNode.row(of:)")
        guard node.eventParent === self else { return nil }
        return records.first { $0.value.node === node }?.key
    }

    private func scrollAccessibly(by delta: Double) {
        scroll(toTarget: .offset(clamped(offset) + delta), animated: true)
    }

    /// Makes a row's node; runs on a display worker. Capture only `Sendable` values.
    public typealias RowNodeBlock = @Sendable () -> Node

    // MARK: Configuration (main thread)

    /// Set once a data source was given: a list without one then lost it (lists hold it weakly).
    /// (main thread only)
    var hadDataSource = false

    /// Where rows come from. Set it, then call `reloadData()` (setting it reloads as well). Held
    /// weakly: keep it alive (a list on screen without one says so once in `diagnostics`).
    /// (main thread only)
    public weak var dataSource: ListDataSource? {
        didSet {
            if dataSource != nil { hadDataSource = true }
            needsReload = true
            if isReady { reloadData() }
        }
    }

    /// The height assumed for rows not yet measured when the data source gives no estimate.
    ///
    /// 0 and NaN mean "no estimate": such rows are assumed `defaultEstimatedRowHeight` (44 points) tall
    /// until they are measured, so the list still reaches past the viewport, makes and measures the rows
    /// there and scrolls; each row shows once measured, at its own height, whatever was assumed. A
    /// negative or infinite value is treated as no estimate too, and reported once (`diagnostics`,
    /// `TesseraLog.layout`). Read when rows are loaded (`reloadData`, insertions). (main thread only)
    public var estimatedRowHeight = 44.0

    /// The height assumed for rows not yet measured when neither the data source nor
    /// `estimatedRowHeight` gives one: 44 points. - Thread: any
    public static let defaultEstimatedRowHeight = 44.0

    /// Range extents while the list is on screen and scrolling. (main thread only)
    public var fullRangeTuning = ListRangeTuning.full
    /// Range extents while the list is hidden or idle. (main thread only)
    public var minimumRangeTuning = ListRangeTuning.minimum
    /// Seconds without scrolling after which a visible list falls back to the minimum ranges; nil (the
    /// default) keeps the full ranges once the list has scrolled, as Texture does. (main thread only)
    public var idleRangeDelay: Double?

    /// Chat-thread layout: content shorter than the viewport sits at the bottom, the list opens at its
    /// end, and rows added at the bottom keep it pinned there when it was. (main thread only)
    public var stacksFromBottom = false {
        didSet {
            if stacksFromBottom != oldValue {
                // A chat opens at its end and reads upwards.
                isPinnedToBottom = stacksFromBottom
                leadingDirection = stacksFromBottom ? -1 : 1
            }
        }
    }

    /// When true, node blocks run and rows are measured on the UI thread as they enter the measure
    /// range, as a table view does: the synchronous baseline. (main thread only)
    public var loadsRowsOnMainThread = false

    /// Which way the list scrolls: `.vertical` (the default) stacks rows top to bottom, `.horizontal`
    /// places them left to right, each measured at the list's height with any width. Every other
    /// property keeps its meaning along the axis: a row's "height" and `contentHeight` are lengths
    /// along it, `.top`/`.bottom` are its start and end, the wheel's vertical motion scrolls a
    /// horizontal list too (its horizontal motion first), ←/→ step it; on a compositor thread the
    /// wheel moves either kind ahead of the UI thread (`ScrollBinding.isHorizontal`). Changing it
    /// reloads the rows. (main thread only)
    public var scrollDirection = ListScrollDirection.vertical {
        didSet {
            if scrollDirection != oldValue {
                needsReload = true
                if isReady { reloadData() }
            }
        }
    }

    /// Paging: a release comes to rest with a row's start at the viewport's start (the nearest, or
    /// the next one in the direction of a flick), and the arrow keys move one row, animated. Meant for
    /// rows as long as the viewport (`PagerNode`). (main thread only)
    public var isPagingEnabled = false

    /// Rows are measured exactly as long as the viewport along the axis (pages), and again when it
    /// changes. (main thread only)
    var rowsFillViewport = false

    /// The laws of motion for drags, flings, bounces and animated scrolls. (main thread only)
    public var physics = ScrollPhysics()

    /// Points scrolled per unit of wheel motion (SDL's precise units: one notch of a wheel is 1, a
    /// touchpad reports fractions). (main thread only)
    public var wheelStep = 48.0
    /// Points scrolled by the arrow keys. (main thread only)
    public var keyStep = 40.0
    /// When a row on screen is measured again at another height (its node called `setNeedsLayout`),
    /// the rows below it slide to their new places over the batch updates' duration instead of
    /// jumping (default true). (main thread only)
    public var animatesRowHeightChanges = true

    /// Called with the row under a tap (a touch that did not scroll and did not stop a fling).
    /// (main thread only)
    public var onSelectRow: ((Int) -> Void)?
    /// As `onSelectRow`, with the tap's point in the row's coordinates (a collection finds the item
    /// under it). (main thread only)
    var onSelectRowAtPoint: ((Int, Point) -> Void)?

    /// Draws the range overlay: a strip at the right edge mapping the rows near the viewport, each tinted
    /// by its interface state, and a tint over visible rows that are not ready. (main thread only)
    public var showsRangeOverlay = false {
        didSet { if showsRangeOverlay != oldValue { rangeOverlay.setEnabled(showsRangeOverlay, in: self) } }
    }

    /// Asked for more rows when the user comes near an end (`batchFetchingEdges`). (main thread only)
    public weak var batchFetchingDelegate: ListBatchFetchingDelegate?
    /// How near an end, in screenfuls of the viewport beyond what is shown, a batch fetch starts.
    /// Default 2; 0 waits until the end is on screen. (main thread only)
    public var leadingScreensForBatching = 2.0
    /// The ends at which the list asks for more: the bottom by default; a chat that loads its history
    /// asks at the top. (main thread only)
    public var batchFetchingEdges: Set<ListEdge> = [.bottom]

    // MARK: State (main thread only)

    /// The batch fetches the delegate has not completed, by edge. (main thread only)
    var batchFetches: [ListEdge: ListBatchFetchContext] = [:]
    /// Edges whose last fetch found nothing more: not asked again until `resetBatchFetching`.
    /// (main thread only)
    var exhaustedBatchEdges: Set<ListEdge> = []

    /// Row heights and offsets. (main thread only)
    var geometry = RowGeometry()
    /// Rows that have a node or a measure job, by row index. (main thread only)
    var records: [Int: RowRecord] = [:]
    /// The top of the viewport in content coordinates. (main thread only)
    var offset = 0.0 {
        didSet { if offset != oldValue && !runsTrack { scrollHandoff &+= 1 } }
    }
    /// What the scroll position is doing. (main thread only)
    var motion = ScrollMotion.idle {
        didSet { if motion != oldValue && !runsTrack { scrollHandoff &+= 1 } }
    }
    /// Counts the list's own changes of its position and motion (`ScrollBinding.handoff`): not the
    /// motion running in time, nor a motion taken over from the compositor thread. (main thread only)
    var scrollHandoff = 0
    /// True while the motion runs in time or is taken over: no change of the list's own.
    /// (main thread only)
    var runsTrack = false
    /// Where an animated scroll is going, re-resolved each frame (a row's offset moves as heights are
    /// measured); nil while the motion is not an animated scroll. (main thread only)
    var animationTarget: ScrollTarget?
    /// A row the list keeps in place while the rows around it are measured (after `scroll(to:)`).
    /// (main thread only)
    var heldTarget: ScrollTarget?
    /// +1 when the list last scrolled towards the end, −1 towards the start. (main thread only)
    var leadingDirection = 1.0
    /// The offset the ranges were last computed at, for the scroll direction. (main thread only)
    var lastRangeOffset = 0.0
    /// Time of the latest frame, and of the latest scroll. (main thread only)
    var now = 0.0
    var lastScrollTime = -Double.infinity
    /// True once the list has scrolled since it last became visible (full ranges from then on).
    /// (main thread only)
    var hasScrolledSinceAppearing = false
    /// A stack-from-bottom list at its bottom stays there as rows come and heights change.
    /// (main thread only)
    var isPinnedToBottom = false
    /// The extent across the scroll axis rows were measured at (a vertical list's width, a horizontal
    /// list's height). (main thread only)
    var rowWidth = 0.0
    /// The viewport's length along the axis when rows were last measured (pages fill it). (main thread only)
    var measuredViewportLength = 0.0
    /// The scale rows were made at. (main thread only)
    lazy var rowScale = contentsScale
    /// The list's size at the last frame. (main thread only)
    var viewportSize = Size.zero
    /// Rows measured on workers, waiting for the next frame. (guarded by its lock)
    let measuredRows = Locked<[MeasuredRow]>([])
    /// Row nodes whose tree called `setNeedsLayout` since the last frame, from any thread. (guarded by
    /// its lock)
    let rowsNeedingMeasure = Locked<Set<ObjectIdentifier>>([])
    /// Rows fading out after a deletion. (main thread only)
    var disappearingRows: [DisappearingRow] = []
    /// The touch that is down stopped a fling, so it must not select a row. (main thread only)
    var touchStoppedScrolling = false
    /// Recent wheel motion, oldest first, one entry per event time, for the wheel's velocity.
    /// (main thread only)
    var wheelSamples: [WheelSample] = []
    /// True between `dataSource` being set before load and the first frame. (main thread only)
    var needsReload = false
    /// The layer the rows' layers live in, moved by the scroll offset. (main thread only)
    var contentLayer: Layer?
    /// The debugging overlay. (main thread only)
    let rangeOverlay = ListRangeOverlay()
    /// Counts. (main thread only)
    var counts = ListStatistics()
    /// What the last pass computed; nil makes the next pass a full one. (main thread only)
    var lastPass: PassState?
    /// Rows that changed since the last pass (a node arrived). (main thread only)
    var dirtyRows = Set<Int>()
    /// Rows the pass visits every frame until they are done: displayed but not drawn yet, or swapping
    /// a reloaded node. (main thread only)
    var pendingRows = Set<Int>()
    /// Outcomes of measure jobs, counted on workers.
    let measureCounters = MeasureCounters()

    /// Makes an empty list. - Thread: any
    public nonisolated override init() {
        super.init()
        clipsToBounds = true
    }

    /// A list scrolling along `scrollDirection`, its rows pages (paging, each as long as the viewport)
    /// when `pages` is set (`PagerNode`). - Thread: any
    nonisolated init(scrollDirection: ListScrollDirection, pages: Bool) {
        self.scrollDirection = scrollDirection
        self.isPagingEnabled = pages
        self.rowsFillViewport = pages
        super.init()
        clipsToBounds = true
    }

    isolated deinit {
        // Jobs still queued would only make nodes nobody wants.
        for record in records.values { record.job?.cancel() }
    }

    /// True once the list can measure rows: loaded, with an extent across its axis.
    var isReady: Bool { isNodeLoaded && crossExtent > 0 }

    // MARK: Node hooks

    public override func didLoad() {
        super.didLoad()
        let content = Layer(name: "list-content")
        layer.addSublayer(content)
        contentLayer = content
        let pan = PanGestureRecognizer { [weak self] recognizer in
            guard let self, let pan = recognizer as? PanGestureRecognizer else { return }
            self.handlePan(pan)
        }
        addGestureRecognizer(pan)
        let tap = TapGestureRecognizer { [weak self] recognizer in
            guard let self else { return }
            self.handleTap(at: recognizer.location(in: self))
        }
        // A tap on a row's own interactive content (a link, a button) is that content's, not a selection.
        tap.shouldReceiveTouch = { [weak self] _, touched in touched === self }
        addGestureRecognizer(tap)
        if showsRangeOverlay { rangeOverlay.setEnabled(true, in: self) }
    }

    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        if let preferredSize { return preferredSize }
        return Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0,
                    height: constrainedSize.height.isFinite ? constrainedSize.height : 0)
    }

    public override func layout() {
        super.layout()
        viewportDidChange()
    }

    public override func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {
        super.interfaceStateDidChange(newState, from: oldState)
        if newState.contains(.visible) != oldState.contains(.visible) {
            hasScrolledSinceAppearing = false
        }
        // Rows follow the list out of (and back into) the hierarchy without waiting for a frame.
        if isReady { updateRows() }
    }

    /// Rows are not subnodes, so hits are searched in the visible rows first (where their layers are,
    /// scrolled), and land on the list itself when no interactive row content is under the point.
    public override func hitTest(_ point: Point) -> Node? {
        guard let rows = visibleRows, let listLayer = layerIfLoaded else { return super.hitTest(point) }
        let listOrigin = listLayer.frameInRoot.origin
        for row in rows.reversed() {
            guard let rowNode = nodeForRow(row), let rowLayer = rowNode.layerIfLoaded else { continue }
            let origin = rowLayer.frameInRoot.origin
            let local = Point(x: point.x - (origin.x - listOrigin.x), y: point.y - (origin.y - listOrigin.y))
            if let hit = rowNode.hitTest(local) { return hit }
        }
        return super.hitTest(point)
    }

    public override func touchesBegan(_ touch: Touch) {
        super.touchesBegan(touch)
        touchDidBegin(at: touch.timestamp)
    }

    public override func touchesEnded(_ touch: Touch) {
        super.touchesEnded(touch)
        touchDidEnd(at: touch.timestamp)
    }

    public override func touchesCancelled(_ touch: Touch) {
        super.touchesCancelled(touch)
        touchDidEnd(at: touch.timestamp)
    }

    // MARK: Data

    /// Reads the row count again and forgets every row: nodes are released and every row is measured
    /// again (a row's last measured height stands for it until then). What the user looks at stays: by default (`.automatic`) the first visible row keeps
    /// its place on screen as its neighbours are measured again (a stack-from-bottom list pinned to
    /// its end stays there); `.contentOffset` keeps the offset in points instead (clamped).
    /// - Thread: main
    @MainActor
    public func reloadData(anchor: ListAnchor = .automatic) {
        UIThread.precondition("ListNode.reloadData")
        let kept = isReady && !records.isEmpty ? captureAnchor(anchor) : .none
        // Before the list has a width, the reload happens again once it has one.
        needsReload = !isReady
        rowWidth = crossExtent
        measuredViewportLength = viewportLength
        for record in records.values { release(record) }
        records.removeAll()
        lastPass = nil
        dirtyRows.removeAll()
        pendingRows.removeAll()
        let count = dataSource.map { max(0, $0.numberOfRows(in: self)) } ?? 0
        // A row's last measured height is its best estimate: the rows keep their places until they
        // are measured again, and the anchor absorbs what changed.
        let previous = geometry
        let heights = (0..<count).map { row in
            row < previous.count && previous.isMeasured(row) ? previous.heights[row] : estimatedHeight(forRow: row)
        }
        geometry.replaceAll(heights: heights, measured: Array(repeating: false, count: count))
        heldTarget = nil
        motion = .idle
        if stacksFromBottom && isPinnedToBottom {
            offset = maximumOffset
        } else {
            // The anchor row where it was, at its estimated place; measuring it and the rows above it
            // again keeps it there.
            restore(kept)
            offset = clamped(offset)
        }
        lastRangeOffset = offset
        if isReady { updateRows() }
    }

    /// The number of rows. - Thread: main
    @MainActor
    public var numberOfRows: Int {
        UIThread.precondition("ListNode.numberOfRows")
        return geometry.count
    }

    // MARK: Queries (main thread)

    /// The top of the viewport in content coordinates (negative when a short stack-from-bottom list sits
    /// at the bottom; beyond the edges while rubber-banding). - Thread: main
    @MainActor
    public var contentOffset: Double {
        UIThread.precondition("ListNode.contentOffset")
        return offset
    }

    /// The height of all rows, measured or estimated. - Thread: main
    @MainActor
    public var contentHeight: Double {
        UIThread.precondition("ListNode.contentHeight")
        return geometry.totalHeight
    }

    /// The node of `row`, once it has been made and measured; nil outside the measure range.
    /// - Thread: main
    @MainActor
    public func nodeForRow(_ row: Int) -> Node? {
        UIThread.precondition("ListNode.nodeForRow")
        return records[row]?.node
    }

    /// The nodes of the rows that have one (the measure range's), which are not among `subnodes`
    /// (for accounting that walks a tree). - Thread: main
    @MainActor
    package var rowNodes: [Node] {
        UIThread.precondition("ListNode.rowNodes")
        return records.values.compactMap(\.node)
    }

    /// The interface state of `row`'s node; empty for rows without one. - Thread: main
    @MainActor
    public func interfaceStateOfRow(_ row: Int) -> InterfaceState {
        UIThread.precondition("ListNode.interfaceStateOfRow")
        return records[row]?.node?.interfaceState ?? []
    }

    /// The row's frame in content coordinates (estimated until it is measured). - Thread: main
    @MainActor
    public func frameOfRow(_ row: Int) -> Rect {
        UIThread.precondition("ListNode.frameOfRow")
        Contract.require(row >= 0 && row < geometry.count, "ListNode.frameOfRow: row \(row) out of 0..<\(geometry.count)")
        return rowFrame(at: geometry.offset(ofRow: row), length: geometry.heights[row])
    }

    /// Whether the row's height has been measured (it stays measured after its node is released).
    /// - Thread: main
    @MainActor
    public func isRowMeasured(_ row: Int) -> Bool {
        UIThread.precondition("ListNode.isRowMeasured")
        return row >= 0 && row < geometry.count && geometry.isMeasured(row)
    }

    /// The rows that overlap the viewport, first to last; nil when none does. - Thread: main
    @MainActor
    public var visibleRows: ClosedRange<Int>? {
        UIThread.precondition("ListNode.visibleRows")
        return geometry.rows(overlapping: offset, offset + viewportLength)
    }

    /// The row at `point` in the list's coordinates, if any. - Thread: main
    @MainActor
    public func row(at point: Point) -> Int? {
        UIThread.precondition("ListNode.row(at:)")
        let position = mainCoordinate(of: point) + offset
        let across = isHorizontal ? point.y : point.x
        guard across >= 0, across < crossExtent, position >= 0, position < geometry.totalHeight else { return nil }
        return geometry.row(containing: position)
    }

    /// Which range tuning applies now. - Thread: main
    @MainActor
    public var rangeMode: ListRangeMode {
        UIThread.precondition("ListNode.rangeMode")
        return currentRangeMode
    }

    /// Running counts of the list's work. - Thread: main
    @MainActor
    public var statistics: ListStatistics {
        UIThread.precondition("ListNode.statistics")
        var result = counts
        result.liveRows = records.count
        (result.measuresCompleted, result.measuresCancelled) = measureOutcomes
        return result
    }

    /// True while a drag, fling, bounce, animated scroll or the wheel (and its glide) is moving the list.
    /// - Thread: main
    @MainActor
    public var isScrolling: Bool {
        UIThread.precondition("ListNode.isScrolling")
        if case .idle = motion { return false }
        return true
    }

    // MARK: FrameParticipant

    /// False while the list moves, places rows or fades deleted ones out: `NodeHost.settle` waits
    /// for it. - Thread: main
    public var isSettled: Bool {
        !isScrolling && disappearingRows.isEmpty
            && !records.values.contains(where: { $0.slide.map { now - $0.start < Self.updateAnimationDuration } ?? false })
            && measuredRows.withLock { $0.isEmpty }
            && rowsNeedingMeasure.withLock { $0.isEmpty }
    }

    /// Moves the scroll position to `time`, takes in measured rows and updates every row's interface
    /// state. The host calls it once a frame. - Thread: main
    @MainActor
    public func frameWillStartDisplays(at time: Double) {
        UIThread.precondition("ListNode.frameWillStartDisplays")
        if time.isFinite { now = max(now, time) }
        guard isNodeLoaded else { return }
        if interfaceState.contains(.visible) { reportIfShowingNothing() }
        if needsReload && crossExtent > 0 { reloadData() }
        viewportDidChange()
        guard isReady else { return }
        if contentsScale != rowScale {
            // A new scale: rows are made and measured again at it, the old ones shown until then.
            rowScale = contentsScale
            if rowWidth > 0 { rowWidthDidChange(to: rowWidth) }
        }
        installMeasuredRows()
        measureInvalidatedRows()
        advanceMotion(to: now)
        updateRows()
        beginBatchFetchesIfNear()
    }

    /// Adds the visible row area and its unready part to the frame's record. - Thread: main
    @MainActor
    public func frameWillComposite(_ record: inout FrameRecord) {
        UIThread.precondition("ListNode.frameWillComposite")
        guard isReady, interfaceState.contains(.visible) else { return }
        let (area, missing) = measureCheckerboard()
        record.visibleCellArea += area
        record.checkerboardArea += missing
        counts.visibleRowArea += area
        counts.checkerboardArea += missing
        if showsRangeOverlay { rangeOverlay.update(for: self) }
    }

    // MARK: Geometry helpers

    /// The height assumed for `row` until it is measured: the data source's estimate, else
    /// `estimatedRowHeight`, else `defaultEstimatedRowHeight`, skipping each that is no estimate.
    func estimatedHeight(forRow row: Int) -> Double {
        // Pages are exactly as long as the viewport.
        if rowsFillViewport, viewportLength > 0 { return roundedToPixels(viewportLength) }
        let listEstimate = usableEstimate(estimatedRowHeight, named: "estimatedRowHeight")
        let estimate = usableEstimate(dataSource?.estimatedHeightForRow(at: row, in: self),
                                      named: "the data source's estimated height for row \(row)",
                                      fallback: listEstimate)
            ?? listEstimate ?? Self.defaultEstimatedRowHeight
        return roundedToPixels(estimate)
    }

    /// `value` when it is a height to assume; nil for none (nil, 0, NaN). A negative or infinite value
    /// is none too, and is reported once per list, naming the height used instead.
    private func usableEstimate(_ value: Double?, named name: @autoclosure () -> String,
                                fallback: Double? = nil) -> Double? {
        guard let value, value != 0, !value.isNaN else { return nil }
        guard value > 0, value.isFinite else {
            let used = fallback ?? Self.defaultEstimatedRowHeight
            reportOnce(.invalidProperty, property: "estimatedRowHeight",
                       "\(name()) is \(value), not a height; rows without an estimate are assumed \(used) points tall until measured")
            return nil
        }
        return value
    }

    /// Rounds up to the pixel grid, so offsets are exact sums.
    func roundedToPixels(_ value: Double) -> Double {
        PixelGeometry.alignedUp(value, scale: contentsScale)
    }

    /// The smallest offset at rest: 0, or for a short stack-from-bottom list the (negative) offset that
    /// puts its content at the bottom.
    var minimumOffset: Double {
        stacksFromBottom ? min(0, geometry.totalHeight - viewportLength) : 0
    }

    /// The largest offset at rest.
    var maximumOffset: Double {
        stacksFromBottom ? geometry.totalHeight - viewportLength : max(0, geometry.totalHeight - viewportLength)
    }

    func clamped(_ value: Double) -> Double {
        min(max(value, minimumOffset), max(minimumOffset, maximumOffset))
    }

    /// Handles a new size: a new width re-measures the rows.
    func viewportDidChange() {
        let size = bounds.size
        guard size != viewportSize else { return }
        viewportSize = size
        guard isNodeLoaded, crossExtent > 0 else { return }
        if needsReload {
            reloadData()
            return
        }
        if crossExtent != rowWidth || (rowsFillViewport && viewportLength != measuredViewportLength) {
            rowWidthDidChange(to: crossExtent)
        }
        if stacksFromBottom && isPinnedToBottom {
            offset = maximumOffset
        } else if !isScrolling {
            offset = clamped(offset)
        }
        lastRangeOffset = offset
        updateRows()
    }
}

// In extensions, so that only the members that implement them are UI-thread isolated: a list is
// made and configured on any thread like any node.
extension ListNode: FrameParticipant, WheelScrollable, TouchIntercepting {}

// MARK: - The scroll axis

/// Which way a `ListNode` scrolls. - Thread: any
public enum ListScrollDirection: Sendable, Hashable {
    case vertical
    case horizontal
}

extension ListNode {
    var isHorizontal: Bool { scrollDirection == .horizontal }

    /// The viewport's length along the scroll axis.
    var viewportLength: Double { isHorizontal ? bounds.width : bounds.height }

    /// Says once, on a list on screen (or the collection it serves), why it shows nothing when the
    /// cause is a mistake: no data source, or 0 points along the axis it scrolls while it has rows.
    private func reportIfShowingNothing() {
        let collection = (eventSupernode as? CollectionNode).flatMap { $0.list === self ? $0 : nil }
        let subject: Node = collection ?? self
        let kind = collection == nil ? "list" : "collection"
        let source: AnyObject? = collection.map { $0.dataSource } ?? dataSource
        if source == nil {
            let lost = collection.map { $0.hadDataSource } ?? hadDataSource
            subject.reportOnce(.showsNothing, property: "dataSource",
                               lost ? "its data source was let go, so the \(kind) shows nothing: a \(kind) holds its data source weakly; keep it alive (in the controller that shows it, say)"
                                    : "it is on screen with no data source, so the \(kind) shows nothing: set its dataSource")
        } else if viewportLength <= 0 && crossExtent > 0 && numberOfRows > 0 {
            let axis = isHorizontal ? "wide" : "tall"
            subject.reportOnce(.showsNothing, property: "scroll extent",
                               "it is on screen but 0 pt \(axis), so the \(kind) shows none of its \(numberOfRows) rows: a scrolling node has no length of its own along its axis; give it one (a size), or flexGrow(1) on it or on the wrapper that holds it in a stack")
        }
    }

    /// The viewport's extent across the scroll axis: what rows are measured at.
    var crossExtent: Double { isHorizontal ? bounds.height : bounds.width }

    /// A point's coordinate along the scroll axis.
    func mainCoordinate(of point: Point) -> Double { isHorizontal ? point.x : point.y }

    /// A row's frame in content coordinates from where it starts along the axis and its length.
    func rowFrame(at position: Double, length: Double) -> Rect {
        isHorizontal ? Rect(x: position, y: 0, width: length, height: rowWidth)
                     : Rect(x: 0, y: position, width: rowWidth, height: length)
    }
}
