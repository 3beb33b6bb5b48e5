import Compositor

/// Lays its children out in a row or a column, flexing them to fit: the workhorse of cells.
///
/// The rules, in order:
/// 1. Each child is measured with an unbounded length along the stack (or exactly its `flexBasis`)
///    and the stack's own cross range (from 0, or from the stack's cross minimum for children that
///    stretch in a single-line stack). Its style narrows both.
/// 2. With `wraps`, children go on one line while they fit the stack's maximum length, then a new
///    line starts (each line holds at least one child).
/// 3. The stack's length is its longest line, kept within its range. A line shorter than that grows
///    its `flexGrow` children to fill it; a line longer than the maximum shrinks its `flexShrink`
///    children, each by its share of `flexShrink × size`. Neither passes a child's own minimum or
///    maximum. A flexed child is measured again at its new length, so text that shrinks wraps and
///    grows taller. Without flexible children, a line overflows (children pass the stack's bounds).
/// 4. Leftover length is spread by `justifyContent`; `spacing` goes between children, and each child's
///    `spacingBefore` and `spacingAfter` around it.
/// 5. Each line is as thick as its thickest child (baseline-aligned children counted by their
///    ascent and descent). A single-line stack is as thick as that line within its cross range and
///    the line takes the stack's thickness; a wrapping stack sums its lines and `lineSpacing` and
///    spreads the rest by `alignContent`.
/// 6. Children are placed across their line by `alignSelf`, else `alignItems`; a stretched child is
///    measured again at the line's thickness (a child with a fixed cross size does not stretch).
/// 7. A reversed stack is the same layout mirrored along the stack: the first child at the end.
///
/// The stack's first baseline is the highest first baseline among its children, its last baseline the
/// lowest last baseline.
/// - Thread: any
public struct StackSpec: LayoutSpec {
    public enum Direction: Hashable, Sendable {
        case horizontal
        case vertical
    }

    /// Where a line's leftover length goes.
    public enum Justify: Hashable, Sendable {
        case start
        case center
        case end
        /// Between the children; a lone child, or a line that overflows, starts at the start.
        case spaceBetween
        /// Around each child, half at each side; a line that overflows is centred.
        case spaceAround
    }

    /// Where a wrapping stack's leftover thickness goes.
    public enum AlignContent: Hashable, Sendable {
        case start
        case center
        case end
        case spaceBetween
        case spaceAround
        /// Shared equally by the lines, which get thicker.
        case stretch
    }

    public var direction: Direction
    /// Mirrors the stack along its direction: the first child at the right (or bottom).
    public var isReversed: Bool
    /// Space between adjacent children; negative values overlap them.
    public var spacing: Double
    public var justifyContent: Justify
    public var alignItems: StackAlignment
    /// Starts a new line when the next child would pass the stack's maximum length.
    public var wraps: Bool
    /// Space between lines of a wrapping stack.
    public var lineSpacing: Double
    public var alignContent: AlignContent
    public var children: [any LayoutElement]

    public init(direction: Direction, reversed: Bool = false, spacing: Double = 0, justifyContent: Justify = .start,
                alignItems: StackAlignment = .stretch, wraps: Bool = false, lineSpacing: Double = 0,
                alignContent: AlignContent = .start, children: [any LayoutElement]) {
        self.direction = direction
        self.isReversed = reversed
        self.spacing = spacing
        self.justifyContent = justifyContent
        self.alignItems = alignItems
        self.wraps = wraps
        self.lineSpacing = lineSpacing
        self.alignContent = alignContent
        self.children = children
    }

    public init(direction: Direction, reversed: Bool = false, spacing: Double = 0, justifyContent: Justify = .start,
                alignItems: StackAlignment = .stretch, wraps: Bool = false, lineSpacing: Double = 0,
                alignContent: AlignContent = .start, @LayoutBuilder children: () -> [any LayoutElement]) {
        self.init(direction: direction, reversed: reversed, spacing: spacing, justifyContent: justifyContent,
                  alignItems: alignItems, wraps: wraps, lineSpacing: lineSpacing, alignContent: alignContent,
                  children: children())
    }

    public func measure(_ range: SizeRange, in context: inout LayoutContext) -> ElementLayout {
        guard !children.isEmpty else { return ElementLayout(size: range.min) }
        var pass = StackPass(spec: self, range: range, context: &context)
        return pass.run(context: &context)
    }
}

/// One measurement of a stack: the children's state as the steps of the algorithm go through them.
/// Children are reached by index and changed in place, so a step never copies a child's record.
private struct StackPass {
    /// One child on its way through the algorithm.
    struct Item {
        let alignment: StackAlignment
        let grow: Double
        let shrink: Double
        let before: Double
        let after: Double
        /// The child's own minimum and maximum length, which flexing respects.
        let limits: (lower: Double, upper: Double)
        /// The cross range of the first measurement, kept when the child is flexed.
        let crossRange: (lower: Double, upper: Double)
        /// The child's style with its flex basis in place of its length (read again when it is re-measured).
        let style: LayoutStyle
        var layout: ElementLayout
        var position = Point.zero
    }

    let spec: StackSpec
    let axis: Axis
    let spacing: Double
    let lineSpacing: Double
    let mainMin: Double, mainMax: Double, crossMin: Double, crossMax: Double
    let parentSize: Size
    var items: [Item] = []

    init(spec: StackSpec, range: SizeRange, context: inout LayoutContext) {
        self.spec = spec
        axis = Axis(horizontal: spec.direction == .horizontal)
        let name = axis.horizontal ? "StackSpec (horizontal)" : "StackSpec (vertical)"
        spacing = context.checked(spec.spacing, "spacing", in: name)
        lineSpacing = context.checked(spec.lineSpacing, "lineSpacing", in: name)
        mainMin = axis.main(range.min)
        mainMax = axis.main(range.max)
        crossMin = axis.cross(range.min)
        crossMax = axis.cross(range.max)
        parentSize = range.max
    }

    mutating func run(context: inout LayoutContext) -> ElementLayout {
        items.reserveCapacity(spec.children.count)
        for child in spec.children { measureFirst(child, context: &context) }

        let stackMain: Double, stackCross: Double
        if !spec.wraps {
            // One line, as thick as the stack: the common case, kept free of per-line arrays.
            let line = 0..<items.count
            stackMain = min(mainMax, max(mainMin, content(of: line)))
            flex(line, toward: stackMain, context: &context)
            let metrics = lineMetrics(line)
            stackCross = min(crossMax, max(crossMin, metrics.thickness))
            place(line, stackMain: stackMain, lineOffset: 0, lineCross: stackCross, ascent: metrics.ascent,
                  lastAscent: metrics.lastAscent, context: &context)
        } else {
            let lines = breakLines()
            var longest = 0.0
            for line in lines { longest = max(longest, content(of: line)) }
            stackMain = min(mainMax, max(mainMin, longest))
            for line in lines { flex(line, toward: stackMain, context: &context) }
            let metrics = lines.map { lineMetrics($0) }
            var lineCross = metrics.map(\.thickness)
            let total = lineCross.reduce(0, +) + lineSpacing * Double(lines.count - 1)
            stackCross = min(crossMax, max(crossMin, total))
            // The stack's leftover thickness goes around or into the lines.
            let free = stackCross - total
            let count = Double(lines.count)
            var offset = 0.0, gap = lineSpacing
            switch spec.alignContent {
            case .start: break
            case .center: offset = free / 2
            case .end: offset = free
            case .spaceBetween: if free > 0 && lines.count > 1 { gap += free / (count - 1) }
            case .spaceAround:
                if free > 0 { offset = free / count / 2; gap += free / count } else { offset = free / 2 }
            case .stretch: if free > 0 { lineCross = lineCross.map { $0 + free / count } }
            }
            for (index, line) in lines.enumerated() {
                place(line, stackMain: stackMain, lineOffset: offset, lineCross: lineCross[index],
                      ascent: metrics[index].ascent, lastAscent: metrics[index].lastAscent, context: &context)
                offset += lineCross[index] + gap
            }
        }

        var placements: [Layout.Child] = []
        placements.reserveCapacity(items.reduce(0) { $0 + $1.layout.placementCount })
        var firstBaseline: Double?, lastBaseline: Double?
        for index in items.indices {
            var position = items[index].position
            let size = items[index].layout.size
            if spec.isReversed {
                position = axis.point(main: stackMain - axis.main(position) - axis.main(size), cross: axis.cross(position))
            }
            items[index].layout.appendPlacements(to: &placements, offsetBy: position)
            if let first = items[index].layout.firstBaseline {
                firstBaseline = min(firstBaseline ?? .infinity, position.y + first)
            }
            if let last = items[index].layout.lastBaseline {
                lastBaseline = max(lastBaseline ?? -.infinity, position.y + last)
            }
        }
        return ElementLayout(size: axis.size(main: stackMain, cross: stackCross), placements: placements,
                             firstBaseline: firstBaseline, lastBaseline: lastBaseline)
    }

    // MARK: - Steps

    private mutating func measureFirst(_ child: any LayoutElement, context: inout LayoutContext) {
        var style = child.style
        let subject = { LayoutContext.name(of: child) }
        var diagnostics: [LayoutDiagnostic] = []
        var alignment = style.alignSelf ?? spec.alignItems
        if !axis.horizontal && (alignment == .baselineFirst || alignment == .baselineLast) { alignment = .start }
        // A child with a fixed thickness keeps it, as in CSS.
        if alignment == .stretch && (axis.horizontal ? style.height : style.width) != .auto { alignment = .start }
        if style.flexBasis != .auto,
           let basis = LayoutStyle.value(style.flexBasis, parent: mainMax, isMaximum: false, name: "flexBasis",
                                         subject: subject, diagnostics: &diagnostics) {
            if axis.horizontal { style.width = .points(basis) } else { style.height = .points(basis) }
        }
        let limits = style.limits(horizontal: axis.horizontal, parent: mainMax, subject: subject,
                                  diagnostics: &diagnostics)
        var crossLower = 0.0
        if alignment == .stretch && !spec.wraps {
            // Stretching starts from the stack's minimum thickness, but never past the child's maximum.
            let crossLimits = style.limits(horizontal: !axis.horizontal, parent: crossMax, subject: subject,
                                           diagnostics: &diagnostics)
            crossLower = min(crossMin, crossLimits.upper)
        }
        if !diagnostics.isEmpty { context.diagnostics.append(contentsOf: diagnostics) }
        let crossRange = (lower: crossLower, upper: crossMax)
        let layout = context.measure(child, style: style, in: axis.range(main: (0, .infinity), cross: crossRange),
                                     parentSize: parentSize)
        items.append(Item(
            alignment: alignment,
            grow: context.checked(style.flexGrow, "flexGrow", in: subject(), allowsNegative: false),
            shrink: context.checked(style.flexShrink, "flexShrink", in: subject(), allowsNegative: false),
            before: context.checked(style.spacingBefore, "spacingBefore", in: subject()),
            after: context.checked(style.spacingAfter, "spacingAfter", in: subject()),
            limits: limits, crossRange: crossRange, style: style, layout: layout))
    }

    /// A line's thickness (its thickest child, baseline-aligned children counted by their ascent and
    /// descent) and the ascents its baseline-aligned children line up on.
    private func lineMetrics(_ line: Range<Int>) -> (thickness: Double, ascent: Double, lastAscent: Double) {
        var thickest = 0.0, ascent = 0.0, descent = 0.0, lastAscent = 0.0, lastDescent = 0.0
        for index in line {
            let cross = axis.cross(items[index].layout.size)
            switch items[index].alignment {
            case .baselineFirst:
                let baseline = items[index].layout.firstBaselineOrBottom
                ascent = max(ascent, baseline)
                descent = max(descent, cross - baseline)
            case .baselineLast:
                let baseline = items[index].layout.lastBaselineOrBottom
                lastAscent = max(lastAscent, baseline)
                lastDescent = max(lastDescent, cross - baseline)
            default:
                thickest = max(thickest, cross)
            }
        }
        return (max(thickest, ascent + descent, lastAscent + lastDescent), ascent, lastAscent)
    }

    /// The length a run of children takes along the stack, with their spacing.
    private func content(of line: Range<Int>) -> Double {
        var total = 0.0
        for index in line { total += items[index].before + axis.main(items[index].layout.size) + items[index].after }
        return total + spacing * Double(max(0, line.count - 1))
    }

    private func breakLines() -> [Range<Int>] {
        var lines: [Range<Int>] = []
        var start = 0, used = 0.0
        for index in items.indices {
            let extent = items[index].before + axis.main(items[index].layout.size) + items[index].after
            // A hair of tolerance, so that children that fit exactly are not sent down by rounding.
            if index > start && used + spacing + extent > mainMax + 1e-9 {
                lines.append(start..<index)
                start = index
                used = extent
            } else {
                used += (index > start ? spacing : 0) + extent
            }
        }
        lines.append(start..<items.count)
        return lines
    }

    /// Grows or shrinks the flexible children of `line` toward `target`, then measures the ones that
    /// changed at their new length.
    private mutating func flex(_ line: Range<Int>, toward target: Double, context: inout LayoutContext) {
        let free = target - content(of: line)
        guard abs(free) > 1e-9 else { return }
        let growing = free > 0
        guard line.contains(where: { growing ? items[$0].grow > 0 : items[$0].shrink > 0 }) else { return }

        // Scratch space on the stack, not the heap: flexing happens in most stacks of most cells.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: line.count * 3) { scratch in
            let count = line.count
            let base = UnsafeMutableBufferPointer(rebasing: scratch[0..<count])
            let weights = UnsafeMutableBufferPointer(rebasing: scratch[count..<(2 * count)])
            let sizes = UnsafeMutableBufferPointer(rebasing: scratch[(2 * count)..<(3 * count)])
            var fixed = content(of: line)
            for offset in 0..<count {
                let item = line.lowerBound + offset
                let length = axis.main(items[item].layout.size)
                base[offset] = length
                sizes[offset] = length
                // A weight of 0 marks a child that does not flex, or no longer does.
                weights[offset] = max(0, growing ? items[item].grow : items[item].shrink * length)
                fixed -= length
            }
            // Each round gives the remaining free length out by weight; children that reach a limit keep
            // it and the rest is shared again among the others.
            for _ in 0...count {
                var remaining = target - fixed, totalWeight = 0.0
                for offset in 0..<count {
                    remaining -= sizes[offset]
                    totalWeight += weights[offset]
                }
                guard totalWeight > 0, abs(remaining) > 1e-9 else { break }
                var limited = false
                for offset in 0..<count where weights[offset] > 0 {
                    let limits = items[line.lowerBound + offset].limits
                    let proposed = sizes[offset] + remaining * weights[offset] / totalWeight
                    if proposed < limits.lower || proposed > limits.upper {
                        sizes[offset] = min(limits.upper, max(limits.lower, proposed))
                        weights[offset] = 0
                        limited = true
                    }
                }
                // Only the children that hit a limit are settled in a round that had some.
                guard !limited else { continue }
                for offset in 0..<count where weights[offset] > 0 {
                    sizes[offset] += remaining * weights[offset] / totalWeight
                }
                break
            }
            for offset in 0..<count where abs(sizes[offset] - base[offset]) > 1e-9 {
                let index = line.lowerBound + offset
                let length = max(0, sizes[offset])
                items[index].layout = context.measure(
                    spec.children[index], style: items[index].style,
                    in: axis.range(main: (length, length), cross: items[index].crossRange), parentSize: parentSize)
            }
        }
    }

    /// Places the children of one line along the stack (justified) and across their line (aligned),
    /// measuring stretched children again at the line's thickness.
    private mutating func place(_ line: Range<Int>, stackMain: Double, lineOffset: Double, lineCross: Double,
                                ascent: Double, lastAscent: Double, context: inout LayoutContext) {
        let free = stackMain - content(of: line)
        let count = Double(line.count)
        var cursor = 0.0, gap = spacing
        switch spec.justifyContent {
        case .start: break
        case .center: cursor = free / 2
        case .end: cursor = free
        case .spaceBetween: if free > 0 && line.count > 1 { gap += free / (count - 1) }
        case .spaceAround: if free > 0 { cursor = free / count / 2; gap += free / count } else { cursor = free / 2 }
        }
        for index in line {
            cursor += items[index].before
            let length = axis.main(items[index].layout.size)
            if items[index].alignment == .stretch && axis.cross(items[index].layout.size) != lineCross {
                let child = spec.children[index]
                let limits = items[index].style.limits(horizontal: !axis.horizontal, parent: axis.cross(parentSize),
                                                  subject: { LayoutContext.name(of: child) },
                                                  diagnostics: &context.diagnostics)
                let thickness = min(limits.upper, max(limits.lower, lineCross))
                items[index].layout = context.measure(child, style: items[index].style,
                                                      in: axis.range(main: (length, length), cross: (thickness, thickness)),
                                                      parentSize: parentSize)
            }
            let cross = axis.cross(items[index].layout.size)
            let crossPosition: Double
            switch items[index].alignment {
            case .start, .stretch: crossPosition = lineOffset
            case .end: crossPosition = lineOffset + lineCross - cross
            case .center: crossPosition = lineOffset + (lineCross - cross) / 2
            case .baselineFirst: crossPosition = lineOffset + ascent - items[index].layout.firstBaselineOrBottom
            case .baselineLast: crossPosition = lineOffset + lastAscent - items[index].layout.lastBaselineOrBottom
            }
            items[index].position = axis.point(main: cursor, cross: crossPosition)
            cursor += length + items[index].after + gap
        }
    }
}

/// Reads sizes and points along a stack's direction (main) and across it (cross).
struct Axis {
    let horizontal: Bool

    func main(_ size: Size) -> Double { horizontal ? size.width : size.height }
    func cross(_ size: Size) -> Double { horizontal ? size.height : size.width }
    func main(_ point: Point) -> Double { horizontal ? point.x : point.y }
    func cross(_ point: Point) -> Double { horizontal ? point.y : point.x }
    func size(main: Double, cross: Double) -> Size {
        horizontal ? Size(width: main, height: cross) : Size(width: cross, height: main)
    }
    func point(main: Double, cross: Double) -> Point {
        horizontal ? Point(x: main, y: cross) : Point(x: cross, y: main)
    }
    /// A range from valid bounds on each axis (the caller keeps lower ≤ upper and both non-negative).
    func range(main: (Double, Double), cross: (lower: Double, upper: Double)) -> SizeRange {
        SizeRange(validMin: size(main: main.0, cross: cross.lower), max: size(main: main.1, cross: cross.upper))
    }
}
