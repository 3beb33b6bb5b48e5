/// Insets from each edge, in points. Negative insets enlarge.
/// - Thread: any
public struct EdgeInsets: Hashable, Sendable {
    public var top: Double, left: Double, bottom: Double, right: Double
    public init(top: Double = 0, left: Double = 0, bottom: Double = 0, right: Double = 0) {
        self.top = top; self.left = left; self.bottom = bottom; self.right = right
    }
    /// The same inset on every edge.
    public init(all inset: Double) { self.init(top: inset, left: inset, bottom: inset, right: inset) }
    public static let zero = EdgeInsets()
}
