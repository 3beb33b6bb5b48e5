public import Compositor

// Specs that put children at chosen places: relative (and its common case, center), absolute, corner.

/// Places its child at the start, centre or end of each axis of the space it takes.
///
/// The child is measured from zero up to the spec's maximum. The spec takes its maximum on an axis,
/// or the child's size there when that axis is in `sizing` or the maximum is unbounded, clamped to
/// the range.
/// - Thread: any
public struct RelativeSpec: LayoutSpec {
    public enum Position: Hashable, Sendable {
        case start
        case center
        case end
    }

    /// Axes on which the spec hugs its child instead of filling its maximum.
    /// - Thread: any (a value)
    public struct Sizing: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let minimumWidth = Sizing(rawValue: 1 << 0)
        public static let minimumHeight = Sizing(rawValue: 1 << 1)
        public static let minimumSize: Sizing = [.minimumWidth, .minimumHeight]
    }

    public var horizontal: Position
    public var vertical: Position
    public var sizing: Sizing
    public var child: any LayoutElement

    public init(horizontal: Position = .start, vertical: Position = .start, sizing: Sizing = [],
                child: any LayoutElement) {
        self.horizontal = horizontal
        self.vertical = vertical
        self.sizing = sizing
        self.child = child
    }

    public init(horizontal: Position = .start, vertical: Position = .start, sizing: Sizing = [],
                @LayoutBuilder child: () -> [any LayoutElement]) {
        self.init(horizontal: horizontal, vertical: vertical, sizing: sizing, child: LayoutBuilder.single(child()))
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        let measured = context.measure(child, in: SizeRange(validMin: .zero, max: range.max), parentSize: range.max)
        func side(_ hugs: Bool, _ maximum: Double, _ child: Double) -> Double {
            hugs || !maximum.isFinite ? child : maximum
        }
        let size = range.clamp(Size(
            width: side(sizing.contains(.minimumWidth), range.max.width, measured.size.width),
            height: side(sizing.contains(.minimumHeight), range.max.height, measured.size.height)))
        func offset(_ position: Position, _ space: Double, _ length: Double) -> Double {
            switch position {
            case .start: return 0
            case .center: return (space - length) / 2
            case .end: return space - length
            }
        }
        let origin = Point(x: offset(horizontal, size.width, measured.size.width),
                           y: offset(vertical, size.height, measured.size.height))
        return ElementLayout(size: size, placements: measured.placements(offsetBy: origin),
                             firstBaseline: measured.firstBaseline.map { $0 + origin.y },
                             lastBaseline: measured.lastBaseline.map { $0 + origin.y })
    }
}

/// Centres its child on one or both axes: a `RelativeSpec` with centred positions (an axis that is not
/// centred keeps the child at its start).
/// - Thread: any
public struct CenterSpec: LayoutSpec {
    /// - Thread: any (a value)
    public struct Centering: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let x = Centering(rawValue: 1 << 0)
        public static let y = Centering(rawValue: 1 << 1)
        public static let xy: Centering = [.x, .y]
    }

    public var centering: Centering
    public var sizing: RelativeSpec.Sizing
    public var child: any LayoutElement

    public init(_ centering: Centering = .xy, sizing: RelativeSpec.Sizing = [], child: any LayoutElement) {
        self.centering = centering
        self.sizing = sizing
        self.child = child
    }

    public init(_ centering: Centering = .xy, sizing: RelativeSpec.Sizing = [],
                @LayoutBuilder child: () -> [any LayoutElement]) {
        self.init(centering, sizing: sizing, child: LayoutBuilder.single(child()))
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        RelativeSpec(horizontal: centering.contains(.x) ? .center : .start,
                     vertical: centering.contains(.y) ? .center : .start, sizing: sizing, child: child)
            .measure(range, in: &context)
    }
}

/// Places each child at its style's `layoutPosition`, sized by its style (up to the room left between
/// its position and the spec's maximum).
/// - Thread: any
public struct AbsoluteSpec: LayoutSpec {
    public enum Sizing: Hashable, Sendable {
        /// The spec's maximum where it is bounded, else the children's bounding box.
        case `default`
        /// The children's bounding box (from the origin), within the range.
        case sizeToFit
    }

    public var sizing: Sizing
    public var children: [any LayoutElement]

    public init(sizing: Sizing = .default, children: [any LayoutElement]) {
        self.sizing = sizing
        self.children = children
    }

    public init(sizing: Sizing = .default, @LayoutBuilder children: () -> [any LayoutElement]) {
        self.init(sizing: sizing, children: children())
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        var placements: [Layout.Child] = []
        var extent = Size.zero
        for child in children {
            let style = child.style
            let position = Point(x: context.checked(style.layoutPosition.x, "layoutPosition.x", in: LayoutContext.name(of: child)),
                                 y: context.checked(style.layoutPosition.y, "layoutPosition.y", in: LayoutContext.name(of: child)))
            let room = Size(width: max(0, range.max.width - position.x), height: max(0, range.max.height - position.y))
            let measured = context.measure(child, style: style, in: SizeRange(validMin: .zero, max: room),
                                           parentSize: range.max)
            measured.appendPlacements(to: &placements, offsetBy: position)
            extent = Size(width: max(extent.width, position.x + measured.size.width),
                          height: max(extent.height, position.y + measured.size.height))
        }
        var size = extent
        if sizing == .default {
            if range.max.width.isFinite { size.width = range.max.width }
            if range.max.height.isFinite { size.height = range.max.height }
        }
        return ElementLayout(size: range.clamp(size), placements: placements)
    }
}

/// Pins `corner` (a badge, a close button) with its centre on a corner of `child`, moved by `offset`.
///
/// The corner element is measured from zero up to the spec's maximum. Without `wrapsCorner` the spec
/// is the child's size and the corner element may stick out; with it, the spec grows to hold the corner
/// element too (the child is measured in the room left for it and moves in from the edges).
/// - Thread: any
public struct CornerSpec: LayoutSpec {
    public enum Location: Hashable, Sendable {
        case topLeft
        case topRight
        case bottomLeft
        case bottomRight
    }

    public var child: any LayoutElement
    public var corner: any LayoutElement
    public var location: Location
    public var offset: Point
    public var wrapsCorner: Bool

    public init(child: any LayoutElement, corner: any LayoutElement, location: Location = .topRight,
                offset: Point = .zero, wrapsCorner: Bool = false) {
        self.child = child
        self.corner = corner
        self.location = location
        self.offset = offset
        self.wrapsCorner = wrapsCorner
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        let offset = Point(x: context.checked(self.offset.x, "offset.x", in: "CornerSpec"),
                           y: context.checked(self.offset.y, "offset.y", in: "CornerSpec"))
        let badge = context.measure(corner, in: SizeRange(validMin: .zero, max: range.max), parentSize: range.max)
        let isLeft = location == .topLeft || location == .bottomLeft
        let isTop = location == .topLeft || location == .topRight
        // How far the corner element sticks out past each edge of the child.
        var outside = EdgeInsets.zero
        if wrapsCorner {
            let halfWidth = badge.size.width / 2, halfHeight = badge.size.height / 2
            if isLeft { outside.left = max(0, halfWidth - offset.x) } else { outside.right = max(0, halfWidth + offset.x) }
            if isTop { outside.top = max(0, halfHeight - offset.y) } else { outside.bottom = max(0, halfHeight + offset.y) }
        }
        let childRange = range.deflated(horizontally: outside.left + outside.right, vertically: outside.top + outside.bottom)
        let measured = context.measure(child, in: childRange, parentSize: childRange.max)
        let childOrigin = Point(x: outside.left, y: outside.top)
        let anchor = Point(x: childOrigin.x + (isLeft ? 0 : measured.size.width) + offset.x,
                           y: childOrigin.y + (isTop ? 0 : measured.size.height) + offset.y)
        let badgeOrigin = Point(x: anchor.x - badge.size.width / 2, y: anchor.y - badge.size.height / 2)
        let size = Size(width: measured.size.width + outside.left + outside.right,
                        height: measured.size.height + outside.top + outside.bottom)
        var placements: [Layout.Child] = []
        placements.reserveCapacity(measured.placementCount + badge.placementCount)
        measured.appendPlacements(to: &placements, offsetBy: childOrigin)
        badge.appendPlacements(to: &placements, offsetBy: badgeOrigin)
        return ElementLayout(size: range.clamp(size), placements: placements,
                             firstBaseline: measured.firstBaseline.map { $0 + childOrigin.y },
                             lastBaseline: measured.lastBaseline.map { $0 + childOrigin.y })
    }
}
