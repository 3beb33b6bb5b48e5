public import Compositor

/// Builds a list of layout elements from a block, so a spec reads like the shape it makes:
///
/// ```swift
/// override func layoutSpecThatFits(_ range: SizeRange) -> (any LayoutSpec)? {
///     HStack(spacing: 10, alignItems: .start) {
///         avatar.corner(badge, at: .topRight)
///         VStack(spacing: 4) {
///             HStack(spacing: 6) { title.flexShrink(1).flexGrow(1); time }
///             if showsPreview { preview }
///         }
///         .flexShrink(1).flexGrow(1)
///     }
///     .inset(12)
/// }
/// ```
/// Nodes and specs mix freely; `if`, `if let`, `switch`, `for … in` and arrays of nodes work, and an
/// optional node that is nil adds nothing.
/// - Thread: any
@resultBuilder
public enum LayoutBuilder {
    public static func buildExpression(_ element: any LayoutElement) -> [any LayoutElement] { [element] }
    public static func buildExpression(_ element: (any LayoutElement)?) -> [any LayoutElement] {
        element.map { [$0] } ?? []
    }
    public static func buildExpression(_ elements: [any LayoutElement]) -> [any LayoutElement] { elements }
    public static func buildExpression<Element: LayoutElement>(_ elements: [Element]) -> [any LayoutElement] {
        elements
    }
    public static func buildBlock(_ parts: [any LayoutElement]...) -> [any LayoutElement] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [any LayoutElement]?) -> [any LayoutElement] { part ?? [] }
    public static func buildEither(first part: [any LayoutElement]) -> [any LayoutElement] { part }
    public static func buildEither(second part: [any LayoutElement]) -> [any LayoutElement] { part }
    public static func buildArray(_ parts: [[any LayoutElement]]) -> [any LayoutElement] { parts.flatMap { $0 } }
    public static func buildLimitedAvailability(_ part: [any LayoutElement]) -> [any LayoutElement] { part }

    /// One element from a block that should hold one: the element itself, or the block's elements
    /// wrapped together (none: an empty wrapper, which takes the range's minimum).
    static func single(_ elements: [any LayoutElement]) -> any LayoutElement {
        elements.count == 1 ? elements[0] : WrapperSpec(children: elements)
    }
}

/// A horizontal `StackSpec` built from a block. Defaults: no spacing, start, stretch.
/// - Thread: any
public struct HStack: LayoutSpec {
    public var stack: StackSpec

    public init(spacing: Double = 0, justifyContent: StackSpec.Justify = .start, alignItems: StackAlignment = .stretch,
                reversed: Bool = false, wraps: Bool = false, lineSpacing: Double = 0,
                alignContent: StackSpec.AlignContent = .start, @LayoutBuilder _ children: () -> [any LayoutElement]) {
        stack = StackSpec(direction: .horizontal, reversed: reversed, spacing: spacing, justifyContent: justifyContent,
                          alignItems: alignItems, wraps: wraps, lineSpacing: lineSpacing, alignContent: alignContent,
                          children: children())
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        stack.measure(range, in: &context)
    }
}

/// A vertical `StackSpec` built from a block. Defaults: no spacing, start, stretch.
/// - Thread: any
public struct VStack: LayoutSpec {
    public var stack: StackSpec

    public init(spacing: Double = 0, justifyContent: StackSpec.Justify = .start, alignItems: StackAlignment = .stretch,
                reversed: Bool = false, wraps: Bool = false, lineSpacing: Double = 0,
                alignContent: StackSpec.AlignContent = .start, @LayoutBuilder _ children: () -> [any LayoutElement]) {
        stack = StackSpec(direction: .vertical, reversed: reversed, spacing: spacing, justifyContent: justifyContent,
                          alignItems: alignItems, wraps: wraps, lineSpacing: lineSpacing, alignContent: alignContent,
                          children: children())
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        stack.measure(range, in: &context)
    }
}

/// Empty space that takes a stack's leftover length (`flexGrow` 1), never less than `minLength`.
/// - Thread: any
public struct Spacer: LayoutSpec {
    public var style = LayoutStyle()

    public init(minLength: Double = 0) {
        style.flexGrow = 1
        style.flexBasis = .points(minLength)
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        ElementLayout(size: range.min)
    }
}

// MARK: - Spec modifiers

extension LayoutElement {
    /// This element inside an `InsetSpec`.
    public func inset(_ insets: EdgeInsets) -> InsetSpec { InsetSpec(insets, child: self) }
    /// This element with `all` points of space on every side.
    public func inset(_ all: Double) -> InsetSpec { InsetSpec(EdgeInsets(all: all), child: self) }
    /// `overlay` over this element, at its size.
    public func overlay(_ overlay: any LayoutElement) -> OverlaySpec { OverlaySpec(child: self, overlay: overlay) }
    /// `background` under this element, at its size.
    public func background(_ background: any LayoutElement) -> BackgroundSpec {
        BackgroundSpec(child: self, background: background)
    }
    /// This element centred in the space it is given.
    public func centered(_ centering: CenterSpec.Centering = .xy, sizing: RelativeSpec.Sizing = []) -> CenterSpec {
        CenterSpec(centering, sizing: sizing, child: self)
    }
    /// This element at a start, centre or end position on each axis.
    public func relative(horizontal: RelativeSpec.Position = .start, vertical: RelativeSpec.Position = .start,
                         sizing: RelativeSpec.Sizing = []) -> RelativeSpec {
        RelativeSpec(horizontal: horizontal, vertical: vertical, sizing: sizing, child: self)
    }
    /// This element shaped so that height = `ratio` × width.
    public func ratio(_ ratio: Double) -> RatioSpec { RatioSpec(ratio: ratio, child: self) }
    /// `element` pinned with its centre on a corner of this element.
    public func corner(_ element: any LayoutElement, at location: CornerSpec.Location, offset: Point = .zero,
                       wrapsCorner: Bool = false) -> CornerSpec {
        CornerSpec(child: self, corner: element, location: location, offset: offset, wrapsCorner: wrapsCorner)
    }
}
