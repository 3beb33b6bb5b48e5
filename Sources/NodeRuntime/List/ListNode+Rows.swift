import Compositor
import Foundation
import Synchronization

/// What the list knows about one row near the viewport: its node (once made), the measure job making
/// it, and how the row was last placed.
/// - Thread: main only (a reference passes through a worker inside `MeasuredRow`, untouched there).
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
    /// The drawing nodes of the row's subtree, for the checkerboard figure and display distances.
    var drawingNodes: [Node] = []
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
    /// The interface state the list last gave the node (only the list changes it).
    var appliedState: InterfaceState = []
    /// A slide left by an animated batch update: the row is drawn `delta` points from its place,
    /// easing to zero from `start`.
    var slide: (delta: Double, start: Double)?
    /// An animated fade-in: started at `start`; `pending` until the node arrives.
    var fadeIn: (start: Double, pending: Bool)?

    init(row: Int) { self.row = row }
}

/// A row node made and measured on a worker, waiting for the UI thread.
/// - Thread: made on a display worker, consumed on the UI thread; the node is not touched in between.
struct MeasuredRow: @unchecked Sendable {
    let record: RowRecord
    let generation: Int
    let node: Node
    /// The node's layout at the list's width, applied as it is on the UI thread (no measuring there).
    let layout: Layout
    /// The row's size: the list's width and the measured height rounded to the pixel grid.
    let size: Size
}

/// Counts kept by measure jobs on workers.
/// - Thread: any
final class MeasureCounters: Sendable {
    let completed = Atomic<Int>(0)
    let cancelled = Atomic<Int>(0)
}

/// A deleted row fading out where it was.
struct DisappearingRow {
    let node: Node
    let start: Double
}

/// The rows each interface state covers this frame, as index intervals (rows are contiguous in every
/// range, which nest: visible ⊆ display ⊆ preload ⊆ measure).
struct RowRanges {
    var visible: ClosedRange<Int>?
    var display: ClosedRange<Int>?
    var preload: ClosedRange<Int>?
    var measure: ClosedRange<Int>?
}

extension ListNode {
    /// Seconds animated batch updates take.
    static let updateAnimationDuration = 0.25
    /// How far beyond the viewport, in screenfuls, displayed rows keep their layers on the list. Rows
    /// further out keep their contents but leave the layer tree, so the compositor walks a screen's
    /// worth of rows whatever the display range.
    static let attachmentMargin = 0.25

    // MARK: Ranges

    /// The current tuning, nested.
    var currentTuning: ListRangeTuning {
        (currentRangeMode == .full ? fullRangeTuning : minimumRangeTuning).nested
    }

    var currentRangeMode: ListRangeMode {
        guard interfaceState.contains(.visible), hasScrolledSinceAppearing else { return .minimum }
        if let delay = idleRangeDelay, !isScrolling, now - lastScrollTime > delay { return .minimum }
        return .full
    }

    /// The content interval an extent covers around the viewport, leading in the scroll direction.
    func interval(for extent: ListRangeTuning.Extent) -> (top: Double, bottom: Double) {
        let height = bounds.height
        let forward = leadingDirection > 0
        let before = (forward ? extent.trailing : extent.leading) * height
        let after = (forward ? extent.leading : extent.trailing) * height
        return (offset - before, offset + height + after)
    }

    func computeRanges(_ tuning: ListRangeTuning) -> RowRanges {
        func rows(_ interval: (top: Double, bottom: Double)) -> ClosedRange<Int>? {
            geometry.rows(overlapping: interval.top, interval.bottom)
        }
        return RowRanges(visible: rows((offset, offset + bounds.height)),
                         display: rows(interval(for: tuning.display)),
                         preload: rows(interval(for: tuning.preload)),
                         measure: rows(interval(for: tuning.measure)))
    }

    /// What the list's own state lets its rows have: a list off screen keeps its rows off screen.
    var rowStateCap: InterfaceState { interfaceState.union(.measureLayout) }

    // MARK: The per-frame pass

    /// Brings the rows near the viewport to the states their ranges give them, releases rows that left
    /// the measure range, places the attached rows and moves the content layer.
    ///
    /// The ranges are contiguous intervals of rows, so between two frames only the rows at their moving
    /// edges change state: a pass visits those (the symmetric differences of this frame's intervals and
    /// the last frame's), the rows still being drawn, and the rows that changed (new nodes). That keeps a
    /// frame's work proportional to how far the list moved, not to the size of the ranges. A full pass
    /// over the measure range happens when something moves every row at once: the first pass, a flip of
    /// direction (every distance changes), the list's own state, a batch update, a reload, a new width.
    func updateRows() {
        guard isReady else { return }
        let moved = offset - lastRangeOffset
        if moved != 0 {
            leadingDirection = moved > 0 ? 1 : -1
            lastRangeOffset = offset
            hasScrolledSinceAppearing = true
            lastScrollTime = now
        }
        let tuning = currentTuning
        var ranges = computeRanges(tuning)
        // Rows made on this thread change heights: take them in, then look again (a few rounds at most,
        // since each round measures every row the ranges reach).
        if loadsRowsOnMainThread {
            for _ in 0..<4 {
                let made = makeRowsOnMainThread(in: ranges.measure)
                if made.isEmpty { break }
                install(made)
                ranges = computeRanges(tuning)
            }
        }
        let context = PassContext(list: self, ranges: ranges, tuning: tuning)
        if let last = lastPass, last.direction == leadingDirection, last.cap == context.cap {
            var visit = dirtyRows.union(pendingRows)
            Self.addDifference(last.ranges.visible, ranges.visible, to: &visit)
            Self.addDifference(last.ranges.display, ranges.display, to: &visit)
            Self.addDifference(last.ranges.preload, ranges.preload, to: &visit)
            Self.addDifference(last.ranges.measure, ranges.measure, to: &visit)
            Self.addDifference(last.attached, context.attached, to: &visit)
            for row in visit.sorted() {
                if ranges.measure?.contains(row) == true {
                    applyRow(row, y: geometry.offset(ofRow: row), context)
                } else if let record = records[row] {
                    release(record)
                    records[row] = nil
                    pendingRows.remove(row)
                }
            }
        } else {
            releaseRows(outside: ranges.measure)
            pendingRows.removeAll()
            if let measure = ranges.measure {
                var y = geometry.offset(ofRow: measure.lowerBound)
                for row in measure {
                    applyRow(row, y: y, context)
                    y += geometry.heights[row]
                }
            }
        }
        dirtyRows.removeAll()
        lastPass = PassState(ranges: ranges, attached: context.attached, direction: leadingDirection, cap: context.cap)
        retireDisappearingRows()
        placeAttachedRows()
        contentLayer?.frame = Rect(x: 0, y: -offset, width: 0, height: 0)
        if heldTarget != nil, isHeldTargetSettled(ranges) { heldTarget = nil }
        if stacksFromBottom, !isDragging { isPinnedToBottom = offset >= maximumOffset - 0.5 }
    }

    /// Adds the rows in exactly one of `a` and `b` to `set`.
    static func addDifference(_ a: ClosedRange<Int>?, _ b: ClosedRange<Int>?, to set: inout Set<Int>) {
        guard a != b else { return }
        guard let a, let b, a.overlaps(b) else {
            if let a { set.formUnion(a) }
            if let b { set.formUnion(b) }
            return
        }
        for row in min(a.lowerBound, b.lowerBound)..<max(a.lowerBound, b.lowerBound) { set.insert(row) }
        if a.upperBound != b.upperBound {
            for row in (min(a.upperBound, b.upperBound) + 1)...max(a.upperBound, b.upperBound) { set.insert(row) }
        }
    }

    private func releaseRows(outside measure: ClosedRange<Int>?) {
        guard !records.isEmpty else { return }
        let gone = records.values.filter { record in measure.map { !$0.contains(record.row) } ?? true }
        for record in gone {
            release(record)
            records[record.row] = nil
        }
    }

    /// What every row of one pass is measured against.
    struct PassContext {
        let ranges: RowRanges
        let cap: InterfaceState
        let top: Double, bottom: Double
        let attachTop: Double, attachBottom: Double
        /// Rows whose layers belong on the list: displayed and within the attachment margin.
        let attached: ClosedRange<Int>?
        /// Added to the distance of rows behind the viewport, so they rank after every row ahead of it
        /// that may soon be drawn.
        let trailingPenalty: Double

        init(list: ListNode, ranges: RowRanges, tuning: ListRangeTuning) {
            self.ranges = ranges
            cap = list.rowStateCap
            let height = list.bounds.height
            top = list.offset
            bottom = list.offset + height
            attachTop = top - height * ListNode.attachmentMargin
            attachBottom = bottom + height * ListNode.attachmentMargin
            if let display = ranges.display, let near = list.geometry.rows(overlapping: attachTop, attachBottom),
               display.overlaps(near) {
                attached = max(display.lowerBound, near.lowerBound)...min(display.upperBound, near.upperBound)
            } else {
                attached = nil
            }
            trailingPenalty = height * max(1, tuning.display.leading)
        }
    }

    /// The ranges and conditions of the last pass, for the next one to visit only what changed.
    struct PassState {
        var ranges: RowRanges
        var attached: ClosedRange<Int>?
        var direction: Double
        var cap: InterfaceState
    }

    /// Brings one row (in the measure range, at `y`) up to date: its record, measure job, distance,
    /// interface state and layer.
    private func applyRow(_ row: Int, y: Double, _ context: PassContext) {
        let rowHeight = geometry.heights[row]
        let record: RowRecord
        if let existing = records[row] {
            record = existing
        } else {
            record = RowRecord(row: row)
            records[row] = record
        }
        let ranges = context.ranges
        let isVisible = ranges.visible?.contains(row) == true
        let distance: Double
        if isVisible {
            distance = 0
        } else if y >= context.bottom {
            distance = leadingDirection > 0 ? y - context.bottom : y - context.bottom + context.trailingPenalty
        } else {
            let gap = max(0, context.top - (y + rowHeight))
            distance = leadingDirection < 0 ? gap : gap + context.trailingPenalty
        }

        if (record.node == nil || record.wantsNewNode) && record.job == nil && !loadsRowsOnMainThread {
            scheduleMeasure(record, priority: isVisible ? .visible : .offscreen(distance: distance))
        } else if let job = record.job {
            // Reached when the row becomes visible or the direction flips: the only changes that
            // reorder waiting jobs.
            job.setPriority(isVisible ? .visible : .offscreen(distance: distance))
        }
        guard let node = record.node else {
            pendingRows.remove(row)
            return
        }

        var bits = InterfaceState.measureLayout.rawValue
        if ranges.preload?.contains(row) == true { bits |= InterfaceState.preload.rawValue }
        if ranges.display?.contains(row) == true { bits |= InterfaceState.display.rawValue }
        if isVisible { bits |= InterfaceState.visible.rawValue }
        let target = InterfaceState(rawValue: bits & context.cap.rawValue)

        // Distances first, so draws and decodes started by the state change are queued in order.
        // While the list keeps its direction every distance shrinks or grows by the same amount, which
        // keeps the queue's order: only rows with draws still to come, new rows and a flip of direction
        // need new values.
        let isDrawing = target.contains(.display) && !record.isDrawn
        if target.contains(.preload),
           record.distance.isNaN || record.distanceDirection != leadingDirection
            || (isDrawing && abs(distance - record.distance) >= 1) {
            record.distance = distance
            record.distanceDirection = leadingDirection
            node.displayDistance = distance
            for drawing in record.drawingNodes where drawing !== node { drawing.displayDistance = distance }
        }
        transition(record, node: node, to: target)
        if !target.contains(.display) {
            record.isDrawn = false
        } else if !record.isDrawn {
            record.isDrawn = record.drawingNodes.allSatisfy(\.showsCurrentContents)
        }
        if target.contains(.display) && y < context.attachBottom && y + rowHeight > context.attachTop {
            attach(record)
        } else {
            detach(record)
        }
        // Rows still being drawn (or swapping a reloaded node) are visited every frame.
        if (target.contains(.display) && !record.isDrawn) || record.outgoingNode != nil {
            pendingRows.insert(row)
        } else {
            pendingRows.remove(row)
        }
    }

    /// Moves a row's node to `target` one step at a time.
    func transition(_ record: RowRecord, node: Node, to target: InterfaceState) {
        guard target != record.appliedState || record.outgoingNode != nil else { return }
        record.appliedState = target
        let current = node.interfaceState
        if current != target {
            // Raw bits: this runs for every row near the viewport, every frame.
            if current.rawValue & ~target.rawValue != 0 {
                node.setInterfaceState(InterfaceState(rawValue: current.rawValue & target.rawValue))
            }
            if target != node.interfaceState { node.enterInterfaceState(target) }
        }
        if !target.contains(.display), let outgoing = record.outgoingNode {
            retireOutgoing(outgoing, of: record)
        }
    }

    func attach(_ record: RowRecord) {
        guard !record.isAttached, let node = record.node, let contentLayer else { return }
        record.isAttached = true
        record.placedY = .nan
        contentLayer.addSublayer(node.layer)
    }

    func detach(_ record: RowRecord) {
        guard record.isAttached else { return }
        record.isAttached = false
        record.node?.layerIfLoaded?.removeFromSuperlayer()
    }

    /// Ends a row's life on the list: its job is cancelled and its node leaves every state and the
    /// list. Its measured height stays.
    func release(_ record: RowRecord) {
        record.isReleased = true
        pendingRows.remove(record.row)
        if let job = record.job {
            job.cancel()
            record.job = nil
        }
        detach(record)
        if let outgoing = record.outgoingNode { retireOutgoing(outgoing, of: record) }
        if let node = record.node {
            node.setInterfaceState([])
            node.layerIfLoaded?.removeFromSuperlayer()
            counts.nodesReleased += 1
        }
        record.node = nil
        record.drawingNodes = []
    }

    func retireOutgoing(_ node: Node, of record: RowRecord) {
        node.setInterfaceState([])
        node.layerIfLoaded?.removeFromSuperlayer()
        record.outgoingNode = nil
        counts.nodesReleased += 1
    }

    /// Sets the frames of attached rows whose place changed, with any slide or fade still running, and
    /// drops the old node of a reloaded row once the new one is ready.
    private func placeAttachedRows() {
        for record in records.values where record.isAttached {
            guard let node = record.node else { continue }
            var y = geometry.offset(ofRow: record.row)
            if let slide = record.slide {
                let progress = (now - slide.start) / Self.updateAnimationDuration
                if progress >= 1 {
                    record.slide = nil
                } else {
                    y += slide.delta * (1 - ScrollPhysics.easeOut(progress))
                }
            }
            if y != record.placedY {
                record.placedY = y
                node.frame = Rect(x: 0, y: y, width: rowWidth, height: geometry.heights[record.row])
            }
            if let fade = record.fadeIn, !fade.pending {
                let progress = (now - fade.start) / Self.updateAnimationDuration
                if progress >= 1 {
                    record.fadeIn = nil
                    node.opacity = 1
                } else {
                    node.opacity = ScrollPhysics.easeOut(progress)
                }
            }
            if let outgoing = record.outgoingNode, isRowReady(record) {
                retireOutgoing(outgoing, of: record)
            }
        }
    }

    private func retireDisappearingRows() {
        guard !disappearingRows.isEmpty else { return }
        disappearingRows.removeAll { row in
            let progress = (now - row.start) / Self.updateAnimationDuration
            if progress >= 1 {
                row.node.setInterfaceState([])
                row.node.layerIfLoaded?.removeFromSuperlayer()
                counts.nodesReleased += 1
                return true
            }
            row.node.opacity = 1 - ScrollPhysics.easeOut(progress)
            return false
        }
    }

    // MARK: Measuring

    /// The size range rows are measured in: the list's width, any height.
    var rowSizeRange: SizeRange {
        SizeRange(min: Size(width: rowWidth, height: 0), max: Size(width: rowWidth, height: .infinity))
    }

    /// Queues the row's node block and measurement on the display scheduler.
    func scheduleMeasure(_ record: RowRecord, priority: DisplayPriority) {
        guard let dataSource else { return }
        let block = dataSource.nodeBlockForRow(at: record.row, in: self)
        let range = rowSizeRange
        let scale = runtime.contentsScale
        let generation = record.generation
        let inbox = measuredRows
        let counters = measureCounters
        let recordBox = UncheckedSendable(record)
        counts.measuresScheduled += 1
        record.distance = priority.isVisible ? 0 : priority.distance
        record.job = runtime.scheduler.schedule(
            priority: priority,
            onDropped: { counters.cancelled.add(1, ordering: .relaxed) },
            work: { isCancelled in
                guard !isCancelled() else {
                    counters.cancelled.add(1, ordering: .relaxed)
                    return .cancelled
                }
                let (node, layout, size) = ListNode.makeAndMeasure(block, in: range, scale: scale)
                let result = MeasuredRow(record: recordBox.value, generation: generation, node: node,
                                         layout: layout, size: size)
                inbox.withLock { $0.append(result) }
                counters.completed.add(1, ordering: .relaxed)
                return .completed
            })
    }

    /// Makes the nodes of rows in `measure` that have none, here on the UI thread (`loadsRowsOnMainThread`).
    private func makeRowsOnMainThread(in measure: ClosedRange<Int>?) -> [MeasuredRow] {
        guard let measure, let dataSource else { return [] }
        var made: [MeasuredRow] = []
        for row in measure {
            let record = records[row] ?? RowRecord(row: row)
            records[row] = record
            guard record.node == nil || record.wantsNewNode else { continue }
            record.job?.cancel()
            record.job = nil
            let block = dataSource.nodeBlockForRow(at: row, in: self)
            let (node, layout, size) = Self.makeAndMeasure(block, in: rowSizeRange, scale: runtime.contentsScale)
            made.append(MeasuredRow(record: record, generation: record.generation, node: node, layout: layout, size: size))
        }
        return made
    }

    /// Runs a node block and measures the node at the list's width. The layout carries every
    /// descendant's layout, so applying it on the UI thread measures nothing again.
    /// - Thread: display worker (or main for `loadsRowsOnMainThread`)
    static func makeAndMeasure(_ block: RowNodeBlock, in range: SizeRange, scale: Double) -> (Node, Layout, Size) {
        let node = block()
        let layout = node.layoutThatFits(range)
        let height = (layout.size.height * scale - 1e-9).rounded(.up) / scale
        return (node, layout, Size(width: range.max.width, height: max(0, height)))
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
                    counts.nodesReleased += 1
                }
                record.isAttached = false
            }
            let node = result.node
            node.isTransactionContainer = true
            counts.nodesMade += 1
            let row = record.row
            if geometry.heights[row] != result.size.height { counts.heightCorrections += 1 }
            geometry.setHeight(result.size.height, ofRow: row, measured: true)
            node.frame = Rect(x: 0, y: geometry.offset(ofRow: row), width: result.size.width, height: result.size.height)
            node.applyLayout(result.layout)
            record.node = node
            dirtyRows.insert(row)
            record.appliedState = []
            record.isDrawn = false
            record.placedY = .nan
            record.distance = .nan
            record.drawingNodes = Self.drawingNodes(in: node)
            if let fade = record.fadeIn, fade.pending {
                record.fadeIn = (now, false)
                node.opacity = 0
            }
        }
        restore(anchor)
    }

    /// A new width: every row's height is an estimate again (the old heights serve as estimates), and
    /// the rows near the viewport are made again at the new width; their old nodes stay on screen
    /// until the new ones are ready.
    func rowWidthDidChange(to width: Double) {
        rowWidth = width
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
                counts.nodesReleased += 1
                record.node = nil
                record.isAttached = false
            }
            record.drawingNodes = []
        }
    }

    // MARK: Readiness and the checkerboard

    /// The nodes of a row's subtree that draw contents (a rasterizing node stands for its subtree).
    static func drawingNodes(in root: Node) -> [Node] {
        var result: [Node] = []
        var stack: [Node] = [root]
        while let node = stack.popLast() {
            let (hidden, empty, rasterizes) = node.state.withLock {
                ($0.isHidden, $0.frame.sanitized.isEmpty, $0.shouldRasterizeDescendants)
            }
            if hidden { continue }
            if node.drawsContents && !empty { result.append(node) }
            if !rasterizes { stack.append(contentsOf: node.subnodes) }
        }
        return result
    }

    /// True when every drawing node of the row shows contents drawn from its current state.
    func isRowReady(_ record: RowRecord) -> Bool {
        guard let node = record.node, record.isAttached else { return false }
        for drawing in record.drawingNodes where !drawing.showsCurrentContents { return false }
        return node.interfaceState.contains(.display)
    }

    /// The visible row area (square points) and the part of it not ready, this frame.
    func measureCheckerboard() -> (area: Double, missing: Double) {
        let top = offset, bottom = offset + bounds.height
        guard let visible = geometry.rows(overlapping: top, bottom) else { return (0, 0) }
        var area = 0.0, missing = 0.0
        var y = geometry.offset(ofRow: visible.lowerBound)
        for row in visible {
            let height = geometry.heights[row]
            let shown = max(0, min(y + height, bottom) - max(y, top)) * rowWidth
            area += shown
            if !(records[row].map(isRowReady) ?? false) { missing += shown }
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
            guard let visible = geometry.rows(overlapping: offset, offset + bounds.height) else { return .none }
            return .row(visible.lowerBound, screenY: geometry.offset(ofRow: visible.lowerBound) - offset)
        case .lastVisibleRow:
            guard let visible = geometry.rows(overlapping: offset, offset + bounds.height) else { return .none }
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
    private func isHeldTargetSettled(_ ranges: RowRanges) -> Bool {
        guard let heldTarget else { return true }
        if case let .row(row, _) = heldTarget, row < geometry.count, !geometry.isMeasured(row) { return false }
        guard let visible = ranges.visible else { return true }
        return visible.allSatisfy(geometry.isMeasured)
    }

    /// Measure jobs' outcomes so far.
    var measureOutcomes: (completed: Int, cancelled: Int) {
        (measureCounters.completed.load(ordering: .relaxed), measureCounters.cancelled.load(ordering: .relaxed))
    }
}

extension Node {
    /// True when the node shows contents drawn from its current state: its layer has contents, no draw
    /// is pending, and an image node has finished loading. (UI thread)
    var showsCurrentContents: Bool {
        guard let layer = layerIfLoadedUnchecked, layer.contents != nil else { return false }
        if state.withLock({ $0.needsDisplay || $0.displayJob != nil }) { return false }
        if let image = self as? ImageNode, image.source != nil {
            switch image.loadState {
            case .loaded, .failed: return true
            case .empty, .loading: return false
            }
        }
        return true
    }
}
