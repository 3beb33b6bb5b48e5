public import Compositor

/// A measured layout: the node's size and, for a node with a layout spec, the frames of the nodes the
/// spec placed, each with its own measured layout. Immutable, so one result can be cached, shared
/// between threads' reads and applied later on the UI thread. A class, so that a cached result and the
/// parents that hold it share one copy: a tree of layouts is passed around by reference.
/// - Thread: any (made anywhere, applied on the UI thread)
public final class Layout: Equatable {
    /// A node placed by a spec: its frame in the parent's coordinates and its own layout at that size.
    /// - Thread: any (a value)
    public struct Child: Equatable {
        public let node: Node
        public let frame: Rect
        public let layout: Layout

        public init(node: Node, frame: Rect, layout: Layout) {
            self.node = node
            self.frame = frame
            self.layout = layout
        }

        func moved(by offset: Point) -> Child {
            offset == .zero ? self : Child(node: node, frame: frame.offsetBy(dx: offset.x, dy: offset.y), layout: layout)
        }

        public static func == (a: Child, b: Child) -> Bool {
            a.node === b.node && a.frame == b.frame && a.layout == b.layout
        }
    }

    public let size: Size
    /// The placed nodes, back to front.
    public let children: [Child]
    /// Distance from the top to the first baseline, when the node has one (text, or a style ascender).
    public let firstBaseline: Double?
    /// Distance from the top to the last baseline.
    public let lastBaseline: Double?
    /// Problems met while measuring this node and the nodes measured for it (see `LayoutDiagnostic`).
    public let diagnostics: [LayoutDiagnostic]

    public init(size: Size, children: [Child] = [], firstBaseline: Double? = nil, lastBaseline: Double? = nil,
                diagnostics: [LayoutDiagnostic] = []) {
        self.size = size
        self.children = children
        self.firstBaseline = firstBaseline
        self.lastBaseline = lastBaseline
        self.diagnostics = diagnostics
    }

    /// The frame given to `node`, if this layout places it directly.
    public func frame(of node: Node) -> Rect? { children.first { $0.node === node }?.frame }

    /// Equal sizes, baselines, diagnostics and children (the same nodes at the same frames with equal
    /// layouts).
    public static func == (a: Layout, b: Layout) -> Bool {
        a === b || (a.size == b.size && a.firstBaseline == b.firstBaseline && a.lastBaseline == b.lastBaseline
            && a.diagnostics == b.diagnostics && a.children == b.children)
    }

    func addingDiagnostics(_ extra: [LayoutDiagnostic]) -> Layout {
        Layout(size: size, children: children, firstBaseline: firstBaseline, lastBaseline: lastBaseline,
               diagnostics: extra + diagnostics)
    }
}

/// The layout cache of one node: the last few results by range, and a version that every invalidation
/// bumps (a result measured across an invalidation is returned but never stored).
/// (guarded by the node's lock)
struct LayoutCache {
    /// A handful of entries searched in order: a node is measured for one or two ranges at a time (a
    /// stack measures, then flexes), so a short list beats a dictionary and stays bounded while a
    /// window is resized through many widths.
    struct Entries {
        static let capacity = 4
        fileprivate var items: [(range: SizeRange, layout: Layout)] = []

        subscript(range: SizeRange) -> Layout? {
            for item in items where item.range == range { return item.layout }
            return nil
        }

        /// Empties the cache and hands back what it held, for the caller to let go of after unlocking
        /// (a layout keeps its nodes alive, and a node let go of runs its `deinit`).
        mutating func takeAll() -> [Layout] {
            guard !items.isEmpty else { return [] }
            let taken = items.map(\.layout)
            items.removeAll(keepingCapacity: true)
            return taken
        }

        /// Keeps `layout` for `range`; returns the layout it replaced or evicted, to be let go of after
        /// unlocking.
        mutating func store(_ layout: Layout, for range: SizeRange) -> Layout? {
            if let index = items.firstIndex(where: { $0.range == range }) {
                defer { items[index].layout = layout }
                return items[index].layout
            }
            var evicted: Layout?
            if items.count == Self.capacity { evicted = items.removeFirst().layout }
            if items.isEmpty { items.reserveCapacity(Self.capacity) }
            items.append((range, layout))
            return evicted
        }
    }
    var entries = Entries()
    var version = 0
}

/// A node's layout settings and in-flight measurements. (guarded by the node's lock)
struct NodeLayoutState {
    /// Nil until first used, then the class's `LayoutStyleDefaults.defaultLayoutStyle` or a blank style.
    var style: LayoutStyle?
    var automaticallyManagesSubnodes = false
    /// `setNeedsLayout` reached this node and no layout has been applied to it since: its frame may
    /// be about to change, so its next draw waits for the layout (a frame or two at most).
    var layoutPending = false
    /// Threads measuring this node right now: the same thread arriving again is a cycle.
    var measuringThreads = ThreadSet()
}

/// A few thread identities, the first kept inline: almost always one thread measures a node at a
/// time, and that case must not allocate.
struct ThreadSet {
    private var first: UInt = 0
    private var others: [UInt] = []

    func contains(_ thread: UInt) -> Bool { first == thread || others.contains(thread) }

    mutating func insert(_ thread: UInt) {
        if first == 0 { first = thread } else { others.append(thread) }
    }

    mutating func remove(_ thread: UInt) {
        if first == thread {
            first = others.popLast() ?? 0
        } else if let index = others.firstIndex(of: thread) {
            others.remove(at: index)
        }
    }
}
