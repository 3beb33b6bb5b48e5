public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// One pointer's contact, as nodes and gesture recognizers see it.
/// - Thread: any (a value); delivered on the UI thread
public struct Touch: Sendable, Equatable {
    public enum Phase: Sendable, Equatable { case began, moved, ended, cancelled }
    public var phase: Phase
    /// Where the pointer is, in the root node's coordinates (window points).
    public var location: Point
    /// The frame clock's time of the event, in seconds.
    public var timestamp: Double
    /// The mouse button that went down to start the touch; every event of the sequence carries it.
    public var button: PointerButton
    /// How many quick presses in one place this touch's press completes, as the platform counts them
    /// (SDL's `clicks`): 1 for a single click, 2 for the second press of a double-click. Every event of
    /// the sequence carries the count of the press that started it.
    public var clickCount: Int
    public init(phase: Phase, location: Point, timestamp: Double, button: PointerButton = .primary,
                clickCount: Int = 1) {
        self.phase = phase; self.location = location; self.timestamp = timestamp
        self.button = button; self.clickCount = clickCount
    }
}

extension Node {
    /// The next node events go to after this one: the supernode, or for a list's row (which is not a
    /// subnode of its list) the list. The host collects gesture recognizers, routes the wheel and
    /// tracks hover along this chain; layout and display follow `supernode` only.
    /// - Thread: main
    @MainActor
    var eventSupernode: Node? { supernode ?? eventParent }

    /// The point converted from the window's coordinates (where pointer events are; the host's root
    /// starts at the window's top left, or below its menu bar) into this node's. On the UI thread a
    /// loaded node uses where its layer really is (a row placed by a list, a screen mid-slide);
    /// elsewhere it adds up node frames.
    /// - Thread: any
    public func convertFromRoot(_ point: Point) -> Point {
        if UIThread.isCurrent, isNodeLoaded, let converted = MainActor.assumeIsolated({ convertFromRootThroughLayers(point) }) {
            return converted
        }
        var x = point.x, y = point.y
        var node: Node = self
        while let parent = node.supernode {
            let origin = node.frame.sanitized.origin
            x -= origin.x
            y -= origin.y
            node = parent
        }
        // A host's root sits where the host puts it (below a menu bar): root coordinates are the window's.
        // (The host is the UI thread's to read; elsewhere the root is taken at the window's top left.)
        if UIThread.isCurrent, node.rootHost != nil {
            let origin = node.frame.sanitized.origin
            x -= origin.x
            y -= origin.y
        }
        return Point(x: x, y: y)
    }

    /// `convertFromRoot` through where the layers really are; nil when this node's layer is not in a tree.
    @MainActor
    private func convertFromRootThroughLayers(_ point: Point) -> Point? {
        guard let layer = layerIfLoaded, layer.superlayer != nil else { return nil }
        var origin = layer.frameInRoot.origin
        // The host's root layer holds the root node's layer; its origin is the window's.
        var top = layer
        while let parent = top.superlayer { top = parent }
        origin.x -= top.frame.sanitized.minX
        origin.y -= top.frame.sanitized.minY
        return Point(x: point.x - origin.x, y: point.y - origin.y)
    }

    /// The frontmost interactive node under `point` (in this node's coordinates): subnodes are tried
    /// front to back before the node itself. Hidden and fully transparent subtrees are skipped, and so is
    /// whatever a `clipsToBounds` node clips away; a
    /// layer-backed node is never the answer itself but its interactive subnodes can be. The hit area is
    /// the bounds grown by `hitTestSlop` (negative insets enlarge).
    /// - Thread: main
    @MainActor
    public func defaultHitTest(_ point: Point) -> Node? {
        let snapshot = state.withLock { $0 }
        guard !snapshot.isHidden, snapshot.opacity > 0, point.x.isFinite, point.y.isFinite else { return nil }
        let size = snapshot.frame.sanitized.size
        // What a clipping node does not show cannot be touched.
        if snapshot.clipsToBounds && !Rect(origin: .zero, size: size).contains(point) { return nil }
        let ordered = snapshot.subnodes.enumerated()
            .sorted { ($0.element.zPosition, $0.offset) > ($1.element.zPosition, $1.offset) }
        for (_, subnode) in ordered {
            let origin = subnode.frame.sanitized.origin
            if let hit = subnode.hitTest(Point(x: point.x - origin.x, y: point.y - origin.y)) { return hit }
        }
        guard snapshot.isUserInteractionEnabled else { return nil }
        let slop = snapshot.hitTestSlop
        let area = Rect(x: slop.left, y: slop.top,
                        width: size.width - slop.left - slop.right, height: size.height - slop.top - slop.bottom)
        return area.contains(point) ? self : nil
    }
}
