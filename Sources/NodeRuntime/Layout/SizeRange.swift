public import Compositor

/// The smallest and largest size a node may take.
/// - Thread: any
public struct SizeRange: Hashable, Sendable, CustomStringConvertible {
    public var min: Size
    public var max: Size
    /// True when `init(min:max:)` had to repair its input; measuring reports it. Not part of equality.
    let wasRepaired: Bool

    /// A range, made safe: NaN or negative sizes become 0, an infinite minimum becomes 0, and a minimum
    /// greater than the maximum is lowered to it. `Node.layoutThatFits` reports such repairs as
    /// `LayoutDiagnostic.Kind.invalidRange`.
    public init(min: Size, max: Size) {
        var repaired = false
        func clean(_ v: Double, allowInfinity: Bool) -> Double {
            if v.isNaN || v < 0 || (v.isInfinite && !allowInfinity) {
                repaired = true
                return 0
            }
            return v
        }
        let maxSize = Size(width: clean(max.width, allowInfinity: true), height: clean(max.height, allowInfinity: true))
        var minSize = Size(width: clean(min.width, allowInfinity: false), height: clean(min.height, allowInfinity: false))
        if minSize.width > maxSize.width || minSize.height > maxSize.height {
            repaired = true
            minSize = Size(width: Swift.min(minSize.width, maxSize.width), height: Swift.min(minSize.height, maxSize.height))
        }
        self.min = minSize
        self.max = maxSize
        self.wasRepaired = repaired
    }

    /// A range the caller has already made valid (finite, non-negative minimum no greater than the
    /// maximum, no NaN): the engine's own arithmetic, which must not pay for the checks.
    init(validMin min: Size, max: Size) {
        self.min = min
        self.max = max
        self.wasRepaired = false
    }

    /// Exactly `size`.
    public static func exactly(_ size: Size) -> SizeRange { SizeRange(min: size, max: size) }
    /// Anything from zero to infinity.
    public static let unconstrained = SizeRange(min: .zero, max: Size(width: .infinity, height: .infinity))

    /// True when the range needs no repair (its sides may have been set directly, bypassing `init`).
    var isWellFormed: Bool {
        func ok(_ lo: Double, _ hi: Double) -> Bool { lo.isFinite && lo >= 0 && !hi.isNaN && hi >= lo }
        return ok(min.width, max.width) && ok(min.height, max.height)
    }

    /// `size` clamped into the range (NaN becomes the minimum).
    public func clamp(_ size: Size) -> Size {
        func c(_ v: Double, _ lo: Double, _ hi: Double) -> Double { v.isNaN ? lo : Swift.min(hi, Swift.max(lo, v)) }
        return Size(width: c(size.width, min.width, max.width), height: c(size.height, min.height, max.height))
    }

    public static func == (a: SizeRange, b: SizeRange) -> Bool { a.min == b.min && a.max == b.max }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(min)
        hasher.combine(max)
    }

    public var description: String { "(\(min) … \(max))" }
}
