import Compositor

// The lines of an editable field: where each line of its text starts (kept by measuring, on any
// thread), the lines laid out around the view, and the caret and selection placed from them on the UI
// thread. The view is a window onto the whole text's lines, scrolled in points; only the lines near it
// are laid out and drawn.

extension EditableTextNode {
    /// Lines laid out above and below the view, so the caret moves a line, and the view scrolls a
    /// line, before another window is needed (which comes a frame or two later). Each line more is
    /// more to draw and upload at every keystroke.
    static let windowMargin = 1

    /// The line index and the lines laid out, when they are for the text shown now.
    struct ShownLines {
        let index: TextLineIndex
        let window: TextLayout
        let windowLines: Range<Int>
    }

    /// The lines measured for the text shown now and the field's width; nil while it is being
    /// measured. - Thread: any
    var shownLines: ShownLines? {
        let width = bounds.width
        return lines.withLock { state -> ShownLines? in
            guard state.measuredVersion == state.shownVersion, let index = state.index, let window = state.window,
                  index.width == width else { return nil }
            return ShownLines(index: index, window: window, windowLines: state.windowLines)
        }
    }

    // MARK: - Measuring (any thread)

    /// The field's size for `constrainedSize`: as wide, and as tall as its lines up to
    /// `maximumVisibleLines`; measuring keeps the line index of the text shown and lays out the lines
    /// around the view (see `calculateSizeThatFits`).
    func measureLines(_ constrainedSize: Size) -> Size {
        let width = constrainedSize.width.isNaN || constrainedSize.width < 0 ? 0 : constrainedSize.width
        // No room, no lines (every character would be a line of its own).
        guard width > 0 else { return .zero }
        let scale = contentsScale
        let visibleLines = editState.withLock { $0.maximumVisibleLines }
        let state = lines.withLock { $0 }
        // The index of the text shown, from the last one when it was made for this width.
        var index: TextLineIndex
        var options = TextLayoutOptions()
        options.recordsCaretPositions = true
        if let previous = state.index, previous.width == width, previous.scale == scale {
            index = state.measuredVersion == state.shownVersion ? previous : previous.updated(to: state.shown)
        } else {
            index = TextLineIndex.make(state.shown, width: width, options: options, scale: scale, fonts: .shared)
        }
        // The caret's line, exactly; then the lines the view will show, as the UI thread will scroll it.
        let caret = min(max(0, state.caret), index.length)
        index = index.verified(containing: caret)
        let lineHeight = index.lineHeight
        let height = max(lineHeight, min(index.height, lineHeight * Double(visibleLines)))
        let scroll = Self.scrollOffset(keeping: index.line(containing: caret), in: index, from: state.scrollOffset,
                                       viewHeight: height)
        let first = max(0, index.line(atY: scroll) - Self.windowMargin)
        let last = index.line(atY: scroll + height - 0.001) + Self.windowMargin
        index = index.verified(through: last)
        let windowLines = first..<min(index.lineCount, last + 1)
        let window: TextLayout
        if state.measuredVersion == state.shownVersion, state.index?.width == width, state.index?.scale == scale,
           state.windowLines == windowLines, let kept = state.window {
            window = kept  // the same lines of the same text: drawn already
        } else {
            window = index.layout(lines: windowLines)
        }
        let replaced = lines.withLock { current -> (TextLineIndex?, TextLayout?) in
            // A text changed meanwhile is measured again (its change asked for a layout).
            guard current.shownVersion == state.shownVersion else { return (nil, nil) }
            defer {
                current.index = index
                current.window = window
                current.windowLines = windowLines
                current.measuredVersion = state.shownVersion
            }
            return (current.index, current.window)
        }
        withExtendedLifetime(replaced) {}  // the old index and lines are let go here, after unlocking
        return Size(width: constrainedSize.width.isFinite ? width : window.size.width, height: height)
    }

    /// The scroll offset (points) that keeps line `caretLine` in a view `viewHeight` tall, moving as
    /// little as it can from `current`.
    static func scrollOffset(keeping caretLine: Int, in index: TextLineIndex, from current: Double, viewHeight: Double) -> Double {
        let top = index.top(ofLine: caretLine), bottom = top + index.lineHeight
        var scroll = current
        if top - scroll < 0 { scroll = top }
        if bottom - scroll > viewHeight { scroll = bottom - viewHeight }
        return min(max(0, scroll), max(0, index.height - viewHeight))
    }

    // MARK: - Placing (main thread)

    /// Places the text's lines, the caret and the selection rectangles from the lines measured, and
    /// scrolls the caret into view; when the view leaves the lines laid out, asks for a layout that
    /// lays out the lines around it (a keystroke's layout does anyway). - Thread: main
    @MainActor
    func updateCaretAndSelection() {
        guard isNodeLoaded, bounds.width > 0 else { return }
        let width = bounds.width
        let isPlaceholder = (marked.map { $0.text.isEmpty } ?? true) && editState.withLock { $0.text.isEmpty }
        let (caretOffset, rangeShown) = displayedPositions(isPlaceholder: isPlaceholder)
        lines.withLock { $0.caret = caretOffset }
        // Only lines already measured (off this thread); a pending measurement calls back from `layout()`.
        guard let shown = shownLines else {
            caretIsPlaced = false
            caretNode.isHidden = true
            // Rectangles of a selection that is gone must not linger until then.
            if selection.isEmpty { for node in selectionNodes where !node.isHidden { node.isHidden = true } }
            return
        }
        let index = shown.index, window = shown.window, windowLines = shown.windowLines
        let caretLine = index.line(containing: caretOffset)
        scrollOffset = Self.scrollOffset(keeping: caretLine, in: index, from: scrollOffset, viewHeight: bounds.height)
        lines.withLock { $0.scrollOffset = scrollOffset }
        let firstShown = index.line(atY: scrollOffset), lastShown = index.line(atY: scrollOffset + bounds.height - 0.001)
        if !(windowLines.contains(firstShown) && windowLines.contains(lastShown) && windowLines.contains(caretLine)) {
            let version = lines.withLock { $0.shownVersion }
            if requestedView.map({ $0 != (version, caretOffset, scrollOffset) }) ?? true {
                requestedView = (version, caretOffset, scrollOffset)
                setNeedsLayout()
            }
        }
        let windowTop = index.top(ofLine: windowLines.lowerBound)
        let windowHeight = max(index.lineHeight, index.top(ofLine: windowLines.upperBound) - windowTop)
        textNode.show(window, top: windowTop)
        let textFrame = Rect(x: 0, y: windowTop - scrollOffset, width: width, height: windowHeight)
        if textNode.frame != textFrame { textNode.frame = textFrame }

        let colors = editState.withLock { ($0.caretColor, $0.selectionColor) }
        caretNode.backgroundColor = colors.0
        if windowLines.contains(caretLine) {
            var caret = window.caretRect(forOffset: caretOffset, inWidth: width)
            caret.origin.y -= scrollOffset
            caretNode.frame = Rect(x: min(max(0, caret.minX - 1), max(0, width - 2)), y: caret.minY, width: 2, height: caret.height)
            caretIsPlaced = true
        } else {
            caretIsPlaced = false
        }
        caretNode.isHidden = !caretIsPlaced || !isFocused || !rangeShown.isEmpty
        // Selection rectangles behind the text, on the lines laid out (the view shows no others).
        let rects = isFocused && !rangeShown.isEmpty && !isPlaceholder
            ? window.selectionRects(for: rangeShown, inWidth: width) : []
        while selectionNodes.count < rects.count {
            let node = Node()
            insertSubnode(node, at: 0)
            selectionNodes.append(node)
        }
        for (position, node) in selectionNodes.enumerated() {
            if position < rects.count {
                var rect = rects[position]
                rect.origin.y -= scrollOffset
                node.backgroundColor = colors.1
                node.frame = rect
                node.isHidden = false
            } else {
                node.isHidden = true
            }
        }
    }

    // MARK: - Positions from the lines (main thread)

    /// The position nearest `point` (field coordinates): on the line under it, at the nearest grapheme
    /// boundary when the line is laid out, else at the line's start. Nil while the text is measured.
    @MainActor
    func offset(atFieldPoint point: Point) -> Int? {
        guard let shown = shownLines else { return nil }
        let y = point.y + scrollOffset
        let line = shown.index.line(atY: y)
        guard shown.windowLines.contains(line) else { return shown.index.lineStarts[line] }
        return shown.window.offset(closestTo: Point(x: point.x, y: y), inWidth: bounds.width)
    }

    /// The positions of the line that shows `offset`; nil while the text is measured.
    @MainActor
    func lineRange(containing offset: Int) -> Range<Int>? {
        guard let shown = shownLines else { return nil }
        let line = shown.index.line(containing: offset)
        guard shown.windowLines.contains(line) else { return shown.index.range(ofLine: line) }
        return shown.window.offsetRange(ofLine: line - shown.windowLines.lowerBound)
    }

    /// Whether the paragraph of the line that shows `offset` runs right to left.
    @MainActor
    func isRightToLeft(at offset: Int) -> Bool {
        guard let shown = shownLines else { return false }
        return shown.index.isRightToLeft[shown.index.line(containing: offset)]
    }

    /// The position a line up or down from the caret, as near `goal` (an x; nil: the caret's) as the
    /// line allows, and the x kept for the next step; nil while the text is measured.
    @MainActor
    func verticalNeighbour(of offset: Int, down: Bool, goal: Double?) -> (offset: Int, goal: Double)? {
        guard let shown = shownLines else { return nil }
        let index = shown.index, window = shown.window
        let line = index.line(containing: offset)
        let caretX = shown.windowLines.contains(line) ? window.caretRect(forOffset: offset, inWidth: bounds.width).minX : 0
        let x = goal ?? caretX
        let target = down ? line + 1 : line - 1
        if target >= index.lineCount { return (index.length, x) }
        if target < 0 { return (0, x) }
        guard shown.windowLines.contains(target) else { return (index.lineStarts[target], x) }
        return (window.offset(closestTo: Point(x: x, y: index.top(ofLine: target) + 1), inWidth: bounds.width), x)
    }
}
