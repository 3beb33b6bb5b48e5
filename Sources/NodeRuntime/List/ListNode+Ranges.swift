import Compositor
import FoundationEssentials
import Glibc
import Dispatch

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
        guard interfaceState.contains(.visible), hasScrolledSinceAppearing, nodeHost?.isWindowVisible != false else { return .minimum }
        if let delay = idleRangeDelay, !isScrolling, now - lastScrollTime > delay { return .minimum }
        return .full
    }

    /// The content interval an extent covers around the viewport, leading in the scroll direction.
    func interval(for extent: ListRangeTuning.Extent) -> (top: Double, bottom: Double) {
        let height = viewportLength
        let forward = leadingDirection > 0
        let before = (forward ? extent.trailing : extent.leading) * height
        let after = (forward ? extent.leading : extent.trailing) * height
        return (offset - before, offset + height + after)
    }

    func computeRanges(_ tuning: ListRangeTuning) -> RowRanges {
        func rows(_ interval: (top: Double, bottom: Double)) -> ClosedRange<Int>? {
            geometry.rows(overlapping: interval.top, interval.bottom)
        }
        return RowRanges(visible: rows((offset, offset + viewportLength)),
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
        contentLayer?.frame = isHorizontal ? Rect(x: -offset, y: 0, width: 0, height: 0) : Rect(x: 0, y: -offset, width: 0, height: 0)
        updateContentAnimation()
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

        @MainActor
        init(list: ListNode, ranges: RowRanges, tuning: ListRangeTuning) {
            self.ranges = ranges
            cap = list.rowStateCap
            let height = list.viewportLength
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
            for loading in record.loadingNodes where loading !== node { loading.displayDistance = distance }
        }
        transition(record, node: node, to: target)
        if !target.contains(.display) {
            record.isDrawn = false
        } else if !record.isDrawn {
            record.isDrawn = Self.isDrawn(record)
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
            if target != node.interfaceState {
                node.enterInterfaceState(target) {
                    // measure → preload → display and didLoad → layout() → visible.
                    if target.contains(.display) && record.layoutHooksPending {
                        record.layoutHooksPending = false
                        node.runLayoutHooks()
                    }
                }
            }
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
            disown(node)
            counts.nodesReleased += 1
        }
        record.node = nil
        record.drawingNodes = []
        record.loadingNodes = []
    }

    func retireOutgoing(_ node: Node, of record: RowRecord) {
        node.setInterfaceState([])
        node.layerIfLoaded?.removeFromSuperlayer()
        disown(node)
        record.outgoingNode = nil
        counts.nodesReleased += 1
    }

    /// Makes the list the event parent of a row node it installs: touches, the wheel and hover go on
    /// from the row to the list, though the row is not a subnode.
    func adopt(_ node: Node) {
        node.eventParent = self
    }

    /// Undoes `adopt` for a row node the list lets go of.
    func disown(_ node: Node) {
        if node.eventParent === self { node.eventParent = nil }
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
                node.frame = rowFrame(at: y, length: geometry.heights[record.row])
            }
            var animations: [LayerAnimation] = []
            if let slide = record.slide {
                let base = geometry.offset(ofRow: record.row)
                animations.append(Self.slideAnimation(isHorizontal ? .originX : .originY, from: base + slide.delta, to: base,
                                                       start: slide.start))
            }
            if let fade = record.fadeIn, !fade.pending {
                let progress = (now - fade.start) / Self.updateAnimationDuration
                if progress >= 1 {
                    record.fadeIn = nil
                    node.opacity = 1
                } else {
                    node.opacity = ScrollPhysics.easeOut(progress)
                    animations.append(Self.fadeAnimation(from: 0, to: 1, start: fade.start))
                }
            }
            handOver(animations, to: node)
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
                disown(row.node)
                counts.nodesReleased += 1
                return true
            }
            row.node.opacity = 1 - ScrollPhysics.easeOut(progress)
            handOver([Self.fadeAnimation(from: 1, to: 0, start: row.start)], to: row.node)
            return false
        }
    }

    /// A row's slide of an animated update, as the compositor draws it between this thread's frames
    /// (the same curve `placeAttachedRows` steps).
    static func slideAnimation(_ property: LayerAnimation.Property, from: Double, to: Double, start: Double) -> LayerAnimation {
        LayerAnimation.interpolating(property, from: from, to: to, start: start, duration: updateAnimationDuration,
                                    curve: .easeOutCubic)
    }

    /// A row's fade of an animated update.
    static func fadeAnimation(from: Double, to: Double, start: Double) -> LayerAnimation {
        LayerAnimation.interpolating(.opacity, from: from, to: to, start: start, duration: updateAnimationDuration,
                                    curve: .easeOutCubic)
    }

    /// Gives the row's layer the animations running on it (none: the model values are drawn).
    private func handOver(_ animations: [LayerAnimation], to node: Node) {
        guard let layer = node.layerIfLoaded, !(animations.isEmpty && layer.animations.isEmpty) else { return }
        layer.animations = animations
    }
}
