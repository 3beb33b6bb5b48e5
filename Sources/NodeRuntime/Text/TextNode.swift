public import Compositor

/// A node that shows attributed text: measured on any thread, drawn on a display worker.
///
/// Measuring (`layoutThatFits`, `calculateSizeThatFits`, `textLayout(forWidth:)`) goes through the
/// shared `TextLayoutCache`, so sizing a node and then drawing it at that size measures once: the
/// draw parameters carry the layout measured for the node's width, and the worker draws it. Links
/// and spoilers are tapped through `touchesBegan`/`touchesEnded` with the primary button; a tapped
/// spoiler is revealed (which only draws again: the layout does not change) and a tapped link calls
/// `linkTapHandler`. The pointer shows a hand over them and an I-beam over the rest of the text.
///
/// ## Threads
/// - Any thread: `init`, every text property, measuring, `textHit(at:)`, `revealSpoiler(_:)`.
/// - Main: the touch overrides, `cursor(at:)`, and the calls of `linkTapHandler`.
/// - Display worker: `draw(_:in:info:)`, with the parameters captured on the main thread.
public final class TextNode: Node, NodeDrawing, @unchecked Sendable {
    // MARK: Accessibility

    /// Text is read: a text node is a static-text element. - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// Static text labelled by its string; its links are link elements inside it (`accessibilityLinks`).
    /// - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        let string = attributedText.string
        return AccessibilityDescription(role: .staticText, label: string, states: [], text: AccessibilityText(string: string))
    }

    /// The text's links in order: their text and value (what `linkTapHandler` gets). - Thread: any
    public var accessibilityLinks: [(text: String, link: String)] {
        attributedText.runs.compactMap { run in run.attributes.link.map { (run.text, $0) } }
    }

    /// Opens the link at `index` of `accessibilityLinks` as a click would. - Thread: main
    @MainActor
    public func activateAccessibilityLink(at index: Int) -> Bool {
        let links = accessibilityLinks
        guard index >= 0, index < links.count, let handler = linkTapHandler ?? Self.defaultLinkTapHandler else { return false }
        handler(links[index].link)
        return true
    }

    /// What a draw needs: the text, its options, and the layout measured for the node's width when
    /// one is known (else the worker measures, through the cache).
    /// - Thread: any (a value)
    public struct DrawParameters: Sendable {
        public var text: AttributedText
        public var options: TextLayoutOptions
        public var layout: TextLayout?
        public var revealedSpoilers: Set<Int>
        public var fonts: FontRegistry
        /// The width to measure at when `layout` is nil: that of the node's last layout when only the
        /// appearance's colours changed since (measuring at the node's own width, which that layout
        /// rounded, could break a line the layout did not). Nil: the node's width.
        var measuringWidth: Double?

        public init(text: AttributedText, options: TextLayoutOptions = TextLayoutOptions(), layout: TextLayout? = nil,
                    revealedSpoilers: Set<Int> = [], fonts: FontRegistry = .shared) {
            self.text = text; self.options = options; self.layout = layout
            self.revealedSpoilers = revealedSpoilers; self.fonts = fonts
        }
    }

    private struct TextState {
        var text = AttributedText()
        var options = TextLayoutOptions()
        var revealedSpoilers: Set<Int> = []
        var fonts: FontRegistry = .shared
        /// The layout of the last measurement, reused for any width it is valid for while the fonts
        /// have not changed since (`lastLayoutFontsGeneration`).
        var lastLayout: TextLayout?
        var lastLayoutFontsGeneration = 0
        /// The appearance `lastLayout` was measured in.
        var lastLayoutAppearance = AppearanceKey()
        var linkTapHandler: (@MainActor @Sendable (String) -> Void)?
        /// The link or spoiler under the pointer when it went down. (main thread only)
        var pressedTarget: TextHit.Target?
        /// Blocks that were collapsed and have been expanded by a tap (a tap collapses them again).
        var expandedBlocks: Set<Int> = []
        /// The text can be selected and copied (`isSelectable`).
        var isSelectable = false
    }

    /// The selection and the drag that makes it (`TextNode+Selection`). (main thread only)
    @MainActor var selection = TextSelectionState()

    /// Text state, reached only through `textState`.
    private let lockedTextState: Locked<TextState>
    /// Text state; every access goes through `textState.withLock`. Never held while calling out. Out
    /// of a draw function's reach like all node state (checked).
    private var textState: Locked<TextState> {
        DrawScope.check(self)
        return lockedTextState
    }

    /// A node showing `text`.
    /// - Thread: any
    public init(attributedText: AttributedText = AttributedText(), options: TextLayoutOptions = TextLayoutOptions()) {
        lockedTextState = Locked(TextState(text: attributedText, options: options))
        super.init()
        updateInteraction(for: attributedText)
        reportUnusableValues(in: attributedText)
        reportUnusableValues(in: options)
    }

    /// A node showing `text` in one set of attributes.
    /// - Thread: any
    public convenience init(_ text: String, attributes: TextAttributes = TextAttributes()) {
        self.init(attributedText: AttributedText(text, attributes: attributes))
    }

    // MARK: - Text properties (any thread)

    /// The text shown. Setting it measures and draws again; a text with links or spoilers makes the
    /// node interactive so that they can be tapped.
    ///
    /// Fallback: a font size outside `TextFont.minimumSize`...`maximumSize` is measured and drawn at the
    /// nearest size in that range, and a NaN or infinite one at the minimum; the first such size is
    /// reported once per node (`diagnostics`, `TesseraLog.layout`). - Thread: any
    public var attributedText: AttributedText {
        get { textState.withLock { $0.text } }
        set {
            let changed = textState.withLock { state -> Bool in
                guard state.text != newValue else { return false }
                state.text = newValue
                state.lastLayout = nil
                state.revealedSpoilers = []
                state.expandedBlocks = []
                return true
            }
            guard changed else { return }
            updateInteraction(for: newValue)
            reportUnusableValues(in: newValue)
            textDidChange()
        }
    }

    /// Alignment, line spacing, line limit and truncation, together.
    ///
    /// Fallback: a line spacing that is NaN, infinite or negative counts as 0 (one over 1,000 points as
    /// 1,000), and a truncation token's font sizes as the text's; each reported once per node
    /// (`diagnostics`, `TesseraLog.layout`). - Thread: any
    public var options: TextLayoutOptions {
        get { textState.withLock { $0.options } }
        set {
            let changed = textState.withLock { state -> Bool in
                guard state.options != newValue else { return false }
                state.options = newValue
                state.lastLayout = nil
                return true
            }
            guard changed else { return }
            reportUnusableValues(in: newValue)
            textDidChange()
        }
    }

    /// - Thread: any
    public var alignment: TextAlignment {
        get { options.alignment }
        set { options.alignment = newValue }
    }
    /// Extra points between lines. - Thread: any
    public var lineSpacing: Double {
        get { options.lineSpacing }
        set { options.lineSpacing = newValue }
    }
    /// The most lines shown; 0 for no limit. - Thread: any
    public var maximumNumberOfLines: Int {
        get { options.maximumNumberOfLines }
        set { options.maximumNumberOfLines = newValue }
    }
    /// - Thread: any
    public var truncationMode: TruncationMode {
        get { options.truncationMode }
        set { options.truncationMode = newValue }
    }
    /// Replaces cut text; nil for "…". - Thread: any
    public var truncationToken: AttributedText? {
        get { options.truncationToken }
        set { options.truncationToken = newValue }
    }

    /// The fonts the text is measured and drawn with. - Thread: any
    public var fontRegistry: FontRegistry {
        get { textState.withLock { $0.fonts } }
        set {
            textState.withLock { state in
                state.fonts = newValue
                state.lastLayout = nil
            }
            textDidChange()
        }
    }

    /// Spoilers shown without their veil, by index (see `TextHit.Target.spoiler`). - Thread: any
    public var revealedSpoilers: Set<Int> {
        get { textState.withLock { $0.revealedSpoilers } }
        set {
            let changed = textState.withLock { state -> Bool in
                guard state.revealedSpoilers != newValue else { return false }
                state.revealedSpoilers = newValue
                return true
            }
            // Revealing changes pixels only, never the layout.
            if changed { setNeedsDisplay() }
        }
    }

    /// Shows spoiler `index` without its veil. - Thread: any
    public func revealSpoiler(_ index: Int) {
        revealedSpoilers.insert(index)
    }

    /// What a tapped link does in a node whose `linkTapHandler` is nil: nil (the default) does
    /// nothing. An `Application` with a window sets it to open http, https and mailto links in the
    /// desktop's browser or mail app (`DesktopPortal`, see `Application.Configuration.opensLinks`).
    /// - Thread: main
    @MainActor public static var defaultLinkTapHandler: (@MainActor @Sendable (String) -> Void)?

    /// Called on the UI thread with a link's value when it is tapped; nil leaves the link to
    /// `TextNode.defaultLinkTapHandler`. - Thread: any (to set)
    public var linkTapHandler: (@MainActor @Sendable (String) -> Void)? {
        get { textState.withLock { $0.linkTapHandler } }
        set {
            // The old handler (and whatever it captured) is released after the lock, not inside it.
            let old = textState.withLock { state in
                defer { state.linkTapHandler = newValue }
                return state.linkTapHandler
            }
            withExtendedLifetime(old) {}
        }
    }

    /// Whether the text can be selected with the pointer and the keyboard and copied (see
    /// `TextNode+Selection`). Off by default. Setting it makes the node take input. - Thread: any
    public var isSelectable: Bool {
        get { textState.withLock { $0.isSelectable } }
        set {
            textState.withLock { $0.isSelectable = newValue }
            if newValue { isUserInteractionEnabled = true }
        }
    }

    private func textDidChange() {
        setNeedsLayout()
        setNeedsDisplay()
    }

    /// Reports the first font size of `text` that is measured as another size (once per node).
    private func reportUnusableValues(in text: AttributedText) {
        guard let run = text.runs.first(where: { $0.attributes.font.sanitizedSize != $0.attributes.font.size }) else { return }
        let font = run.attributes.font
        reportOnce(.invalidProperty, property: "fontSize",
                   "font size \(font.size) (in \"\(run.text.prefix(24))\") is not a size from \(TextFont.minimumSize) to \(TextFont.maximumSize); measured at \(font.sanitizedSize)")
    }

    /// Reports a line spacing, or a truncation token's font size, that is measured as another value.
    private func reportUnusableValues(in options: TextLayoutOptions) {
        if options.sanitizedLineSpacing != options.lineSpacing {
            reportOnce(.invalidProperty, property: "lineSpacing",
                       "line spacing set to \(options.lineSpacing); measured as \(options.sanitizedLineSpacing)")
        }
        if let token = options.truncationToken { reportUnusableValues(in: token) }
    }

    private func updateInteraction(for text: AttributedText) {
        if text.runs.contains(where: { $0.attributes.link != nil || $0.attributes.isSpoiler || $0.attributes.block?.isCollapsed == true }) {
            isUserInteractionEnabled = true
        }
    }

    // MARK: - Measuring (any thread)

    /// The layout of the text in a box `width` points wide, from the node's last measurement when it
    /// holds for that width, else measured (through the cache).
    /// - Thread: any
    public func textLayout(forWidth width: Double) -> TextLayout {
        let scale = contentsScale
        let (text, options, fonts, last, lastGeneration, lastAppearance) = textState.withLock {
            ($0.text, $0.options, $0.fonts, $0.lastLayout, $0.lastLayoutFontsGeneration, $0.lastLayoutAppearance)
        }
        let appearance = appearanceKey(for: text, options)
        let generation = fonts.generation
        if let last, lastGeneration == generation, lastAppearance == appearance,
           TextNode.layout(last, holdsForWidth: width, scale: scale) { return last }
        let (scaledText, scaledOptions) = TextNode.shown(text, options, in: appearance)
        let layout = TextLayout.measure(scaledText, width: width, options: scaledOptions, scale: scale, fonts: fonts)
        let replaced = textState.withLock { state -> TextLayout? in
            // A layout measured while the text changed is returned but not kept.
            guard state.text == text && state.options == options else { return nil }
            defer {
                state.lastLayout = layout
                state.lastLayoutFontsGeneration = generation
                state.lastLayoutAppearance = appearance
            }
            return state.lastLayout
        }
        withExtendedLifetime(replaced) {}  // let go of after unlocking
        // Text cut at the layout's hard limits: kept among the node's diagnostics (printed already).
        if let cut = layout.diagnostics.first { recordOnce(cut, property: "lineLimit") }
        return layout
    }

    /// The last layout measured, when it holds for `width`; nil when the text must be measured again.
    /// Never measures. - Thread: any
    func measuredLayout(forWidth width: Double) -> TextLayout? {
        let scale = contentsScale
        let (last, lastGeneration, fonts, lastAppearance, text, options) = textState.withLock {
            ($0.lastLayout, $0.lastLayoutFontsGeneration, $0.fonts, $0.lastLayoutAppearance, $0.text, $0.options)
        }
        guard lastGeneration == fonts.generation, lastAppearance == appearanceKey(for: text, options) else { return nil }
        return last.flatMap { TextNode.layout($0, holdsForWidth: width, scale: scale) ? $0 : nil }
    }

    /// The layout for the node's current width; before the node has a width, the last one measured.
    /// - Thread: any
    public var textLayout: TextLayout {
        let width = bounds.width
        if width <= 0, let last = textState.withLock({ $0.lastLayout }) { return last }
        return textLayout(forWidth: width)
    }

    /// True when text is left out at the node's width. - Thread: any
    public var isTruncated: Bool { textLayout.isTruncated }
    /// The number of lines at the node's width. - Thread: any
    public var lineCount: Int { textLayout.lineCount }
    /// Each line's rectangle in the node's coordinates. - Thread: any
    public var lineRects: [Rect] { textLayout.lineRects(inWidth: boxWidth) }
    /// Where each attachment's box is, in the node's coordinates, for placing a node over it.
    /// - Thread: any
    public var attachmentRects: [TextAttachmentPlacement] { textLayout.attachmentRects(inWidth: boxWidth) }

    /// The width alignment is relative to: the node's width, or the text's before it has one.
    private var boxWidth: Double {
        let width = bounds.width
        return width > 0 ? width : textLayout.size.width
    }

    /// A layout measured for width W holds for any width between its own width and W: its lines break
    /// at the same places there (alignment is applied when drawing).
    static func layout(_ layout: TextLayout, holdsForWidth width: Double, scale: Double) -> Bool {
        guard layout.scale == scale, width.isFinite || layout.constrainedWidth.isInfinite else { return false }
        if width == layout.constrainedWidth { return true }
        return width >= layout.size.width && width <= layout.constrainedWidth && layout.size.width > 0
    }

    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        let layout = textLayout(forWidth: constrainedSize.width)
        return layout.size
    }

    /// What is under `point` (node coordinates): a veiled spoiler, a link or an attachment.
    /// - Thread: any
    public func textHit(at point: Point) -> TextHit? {
        let revealed = revealedSpoilers
        let expanded = textState.withLock { $0.expandedBlocks }
        return textLayout.hitTest(point, inWidth: boxWidth, revealedSpoilers: revealed, expandedBlocks: expanded)
    }

    /// The layout the node shows now: the one measured for its width (its last one before it has a
    /// width); nil while the text is being measured again. Never measures. - Thread: any
    var shownLayout: TextLayout? {
        let width = bounds.width
        if width <= 0 { return textState.withLock { $0.lastLayout } }
        return measuredLayout(forWidth: width)
    }

    /// What is under `point` (node coordinates) in the layout shown now; nil over plain text and while
    /// the text is being measured again. Never measures, so the UI thread's pointer handling costs
    /// what a lookup costs whatever the text. - Thread: any
    func shownTextHit(at point: Point) -> TextHit? {
        guard let layout = shownLayout else { return nil }
        let expanded = textState.withLock { $0.expandedBlocks }
        let width = bounds.width
        return layout.hitTest(point, inWidth: width > 0 ? width : layout.size.width, revealedSpoilers: revealedSpoilers,
                              expandedBlocks: expanded)
    }

    /// Expands collapsed block `index` (as `TextLayout.blocks` counts them), or collapses it again if
    /// a tap expanded it. The text is measured again like any change (off the UI thread when the
    /// host lays out in the background). - Thread: any
    public func toggleBlock(_ index: Int) {
        let changed = textState.withLock { state -> Bool in
            let expanding = !state.expandedBlocks.contains(index)
            let text = state.text.settingCollapsed(!expanding, ofBlock: index)
            guard text != state.text else { return false }
            state.text = text
            state.lastLayout = nil
            if expanding { state.expandedBlocks.insert(index) } else { state.expandedBlocks.remove(index) }
            return true
        }
        if changed { textDidChange() }
    }

    // MARK: - Drawing

    public func drawParameters() -> DrawParameters {
        let width = bounds.width
        let scale = contentsScale
        let (fonts, text, options) = textState.withLock { ($0.fonts, $0.text, $0.options) }
        let generation = fonts.generation
        let appearance = appearanceKey(for: text, options)
        let parameters = textState.withLock { state in
            let current = state.lastLayoutFontsGeneration == generation && state.lastLayoutAppearance == appearance
            let holding = state.lastLayout.flatMap { TextNode.layout($0, holdsForWidth: width, scale: scale) ? $0 : nil }
            var parameters = DrawParameters(text: state.text, options: state.options, layout: current ? holding : nil,
                                            revealedSpoilers: state.revealedSpoilers, fonts: state.fonts)
            // Only the colours (or the theme) changed: the lines break as in the layout that holds.
            if !current, state.lastLayoutFontsGeneration == generation,
               state.lastLayoutAppearance.textScale == appearance.textScale {
                parameters.measuringWidth = holding?.constrainedWidth
            }
            return parameters
        }
        guard appearance.textScale != 1 || appearance.theme != nil else { return parameters }
        // The worker measures (when no layout holds) the text as shown: at the appearance's scale, in
        // the theme's colours.
        var shown = parameters
        (shown.text, shown.options) = TextNode.shown(parameters.text, parameters.options, in: appearance)
        return shown
    }

    // MARK: - Appearance

    /// What of the appearance a layout of the text depends on: the text scale, and for text with
    /// theme colours the theme and appearance they resolve in.
    struct AppearanceKey: Equatable {
        var textScale = 1.0
        /// `Runtime.appearanceGeneration` for text with theme colours (nil without).
        var generation: Int?
        /// The theme and appearance its colours resolve in (nil without theme colours).
        var theme: (Theme, Appearance)?

        static func == (a: AppearanceKey, b: AppearanceKey) -> Bool {
            a.textScale == b.textScale && a.generation == b.generation
        }
    }

    /// The appearance `text` is measured in now, recorded as a dependency: the text scale for any text,
    /// colours for text with theme colours (`TextAttributes.themeColor`). - Thread: any
    private func appearanceKey(for text: AttributedText, _ options: TextLayoutOptions) -> AppearanceKey {
        let themed = text.runs.contains { $0.attributes.themeColor != nil }
            || (options.truncationToken?.runs.contains { $0.attributes.themeColor != nil } ?? false)
        dependOnAppearance(themed ? [.textScale, .colors] : .textScale)
        let (appearance, theme, generation) = runtime.appearanceState.withLock { ($0.appearance, $0.theme, $0.generation) }
        return AppearanceKey(textScale: appearance.textScale, generation: themed ? generation : nil,
                             theme: themed ? (theme, appearance) : nil)
    }

    /// `text` and `options` as shown in `appearance`: every font size (the truncation token's too) and
    /// the line spacing multiplied by the text scale, and runs with a theme colour in that colour.
    static func shown(_ text: AttributedText, _ options: TextLayoutOptions, in appearance: AppearanceKey)
        -> (AttributedText, TextLayoutOptions)
    {
        let factor = appearance.textScale
        guard factor != 1 || appearance.theme != nil else { return (text, options) }
        func transform(_ text: AttributedText) -> AttributedText {
            AttributedText(runs: text.runs.map { run in
                var run = run
                run.attributes.font.size *= factor
                if let name = run.attributes.themeColor, let (theme, current) = appearance.theme {
                    run.attributes.color = theme.color(name, for: current)
                }
                return run
            })
        }
        var options = options
        options.lineSpacing *= factor
        options.truncationToken = options.truncationToken.map(transform)
        return (transform(text), options)
    }

    /// A new text scale measures the text again (and so its row in a list, and its ancestors), and
    /// draws it again; new theme colours draw it again.
    /// - Thread: main
    public override func appearanceDidChange(_ change: AppearanceChange) {
        if change.contains(.textScale) {
            let dropped = textState.withLock { state -> TextLayout? in
                defer { state.lastLayout = nil }
                return state.lastLayout
            }
            withExtendedLifetime(dropped) {}
            setNeedsLayout()
            setNeedsDisplay()
        }
        super.appearanceDidChange(change)
    }

    public static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let width = info.bounds.width
        let layout: TextLayout
        if let measured = parameters.layout, measured.scale == context.scale {
            layout = measured
        } else {
            layout = TextLayout.measure(parameters.text, width: parameters.measuringWidth ?? width, options: parameters.options,
                                        scale: context.scale, fonts: parameters.fonts)
        }
        if info.isCancelled() { return }
        TextRenderer.draw(layout, in: &context, boxWidth: width, revealedSpoilers: parameters.revealedSpoilers,
                          fonts: parameters.fonts, isCancelled: info.isCancelled)
    }

    // MARK: - Touches (main thread)

    /// Only the primary button taps: a right or middle click on a link opens nothing. Touches look at
    /// the layout shown (`shownTextHit`): a tap while the text is being measured again taps nothing.
    public override func touchesBegan(_ touch: Touch) {
        let target = touch.button == .primary ? shownTextHit(at: convertFromRoot(touch.location))?.target : nil
        textState.withLock { $0.pressedTarget = target }
        if isSelectable { selectionTouchBegan(touch) }
    }

    public override func touchesMoved(_ touch: Touch) {
        guard isSelectable else { return }
        // A drag that selects is no tap on a link.
        if selectionTouchMoved(touch) { textState.withLock { $0.pressedTarget = nil } }
    }

    public override func touchesCancelled(_ touch: Touch) {
        textState.withLock { $0.pressedTarget = nil }
        selection.dragAnchor = nil
    }

    public override func touchesEnded(_ touch: Touch) {
        if isSelectable { selectionTouchEnded(touch) }
        let target = shownTextHit(at: convertFromRoot(touch.location))?.target
        let (pressed, handler) = textState.withLock { state -> (TextHit.Target?, ((String) -> Void)?) in
            defer { state.pressedTarget = nil }
            return (state.pressedTarget, state.linkTapHandler)
        }
        // A tap acts only where the pointer went down and came up over the same item.
        guard let target, target == pressed else { return }
        switch target {
        case let .spoiler(index): revealSpoiler(index)
        case let .link(value):
            if let handler { handler(value) } else { Self.defaultLinkTapHandler?(value) }
        case let .block(index): toggleBlock(index)
        case .attachment: break
        }
    }

    // MARK: - Selection (main thread; see `TextNode+Selection`)

    /// A selectable text takes the keyboard focus (a click focuses it; Tab reaches it). - Thread: main
    public override var canBecomeFocused: Bool { isSelectable }

    /// A selectable text's drag selects: the list or scroll around it does not take it. - Thread: main
    public override var handlesDragsItself: Bool { isSelectable }

    /// The selection's keys while the text has the focus. - Thread: main
    public override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        isSelectable && selectionKeyDown(key, modifiers: modifiers)
    }

    /// Places the selection's rectangles again for the new size. - Thread: main
    public override func layout() {
        super.layout()
        if selection.range != nil { updateSelectionHighlight() }
    }

    // MARK: - Cursor (main thread)

    /// A pointing hand over what a click acts on (a link, a veiled spoiler, a collapsed block); else
    /// the node's `cursor` when one is set; else an I-beam over the text's lines and nil (the
    /// ancestors' choice) beside them. The host asks only while the node is hovered, which needs it to
    /// be interactive (a text with links, spoilers or collapsed blocks, or one made interactive).
    ///
    /// It looks only at the layout shown now and never measures: while the text is being measured
    /// again (off the UI thread when the host lays out in the background) nothing is a link, and the
    /// host asks again at each frame, so the hand appears at the first frame after the layout arrives.
    /// - Thread: main
    @MainActor
    public override func cursor(at point: Point) -> Cursor? {
        guard let layout = shownLayout else { return cursor }
        if let hit = shownTextHit(at: point) {
            switch hit.target {
            case .link, .spoiler, .block: return .hand
            case .attachment: break
            }
        }
        if let chosen = cursor { return chosen }
        let width = bounds.width > 0 ? bounds.width : layout.size.width
        return layout.lineRects(inWidth: width).contains { $0.contains(point) } ? .iBeam : nil
    }
}

/// Text shrinks and wraps by default when a horizontal stack runs out of room, instead of overflowing.
extension TextNode: LayoutStyleDefaults {
    public static var defaultLayoutStyle: LayoutStyle {
        var style = LayoutStyle()
        style.flexShrink = 1
        return style
    }
}
