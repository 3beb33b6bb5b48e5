public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// How a `CollectionNode` arranges its items: into lines along the scroll axis, each line holding a
/// run of consecutive items placed across it.
///
/// A layout is written once for both directions, in the coordinates of a vertical collection: `x` and
/// widths run across the scroll axis, `y` and heights along it. A horizontal collection swaps the two
/// (its lines are columns, its items measured with the collection's height across). Each line is a row
/// of the collection's list, so lines get the list's ranges, measuring on display workers and no-jump
/// updates; and so every member must answer for one line or one item in constant time (no member may
/// walk every item): that is what keeps a collection of any size as cheap as the part on screen.
///
/// `arrangeLine` runs on a display worker while the line is measured; the others on the UI thread.
/// A layout is a value (`Sendable`): give it the parameters it needs, never a reference to a node.
/// - Thread: any (a value)
public protocol CollectionLayout: Sendable {
    /// How many lines `itemCount` items make when the collection is `crossExtent` points across.
    func lineCount(forItemCount itemCount: Int, crossExtent: Double) -> Int

    /// The items of `line`: consecutive, non-empty for every line below `lineCount`, and together
    /// the lines cover `0..<itemCount` in order.
    func items(inLine line: Int, itemCount: Int, crossExtent: Double) -> Range<Int>

    /// The line that holds `item`.
    func line(containingItem item: Int, itemCount: Int, crossExtent: Double) -> Int

    /// The length to assume for `line` until it is measured; nil for the list's estimate.
    func estimatedLength(ofLine line: Int, crossExtent: Double) -> Double?

    /// Places the items of one line. `measure(item, range)` measures an item's node in a size range
    /// and gives its size (both across-then-along); the returned frames, one per item in order, are in
    /// the line's coordinates (`x` across from 0 to `crossExtent`, `y` along from 0), and `length` is
    /// how long the line is along the axis (spacing after it included). An item whose frame differs
    /// from the size it measured is measured again exactly at its frame.
    /// - Thread: display worker
    func arrangeLine(_ line: Int, items: Range<Int>, crossExtent: Double,
                     measure: (_ item: Int, _ range: SizeRange) -> Size) -> CollectionLineArrangement
}

extension CollectionLayout {
    public func estimatedLength(ofLine line: Int, crossExtent: Double) -> Double? { nil }
}

/// Where a line's items go and how long the line is (see `CollectionLayout.arrangeLine`).
/// - Thread: any (a value)
public struct CollectionLineArrangement: Sendable, Hashable {
    /// One frame per item, in order, in the line's coordinates (across, along).
    public var frames: [Rect]
    /// The line's length along the scroll axis.
    public var length: Double

    public init(frames: [Rect], length: Double) {
        self.frames = frames
        self.length = length
    }
}

/// Items in columns of equal width (rows of equal height in a horizontal collection), filled line by
/// line: a grid, or with one column a plain list of items.
///
/// Fallbacks: a column count below 1, a minimum width that is not a positive number, and a spacing
/// that is negative or not a number give one column and no spacing where they apply; an aspect ratio
/// that is not a positive number measures items instead. Column edges are whole points: columns differ
/// by at most a point, and together they fill the extent exactly.
/// - Thread: any (a value)
public struct GridLayout: CollectionLayout, Hashable {
    /// How the columns are counted.
    /// - Thread: any (a value)
    public enum Columns: Sendable, Hashable {
        /// Exactly this many.
        case fixed(Int)
        /// As many as fit with each at least `minimum` points wide (at least one).
        case adaptive(minimum: Double)
    }

    public var columns: Columns
    /// Points between columns.
    public var spacing: Double
    /// Points between lines.
    public var lineSpacing: Double
    /// An item's length along the axis over its width across (1: square cells); nil measures each item
    /// at its column's width, and the line is as long as its longest item.
    public var itemAspectRatio: Double?

    public init(columns: Columns, spacing: Double = 0, lineSpacing: Double = 0, itemAspectRatio: Double? = nil) {
        self.columns = columns
        self.spacing = spacing
        self.lineSpacing = lineSpacing
        self.itemAspectRatio = itemAspectRatio
    }

    /// One item a line: a list of items (a horizontal strip, in a horizontal collection).
    public static func list(spacing: Double = 0) -> GridLayout {
        GridLayout(columns: .fixed(1), lineSpacing: spacing)
    }

    private static func usable(_ value: Double) -> Double { value.isFinite && value > 0 ? value : 0 }

    /// The number of columns at `crossExtent`.
    public func columnCount(crossExtent: Double) -> Int {
        switch columns {
        case .fixed(let count):
            return max(1, count)
        case .adaptive(let minimum):
            guard minimum.isFinite, minimum > 0, crossExtent.isFinite, crossExtent > 0 else { return 1 }
            let gap = Self.usable(spacing)
            let fitting = ((crossExtent + gap) / (minimum + gap)).rounded(.down)
            return max(1, Int(min(fitting, 10_000)))
        }
    }

    public func lineCount(forItemCount itemCount: Int, crossExtent: Double) -> Int {
        let columns = columnCount(crossExtent: crossExtent)
        return (max(0, itemCount) + columns - 1) / columns
    }

    public func items(inLine line: Int, itemCount: Int, crossExtent: Double) -> Range<Int> {
        let columns = columnCount(crossExtent: crossExtent)
        let start = min(itemCount, line * columns)
        return start..<min(itemCount, start + columns)
    }

    public func line(containingItem item: Int, itemCount: Int, crossExtent: Double) -> Int {
        max(0, item) / columnCount(crossExtent: crossExtent)
    }

    /// The spacing before a line: none before the first.
    private func leadingSpace(ofLine line: Int) -> Double { line > 0 ? Self.usable(lineSpacing) : 0 }

    /// The cells' edges across: whole points that fill the extent.
    private func columnEdges(crossExtent: Double) -> [(x: Double, width: Double)] {
        let columns = columnCount(crossExtent: crossExtent)
        let extent = Self.usable(crossExtent)
        let gap = Self.usable(spacing)
        let pitch = (extent + gap) / Double(columns)
        return (0..<columns).map { column in
            let start = (Double(column) * pitch).rounded()
            let end = column == columns - 1 ? extent : (Double(column + 1) * pitch - gap).rounded()
            return (start, max(0, end - start))
        }
    }

    public func estimatedLength(ofLine line: Int, crossExtent: Double) -> Double? {
        guard let ratio = itemAspectRatio, ratio.isFinite, ratio > 0 else { return nil }
        let widest = columnEdges(crossExtent: crossExtent).map(\.width).max() ?? 0
        return (widest * ratio).rounded(.up) + leadingSpace(ofLine: line)
    }

    public func arrangeLine(_ line: Int, items: Range<Int>, crossExtent: Double,
                            measure: (_ item: Int, _ range: SizeRange) -> Size) -> CollectionLineArrangement {
        let edges = columnEdges(crossExtent: crossExtent)
        let top = leadingSpace(ofLine: line)
        var frames: [Rect] = []
        frames.reserveCapacity(items.count)
        var longest = 0.0
        for (column, item) in items.enumerated() {
            let edge = edges[min(column, edges.count - 1)]
            let length: Double
            if let ratio = itemAspectRatio, ratio.isFinite, ratio > 0 {
                length = (edge.width * ratio).rounded(.up)
            } else {
                length = measure(item, SizeRange(min: Size(width: edge.width, height: 0),
                                                 max: Size(width: edge.width, height: .infinity))).height
            }
            frames.append(Rect(x: edge.x, y: top, width: edge.width, height: length))
            longest = max(longest, length)
        }
        return CollectionLineArrangement(frames: frames, length: top + longest)
    }
}
