import Compositor

/// How short of memory the system is, as the desktop tells it: the levels of the XDG memory monitor
/// portal's `LowMemoryWarning` (50, 100 and 255, those of GLib's `GMemoryMonitor`).
/// - Thread: any (a value)
public enum MemoryWarningLevel: Int, Sendable, Comparable, CustomStringConvertible {
    /// Memory is getting short: caches that can be rebuilt should go.
    case low = 50
    /// Short: what is not on screen should go.
    case medium = 100
    /// The system is about to end processes for memory.
    case critical = 255

    /// The level a portal's byte says: at or above 255 critical, at or above 100 medium, else low.
    public init(portalLevel: UInt8) {
        self = portalLevel >= 255 ? .critical : portalLevel >= 100 ? .medium : .low
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .low: "low"
        case .medium: "medium"
        case .critical: "critical"
        }
    }
}

extension NodeHost {
    /// The system is short of memory (`Application` calls this when the desktop's memory monitor
    /// warns): every window lets go of what it can rebuild without changing what it shows.
    /// - Every level: the process's decoded image cache and text layout cache are emptied (nodes on
    ///   screen keep their bitmaps; an image shown again is decoded again).
    /// - `medium` and `critical`: every list of every window keeps only its minimum range's rows drawn
    ///   (as at rest before the first scroll): rows drawn ahead of the scroll let their bitmaps go, and
    ///   scrolling again widens the range as before.
    /// A window out of sight has let go of its textures already (`windowVisibilityChanged`).
    /// - Thread: main
    @MainActor
    public static func releaseMemory(for level: MemoryWarningLevel) {
        UIThread.precondition("NodeHost.releaseMemory")
        ImageCache.shared.removeAll()
        TextLayoutCache.shared.removeAll()
        guard level >= .medium else { return }
        for weak in liveHosts {
            guard let host = weak.host, !host.windowHasClosed else { continue }
            var roots: [Node] = host.rootNode.map { [$0] } ?? []
            roots += host.overlayStack.map(\.container)
            for root in roots { narrowLists(under: root) }
        }
    }

    /// Puts every list under `node` (itself included, and lists in rows on screen) back to its
    /// minimum range until it is scrolled again.
    @MainActor
    private static func narrowLists(under node: Node) {
        var pending = [node]
        while let current = pending.popLast() {
            if let list = current as? ListNode {
                list.narrowToMinimumRange()
                pending += list.rowNodes.filter { $0.interfaceState.contains(.visible) }
            }
            pending += current.subnodes
        }
    }
}

extension ListNode {
    /// Back to the minimum range until the next scroll: rows beyond it leave the display range now.
    @MainActor
    func narrowToMinimumRange() {
        guard hasScrolledSinceAppearing else { return }
        hasScrolledSinceAppearing = false
        if isReady { updateRows() }
    }
}
