public import Compositor

/// A selectable text's selection: the range, where a drag started, and the rectangles that show it.
/// - Thread: main (a TextNode's `selection`)
struct TextSelectionState {
    /// The selected positions (UTF-16 offsets of the text's string); nil: none.
    var range: Range<Int>?
    /// The end the keyboard moves (the other end stays); the range's upper bound unless a drag or a
    /// Shift+Left started from the other side.
    var focus: Int?
    /// Where the pointer went down, while a drag selects; and how it selects (1 characters, 2 words,
    /// 3 lines) with the range the press chose first.
    var dragAnchor: Int?
    var dragUnit = 1
    var dragInitial: Range<Int>?
    /// Whether the drag has moved past where it went down.
    var dragMoved = false
    var dragStart: Point = .zero
    /// The node holding one plain rectangle per stretch of selected text, over the text.
    var highlight: Node?
}

// Selecting text in a TextNode (`isSelectable`): a press and drag selects characters (a double-click
// words, a triple-click lines), Shift+press extends; with the focus on the node, Shift+arrows,
// Shift+Home/End extend by characters and to the line's ends, Ctrl+A selects all, Ctrl+C copies,
// Escape ends the selection. The secondary click offers Copy and Select All while there is a
// selection (else the menus of the nodes around it). The selection shows as translucent accent
// rectangles over the text; screen readers read it through the text interface.
extension TextNode {
    /// The selected range of the text (UTF-16 offsets of `attributedText.string`), kept inside the
    /// text; nil when nothing is selected. Setting it selects that range (clamped; an empty range
    /// selects nothing). - Thread: main
    @MainActor
    public var selectedRange: Range<Int>? {
        get {
            guard let range = selection.range else { return nil }
            let length = attributedText.string.utf16.count
            let clamped = min(range.lowerBound, length)..<min(range.upperBound, length)
            return clamped.isEmpty ? nil : clamped
        }
        set { setSelection(newValue, focus: newValue?.upperBound) }
    }

    /// The selected text; nil when nothing is selected. - Thread: main
    @MainActor
    public var selectedText: String? {
        guard let range = selectedRange else { return nil }
        let utf16 = attributedText.string.utf16
        guard let lower = utf16.index(utf16.startIndex, offsetBy: range.lowerBound, limitedBy: utf16.endIndex),
              let upper = utf16.index(utf16.startIndex, offsetBy: range.upperBound, limitedBy: utf16.endIndex) else { return nil }
        return String(utf16[lower..<upper]) ?? String(decoding: Array(utf16[lower..<upper]), as: UTF16.self)
    }

    /// Selects the whole text. - Thread: main
    @MainActor
    public func selectAll() {
        let length = attributedText.string.utf16.count
        setSelection(0..<length, focus: length)
    }

    /// Puts the selected text on the clipboard (the window's); false when nothing is selected or the
    /// node is in no window. - Thread: main
    @MainActor
    @discardableResult
    public func copySelection() -> Bool {
        guard let text = selectedText, let platform = nodeHost?.compositor.textInputPlatform else { return false }
        platform.setClipboardText(text)
        return true
    }

    @MainActor
    func setSelection(_ range: Range<Int>?, focus: Int?) {
        let length = attributedText.string.utf16.count
        var range = range.map { max(0, min($0.lowerBound, length))..<max(0, min($0.upperBound, length)) }
        if range?.isEmpty == true { range = nil }
        guard range != selection.range else { return }
        selection.range = range
        selection.focus = range.map { min(max(focus ?? $0.upperBound, $0.lowerBound), $0.upperBound) }
        updateSelectionHighlight()
    }

    /// Shows the selection: a rectangle per stretch of selected text, in the accent colour at a
    /// third of its opacity, over the text.
    @MainActor
    func updateSelectionHighlight() {
        let rects: [Rect]
        if let range = selectedRange, let layout = shownLayout {
            rects = layout.selectionRects(for: range, inWidth: bounds.width > 0 ? bounds.width : layout.size.width)
        } else {
            rects = []
        }
        if rects.isEmpty {
            selection.highlight?.removeFromSupernode()
            selection.highlight = nil
            return
        }
        let highlight: Node
        if let existing = selection.highlight {
            highlight = existing
        } else {
            highlight = Node()
            highlight.debugName = "text selection"
            highlight.isUserInteractionEnabled = false
            highlight.accessibilityElementsHidden = true
            addSubnode(highlight)
            selection.highlight = highlight
        }
        highlight.frame = Rect(origin: .zero, size: bounds.size)
        let color = themeColor(.accent).withAlphaMultiplied(by: 0.35)
        var pieces = highlight.subnodes
        while pieces.count > rects.count { pieces.removeLast().removeFromSupernode() }
        while pieces.count < rects.count {
            let piece = Node()
            piece.isUserInteractionEnabled = false
            highlight.addSubnode(piece)
            pieces.append(piece)
        }
        for (piece, rect) in zip(pieces, rects) {
            piece.frame = rect
            piece.backgroundColor = color
        }
    }

    // MARK: Pointer

    /// The position under `touch` (node coordinates), from the layout shown.
    @MainActor
    private func offset(at touch: Touch) -> Int? {
        guard let layout = shownLayout else { return nil }
        let point = convertFromRoot(touch.location)
        return layout.offset(closestTo: point, inWidth: bounds.width > 0 ? bounds.width : layout.size.width)
    }

    /// The unit a press of `clicks` selects around `offset`: the word (two) or the line (three).
    @MainActor
    private func unit(around offset: Int, clicks: Int) -> Range<Int> {
        let text = attributedText.string
        switch clicks {
        case 2: return TextBoundaries(text).segment(around: offset)
        case 3...:
            guard let layout = shownLayout else { return offset..<offset }
            return layout.offsetRange(ofLine: layout.lineIndex(forOffset: offset))
        default: return offset..<offset
        }
    }

    @MainActor
    func selectionTouchBegan(_ touch: Touch) {
        guard touch.button == .primary, let offset = offset(at: touch) else { return }
        selection.dragMoved = false
        selection.dragStart = touch.location
        let clicks = max(1, touch.clickCount)
        selection.dragUnit = min(clicks, 3)
        if clicks == 1, nodeHost?.isShiftDown == true, let range = selectedRange {
            // Shift+press extends from the end the keyboard would not move.
            let anchor = selection.focus == range.lowerBound ? range.upperBound : range.lowerBound
            selection.dragAnchor = anchor
            selection.dragInitial = anchor..<anchor
            setSelection(min(anchor, offset)..<max(anchor, offset), focus: offset)
            selection.dragMoved = true
            return
        }
        let initial = unit(around: offset, clicks: clicks)
        selection.dragAnchor = offset
        selection.dragInitial = initial
        setSelection(initial, focus: initial.upperBound)
    }

    /// True once the drag selects (it moved past a few points).
    @MainActor
    func selectionTouchMoved(_ touch: Touch) -> Bool {
        guard selection.dragAnchor != nil, let offset = offset(at: touch), let initial = selection.dragInitial else { return false }
        if !selection.dragMoved {
            let dx = touch.location.x - selection.dragStart.x, dy = touch.location.y - selection.dragStart.y
            guard dx * dx + dy * dy >= 9 || selection.dragUnit > 1 else { return false }
            selection.dragMoved = true
        }
        // Whole units from the one first chosen to the one under the pointer.
        let current = selection.dragUnit > 1 ? unit(around: offset, clicks: selection.dragUnit) : offset..<offset
        let lower = min(initial.lowerBound, current.lowerBound), upper = max(initial.upperBound, current.upperBound)
        setSelection(lower..<upper, focus: current.lowerBound < initial.lowerBound ? lower : upper)
        return true
    }

    @MainActor
    func selectionTouchEnded(_ touch: Touch) {
        if selection.dragAnchor != nil, !selection.dragMoved, selection.dragUnit == 1 { setSelection(nil, focus: nil) }
        selection.dragAnchor = nil
    }

    // MARK: Keys

    /// The keys of the selection (see above); false for any other. - Thread: main
    @MainActor
    func selectionKeyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        let command = modifiers.contains(.control) || modifiers.contains(.command)
        switch key {
        case .character("c") where command, .character("C") where command:
            return copySelection()
        case .character("a") where command, .character("A") where command:
            selectAll()
            return true
        case .escape where modifiers.isEmpty:
            guard selectedRange != nil else { return false }
            setSelection(nil, focus: nil)
            return true
        case .left, .right, .home, .end:
            guard modifiers.contains(.shift) else {
                // Without Shift a selection collapses (nothing to show a caret in: it ends).
                guard selectedRange != nil, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
                setSelection(nil, focus: nil)
                return true
            }
            let text = attributedText.string
            let length = text.utf16.count
            let range = selectedRange
            let focus = selection.focus ?? range?.upperBound ?? 0
            let anchor = range.map { focus == $0.lowerBound ? $0.upperBound : $0.lowerBound } ?? focus
            var moved = focus
            let boundaries = TextBoundaries(text)
            switch key {
            case .left: moved = command ? boundaries.wordStart(before: focus) : boundaries.graphemeBoundary(before: focus)
            case .right: moved = command ? boundaries.wordEnd(after: focus) : boundaries.graphemeBoundary(after: focus)
            case .home:
                moved = command ? 0 : (shownLayout.map { $0.offsetRange(ofLine: $0.lineIndex(forOffset: focus)).lowerBound } ?? 0)
            default:
                moved = command ? length : (shownLayout.map { $0.offsetRange(ofLine: $0.lineIndex(forOffset: focus)).upperBound } ?? length)
            }
            setSelection(min(anchor, moved)..<max(anchor, moved), focus: moved)
            return true
        default:
            return false
        }
    }

    /// Copy and Select All, while there is a selection.
    @MainActor
    func selectionMenu() -> Menu? {
        guard selectedRange != nil else { return nil }
        return Menu("Text") {
            MenuItem("Copy", shortcut: KeyboardShortcut(.character("c"), .control)) { [weak self] in self?.copySelection() }
            MenuItem("Select All", shortcut: KeyboardShortcut(.character("a"), .control)) { [weak self] in self?.selectAll() }
        }
    }
}
