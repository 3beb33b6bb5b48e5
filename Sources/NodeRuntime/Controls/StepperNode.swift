public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A number with a − button before it and a + button after it, as GNOME's spin button: a rounded
/// field on the theme's fill, the value centred between the buttons. A press on − or + (released
/// inside the control) steps the value down or up by `stepValue`; Up and Down do the same with the
/// keyboard, Page Up and Page Down step by ten steps, Home and End go to the ends. The value stays
/// within `minimumValue…maximumValue`; at an end, that end's button is drawn disabled and takes no
/// presses. A step the user makes sends `.valueChanged`; setting the value in code sends nothing.
///
/// Every property may be set from any thread. Values that are not numbers are refused: a NaN or
/// infinite `value`, bound or step, or a step that is not above zero, leaves the property as it was
/// and is reported (`TesseraLog.app`). A minimum set above the maximum moves the maximum up to it (and
/// a maximum set below the minimum moves the minimum down), and the value is brought into the range.
///
/// A screen reader reads a spin button with the value as text and as a value range (minimum, maximum,
/// step), and can increment and decrement it.
/// - Thread: any for its properties; see `ControlNode`.
public final class StepperNode: ControlNode, NodeDrawing, @unchecked Sendable {
    /// The buttons' width, and the least width and the height of the control, in points.
    public static let buttonWidth = 32.0
    public static let minimumValueWidth = 48.0
    public static let height = 32.0
    /// How many steps Page Up and Page Down take.
    public static let pageSteps = 10.0

    /// The part of the control a press began on.
    enum Part: Sendable, Hashable {
        case decrement, increment
    }

    private struct Model {
        var value: Double
        var minimumValue: Double
        var maximumValue: Double
        var stepValue: Double
    }

    /// Shows the value between the buttons. - Thread: any
    public let valueNode = TextNode()
    private let model: Locked<Model>  // guarded by its lock
    /// The button the press being tracked began on. (main thread only)
    @MainActor private var pressedPart: Part?

    /// A stepper showing `value` in `minimumValue…maximumValue`, stepped by `stepValue`; the
    /// arguments are checked as the properties check them (defaults stand for values refused).
    /// - Thread: any
    public init(value: Double = 0, minimumValue: Double = 0, maximumValue: Double = 100, stepValue: Double = 1) {
        model = Locked(Model(value: 0, minimumValue: 0, maximumValue: 100, stepValue: 1))
        super.init()
        debugName = "stepper"
        displaysAsynchronously = false
        ControlIndicators.prepareTitle(valueNode)
        valueNode.options = TextLayoutOptions(maximumNumberOfLines: 1)
        addSubnode(valueNode)
        self.stepValue = stepValue
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.value = value
        applyValue()
    }

    // MARK: Value (any thread)

    /// The number shown, within `minimumValue…maximumValue` (a value outside is brought to the nearer
    /// end). NaN and infinities are refused: the value stays, and the refusal is reported. Setting it
    /// sends nothing. - Thread: any
    public var value: Double {
        get { model.withLock { $0.value } }
        set {
            guard accept(newValue, "value") else { return }
            change { $0.value = newValue }
        }
    }

    /// The least value. Above `maximumValue`, it moves the maximum up to it. NaN and infinities are
    /// refused (reported). Default 0. - Thread: any
    public var minimumValue: Double {
        get { model.withLock { $0.minimumValue } }
        set {
            guard accept(newValue, "minimumValue") else { return }
            change { $0.minimumValue = newValue; $0.maximumValue = max($0.maximumValue, newValue) }
        }
    }

    /// The greatest value. Below `minimumValue`, it moves the minimum down to it. NaN and infinities
    /// are refused (reported). Default 100. - Thread: any
    public var maximumValue: Double {
        get { model.withLock { $0.maximumValue } }
        set {
            guard accept(newValue, "maximumValue") else { return }
            change { $0.maximumValue = newValue; $0.minimumValue = min($0.minimumValue, newValue) }
        }
    }

    /// How much a press, Up or Down changes the value; above zero. NaN, infinities, zero and negative
    /// steps are refused (reported). Default 1. - Thread: any
    public var stepValue: Double {
        get { model.withLock { $0.stepValue } }
        set {
            guard accept(newValue, "stepValue", positive: true) else { return }
            change { $0.stepValue = newValue }
        }
    }

    /// Whether `newValue` may be taken for the property `name`; reports it when not.
    private func accept(_ newValue: Double, _ name: String, positive: Bool = false) -> Bool {
        guard newValue.isFinite, !positive || newValue > 0 else {
            let needed = positive ? "a finite number above 0" : "a finite number"
            TesseraLog.app.warning("StepperNode.\(name) = \(newValue) refused: it must be \(needed); the property keeps its value")
            return false
        }
        return true
    }

    /// Changes the model, brings the value into the range, and shows the result.
    private func change(_ body: (inout Model) -> Void) {
        let changed = model.withLock { m -> Bool in
            let before = (m.value, m.minimumValue, m.maximumValue, m.stepValue)
            body(&m)
            m.value = min(max(m.value, m.minimumValue), m.maximumValue)
            return before != (m.value, m.minimumValue, m.maximumValue, m.stepValue)
        }
        guard changed else { return }
        applyValue()
        setNeedsDisplay()
        runtime.noteAccessibilityChange()
    }

    /// The value as shown and read: as many decimals as the step has (up to six), no more.
    /// - Thread: any
    public var formattedValue: String { Self.format(model.withLock { $0 }) }

    private static func format(_ model: Model) -> String {
        var digits = 0
        var step = model.stepValue
        while digits < 6, (step - step.rounded()).magnitude > 1e-9 * max(1, step.magnitude) {
            step *= 10
            digits += 1
        }
        let text = formatFixed(model.value, digits: digits)
        // "-0" reads as a sign that is not there.
        return text.hasPrefix("-") && Double(text) == 0 ? String(text.dropFirst()) : text
    }

    private func applyValue() {
        let text = ControlIndicators.titleText(formattedValue)
        if valueNode.attributedText != text {
            valueNode.attributedText = text
            setNeedsLayout()
        }
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
    }

    /// Whether the value can go down (`decrement`) or up from where it is. - Thread: any
    func canStep(_ part: Part) -> Bool {
        model.withLock { part == .decrement ? $0.value > $0.minimumValue : $0.value < $0.maximumValue }
    }

    // MARK: Stepping (UI thread)

    /// Moves the value by `steps` steps (clamped); when it changed, sends `.valueChanged`. Returns
    /// whether it changed.
    @MainActor
    @discardableResult
    private func userStep(by steps: Double) -> Bool {
        let before = value
        change { $0.value += steps * $0.stepValue }
        return userChanged(from: before)
    }

    @MainActor
    private func userSet(_ body: (inout Model) -> Void) -> Bool {
        let before = value
        change(body)
        return userChanged(from: before)
    }

    @MainActor
    private func userChanged(from before: Double) -> Bool {
        guard value != before else { return false }
        sendActions(for: .valueChanged)
        return true
    }

    // MARK: Layout and drawing

    /// Two buttons and the value between them, the value's part at least 48 points wide; 32 points
    /// tall. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let measured = valueNode.layoutThatFits(.unconstrained).size.width
        let valueWidth = max(Self.minimumValueWidth, (measured.isFinite ? measured : 0) + 16).rounded(.up)
        return Size(width: 2 * Self.buttonWidth + valueWidth, height: Self.height)
    }

    /// Centres the value between the buttons. - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        let available = max(0, bounds.width - 2 * Self.buttonWidth)
        let size = valueNode.layoutThatFits(.unconstrained).size
        let width = min(size.width.isFinite ? size.width : 0, available)
        let height = size.height.isFinite ? size.height : 0
        let frame = Rect(x: (Self.buttonWidth + (available - width) / 2).rounded(), y: ((bounds.height - height) / 2).rounded(),
                         width: width, height: height)
        if valueNode.frame != frame { valueNode.frame = frame }
    }

    /// The buttons' rects in `bounds`.
    static func rect(of part: Part, in bounds: Rect) -> Rect {
        let x = part == .decrement ? 0 : max(0, bounds.width - buttonWidth)
        return Rect(x: x, y: 0, width: min(buttonWidth, bounds.width), height: bounds.height)
    }

    /// What the control looks like now. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var state: ControlState
        var pressedPart: Part?
        var canDecrement: Bool
        var canIncrement: Bool
        var palette: ControlPalette
    }

    /// The state, the button being pressed, which ends are reached, and the theme's colours.
    /// - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        DrawParameters(state: controlState, pressedPart: controlState.contains(.highlighted) ? pressedPart : nil,
                       canDecrement: canStep(.decrement), canIncrement: canStep(.increment), palette: ControlPalette(for: self))
    }

    /// Draws the field, the buttons' shading and lines, and the − and + glyphs. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds, palette = parameters.palette
        let radius = 6.0
        context.fillRoundedRect(bounds, radii: CornerRadii(radius), color: palette.fill)
        for part in [Part.decrement, .increment] {
            let enabled = part == .decrement ? parameters.canDecrement : parameters.canIncrement
            let rect = rect(of: part, in: bounds)
            var state: ControlState = []
            if enabled && parameters.state.contains(.hovered) { state.insert(.hovered) }
            if enabled && parameters.pressedPart == part { state.insert(.highlighted) }
            if !state.isEmpty {
                let corners: CornerMask = part == .decrement ? [.topLeft, .bottomLeft] : [.topRight, .bottomRight]
                context.fillRoundedRect(rect, radii: CornerRadii(radius, corners: corners),
                                        color: ControlIndicators.neutralFill(palette, state))
            }
            let lineX = part == .decrement ? rect.maxX - 1 : rect.minX
            context.fill(Rect(x: lineX, y: 6, width: 1, height: max(0, bounds.height - 12)), color: palette.separator)
            // A 12-point bar, and for + a crossing one, 2 points thick, on whole points.
            let glyph = enabled ? palette.label : palette.label.withAlphaMultiplied(by: 0.35)
            let centreX = rect.midX.rounded(), centreY = rect.midY.rounded()
            context.fill(Rect(x: centreX - 6, y: centreY - 1, width: 12, height: 2), color: glyph)
            if part == .increment {
                context.fill(Rect(x: centreX - 1, y: centreY - 6, width: 2, height: 5), color: glyph)
                context.fill(Rect(x: centreX - 1, y: centreY + 1, width: 2, height: 5), color: glyph)
            }
        }
    }

    // MARK: Input (UI thread)

    /// Notes which button the press began on, so its release steps that way. - Thread: main
    @MainActor
    public override func touchesBegan(_ touch: Touch) {
        let point = convertFromRoot(touch.location)
        if Self.rect(of: .decrement, in: bounds).contains(point) {
            pressedPart = .decrement
        } else if Self.rect(of: .increment, in: bounds).contains(point) {
            pressedPart = .increment
        } else {
            pressedPart = nil
        }
        super.touchesBegan(touch)
        setNeedsDisplay()
    }

    /// The press ended (`activate` has run if it ended inside): no button is pressed. - Thread: main
    @MainActor
    public override func touchesEnded(_ touch: Touch) {
        super.touchesEnded(touch)
        pressedPart = nil
        setNeedsDisplay()
    }

    /// The press was taken away: no button is pressed. - Thread: main
    @MainActor
    public override func touchesCancelled(_ touch: Touch) {
        super.touchesCancelled(touch)
        pressedPart = nil
        setNeedsDisplay()
    }

    /// A press released inside steps the value by the button it began on (none for the value's part or
    /// for Space and Enter, which change nothing). - Thread: main
    @MainActor
    public override func activate() {
        guard let part = pressedPart else { return }
        userStep(by: part == .decrement ? -1 : 1)
    }

    /// Up and Down step, Page Up and Page Down step ten times, Home and End go to the ends; Space and
    /// Enter as `ControlNode`. - Thread: main
    @MainActor
    public override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        switch key {
        case .up: userStep(by: 1)
        case .down: userStep(by: -1)
        case .pageUp: userStep(by: Self.pageSteps)
        case .pageDown: userStep(by: -Self.pageSteps)
        case .home: _ = userSet { $0.value = $0.minimumValue }
        case .end: _ = userSet { $0.value = $0.maximumValue }
        default:
            return super.keyDown(key, modifiers: modifiers)
        }
        return true
    }

    /// Redraws for the new state and dims a disabled stepper. - Thread: main
    @MainActor
    public override func controlStateDidChange() {
        super.controlStateDidChange()
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
        setNeedsDisplay()
    }

    // MARK: Accessibility

    /// A spin button: its value as text and as a range, with increment and decrement. Labelled by
    /// `accessibilityLabel` (it has no title of its own). - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        let m = model.withLock { $0 }
        var description = super.accessibilityDefaults()
        description.role = .spinButton
        description.label = ""
        description.value = Self.format(m)
        description.valueRange = AccessibilityValueRange(minimum: m.minimumValue, maximum: m.maximumValue, current: m.value,
                                                         step: m.stepValue)
        description.actions = isEnabled ? [.increment, .decrement] : []
        return description
    }

    /// `.increment` and `.decrement` step the value as Up and Down do (false at the end, or when
    /// disabled). - Thread: main
    public override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        guard isEnabled else { return false }
        switch action {
        case .increment: return userStep(by: 1)
        case .decrement: return userStep(by: -1)
        default: return super.performAccessibilityAction(action)
        }
    }
}
