public import Compositor

/// Anything a layout spec can hold: a node, or another spec.
///
/// An element is measured for a size range and answers with its size and where the nodes inside it
/// go. Measuring must be safe on any thread: read only immutable or locked state, never a layer.
/// Elements are `Sendable` values (nodes included), so a spec may be built on one thread and
/// measured on another.
/// - Thread: any
public protocol LayoutElement: Sendable {
    /// How the parent spec sizes and places this element.
    var style: LayoutStyle { get }

    /// Measures the element for `range`, which already includes the element's own style. The size
    /// returned must lie within `range`; nodes are placed in the element's coordinates.
    /// - Thread: any
    func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout

    /// This element with its style changed by `change`; the style modifiers go through it. The default
    /// wraps the element in a `StyledElement`; a styled element changes its own style instead of being
    /// wrapped again.
    func styled(_ change: (inout LayoutStyle) -> Void) -> StyledElement
}

/// A layout spec: a value that arranges other elements. What `Node.layoutSpecThatFits` returns.
/// Specs are cheap values built fresh for every measurement, never kept.
/// - Thread: any
public protocol LayoutSpec: LayoutElement {}

extension LayoutSpec {
    /// A spec has the blank style; the modifiers (`spec.flexGrow(1)`) give it another by wrapping it.
    /// Keeping no style in the spec keeps specs small, and they are copied into every parent.
    public var style: LayoutStyle { LayoutStyle() }
}

/// The measured form of one element inside a spec: its size, the nodes it places (in its own
/// coordinates, each with its own measured layout) and its baselines.
/// - Thread: any (a value)
public struct ElementLayout {
    public var size: Size
    /// Distance from the top to the first baseline, if the element has text in it.
    public var firstBaseline: Double?
    /// Distance from the top to the last baseline.
    public var lastBaseline: Double?
    /// A node measured as an element places exactly itself: kept inline, so measuring a leaf does not
    /// allocate an array that its parent copies out of at once.
    private var single: Layout.Child?
    private var many: [Layout.Child]

    public init(size: Size, placements: [Layout.Child] = [], firstBaseline: Double? = nil,
                lastBaseline: Double? = nil) {
        self.size = size
        self.many = placements
        self.firstBaseline = firstBaseline
        self.lastBaseline = lastBaseline
    }

    init(size: Size, placing child: Layout.Child, firstBaseline: Double?, lastBaseline: Double?) {
        self.size = size
        self.single = child
        self.many = []
        self.firstBaseline = firstBaseline
        self.lastBaseline = lastBaseline
    }

    /// The nodes placed, in the element's coordinates, back to front.
    public var placements: [Layout.Child] {
        get { single.map { [$0] } ?? many }
        set {
            single = nil
            many = newValue
        }
    }

    /// How many nodes the element places.
    public var placementCount: Int { single == nil ? many.count : 1 }

    /// The placements moved by `offset`, as a parent spec places this element at `offset`.
    public func placements(offsetBy offset: Point) -> [Layout.Child] {
        var result: [Layout.Child] = []
        result.reserveCapacity(placementCount)
        appendPlacements(to: &result, offsetBy: offset)
        return result
    }

    /// Appends the placements moved by `offset` to `array`: a parent collecting its children's nodes
    /// without a temporary array for each.
    public func appendPlacements(to array: inout [Layout.Child], offsetBy offset: Point) {
        if let single {
            array.append(single.moved(by: offset))
        } else {
            for child in many { array.append(child.moved(by: offset)) }
        }
    }

    /// The first baseline, or the bottom edge for an element without text: how baseline alignment
    /// treats a picture beside a label.
    var firstBaselineOrBottom: Double { firstBaseline ?? size.height }
    var lastBaselineOrBottom: Double { lastBaseline ?? size.height }
}

/// What one node's spec measurement carries along: the node that owns the spec and the diagnostics
/// found so far. `Node.layoutThatFits` makes one for each spec it measures; specs pass it down to
/// their children, so a pass reaches no global state.
/// - Thread: the measuring thread (a value, never shared)
public struct LayoutContext {
    /// The node whose spec is measured; nil for a spec measured on its own.
    public let owner: Node?
    /// Problems found so far, including those of the nodes measured for this spec.
    public internal(set) var diagnostics: [LayoutDiagnostic] = []

    public init(owner: Node?) {
        self.owner = owner
    }

    /// Measures `element` for `range`: narrows the range by the element's style (fractions of
    /// `parentSize`), then measures. The result's size lies within `range`.
    public mutating func measure(_ element: any LayoutElement, in range: SizeRange, parentSize: Size) -> ElementLayout {
        measure(element, style: element.style, in: range, parentSize: parentSize)
    }

    /// As `measure(_:in:parentSize:)`, with the element's style already read (or changed) by the caller.
    public mutating func measure(_ element: any LayoutElement, style: LayoutStyle, in range: SizeRange,
                                 parentSize: Size) -> ElementLayout {
        var resolved = range
        if style.constrainsSize {
            resolved = style.resolvedRange(in: range, parentSize: parentSize,
                                           subject: { Self.name(of: element) }, diagnostics: &diagnostics)
        }
        var result = element.measure(resolved, in: &self)
        // An element that ignores its range is held to it here, so parents can rely on it.
        let usable = { (v: Double) in v.isFinite && v >= 0 }
        if !usable(result.size.width) || !usable(result.size.height) {
            report(.invalidSize, Self.name(of: element),
                   "measured \(result.size) for \(resolved); the range's minimum is used for that side")
            if !usable(result.size.width) { result.size.width = resolved.min.width }
            if !usable(result.size.height) { result.size.height = resolved.min.height }
        }
        result.size = resolved.clamp(result.size)
        if let ascender = style.ascender {
            result.firstBaseline = checked(ascender, "ascender", in: Self.name(of: element))
        }
        if let descender = style.descender {
            result.lastBaseline = result.size.height - checked(descender, "descender", in: Self.name(of: element))
        }
        return result
    }

    /// Adds a diagnostic (printed once per process).
    public mutating func report(_ kind: LayoutDiagnostic.Kind, _ subject: String, _ message: String) {
        diagnostics.append(LayoutDiagnostic(kind, subject, message))
    }

    /// A spec parameter made usable: NaN or infinite values become `neutral`, reported. The subject is
    /// only named when something is wrong: naming reads the node's lock and builds a string.
    mutating func checked(_ value: Double, _ name: String, in subject: @autoclosure () -> String,
                          neutral: Double = 0, allowsNegative: Bool = true) -> Double {
        if value.isFinite && (allowsNegative || value >= 0) { return value }
        report(.invalidParameter, subject(), "\(name) of \(value) is not usable; \(neutral) is used")
        return neutral
    }

    mutating func absorb(_ nested: [LayoutDiagnostic]) {
        if !nested.isEmpty { diagnostics.append(contentsOf: nested) }
    }

    static func name(of element: any LayoutElement) -> String {
        if let node = element as? Node { return LayoutDiagnostic.name(of: node) }
        if let styled = element as? StyledElement { return name(of: styled.base) }
        return String(describing: type(of: element))
    }
}

/// An element with a style of its own, made by the style modifiers (`node.flexShrink(1)`): the
/// wrapped element is measured as usual, and the parent reads this style instead of its own. The node's
/// stored style is left alone, so a spec can be built on any thread without side effects. It is a spec
/// itself, so a node's spec may end with a modifier (`….inset(8).height(64)`).
/// - Thread: any
public struct StyledElement: LayoutSpec {
    public let base: any LayoutElement
    public var style: LayoutStyle

    /// `element` with its current style, ready to be changed; a styled element is not wrapped twice.
    public init(_ element: any LayoutElement) {
        if let styled = element as? StyledElement {
            self = styled
        } else {
            base = element
            style = element.style
        }
    }

    init(base: any LayoutElement, style: LayoutStyle) {
        self.base = base
        self.style = style
    }

    public func styled(_ change: (inout LayoutStyle) -> Void) -> StyledElement {
        var element = self
        change(&element.style)
        return element
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        base.measure(range, in: &context)
    }
}

// MARK: - Style modifiers

extension LayoutElement {
    public func styled(_ change: (inout LayoutStyle) -> Void) -> StyledElement {
        var element = StyledElement(base: self, style: style)
        change(&element.style)
        return element
    }

    public func width(_ width: Dimension) -> StyledElement { styled { $0.width = width } }
    public func height(_ height: Dimension) -> StyledElement { styled { $0.height = height } }
    /// Sets both the width and the height in points (the style's `preferredSize`).
    public func size(_ size: Size) -> StyledElement { styled { $0.preferredSize = size } }
    public func size(width: Dimension, height: Dimension) -> StyledElement {
        styled { $0.width = width; $0.height = height }
    }
    public func minWidth(_ width: Dimension) -> StyledElement { styled { $0.minWidth = width } }
    public func maxWidth(_ width: Dimension) -> StyledElement { styled { $0.maxWidth = width } }
    public func minHeight(_ height: Dimension) -> StyledElement { styled { $0.minHeight = height } }
    public func maxHeight(_ height: Dimension) -> StyledElement { styled { $0.maxHeight = height } }
    public func flexGrow(_ factor: Double) -> StyledElement { styled { $0.flexGrow = factor } }
    public func flexShrink(_ factor: Double) -> StyledElement { styled { $0.flexShrink = factor } }
    public func flexBasis(_ basis: Dimension) -> StyledElement { styled { $0.flexBasis = basis } }
    public func alignSelf(_ alignment: StackAlignment?) -> StyledElement { styled { $0.alignSelf = alignment } }
    public func spacingBefore(_ spacing: Double) -> StyledElement { styled { $0.spacingBefore = spacing } }
    public func spacingAfter(_ spacing: Double) -> StyledElement { styled { $0.spacingAfter = spacing } }
    public func ascender(_ ascender: Double?) -> StyledElement { styled { $0.ascender = ascender } }
    public func descender(_ descender: Double?) -> StyledElement { styled { $0.descender = descender } }
    /// The origin in an `AbsoluteSpec`.
    public func position(_ point: Point) -> StyledElement { styled { $0.layoutPosition = point } }
}
