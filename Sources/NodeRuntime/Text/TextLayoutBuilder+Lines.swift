import Compositor

// Breaking one line from where it starts, for `TextLineIndex`: the line's end depends only on the text
// from its start (a bounded stretch of it is analysed), so a view can lay out any line of a long text
// without the lines before it, and an edit breaks again only the lines it reaches.

/// The line that starts at one place, and where the next one starts.
struct LineFromStart {
    var draft: LineDraft
    /// Where the next line starts (UTF-16 offset); nil when this line ends the text.
    var next: Int?
    /// Whether the next line starts a paragraph.
    var nextStartsParagraph: Bool
    /// The direction of this line's paragraph.
    var paragraphIsRightToLeft: Bool
    /// The UTF-16 units of text the line holds, spaces and newline included.
    var length: Int
}

extension TextLayoutBuilder {
    /// The UTF-16 units a line's analysis covers from the line's start (line-break opportunities and
    /// bidi levels): enough for a line of the narrowest characters at this width, so a line ends at
    /// the opportunities UAX #14 gives; a line of zero-width characters longer than that breaks after
    /// spaces only. The same for every line of a text at one width, so breaking stays a function of
    /// the line's start.
    var lineAnalysisHorizon: Int {
        let pixelSize = measurer.runs.map { measurer.pixelSize(of: $0.effectiveFont) }.min() ?? 1
        return min(ParagraphAnalysis.limit, max(256, 8 * widthPx / max(1, pixelSize) + 64))
    }

    /// The most UTF-16 units one line can hold (its paragraph's text is read that far).
    static let lineTextLimit = ParagraphAnalysis.limit

    /// The line that starts at `start` (a UTF-16 offset where a line starts: the text's start, a
    /// paragraph's start, or where the line before ends), broken as `ParagraphLineBreaker` breaks it,
    /// from the text after `start` alone. `rightToLeft` is the paragraph's direction when `start` is
    /// inside it; a paragraph's first line finds it (P2, P3).
    mutating func line(startingAt start: Int, startsParagraph: Bool, rightToLeft: Bool?) -> LineFromStart {
        let read = paragraphText(from: start)
        let available = max(1, widthPx)
        let direction = startsParagraph || rightToLeft == nil
            ? ParagraphAnalysis.isRightToLeft(read.pieces, isAttachmentRun: isAttachmentRun) : rightToLeft!
        let analysis = ParagraphAnalysis(pieces: read.pieces, isAttachmentRun: isAttachmentRun, resolvingLevels: true,
                                         direction: direction, limit: lineAnalysisHorizon)
        var breaker = ParagraphLineBreaker(analysis: analysis, paragraphRun: read.run, paragraphStart: read.place,
                                           width: available, measurer: measurer)
        let draft = breaker.nextLine() ?? LineDraft(segments: [], fallbackRun: read.run, emptyPosition: read.place)
        let end = draft.segments.last.flatMap { offsets.offset(of: TextSourceIndex(run: $0.run, index: $0.text.endIndex)) } ?? start
        var result = LineFromStart(draft: draft, next: nil, nextStartsParagraph: false, paragraphIsRightToLeft: direction,
                                   length: end - start)
        if breaker.hasMoreContent() {
            result.next = max(end, start + 1)
        } else if read.isCut {
            result.next = max(read.end, start + 1)
        } else if let following = read.nextParagraph {
            result.next = following
            result.nextStartsParagraph = true
            result.length = following - start
        }
        TextWorkCounters.countLaidOut(result.length)
        return result
    }

    /// The text of the paragraph from `start` on, as pieces of its runs, read at most `lineTextLimit`
    /// units far: where it ends (the newline's start), whether the limit cut it, and where the next
    /// paragraph starts (after the newline; nil when the text ends).
    private mutating func paragraphText(from start: Int)
        -> (pieces: [TextPiece], run: Int, place: TextSourceIndex, end: Int, isCut: Bool, nextParagraph: Int?) {
        let runs = text.runs
        let runStarts = offsets.runStarts
        let total = runStarts.last ?? 0
        // The run holding `start` (the last run when `start` is the text's end).
        var low = 0, high = max(0, runs.count - 1)
        while low < high {
            let mid = (low + high + 1) / 2
            if runStarts[mid] <= start { low = mid } else { high = mid - 1 }
        }
        var runIndex = low
        guard runIndex < runs.count else {
            return ([], 0, TextSourceIndex(run: 0, index: "".startIndex), start, false, nil)
        }
        let firstString = runs[runIndex].text
        var index = firstString.utf16.index(firstString.startIndex, offsetBy: min(max(0, start - runStarts[runIndex]), firstString.utf16.count))
        if index == firstString.endIndex, runIndex + 1 < runs.count {
            runIndex += 1
            index = runs[runIndex].text.startIndex
        }
        let place = TextSourceIndex(run: runIndex, index: index)
        let paragraphRun = runIndex
        var pieces: [TextPiece] = []
        var remaining = Self.lineTextLimit
        var position = start
        while runIndex < runs.count {
            let run = runs[runIndex]
            let string = run.text
            let from = runIndex == place.run ? index : string.startIndex
            if run.attributes.attachment != nil {
                pieces.append(TextPiece(run: runIndex, text: string[from...]))
                position += string.utf16.distance(from: from, to: string.endIndex)
                runIndex += 1
                continue
            }
            // At most `remaining` bytes, so at most as many UTF-16 units; the cut is moved back to a
            // scalar's start.
            let utf8 = string.utf8
            var limit = utf8.index(from, offsetBy: min(remaining, utf8.distance(from: from, to: string.endIndex)))
            while limit < string.endIndex, UTF8.isContinuation(utf8[limit]) { limit = utf8.index(before: limit) }
            let stretch = string[from..<limit]
            if let separator = ParagraphIterator.firstSeparator(in: stretch) {
                if separator.lowerBound > from { pieces.append(TextPiece(run: runIndex, text: string[from..<separator.lowerBound])) }
                let end = position + string.utf16.distance(from: from, to: separator.lowerBound)
                let next = end + string.utf16.distance(from: separator.lowerBound, to: separator.upperBound)
                return (pieces, paragraphRun, place, end, false, next)
            }
            let units = string.utf16.distance(from: from, to: limit)
            if !stretch.isEmpty { pieces.append(TextPiece(run: runIndex, text: stretch)) }
            position += units
            remaining -= units
            if limit < string.endIndex || remaining <= 0 {
                return (pieces, paragraphRun, place, position, position < total, nil)
            }
            runIndex += 1
        }
        return (pieces, paragraphRun, place, position, false, nil)
    }

    /// Whether the paragraph that starts at `start` runs right to left (P2, P3 over its first 4,096
    /// units).
    mutating func paragraphIsRightToLeft(at start: Int) -> Bool {
        ParagraphAnalysis.isRightToLeft(paragraphText(from: start).pieces, isAttachmentRun: isAttachmentRun)
    }

    /// The height of every line in pixels (one font: each line's tallest run), for a text of one font.
    var uniformLineHeightPx: Int {
        var height = 0
        for run in measurer.runs.indices {
            let metrics = measurer.metrics(run: run)
            height = max(height, metrics.ascent + max(metrics.descent, metrics.lineSkip - metrics.ascent))
        }
        return height
    }

    /// Lays out `line` as the line `top` pixels from the top of the text.
    mutating func placeLine(_ line: LineFromStart, atPixel top: Int) -> TextLine {
        y = top
        return makeLine(line.draft, rightToLeft: line.paragraphIsRightToLeft, insetLeft: 0, insetRight: 0, blockIndex: nil,
                        isTruncated: false)
    }

    /// A layout holding `lines` (some of the text's lines, placed where they are in the whole text)
    /// for a text `heightPx` pixels tall.
    func windowLayout(_ lines: [TextLine], heightPx: Int) -> TextLayout {
        let size = Size(width: Double(min(widestPx, widthPx)) / scale, height: Double(heightPx) / scale)
        return TextLayout(constrainedWidth: constrainedWidth, options: options, scale: scale, size: size, lines: lines,
                          blocks: [], isTruncated: false, runs: measurer.runs, text: text, fonts: registry)
    }
}
