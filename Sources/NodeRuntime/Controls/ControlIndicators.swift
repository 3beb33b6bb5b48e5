import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The theme colours a drawn control needs, resolved on the UI thread (which records the node's
/// dependence on colours) and handed to the display worker as a value.
/// - Thread: any (a value)
struct ControlPalette: Sendable, Hashable {
    var accent: Color
    var onAccent: Color
    var label: Color
    var fill: Color
    var separator: Color

    /// The palette in the runtime's theme and appearance, for `node`. - Thread: any
    init(for node: Node) {
        accent = node.themeColor(.accent)
        onAccent = node.themeColor(.onAccent)
        label = node.themeColor(.label)
        fill = node.themeColor(.fill)
        separator = node.themeColor(.separator)
    }
}

/// The pieces check boxes, radio buttons, segments and steppers draw, shared so that they look alike:
/// an indicator (a box or a circle, outlined when off, accent-filled with a tick, a dash or a dot when
/// on), the hover and press shading of a surface, and the layout of an indicator beside a title.
/// - Thread: any
enum ControlIndicators {
    /// The side of a check box's box and of a radio button's circle, in points.
    static let side = 18.0
    /// The space between the indicator and the title.
    static let titleGap = 8.0
    /// The least height of a row with an indicator and a title.
    static let rowHeight = 24.0
    /// The font of controls' titles.
    static let font = TextFont(size: 14)
    /// How much a disabled control's opacity is reduced to (libadwaita's 50 %).
    static let disabledOpacity = 0.5
    /// The outline's width of an indicator that is off.
    static let outlineWidth = 2.0

    /// What the indicator shows.
    enum Mark: Sendable, Hashable {
        case none, tick, dash, dot
    }

    /// `a` moved towards `b` by `fraction` (0: `a`, 1: `b`), alpha included.
    static func mix(_ a: Color, _ b: Color, _ fraction: Double) -> Color {
        let t = max(0, min(1, fraction))
        func channel(_ x: UInt8, _ y: UInt8) -> UInt8 { UInt8((Double(x) + (Double(y) - Double(x)) * t).rounded()) }
        return Color(red: channel(a.red, b.red), green: channel(a.green, b.green), blue: channel(a.blue, b.blue),
                     alpha: channel(a.alpha, b.alpha))
    }

    /// The accent colour as a state shows it: lighter while hovered, darker while pressed.
    static func accentFill(_ palette: ControlPalette, _ state: ControlState) -> Color {
        if state.contains(.highlighted) { return mix(palette.accent, .black, 0.15) }
        if state.contains(.hovered) { return mix(palette.accent, .white, 0.12) }
        return palette.accent
    }

    /// A neutral surface (a segment, a stepper's button) as a state shows it: the label colour laid
    /// over it, more while pressed than while hovered.
    static func neutralFill(_ palette: ControlPalette, _ state: ControlState) -> Color {
        if state.contains(.highlighted) { return mix(palette.fill, palette.label, 0.16) }
        if state.contains(.hovered) { return mix(palette.fill, palette.label, 0.07) }
        return palette.fill
    }

    /// Draws an indicator in `rect`: round when `round`, else a box with 5-point corners. `on` fills it
    /// with the accent colour and draws `mark` in `onAccent`; off, it is an outline of the label colour
    /// (stronger while hovered or pressed; a pressed one is shaded inside too).
    static func drawIndicator(in rect: Rect, round: Bool, on: Bool, mark: Mark, state: ControlState,
                              palette: ControlPalette, context: inout BitmapContext, scale: Double) {
        let radius = round ? rect.width / 2 : 5
        guard on else {
            let pressed = state.contains(.highlighted)
            let strength = pressed ? 0.55 : state.contains(.hovered) ? 0.45 : 0.32
            if pressed { context.fillRoundedRect(rect, radii: CornerRadii(radius), color: palette.label.withAlphaMultiplied(by: 0.1)) }
            strokeOutline(rect, radius: radius, width: outlineWidth, color: palette.label.withAlphaMultiplied(by: strength),
                          context: &context)
            return
        }
        context.fillRoundedRect(rect, radii: CornerRadii(radius), color: accentFill(palette, state))
        let unit = rect.width / side
        switch mark {
        case .none:
            break
        case .tick:
            MenuGlyphs.stroke([Point(x: 4.5 * unit, y: 9.5 * unit), Point(x: 7.5 * unit, y: 12.5 * unit),
                               Point(x: 13.5 * unit, y: 5.5 * unit)],
                              width: 2, in: rect, color: palette.onAccent, context: &context, scale: scale)
        case .dash:
            context.fill(Rect(x: rect.minX + 5 * unit, y: rect.midY - 1, width: 8 * unit, height: 2), color: palette.onAccent)
        case .dot:
            let dot = rect.insetBy(dx: 5 * unit, dy: 5 * unit)
            context.fillRoundedRect(dot, radii: CornerRadii(dot.width / 2), color: palette.onAccent)
        }
    }

    /// Paints the band `width` points wide inside the edge of the rounded rect `rect`.
    static func strokeOutline(_ rect: Rect, radius: Double, width: Double, color: Color, context: inout BitmapContext) {
        context.saveClip()
        context.clip(toRoundedRect: rect, radii: CornerRadii(radius))
        context.fill(outsideRoundedRect: rect.insetBy(dx: width, dy: width), radii: CornerRadii(max(0, radius - width)), color: color)
        context.restoreClip()
    }

    /// The indicator's rect in a row of `bounds`: at the leading edge, centred vertically.
    static func indicatorRect(in bounds: Rect) -> Rect {
        Rect(x: 0, y: ((bounds.height - side) / 2).rounded(), width: side, height: side)
    }

    /// The size of a row with an indicator and `title` (which may be empty): the indicator, the gap and
    /// the title's width on one line, at least `rowHeight` tall.
    static func rowSize(title: TextNode, constrainedWidth: Double) -> Size {
        guard !title.attributedText.string.isEmpty else { return Size(width: side, height: rowHeight) }
        let available = max(0, constrainedWidth - side - titleGap)
        let measured = title.layoutThatFits(SizeRange(min: .zero, max: Size(width: available, height: .infinity))).size
        let width = measured.width.isFinite ? measured.width : 0
        let height = measured.height.isFinite ? measured.height : 0
        return Size(width: (side + titleGap + width).rounded(.up), height: max(rowHeight, height.rounded(.up)))
    }

    /// Puts `title` beside the indicator, centred vertically, in a row of `bounds`.
    static func layoutTitle(_ title: TextNode, in bounds: Rect) {
        let x = side + titleGap
        let width = max(0, bounds.width - x)
        let height = title.layoutThatFits(SizeRange(min: .zero, max: Size(width: width, height: bounds.height))).size.height
        let frame = Rect(x: x, y: ((bounds.height - height) / 2).rounded(), width: width, height: height)
        if title.frame != frame { title.frame = frame }
    }

    /// Makes `node` a title inside a control: one line's worth of text that takes no touches of its
    /// own and is read as the control's label, not as text of its own.
    static func prepareTitle(_ node: TextNode) {
        node.isUserInteractionEnabled = false
        node.accessibilityElementsHidden = true
        node.displaysAsynchronously = false
    }

    /// The title's text in the theme colour `color`.
    static func titleText(_ title: String, _ color: ThemeColor = .label) -> AttributedText {
        AttributedText(title, attributes: .themed(font: font, color))
    }
}
