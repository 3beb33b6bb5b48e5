import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Synchronization

/// What the list knows about one row near the viewport: its node (once made), the measure job making
/// it, and how the row was last placed.
/// - Thread: main only (a reference passes through a worker inside `MeasuredRow`, untouched there).
@MainActor
final class RowRecord {
    /// The row's index now (batch updates renumber it).
    var row: Int
    /// The row's node, once measured.
    var node: Node?
    /// The node being replaced by a reload or a new width: shown until the new node is ready.
    var outgoingNode: Node?
    /// The measure job in flight, if any.
    var job: DisplayJob?
    /// Bumped by reloads; a measured result from an older generation is dropped.
    var generation = 0
    /// Set by a reload or a new width: the row needs a new node although it may still show one.
    var wantsNewNode = false
    /// Set when the row leaves the measure range; results that arrive later are dropped.
    var isReleased = false
    /// The drawing nodes of the row's subtree (a rasterizing node stands for its subtree), for the
    /// checkerboard figure and display distances.
    var drawingNodes: [Node] = []
    /// The nodes of the row's subtree that load content (`Node.loadsContent`, such as image nodes),
    /// drawn by themselves or rasterized into an ancestor: a row is not ready while one is still
    /// loading, and their loads are queued by distance too.
    var loadingNodes: [Node] = []
    /// True while the row's layer is in the list's content layer.
    var isAttached = false
    /// The y at which the node's frame was last set (NaN: not placed).
    var placedY = Double.nan
    /// The display distance last given to the row's nodes (NaN: none yet).
    var distance = Double.nan
    /// The scroll direction `distance` was measured in.
    var distanceDirection = 0.0
    /// True once every drawing node of the row shows current contents (while it stays in display).
    var isDrawn = false
    /// The node's frames are set but its `layout()` hooks have not run: they run when it first enters
    /// the display state, before it becomes visible.
    var layoutHooksPending = false
    /// The interface state the list last gave the node (only the list changes it).
    var appliedState: InterfaceState = []
    /// A slide left by an animated batch update: the row is drawn `delta` points from its place,
    /// easing to zero from `start`.
    var slide: (delta: Double, start: Double)?
    /// An animated fade-in: started at `start`; `pending` until the node arrives.
    var fadeIn: (start: Double, pending: Bool)?
    /// Bumped each time the row's node is sent to be measured again; an older result is dropped.
    var remeasureRequest = 0

    init(row: Int) { self.row = row }
}

/// A row node made and measured on a worker, waiting for the UI thread.
/// - Thread: made on a display worker, consumed on the UI thread; the node is not touched in between.
struct MeasuredRow: @unchecked Sendable {
    /// The list's record of the row: UI-thread state, checked on every access.
    let boundRecord: UIThreadBound<RowRecord>
    @MainActor var record: RowRecord { boundRecord.value }
    let generation: Int
    let node: Node
    /// The node's layout at the list's width, applied as it is on the UI thread (no measuring there).
    let layout: Layout
    /// The row's size: the list's width and the measured height rounded to the pixel grid.
    let size: Size
    /// The node's layout version when it was measured: a different one at install means the row
    /// changed in between and is measured again.
    let layoutVersion: Int
    /// For a row measured again (the same node): the record's `remeasureRequest` it answers.
    var remeasureRequest: Int? = nil
}

/// Counts kept by measure jobs on workers.
/// - Thread: any
final class MeasureCounters: Sendable {
    let completed = Atomic<Int>(0)
    let cancelled = Atomic<Int>(0)
}

/// A row node on its way to a worker to be measured again.
/// - Thread: handed from the UI thread to one worker and back inside a `MeasuredRow`; only measured there.
private struct UncheckedNode: @unchecked Sendable {
    let node: Node
    init(_ node: Node) { self.node = node }
}

/// A deleted row fading out where it was.
struct DisappearingRow {
    let node: Node
    let start: Double
}

extension ListNode {
    // MARK: Measuring

    /// The size range rows are measured in: the list's width, any height.
    var rowSizeRange: SizeRange {
        if isHorizontal {
            let length = rowsFillViewport ? viewportLength : 0
            return SizeRange(min: Size(width: length, height: rowWidth),
                             max: Size(width: rowsFillViewport ? length : .infinity, height: rowWidth))
        }
        let length = rowsFillViewport ? viewportLength : 0
        return SizeRange(min: Size(width: rowWidth, height: length),
                         max: Size(width: rowWidth, height: rowsFillViewport ? length : .infinity))
    }

    /// Queues the row's node block and measurement on the display scheduler.
    func scheduleMeasure(_ record: RowRecord, priority: DisplayPriority) {
        guard let dataSource else { return }
        let block = dataSource.nodeBlockForRow(at: record.row, in: self)
        let range = rowSizeRange
        let scale = contentsScale
        let horizontal = isHorizontal
        let generation = record.generation
        let inbox = measuredRows
        let counters = measureCounters
        let recordBox = UIThreadBound(record)
        counts.measuresScheduled += 1
        record.distance = priority.isVisible ? 0 : priority.distance
        record.job = runtime.scheduler.schedule(
            priority: priority,
            kind: .measure,
            onDropped: { counters.cancelled.add(1, ordering: .relaxed) },
            work: { isCancelled in
                guard !isCancelled() else {
                    counters.cancelled.add(1, ordering: .relaxed)
                    return .cancelled
                }
                let (node, layout, size) = ListNode.makeAndMeasure(block, in: range, scale: scale, horizontal: horizontal)
                let result = MeasuredRow(boundRecord: recordBox, generation: generation, node: node,
                                         layout: layout, size: size, layoutVersion: node.layoutVersion)
                inbox.withLock { $0.append(result) }
                UIWakeup.shared.wake()
                counters.completed.add(1, ordering: .relaxed)
                return .completed
            })
    }

    /// Makes the nodes of rows in `measure` that have none, here on the UI thread (`loadsRowsOnMainThread`).
    func makeRowsOnMainThread(in measure: ClosedRange<Int>?) -> [MeasuredRow] {
        guard let measure, let dataSource else { return [] }
        var made: [MeasuredRow] = []
        for row in measure {
            let record = records[row] ?? RowRecord(row: row)
            records[row] = record
            guard record.node == nil || record.wantsNewNode else { continue }
            record.job?.cancel()
            record.job = nil
            let block = dataSource.nodeBlockForRow(at: row, in: self)
            let (node, layout, size) = Self.makeAndMeasure(block, in: rowSizeRange, scale: contentsScale,
                                                           horizontal: isHorizontal)
            made.append(MeasuredRow(boundRecord: UIThreadBound(record), generation: record.generation, node: node,
                                    layout: layout, size: size, layoutVersion: node.layoutVersion))
        }
        return made
    }

    /// Runs a node block and measures the node at the list's width. The layout carries every
    /// descendant's layout, so applying it on the UI thread measures nothing again.
    /// - Thread: display worker (or main for `loadsRowsOnMainThread`)
    nonisolated static func makeAndMeasure(_ block: RowNodeBlock, in range: SizeRange, scale: Double,
                                           horizontal: Bool) -> (Node, Layout, Size) {
        let node = block()
        // The row measures and draws at its list's scale (it is not the list's subnode).
        node.contentsScale = scale
        let layout = node.layoutThatFits(range)
        return (node, layout, rowExtent(of: layout, in: range, scale: scale, horizontal: horizontal))
    }

    /// A measured row's extent, as the list keeps it: `width` across the scroll axis (the range's),
    /// `height` along it (the layout's, rounded up to the pixel grid).
    nonisolated static func rowExtent(of layout: Layout, in range: SizeRange, scale: Double, horizontal: Bool) -> Size {
        let length = PixelGeometry.alignedUp(horizontal ? layout.size.width : layout.size.height, scale: scale)
        return Size(width: horizontal ? range.max.height : range.max.width, height: max(0, length))
    }

    /// Sends the rows whose node tree called `setNeedsLayout` (from any thread) to be measured again
    /// on a worker, keeping their nodes: a text that expands, an image that learns its size. The new
    /// height is installed like a first measurement, the anchor kept in place.
    func measureInvalidatedRows() {
        let invalidated = rowsNeedingMeasure.withLock { set -> Set<ObjectIdentifier> in
            defer { set.removeAll(keepingCapacity: true) }
            return set
        }
        guard !invalidated.isEmpty else { return }
        for record in records.values {
            guard let node = record.node, invalidated.contains(ObjectIdentifier(node)),
                  !record.wantsNewNode, !record.isReleased else { continue }
            scheduleRemeasure(record, of: node)
        }
    }

    private func scheduleRemeasure(_ record: RowRecord, of node: Node) {
        record.remeasureRequest += 1
        let request = record.remeasureRequest
        let generation = record.generation
        let range = rowSizeRange
        let scale = contentsScale
        let horizontal = isHorizontal
        let inbox = measuredRows
        let recordBox = UIThreadBound(record)
        let isVisible = node.interfaceState.contains(.visible)
        // The node crosses to a worker to be measured (measuring is allowed on any thread) and comes
        // back inside the result; nothing else touches it there.
        let nodeBox = UncheckedNode(node)
        counts.rowsRemeasured += 1
        _ = runtime.scheduler.schedule(
            priority: isVisible ? .visible : .offscreen(distance: record.distance.isFinite ? record.distance : 0),
            kind: .measure,
            work: { isCancelled in
                guard !isCancelled() else { return .cancelled }
                let node = nodeBox.node
                let layout = node.layoutThatFits(range)
                var result = MeasuredRow(boundRecord: recordBox, generation: generation, node: node, layout: layout,
                                         size: ListNode.rowExtent(of: layout, in: range, scale: scale, horizontal: horizontal),
                                         layoutVersion: node.layoutVersion)
                result.remeasureRequest = request
                inbox.withLock { $0.append(result) }
                UIWakeup.shared.wake()
                return .completed
            })
    }

    /// Observes the row node's tree for `setNeedsLayout`.
    private func observeLayoutInvalidation(of node: Node) {
        let requests = rowsNeedingMeasure
        let identifier = ObjectIdentifier(node)
        node.state.withLock { $0.rootLayoutInvalidationObserver = { requests.withLock { _ = $0.insert(identifier) } } }
    }

    /// Takes in the rows measured on workers since the last frame.
    func installMeasuredRows() {
        let results = measuredRows.withLock { queue -> [MeasuredRow] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        if !results.isEmpty { install(results) }
    }

    /// Gives measured rows their nodes and heights, keeping the anchor (the first visible row, or the
    /// bottom of a pinned stack-from-bottom list) where it is on screen.
    func install(_ results: [MeasuredRow]) {
        let anchor = captureAnchor(.automatic)
        for result in results {
            let record = result.record
            guard !record.isReleased, record.generation == result.generation, records[record.row] === record else {
                continue  // stale: the row left, or was reloaded since; the node is released here
            }
            if let request = result.remeasureRequest {
                guard record.node === result.node, request == record.remeasureRequest, result.size.width == rowWidth else {
                    continue  // a newer measurement, a new node or a new width supersedes it
                }
                installRemeasured(result, into: record)
                continue
            }
            record.job = nil
            guard result.size.width == rowWidth else {
                continue  // measured at an old width; the next pass measures it again
            }
            record.wantsNewNode = false
            if let previous = record.node {
                // A reload: the previous node stays on screen until the new one is ready.
                if let older = record.outgoingNode { retireOutgoing(older, of: record) }
                if previous.interfaceState.contains(.display) {
                    record.outgoingNode = previous
                } else {
                    previous.setInterfaceState([])
                    disown(previous)
                    counts.nodesReleased += 1
                }
                record.isAttached = false
            }
            let node = result.node
            let changedSinceMeasured = node.layoutVersion != result.layoutVersion
            node.isTransactionContainer = true
            counts.nodesMade += 1
            let row = record.row
            if geometry.heights[row] != result.size.height { counts.heightCorrections += 1 }
            geometry.setHeight(result.size.height, ofRow: row, measured: true)
            node.frame = rowFrame(at: geometry.offset(ofRow: row), length: result.size.height)
            // Frames now (preloading needs sizes); the `layout()` hooks once the row enters display.
            node.applyLayout(result.layout, runsLayoutHooks: false)
            record.layoutHooksPending = true
            record.node = node
            adopt(node)
            dirtyRows.insert(row)
            record.appliedState = []
            record.isDrawn = false
            record.placedY = .nan
            record.distance = .nan
            (record.drawingNodes, record.loadingNodes) = Self.readinessNodes(in: node)
            if let fade = record.fadeIn, fade.pending {
                record.fadeIn = (now, false)
                node.opacity = 0
            }
            observeLayoutInvalidation(of: node)
            if changedSinceMeasured { scheduleRemeasure(record, of: node) }
        }
        restore(anchor)
    }

    /// A row node measured again: its new height and frames; the node and its states stay.
    private func installRemeasured(_ result: MeasuredRow, into record: RowRecord) {
        let node = result.node
        let row = record.row
        let changedSinceMeasured = node.layoutVersion != result.layoutVersion
        let delta = result.size.height - geometry.heights[row]
        geometry.setHeight(result.size.height, ofRow: row, measured: true)
        // The rows below a row on screen that grew or shrank slide to their new places (the first
        // visible row and those above it stay: the anchor keeps them, or the offset does).
        if animatesRowHeightChanges, delta != 0, record.isAttached, let first = visibleRows?.lowerBound, row >= first {
            for other in records.values where other.row > row && other.isAttached {
                let remaining = other.slide.map { $0.delta * (1 - ScrollPhysics.easeOut((now - $0.start) / Self.updateAnimationDuration)) } ?? 0
                other.slide = (delta: remaining - delta, start: now)
            }
        }
        node.frame = rowFrame(at: geometry.offset(ofRow: row), length: result.size.height)
        node.applyLayout(result.layout, runsLayoutHooks: !record.layoutHooksPending)
        dirtyRows.insert(row)
        record.placedY = .nan
        record.isDrawn = false
        (record.drawingNodes, record.loadingNodes) = Self.readinessNodes(in: node)
        if changedSinceMeasured { scheduleRemeasure(record, of: node) }
    }

    /// A new width: every row's height is an estimate again (the old heights serve as estimates), and
    /// the rows near the viewport are made again at the new width; their old nodes stay on screen
    /// until the new ones are ready.
    func rowWidthDidChange(to width: Double) {
        rowWidth = width
        measuredViewportLength = viewportLength
        lastPass = nil
        geometry.markAllUnmeasured()
        for record in records.values {
            record.generation += 1
            record.job?.cancel()
            record.job = nil
            record.wantsNewNode = true
            if let node = record.node, record.outgoingNode == nil, node.interfaceState.contains(.display) {
                // Kept attached as the outgoing node; the new node takes the record when it arrives.
                record.outgoingNode = node
                record.node = nil
                record.isAttached = false
            } else if let node = record.node {
                node.setInterfaceState([])
                node.layerIfLoaded?.removeFromSuperlayer()
                disown(node)
                counts.nodesReleased += 1
                record.node = nil
                record.isAttached = false
            }
            record.drawingNodes = []
        }
    }

    // MARK: Readiness and the checkerboard

    /// The nodes of a row's subtree that draw contents (a rasterizing node stands for its subtree).
    /// The nodes whose contents make a row ready: the drawing nodes with their own contents (a
    /// rasterizing node stands for its subtree) and every image node, wherever it is drawn.
    static func readinessNodes(in root: Node) -> (drawing: [Node], loading: [Node]) {
        var drawing: [Node] = []
        var loading: [Node] = []
        var stack: [(node: Node, rasterized: Bool)] = [(root, false)]
        while let (node, rasterized) = stack.popLast() {
            let (hidden, empty, rasterizes) = node.state.withLock {
                ($0.isHidden, $0.frame.sanitized.isEmpty, $0.shouldRasterizeDescendants)
            }
            if hidden { continue }
            if !rasterized && node.drawsContents && !empty { drawing.append(node) }
            if node.loadsContent && !empty { loading.append(node) }
            for subnode in node.subnodes { stack.append((subnode, rasterized || rasterizes)) }
        }
        return (drawing, loading)
    }

    /// True when the row's drawing nodes show current contents and its images have loaded.
    static func isDrawn(_ record: RowRecord) -> Bool {
        record.drawingNodes.allSatisfy(\.showsCurrentContents) && record.loadingNodes.allSatisfy(\.isContentReady)
    }

    /// True when the row is ready, or still shows the node a reload or a new width is replacing (whole,
    /// if out of date): either way the screen shows the row, not a gap.
    func isRowShowingContents(_ record: RowRecord) -> Bool {
        if isRowReady(record) { return true }
        return record.outgoingNode?.layerIfLoaded?.superlayer != nil
    }

    /// True when every drawing node of the row shows contents drawn from its current state. A row
    /// found drawn stays drawn until it leaves the display range or a pass finds it drawing again, so
    /// only rows still being drawn are looked at node by node.
    func isRowReady(_ record: RowRecord) -> Bool {
        guard record.node != nil, record.isAttached, record.appliedState.contains(.display) else { return false }
        if !record.isDrawn { record.isDrawn = Self.isDrawn(record) }
        return record.isDrawn
    }

    /// The visible row area (square points) and the part of it not ready, this frame.
    func measureCheckerboard() -> (area: Double, missing: Double) {
        let top = offset, bottom = offset + viewportLength
        guard let visible = geometry.rows(overlapping: top, bottom) else { return (0, 0) }
        var area = 0.0, missing = 0.0
        var y = geometry.offset(ofRow: visible.lowerBound)
        for row in visible {
            let height = geometry.heights[row]
            let shown = max(0, min(y + height, bottom) - max(y, top)) * rowWidth
            area += shown
            if !(records[row].map(isRowShowingContents) ?? false) { missing += shown }
            y += height
        }
        return (area, missing)
    }

    // MARK: Anchors

    /// What to keep in place across a change of heights or rows.
    enum AnchorSnapshot {
        case none
        case bottom(maximumOffset: Double)
        case row(Int, screenY: Double)
        case held
    }

    func captureAnchor(_ anchor: ListAnchor) -> AnchorSnapshot {
        if heldTarget != nil { return .held }
        switch anchor {
        case .contentOffset:
            return .none
        case .automatic where stacksFromBottom && isPinnedToBottom:
            return .bottom(maximumOffset: maximumOffset)
        case .automatic, .firstVisibleRow:
            guard let visible = geometry.rows(overlapping: offset, offset + viewportLength) else { return .none }
            return .row(visible.lowerBound, screenY: geometry.offset(ofRow: visible.lowerBound) - offset)
        case .lastVisibleRow:
            guard let visible = geometry.rows(overlapping: offset, offset + viewportLength) else { return .none }
            return .row(visible.upperBound, screenY: geometry.offset(ofRow: visible.upperBound) - offset)
        }
    }

    /// Moves the content so the anchor is where it was. `newRow` maps the anchor row to its index after
    /// a batch update (identity otherwise).
    func restore(_ anchor: AnchorSnapshot, newRow: (Int) -> Int? = { $0 }) {
        switch anchor {
        case .none:
            break
        case .held:
            if let heldTarget { shiftContent(by: resolve(heldTarget) - offset) }
        case .bottom(let previousMaximum):
            shiftContent(by: maximumOffset - previousMaximum)
        case let .row(row, screenY):
            guard let mapped = newRow(row), mapped >= 0, mapped < geometry.count else { return }
            shiftContent(by: geometry.offset(ofRow: mapped) - screenY - offset)
        }
    }

    /// Moves the viewport and everything measured from it by `delta`, without it counting as a scroll.
    func shiftContent(by delta: Double) {
        guard delta != 0, delta.isFinite else { return }
        offset += delta
        lastRangeOffset += delta
        motion.shift(by: delta)
    }

    /// True once a held `scroll(to:)` target no longer needs holding: its row and every visible row are
    /// measured.
    func isHeldTargetSettled(_ ranges: RowRanges) -> Bool {
        guard let heldTarget else { return true }
        if case let .row(row, _) = heldTarget, row < geometry.count, !geometry.isMeasured(row) { return false }
        if case .end = heldTarget, geometry.count > 0, !geometry.isMeasured(geometry.count - 1) { return false }
        guard let visible = ranges.visible else { return true }
        return visible.allSatisfy(geometry.isMeasured)
    }

    /// Measure jobs' outcomes so far.
    var measureOutcomes: (completed: Int, cancelled: Int) {
        (measureCounters.completed.load(ordering: .relaxed), measureCounters.cancelled.load(ordering: .relaxed))
    }
}

