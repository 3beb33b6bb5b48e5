import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension ListNode {
    /// Applies deletions, insertions, reloads and moves in one step. Update the data source first: the
    /// list reads the new row count and checks it against the update (a mismatch, an index out of range
    /// or a row named twice is a precondition failure, as with a table view).
    ///
    /// Surviving rows keep their nodes and measured heights; inserted rows start at their estimated
    /// height and are made in the background like any row; reloaded rows get a new node while the old
    /// one stays on screen until the new one is ready. `anchor` decides what stays put on screen (by
    /// default the first visible row, or the bottom of a pinned stack-from-bottom list).
    ///
    /// With `animated`, rows that stay on screen slide to their new places, inserted rows fade in when
    /// they arrive, deleted rows fade out where they were, and a pinned stack-from-bottom list scrolls
    /// to its new end instead of jumping there.
    ///
    /// O(row count) for the heights (a rebuild of the offset tree), O(rows near the viewport) for nodes.
    /// - Thread: main
    @MainActor
    public func performBatchUpdates(_ update: ListUpdate, anchor: ListAnchor = .automatic, animated: Bool = false) {
        UIThread.precondition("ListNode.performBatchUpdates")
        let oldCount = geometry.count
        let newCount = dataSource.map { max(0, $0.numberOfRows(in: self)) } ?? 0
        let plan = UpdatePlan(update, oldCount: oldCount, newCount: newCount)

        // What is on screen now, to keep in place and to animate from.
        let pinned = stacksFromBottom && isPinnedToBottom && anchor == .automatic
        let snapshot = pinned ? .bottom(maximumOffset: maximumOffset)
            : captureAnchor(anchor, survives: { plan.oldToNew[$0] >= 0 && !plan.moved.contains($0) })
        let oldOffset = offset
        var oldScreenY: [ObjectIdentifier: Double] = [:]
        if animated {
            for record in records.values where record.isAttached {
                oldScreenY[ObjectIdentifier(record)] = geometry.offset(ofRow: record.row) - oldOffset
            }
        }
        remapTargets(plan)

        // Heights: survivors keep theirs (a reloaded row's old height is its estimate), inserted rows
        // start from their estimates.
        let oldHeights = geometry.heights
        var heights: [Double] = []
        var measured: [Bool] = []
        heights.reserveCapacity(newCount)
        measured.reserveCapacity(newCount)
        for newRow in 0..<newCount {
            let oldRow = plan.newToOld[newRow]
            if oldRow >= 0 {
                heights.append(oldHeights[oldRow])
                measured.append(geometry.isMeasured(oldRow) && !plan.reloaded.contains(oldRow))
            } else {
                heights.append(estimatedHeight(forRow: newRow))
                measured.append(false)
            }
        }

        // Records: renumber survivors, start reloads, retire deleted rows (fading them when animated).
        var fading: [(node: Node, screenY: Double)] = []
        var renumbered: [Int: RowRecord] = [:]
        for record in records.values {
            let newRow = plan.oldToNew[record.row]
            if newRow < 0 {
                if animated, record.isAttached, let node = record.node, let screenY = oldScreenY[ObjectIdentifier(record)] {
                    record.node = nil
                    record.isAttached = false
                    fading.append((node, screenY))
                }
                release(record)
                continue
            }
            if plan.reloaded.contains(record.row) {
                record.generation += 1
                record.job?.cancel()
                record.job = nil
                record.wantsNewNode = true
            }
            record.row = newRow
            renumbered[newRow] = record
        }
        records = renumbered
        lastPass = nil
        dirtyRows.removeAll()
        pendingRows.removeAll()
        geometry.replaceAll(heights: heights, measured: measured)

        // Reduced motion (`Appearance.reducedMotion`): rows land in their places at once and a pinned
        // list jumps to its end; inserted rows still fade in and deleted ones out.
        let slides = animated && !runtime.appearance.reducedMotion
        if pinned && slides {
            // The content stays where it is; the viewport eases to the new end.
            animate(to: .end, duration: Self.updateAnimationDuration)
        } else {
            restore(snapshot, newRow: { oldRow in oldRow < plan.oldToNew.count ? plan.oldToNew[oldRow] : nil })
        }
        if motion.isAtRest { offset = clamped(offset) }
        lastRangeOffset = offset

        if animated {
            for record in records.values where record.isAttached && slides {
                guard let before = oldScreenY[ObjectIdentifier(record)] else { continue }
                let delta = before - (geometry.offset(ofRow: record.row) - offset)
                if abs(delta) >= 0.5 { record.slide = (delta, now) }
            }
            for newRow in plan.insertedRows where records[newRow] == nil {
                let record = RowRecord(row: newRow)
                record.fadeIn = (now, true)
                records[newRow] = record
            }
            for (node, screenY) in fading {
                node.frame = rowFrame(at: screenY + offset, length: isHorizontal ? node.frame.width : node.frame.height)
                disappearingRows.append(DisappearingRow(node: node, start: now))
            }
        }
        if isReady { updateRows() }
    }

    /// Inserts rows (indices after the update). - Thread: main
    @MainActor
    public func insertRows(_ rows: [Int], anchor: ListAnchor = .automatic, animated: Bool = false) {
        performBatchUpdates(ListUpdate(insertions: rows), anchor: anchor, animated: animated)
    }

    /// Deletes rows (indices before the update). - Thread: main
    @MainActor
    public func deleteRows(_ rows: [Int], anchor: ListAnchor = .automatic, animated: Bool = false) {
        performBatchUpdates(ListUpdate(deletions: rows), anchor: anchor, animated: animated)
    }

    /// Makes new nodes for rows, keeping the old ones on screen until the new ones are ready.
    /// - Thread: main
    @MainActor
    public func reloadRows(_ rows: [Int], animated: Bool = false) {
        performBatchUpdates(ListUpdate(reloads: rows), anchor: .automatic, animated: animated)
    }

    /// Moves one row. - Thread: main
    @MainActor
    public func moveRow(_ from: Int, to: Int, animated: Bool = false) {
        performBatchUpdates(ListUpdate(moves: [.init(from: from, to: to)]), anchor: .automatic, animated: animated)
    }

    /// Renumbers or drops the rows that held and animated scrolls aim at.
    private func remapTargets(_ plan: UpdatePlan) {
        func mapped(_ target: ScrollTarget) -> ScrollTarget {
            guard case let .row(row, position) = target else { return target }
            let newRow = row < plan.oldToNew.count ? plan.oldToNew[row] : -1
            return newRow >= 0 ? .row(newRow, position) : .offset(resolve(target))
        }
        if let heldTarget {
            let target = mapped(heldTarget)
            self.heldTarget = target.isHeld ? target : nil
        }
        if let animationTarget { self.animationTarget = mapped(animationTarget) }
    }
}

extension ListNode {
    /// `captureAnchor` for a batch update: the anchor row must survive the update; the first (or last)
    /// visible survivor is taken, else the nearest survivor below (or above) the viewport.
    func captureAnchor(_ anchor: ListAnchor, survives: (Int) -> Bool) -> AnchorSnapshot {
        if heldTarget != nil { return .held }
        let top = offset, bottom = offset + viewportLength
        guard anchor != .contentOffset, geometry.count > 0 else { return .none }
        let fromBottom = anchor == .lastVisibleRow
        let visible = geometry.rows(overlapping: top, bottom)
        // Visible rows first, then outwards in the anchor's direction; a bounded search is enough.
        var candidates: [Int] = []
        if let visible { candidates.append(contentsOf: fromBottom ? Array(visible.reversed()) : Array(visible)) }
        let start = fromBottom ? (visible?.lowerBound ?? geometry.row(containing: top) ?? 0) - 1
            : (visible?.upperBound ?? geometry.row(containing: top) ?? 0) + 1
        let step = fromBottom ? -1 : 1
        var row = start
        while row >= 0 && row < geometry.count && candidates.count < 4096 {
            candidates.append(row)
            row += step
        }
        for candidate in candidates where survives(candidate) {
            return .row(candidate, screenY: geometry.offset(ofRow: candidate) - offset)
        }
        return .none
    }
}

/// The row mapping of one batch update, checked.
struct UpdatePlan {
    /// For each new row, the old row it comes from, or −1 for an inserted row.
    var newToOld: [Int]
    /// For each old row, its new index, or −1 for a deleted row.
    var oldToNew: [Int]
    /// Old indices of reloaded rows.
    var reloaded: Set<Int>
    /// Old indices of moved rows (never anchors: the view would follow them).
    var moved: Set<Int>
    /// New indices of inserted rows (not moves).
    var insertedRows: [Int]

    init(_ update: ListUpdate, oldCount: Int, newCount: Int) {
        var removed = Set<Int>()
        var added = Set<Int>()
        for row in update.deletions {
            Contract.require(row >= 0 && row < oldCount, "ListNode.performBatchUpdates: deleted row \(row) out of 0..<\(oldCount)")
            Contract.require(removed.insert(row).inserted, "ListNode.performBatchUpdates: row \(row) deleted twice")
        }
        for move in update.moves {
            Contract.require(move.from >= 0 && move.from < oldCount, "ListNode.performBatchUpdates: moved row \(move.from) out of 0..<\(oldCount)")
            Contract.require(move.to >= 0 && move.to < newCount, "ListNode.performBatchUpdates: move destination \(move.to) out of 0..<\(newCount)")
            Contract.require(removed.insert(move.from).inserted, "ListNode.performBatchUpdates: row \(move.from) deleted or moved twice")
            Contract.require(added.insert(move.to).inserted, "ListNode.performBatchUpdates: row \(move.to) is the destination of two moves")
        }
        for row in update.insertions {
            Contract.require(row >= 0 && row < newCount, "ListNode.performBatchUpdates: inserted row \(row) out of 0..<\(newCount)")
            Contract.require(added.insert(row).inserted, "ListNode.performBatchUpdates: row \(row) inserted twice, or inserted where a row moves to")
        }
        var reloaded = Set<Int>()
        for row in update.reloads {
            Contract.require(row >= 0 && row < oldCount, "ListNode.performBatchUpdates: reloaded row \(row) out of 0..<\(oldCount)")
            Contract.require(!removed.contains(row), "ListNode.performBatchUpdates: row \(row) reloaded and deleted or moved")
            reloaded.insert(row)
        }
        Contract.require(oldCount - removed.count + added.count == newCount,
                         "ListNode.performBatchUpdates: the data source has \(newCount) rows; \(oldCount) − \(removed.count) + \(added.count) expected")

        let unset = -2
        var newToOld = Array(repeating: unset, count: newCount)
        for move in update.moves { newToOld[move.to] = move.from }
        for row in update.insertions { newToOld[row] = -1 }
        var nextOld = 0
        for newRow in 0..<newCount where newToOld[newRow] == unset {
            while removed.contains(nextOld) { nextOld += 1 }
            newToOld[newRow] = nextOld
            nextOld += 1
        }
        var oldToNew = Array(repeating: -1, count: oldCount)
        for (newRow, oldRow) in newToOld.enumerated() where oldRow >= 0 { oldToNew[oldRow] = newRow }
        self.newToOld = newToOld
        self.oldToNew = oldToNew
        self.reloaded = reloaded
        self.moved = Set(update.moves.map(\.from))
        self.insertedRows = update.insertions.sorted()
    }
}
