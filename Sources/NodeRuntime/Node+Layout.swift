public import Compositor
import Foundation

/// The smallest and largest size a node may take.
/// - Thread: any
public struct SizeRange: Hashable, Sendable, CustomStringConvertible {
    public var min: Size
    public var max: Size

    /// A range, made safe: NaN or negative sizes become 0, an infinite minimum becomes 0, and a minimum
    /// greater than the maximum is lowered to it.
    public init(min: Size, max: Size) {
        func clean(_ v: Double, allowInfinity: Bool) -> Double {
            if v.isNaN || v < 0 { return 0 }
            if v.isInfinite { return allowInfinity ? v : 0 }
            return v
        }
        let maxSize = Size(width: clean(max.width, allowInfinity: true), height: clean(max.height, allowInfinity: true))
        let minSize = Size(width: Swift.min(clean(min.width, allowInfinity: false), maxSize.width),
                           height: Swift.min(clean(min.height, allowInfinity: false), maxSize.height))
        self.min = minSize
        self.max = maxSize
    }

    /// Exactly `size`.
    public static func exactly(_ size: Size) -> SizeRange { SizeRange(min: size, max: size) }
    /// Anything from zero to infinity.
    public static let unconstrained = SizeRange(min: .zero, max: Size(width: .infinity, height: .infinity))

    /// `size` clamped into the range.
    public func clamp(_ size: Size) -> Size {
        func c(_ v: Double, _ lo: Double, _ hi: Double) -> Double { v.isNaN ? lo : Swift.min(hi, Swift.max(lo, v)) }
        return Size(width: c(size.width, min.width, max.width), height: c(size.height, min.height, max.height))
    }

    public var description: String { "(\(min) … \(max))" }
}

/// A measured layout: the node's size and the frames of the nodes it places.
/// - Thread: any (made anywhere, applied on the UI thread)
public struct Layout {
    public var size: Size
    /// Children and their frames in the node's coordinates.
    public var children: [(node: Node, frame: Rect)]
    public init(size: Size, children: [(node: Node, frame: Rect)] = []) {
        self.size = size
        self.children = children
    }
}

/// Something that lays out nodes for a size range: the value a node's `layoutSpecThatFits` returns.
/// - Thread: any
public protocol LayoutSpec {
    /// The size it takes within `range` and where it puts each node.
    func layout(within range: SizeRange) -> Layout
}

/// The layout cache of one node. (guarded by the node's lock)
struct LayoutCache {
    var entries: [SizeRange: Layout] = [:]
    var version = 0
}

extension Node {
    /// A preferred size used by the default `calculateSizeThatFits`. - Thread: any
    public var preferredSize: Size? {
        get { state.withLock { $0.preferredSize } }
        set {
            state.withLock { $0.preferredSize = newValue }
            setNeedsLayout()
        }
    }

    /// Measures the node for `range`: its layout spec if it has one, else `calculateSizeThatFits`.
    /// Results are cached by range until `setNeedsLayout`.
    /// - Thread: any
    public func layoutThatFits(_ range: SizeRange) -> Layout {
        if let cached = state.withLock({ $0.layoutCache.entries[range] }) { return cached }
        let version = state.withLock { $0.layoutCache.version }
        var layout: Layout
        if let spec = layoutSpecThatFits(range) {
            layout = spec.layout(within: range)
            layout.size = range.clamp(layout.size)
        } else {
            layout = Layout(size: range.clamp(calculateSizeThatFits(range.max)))
        }
        state.withLock { state in
            // A layout measured across an invalidation is returned but not kept.
            if state.layoutCache.version == version { state.layoutCache.entries[range] = layout }
        }
        return layout
    }

    /// Drops this node's cached layouts and those of its ancestors, whose sizes may depend on it.
    /// - Thread: any
    public func setNeedsLayout() {
        var node: Node? = self
        while let current = node {
            current.invalidateCalculatedLayout()
            node = current.supernode
        }
    }

    func invalidateCalculatedLayout() {
        state.withLock { state in
            state.layoutCache.entries.removeAll(keepingCapacity: true)
            state.layoutCache.version += 1
        }
    }

    /// Applies `layout` to this node's subtree: sets the children's frames, calls `layout()`, then lays
    /// each subnode out at its size the same way (parents before children). Subnodes the layout does not
    /// place keep their frames and are laid out at their current size.
    /// - Thread: main
    public func applyLayout(_ layout: Layout) {
        UIThread.precondition("Node.applyLayout")
        let placed = layout.children.filter { $0.node.supernode === self }
        for (child, frame) in placed { child.frame = frame }
        self.layout()
        for child in subnodes { child.applyLayout(child.layoutThatFits(.exactly(child.frame.size))) }
    }

    /// Measures for exactly the node's current size and applies the result. - Thread: main
    public func layoutIfNeeded() {
        applyLayout(layoutThatFits(.exactly(frame.size)))
    }
}
