import Compositor

/// Where every line of a text starts at one width, without the lines themselves: a view that shows a
/// few lines of a long text (an editable field holding a long message) keeps this index and lays out
/// and draws only the lines it shows (`layout(lines:)`), and an edit breaks again only the lines it
/// reaches (`updated(to:)`).
///
/// Each line is broken from its own start alone (`TextLayoutBuilder.line(startingAt:)`): the text from
/// there, a bounded stretch of it analysed for break opportunities and bidi levels in its paragraph's
/// direction. A line's end therefore depends on nothing before it, so after an edit the lines are
/// broken again from just before the edit until one starts where an old one started in the text the
/// edit left alone; from there on the old lines hold. The lines are those `TextLayout` makes, except in
/// paragraphs longer than its analysis (4,096 units), which it breaks after spaces only past that
/// point and this index at every opportunity.
///
/// An edit may move words from line to line down the rest of its paragraph (greedy breaking: a line
/// that no longer fits pushes its last word on). So that a keystroke costs a few lines, breaking
/// stops some lines past the edit and leaves a gap (`gaps`): the lines after it are the old ones, moved
/// by what the edit added, and stand where breaking from their own first line puts them, though not
/// necessarily where breaking from the lines above would. Lines before the first gap are exact; line
/// numbers and the height past it may be off by the lines the edit added or removed.
/// `verified(through:)` and `verified(containing:)` close gaps (breaking until the lines join the old
/// ones again, or as far as asked) before lines are shown.
///
/// For text in one font (an editable field's: its text, its composition, or its placeholder): every
/// line is as tall, so line `i` is at `i × (lineHeight + lineSpacing)`. Blocks (quotes, code), line
/// limits and truncation do not apply. A change of paragraph direction made by an edit updates the
/// direction of the paragraph's lines without breaking again those it does not reach.
/// - Thread: any (immutable); made on the thread that measures, with that thread's fonts
final class TextLineIndex: Sendable {
    /// The text indexed (shares the caller's storage).
    let text: AttributedText
    /// The width it was broken for, in points, and the scale in pixels per point.
    let width: Double
    let scale: Double
    let options: TextLayoutOptions
    let fonts: FontRegistry
    /// Each line's first UTF-16 offset, ascending; the first is 0 and a text always has a line.
    let lineStarts: [Int]
    /// Whether each line starts a paragraph.
    let startsParagraph: [Bool]
    /// Whether each line's paragraph runs right to left.
    let isRightToLeft: [Bool]
    /// The lines (ascending) whose start is not known to be where the line before ends.
    let gaps: [Int]
    /// Each run's first UTF-16 offset, then the text's length.
    let runStarts: [Int]
    /// One line's height, and the space between two lines, in whole pixels.
    let lineHeightPx: Int
    let lineSpacingPx: Int

    private init(text: AttributedText, width: Double, scale: Double, options: TextLayoutOptions, fonts: FontRegistry,
                 lines: Lines, runStarts: [Int], lineHeightPx: Int, lineSpacingPx: Int) {
        self.text = text; self.width = width; self.scale = scale; self.options = options; self.fonts = fonts
        lineStarts = lines.starts; startsParagraph = lines.paragraphs; isRightToLeft = lines.directions; gaps = lines.gaps
        self.runStarts = runStarts; self.lineHeightPx = lineHeightPx; self.lineSpacingPx = lineSpacingPx
    }

    /// An index like this one for `text` with `lines`.
    private func with(_ text: AttributedText, _ lines: Lines, runStarts: [Int]) -> TextLineIndex {
        TextLineIndex(text: text, width: width, scale: scale, options: options, fonts: fonts, lines: lines,
                      runStarts: runStarts, lineHeightPx: lineHeightPx, lineSpacingPx: lineSpacingPx)
    }

    private var lines: Lines {
        Lines(starts: lineStarts, paragraphs: startsParagraph, directions: isRightToLeft, gaps: gaps)
    }

    /// The text's length in UTF-16 units.
    var length: Int { runStarts.last ?? 0 }
    var lineCount: Int { lineStarts.count }
    /// The lines before the first gap, which are exact.
    var exactLineCount: Int { gaps.first ?? lineCount }
    /// One line's height in points.
    var lineHeight: Double { Double(lineHeightPx) / scale }
    /// From one line's top to the next one's, in points.
    var lineAdvance: Double { Double(lineHeightPx + lineSpacingPx) / scale }
    /// The whole text's height in points.
    var height: Double { Double(lineCount * lineHeightPx + max(0, lineCount - 1) * lineSpacingPx) / scale }

    /// The top of line `index`, in points from the top of the text.
    func top(ofLine index: Int) -> Double { Double(index * (lineHeightPx + lineSpacingPx)) / scale }

    /// The line that shows position `offset`: the last that starts at or before it (a position where a
    /// line wraps belongs to the next line).
    func line(containing offset: Int) -> Int {
        var low = 0, high = lineStarts.count
        while low < high {
            let mid = (low + high) / 2
            if lineStarts[mid] <= offset { low = mid + 1 } else { high = mid }
        }
        return max(0, low - 1)
    }

    /// The line at height `y` (points from the top of the text), clamped to the text's lines.
    func line(atY y: Double) -> Int {
        guard y.isFinite else { return 0 }
        let advance = Double(lineHeightPx + lineSpacingPx)
        guard advance > 0 else { return 0 }
        return min(lineCount - 1, max(0, Int((y * scale / advance).rounded(.down))))
    }

    // MARK: - Making and updating

    /// The index of `text` broken for `width` points at `scale` with `fonts` (line spacing from
    /// `options`; caret positions kept when it says so).
    static func make(_ text: AttributedText, width: Double, options: TextLayoutOptions, scale: Double,
                     fonts: FontRegistry) -> TextLineIndex {
        let width = width.isNaN || width < 0 ? 0 : width
        let scale = scale.isFinite && scale > 0 ? min(scale, 8) : 1
        var builder = TextLayoutBuilder(text: text, width: width, options: options, scale: scale, registry: fonts)
        var lines = Lines()
        lines.append(start: 0, startsParagraph: true, isRightToLeft: false)
        if !text.isEmpty {
            reflow(&lines, from: 0, old: Lines(), joinableFrom: .max, builder: &builder) { _, _ in false }
        }
        return TextLineIndex(text: text, width: width, scale: scale, options: options, fonts: fonts, lines: lines,
                             runStarts: builder.offsets.runStarts, lineHeightPx: text.isEmpty ? 0 : builder.uniformLineHeightPx,
                             lineSpacingPx: builder.spacingPx)
    }

    /// The index of `text`, which replaces this index's text, at the same width, scale, options and
    /// fonts: this one with the lines around the change broken again (some lines past the change at
    /// most, leaving a gap when they do not join the old ones by then). Text in another font (or in
    /// several, or with attachments) is indexed anew.
    func updated(to text: AttributedText) -> TextLineIndex {
        let oldFonts = Set(self.text.runs.map(\.attributes.effectiveFont))
        guard oldFonts.count == 1, Set(text.runs.map(\.attributes.effectiveFont)) == oldFonts,
              !text.runs.contains(where: { $0.attributes.attachment != nil }) else {
            return TextLineIndex.make(text, width: width, options: options, scale: scale, fonts: fonts)
        }
        let (prefix, suffix) = TextLineIndex.commonAffixes(self.text.singleString, text.singleString)
        var builder = TextLayoutBuilder(text: text, width: width, options: options, scale: scale, registry: fonts)
        let runStarts = builder.offsets.runStarts
        let newLength = runStarts.last ?? 0
        if prefix == length && prefix == newLength { return with(text, lines, runStarts: runStarts) }
        let delta = newLength - length
        let unchangedFrom = newLength - suffix
        // Lines before the one holding the change keep their ends, but the two before it may take
        // text from it (a word made shorter, an overlong word cut elsewhere).
        let restart = max(0, line(containing: prefix) - 2)
        var lines = self.lines.prefix(restart + 1)
        // The old lines that start in the text the change left alone, where the new ones are.
        let firstOld = line(containing: unchangedFrom - delta)
        let old = self.lines.suffix(from: lineStarts[firstOld] >= unchangedFrom - delta ? firstOld : firstOld + 1)
            .shifted(by: delta)
        var pastChange = 0
        TextLineIndex.reflow(&lines, from: restart, old: old, joinableFrom: unchangedFrom, builder: &builder) { next, _ in
            if next >= unchangedFrom { pastChange += 1 }
            return pastChange > TextLineIndex.linesBrokenPastAnEdit
        }
        // A paragraph the change reached may have changed direction; its lines take the new one (they
        // keep their ends). The paragraph holding the first line broken again was broken in its old
        // direction when it starts before that line and the change is within its first 4,096 units.
        let first = lines.paragraph(containing: restart)
        if first.lowerBound < restart, prefix < lines.starts[first.lowerBound] + ParagraphAnalysis.limit {
            lines.setDirection(builder.paragraphIsRightToLeft(at: lines.starts[first.lowerBound]), of: first)
        } else {
            lines.setDirection(lines.directions[first.lowerBound], of: first)
        }
        let changedEnd = lines.starts.firstIndex { $0 >= unchangedFrom } ?? lines.starts.count
        if changedEnd < lines.starts.count {
            let last = lines.paragraph(containing: changedEnd)
            if last.lowerBound > first.lowerBound { lines.setDirection(lines.directions[last.lowerBound], of: last) }
        }
        return with(text, lines, runStarts: runStarts)
    }

    /// How many lines past an edit are broken again before a gap is left.
    static let linesBrokenPastAnEdit = 8

    /// This index with no gap up to line `last`: lines broken on from the first gap until they join the
    /// lines after it or reach `last`.
    func verified(through last: Int) -> TextLineIndex {
        var index = self
        while let gap = index.gaps.first, gap <= last {
            index = index.closingGap(gap) { _, count in count - 2 >= last }
        }
        return index
    }

    /// This index with the line holding `offset` exact (no gap before its end).
    func verified(containing offset: Int) -> TextLineIndex {
        var index = self
        while let gap = index.gaps.first, offset >= index.lineStarts[gap - 1] {
            index = index.closingGap(gap) { next, _ in next > offset }
        }
        return index
    }

    /// Lines broken from the line before `gap` (the first gap: that line is exact) until they join the
    /// lines at or after the gap, or `stop` says so (another gap is left there).
    private func closingGap(_ gap: Int, stop: (_ next: Int, _ lineCount: Int) -> Bool) -> TextLineIndex {
        var builder = TextLayoutBuilder(text: text, width: width, options: options, scale: scale, registry: fonts)
        var lines = self.lines.prefix(gap)
        TextLineIndex.reflow(&lines, from: gap - 1, old: self.lines.suffix(from: gap), joinableFrom: lineStarts[gap - 1] + 1,
                             builder: &builder, shouldStop: stop)
        return with(text, lines, runStarts: runStarts)
    }

    /// Lines: starts, paragraph starts, directions, gaps.
    private struct Lines {
        var starts: [Int] = []
        var paragraphs: [Bool] = []
        var directions: [Bool] = []
        var gaps: [Int] = []

        mutating func append(start: Int, startsParagraph: Bool, isRightToLeft: Bool) {
            starts.append(start)
            paragraphs.append(startsParagraph)
            directions.append(isRightToLeft)
        }

        /// The first `count` lines, with their gaps.
        func prefix(_ count: Int) -> Lines {
            Lines(starts: Array(starts[..<count]), paragraphs: Array(paragraphs[..<count]),
                  directions: Array(directions[..<count]), gaps: gaps.filter { $0 < count })
        }

        /// The lines from `index` on, with their gaps (renumbered), the first line's own gap dropped.
        func suffix(from index: Int) -> Lines {
            let index = min(index, starts.count)
            return Lines(starts: Array(starts[index...]), paragraphs: Array(paragraphs[index...]),
                         directions: Array(directions[index...]), gaps: gaps.filter { $0 > index }.map { $0 - index })
        }

        func shifted(by delta: Int) -> Lines {
            var copy = self
            copy.starts = starts.map { $0 + delta }
            return copy
        }

        /// Appends `other`'s lines from `index`, the first of them after a gap when `gap`.
        mutating func append(_ other: Lines, from index: Int, gap: Bool) {
            guard index < other.starts.count else { return }
            let base = starts.count
            if gap { gaps.append(base) }
            starts.append(contentsOf: other.starts[index...])
            paragraphs.append(contentsOf: other.paragraphs[index...])
            directions.append(contentsOf: other.directions[index...])
            gaps.append(contentsOf: other.gaps.filter { $0 > index }.map { $0 - index + base })
        }

        /// The lines of the paragraph that holds line `index`.
        func paragraph(containing index: Int) -> Range<Int> {
            var start = min(index, starts.count - 1)
            while start > 0 && !paragraphs[start] { start -= 1 }
            var end = start + 1
            while end < starts.count && !paragraphs[end] { end += 1 }
            return start..<end
        }

        mutating func setDirection(_ direction: Bool, of lines: Range<Int>) {
            for index in lines { directions[index] = direction }
        }
    }

    /// Breaks lines on from the last of `lines` (whose start is exact, and which is broken again) to
    /// the text's end, until a line starts where one of `old` starts (at or after `joinableFrom`, in the
    /// same kind of place: a paragraph's start or not): then `old`'s lines from there are appended, as
    /// they stand. When `shouldStop(next start, line count)` says so first, the line at that start is
    /// appended and then `old`'s lines after it, past a gap.
    private static func reflow(_ lines: inout Lines, from index: Int, old: Lines, joinableFrom: Int,
                               builder: inout TextLayoutBuilder, shouldStop: (_ next: Int, _ lineCount: Int) -> Bool) {
        var start = lines.starts[index]
        var startsParagraph = lines.paragraphs[index]
        var direction: Bool? = startsParagraph ? nil : lines.directions[index]
        var oldIndex = 0
        while true {
            let line = builder.line(startingAt: start, startsParagraph: startsParagraph, rightToLeft: direction)
            lines.directions[lines.starts.count - 1] = line.paragraphIsRightToLeft
            guard let next = line.next, next > start else { return }
            while oldIndex < old.starts.count && old.starts[oldIndex] < next { oldIndex += 1 }
            if next >= joinableFrom, oldIndex < old.starts.count, old.starts[oldIndex] == next,
               old.paragraphs[oldIndex] == line.nextStartsParagraph {
                lines.append(old, from: oldIndex, gap: false)
                return
            }
            lines.append(start: next, startsParagraph: line.nextStartsParagraph, isRightToLeft: line.paragraphIsRightToLeft)
            if shouldStop(next, lines.starts.count) {
                if next >= joinableFrom {
                    lines.append(old, from: oldIndex < old.starts.count && old.starts[oldIndex] == next ? oldIndex + 1 : oldIndex,
                                 gap: true)
                }
                return
            }
            start = next
            startsParagraph = line.nextStartsParagraph
            direction = startsParagraph ? nil : line.paragraphIsRightToLeft
        }
    }

    /// How many UTF-16 units `a` and `b` share at their start, and at their end after that.
    static func commonAffixes(_ a: String, _ b: String) -> (prefix: Int, suffix: Int) {
        var a = a, b = b
        a.makeContiguousUTF8()
        b.makeContiguousUTF8()
        let bytes: (Int, Int) = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb in
                let shorter = min(pa.count, pb.count)
                let ra = UnsafeRawBufferPointer(pa), rb = UnsafeRawBufferPointer(pb)
                var prefix = 0
                while prefix + 8 <= shorter,
                      ra.loadUnaligned(fromByteOffset: prefix, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: prefix, as: UInt64.self) {
                    prefix += 8
                }
                while prefix < shorter && pa[prefix] == pb[prefix] { prefix += 1 }
                // Back to a scalar's start, so both sides cut between scalars.
                while prefix > 0 && prefix < shorter && UTF8.isContinuation(pa[prefix]) { prefix -= 1 }
                var suffix = 0
                let room = shorter - prefix
                while suffix < room && pa[pa.count - 1 - suffix] == pb[pb.count - 1 - suffix] { suffix += 1 }
                while suffix > 0 && UTF8.isContinuation(pa[pa.count - suffix]) { suffix -= 1 }
                return (prefix, suffix)
            } ?? (0, 0)
        } ?? (0, 0)
        let prefixIndex = a.utf8.index(a.startIndex, offsetBy: bytes.0)
        let suffixIndex = a.utf8.index(a.endIndex, offsetBy: -bytes.1)
        return (a.utf16.distance(from: a.startIndex, to: prefixIndex), a.utf16.distance(from: suffixIndex, to: a.endIndex))
    }

    // MARK: - Laying out lines

    /// A layout of lines `range` of the text (clamped to its lines), each where it is in the whole
    /// text (line `i` at `top(ofLine: i)`), keeping caret positions when the options say so; its
    /// size is the widest of those lines by the whole text's height. Lines past a gap are laid out
    /// from where they start: close the gaps first (`verified(through:)`) for the lines the text has.
    func layout(lines range: Range<Int>) -> TextLayout {
        TextWorkCounters.countLayout()
        let range = text.isEmpty ? 0..<0 : max(0, range.lowerBound)..<min(lineCount, max(range.lowerBound, range.upperBound))
        var builder = TextLayoutBuilder(text: text, width: width, options: options, scale: scale, registry: fonts)
        var lines: [TextLine] = []
        lines.reserveCapacity(range.count)
        for index in range {
            let line = builder.line(startingAt: lineStarts[index], startsParagraph: startsParagraph[index],
                                    rightToLeft: isRightToLeft[index])
            lines.append(builder.placeLine(line, atPixel: index * (lineHeightPx + lineSpacingPx)))
        }
        return builder.windowLayout(lines, heightPx: lineCount * lineHeightPx + max(0, lineCount - 1) * lineSpacingPx)
    }

    /// The positions line `index` covers: from its start to the next line's, less the newline that
    /// ends a paragraph (read from the text: at most two units).
    func range(ofLine index: Int) -> Range<Int> {
        guard lineStarts.indices.contains(index) else { return 0..<0 }
        let start = lineStarts[index]
        guard index + 1 < lineCount else { return start..<length }
        var end = lineStarts[index + 1]
        if startsParagraph[index + 1] {
            // The next paragraph starts after a newline of one unit, or two (CR LF).
            end -= 1
            if end > start, unit(at: end) == 0x0A, unit(at: end - 1) == 0x0D { end -= 1 }
        }
        return start..<max(start, end)
    }

    /// The UTF-16 unit at `offset`.
    func unit(at offset: Int) -> UInt16? {
        guard offset >= 0, offset < length else { return nil }
        var run = 0
        while run + 1 < runStarts.count - 1 && runStarts[run + 1] <= offset { run += 1 }
        let string = text.runs[run].text
        let utf16 = string.utf16
        return utf16[utf16.index(utf16.startIndex, offsetBy: offset - runStarts[run])]
    }
}
