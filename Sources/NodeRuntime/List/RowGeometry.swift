import Compositor

/// The heights of a list's rows and the offsets they add up to, kept in a Fenwick tree so that a
/// height change, an offset and the row at a given offset each cost O(log n): a list of any length
/// answers "which rows does the viewport cover" without touching the rows above it.
///
/// Heights are whatever the caller passes; `ListNode` rounds them to its pixel grid first, so sums of
/// them are exact in `Double` and the same row always lands on the same offset however it was reached.
/// Rebuilding (`replaceAll`) is O(n); the list does it for batch updates and reloads, never per frame.
/// - Thread: any (a value); `ListNode` keeps its copy on the UI thread.
struct RowGeometry {
    /// Each row's height, estimated or measured.
    private(set) var heights: [Double] = []
    /// One bit per row: set once the row's height was measured (kept when its node is released).
    private var measuredBits: [UInt64] = []
    /// Fenwick tree over `heights`, 1-based: `tree[i]` sums the heights of rows `i - (i & -i) ..< i`.
    private var tree: [Double] = [0]
    /// The sum of every height.
    private(set) var totalHeight = 0.0

    var count: Int { heights.count }

    /// Replaces every row: O(n).
    mutating func replaceAll(heights newHeights: [Double], measured: [Bool]) {
        Contract.require(newHeights.count == measured.count, "RowGeometry.replaceAll: one measured flag per height")
        heights = newHeights.map { $0.isFinite && $0 > 0 ? $0 : 0 }
        measuredBits = Array(repeating: 0, count: (heights.count + 63) / 64)
        for (row, isMeasured) in measured.enumerated() where isMeasured {
            measuredBits[row >> 6] |= 1 << UInt64(row & 63)
        }
        rebuildTree()
    }

    /// Whether the row's height is a measurement rather than an estimate.
    func isMeasured(_ row: Int) -> Bool {
        measuredBits[row >> 6] & (1 << UInt64(row & 63)) != 0
    }

    /// Every row's measured flag, in order (for rebuilding after a batch update).
    var measuredFlags: [Bool] { (0..<count).map(isMeasured) }

    /// Sets one row's height: O(log n). Returns the change.
    @discardableResult
    mutating func setHeight(_ height: Double, ofRow row: Int, measured: Bool) -> Double {
        let value = height.isFinite && height > 0 ? height : 0
        if measured {
            measuredBits[row >> 6] |= 1 << UInt64(row & 63)
        } else {
            measuredBits[row >> 6] &= ~(1 << UInt64(row & 63))
        }
        let delta = value - heights[row]
        guard delta != 0 else { return 0 }
        heights[row] = value
        totalHeight += delta
        var index = row + 1
        while index < tree.count {
            tree[index] += delta
            index += index & -index
        }
        return delta
    }

    /// Marks every row as estimated again, keeping the heights as the estimates (the width changed).
    mutating func markAllUnmeasured() {
        for index in measuredBits.indices { measuredBits[index] = 0 }
    }

    /// The top of `row` (the sum of the heights above it); `count` gives the total height.
    func offset(ofRow row: Int) -> Double {
        var sum = 0.0
        var index = min(max(0, row), count)
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }

    /// The row whose span `[top, bottom)` contains `y`: 0 above the first row, the last row below the
    /// end. Nil when there are no rows. Zero-height rows never contain a point; at their offset the
    /// next row with height answers.
    func row(containing y: Double) -> Int? {
        guard count > 0 else { return nil }
        guard y > 0 else { return firstRowWithHeight(from: 0) }
        // Descend the tree: the largest `position` whose prefix sum is <= y.
        var position = 0
        var remaining = y
        var step = 1
        while step * 2 < tree.count { step *= 2 }
        while step > 0 {
            let next = position + step
            if next < tree.count && tree[next] <= remaining {
                position = next
                remaining -= tree[next]
            }
            step /= 2
        }
        // `position` rows end at or before y: the row at index `position` contains it.
        return min(position, count - 1)
    }

    private func firstRowWithHeight(from row: Int) -> Int {
        var index = row
        while index < count - 1 && heights[index] == 0 { index += 1 }
        return index
    }

    /// The rows that overlap `[top, bottom]`: those with `rowTop < bottom` and `rowBottom > top`.
    /// Empty when nothing overlaps (no rows, or the interval lies wholly outside the content).
    func rows(overlapping top: Double, _ bottom: Double) -> ClosedRange<Int>? {
        guard count > 0, bottom > top, bottom > 0, top < totalHeight else { return nil }
        guard let first = row(containing: max(0, top)) else { return nil }
        // The last row starting strictly before `bottom`.
        var last: Int
        if bottom >= totalHeight {
            last = count - 1
        } else {
            last = row(containing: bottom) ?? first
            if offset(ofRow: last) >= bottom { last -= 1 }
        }
        return first <= last ? first...last : nil
    }

    private mutating func rebuildTree() {
        tree = Array(repeating: 0, count: heights.count + 1)
        var sum = 0.0
        for (row, height) in heights.enumerated() {
            let index = row + 1
            tree[index] += height
            let parent = index + (index & -index)
            if parent < tree.count { tree[parent] += tree[index] }
            sum += height
        }
        totalHeight = sum
    }
}
