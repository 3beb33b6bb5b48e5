public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A search field: a rounded field with a magnifier at its start, a one-line text field
/// (`textField`, an `EditableTextNode`) showing `placeholder` ("Search") while it is empty, and a clear
/// button (×) at its end, shown only while there is text.
///
/// Every change of the text by the user (typing, pasting, deleting, the clear button, Escape) calls
/// `onTextChange` and sends `.valueChanged`; Enter calls `onSubmit` and sends
/// `.primaryActionTriggered`. The clear button and Escape empty the field as one step of undo and
/// leave the keyboard focus in it (Escape in an empty field goes on up, to close a dialog or a menu).
/// Setting `text` in code, from any thread, calls and sends nothing.
///
/// The text field has the keyboard focus, not the search field: a press anywhere in the field focuses
/// it, Tab reaches it, and the field shows the focus with an accent outline (the host's focus ring,
/// when it shows, goes around the whole field). A disabled field is faded, takes no presses, and
/// gives up and refuses the focus.
///
/// For screen readers the text field is the element: an entry, its label and its description the
/// placeholder (set `textField.accessibilityLabel` to name it otherwise); the clear button is a button
/// of its own while it shows.
/// Its height is the text's line and 8 points above and below it (36 points for the default 15-point
/// text); it is as wide as its layout allows.
/// - Thread: any for its properties; main for input, layout, `onTextChange` and `onSubmit`.
open class SearchFieldNode: ControlNode, @unchecked Sendable {
    // MARK: Accessibility

    /// Not an element itself: its elements are the text field and the clear button. - Thread: any
    open override var isAccessibilityElementByDefault: Bool { false }

    /// A container of its elements. - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription { AccessibilityDescription() }

    /// The one-line field the text is edited in.
    public let textField: EditableTextNode
    /// The magnifier at the start.
    let glyphNode = SearchGlyphNode()
    /// The × at the end, shown while there is text.
    let clearButton = SearchClearButtonNode()
    /// The rounded background, outlined in the accent colour while the text field has the focus.
    let backgroundNode = SearchFieldBackgroundNode()

    /// Called on the UI thread after each change of the text by the user, with the new text.
    /// - Thread: main
    @MainActor
    public var onTextChange: ((String) -> Void)?
    /// Called on the UI thread with the text when the user presses Enter. - Thread: main
    @MainActor
    public var onSubmit: ((String) -> Void)?

    /// A search field showing `text` in `attributes`, with `placeholder` while it is empty.
    /// - Thread: any
    public init(text: String = "", placeholder: String = "Search",
                attributes: TextAttributes = .themed(font: .system(size: 15), .label)) {
        textField = EditableTextNode(text: text, attributes: attributes, placeholder: placeholder)
        super.init()
        cursor = .iBeam
        automaticallyManagesSubnodes = true
        textField.isMultiline = false
        textField.maximumVisibleLines = 1
        textField.returnKeyBehavior = .submit
        textField.accessibilityHint = placeholder
        var placeholderStyle = textField.placeholderAttributes
        placeholderStyle.themeColor = .secondaryLabel
        placeholderStyle.color = themeColor(.secondaryLabel)
        textField.placeholderAttributes = placeholderStyle
        textField.caretColor = themeColor(.accent)
        runtime.mainQueue.performOrEnqueue { [self] in connect() }
    }

    /// Hears the text field and the clear button. (UI thread)
    @MainActor
    private func connect() {
        textField.focusRingTarget = self
        textField.onChange = { [weak self] text in self?.userChangedText(text) }
        textField.onSubmit = { [weak self] text in
            guard let self, isEnabled else { return }
            onSubmit?(text)
            sendActions(for: .primaryActionTriggered)
        }
        textField.focusChanged = { [weak self] _ in self?.showFocus() }
        clearButton.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in self?.clear() }
    }

    // MARK: Properties (any thread)

    /// The text. Setting it replaces the text (the caret goes to its end), shows or hides the clear
    /// button, and calls and sends nothing. - Thread: any
    public var text: String {
        get { textField.text }
        set {
            textField.text = newValue
            setNeedsLayout()
        }
    }

    /// Shown while the field is empty, and its description for screen readers. Default "Search".
    /// - Thread: any
    public var placeholder: String {
        get { textField.placeholder }
        set {
            textField.placeholder = newValue
            textField.accessibilityHint = newValue
        }
    }

    // MARK: Editing (UI thread)

    @MainActor
    private func userChangedText(_ text: String) {
        setNeedsLayout()
        onTextChange?(text)
        sendActions(for: .valueChanged)
    }

    /// Empties the field as the user would (one step of undo), calls `onTextChange` and sends
    /// `.valueChanged`, and gives the text field the focus. Nothing happens when it is empty or
    /// disabled. - Thread: main
    @MainActor
    public func clear() {
        UIThread.precondition("SearchFieldNode.clear")
        guard isEnabled else { return }
        nodeHost?.focus(textField)
        guard !textField.text.isEmpty else { return }
        textField.selectedRange = 0..<textField.text.utf16.count
        textField.replaceSelection(with: "", coalescing: false)
    }

    /// Escape empties a field that has text; in an empty one it goes on up.
    @MainActor
    open override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, key == .escape, modifiers.isDisjoint(with: [.control, .alt, .command]),
              !textField.text.isEmpty else { return false }
        clear()
        return true
    }

    /// A press on the field (the magnifier, the padding) focuses the text field.
    @MainActor
    open override func touchesBegan(_ touch: Touch) {
        guard isEnabled, touch.button == .primary else { return }
        nodeHost?.focus(textField)
    }

    @MainActor open override func touchesMoved(_ touch: Touch) {}
    @MainActor open override func touchesEnded(_ touch: Touch) {}
    @MainActor open override func touchesCancelled(_ touch: Touch) {}

    /// The search field never takes the focus itself: its text field does. - Thread: main
    @MainActor
    open override var canBecomeFocused: Bool { false }

    // MARK: State and look

    @MainActor
    private func showFocus() {
        backgroundNode.isOutlined = textField.focusHost != nil && isEnabled
    }

    @MainActor
    open override func controlStateDidChange() {
        super.controlStateDidChange()
        let enabled = isEnabled
        opacity = enabled ? 1 : 0.45
        textField.isUserInteractionEnabled = enabled
        textField.refusesFocus = !enabled
        clearButton.isEnabled = enabled
        if !enabled, let host = textField.focusHost, host.focusedNode === textField { host.focus(nil) }
        showFocus()
        setNeedsLayout()
    }

    @MainActor
    open override func appearanceDidChange(_ change: AppearanceChange) {
        super.appearanceDidChange(change)
        if change.contains(.colors) { textField.caretColor = themeColor(.accent) }
    }

    open override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        var children: [any LayoutElement] = [glyphNode.size(Size(width: 16, height: 16)),
                                              textField.flexGrow(1).flexShrink(1)]
        let showsClear = !textField.text.isEmpty && isEnabled
        if showsClear { children.append(clearButton.size(Size(width: 20, height: 20))) }
        let stack = StackSpec(direction: .horizontal, spacing: 8, alignItems: .center, children: children)
        let insets = EdgeInsets(top: 8, left: 10, bottom: 8, right: showsClear ? 8 : 12)
        return stack.inset(insets).background(backgroundNode)
    }

}

/// The rounded background of a search field: the theme's fill, with an accent outline while the
/// field has the focus.
final class SearchFieldBackgroundNode: Node, NodeDrawing, @unchecked Sendable {
    private let outlined = Locked(false)

    /// Whether the accent outline shows. - Thread: any
    var isOutlined: Bool {
        get { outlined.withLock { $0 } }
        set {
            guard outlined.withLock({ state -> Bool in defer { state = newValue }; return state != newValue }) else { return }
            setNeedsDisplay()
        }
    }

    struct DrawParameters: Sendable {
        var fill: Color
        var outline: Color?
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(fill: themeColor(.fill), outline: isOutlined ? themeColor(.accent) : nil)
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let radius = min(10, bounds.height / 2)
        if let outline = parameters.outline {
            context.fillRoundedRect(bounds, radii: CornerRadii(radius), color: outline)
            context.fillRoundedRect(bounds.insetBy(dx: 1.5, dy: 1.5), radii: CornerRadii(radius - 1.5), color: parameters.fill)
        } else {
            context.fillRoundedRect(bounds, radii: CornerRadii(radius), color: parameters.fill)
        }
    }
}

/// A search field's magnifier: a ring and a handle to its lower right, in the secondary label colour.
final class SearchGlyphNode: Node, NodeDrawing, @unchecked Sendable {
    struct DrawParameters: Sendable { var color: Color }

    func drawParameters() -> DrawParameters { DrawParameters(color: themeColor(.secondaryLabel)) }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let box = info.bounds
        // A ring of radius 5 around (6.5, 6.5), as 24 segments, and the handle from its edge outwards.
        let ring = (0...24).map { i -> Point in
            let angle = Double(i) / 24 * 2 * Double.pi
            return Point(x: 6.5 + 5 * cos(angle), y: 6.5 + 5 * sin(angle))
        }
        MenuGlyphs.stroke(ring, width: 1.8, in: box, color: parameters.color, context: &context, scale: info.scale)
        MenuGlyphs.stroke([Point(x: 10.3, y: 10.3), Point(x: 14.5, y: 14.5)], width: 2, in: box,
                          color: parameters.color, context: &context, scale: info.scale)
    }
}

/// A search field's clear button: a grey disc with a × cut out of it. It never takes the focus, so
/// pressing it leaves the focus in the text field.
final class SearchClearButtonNode: ControlNode, NodeDrawing, @unchecked Sendable {
    override var canBecomeFocused: Bool { false }

    /// A button named "Clear", pressable. - Thread: main
    override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.label = "Clear"
        description.states.remove(.focusable)
        return description
    }

    override init() {
        super.init()
        cursor = .arrow
    }

    struct DrawParameters: Sendable {
        var disc: Color
        var cross: Color
    }

    func drawParameters() -> DrawParameters {
        let pressed = controlState.contains(.highlighted)
        return DrawParameters(disc: themeColor(pressed ? .label : .secondaryLabel), cross: themeColor(.fill))
    }

    override func controlStateDidChange() {
        super.controlStateDidChange()
        setNeedsDisplay()
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let side = min(bounds.width, bounds.height, 16)
        let disc = Rect(x: (bounds.width - side) / 2, y: (bounds.height - side) / 2, width: side, height: side)
        context.fillRoundedRect(disc, radii: CornerRadii(side / 2), color: parameters.disc)
        let arm = side * 0.2
        let c = side / 2
        MenuGlyphs.stroke([Point(x: c - arm, y: c - arm), Point(x: c + arm, y: c + arm)], width: 1.6, in: disc,
                          color: parameters.cross, context: &context, scale: info.scale)
        MenuGlyphs.stroke([Point(x: c + arm, y: c - arm), Point(x: c - arm, y: c + arm)], width: 1.6, in: disc,
                          color: parameters.cross, context: &context, scale: info.scale)
    }
}
