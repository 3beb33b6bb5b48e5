public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A check box: a box 18 points square with an optional title to its right, the whole row pressable.
/// Off, the box is outlined; on, it is filled with the accent colour and shows a white tick; mixed
/// (`isMixed`, for a box that stands for several others of which some are on) it shows a dash.
/// Hovering and pressing shade it, a disabled one is drawn at half opacity, and the host's focus ring
/// shows keyboard focus.
///
/// Activating it (a press released inside, Space or Enter, or a screen reader's press) toggles
/// `isChecked` — a mixed box becomes checked — and sends `.valueChanged`, then
/// `.primaryActionTriggered`. Setting `isChecked` or `isMixed` in code, from any thread, sends
/// nothing. Its size is the box, an 8-point gap and the title on one line, at least 24 points tall.
/// - Thread: any for its properties; see `ControlNode`.
public final class CheckboxNode: ControlNode, NodeDrawing, @unchecked Sendable {
    private struct Model {
        var isChecked = false
        var isMixed = false
        var title = ""
    }

    /// The title beside the box. - Thread: any (set through `title`)
    public let titleNode = TextNode()
    private let model = Locked(Model())  // guarded by its lock

    /// A check box titled `title` (nil or empty: a box alone), `isChecked` or not. - Thread: any
    public init(title: String? = nil, isChecked: Bool = false) {
        super.init()
        debugName = "check box \(title ?? "")"
        displaysAsynchronously = false
        model.withLock {
            $0.isChecked = isChecked
            $0.title = title ?? ""
        }
        ControlIndicators.prepareTitle(titleNode)
        addSubnode(titleNode)
        applyTitle()
    }

    /// On or off. Setting it clears `isMixed`, redraws, and sends nothing. - Thread: any
    public var isChecked: Bool {
        get { model.withLock { $0.isChecked } }
        set { change { $0.isChecked = newValue; $0.isMixed = false } }
    }

    /// Shows a dash instead of a tick: some of what the box stands for is on, some off. It is drawn
    /// whatever `isChecked` is, and activating the box clears it and checks the box. Setting it sends
    /// nothing. - Thread: any
    public var isMixed: Bool {
        get { model.withLock { $0.isMixed } }
        set { change { $0.isMixed = newValue } }
    }

    /// The text to the right of the box, and the box's accessible label; empty for none.
    /// - Thread: any
    public var title: String {
        get { model.withLock { $0.title } }
        set {
            guard model.withLock({ m -> Bool in defer { m.title = newValue }; return m.title != newValue }) else { return }
            applyTitle()
            setNeedsLayout()
            runtime.noteAccessibilityChange()
        }
    }

    private func change(_ body: (inout Model) -> Void) {
        let changed = model.withLock { m -> Bool in
            let before = (m.isChecked, m.isMixed)
            body(&m)
            return before != (m.isChecked, m.isMixed)
        }
        guard changed else { return }
        setNeedsDisplay()
        runtime.noteAccessibilityChange()
    }

    private func applyTitle() {
        titleNode.attributedText = ControlIndicators.titleText(title)
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
    }

    // MARK: Accessibility

    /// A check box: checkable, checked when on; a mixed box's value is "mixed". Labelled by its title.
    /// - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.role = .checkBox
        description.label = title
        description.states.insert(.checkable)
        let (checked, mixed) = model.withLock { ($0.isChecked, $0.isMixed) }
        if checked && !mixed { description.states.insert(.checked) }
        description.value = mixed ? "mixed" : nil
        return description
    }

    // MARK: Layout and drawing

    /// The box, the gap and the title on one line, at least 24 points tall. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        ControlIndicators.rowSize(title: titleNode, constrainedWidth: constrainedSize.width)
    }

    /// Puts the title beside the box. - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        ControlIndicators.layoutTitle(titleNode, in: bounds)
    }

    /// What the box looks like now. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var state: ControlState
        var isChecked: Bool
        var isMixed: Bool
        var palette: ControlPalette
    }

    /// The state, the value and the theme's colours. - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        let (checked, mixed) = model.withLock { ($0.isChecked, $0.isMixed) }
        return DrawParameters(state: controlState, isChecked: checked, isMixed: mixed, palette: ControlPalette(for: self))
    }

    /// Draws the box at the leading edge. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let on = parameters.isChecked || parameters.isMixed
        ControlIndicators.drawIndicator(in: ControlIndicators.indicatorRect(in: info.bounds), round: false, on: on,
                                        mark: parameters.isMixed ? .dash : .tick, state: parameters.state,
                                        palette: parameters.palette, context: &context, scale: info.scale)
    }

    // MARK: State

    /// Redraws for the new state and dims a disabled box. - Thread: main
    @MainActor
    public override func controlStateDidChange() {
        super.controlStateDidChange()
        opacity = isEnabled ? 1 : ControlIndicators.disabledOpacity
        setNeedsDisplay()
    }

    /// Toggles the box (a mixed one becomes checked) and sends `.valueChanged`. - Thread: main
    @MainActor
    public override func activate() {
        let mixed = isMixed
        isChecked = mixed ? true : !isChecked
        sendActions(for: .valueChanged)
    }
}
