import Compositor

/// Measures one text into a `TextLayout`: sections (plain text and blocks), paragraphs, lines, the
/// truncated last line, bidi order and vertical placement. Works in whole pixels at the layout's scale
/// and converts to points at the end.
/// - Thread: the calling thread (it measures with that thread's fonts)
struct TextLayoutBuilder {
    let text: AttributedText
    let options: TextLayoutOptions
    let scale: Double
    let constrainedWidth: Double
    let widthPx: Int
    let measurer: TextMeasurer
    let registry: FontRegistry
    private let lineLimit: Int
    let spacingPx: Int

    private var lines: [TextLine] = []
    private var blocks: [TextBlockFrame] = []
    var y = 0
    var widestPx = 0
    private var lastLineHeightPx = 0
    private var isTruncated = false
    private var stopped = false
    /// Which hard limit cut the text, when one did (not the caller's `maximumNumberOfLines`).
    private var hardLimit: HardLimit?

    private enum HardLimit {
        case lineCount, height
    }
    /// The truncation-token run made for a neighbouring run, by that run.
    private var defaultTokenRuns: [Int: Int] = [:]
    private var customTokenRuns: [Int]?
    /// Places in the runs' strings as UTF-16 offsets of the whole text.
    var offsets: TextOffsets

    /// The tallest text a layout produces, in pixels: no taller bitmap can be made.
    private static let heightLimitPx = Bitmap.maximumSide

    init(text: AttributedText, width: Double, options: TextLayoutOptions, scale: Double, registry: FontRegistry) {
        self.text = text
        self.options = options
        self.scale = scale
        constrainedWidth = width
        // An unconstrained width still wraps at the widest bitmap that can be drawn.
        let limit = Double(Bitmap.maximumSide)
        // A width measured at this scale (whole pixels over the scale) comes back in whole pixels,
        // not a hair under them.
        let pixels = width * scale
        widthPx = Int(min(limit, abs(pixels - pixels.rounded()) < 1e-6 ? pixels.rounded() : pixels.rounded(.down)))
        measurer = TextMeasurer(runs: text.runs.map(\.attributes), registry: registry, scale: scale)
        self.registry = registry
        let requested = options.maximumNumberOfLines > 0 ? options.maximumNumberOfLines : Int.max
        lineLimit = min(requested, TextLayout.maximumLineCount)
        spacingPx = Int((options.sanitizedLineSpacing * scale).rounded())
        offsets = TextOffsets(text: text)
    }

    mutating func build() -> TextLayout {
        guard !text.isEmpty, widthPx > 0 else {
            return TextLayout(constrainedWidth: constrainedWidth, options: options, scale: scale, size: .zero,
                              lines: [], blocks: [], isTruncated: !text.isEmpty, runs: measurer.runs,
                              text: text, fonts: registry)
        }
        let sections = TextSection.sections(of: text)
        for (index, section) in sections.enumerated() where !stopped {
            var paragraphs = ParagraphIterator(text: text, section: section, isFirstSection: index == 0,
                                               isLastSection: index == sections.count - 1)
            let contentFollows = index < sections.count - 1
            if let block = section.block {
                layoutBlock(block, section: section, paragraphs: &paragraphs, isFirst: index == 0,
                            contentFollows: contentFollows)
            } else {
                layoutParagraphs(&paragraphs, insetLeft: 0, insetRight: 0, blockIndex: nil, blockLimit: nil,
                                 contentFollows: contentFollows)
            }
        }
        let size = Size(width: Double(min(widestPx, widthPx)) / scale, height: Double(y) / scale)
        return TextLayout(constrainedWidth: constrainedWidth, options: options, scale: scale, size: size,
                          lines: lines, blocks: blocks, isTruncated: isTruncated, runs: measurer.runs,
                          text: text, fonts: registry, diagnostics: hardLimitDiagnostics())
    }

    /// The report of a hard limit that cut the text; the message is the same for every text, so the
    /// log shows it once per process.
    private func hardLimitDiagnostics() -> [LayoutDiagnostic] {
        switch hardLimit {
        case nil:
            return []
        case .lineCount:
            return [LayoutDiagnostic(.lineLimit, "TextLayout",
                                     "text longer than \(TextLayout.maximumLineCount) lines (TextLayout.maximumLineCount) is cut there; the last line ends in the truncation token")]
        case .height:
            return [LayoutDiagnostic(.lineLimit, "TextLayout",
                                     "text taller than \(TextLayoutBuilder.heightLimitPx) pixels (Bitmap.maximumSide) is cut at the last line that fits; it ends in the truncation token")]
        }
    }

    // MARK: - Lines

    var isAttachmentRun: (Int) -> Bool { { [runs = measurer.runs] in runs[$0].attachment != nil } }

    /// Lays out paragraphs one line at a time until they end or a limit is reached.
    private mutating func layoutParagraphs(_ paragraphs: inout ParagraphIterator, insetLeft: Int, insetRight: Int,
                                           blockIndex: Int?, blockLimit: Int?, contentFollows: Bool) {
        let available = max(1, widthPx - insetLeft - insetRight)
        var linesInSection = 0
        while let paragraph = paragraphs.next() {
            let analysis = ParagraphAnalysis(pieces: paragraph.pieces, isAttachmentRun: isAttachmentRun, resolvingLevels: true)
            let rightToLeft = analysis.isRightToLeft
            var breaker = ParagraphLineBreaker(analysis: analysis, paragraphRun: paragraph.run,
                                               paragraphStart: TextSourceIndex(run: paragraph.run, index: paragraph.start),
                                               width: available, measurer: measurer)
            while let draft = breaker.nextLine() {
                let moreInSection = breaker.hasMoreContent() || paragraphs.hasNext()
                let layoutFull = lines.count + 1 >= lineLimit
                    || y + 2 * lastLineHeightPx + spacingPx >= TextLayoutBuilder.heightLimitPx
                let blockFull = blockLimit.map { linesInSection + 1 >= $0 } ?? false
                var line = draft
                var truncatesHere = false
                if layoutFull && (moreInSection || contentFollows) {
                    line = truncated(draft, paragraph: paragraph, rightToLeft: rightToLeft, mode: options.truncationMode,
                                     available: available)
                    truncatesHere = true
                    stopped = true
                    if !(options.maximumNumberOfLines > 0 && lines.count + 1 >= options.maximumNumberOfLines) {
                        hardLimit = lines.count + 1 >= TextLayout.maximumLineCount ? .lineCount : .height
                    }
                } else if blockFull && moreInSection {
                    line = truncated(draft, paragraph: paragraph, rightToLeft: rightToLeft, mode: .end, available: available)
                    truncatesHere = true
                }
                if linesInSection > 0 { y += spacingPx }
                lines.append(makeLine(line, rightToLeft: rightToLeft, insetLeft: insetLeft, insetRight: insetRight,
                                      blockIndex: blockIndex, isTruncated: truncatesHere))
                linesInSection += 1
                if truncatesHere {
                    isTruncated = true
                    return
                }
            }
        }
    }

    /// Orders a line's segments visually, merges them into fragments, measures it and places it at the
    /// current height, which it advances.
    mutating func makeLine(_ draft: LineDraft, rightToLeft: Bool, insetLeft: Int, insetRight: Int,
                                   blockIndex: Int?, isTruncated: Bool) -> TextLine {
        let pieces = measurer.shape(draft.segments, paragraphIsRightToLeft: rightToLeft)
        TextWorkCounters.countLaidOut(draft.segments.reduce(0) { $0 + $1.text.utf16.count })

        var ascent = 0, descent = 0
        func include(run: Int) {
            let metrics = measurer.metrics(run: run)
            ascent = max(ascent, metrics.ascent)
            descent = max(descent, max(metrics.descent, metrics.lineSkip - metrics.ascent))
        }
        var fragments: [TextFragment] = []
        var x = 0
        for index in Bidi.visualOrder(levels: pieces.map(\.level)) {
            let piece = pieces[index]
            let width = piece.width
            if piece.isAttachment {
                let attachment = measurer.runs[piece.run].attachment
                let boxHeight = Int(((attachment?.sanitizedSize.height ?? 0) * scale).rounded())
                let offset = Int(((attachment?.sanitizedBaselineOffset ?? 0) * scale).rounded())
                ascent = max(ascent, boxHeight + offset)
                descent = max(descent, -offset)
            }
            include(run: piece.run)
            var fragment = TextFragment(text: piece.text, run: piece.run, x: Double(x) / scale, width: Double(width) / scale,
                                        isRightToLeft: piece.level % 2 == 1, script: piece.script,
                                        isAttachment: piece.isAttachment, face: piece.face, source: piece.source)
            if let source = piece.source, let lower = offsets.offset(of: TextSourceIndex(run: piece.run, index: source.lowerBound)) {
                let string = text.runs[piece.run].text
                fragment.textRange = lower..<(lower + string.utf16.distance(from: source.lowerBound, to: source.upperBound))
                if options.recordsCaretPositions && !piece.isAttachment {
                    fragment.caretStops = measurer.caretStops(of: piece.text, run: piece.run, rightToLeft: fragment.isRightToLeft,
                                                              script: piece.script, face: piece.face, widthPx: width)
                }
            }
            fragments.append(fragment)
            x += width
        }
        if fragments.isEmpty { include(run: draft.fallbackRun) }

        let alignment: Double
        switch options.alignment {
        case .left: alignment = 0
        case .center: alignment = 0.5
        case .right: alignment = 1
        case .natural: alignment = rightToLeft ? 1 : 0
        }
        let start = draft.start.flatMap { offsets.offset(of: $0) }
        let end = draft.end.flatMap { offsets.offset(of: $0) }
        let line = TextLine(top: Double(y) / scale, height: Double(ascent + descent) / scale,
                            baseline: Double(y + ascent) / scale, width: Double(x) / scale,
                            isRightToLeft: rightToLeft, isTruncated: isTruncated, blockIndex: blockIndex,
                            alignment: alignment, insetLeft: Double(insetLeft) / scale,
                            insetRight: Double(insetRight) / scale, fragments: fragments, ascent: Double(ascent) / scale,
                            sourceStart: draft.start, sourceEnd: draft.end,
                            textRange: start.map { $0..<max($0, end ?? $0) })
        y += ascent + descent
        lastLineHeightPx = ascent + descent
        widestPx = max(widestPx, insetLeft + x + insetRight)
        return line
    }

    // MARK: - Blocks

    private mutating func layoutBlock(_ block: TextBlock, section: TextSection, paragraphs: inout ParagraphIterator,
                                      isFirst: Bool, contentFollows: Bool) {
        let padding = TextBlockFrame.padding
        func px(_ points: Double) -> Int { Int((points * scale).rounded()) }
        if !isFirst { y += px(TextBlockFrame.margin) }
        let top = y
        y += px(padding.top)
        // The block's direction is its first paragraph's.
        var probe = paragraphs
        let rightToLeft = probe.next().map { ParagraphAnalysis.isRightToLeft($0.pieces, isAttachmentRun: isAttachmentRun) } ?? false
        let leading = px(padding.left), trailing = px(padding.right)
        let insetLeft = rightToLeft ? trailing : leading
        let insetRight = rightToLeft ? leading : trailing

        var title: TextLine?
        if let titleText = block.title, !titleText.isEmpty {
            var attributes = TextAttributes(font: text.runs[section.runs.lowerBound].attributes.font, color: block.tint)
            attributes.font.isBold = true
            let run = measurer.addRun(attributes)
            let clean = AttributedText.sanitized(titleText.split(whereSeparator: \.isNewline).joined(separator: " "))
            let available = max(1, widthPx - insetLeft - insetRight)
            var pieces = [TextPiece(run: run, text: clean[...])]
            var segments = TextFitting.prefix(of: pieces, available: available, measurer: measurer)
            if segments.reduce(0, { $0 + $1.text.count }) < clean.count {
                let token = tokenSegments(neighbour: run)
                pieces = [TextPiece(run: run, text: clean[...])]
                segments = TextFitting.prefix(of: pieces, available: max(0, available - token.reduce(0) { $0 + $1.width }),
                                              measurer: measurer) + token
            }
            title = makeLine(LineDraft(segments: segments, fallbackRun: run), rightToLeft: rightToLeft,
                             insetLeft: insetLeft, insetRight: insetRight, blockIndex: blocks.count, isTruncated: false)
            y += px(2)
        }

        let linesBefore = lines.count
        let wasTruncated = isTruncated
        isTruncated = false
        layoutParagraphs(&paragraphs, insetLeft: insetLeft, insetRight: insetRight, blockIndex: blocks.count,
                         blockLimit: block.isCollapsed ? max(1, block.collapsedLineLimit) : nil,
                         contentFollows: contentFollows)
        let hidesLines = isTruncated && lines.count > linesBefore
        isTruncated = wasTruncated || isTruncated
        y += px(padding.bottom)
        blocks.append(TextBlockFrame(block: block, top: Double(top) / scale, height: Double(y - top) / scale,
                                     isRightToLeft: rightToLeft, hidesLines: hidesLines, title: title))
        if contentFollows && !stopped { y += px(TextBlockFrame.margin) }
    }

    // MARK: - Truncation

    /// The line that replaces `draft` when text after it is left out: the text from the line's start
    /// cut to fit with the token, as `mode` says.
    private mutating func truncated(_ draft: LineDraft, paragraph: TextParagraph, rightToLeft: Bool,
                                    mode: TruncationMode, available: Int) -> LineDraft {
        let startRun = draft.segments.first?.run ?? paragraph.run
        let startIndex = draft.segments.first?.text.startIndex ?? paragraph.start
        // No line can show more characters than it has pixels (plus a little for zero-width marks).
        let characterLimit = min(4_096, available + 16)
        let head = piecesOfParagraph(paragraph, from: (startRun, startIndex), characterLimit: characterLimit)
        var front: [TextSegment] = [], back: [TextSegment] = []
        let token: [TextSegment]
        switch mode {
        case .end:
            token = tokenSegments(neighbour: draft.segments.last?.run ?? paragraph.run)
            let room = max(0, available - token.reduce(0) { $0 + $1.width })
            front = TextFitting.prefix(of: head, available: room, measurer: measurer)
        case .start:
            let tail = tailPieces(after: (startRun, startIndex), characterLimit: characterLimit)
            token = tokenSegments(neighbour: tail.first?.run ?? startRun)
            let room = max(0, available - token.reduce(0) { $0 + $1.width })
            back = TextFitting.suffix(of: tail, available: room, measurer: measurer)
        case .middle:
            token = tokenSegments(neighbour: startRun)
            let room = max(0, available - token.reduce(0) { $0 + $1.width })
            front = TextFitting.prefix(of: head, available: room / 2, measurer: measurer)
            let used = front.reduce(0) { $0 + $1.width }
            let boundary = front.last.map { ($0.run, $0.text.endIndex) } ?? (startRun, startIndex)
            let tail = tailPieces(after: boundary, characterLimit: characterLimit)
            back = TextFitting.suffix(of: tail, available: room - used, measurer: measurer)
        }
        // Shaped together the pieces can come out wider than measured apart: give back characters
        // (from the end of the front, or the start of the back) until the line fits.
        for _ in 0..<32 {
            let shaped = measurer.shape(front + token + back, paragraphIsRightToLeft: rightToLeft)
            guard shaped.reduce(0, { $0 + $1.width }) > available else { break }
            if mode == .start || front.isEmpty {
                guard TextFitting.dropFirstCharacter(of: &back, measurer: measurer) else { break }
            } else {
                guard TextFitting.dropLastCharacter(of: &front, measurer: measurer) else { break }
            }
        }
        return LineDraft(segments: front + token + back, fallbackRun: draft.fallbackRun, emptyPosition: draft.start)
    }

    /// The paragraph's text from `position` to its end, at most `characterLimit` characters.
    private func piecesOfParagraph(_ paragraph: TextParagraph, from position: (run: Int, index: String.Index),
                                   characterLimit: Int) -> [TextPiece] {
        var result: [TextPiece] = []
        var remaining = characterLimit
        for piece in paragraph.pieces where remaining > 0 {
            guard piece.run >= position.run else { continue }
            var text = piece.text
            if piece.run == position.run {
                guard position.index < text.endIndex else { continue }
                if position.index > text.startIndex { text = text[position.index...] }
            }
            let taken = text.prefix(remaining)
            remaining -= taken.count
            result.append(TextPiece(run: piece.run, text: taken))
        }
        return result
    }

    /// The last characters of the whole text after `boundary` (at most `characterLimit`), newlines as
    /// spaces.
    private func tailPieces(after boundary: (run: Int, index: String.Index), characterLimit: Int) -> [TextPiece] {
        var result: [TextPiece] = []
        var remaining = characterLimit
        var runIndex = text.runs.count - 1
        while runIndex >= boundary.run && remaining > 0 {
            let run = text.runs[runIndex]
            var available = run.text[...]
            if runIndex == boundary.run {
                guard boundary.index < available.endIndex else { break }
                available = available[boundary.index...]
            }
            let taken = available.suffix(remaining)
            remaining -= taken.count
            if run.attributes.attachment != nil {
                result.insert(TextPiece(run: runIndex, text: taken), at: 0)
            } else {
                var parts: [TextPiece] = []
                for (index, line) in ParagraphIterator.lines(of: taken).enumerated() {
                    if index > 0 { parts.append(TextPiece(run: runIndex, text: " ")) }
                    parts.append(TextPiece(run: runIndex, text: line))
                }
                result.insert(contentsOf: parts, at: 0)
            }
            runIndex -= 1
        }
        return result
    }

    /// The measured segments of the truncation token: the custom one, or "…" in the attributes of
    /// `neighbour` without link, spoiler, attachment or background.
    private mutating func tokenSegments(neighbour: Int) -> [TextSegment] {
        let runs: [Int]
        if let token = options.truncationToken, !token.isEmpty {
            if customTokenRuns == nil { customTokenRuns = token.runs.map { measurer.addRun($0.attributes) } }
            runs = customTokenRuns!
            let pieces = zip(runs, token.runs).map { TextPiece(run: $0, text: $1.text[...]) }
            var stream = SegmentStream(pieces: pieces) { [all = measurer.runs] in all[$0].attachment != nil }
            var segments: [TextSegment] = []
            while let raw = stream.next() { segments.append(measurer.measured(raw)) }
            return segments
        }
        let run: Int
        if let known = defaultTokenRuns[neighbour] {
            run = known
        } else {
            var attributes = measurer.runs[min(neighbour, measurer.runs.count - 1)]
            attributes.link = nil
            attributes.isSpoiler = false
            attributes.attachment = nil
            attributes.backgroundColor = nil
            run = measurer.addRun(attributes)
            defaultTokenRuns[neighbour] = run
        }
        return [measurer.measured(TextSegment(run: run, text: "…", kind: .word, bidi: .neutral, script: .common, width: 0))]
    }
}
