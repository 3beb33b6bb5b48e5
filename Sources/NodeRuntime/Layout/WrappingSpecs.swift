import Compositor

// Specs that hold one main child and size themselves from it: inset, overlay, background, ratio,
// wrapper.

/// Puts space around its child: the child gets the range less the insets, the spec the child's size
/// plus the insets. Negative insets let the child pass the spec's edges.
/// - Thread: any
public struct InsetSpec: LayoutSpec {
    public var insets: EdgeInsets
    public var child: any LayoutElement

    public init(_ insets: EdgeInsets, child: any LayoutElement) {
        self.insets = insets
        self.child = child
    }

    public init(_ insets: EdgeInsets, @LayoutBuilder child: () -> [any LayoutElement]) {
        self.init(insets, child: LayoutBuilder.single(child()))
    }

    /// The child's growth and cross-axis alignment, which a stack reads on its direct children: a
    /// stretch of the inset is a stretch of what it holds (`list.flexGrow(1).inset(8)` grows as
    /// `list.inset(8).flexGrow(1)` does). A style given to the inset itself wins.
    public var style: LayoutStyle { forwardedStackStyle(of: child) }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        let top = context.checked(insets.top, "top inset", in: "InsetSpec")
        let left = context.checked(insets.left, "left inset", in: "InsetSpec")
        let bottom = context.checked(insets.bottom, "bottom inset", in: "InsetSpec")
        let right = context.checked(insets.right, "right inset", in: "InsetSpec")
        let childRange = range.deflated(horizontally: left + right, vertically: top + bottom)
        let measured = context.measure(child, in: childRange, parentSize: childRange.max)
        let size = Size(width: measured.size.width + left + right, height: measured.size.height + top + bottom)
        return ElementLayout(size: range.clamp(size), placements: measured.placements(offsetBy: Point(x: left, y: top)),
                             firstBaseline: measured.firstBaseline.map { $0 + top },
                             lastBaseline: measured.lastBaseline.map { $0 + top })
    }
}

/// Lays `overlay` over its child at exactly the child's size (a highlight, a progress veil).
/// - Thread: any
public struct OverlaySpec: LayoutSpec {
    public var child: any LayoutElement
    public var overlay: any LayoutElement

    public init(child: any LayoutElement, overlay: any LayoutElement) {
        self.child = child
        self.overlay = overlay
    }

    /// The child's growth and alignment in a stack (see `InsetSpec.style`).
    public var style: LayoutStyle { forwardedStackStyle(of: child) }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        measureStacked(child, with: overlay, above: true, in: range, context: &context)
    }
}

/// Measures `child` in `range`, then `other` at exactly the child's size, and places `other` above the
/// child (later in drawing order) or below it. The child's size and baselines are the result's.
private func measureStacked(_ child: any LayoutElement, with other: any LayoutElement, above: Bool,
                            in range: SizeRange, context: inout LayoutContext) -> ElementLayout {
    let measured = context.measure(child, in: range, parentSize: range.max)
    let companion = context.measure(other, in: .exactly(measured.size), parentSize: measured.size)
    var placements: [Layout.Child] = []
    placements.reserveCapacity(measured.placementCount + companion.placementCount)
    let (first, second) = above ? (measured, companion) : (companion, measured)
    first.appendPlacements(to: &placements, offsetBy: .zero)
    second.appendPlacements(to: &placements, offsetBy: .zero)
    return ElementLayout(size: measured.size, placements: placements,
                         firstBaseline: measured.firstBaseline, lastBaseline: measured.lastBaseline)
}

/// Lays `background` under its child at exactly the child's size (a bubble behind a message).
/// - Thread: any
public struct BackgroundSpec: LayoutSpec {
    public var child: any LayoutElement
    public var background: any LayoutElement

    public init(child: any LayoutElement, background: any LayoutElement) {
        self.child = child
        self.background = background
    }

    /// The child's growth and alignment in a stack (see `InsetSpec.style`).
    public var style: LayoutStyle { forwardedStackStyle(of: child) }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        measureStacked(child, with: background, above: false, in: range, context: &context)
    }
}

/// Gives its child a fixed shape: height = `ratio` × width (a square avatar is 1, a 16:9 video 0.5625).
///
/// It takes the largest size of that shape the range allows, fitting the maximum width or the maximum
/// height, whichever comes closer to the ratio after clamping (the larger area on a tie). When neither
/// maximum is bounded, the child's own width sets the size. A ratio that is not a positive number is
/// reported and ignored (the spec acts as a wrapper).
/// - Thread: any
public struct RatioSpec: LayoutSpec {
    public var ratio: Double
    public var child: any LayoutElement

    public init(ratio: Double, child: any LayoutElement) {
        self.ratio = ratio
        self.child = child
    }

    public init(ratio: Double, @LayoutBuilder child: () -> [any LayoutElement]) {
        self.init(ratio: ratio, child: LayoutBuilder.single(child()))
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        guard ratio.isFinite && ratio > 0 else {
            context.report(.invalidParameter, "RatioSpec", "ratio \(ratio) is not a positive number; ignored")
            return context.measure(child, in: range, parentSize: range.max)
        }
        var candidates: [Size] = []
        if range.max.width.isFinite {
            candidates.append(range.clamp(Size(width: range.max.width, height: range.max.width * ratio)))
        }
        if range.max.height.isFinite {
            candidates.append(range.clamp(Size(width: range.max.height / ratio, height: range.max.height)))
        }
        func error(_ size: Size) -> Double { abs(size.height - size.width * ratio) }
        let target: Size
        if let best = candidates.min(by: { a, b in
            error(a) != error(b) ? error(a) < error(b) : a.width * a.height > b.width * b.height
        }) {
            target = best
        } else {
            let natural = context.measure(child, in: range, parentSize: range.max)
            target = range.clamp(Size(width: natural.size.width, height: natural.size.width * ratio))
        }
        return context.measure(child, in: .exactly(target), parentSize: target)
    }
}

/// Lays every child out in the same range at its origin; the spec is as large as the largest child.
/// With one child it only passes the range through (a place to hang a style on a node).
/// - Thread: any
public struct WrapperSpec: LayoutSpec {
    public var children: [any LayoutElement]

    public init(children: [any LayoutElement]) { self.children = children }

    public init(@LayoutBuilder children: () -> [any LayoutElement]) { self.init(children: children()) }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        if children.count == 1 { return context.measure(children[0], in: range, parentSize: range.max) }
        var size = range.min
        var placements: [Layout.Child] = []
        var firstBaseline: Double?, lastBaseline: Double?
        for child in children {
            let measured = context.measure(child, in: range, parentSize: range.max)
            size = Size(width: max(size.width, measured.size.width), height: max(size.height, measured.size.height))
            measured.appendPlacements(to: &placements, offsetBy: .zero)
            firstBaseline = firstBaseline ?? measured.firstBaseline
            lastBaseline = measured.lastBaseline ?? lastBaseline
        }
        return ElementLayout(size: size, placements: placements, firstBaseline: firstBaseline, lastBaseline: lastBaseline)
    }
}

extension SizeRange {
    /// The range less `horizontally` and `vertically` points (more, when negative), floored at zero.
    func deflated(horizontally: Double, vertically: Double) -> SizeRange {
        func lower(_ v: Double, _ d: Double) -> Double { Swift.max(0, v - d) }
        return SizeRange(validMin: Size(width: lower(min.width, horizontally), height: lower(min.height, vertically)),
                         max: Size(width: lower(max.width, horizontally), height: lower(max.height, vertically)))
    }
}

/// What a wrapper that takes its child's size passes on of the child's style to the stack that holds
/// the wrapper: its growth and its own alignment (a size stays the child's: the wrapper adds to it).
func forwardedStackStyle(of child: any LayoutElement) -> LayoutStyle {
    let childStyle = child.style
    var style = LayoutStyle()
    style.flexGrow = childStyle.flexGrow
    style.alignSelf = childStyle.alignSelf
    return style
}
