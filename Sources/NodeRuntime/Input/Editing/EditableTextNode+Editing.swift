import Compositor

// Editing: keys, text input and the input method's composition, clicks and drags, the clipboard, and
// undo. Every member runs on the UI thread, where the host delivers events to the focused node.

@MainActor
extension EditableTextNode {
    // MARK: - Text input

    func takeText(_ text: String) -> Bool {
        // An input method's commit (what it composed) is an undo step of its own.
        let committed = composedSinceCommit || !(marked?.text.isEmpty ?? true)
        composedSinceCommit = false
        marked = nil
        markedSelection = 0
        if committed {
            replaceSelection(with: text, coalescing: false)
            commitFrame = frameTime
        } else if commitFrame == frameTime {
            // The rest of a commit that SDL cut into pieces (32 bytes at most), read with it: the
            // same undo step.
            typingCoalesces = true
            replaceSelection(with: text, coalescing: true)
        } else {
            commitFrame = nil
            replaceSelection(with: text, coalescing: true)
        }
        // Typing after a commit is a step of its own.
        if commitFrame != nil { typingCoalesces = false }
        return true
    }

    func takeMarkedText(_ text: String, cursor: Int, selected: Int = 0) -> Bool {
        if text.isEmpty {
            marked = nil
            markedSelection = 0
        } else {
            // The cursor and selection come in Unicode scalars; positions here are UTF-16.
            let scalars = text.unicodeScalars
            let index = scalars.index(scalars.startIndex, offsetBy: min(max(0, cursor), scalars.count))
            let end = scalars.index(index, offsetBy: min(max(0, selected), scalars.distance(from: index, to: scalars.endIndex)))
            marked = (text, text.utf16.distance(from: text.startIndex, to: index))
            markedSelection = text.utf16.distance(from: index, to: end)
            composedSinceCommit = true
        }
        refreshDisplayedText()
        caretMoved()
        return true
    }

    // MARK: - Keys

    func takeKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        let shift = modifiers.contains(.shift)
        let control = modifiers.contains(.control) || modifiers.contains(.command)
        if marked != nil {
            // The input method owns keys while it composes; Escape drops the composition.
            if key == .escape { _ = takeMarkedText("", cursor: 0) }
            // The app's shortcuts (Ctrl, Alt or Super with a character: a menu's Quit, Save) still
            // reach it; the field's own editing shortcuts wait for the composition to end.
            if case let .character(character) = key, control || modifiers.contains(.alt),
               !Self.editingShortcuts.contains(Character(character.lowercased())) || modifiers.contains(.alt) {
                return false
            }
            return true
        }
        switch key {
        case .character(let character) where control:
            return shortcut(Character(character.lowercased()), shift: shift)
        case .character, .space:
            return !modifiers.contains(.alt) || control  // the text arrives as text input
        case .left, .right:
            let forward = (key == .right) != isRightToLeft(at: caretOffset)
            moveCaret(to: control ? wordBoundary(forward: forward) : graphemeNeighbour(forward: forward,
                                                                                         collapsing: !shift),
                      extending: shift)
        case .up, .down:
            moveVertically(down: key == .down, extending: shift)
        case .home:
            moveCaret(to: control ? 0 : lineRange(at: caretOffset).lowerBound, extending: shift)
        case .end:
            moveCaret(to: control ? text.utf16.count : lineEnd(at: caretOffset), extending: shift)
        case .backspace, .delete:
            if selection.isEmpty {
                let forward = key == .delete
                let target = control ? wordBoundary(forward: forward) : graphemeNeighbour(forward: forward, collapsing: false)
                selection = min(target, caretOffset)..<max(target, caretOffset)
            }
            replaceSelection(with: "", coalescing: false)
        case .enter:
            let submits = (returnKeyBehavior == .submit) != shift
            if submits || !isMultiline {
                onSubmit?(text)
            } else {
                replaceSelection(with: "\n", coalescing: false)
            }
        case .escape, .tab:
            return false
        default:
            return false
        }
        return true
    }

    /// The characters of the field's own shortcuts (with Ctrl): select all, copy, cut, paste, undo, redo.
    private static let editingShortcuts: Set<Character> = ["a", "c", "x", "v", "z", "y"]

    private func shortcut(_ character: Character, shift: Bool) -> Bool {
        switch character {
        case "a": setSelection(0..<text.utf16.count, anchor: 0)
        case "c": copySelection()
        case "x":
            copySelection()
            if !selection.isEmpty { replaceSelection(with: "", coalescing: false) }
        case "v":
            if let pasted = clipboardText(), !pasted.isEmpty { replaceSelection(with: pasted, coalescing: false) }
        case "z": if shift { redo() } else { undo() }
        case "y": redo()
        default: return false
        }
        return true
    }

    // MARK: - Undo

    /// Goes back one step of editing. - Thread: main
    @MainActor
    public func undo() {
        UIThread.precondition("EditableTextNode.undo")
        guard let step = undoStack.popLast() else { return }
        redoStack.append(EditSnapshot(text: text, selection: selection))
        restore(step)
    }

    /// Goes forward one undone step. - Thread: main
    @MainActor
    public func redo() {
        UIThread.precondition("EditableTextNode.redo")
        guard let step = redoStack.popLast() else { return }
        undoStack.append(EditSnapshot(text: text, selection: selection))
        restore(step)
    }

    private func restore(_ step: EditSnapshot) {
        editState.withLock { $0.text = step.text }
        typingCoalesces = false
        setSelection(step.selection, anchor: step.selection.lowerBound, refreshing: true)
        onChange?(step.text)
    }

    // MARK: - Changing the text

    /// Replaces the selection with `insertion` (sanitized; newlines become spaces in a single-line
    /// field), leaving the caret after it. Typing (`coalescing`) merges into one undo step.
    func replaceSelection(with insertion: String, coalescing: Bool) {
        let clean = isMultiline ? AttributedText.sanitized(insertion) : Self.singleLine(insertion)
        #if DEBUG
        Self.willEditForTesting?(self)
        #endif
        // Read, edit and write the text in one step under its lock: a text set from another thread
        // meanwhile is either the text edited here or replaces the edit, never lost under it.
        let selected = selection
        let edit = editState.withLock { state -> (before: String, after: String, lower: Int)? in
            let before = state.text
            let utf16 = before.utf16
            let lowerOffset = min(selected.lowerBound, utf16.count)
            let lower = utf16.index(utf16.startIndex, offsetBy: lowerOffset)
            let upper = utf16.index(utf16.startIndex, offsetBy: min(selected.upperBound, utf16.count))
            guard !(clean.isEmpty && lower == upper) else { return nil }
            var after = before
            after.replaceSubrange(lower..<upper, with: clean)
            state.text = after
            return (before, after, lowerOffset)
        }
        guard let edit else { return }
        if !(coalescing && typingCoalesces) {
            undoStack.append(EditSnapshot(text: edit.before, selection: selected))
            if undoStack.count > 200 { undoStack.removeFirst() }
        }
        typingCoalesces = coalescing && !clean.contains(" ")
        redoStack = []
        let caret = edit.lower + clean.utf16.count
        setSelection(caret..<caret, anchor: caret, refreshing: true)
        onChange?(edit.after)
    }

    #if DEBUG
    /// Called as an edit starts, before the text is read: a test sets the text there, as another
    /// thread could. Debug builds only.
    nonisolated(unsafe) static var willEditForTesting: ((EditableTextNode) -> Void)?
    #endif

    // MARK: - Selection and caret

    /// The end of the selection that moves (the caret when the selection is empty).
    var caretOffset: Int { selection.lowerBound == anchor ? selection.upperBound : selection.lowerBound }

    func setSelection(_ range: Range<Int>, anchor: Int, refreshing: Bool = false) {
        selection = range
        self.anchor = anchor
        if refreshing { refreshDisplayedText() }
        caretMoved()
    }

    private func caretMoved() {
        caretEpoch = frameTime
        updateCaretAndSelection()
    }

    /// Moves the caret to `offset`, or extends the selection from its anchor to it.
    func moveCaret(to offset: Int, extending: Bool) {
        typingCoalesces = false
        goalX = nil
        if extending {
            setSelection(min(anchor, offset)..<max(anchor, offset), anchor: anchor)
        } else {
            setSelection(offset..<offset, anchor: offset)
        }
    }

    /// The next or previous grapheme boundary from the caret; with a selection and `collapsing`, the
    /// selection's end on that side. Reads a few dozen units around the caret, whatever the text's
    /// length (`TextBoundaries`).
    private func graphemeNeighbour(forward: Bool, collapsing: Bool) -> Int {
        if collapsing && !selection.isEmpty { return forward ? selection.upperBound : selection.lowerBound }
        let boundaries = TextBoundaries(text)
        return forward ? boundaries.graphemeBoundary(after: caretOffset) : boundaries.graphemeBoundary(before: caretOffset)
    }

    /// The end of the next word (forward) or the start of the word before the caret, from the words of
    /// a stretch around the caret.
    private func wordBoundary(forward: Bool) -> Int {
        let boundaries = TextBoundaries(text)
        return forward ? boundaries.wordEnd(after: caretOffset) : boundaries.wordStart(before: caretOffset)
    }

    private func lineRange(at offset: Int) -> Range<Int> {
        lineRange(containing: offset) ?? 0..<text.utf16.count
    }

    /// The end of the line at `offset`, before the spaces that end a wrapped line.
    private func lineEnd(at offset: Int) -> Int {
        let range = lineRange(at: offset)
        let text = self.text
        let utf16 = text.utf16
        let length = utf16.count
        var end = min(range.upperBound, length)
        guard end < length, end > range.lowerBound else { return end }
        var index = utf16.index(utf16.startIndex, offsetBy: end)
        while end > range.lowerBound {
            let previous = utf16.index(before: index)
            guard utf16[previous] == 0x20 else { break }
            index = previous
            end -= 1
        }
        return end
    }

    private func moveVertically(down: Bool, extending: Bool) {
        guard let (target, x) = verticalNeighbour(of: caretOffset, down: down, goal: goalX) else { return }
        moveCaret(to: target, extending: extending)
        goalX = x
    }

    // MARK: - Pointer

    func pointerWentDown(_ touch: Touch) {
        guard touch.button == .primary else { return }
        if let marked, !marked.text.isEmpty { _ = takeText(marked.text) }
        let offset = offset(at: touch.location)
        // Clicks close in time and place count up: 2 selects a word, 3 a line. The platform's click
        // count is used when it reports one (SDL does); else time and distance decide.
        var count = 1
        if touch.clickCount > 1 {
            count = (touch.clickCount - 1) % 3 + 1
        } else if let last = lastClick, touch.timestamp - last.time < 0.45,
                  abs(last.point.x - touch.location.x) < 4, abs(last.point.y - touch.location.y) < 4 {
            count = last.count % 3 + 1
        }
        lastClick = (touch.timestamp, touch.location, count)
        dragGranularity = count
        let shift = focusHost?.isShiftDown ?? false
        switch count {
        case 2: select(unitAround: offset, granularity: 2)
        case 3: select(unitAround: offset, granularity: 3)
        default: moveCaret(to: offset, extending: shift)
        }
    }

    func pointerMoved(_ touch: Touch) {
        guard touch.button == .primary else { return }
        let offset = offset(at: touch.location)
        switch dragGranularity {
        case 1: moveCaret(to: offset, extending: true)
        default:
            let unit = unitRange(around: offset, granularity: dragGranularity)
            let anchorUnit = unitRange(around: anchor, granularity: dragGranularity)
            let range = min(unit.lowerBound, anchorUnit.lowerBound)..<max(unit.upperBound, anchorUnit.upperBound)
            setSelection(range, anchor: anchorUnit.lowerBound <= unit.lowerBound ? range.lowerBound : range.upperBound)
        }
    }

    /// The text position under a point in window coordinates.
    private func offset(at windowPoint: Point) -> Int {
        let text = self.text
        guard !text.isEmpty, let offset = offset(atFieldPoint: convertFromRoot(windowPoint)) else { return 0 }
        return Self.snap(offset, in: text)
    }

    private func select(unitAround offset: Int, granularity: Int) {
        let range = unitRange(around: offset, granularity: granularity)
        typingCoalesces = false
        setSelection(range, anchor: range.lowerBound)
    }

    /// The word (2) or line (3) around `offset`.
    private func unitRange(around offset: Int, granularity: Int) -> Range<Int> {
        if granularity == 3 { return lineRange(at: offset) }
        return TextBoundaries(text).segment(around: offset)
    }

    // MARK: - Clipboard

    private func copySelection() {
        guard !selection.isEmpty else { return }
        let utf16 = text.utf16
        let lower = utf16.index(utf16.startIndex, offsetBy: selection.lowerBound)
        let upper = utf16.index(utf16.startIndex, offsetBy: selection.upperBound)
        let copied = String(text[lower..<upper])
        if let platform = focusHost?.compositor.textInputPlatform {
            platform.setClipboardText(copied)
        } else {
            Self.localClipboard = copied
        }
    }

    private func clipboardText() -> String? {
        if let platform = focusHost?.compositor.textInputPlatform { return platform.clipboardText() }
        return Self.localClipboard
    }

    /// The clipboard when no platform offers one (a host without SDL). (main thread only)
    nonisolated(unsafe) static var localClipboard: String?
}
