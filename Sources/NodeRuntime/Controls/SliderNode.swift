public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A horizontal slider: a thin rounded track, filled in the accent colour from its start to a round
/// thumb that stands at `value` between `minimumValue` and `maximumValue`.
///
/// Dragging the thumb moves it by as much as the pointer moves (it does not jump under the pointer);
/// a press elsewhere on the track jumps the thumb there and goes on as a drag. Left and Down step the
/// value down, Right and Up step it up (by `stepValue`, or 1% of the range without one), Page Down and
/// Page Up by 10% of the range, Home and End go to the ends. Each change the user makes sends
/// `.valueChanged`: while dragging at every move, or once when the press ends when `isContinuous` is
/// false. Setting `value` in code, from any thread, sends nothing.
///
/// Values are checked, never trusted:
/// - a `value` of NaN is ignored (the value stays); ±∞ and values outside the range are clamped to it;
/// - a `minimumValue` or `maximumValue` that is not finite is ignored; a minimum set above the maximum
///   raises the maximum to it, a maximum set below the minimum lowers the minimum to it (the range is
///   never reversed); a range whose span overflows to ∞ is ignored; the value is clamped to the range;
/// - a `stepValue` that is NaN, ∞, zero or negative means no step (nil).
///
/// With a step the value is always `minimumValue` plus a whole number of steps, or `maximumValue`.
/// Its height is 28 points and its width 160 unless its layout gives it others.
/// - Thread: any for its properties; main for input, layout and targets (see `ControlNode`).
open class SliderNode: ControlNode, @unchecked Sendable {
    // MARK: Accessibility

    /// A slider: its value as text and as a range (minimum, maximum, current, step: `stepValue`, or
    /// 1% of the range), with increment and decrement actions. - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.role = .slider
        let model = self.model.withLock { $0 }
        description.value = Self.format(model.value)
        description.valueRange = AccessibilityValueRange(minimum: model.minimum, maximum: model.maximum,
                                                         current: model.value, step: model.keyStep)
        description.actions = isEnabled ? [.increment, .decrement] : []
        return description
    }

    /// `.increment` and `.decrement` step the value as Up and Down do, sending `.valueChanged`.
    /// - Thread: main
    open override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        switch action {
        case .increment, .decrement:
            guard isEnabled else { return false }
            let step = model.withLock { $0.keyStep }
            userSet(value + (action == .increment ? step : -step))
            return true
        default:
            return super.performAccessibilityAction(action)
        }
    }

    /// The value and its range, checked (see the type's comment).
    struct Model: Sendable, Equatable {
        var value = 0.0
        var minimum = 0.0
        var maximum = 1.0
        var step: Double?
        var isContinuous = true

        /// The step a key (or an accessibility action) moves by: `step`, or 1% of the range.
        var keyStep: Double { step ?? (maximum - minimum) / 100 }

        /// `proposed` clamped to the range and snapped to the step; nil for NaN.
        func checked(_ proposed: Double) -> Double? {
            guard !proposed.isNaN else { return nil }
            let clamped = min(max(proposed, minimum), maximum)
            guard let step, maximum > minimum else { return clamped }
            let snapped = min(maximum, minimum + ((clamped - minimum) / step).rounded() * step)
            // The maximum is a stop too, when the steps do not land on it.
            return abs(maximum - clamped) < abs(snapped - clamped) ? maximum : snapped
        }

        /// Where `value` lies in the range, 0…1 (0 for an empty range).
        var fraction: Double {
            maximum > minimum ? min(1, max(0, (value - minimum) / (maximum - minimum))) : 0
        }
    }

    /// Guarded by its lock.
    let model = Locked(Model())
    /// The press being tracked: the value when it began, and how far the pointer was from the thumb's
    /// centre (0 after a press on the track, which jumps the thumb under it). (main thread only)
    @MainActor private var drag: (startValue: Double, grabOffset: Double)?

    /// The thin bar the thumb moves along.
    public let trackNode = Node()
    /// The part of the track from its start to the thumb, in the accent colour.
    public let fillNode = Node()
    /// The round part that moves: an accent ring around `thumbCenterNode`.
    public let thumbNode = Node()
    /// The thumb's centre, smaller while it is pressed.
    public let thumbCenterNode = Node()
    /// A soft disc around the thumb, shown while the pointer hovers it or presses it.
    public let haloNode = Node()

    /// The thumb's diameter, the track's thickness, and the halo's diameter, in points.
    public static let thumbDiameter = 20.0
    public static let trackThickness = 4.0
    public static let haloDiameter = 28.0

    /// A slider at `value` in `minimumValue`…`maximumValue`, stepping by `stepValue` (nil:
    /// continuous), as `StepperNode` takes them. Values that are not finite fall back to 0…1 and the
    /// range's minimum; a reversed range becomes `minimumValue`…`minimumValue`. - Thread: any
    public init(value: Double = 0, minimumValue: Double = 0, maximumValue: Double = 1, stepValue: Double? = nil) {
        super.init()
        model.withLock { m in
            let lower = minimumValue.isFinite ? minimumValue : 0
            var upper = maximumValue.isFinite ? maximumValue : max(1, lower)
            if upper < lower { upper = lower }
            if !(upper - lower).isFinite { (m.minimum, m.maximum) = (0, 1) } else { (m.minimum, m.maximum) = (lower, upper) }
            m.step = Self.checkedStep(stepValue)
            m.value = m.checked(value) ?? m.minimum
        }
        preferredSize = Size(width: 160, height: 28)
        trackNode.themedBackgroundColor = .separator
        fillNode.themedBackgroundColor = .accent
        thumbNode.themedBackgroundColor = .accent
        thumbCenterNode.themedBackgroundColor = .onAccent
        haloNode.isHidden = true
        for node in [trackNode, fillNode, haloNode, thumbNode] { addSubnode(node) }
        thumbNode.addSubnode(thumbCenterNode)
        applyLook()
    }

    // MARK: Value (any thread)

    /// The value, in `minimumValue`…`maximumValue`, snapped to `stepValue`. Setting it moves the thumb
    /// and sends nothing; NaN is ignored, values outside the range are clamped. - Thread: any
    public var value: Double {
        get { model.withLock { $0.value } }
        set { _ = setValue(newValue) }
    }

    /// The lowest value. One that is not finite is ignored; one above `maximumValue` raises it to
    /// match. - Thread: any
    public var minimumValue: Double {
        get { model.withLock { $0.minimum } }
        set {
            changeModel { m in
                guard newValue.isFinite, (max(m.maximum, newValue) - newValue).isFinite else { return }
                m.minimum = newValue
                if m.maximum < newValue { m.maximum = newValue }
            }
        }
    }

    /// The highest value. One that is not finite is ignored; one below `minimumValue` lowers it to
    /// match. - Thread: any
    public var maximumValue: Double {
        get { model.withLock { $0.maximum } }
        set {
            changeModel { m in
                guard newValue.isFinite, (newValue - min(m.minimum, newValue)).isFinite else { return }
                m.maximum = newValue
                if m.minimum > newValue { m.minimum = newValue }
            }
        }
    }

    /// The step the value snaps to, from `minimumValue`; nil (the default) for none. NaN, ∞, zero
    /// and negative steps are taken as nil. - Thread: any
    public var stepValue: Double? {
        get { model.withLock { $0.step } }
        set { changeModel { $0.step = Self.checkedStep(newValue) } }
    }

    /// Whether a drag sends `.valueChanged` at every move (true, the default) or once, when the press
    /// ends. - Thread: any
    public var isContinuous: Bool {
        get { model.withLock { $0.isContinuous } }
        set { model.withLock { $0.isContinuous = newValue } }
    }

    private static func checkedStep(_ step: Double?) -> Double? {
        guard let step, step.isFinite, step > 0 else { return nil }
        return step
    }

    /// The value as text: whole numbers without a fraction, others with up to 3 decimals.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = formatFixed(value, digits: 3)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// Changes the range or step; the value is clamped and snapped again.
    private func changeModel(_ change: (inout Model) -> Void) {
        let changed = model.withLock { m -> Bool in
            let before = m
            change(&m)
            m.value = m.checked(m.value) ?? m.minimum
            return m != before
        }
        if changed { valueDidChange() }
    }

    /// Sets the value, checked; returns whether it changed.
    @discardableResult
    private func setValue(_ proposed: Double) -> Bool {
        let changed = model.withLock { m -> Bool in
            guard let checked = m.checked(proposed), checked != m.value else { return false }
            m.value = checked
            return true
        }
        if changed { valueDidChange() }
        return changed
    }

    /// The thumb and the fill move (on the UI thread); the slider's size does not change, so no
    /// layout is measured again.
    private func valueDidChange() {
        runtime.noteAccessibilityChange()
        runtime.mainQueue.performOrEnqueue { [self] in layoutParts() }
    }

    /// A change by the user: sets the value and, when it changed, sends `.valueChanged`.
    @MainActor
    private func userSet(_ proposed: Double) {
        if setValue(proposed) { sendActions(for: .valueChanged) }
    }

    // MARK: Look

    /// Shows the state: faded when disabled, the halo while hovered or pressed (stronger when pressed).
    private func applyLook(pressed isDragging: Bool = false) {
        let state = controlState
        opacity = state.contains(.disabled) ? 0.45 : 1
        let pressed = state.contains(.highlighted) || isDragging
        haloNode.isHidden = !(pressed || state.contains(.hovered))
        haloNode.backgroundColor = themeColor(.accent).withAlphaMultiplied(by: pressed ? 0.3 : 0.16)
    }

    @MainActor
    open override func appearanceDidChange(_ change: AppearanceChange) {
        super.appearanceDidChange(change)
        if change.contains(.colors) { applyLook(pressed: drag != nil) }
    }

    @MainActor
    open override func controlStateDidChange() {
        super.controlStateDidChange()
        applyLook(pressed: drag != nil)
        layoutParts()
    }

    // MARK: Layout

    /// The x of the thumb's centre for `fraction` of the range, in `bounds`.
    private static func thumbCenterX(_ fraction: Double, in bounds: Rect) -> Double {
        let radius = thumbDiameter / 2
        return radius + fraction * max(0, bounds.width - thumbDiameter)
    }

    /// The fraction of the range at `x` in the node (the thumb's centre there).
    @MainActor
    private func fraction(atX x: Double) -> Double {
        let span = bounds.width - Self.thumbDiameter
        guard span > 0 else { return 0 }
        return min(1, max(0, (x - Self.thumbDiameter / 2) / span))
    }

    @MainActor
    open override func layout() {
        super.layout()
        layoutParts()
    }

    @MainActor
    private func layoutParts() {
        let bounds = self.bounds
        let midY = bounds.height / 2
        let centerX = Self.thumbCenterX(model.withLock { $0.fraction }, in: bounds)
        let radius = Self.thumbDiameter / 2, thickness = Self.trackThickness
        let track = Rect(x: radius - thickness / 2, y: midY - thickness / 2,
                         width: max(0, bounds.width - Self.thumbDiameter + thickness), height: thickness)
        trackNode.frame = track
        trackNode.cornerRadius = thickness / 2
        fillNode.frame = Rect(x: track.minX, y: track.minY, width: max(0, centerX - track.minX), height: thickness)
        fillNode.cornerRadius = thickness / 2
        thumbNode.frame = Rect(x: centerX - radius, y: midY - radius, width: Self.thumbDiameter, height: Self.thumbDiameter)
        thumbNode.cornerRadius = radius
        let pressed = controlState.contains(.highlighted) || drag != nil
        let inner = pressed ? 8.0 : 12.0
        thumbCenterNode.frame = Rect(x: radius - inner / 2, y: radius - inner / 2, width: inner, height: inner)
        thumbCenterNode.cornerRadius = inner / 2
        let halo = Self.haloDiameter
        haloNode.frame = Rect(x: centerX - halo / 2, y: midY - halo / 2, width: halo, height: halo)
        haloNode.cornerRadius = halo / 2
    }

    // MARK: Pointer (UI thread)

    /// The value under a pointer at `x` (in the node), the grab offset applied.
    @MainActor
    private func value(atX x: Double) -> Double {
        let (minimum, maximum) = model.withLock { ($0.minimum, $0.maximum) }
        return minimum + fraction(atX: x) * (maximum - minimum)
    }

    @MainActor
    open override func touchesBegan(_ touch: Touch) {
        guard isEnabled, touch.button == .primary else { return }
        let x = convertFromRoot(touch.location).x
        let centerX = Self.thumbCenterX(model.withLock { $0.fraction }, in: bounds)
        let onThumb = abs(x - centerX) <= Self.thumbDiameter / 2
        drag = (value, onThumb ? centerX - x : 0)
        super.touchesBegan(touch)
        if !onThumb { moveDrag(to: x) }
        applyLook(pressed: true)
        layoutParts()
    }

    @MainActor
    private func moveDrag(to x: Double) {
        guard let drag else { return }
        let changed = setValue(value(atX: x + drag.grabOffset))
        if changed && isContinuous { sendActions(for: .valueChanged) }
    }

    @MainActor
    open override func touchesMoved(_ touch: Touch) {
        guard drag != nil else { return }
        super.touchesMoved(touch)
        moveDrag(to: convertFromRoot(touch.location).x)
    }

    @MainActor
    open override func touchesEnded(_ touch: Touch) {
        guard let started = drag else { return }
        moveDrag(to: convertFromRoot(touch.location).x)
        endDrag(from: started.startValue)
        super.touchesEnded(touch)
    }

    @MainActor
    open override func touchesCancelled(_ touch: Touch) {
        guard let started = drag else { return }
        endDrag(from: started.startValue)
        super.touchesCancelled(touch)
    }

    /// Ends the drag; a slider that is not continuous tells its targets of the change now.
    @MainActor
    private func endDrag(from startValue: Double) {
        drag = nil
        if !isContinuous && value != startValue { sendActions(for: .valueChanged) }
        applyLook(pressed: false)
        layoutParts()
    }

    @MainActor
    open override func didExitVisibleState() {
        if let started = drag { endDrag(from: started.startValue) }
        super.didExitVisibleState()
    }

    /// A drag on the slider moves its thumb: a list or scroll around it does not take it.
    /// - Thread: main
    @MainActor
    open override var handlesDragsItself: Bool { true }

    // MARK: Keys (UI thread)

    /// Arrows step the value, Page Up and Page Down move it by 10% of the range, Home and End go to
    /// the ends; each change sends `.valueChanged`. Other keys go to `ControlNode`.
    @MainActor
    open override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        let m = model.withLock { $0 }
        let page = max(m.step ?? 0, (m.maximum - m.minimum) / 10)
        switch key {
        case .left, .down: userSet(m.value - m.keyStep)
        case .right, .up: userSet(m.value + m.keyStep)
        case .pageDown: userSet(m.value - page)
        case .pageUp: userSet(m.value + page)
        case .home: userSet(m.minimum)
        case .end: userSet(m.maximum)
        default: return super.keyDown(key, modifiers: modifiers)
        }
        return true
    }
}
