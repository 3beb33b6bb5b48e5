public import Compositor

/// A text field or text view: single- or multi-line editing with a caret, selection, an input
/// method's marked text, the clipboard, and undo.
///
/// The text is measured off the UI thread when the host lays out in the background and drawn on a
/// display worker, a few lines at a time: the field keeps where each line of its text starts
/// (`TextLineIndex`, updated by breaking again only the lines an edit reaches) and lays out and draws
/// the lines around what it shows (a window a few lines taller than the view), so a keystroke in a
/// 100,000-character message costs what it costs in a short one. The caret and the selection are
/// compositor layers placed from that layout (subnodes with a background colour), so moving the caret,
/// blinking it or selecting never draws the text again; only a change of text or of the marked text,
/// or scrolling past the lines laid out, does. Positions are UTF-16 offsets into `text`, always
/// between grapheme clusters.
///
/// The field grows with its text up to `maximumVisibleLines` lines, then scrolls to keep the caret in
/// view. Enter submits (`onSubmit`) or adds a line, as `returnKeyBehavior` says; Shift+Enter does the
/// other.
///
/// ## Threads
/// - Any thread: `init`, `text`, the configuration properties, measuring.
/// - Main: editing (keys, text input, clicks), `selectedRange`, `markedText`, `undo()`/`redo()`,
///   `onChange`/`onSubmit` calls.
public final class EditableTextNode: Node, @unchecked Sendable {
    // MARK: Accessibility

    /// A text field is an element. - Thread: any
    public override var isAccessibilityElementByDefault: Bool { true }

    /// A text field: its placeholder as label, its text as value, with the caret and selection.
    /// AT-SPI offsets count Unicode scalars; the field keeps UTF-16 offsets, converted here.
    /// - Thread: main
    public override func accessibilityDefaults() -> AccessibilityDescription {
        let string = text
        let utf16 = Array(string.utf16)
        func scalars(_ offset: Int) -> Int {
            let clamped = min(max(0, offset), utf16.count)
            return String(decoding: utf16[0..<clamped], as: UTF16.self).unicodeScalars.count
        }
        let range = selectedRange
        let selection = range.isEmpty ? nil : scalars(range.lowerBound)..<scalars(range.upperBound)
        var states: AccessibilityStates = [.editable, .focusable]
        if isMultiline { states.insert(.multiLine) }
        return AccessibilityDescription(role: .textField, label: placeholder, value: string, states: states,
                                        text: AccessibilityText(string: string, caretOffset: scalars(range.upperBound),
                                                                selection: selection, isEditable: true),
                                        exposesChildren: false)
    }

    /// What Enter does.
    public enum ReturnKeyBehavior: Sendable {
        /// Enter calls `onSubmit`; Shift+Enter adds a line.
        case submit
        /// Enter adds a line; Shift+Enter calls `onSubmit`.
        case newline
    }

    struct EditState {
        var text = ""
        var attributes = TextAttributes()
        var placeholder = ""
        var placeholderAttributes = TextAttributes(color: Color(rgb: 0x8A94A3))
        var isMultiline = true
        var maximumVisibleLines = 6
        var returnKeyBehavior = ReturnKeyBehavior.submit
        var selectionColor = Color(red: 51, green: 144, blue: 236, alpha: 80)
        var caretColor = Color(rgb: 0x3390EC)
    }

    /// Text and configuration, under a lock, reached only through `editState`.
    private let lockedEditState: Locked<EditState>
    /// Text and configuration (any thread); out of a draw function's reach like all node state
    /// (checked).
    var editState: Locked<EditState> {
        DrawScope.check(self)
        return lockedEditState
    }

    // UI-thread editing state.
    /// The selection; empty for a caret. (main thread only)
    var selection = 0..<0
    /// Where a shift-extended selection is anchored. (main thread only)
    var anchor = 0
    /// The input method's composition and its cursor (UTF-16 offset into it). (main thread only)
    var marked: (text: String, cursor: Int)?
    /// How much of the composition from its cursor the input method selects (UTF-16). (main thread only)
    var markedSelection = 0
    /// A composition was shown since the last text taken: the commit that ends it is an undo step
    /// of its own. (main thread only)
    var composedSinceCommit = false
    /// The frame (its time) of the last commit, while text taken in that frame continues it. (main thread only)
    var commitFrame: Double?
    /// The x a run of Up/Down keys keeps to. (main thread only)
    var goalX: Double?
    /// Undo and redo steps. (main thread only)
    var undoStack: [EditSnapshot] = []
    var redoStack: [EditSnapshot] = []
    /// True while consecutive typing merges into one undo step. (main thread only)
    var typingCoalesces = false
    /// The last click, for double and triple clicks. (main thread only)
    var lastClick: (time: Double, point: Point, count: Int)?
    /// The granularity a drag extends by (1 character, 2 words, 3 lines). (main thread only)
    var dragGranularity = 1
    /// When the caret last moved: it shows solid for a moment, then blinks. (main thread only)
    var caretEpoch = 0.0
    var frameTime = 0.0
    /// How far the text is scrolled up inside the field, in points. (main thread only)
    var scrollOffset = 0.0
    /// Whether the caret's layer stands where the caret is (false while the lines around it are being
    /// laid out), so blinking shows it only then. (main thread only)
    var caretIsPlaced = false
    /// The view last asked of a layout (text version, caret, scroll), so one view is asked for once.
    /// (main thread only)
    var requestedView: (version: Int, caret: Int, scroll: Double)?

    /// What the field shows and where, written on the UI thread and by its measuring on any thread.
    struct LinesState {
        /// What the field shows (its text with the composition, or the placeholder), and a count of its
        /// changes.
        var shown = AttributedText()
        var shownVersion = 0
        /// Where the UI thread wants the view: the caret's position in `shown`, the scroll offset.
        var caret = 0
        var scrollOffset = 0.0
        /// The line index of `shown` (of an earlier text until it is measured again), the lines laid out
        /// around the view, which lines they are, and the version of `shown` both are for.
        var index: TextLineIndex?
        var window: TextLayout?
        var windowLines = 0..<0
        var measuredVersion = -1
    }

    /// Guarded by its lock; reached through `lines`.
    private let lockedLines = Locked(LinesState())
    /// What the field shows and where (any thread); out of a draw function's reach.
    var lines: Locked<LinesState> {
        DrawScope.check(self)
        return lockedLines
    }

    /// Called after each change of the text by editing. - Thread: main
    @MainActor
    public var onChange: ((String) -> Void)?
    /// Called with the text when the user submits it (Enter, by default). - Thread: main
    @MainActor
    public var onSubmit: ((String) -> Void)?

    /// Told when the field gains (true) or loses (false) the focus: a search field that holds it shows
    /// its outline. (main thread only)
    @MainActor var focusChanged: ((Bool) -> Void)?
    /// The node the host's focus ring goes around while the field has the focus (a search field
    /// around it); nil: the field itself. Held weakly. (main thread only)
    @MainActor weak var focusRingTarget: Node?
    /// True while the field may not take the focus (its search field is disabled). (main thread only)
    @MainActor var refusesFocus = false

    /// Draws the lines laid out around the view.
    let textNode = TextLinesNode()
    let caretNode = Node()
    /// Selection rectangles, reused. (main thread only)
    var selectionNodes: [Node] = []

    /// A field showing `text` in `attributes`, with a `placeholder` while it is empty. - Thread: any
    public init(text: String = "", attributes: TextAttributes = TextAttributes(), placeholder: String = "") {
        lockedEditState = Locked(EditState(text: AttributedText.sanitized(text), attributes: attributes, placeholder: placeholder))
        super.init()
        isUserInteractionEnabled = true
        clipsToBounds = true
        cursor = .iBeam
        caretNode.isHidden = true
        // The few lines around the view draw in the frame that changed them, on the UI thread:
        // cheaper than a worker's round trip, so a keystroke shows in the frame that takes it.
        textNode.displaysAsynchronously = false
        addSubnode(textNode)
        addSubnode(caretNode)
        let initial = editState.withLock { $0.text.utf16.count }
        selection = initial..<initial
        anchor = initial
        let shown = displayedText(marked: nil).text
        lines.withLock { $0.shown = shown }
    }

    // MARK: - Properties (any thread)

    /// The text. Setting it (from any thread) replaces the text, puts the caret at its end and clears
    /// the undo history; it does not call `onChange`. - Thread: any (the caret is placed on the UI
    /// thread's next frame when set elsewhere)
    public var text: String {
        get { editState.withLock { $0.text } }
        set {
            let clean = editState.withLock { state -> String in
                state.text = state.isMultiline ? AttributedText.sanitized(newValue) : Self.singleLine(newValue)
                return state.text
            }
            runtime.mainQueue.performOrEnqueue { self.textWasReplaced(length: clean.utf16.count) }
        }
    }

    @MainActor
    private func textWasReplaced(length: Int) {
        marked = nil
        markedSelection = 0
        composedSinceCommit = false
        undoStack = []
        redoStack = []
        selection = length..<length
        anchor = length
        refreshDisplayedText()
        updateCaretAndSelection()
    }

    /// The style of the text. - Thread: any
    public var textAttributes: TextAttributes {
        get { editState.withLock { $0.attributes } }
        set { editState.withLock { $0.attributes = newValue }; refreshDisplayedTextAnywhere() }
    }

    /// Shown while the text is empty. - Thread: any
    public var placeholder: String {
        get { editState.withLock { $0.placeholder } }
        set { editState.withLock { $0.placeholder = newValue }; refreshDisplayedTextAnywhere() }
    }

    /// The placeholder's style (the text's font in a grey by default). - Thread: any
    public var placeholderAttributes: TextAttributes {
        get { editState.withLock { $0.placeholderAttributes } }
        set { editState.withLock { $0.placeholderAttributes = newValue }; refreshDisplayedTextAnywhere() }
    }

    /// False for a single-line field: newlines typed or pasted become spaces. - Thread: any
    public var isMultiline: Bool {
        get { editState.withLock { $0.isMultiline } }
        set { editState.withLock { $0.isMultiline = newValue }; setNeedsLayout() }
    }

    /// Whether the field's lines (those around the view: its visible lines and one more on each
    /// side) are drawn on the UI thread in the frame that changed them (true, the default), or on a
    /// display worker like other nodes' contents. On the UI thread a keystroke reaches the screen in
    /// the frame that takes it, at the cost of drawing those lines there (`gallery --bench latency`
    /// measures both). - Thread: any
    public var drawsLinesOnUIThread: Bool {
        get { !textNode.displaysAsynchronously }
        set { textNode.displaysAsynchronously = !newValue }
    }

    /// The field grows with its text up to this many lines, then scrolls (at least 1). - Thread: any
    public var maximumVisibleLines: Int {
        get { editState.withLock { $0.maximumVisibleLines } }
        set { editState.withLock { $0.maximumVisibleLines = max(1, newValue) }; setNeedsLayout() }
    }

    /// What Enter does; Shift+Enter does the other. - Thread: any
    public var returnKeyBehavior: ReturnKeyBehavior {
        get { editState.withLock { $0.returnKeyBehavior } }
        set { editState.withLock { $0.returnKeyBehavior = newValue } }
    }

    /// The caret's colour. - Thread: any
    public var caretColor: Color {
        get { editState.withLock { $0.caretColor } }
        set { editState.withLock { $0.caretColor = newValue } }
    }

    /// The selection's colour (drawn behind the text). - Thread: any
    public var selectionColor: Color {
        get { editState.withLock { $0.selectionColor } }
        set { editState.withLock { $0.selectionColor = newValue } }
    }

    /// The selection as UTF-16 offsets into `text` (empty: the caret). Setting it snaps to grapheme
    /// boundaries. - Thread: main
    @MainActor
    public var selectedRange: Range<Int> {
        get {
            UIThread.precondition("EditableTextNode.selectedRange")
            return selection
        }
        set {
            UIThread.precondition("EditableTextNode.selectedRange")
            let text = self.text
            let lower = Self.snap(newValue.lowerBound, in: text), upper = Self.snap(newValue.upperBound, in: text)
            setSelection(lower..<max(lower, upper), anchor: lower)
        }
    }

    /// The input method's composition in progress, if any, and its cursor. - Thread: main
    @MainActor
    public var markedText: String? {
        UIThread.precondition("EditableTextNode.markedText")
        return marked?.text
    }

    /// The caret's frame in the node's coordinates (where its layer is). - Thread: main
    @MainActor
    public var caretFrame: Rect {
        UIThread.precondition("EditableTextNode.caretFrame")
        return caretNode.frame
    }

    /// True while the caret's layer is shown (focused, no selection, in the blink's on phase).
    /// - Thread: main
    @MainActor
    public var isCaretShown: Bool {
        UIThread.precondition("EditableTextNode.isCaretShown")
        return !caretNode.isHidden
    }

    /// The layout of the lines the field has laid out around what it shows (all of them for a short
    /// text): lines of the text it shows (the text with any composition, or the placeholder), each
    /// where it is in the whole text, in text coordinates (scrolled up by the field's scroll offset);
    /// nil while the text is being measured.
    /// - Thread: any
    public var shownTextLayout: TextLayout? {
        lines.withLock { $0.measuredVersion == $0.shownVersion ? $0.window : nil }
    }

    // MARK: - Focus

    public override var canBecomeFocused: Bool { !refusesFocus }

    public override func didBecomeFocused() {
        // The blink starts now: the host's time, not the last frame this field saw while focused.
        if let host = nodeHost { frameTime = host.time }
        caretEpoch = frameTime
        updateCaretAndSelection()
        focusChanged?(true)
    }

    public override func didResignFocus() {
        if let marked, !marked.text.isEmpty { _ = takeText(marked.text) }
        marked = nil
        markedSelection = 0
        refreshDisplayedText()
        updateCaretAndSelection()
        focusChanged?(false)
    }

    public override var textInputCaret: Rect? {
        guard isNodeLoaded else { return Rect(x: 0, y: 0, width: 1, height: 16) }
        let caret = caretNode.frame
        return Rect(x: caret.minX, y: caret.minY, width: max(1, caret.width), height: caret.height)
    }

    /// Seconds the caret blinks after it last moved (typing, a click, an arrow key, the focus
    /// coming); then it stays on, solid, and the field needs no frame until the next change — an app
    /// left with a field focused runs nothing at rest. 10 s, as the desktop's usual setting
    /// (`gtk-cursor-blink-timeout`); nil blinks for as long as the field has the focus.
    /// - Thread: main
    @MainActor public static var caretBlinkTimeout: Double? = 10

    /// The caret's next change of visibility (it blinks only while it is a caret, not a selection,
    /// and only for `caretBlinkTimeout` after it last moved).
    public override func nextFocusFrameTime(after time: Double) -> Double? {
        guard selection.isEmpty else { return nil }
        let elapsed = max(0, time - caretEpoch)
        let next = caretEpoch + 0.5 * ((elapsed / 0.5).rounded(.down) + 1)
        if let timeout = Self.caretBlinkTimeout, timeout.isFinite, next >= caretEpoch + max(0, timeout) {
            // The blink's end: one frame then, to show the caret for good (if it was off), and none after.
            let end = caretEpoch + max(0, timeout)
            return time < end ? end : nil
        }
        return next
    }

    /// Blinks the caret: solid for half a second after it moves, then on and off every half second,
    /// for `caretBlinkTimeout`; then solid.
    public override func focusFrame(at time: Double) {
        frameTime = time
        guard selection.isEmpty else { return }
        let phase = (time - caretEpoch).truncatingRemainder(dividingBy: 1.0)
        // The input method's selection in its composition shows instead of the caret.
        let imeSelects = markedSelection > 0 && !(marked?.text.isEmpty ?? true)
        let blinking = Self.caretBlinkTimeout.map { !$0.isFinite || time - caretEpoch < max(0, $0) } ?? true
        let hidden = !caretIsPlaced || imeSelects || (blinking && time - caretEpoch > 0.5 && phase >= 0.5)
        if caretNode.isHidden != hidden { caretNode.isHidden = hidden }
    }

    @MainActor
    var isFocused: Bool { focusHost?.focusedNode === self }

    // MARK: - Events (see EditableTextNode+Editing.swift)

    public override func insertText(_ text: String) -> Bool { takeText(text) }
    public override func setMarkedText(_ text: String, cursor: Int) -> Bool { takeMarkedText(text, cursor: cursor) }
    public override func setMarkedText(_ text: String, cursor: Int, selected: Int) -> Bool {
        takeMarkedText(text, cursor: cursor, selected: selected)
    }
    public override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool { takeKey(key, modifiers: modifiers) }
    public override func touchesBegan(_ touch: Touch) { pointerWentDown(touch) }
    public override func touchesMoved(_ touch: Touch) { pointerMoved(touch) }

    // MARK: - Displayed text

    /// The text as shown: the composition inserted at the selection (underlined), or the placeholder.
    @MainActor
    func displayedText() -> (text: AttributedText, isPlaceholder: Bool) { displayedText(marked: marked) }

    /// The text as shown with the composition `marked` (nil: none) at the selection. - Thread: any
    /// for `marked: nil`; the selection it reads is the UI thread's.
    private func displayedText(marked: (text: String, cursor: Int)?) -> (text: AttributedText, isPlaceholder: Bool) {
        let shown = displayedTextAsSet(marked: marked)
        return (inAppearance(shown.text), shown.isPlaceholder)
    }

    /// `text` as the current appearance shows it: fonts at the text scale, runs with a theme colour
    /// (`TextAttributes.themeColor`) in that colour. Records the field's dependency on both.
    private func inAppearance(_ text: AttributedText) -> AttributedText {
        dependOnAppearance([.textScale, .colors])
        let themed = text.runs.contains { $0.attributes.themeColor != nil }
        let (appearance, theme, generation) = runtime.appearanceState.withLock { ($0.appearance, $0.theme, $0.generation) }
        let key = TextNode.AppearanceKey(textScale: appearance.textScale, generation: themed ? generation : nil,
                                         theme: themed ? (theme, appearance) : nil)
        return TextNode.shown(text, TextLayoutOptions(), in: key).0
    }

    /// The text shows again in the new appearance (measured again for a new text scale).
    /// - Thread: main
    public override func appearanceDidChange(_ change: AppearanceChange) {
        if !change.isDisjoint(with: [.textScale, .colors]) {
            refreshDisplayedText()
            if change.contains(.textScale) { setNeedsLayout() }
        }
        super.appearanceDidChange(change)
    }

    private func displayedTextAsSet(marked: (text: String, cursor: Int)?) -> (text: AttributedText, isPlaceholder: Bool) {
        let state = editState.withLock { $0 }
        if let marked, !marked.text.isEmpty {
            let utf16 = state.text.utf16
            let lower = utf16.index(utf16.startIndex, offsetBy: min(selection.lowerBound, utf16.count))
            let upper = utf16.index(utf16.startIndex, offsetBy: min(selection.upperBound, utf16.count))
            var underlined = state.attributes
            underlined.isUnderlined = true
            var text = AttributedText(String(state.text[..<lower]), attributes: state.attributes)
            text.append(marked.text, attributes: underlined)
            text.append(String(state.text[upper...]), attributes: state.attributes)
            return (text, false)
        }
        if state.text.isEmpty {
            var attributes = state.placeholderAttributes
            attributes.font = state.attributes.font
            // An empty placeholder still gives the field a line's height.
            return (AttributedText(state.placeholder.isEmpty ? " " : state.placeholder, attributes: attributes), true)
        }
        // The text was sanitized when it was set or edited.
        return (AttributedText(sanitized: state.text, attributes: state.attributes), false)
    }

    func refreshDisplayedTextAnywhere() {
        runtime.mainQueue.performOrEnqueue { self.refreshDisplayedText() }
    }

    /// Gives the lines what to show; they are measured off this thread.
    @MainActor
    func refreshDisplayedText() {
        let shown = displayedText()
        let replaced = lines.withLock { state -> AttributedText in
            defer {
                state.shown = shown.text
                state.shownVersion += 1
            }
            return state.shown
        }
        withExtendedLifetime(replaced) {}  // the old text is let go here, after unlocking
        setNeedsLayout()
    }

    /// The caret's offset and the selected range in the displayed text (the composition shifts them).
    func displayedPositions(isPlaceholder: Bool) -> (caret: Int, selection: Range<Int>) {
        if isPlaceholder { return (0, 0..<0) }
        if let marked, !marked.text.isEmpty {
            let length = marked.text.utf16.count
            let cursor = min(marked.cursor, length)
            let caret = selection.lowerBound + cursor
            return (caret, caret..<(caret + min(markedSelection, length - cursor)))
        }
        let caret = selection.lowerBound == anchor ? selection.upperBound : selection.lowerBound
        return (caret, selection)
    }

    // MARK: - Layout (see EditableTextNode+Lines.swift)

    public override func calculateSizeThatFits(_ constrainedSize: Size) -> Size { measureLines(constrainedSize) }

    public override func layout() {
        super.layout()
        updateCaretAndSelection()
    }

    // MARK: - Helpers

    /// `offset` moved down to the nearest grapheme boundary of `text`, from the units around it.
    static func snap(_ offset: Int, in text: String) -> Int {
        TextBoundaries(text).graphemeBoundary(atOrBefore: offset)
    }

    /// `text` with its newlines as spaces, sanitized.
    static func singleLine(_ text: String) -> String {
        AttributedText.sanitized(String(text.map { $0.isNewline ? " " : $0 }))
    }
}

/// One state of the text for undo.
/// - Thread: main
struct EditSnapshot {
    var text: String
    var selection: Range<Int>
}
