public import Compositor

/// Where a popup (a menu, a submenu, a tooltip, a popover) goes: beside an anchor rectangle, on one
/// of its sides, aligned along it, kept inside the bounds it may use (the window, or the screen for
/// a popup window) by flipping to the other side and then sliding along.
///
/// The model is Wayland's `xdg_positioner`: the app names an anchor and a preferred side; the
/// toolkit, which knows the bounds, resolves the rest.
///
/// ```swift
/// // A context menu at the pointer, below and to the right, flipped up near the bottom edge:
/// let at = PopupPositioner(anchor: Rect(origin: pointer, size: .zero), side: .below)
/// // A submenu beside its item, flipped to the left near the right edge:
/// let sub = PopupPositioner(anchor: itemFrame, side: .trailing, alignment: .start)
/// ```
/// - Thread: any (a value)
public struct PopupPositioner: Sendable, Hashable {
    /// The side of the anchor the popup goes on.
    public enum Side: Sendable, Hashable {
        case below, above
        /// Right of the anchor (left-to-right text), and left of it.
        case trailing, leading
    }

    /// How the popup lines up with the anchor along the side: its start edge with the anchor's start
    /// (left, or top for `.leading`/`.trailing`), centred on it, or its end edge with the anchor's end.
    public enum Alignment: Sendable, Hashable {
        case start, center, end
    }

    /// The rectangle the popup is placed against, in the coordinates of the bounds (window points).
    public var anchor: Rect
    public var side: Side
    public var alignment: Alignment
    /// Space between the anchor and the popup, in points.
    public var gap: Double
    /// Whether the popup goes on the opposite side when it does not fit on its own and fits better there.
    public var flips: Bool
    /// Whether the popup moves along (and, as a last resort, across) to stay inside the bounds.
    public var slides: Bool

    public init(anchor: Rect, side: Side = .below, alignment: Alignment = .start, gap: Double = 0,
                flips: Bool = true, slides: Bool = true) {
        self.anchor = anchor.sanitized
        self.side = side
        self.alignment = alignment
        self.gap = gap.isFinite ? max(0, gap) : 0
        self.flips = flips
        self.slides = slides
    }

    /// Where a popup of `size` goes inside `bounds`: on `side` when it fits, on the other side when it
    /// does not and fits there (or has more room there), then slid along to stay inside. A popup
    /// larger than the bounds is cut to them (its content scrolls or clips). Non-finite sizes are
    /// taken as zero.
    public func frame(for size: Size, within bounds: Rect) -> Rect {
        let bounds = bounds.sanitized
        let width = min(Self.finite(size.width), bounds.width)
        let height = min(Self.finite(size.height), bounds.height)
        let vertical = side == .below || side == .above
        // Along the main axis (across the anchor's side): before or after the anchor.
        let anchorLow = vertical ? anchor.minY : anchor.minX
        let anchorHigh = vertical ? anchor.maxY : anchor.maxX
        let low = vertical ? bounds.minY : bounds.minX
        let high = vertical ? bounds.maxY : bounds.maxX
        let extent = vertical ? height : width
        let after = side == .below || side == .trailing
        let roomAfter = high - (anchorHigh + gap)
        let roomBefore = (anchorLow - gap) - low
        var placeAfter = after
        if flips {
            let fitsHere = (after ? roomAfter : roomBefore) >= extent
            let fitsThere = (after ? roomBefore : roomAfter) >= extent
            if !fitsHere && (fitsThere || (after ? roomBefore > roomAfter : roomAfter > roomBefore)) { placeAfter = !after }
        }
        var main = placeAfter ? anchorHigh + gap : anchorLow - gap - extent
        // Across the main axis: aligned with the anchor, flipped to the other alignment when it would
        // leave the bounds, then slid.
        let crossLow = vertical ? anchor.minX : anchor.minY
        let crossHigh = vertical ? anchor.maxX : anchor.maxY
        let boundsCrossLow = vertical ? bounds.minX : bounds.minY
        let boundsCrossHigh = vertical ? bounds.maxX : bounds.maxY
        let crossExtent = vertical ? width : height
        var cross: Double
        switch alignment {
        case .start:
            cross = crossLow
            if flips && cross + crossExtent > boundsCrossHigh && crossHigh - crossExtent >= boundsCrossLow {
                cross = crossHigh - crossExtent
            }
        case .end:
            cross = crossHigh - crossExtent
            if flips && cross < boundsCrossLow && crossLow + crossExtent <= boundsCrossHigh { cross = crossLow }
        case .center:
            cross = (crossLow + crossHigh - crossExtent) / 2
        }
        if slides {
            cross = Self.clamp(cross, boundsCrossLow, boundsCrossHigh - crossExtent)
            main = Self.clamp(main, low, high - extent)
        }
        return vertical
            ? Rect(x: cross, y: main, width: width, height: height)
            : Rect(x: main, y: cross, width: width, height: height)
    }

    private static func finite(_ value: Double) -> Double { value.isFinite ? max(0, value) : 0 }

    private static func clamp(_ value: Double, _ low: Double, _ high: Double) -> Double {
        max(low, min(value, max(low, high)))
    }
}
