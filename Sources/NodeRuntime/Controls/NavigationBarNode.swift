public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The bar over a screen: its `title` centred in bold, an optional back button at the leading edge
/// ("‹ Back", or "‹ " and `backTitle`, the previous screen's title), and the app's own buttons at the
/// trailing edge (`trailingItems`), on the theme's bar colour with a separator hairline along its
/// bottom. It is `height` (44) points tall.
///
/// The back button shows when `showsBackButton`; pressing it (a click, Space or Enter while it is
/// focused, a screen reader's press) or Alt+Left given to `handleKey(_:modifiers:)` calls `onBack`.
/// Escape is left to whoever owns the screen (a `NavigationController` pops on it).
///
/// Given to `NavigationController.navigationBar`, it follows that stack: the top controller's
/// `title`, a back button titled by the one below, popping when pressed. Otherwise the app sets
/// `title`, `backTitle` and `showsBackButton` and pops in `onBack`.
///
/// A screen reader reads a tool bar labelled by the title, holding the title as a heading, the back
/// button as a button named "Back", and the trailing items.
/// - Thread: any for its properties; main for input, layout and `onBack`.
public final class NavigationBarNode: Node, NodeDrawing, @unchecked Sendable {
    /// The bar's height. - Thread: any
    public static let height = 44.0
    /// The space between the bar's edges and its buttons, and between two trailing items.
    static let margin = 8.0

    private struct Model {
        var title: String
        var backTitle: String?
        var showsBackButton: Bool
        var trailingItems: [Node] = []
    }

    private let model: Locked<Model>  // guarded by its lock
    /// The title, centred. - Thread: any (set through `title`)
    public let titleNode = TextNode()
    /// The back button. (set once)
    let backButton = NavigationBackButtonNode()

    /// Called on the UI thread when the back button is pressed, or Alt+Left reaches
    /// `handleKey(_:modifiers:)` while the button shows. - Thread: main
    @MainActor public var onBack: (() -> Void)?

    /// A bar titled `title`, with a back button when `showsBackButton`. - Thread: any
    public init(title: String = "", showsBackButton: Bool = false, backTitle: String? = nil) {
        model = Locked(Model(title: title, backTitle: backTitle, showsBackButton: showsBackButton))
        super.init()
        debugName = "navigation bar"
        displaysAsynchronously = false
        titleNode.displaysAsynchronously = false
        titleNode.isUserInteractionEnabled = false
        titleNode.accessibilityRole = .heading
        addSubnode(titleNode)
        backButton.bar = self
        addSubnode(backButton)
        applyModel()
    }

    /// The screen's title, centred in bold; the tool bar's accessible label. - Thread: any
    public var title: String {
        get { model.withLock { $0.title } }
        set { change { $0.title = newValue } }
    }

    /// Shown after "‹ " on the back button (the previous screen's title); nil or empty for "Back".
    /// The button's accessible name is "Back" either way. - Thread: any
    public var backTitle: String? {
        get { model.withLock { $0.backTitle } }
        set { change { $0.backTitle = newValue } }
    }

    /// Whether the back button shows (and Alt+Left goes back). - Thread: any
    public var showsBackButton: Bool {
        get { model.withLock { $0.showsBackButton } }
        set { change { $0.showsBackButton = newValue } }
    }

    /// The app's buttons at the trailing edge, last one outermost, each at its own size. They become
    /// the bar's subnodes (those they replace leave it). - Thread: any
    public var trailingItems: [Node] {
        get { model.withLock { $0.trailingItems } }
        set {
            let old = model.withLock { m -> [Node] in defer { m.trailingItems = newValue }; return m.trailingItems }
            for node in old where !newValue.contains(where: { $0 === node }) && node.supernode === self { node.removeFromSupernode() }
            for node in newValue where node.supernode !== self { addSubnode(node) }
            setNeedsLayout()
            runtime.noteAccessibilityChange()
        }
    }

    private func change(_ body: (inout Model) -> Void) {
        model.withLock(body)
        applyModel()
        setNeedsLayout()
        runtime.noteAccessibilityChange()
    }

    private func applyModel() {
        let (title, backTitle, showsBack) = model.withLock { ($0.title, $0.backTitle, $0.showsBackButton) }
        let text = AttributedText(title, attributes: .themed(font: .system(size: 16, bold: true), .label))
        if titleNode.attributedText != text { titleNode.attributedText = text }
        let back = backTitle.flatMap { $0.isEmpty ? nil : $0 } ?? "Back"
        backButton.setTitle("‹ " + back)
        backButton.isHidden = !showsBack
        backButton.isEnabled = showsBack
    }

    // MARK: Keys (UI thread)

    /// Alt+Left calls `onBack` when the back button shows; the app's or screen's key handler passes
    /// keys here. Returns whether the key was used. - Thread: main
    @MainActor
    public func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard key == .left, modifiers == .alt, showsBackButton, let onBack else { return false }
        onBack()
        return true
    }

    // MARK: Layout and drawing

    /// The constrained width (or the title's and buttons' when unbounded), `height` tall. - Thread: any
    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        if constrainedSize.width.isFinite { return Size(width: constrainedSize.width, height: Self.height) }
        let title = titleNode.layoutThatFits(.unconstrained).size.width
        let back = backButton.layoutThatFits(.unconstrained).size.width
        return Size(width: (title + 2 * (back + Self.margin)).rounded(.up), height: Self.height)
    }

    /// The back button at the leading edge, the trailing items at the other, the title centred on
    /// the bar (moved aside only as far as the buttons need). - Thread: main
    @MainActor
    public override func layout() {
        super.layout()
        let height = bounds.height
        func place(_ node: Node, _ frame: Rect) { if node.frame != frame { node.frame = frame } }
        var leading = Self.margin
        if showsBackButton {
            let size = backButton.layoutThatFits(SizeRange(min: .zero, max: Size(width: bounds.width / 3, height: height))).size
            place(backButton, Rect(x: Self.margin, y: ((height - size.height) / 2).rounded(), width: size.width, height: size.height))
            leading = Self.margin + size.width + Self.margin
        }
        var trailing = bounds.width - Self.margin
        for item in trailingItems.reversed() {
            let size = item.layoutThatFits(SizeRange(min: .zero, max: Size(width: bounds.width / 3, height: height))).size
            trailing -= size.width
            place(item, Rect(x: trailing, y: ((height - size.height) / 2).rounded(), width: size.width, height: size.height))
            trailing -= Self.margin
        }
        let inset = max(leading, bounds.width - trailing)
        let available = max(0, bounds.width - 2 * inset)
        let size = titleNode.layoutThatFits(SizeRange(min: .zero, max: Size(width: available, height: height))).size
        let width = min(size.width.rounded(.up), available)
        place(titleNode, Rect(x: ((bounds.width - width) / 2).rounded(), y: ((height - size.height) / 2).rounded(),
                              width: width, height: size.height.rounded(.up)))
    }

    /// The bar's fill and hairline. - Thread: any (a value)
    public struct DrawParameters: Sendable {
        var fill: Color
        var line: Color
    }

    /// The theme's bar and separator colours. - Thread: main
    @MainActor
    public func drawParameters() -> DrawParameters {
        DrawParameters(fill: themeColor(.bar), line: themeColor(.separator))
    }

    /// Fills the bar and draws the half-point hairline along its bottom. - Thread: display worker
    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.fill)
        context.fill(Rect(x: 0, y: info.bounds.height - 0.5, width: info.bounds.width, height: 0.5), color: parameters.line)
    }

    // MARK: Accessibility

    /// A bar is an element. - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// A tool bar labelled by the title, holding the title, the back button and the items.
    /// - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .toolBar, label: title)
    }
}

/// A navigation bar's back button: its title in the accent colour, shaded while hovered or pressed,
/// named "Back" to a screen reader.
/// - Thread: any for its properties; main for the rest (see `ControlNode`).
final class NavigationBackButtonNode: ControlNode, NodeDrawing, @unchecked Sendable {
    static let padding = 8.0
    let titleNode = TextNode()
    /// The bar. (set once, before the button is shown)
    nonisolated(unsafe) weak var bar: NavigationBarNode?

    override init() {
        super.init()
        debugName = "back button"
        displaysAsynchronously = false
        ControlIndicators.prepareTitle(titleNode)
        addSubnode(titleNode)
    }

    /// Shows `title` in the accent colour. - Thread: any
    func setTitle(_ title: String) {
        let text = AttributedText(title, attributes: .themed(font: .system(size: 15), .accent))
        guard titleNode.attributedText != text else { return }
        titleNode.attributedText = text
        setNeedsLayout()
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let size = titleNode.layoutThatFits(.unconstrained).size
        let width = (size.width.isFinite ? size.width : 0).rounded(.up) + 2 * Self.padding
        return Size(width: min(width, constrainedSize.width.isFinite ? constrainedSize.width : width), height: 32)
    }

    override func layout() {
        super.layout()
        let size = titleNode.layoutThatFits(.unconstrained).size
        let width = min(size.width.rounded(.up), max(0, bounds.width - 2 * Self.padding))
        let frame = Rect(x: Self.padding, y: ((bounds.height - size.height) / 2).rounded(), width: width, height: size.height.rounded(.up))
        if titleNode.frame != frame { titleNode.frame = frame }
    }

    struct DrawParameters: Sendable {
        var state: ControlState
        var palette: ControlPalette
    }

    func drawParameters() -> DrawParameters { DrawParameters(state: controlState, palette: ControlPalette(for: self)) }

    /// Transparent at rest; the label colour laid over the bar while hovered, more while pressed.
    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let state = parameters.state
        let strength = state.contains(.highlighted) ? 0.16 : state.contains(.hovered) ? 0.08 : 0
        guard strength > 0 else { return }
        context.fillRoundedRect(info.bounds, radii: CornerRadii(6), color: parameters.palette.label.withAlphaMultiplied(by: strength))
    }

    override func controlStateDidChange() {
        super.controlStateDidChange()
        setNeedsDisplay()
    }

    /// Goes back: the bar's `onBack`.
    override func activate() {
        bar?.onBack?()
    }

    /// A button named "Back", whatever it shows. - Thread: main
    override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.label = "Back"
        return description
    }
}
