public import Compositor

// Caret positions, hit testing by position and selection rectangles: what an editor needs from a
// layout. Positions are offsets in UTF-16 code units of the text's string (`AttributedText.string`),
// the unit input methods and clipboards count in; a caret sits between grapheme clusters. Horizontal
// places come from the shaped fragments, so right-to-left and mixed lines put the caret where the
// character is drawn. Measuring a caret shapes one prefix of one fragment with the calling thread's
// fonts: cheap enough for the UI thread at every keystroke.

extension TextLayout {
    /// The caret for position `offset` (clamped to the text): a zero-width rectangle as tall as its
    /// line, in the text's coordinates in a box `boxWidth` wide (default: `size.width`). A position
    /// where a line wraps belongs to the start of the next line. - Thread: any
    public func caretRect(forOffset offset: Int, inWidth boxWidth: Double? = nil) -> Rect {
        let box = boxWidth ?? size.width
        let starts = runStartOffsets()
        let offset = min(max(0, offset), starts.last ?? 0)
        guard let lineIndex = lineIndex(containing: offset, starts: starts) else {
            return Rect(x: 0, y: 0, width: 0, height: lines.first?.height ?? 0)
        }
        let line = lines[lineIndex]
        let x = caretX(offset, in: line, starts: starts, measurer: caretMeasurer())
        return Rect(x: line.originX(inWidth: box) + x, y: line.top, width: 0, height: line.height)
    }

    /// The position nearest `point` (text coordinates, box `boxWidth` wide): on the line at the
    /// point's height (the first or last line above or below the text), at the grapheme boundary
    /// nearest the point's x. - Thread: any
    public func offset(closestTo point: Point, inWidth boxWidth: Double? = nil) -> Int {
        let box = boxWidth ?? size.width
        let starts = runStartOffsets()
        let candidates = lines.indices.filter { lines[$0].sourceStart.map { $0.run < text.runs.count } ?? false }
        guard !candidates.isEmpty, point.x.isFinite, point.y.isFinite else { return 0 }
        let lineIndex = candidates.first { point.y < lines[$0].top + lines[$0].height } ?? candidates[candidates.count - 1]
        let line = lines[lineIndex]
        let x = point.x - line.originX(inWidth: box)
        let measurer = caretMeasurer()
        let fragments = textFragments(of: line, starts: starts)
        guard !fragments.isEmpty else { return lineRange(line, starts: starts).lowerBound }
        // The fragment under x, or the nearest one.
        let chosen = fragments.min { distance(x, $0.fragment) < distance(x, $1.fragment) }!
        let fragment = chosen.fragment
        if fragment.isAttachment {
            let leading = (x - fragment.x) < fragment.width / 2
            return leading != fragment.isRightToLeft ? chosen.range.lowerBound : chosen.range.upperBound
        }
        // Logical advance into the fragment, then the grapheme boundary nearest it.
        let into = fragment.isRightToLeft ? fragment.x + fragment.width - x : x - fragment.x
        let boundaries = graphemeBoundaries(of: chosen)
        var low = 0, high = boundaries.count - 1
        while low < high {
            let mid = (low + high) / 2
            if advance(to: boundaries[mid], in: chosen, measurer: measurer) < into { low = mid + 1 } else { high = mid }
        }
        var best = low
        if low > 0 {
            let before = advance(to: boundaries[low - 1], in: chosen, measurer: measurer)
            let after = advance(to: boundaries[low], in: chosen, measurer: measurer)
            if abs(into - before) <= abs(after - into) { best = low - 1 }
        }
        return boundaries[best]
    }

    /// Rectangles covering the text in `range` (one per stretch of a line: a range across a
    /// direction change covers two), in the text's coordinates in a box `boxWidth` wide. - Thread: any
    public func selectionRects(for range: Range<Int>, inWidth boxWidth: Double? = nil) -> [Rect] {
        guard !range.isEmpty else { return [] }
        let box = boxWidth ?? size.width
        let starts = runStartOffsets()
        let measurer = caretMeasurer()
        var rects: [Rect] = []
        for line in lines {
            let origin = line.originX(inWidth: box)
            var lineRects: [Rect] = []
            for item in textFragments(of: line, starts: starts) {
                let lower = max(range.lowerBound, item.range.lowerBound), upper = min(range.upperBound, item.range.upperBound)
                guard lower < upper else { continue }
                let a = xInFragment(lower, item, measurer: measurer), b = xInFragment(upper, item, measurer: measurer)
                let rect = Rect(x: origin + min(a, b), y: line.top, width: abs(b - a), height: line.height)
                // Neighbours on the line merge.
                if let last = lineRects.last, abs(last.maxX - rect.minX) < 0.5 {
                    lineRects[lineRects.count - 1] = Rect(x: last.minX, y: line.top, width: rect.maxX - last.minX, height: line.height)
                } else {
                    lineRects.append(rect)
                }
            }
            rects.append(contentsOf: lineRects)
        }
        return rects
    }

    /// The index of the line that shows position `offset` (a wrap position belongs to the next line).
    /// - Thread: any
    public func lineIndex(forOffset offset: Int) -> Int {
        lineIndex(containing: offset, starts: runStartOffsets()) ?? 0
    }

    /// The positions line `index` covers, from its first character to its end (after the spaces that
    /// end it, before its paragraph's newline). - Thread: any
    public func offsetRange(ofLine index: Int) -> Range<Int> {
        guard lines.indices.contains(index) else { return 0..<0 }
        return lineRange(lines[index], starts: runStartOffsets())
    }

    // MARK: - Positions

    /// A fragment of the text's own runs with its position range.
    struct PositionedFragment {
        var fragment: TextFragment
        var range: Range<Int>
        var source: Range<String.Index>
    }

    /// Each run's first position, and the text's length last.
    func runStartOffsets() -> [Int] {
        var starts: [Int] = []
        starts.reserveCapacity(text.runs.count + 1)
        var total = 0
        for run in text.runs {
            starts.append(total)
            total += run.text.utf16.count
        }
        starts.append(total)
        return starts
    }

    private func position(_ index: TextSourceIndex, starts: [Int]) -> Int? {
        guard index.run < text.runs.count else { return nil }
        let string = text.runs[index.run].text
        return starts[index.run] + string.utf16.distance(from: string.startIndex, to: index.index)
    }

    private func lineRange(_ line: TextLine, starts: [Int]) -> Range<Int> {
        guard let start = line.sourceStart.flatMap({ position($0, starts: starts) }) else { return 0..<0 }
        let end = line.sourceEnd.flatMap { position($0, starts: starts) } ?? start
        return start..<max(start, end)
    }

    private func lineIndex(containing offset: Int, starts: [Int]) -> Int? {
        var found: Int?
        for (index, line) in lines.enumerated() {
            guard line.sourceStart.map({ $0.run < text.runs.count }) ?? false else { continue }
            let range = lineRange(line, starts: starts)
            if range.lowerBound > offset { break }
            found = index
        }
        return found ?? lines.indices.first { lines[$0].sourceStart.map { $0.run < text.runs.count } ?? false }
    }

    private func textFragments(of line: TextLine, starts: [Int]) -> [PositionedFragment] {
        line.fragments.compactMap { fragment in
            guard let source = fragment.source, fragment.run < text.runs.count else { return nil }
            let string = text.runs[fragment.run].text
            let lower = starts[fragment.run] + string.utf16.distance(from: string.startIndex, to: source.lowerBound)
            let upper = lower + string.utf16.distance(from: source.lowerBound, to: source.upperBound)
            return PositionedFragment(fragment: fragment, range: lower..<upper, source: source)
        }
    }

    private func caretMeasurer() -> TextMeasurer { TextMeasurer(runs: runs, registry: fonts, scale: scale) }

    /// The caret's x from the line's left edge for `offset`.
    private func caretX(_ offset: Int, in line: TextLine, starts: [Int], measurer: TextMeasurer) -> Double {
        let fragments = textFragments(of: line, starts: starts)
        // The fragment the position starts (downstream), else the one it ends.
        if let item = fragments.first(where: { $0.range.contains(offset) })
            ?? fragments.first(where: { $0.range.upperBound == offset }) {
            return xInFragment(offset, item, measurer: measurer)
        }
        // After the line's text (its spaces or newline): the line's end in its direction.
        guard let first = fragments.min(by: { $0.range.lowerBound < $1.range.lowerBound }) else { return 0 }
        if offset < first.range.lowerBound { return xInFragment(first.range.lowerBound, first, measurer: measurer) }
        return line.isRightToLeft ? 0 : line.width
    }

    /// The x (from the line's left edge) of position `offset` inside a fragment.
    private func xInFragment(_ offset: Int, _ item: PositionedFragment, measurer: TextMeasurer) -> Double {
        let fragment = item.fragment
        let into: Double
        if fragment.isAttachment {
            into = offset <= item.range.lowerBound ? 0 : fragment.width
        } else {
            into = advance(to: min(max(offset, item.range.lowerBound), item.range.upperBound), in: item, measurer: measurer)
        }
        return fragment.isRightToLeft ? fragment.x + fragment.width - into : fragment.x + into
    }

    /// The width in points of the fragment's text before `offset`, shaped as the fragment is.
    private func advance(to offset: Int, in item: PositionedFragment, measurer: TextMeasurer) -> Double {
        if offset <= item.range.lowerBound { return 0 }
        if offset >= item.range.upperBound { return item.fragment.width }
        let string = text.runs[item.fragment.run].text
        let end = string.utf16.index(item.source.lowerBound, offsetBy: offset - item.range.lowerBound)
        let prefix = string[item.source.lowerBound..<end]
        let pixels = measurer.width(of: prefix, run: item.fragment.run, rightToLeft: item.fragment.isRightToLeft,
                                    script: item.fragment.script, face: item.fragment.face)
        return min(item.fragment.width, Double(pixels) / scale)
    }

    /// The positions between the fragment's grapheme clusters, its start and end included.
    private func graphemeBoundaries(of item: PositionedFragment) -> [Int] {
        let string = text.runs[item.fragment.run].text
        var offsets = [item.range.lowerBound]
        var offset = item.range.lowerBound
        for character in string[item.source] {
            offset += character.utf16.count
            offsets.append(offset)
        }
        return offsets
    }

    private func distance(_ x: Double, _ fragment: TextFragment) -> Double {
        if x < fragment.x { return fragment.x - x }
        if x > fragment.x + fragment.width { return x - fragment.x - fragment.width }
        return 0
    }
}
