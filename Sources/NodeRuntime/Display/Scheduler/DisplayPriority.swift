import FoundationEssentials
import Glibc
import Dispatch

/// Order of draw jobs: visible work first, then the nearest to the viewport in the scroll direction.
///
/// `<` means "less urgent", so the most urgent job is the maximum. The order is total: `isVisible`
/// decides first, then `distance` (smaller is more urgent, inside the visible group too). A NaN
/// distance is treated as `+infinity` by `<`, `==` and `hash(into:)` alike, so a bad layout value
/// sorts last instead of breaking the scheduler's heap.
/// - Thread: any (a value)
public struct DisplayPriority: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Whether the node intersects the viewport.
    public var isVisible: Bool
    /// Distance from the viewport in points along the scroll direction (0 = at the edge); smaller is
    /// more urgent. NaN counts as +infinity.
    public var distance: Double

    /// - Thread: any
    public init(isVisible: Bool, distance: Double) {
        self.isVisible = isVisible
        self.distance = distance
    }

    /// On screen now: more urgent than any offscreen work.
    public static let visible = DisplayPriority(isVisible: true, distance: 0)

    /// Off screen, `distance` points ahead of the viewport along the scroll direction.
    /// - Thread: any
    public static func offscreen(distance: Double) -> DisplayPriority {
        DisplayPriority(isVisible: false, distance: distance)
    }

    /// The distance the order uses; NaN must not reach a comparison, which would make it partial.
    @inline(__always)
    var orderingDistance: Double { distance.isNaN ? .infinity : distance }

    /// - Thread: any
    public static func < (lhs: DisplayPriority, rhs: DisplayPriority) -> Bool {
        if lhs.isVisible != rhs.isVisible { return rhs.isVisible }
        return lhs.orderingDistance > rhs.orderingDistance
    }

    /// - Thread: any
    public static func == (lhs: DisplayPriority, rhs: DisplayPriority) -> Bool {
        lhs.isVisible == rhs.isVisible && lhs.orderingDistance == rhs.orderingDistance
    }

    /// - Thread: any
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isVisible)
        hasher.combine(orderingDistance)
    }

    /// For logs and test failures; shows the distance as given (NaN stays NaN).
    public var description: String {
        isVisible ? "visible(\(distance))" : "offscreen(\(distance))"
    }
}

