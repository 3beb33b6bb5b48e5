public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Where a collection's items come from.
///
/// The collection asks for the item count when it loads (`reloadData`) and after item updates, never
/// per frame; for each line that comes near the viewport it asks for the node blocks of the line's
/// items on the UI thread and runs them on a display worker, where the items are made and measured.
/// So a block must capture only `Sendable` values (the item's model), never the data source or nodes.
/// - Thread: main, every member; the blocks run on display workers.
@MainActor
public protocol CollectionDataSource: AnyObject {
    /// How many items the collection has. - Thread: main
    @MainActor
    func numberOfItems(in collection: CollectionNode) -> Int

    /// A block that makes the node of `item`. - Thread: main (the block: display worker)
    @MainActor
    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock
}

/// Items of any number in a grid, a horizontal strip or any arrangement a `CollectionLayout` gives,
/// scrolling smoothly on either axis.
///
/// ## How it works
/// The layout groups consecutive items into lines (a grid's rows; a horizontal collection's columns),
/// and each line is a row of a `ListNode` the collection holds (`list`). So a collection has all of a
/// list: items are made and measured on display workers as their line comes near, drawn before they
/// scroll in, released once far behind; each interface state reaches as far as the list's range tuning
/// says; a frame's work and the memory held depend on the lines near the viewport, never on the item
/// count (a line's geometry is one number, an item's nothing); and a line measured at another length
/// than estimated does not move what is on screen. Items share their line's interface state.
///
/// Updates (`insertItems`, `deleteItems`, `reloadItems`) make the lines from the first changed one on
/// again, each old line shown until its new one is ready, and keep the first visible line in place.
/// A new extent across the axis (a window resized) lays every line out again, since the number of
/// columns may change.
///
/// Scrolling, physics, the wheel and keys, paging, range tuning, batch fetching (rows are lines) and
/// the statistics are the list's: configure `list` for them.
///
/// - Thread: made on any thread like any node; every member below is UI-thread only (checked).
///   Item nodes are made on display workers.
@MainActor
public final class CollectionNode: Node, @unchecked Sendable {
    /// Makes an item's node; runs on a display worker. Capture only `Sendable` values.
    public typealias ItemNodeBlock = @Sendable () -> Node

    /// The list whose rows are the collection's lines: its physics, ranges, statistics, paging and
    /// batch fetching are the collection's. Leave its `dataSource` alone. - Thread: any (the reference)
    public nonisolated let list: ListNode

    /// Where items come from. Setting it reloads. (main thread only)
    public weak var dataSource: CollectionDataSource? {
        willSet { if newValue != nil { hadDataSource = true } }
        didSet { reloadData() }
    }
    /// Set once a data source was given (a collection holds it weakly). (main thread only)
    var hadDataSource = false

    /// How items are arranged (default: two columns). Setting it reloads. (main thread only)
    public var collectionLayout: any CollectionLayout = GridLayout(columns: .fixed(2)) {
        didSet { reloadData() }
    }

    /// Which way the collection scrolls (the list's `scrollDirection`). (main thread only)
    public var scrollDirection: ListScrollDirection {
        get { list.scrollDirection }
        set { list.scrollDirection = newValue }
    }

    /// Called with the item under a tap that did not scroll. (main thread only)
    public var onSelectItem: ((Int) -> Void)?

    /// The item count the lines were made for. (main thread only)
    private var itemCount = 0
    /// The extent across the axis the lines were made for. (main thread only)
    private var lineCrossExtent = 0.0

    /// An empty collection. - Thread: any
    public nonisolated override init() {
        list = ListNode()
        super.init()
        addSubnode(list)
    }

    public override func didLoad() {
        super.didLoad()
        list.dataSource = self
        list.onSelectRowAtPoint = { [weak self] line, point in self?.lineWasTapped(line, at: point) }
    }

    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        if let preferredSize { return preferredSize }
        return Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0,
                    height: constrainedSize.height.isFinite ? constrainedSize.height : 0)
    }

    public override func layout() {
        super.layout()
        list.frame = bounds
        // A new extent across may change the number of columns: the lines are made again.
        if isNodeLoaded, list.crossExtent > 0, list.crossExtent != lineCrossExtent, list.dataSource != nil {
            list.reloadData()
        }
    }

    // MARK: Data (main thread)

    /// Reads the item count again and makes every line again, keeping what is looked at as
    /// `ListNode.reloadData(anchor:)` does. - Thread: main
    public func reloadData(anchor: ListAnchor = .automatic) {
        UIThread.precondition("CollectionNode.reloadData")
        guard isNodeLoaded, list.dataSource != nil else { return }
        list.reloadData(anchor: anchor)
    }

    /// The number of items. - Thread: main
    public var numberOfItems: Int {
        UIThread.precondition("CollectionNode.numberOfItems")
        return itemCount
    }

    /// The line that holds `item`. - Thread: main
    public func line(containingItem item: Int) -> Int {
        UIThread.precondition("CollectionNode.line(containingItem:)")
        Contract.require(item >= 0 && item < itemCount, "CollectionNode.line(containingItem:): item \(item) out of 0..<\(itemCount)")
        return collectionLayout.line(containingItem: item, itemCount: itemCount, crossExtent: lineCrossExtent)
    }

    /// The node of `item`, once its line is made and measured; nil outside the measure range.
    /// - Thread: main
    public func nodeForItem(_ item: Int) -> Node? {
        UIThread.precondition("CollectionNode.nodeForItem")
        guard item >= 0, item < itemCount else { return nil }
        let line = collectionLayout.line(containingItem: item, itemCount: itemCount, crossExtent: lineCrossExtent)
        guard let lineNode = list.nodeForRow(line) as? CollectionLineNode else { return nil }
        return lineNode.node(forItem: item)
    }

    /// The item's frame in the collection's content coordinates, once its line is measured.
    /// - Thread: main
    public func frameOfItem(_ item: Int) -> Rect? {
        UIThread.precondition("CollectionNode.frameOfItem")
        guard let node = nodeForItem(item) else { return nil }
        let lineFrame = list.frameOfRow(collectionLayout.line(containingItem: item, itemCount: itemCount, crossExtent: lineCrossExtent))
        return node.frame.offsetBy(dx: lineFrame.minX, dy: lineFrame.minY)
    }

    /// The interface state of `item`'s node (its line's); empty without one. - Thread: main
    public func interfaceStateOfItem(_ item: Int) -> InterfaceState {
        UIThread.precondition("CollectionNode.interfaceStateOfItem")
        return nodeForItem(item)?.interfaceState ?? []
    }

    /// The items of the lines that overlap the viewport; nil when none does. - Thread: main
    public var visibleItems: Range<Int>? {
        UIThread.precondition("CollectionNode.visibleItems")
        guard let lines = list.visibleRows else { return nil }
        let first = collectionLayout.items(inLine: lines.lowerBound, itemCount: itemCount, crossExtent: lineCrossExtent)
        let last = collectionLayout.items(inLine: lines.upperBound, itemCount: itemCount, crossExtent: lineCrossExtent)
        return first.lowerBound..<last.upperBound
    }

    /// Scrolls so that `item`'s line is at `position`. - Thread: main
    public func scroll(toItem item: Int, at position: ListScrollPosition, animated: Bool) {
        UIThread.precondition("CollectionNode.scroll(toItem:)")
        Contract.require(item >= 0 && item < itemCount, "CollectionNode.scroll(toItem:): item \(item) out of 0..<\(itemCount)")
        list.scroll(to: line(containingItem: item), at: position, animated: animated)
    }

    // MARK: Updates (main thread)

    /// Items were inserted (indices after the change); the data source already has them. Items
    /// inserted above the first visible line in whole lines' worth leave what is on screen where it is.
    /// - Thread: main
    public func insertItems(_ items: [Int], animated: Bool = false) {
        UIThread.precondition("CollectionNode.insertItems")
        guard let first = items.min() else { return }
        itemsChanged(from: first, before: { firstVisible, delta in items.allSatisfy { $0 < firstVisible + delta } },
                     animated: animated)
    }

    /// Items were deleted (indices before the change); the data source no longer has them. Items
    /// deleted above the first visible line in whole lines' worth leave what is on screen where it is.
    /// - Thread: main
    public func deleteItems(_ items: [Int], animated: Bool = false) {
        UIThread.precondition("CollectionNode.deleteItems")
        guard let first = items.min() else { return }
        itemsChanged(from: first, before: { firstVisible, _ in items.allSatisfy { $0 < firstVisible } }, animated: animated)
    }

    /// Items changed in place: their lines are made again, the old shown until the new are ready.
    /// - Thread: main
    public func reloadItems(_ items: [Int], animated: Bool = false) {
        UIThread.precondition("CollectionNode.reloadItems")
        let valid = items.filter { $0 >= 0 && $0 < itemCount }
        guard !valid.isEmpty else { return }
        let lines = Set(valid.map { collectionLayout.line(containingItem: $0, itemCount: itemCount, crossExtent: lineCrossExtent) })
        list.performBatchUpdates(ListUpdate(reloads: lines.sorted()), anchor: .firstVisibleRow, animated: animated)
    }

    /// Brings the lines up to date after items from `first` on were inserted or deleted.
    ///
    /// When every change lies above the first visible line (`allBefore(firstVisibleItem, delta)`) and
    /// that line's first item still starts a line afterwards, the lines from there on hold the same
    /// items as before, only moved: lines are inserted or deleted just above it and the changed lines
    /// above are made again, so the list's anchor keeps the visible items where they were. Otherwise
    /// every line from the first changed one on is made again.
    private func itemsChanged(from first: Int, before allBefore: (_ firstVisible: Int, _ delta: Int) -> Bool,
                              animated: Bool) {
        guard isNodeLoaded, list.dataSource != nil else { return }
        let layout = collectionLayout
        let extent = lineCrossExtent
        let oldLines = list.numberOfRows
        let oldCount = itemCount
        let newCount = max(0, dataSource?.numberOfItems(in: self) ?? 0)
        let newLines = layout.lineCount(forItemCount: newCount, crossExtent: extent)
        let delta = newCount - oldCount
        let firstLine = oldCount == 0 ? 0
            : layout.line(containingItem: min(max(0, first), oldCount - 1), itemCount: oldCount, crossExtent: extent)
        itemCount = newCount
        var update = ListUpdate()
        if let visible = list.visibleRows, visible.lowerBound > firstLine, oldCount > 0 {
            let anchorLine = visible.lowerBound
            let anchorItem = layout.items(inLine: anchorLine, itemCount: oldCount, crossExtent: extent).lowerBound
            let movedItem = anchorItem + delta
            if allBefore(anchorItem, delta), movedItem >= 0, movedItem < newCount {
                let newLine = layout.line(containingItem: movedItem, itemCount: newCount, crossExtent: extent)
                let shift = newLine - anchorLine
                if layout.items(inLine: newLine, itemCount: newCount, crossExtent: extent).lowerBound == movedItem,
                   newLines == oldLines + shift {
                    if shift >= 0 {
                        update.reloads = Array(firstLine..<anchorLine)
                        update.insertions = Array(anchorLine..<(anchorLine + shift))
                    } else {
                        let kept = max(firstLine, anchorLine + shift)
                        update.reloads = Array(firstLine..<kept)
                        update.deletions = Array(kept..<anchorLine)
                    }
                    list.performBatchUpdates(update, anchor: .firstVisibleRow, animated: animated)
                    return
                }
            }
        }
        let kept = min(oldLines, newLines)
        if firstLine < kept { update.reloads = Array(firstLine..<kept) }
        if newLines > oldLines { update.insertions = Array(oldLines..<newLines) }
        if newLines < oldLines { update.deletions = Array(newLines..<oldLines) }
        list.performBatchUpdates(update, anchor: .firstVisibleRow, animated: animated)
    }

    // MARK: Taps

    private func lineWasTapped(_ line: Int, at point: Point) {
        guard let onSelectItem, let lineNode = list.nodeForRow(line) as? CollectionLineNode,
              let item = lineNode.item(at: point) else { return }
        onSelectItem(item)
    }
}

extension CollectionNode: ListDataSource {
    /// The lines the items make (the collection is its list's data source). - Thread: main
    public func numberOfRows(in list: ListNode) -> Int {
        itemCount = max(0, dataSource?.numberOfItems(in: self) ?? 0)
        lineCrossExtent = list.crossExtent
        return collectionLayout.lineCount(forItemCount: itemCount, crossExtent: lineCrossExtent)
    }

    /// A block making one line's node, with its items' nodes inside. - Thread: main (the block: worker)
    public func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let items = collectionLayout.items(inLine: row, itemCount: itemCount, crossExtent: lineCrossExtent)
        let blocks = dataSource.map { source in items.map { source.nodeBlockForItem(at: $0, in: self) } } ?? []
        let layout = collectionLayout
        let horizontal = list.scrollDirection == .horizontal
        return {
            CollectionLineNode(line: row, items: items, nodes: blocks.map { $0() }, layout: layout, horizontal: horizontal)
        }
    }

    /// The layout's estimate for a line. - Thread: main
    public func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? {
        collectionLayout.estimatedLength(ofLine: row, crossExtent: lineCrossExtent)
    }
}

/// One line of a collection: its items' nodes, placed by the collection's layout.
/// - Thread: made and measured on a display worker; shown on the UI thread like any row.
final class CollectionLineNode: Node, @unchecked Sendable {
    let line: Int
    let items: Range<Int>
    let itemNodes: [Node]
    let collectionLayout: any CollectionLayout
    let horizontal: Bool

    init(line: Int, items: Range<Int>, nodes: [Node], layout: any CollectionLayout, horizontal: Bool) {
        self.line = line
        self.items = items
        self.itemNodes = nodes
        self.collectionLayout = layout
        self.horizontal = horizontal
        super.init()
        automaticallyManagesSubnodes = true
    }

    func node(forItem item: Int) -> Node? {
        guard items.contains(item), item - items.lowerBound < itemNodes.count else { return nil }
        return itemNodes[item - items.lowerBound]
    }

    /// The item whose node's frame holds `point` (line coordinates).
    @MainActor
    func item(at point: Point) -> Int? {
        for (index, node) in itemNodes.enumerated() where node.frame.contains(point) {
            return items.lowerBound + index
        }
        return nil
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        CollectionLineSpec(line: line, items: items, nodes: itemNodes, layout: collectionLayout, horizontal: horizontal)
    }
}

/// Measures and places a line's items as the layout says, swapping the axes for a horizontal collection.
struct CollectionLineSpec: LayoutSpec {
    let line: Int
    let items: Range<Int>
    let nodes: [Node]
    let layout: any CollectionLayout
    let horizontal: Bool

    private func swapped(_ size: Size) -> Size { horizontal ? Size(width: size.height, height: size.width) : size }
    private func swapped(_ rect: Rect) -> Rect {
        horizontal ? Rect(x: rect.minY, y: rect.minX, width: rect.height, height: rect.width) : rect
    }

    func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        let cross = horizontal ? range.max.height : range.max.width
        let extent = cross.isFinite && cross > 0 ? cross : 0
        var measured: [Int: (size: Size, layout: ElementLayout)] = [:]
        let arrangement = layout.arrangeLine(line, items: items, crossExtent: extent) { item, itemRange in
            guard items.contains(item), item - items.lowerBound < nodes.count else { return .zero }
            let nodeRange = SizeRange(min: swapped(itemRange.min), max: swapped(itemRange.max))
            let result = context.measure(nodes[item - items.lowerBound], in: nodeRange, parentSize: nodeRange.max)
            measured[item] = (result.size, result)
            return swapped(result.size)
        }
        if arrangement.frames.count != nodes.count {
            context.report(.invalidParameter, "CollectionLayout",
                           "arrangeLine gave \(arrangement.frames.count) frames for \(nodes.count) items of line \(line); items without one are not shown")
        }
        var placements: [Layout.Child] = []
        placements.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() where index < arrangement.frames.count {
            let frame = swapped(arrangement.frames[index].sanitized)
            let item = items.lowerBound + index
            let element: ElementLayout
            if let previous = measured[item], previous.size == frame.size {
                element = previous.layout
            } else {
                element = context.measure(node, in: .exactly(frame.size), parentSize: frame.size)
            }
            element.appendPlacements(to: &placements, offsetBy: frame.origin)
        }
        let length = arrangement.length.isFinite ? max(0, arrangement.length) : 0
        let size = horizontal ? Size(width: length, height: extent) : Size(width: extent, height: length)
        return ElementLayout(size: size, placements: placements)
    }
}
