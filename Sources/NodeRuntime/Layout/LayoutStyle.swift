public import Compositor

/// A length along one axis: automatic (the element decides), a number of points, or a fraction of
/// the parent's size on that axis.
///
/// A fraction of an unbounded parent (an infinite maximum) has no meaning; it counts as `.auto` and
/// is reported as a diagnostic. Negative, NaN or infinite values are reported too and count as `.auto`
/// (except `+infinity` points for a maximum, which simply means "no maximum").
/// - Thread: any
public enum Dimension: Hashable, Sendable, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    case auto
    case points(Double)
    case fraction(Double)

    public init(floatLiteral value: Double) { self = .points(value) }
    public init(integerLiteral value: Int) { self = .points(Double(value)) }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .points(let value): return "\(value)pt"
        case .fraction(let value): return "\(value * 100)%"
        }
    }
}

/// How an element is placed across a stack (or, for a stack's lines, how they share the cross axis).
/// - Thread: any
public enum StackAlignment: Hashable, Sendable {
    /// At the top of a horizontal stack, the left of a vertical one.
    case start
    case end
    case center
    /// Fills the line's cross size, unless the element has a fixed cross size.
    case stretch
    /// First baselines on one line (horizontal stacks; a vertical stack treats it as `start`).
    case baselineFirst
    /// Last baselines on one line (horizontal stacks; a vertical stack treats it as `start`).
    case baselineLast
}

/// How a layout element is sized and placed by its parent spec: the counterpart of Texture's
/// `ASLayoutElementStyle`, as a value.
///
/// Size properties (`width`, `height` and their minimums and maximums) narrow the range the parent
/// offers; the parent's range always wins when the two do not overlap. Between themselves they follow
/// CSS: a minimum beats a maximum, which beats the exact size. The other properties are read by the
/// spec that holds the element: flex and alignment by stacks, `layoutPosition` by `AbsoluteSpec`.
/// - Thread: any (a value)
public struct LayoutStyle: Hashable, Sendable {
    public var width: Dimension = .auto
    public var height: Dimension = .auto
    public var minWidth: Dimension = .auto
    public var maxWidth: Dimension = .auto
    public var minHeight: Dimension = .auto
    public var maxHeight: Dimension = .auto
    /// The share of a stack's free space the element takes when the stack is below its minimum.
    public var flexGrow = 0.0
    /// How much the element gives up when a stack overflows its maximum, weighted by its size
    /// (CSS's rule: twice the size gives up twice as much). 0 never shrinks.
    public var flexShrink = 0.0
    /// The element's starting size along a stack before flexing, in place of its measured size.
    public var flexBasis: Dimension = .auto
    /// Overrides the stack's `alignItems` for this element; nil follows the stack.
    public var alignSelf: StackAlignment?
    /// Extra space before the element along a stack, added to the stack's spacing.
    public var spacingBefore = 0.0
    /// Extra space after the element along a stack.
    public var spacingAfter = 0.0
    /// Distance from the element's top down to its first baseline; nil: the element's own (a spec's
    /// child's), or its bottom edge when it has none.
    public var ascender: Double?
    /// Distance from the element's last baseline down to its bottom; nil: as for `ascender`.
    public var descender: Double?
    /// The element's origin in an `AbsoluteSpec`.
    public var layoutPosition = Point.zero

    public init() {}

    /// Width and height in points, when both are set as points; setting it sets both (nil: both auto).
    public var preferredSize: Size? {
        get {
            guard case .points(let width) = width, case .points(let height) = height else { return nil }
            return Size(width: width, height: height)
        }
        set {
            width = newValue.map { .points($0.width) } ?? .auto
            height = newValue.map { .points($0.height) } ?? .auto
        }
    }

    /// True when no size property is set: the parent's range passes through unchanged.
    var constrainsSize: Bool {
        width != .auto || height != .auto || minWidth != .auto || maxWidth != .auto
            || minHeight != .auto || maxHeight != .auto
    }
}

/// A node class that wants a style other than the blank one for its new instances, such as a text
/// node that shrinks (and wraps) in a crowded stack by default. The style is read the first time a
/// node's `style` is used; later changes to the node's style are the node's own.
///
/// ```swift
/// extension TextNode: LayoutStyleDefaults {
///     public class var defaultLayoutStyle: LayoutStyle { var style = LayoutStyle(); style.flexShrink = 1; return style }
/// }
/// ```
/// - Thread: any
public protocol LayoutStyleDefaults: Node {
    static var defaultLayoutStyle: LayoutStyle { get }
}

// MARK: - Resolution

extension LayoutStyle {
    /// The range this style allows inside `range`, fractions taken of `parentSize`. Bad values are
    /// reported into `diagnostics` and ignored; a minimum above its maximum wins over it.
    func resolvedRange(in range: SizeRange, parentSize: Size, subject: () -> String,
                       diagnostics: inout [LayoutDiagnostic]) -> SizeRange {
        guard constrainsSize else { return range }
        let horizontal = Self.resolveAxis(
            exact: width, min: minWidth, max: maxWidth, parent: parentSize.width,
            within: (range.min.width, range.max.width), names: ("width", "minWidth", "maxWidth"), subject: subject,
            diagnostics: &diagnostics)
        let vertical = Self.resolveAxis(
            exact: height, min: minHeight, max: maxHeight, parent: parentSize.height,
            within: (range.min.height, range.max.height), names: ("height", "minHeight", "maxHeight"),
            subject: subject, diagnostics: &diagnostics)
        return SizeRange(validMin: Size(width: horizontal.lower, height: vertical.lower),
                         max: Size(width: horizontal.upper, height: vertical.upper))
    }

    /// The least and greatest size the style allows on one axis, ignoring any exact size: the limits
    /// a stack's flexing respects.
    func limits(horizontal: Bool, parent: Double, subject: () -> String,
                diagnostics: inout [LayoutDiagnostic]) -> (lower: Double, upper: Double) {
        let minimum = Self.value(horizontal ? minWidth : minHeight, parent: parent, isMaximum: false,
                                 name: horizontal ? "minWidth" : "minHeight", subject: subject,
                                 diagnostics: &diagnostics) ?? 0
        let maximum = Self.value(horizontal ? maxWidth : maxHeight, parent: parent, isMaximum: true,
                                 name: horizontal ? "maxWidth" : "maxHeight", subject: subject,
                                 diagnostics: &diagnostics) ?? .infinity
        return (minimum, Swift.max(minimum, maximum))
    }

    /// One dimension in points, or nil for auto and for values that cannot be used (reported).
    static func value(_ dimension: Dimension, parent: Double, isMaximum: Bool, name: @autoclosure () -> String,
                      subject: () -> String, diagnostics: inout [LayoutDiagnostic]) -> Double? {
        switch dimension {
        case .auto:
            return nil
        case .points(let points):
            if points.isNaN || points < 0 || (points.isInfinite && !isMaximum) {
                diagnostics.append(.init(.invalidDimension, subject(), "\(name()) of \(points) points is not a size; ignored"))
                return nil
            }
            return points
        case .fraction(let fraction):
            if !fraction.isFinite || fraction < 0 {
                diagnostics.append(.init(.invalidDimension, subject(), "\(name()) fraction \(fraction) is not a size; ignored"))
                return nil
            }
            guard parent.isFinite else {
                diagnostics.append(.init(.unboundedFraction, subject(),
                                         "\(name()) is \(dimension) of an unbounded parent; treated as auto"))
                return nil
            }
            return parent * fraction
        }
    }

    private static func resolveAxis(exact: Dimension, min: Dimension, max: Dimension, parent: Double,
                                    within outer: (lower: Double, upper: Double),
                                    names: (exact: StaticString, min: StaticString, max: StaticString),
                                    subject: () -> String,
                                    diagnostics: inout [LayoutDiagnostic]) -> (lower: Double, upper: Double) {
        let minimum = value(min, parent: parent, isMaximum: false, name: "\(names.min)", subject: subject,
                            diagnostics: &diagnostics) ?? 0
        var maximum = value(max, parent: parent, isMaximum: true, name: "\(names.max)", subject: subject,
                            diagnostics: &diagnostics) ?? .infinity
        if maximum < minimum {
            diagnostics.append(.init(.minimumExceedsMaximum, subject(),
                                     "\(names.min) \(minimum) exceeds \(names.max) \(maximum); the minimum wins"))
            maximum = minimum
        }
        var lower = minimum, upper = maximum
        if let exactValue = value(exact, parent: parent, isMaximum: false, name: "\(names.exact)", subject: subject,
                                  diagnostics: &diagnostics) {
            let clamped = Swift.min(maximum, Swift.max(minimum, exactValue))
            lower = clamped
            upper = clamped
        }
        // The parent's range wins where the two disagree.
        func clamp(_ v: Double) -> Double { Swift.min(outer.upper, Swift.max(outer.lower, v)) }
        return (clamp(lower), clamp(upper))
    }
}
