public import Compositor

// Caret positions, hit testing by position and selection rectangles: what an editor needs from a
// layout. Positions are offsets in UTF-16 code units of the text's string (`AttributedText.string`),
// the unit input methods and clipboards count in; a caret sits between grapheme clusters. Horizontal
// places come from where the shaped fragments put their clusters, so right-to-left and mixed lines put
// the caret where the character is drawn.
//
// Every lookup is a binary search: over the lines by position or height, then over a fragment's caret
// stops. A layout measured with `TextLayoutOptions.recordsCaretPositions` kept the stops when it
// shaped its lines (on the thread that measured it), so these calls shape nothing; without them, the
// fragments a call looks at are shaped on the calling thread.

extension TextLayout {
    /// The caret for position `offset` (clamped to the text): a zero-width rectangle as tall as its
    /// line, in the text's coordinates in a box `boxWidth` wide (default: `size.width`). A position
    /// where a line wraps belongs to the start of the next line. - Thread: any
    public func caretRect(forOffset offset: Int, inWidth boxWidth: Double? = nil) -> Rect {
        let box = boxWidth ?? size.width
        let offset = min(max(0, offset), runStarts.last ?? 0)
        guard let lineIndex = textLineIndex(containing: offset) else {
            return Rect(x: 0, y: 0, width: 0, height: lines.first?.height ?? 0)
        }
        let line = lines[lineIndex]
        let measurer = LazyMeasurer(layout: self)
        let origin = line.originX(inWidth: box)
        var x = caretX(offset, in: line, measurer: measurer)
        // Among the spaces that end the line (outside its width, which ends at its last visible
        // character): past each one typed, by its advance, as it will sit once text follows. At a
        // wrap they hang into the margin: the caret stops at the box's edge there.
        if let end = lastFragmentEnd(of: line), offset > end {
            let spaces = advance(from: end, to: offset, measurer: measurer)
            let wraps = offset < (runStarts.last ?? 0) && !endsParagraph(line)
            if line.isRightToLeft {
                x = wraps ? max(x - spaces, -origin) : x - spaces
            } else {
                x = wraps ? max(x, min(x + spaces, box - origin)) : x + spaces
            }
        }
        return Rect(x: origin + x, y: line.top, width: 0, height: line.height)
    }

    /// The logical end of the line's last fragment of text: where the spaces that end the line start.
    private func lastFragmentEnd(of line: TextLine) -> Int? {
        line.fragments.compactMap { $0.textRange?.upperBound }.max()
    }

    /// True when the line ends its paragraph (a newline or the text's end follows its text).
    private func endsParagraph(_ line: TextLine) -> Bool {
        guard let end = line.textRange?.upperBound else { return true }
        guard let unit = utf16Unit(at: end) else { return true }
        return unit == 0x0A || unit == 0x0D || unit == 0x2029 || unit == 0x2028
    }

    /// The UTF-16 unit at `offset` of the text, nil past its end.
    private func utf16Unit(at offset: Int) -> UInt16? {
        guard offset >= 0, let run = runIndex(containing: offset) else { return nil }
        let string = text.runs[run].text.utf16
        let local = offset - runStarts[run]
        guard local < string.count else { return nil }
        return string[string.index(string.startIndex, offsetBy: local)]
    }

    /// The run that holds position `offset`, nil past the text's end.
    private func runIndex(containing offset: Int) -> Int? {
        guard runStarts.count > 1, offset < runStarts[runStarts.count - 1] else { return nil }
        var low = 0, high = runStarts.count - 1
        while low + 1 < high {
            let mid = (low + high) / 2
            if runStarts[mid] <= offset { low = mid } else { high = mid }
        }
        return low
    }

    /// The advance, in points, of the text from `start` to `end` (spaces that end a line), each run's
    /// part measured in its own font.
    private func advance(from start: Int, to end: Int, measurer: LazyMeasurer) -> Double {
        var total = 0
        var position = start
        while position < end, let run = runIndex(containing: position), run < text.runs.count {
            let string = text.runs[run].text
            let utf16 = string.utf16
            let from = utf16.index(utf16.startIndex, offsetBy: position - runStarts[run])
            let upTo = min(end, runStarts[run + 1]) - runStarts[run]
            let to = utf16.index(utf16.startIndex, offsetBy: upTo)
            guard let lower = from.samePosition(in: string), let upper = to.samePosition(in: string), lower < upper else { break }
            total += measurer.get().width(of: string[lower..<upper], run: run, rightToLeft: false, script: .common)
            position = runStarts[run] + upTo
        }
        return Double(total) / max(scale, 0.001)
    }

    /// The position nearest `point` (text coordinates, box `boxWidth` wide): on the line at the
    /// point's height (the first or last line above or below the text), at the grapheme boundary
    /// nearest the point's x. - Thread: any
    public func offset(closestTo point: Point, inWidth boxWidth: Double? = nil) -> Int {
        let box = boxWidth ?? size.width
        guard !textLines.isEmpty, point.x.isFinite, point.y.isFinite else { return 0 }
        // The first line whose bottom is below the point, else the last.
        var low = 0, high = textLines.count - 1
        while low < high {
            let mid = (low + high) / 2
            let line = lines[textLines[mid]]
            if point.y < line.top + line.height { high = mid } else { low = mid + 1 }
        }
        let line = lines[textLines[low]]
        let x = point.x - line.originX(inWidth: box)
        guard let chosen = line.fragments.filter({ $0.textRange != nil }).min(by: { distance(x, $0) < distance(x, $1) }),
              let range = chosen.textRange else {
            return line.textRange?.lowerBound ?? 0
        }
        if chosen.isAttachment {
            let leading = (x - chosen.x) < chosen.width / 2
            return leading != chosen.isRightToLeft ? range.lowerBound : range.upperBound
        }
        // Logical advance into the fragment, then the grapheme boundary nearest it.
        let into = chosen.isRightToLeft ? chosen.x + chosen.width - x : x - chosen.x
        let stops = caretStops(of: chosen, measurer: LazyMeasurer(layout: self))
        guard !stops.isEmpty else { return range.lowerBound }
        var first = 0, last = stops.count - 1
        while first < last {
            let mid = (first + last) / 2
            if Double(stops[mid].advance) < into { first = mid + 1 } else { last = mid }
        }
        var best = first
        if first > 0, abs(into - Double(stops[first - 1].advance)) <= abs(Double(stops[first].advance) - into) { best = first - 1 }
        return range.lowerBound + Int(stops[best].offset)
    }

    /// Rectangles covering the text in `range` (one per stretch of a line: a range across a
    /// direction change covers two), in the text's coordinates in a box `boxWidth` wide. - Thread: any
    public func selectionRects(for range: Range<Int>, inWidth boxWidth: Double? = nil) -> [Rect] {
        guard !range.isEmpty, !textLines.isEmpty else { return [] }
        let box = boxWidth ?? size.width
        let measurer = LazyMeasurer(layout: self)
        // The first line that ends after the range starts.
        var low = 0, high = textLines.count
        while low < high {
            let mid = (low + high) / 2
            if lines[textLines[mid]].textRange!.upperBound > range.lowerBound { high = mid } else { low = mid + 1 }
        }
        var rects: [Rect] = []
        for position in low..<textLines.count {
            let line = lines[textLines[position]]
            guard line.textRange!.lowerBound < range.upperBound else { break }
            let origin = line.originX(inWidth: box)
            var lineRects: [Rect] = []
            for fragment in line.fragments {
                guard let span = fragment.textRange else { continue }
                let lower = max(range.lowerBound, span.lowerBound), upper = min(range.upperBound, span.upperBound)
                guard lower < upper else { continue }
                let a = xInFragment(lower, fragment, measurer: measurer), b = xInFragment(upper, fragment, measurer: measurer)
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
        textLineIndex(containing: offset) ?? 0
    }

    /// The positions line `index` covers, from its first character to its end (after the spaces that
    /// end it, before its paragraph's newline). - Thread: any
    public func offsetRange(ofLine index: Int) -> Range<Int> {
        guard lines.indices.contains(index) else { return 0..<0 }
        return lines[index].textRange ?? 0..<0
    }

    // MARK: - Positions

    /// Makes the calling thread's measurer the first time a fragment without stored stops is shaped.
    final class LazyMeasurer {
        let layout: TextLayout
        private var made: TextMeasurer?

        init(layout: TextLayout) { self.layout = layout }

        func get() -> TextMeasurer {
            if let made { return made }
            let measurer = TextMeasurer(runs: layout.runs, registry: layout.fonts, scale: layout.scale)
            made = measurer
            return measurer
        }
    }

    /// The last line (of those showing the text) that starts at or before `offset`; the first such
    /// line when none does; nil when no line shows the text.
    private func textLineIndex(containing offset: Int) -> Int? {
        guard !textLines.isEmpty else { return nil }
        var low = 0, high = textLines.count
        while low < high {
            let mid = (low + high) / 2
            if lines[textLines[mid]].textRange!.lowerBound <= offset { low = mid + 1 } else { high = mid }
        }
        return textLines[max(0, low - 1)]
    }

    /// The caret's x from the line's left edge for `offset`.
    private func caretX(_ offset: Int, in line: TextLine, measurer: LazyMeasurer) -> Double {
        let fragments = line.fragments.filter { $0.textRange != nil }
        // The fragment the position starts (downstream), else the one it ends.
        if let fragment = fragments.first(where: { $0.textRange!.contains(offset) })
            ?? fragments.first(where: { $0.textRange!.upperBound == offset }) {
            return xInFragment(offset, fragment, measurer: measurer)
        }
        // After the line's text (its spaces or newline): the line's end in its direction.
        guard let first = fragments.min(by: { $0.textRange!.lowerBound < $1.textRange!.lowerBound }) else { return 0 }
        if offset < first.textRange!.lowerBound { return xInFragment(first.textRange!.lowerBound, first, measurer: measurer) }
        return line.isRightToLeft ? 0 : line.width
    }

    /// The x (from the line's left edge) of position `offset` inside a fragment.
    private func xInFragment(_ offset: Int, _ fragment: TextFragment, measurer: LazyMeasurer) -> Double {
        let range = fragment.textRange!
        let into: Double
        if fragment.isAttachment {
            into = offset <= range.lowerBound ? 0 : fragment.width
        } else if offset <= range.lowerBound {
            into = 0
        } else if offset >= range.upperBound {
            into = fragment.width
        } else {
            into = advance(toLocal: offset - range.lowerBound, in: caretStops(of: fragment, measurer: measurer), width: fragment.width)
        }
        return fragment.isRightToLeft ? fragment.x + fragment.width - into : fragment.x + into
    }

    /// The advance at `local` UTF-16 units into a fragment: its stop's, or between the stops around it
    /// (a position inside a cluster, which a caret never takes, lies in proportion).
    private func advance(toLocal local: Int, in stops: [CaretStop], width: Double) -> Double {
        guard !stops.isEmpty else { return 0 }
        var low = 0, high = stops.count
        while low < high {
            let mid = (low + high) / 2
            if Int(stops[mid].offset) <= local { low = mid + 1 } else { high = mid }
        }
        let below = stops[max(0, low - 1)]
        guard Int(below.offset) != local, low < stops.count else { return min(width, Double(below.advance)) }
        let above = stops[low]
        let fraction = Double(local - Int(below.offset)) / Double(max(1, Int(above.offset) - Int(below.offset)))
        return Double(below.advance) + Double(above.advance - below.advance) * fraction
    }

    /// The fragment's stops: kept by the layout, else shaped now on the calling thread.
    private func caretStops(of fragment: TextFragment, measurer: LazyMeasurer) -> [CaretStop] {
        if let stored = fragment.caretStops { return stored }
        return measurer.get().caretStops(of: fragment.text, run: fragment.run, rightToLeft: fragment.isRightToLeft,
                                          script: fragment.script, face: fragment.face,
                                          widthPx: Int((fragment.width * scale).rounded()))
    }

    private func distance(_ x: Double, _ fragment: TextFragment) -> Double {
        if x < fragment.x { return fragment.x - x }
        if x > fragment.x + fragment.width { return x - fragment.x - fragment.width }
        return 0
    }
}

extension TextMeasurer {
    /// The caret stops of `text` shaped as one fragment `widthPx` pixels wide, in `face` (the run's own
    /// when nil): every grapheme boundary with the advance of the text before it, from the positions
    /// HarfBuzz gives the clusters, scaled so that the last stop falls at the fragment's width. A
    /// boundary inside a cluster (a ligature) lies in proportion across it. Without a font, the
    /// placeholder boxes' advances.
    func caretStops(of text: String, run: Int, rightToLeft: Bool, script: TextScript, face: ResolvedFace?,
                    widthPx: Int) -> [CaretStop] {
        var boundaries = [0]
        var position = 0
        for character in text {
            position += character.utf16.count
            boundaries.append(position)
        }
        let handle = face.map { self.handle(face: $0, run: run) } ?? self.handle(run: run)
        var pixels: [Double] = []
        pixels.reserveCapacity(boundaries.count)
        var total = 0.0
        if let handle {
            let units = Array(text.utf16)
            let shaped = handle.clusterAdvances(of: units, rightToLeft: rightToLeft, script: script)
            total = Double(shaped.total)
            var cluster = 0
            for boundary in boundaries {
                guard !shaped.starts.isEmpty else { pixels.append(0); continue }
                while cluster + 1 < shaped.starts.count, shaped.starts[cluster + 1] <= boundary { cluster += 1 }
                let start = shaped.starts[cluster]
                let next = cluster + 1 < shaped.starts.count ? shaped.starts[cluster + 1] : units.count
                let from = Double(shaped.advances[cluster])
                let to = cluster + 1 < shaped.advances.count ? Double(shaped.advances[cluster + 1]) : total
                if boundary <= start {
                    pixels.append(from)
                } else if boundary >= next {
                    pixels.append(to)
                } else {
                    pixels.append(from + (to - from) * Double(boundary - start) / Double(next - start))
                }
            }
        } else {
            for character in text {
                if pixels.isEmpty { pixels.append(0) }
                total += Double(placeholderWidth(of: Substring(String(character)), run: run))
                pixels.append(total)
            }
            if pixels.isEmpty { pixels.append(0) }
        }
        let width = Double(max(0, widthPx))
        var stops: [CaretStop] = []
        stops.reserveCapacity(boundaries.count)
        for (index, boundary) in boundaries.enumerated() {
            let advance: Double
            if index == boundaries.count - 1 {
                advance = width
            } else {
                advance = total > 0 ? min(width, pixels[index] / total * width) : 0
            }
            stops.append(CaretStop(offset: Int32(boundary), advance: Float(advance / scale)))
        }
        return stops
    }
}
