// Greedy line breaking by words across runs, and the fitting of text into a truncated line.
// All widths here are whole pixels at the layout's scale, so lines add up exactly.

/// A line before bidi reordering: its segments in logical order, spaces at the end included.
struct LineDraft {
    var segments: [TextSegment]
    /// The run a line without segments takes its height from.
    var fallbackRun: Int
    /// Where a line without segments sits in the text: its paragraph's start.
    var emptyPosition: TextSourceIndex? = nil

    /// Where the line's text starts in the text.
    var start: TextSourceIndex? {
        segments.first.map { TextSourceIndex(run: $0.run, index: $0.text.startIndex) } ?? emptyPosition
    }
    /// Where the line's text ends in the text (after the spaces that end it).
    var end: TextSourceIndex? {
        segments.last.map { TextSourceIndex(run: $0.run, index: $0.text.endIndex) } ?? emptyPosition
    }
}

/// Breaks one paragraph into lines, one line per call, so that a long paragraph is cut only as far as
/// lines are wanted.
///
/// A "word" is the text between two line-break opportunities (UAX #14, from the segmenter), possibly
/// from several runs in different fonts ("bo" regular + "ld" bold is one word), with the spaces after
/// it; an attachment stands alone. A word wider than the whole line is cut between characters, and a
/// line always takes at least one character, so breaking always advances.
struct ParagraphLineBreaker {
    private var stream: SegmentStream
    private let measurer: TextMeasurer
    private let width: Int
    private let paragraphRun: Int
    private let rightToLeft: Bool
    /// Groups carried over to the next line, in order.
    private var pending: [[TextSegment]] = []
    private var lookahead: TextSegment?
    private var producedLine = false

    /// Where an empty paragraph sits in the text.
    private let paragraphStart: TextSourceIndex?

    /// Breaks an analysed paragraph (its levels resolved, its direction known) that starts at
    /// `paragraphStart` in the text.
    init(analysis: ParagraphAnalysis, paragraphRun: Int, paragraphStart: TextSourceIndex? = nil, width: Int,
         measurer: TextMeasurer) {
        self.paragraphStart = paragraphStart
        stream = SegmentStream(analysis: analysis) { [runs = measurer.runs] in runs[$0].attachment != nil }
        self.measurer = measurer
        self.width = width
        self.paragraphRun = paragraphRun
        self.rightToLeft = analysis.isRightToLeft
    }

    /// True when another call to `nextLine` would return a line with content.
    mutating func hasMoreContent() -> Bool {
        !pending.isEmpty || peek() != nil
    }

    /// The next line, or nil when the paragraph is done. An empty paragraph gives one empty line.
    mutating func nextLine() -> LineDraft? {
        var groups: [[TextSegment]] = []
        var used = 0
        while true {
            let group: [TextSegment]
            if !pending.isEmpty {
                group = pending.removeFirst()
            } else if let next = nextGroup() {
                group = next
            } else {
                break
            }
            // Spaces that end the group hang past the line's end; any inside it count.
            let spaceWidth = group.reversed().prefix { $0.kind == .space }.reduce(0) { $0 + $1.width }
            let wordWidth = group.reduce(0) { $0 + $1.width } - spaceWidth
            if used + wordWidth <= width || (!groups.isEmpty && fitsShaped(groups, adding: group, sum: used + wordWidth)) {
                groups.append(group)
                used += wordWidth + spaceWidth
            } else if groups.isEmpty {
                let (head, rest) = split(group, available: width)
                groups.append(head)
                if !rest.isEmpty { pending.insert(rest, at: 0) }
                break
            } else {
                pending.insert(group, at: 0)
                break
            }
        }
        // Segments were measured one by one, and each measurement rounds: shaped as a line the text can
        // come out a few pixels wider. Give back whole words until the shaped line fits.
        while groups.count > 1 {
            let segments = groups.flatMap { $0 }
            guard measurer.shape(segments, paragraphIsRightToLeft: rightToLeft).reduce(0, { $0 + $1.width }) > width else { break }
            pending.insert(groups.removeLast(), at: 0)
        }
        let line = groups.flatMap { $0 }
        if line.isEmpty && producedLine { return nil }
        producedLine = true
        return LineDraft(segments: line, fallbackRun: line.first?.run ?? paragraphRun, emptyPosition: paragraphStart)
    }

    /// True when the line's groups and `group` (its ending spaces hanging) fit shaped as one line
    /// although the sum of their one-by-one widths does not: each measurement rounds, and a word
    /// shaped beside the one before can be narrower, so a line measured whole (a label's own width)
    /// would otherwise wrap its last word when laid out again at that width. Shaped only when the sum
    /// is over by no more than its rounding could account for (half a pixel a segment).
    private func fitsShaped(_ groups: [[TextSegment]], adding group: [TextSegment], sum: Int) -> Bool {
        let segments = groups.flatMap { $0 } + group.reversed().drop { $0.kind == .space }.reversed()
        guard sum - width <= (segments.count + 1) / 2 else { return false }
        return measurer.shape(segments, paragraphIsRightToLeft: rightToLeft).reduce(0, { $0 + $1.width }) <= width
    }

    private mutating func peek() -> TextSegment? {
        if lookahead == nil, let raw = stream.next() { lookahead = measurer.measured(raw) }
        return lookahead
    }

    private mutating func take() -> TextSegment? {
        let segment = peek()
        lookahead = nil
        return segment
    }

    /// The segments up to the next break opportunity (or an attachment alone), and the spaces after them.
    private mutating func nextGroup() -> [TextSegment]? {
        guard let first = take() else { return nil }
        var group = [first]
        if first.kind != .attachment {
            while !group[group.count - 1].breakAfter, let next = peek(), next.kind != .attachment { group.append(take()!) }
        }
        while let next = peek(), next.kind == .space { group.append(take()!) }
        return group
    }

    /// Cuts a group wider than a line: the head that fits (at least one character) and the rest.
    private func split(_ group: [TextSegment], available: Int) -> ([TextSegment], [TextSegment]) {
        var head: [TextSegment] = []
        var used = 0
        for (index, segment) in group.enumerated() {
            if segment.kind == .space {
                head.append(segment)  // spaces at the end of a line hang past it
                continue
            }
            if used + segment.width <= available {
                head.append(segment)
                used += segment.width
                continue
            }
            if segment.kind == .attachment {
                if head.isEmpty { return ([segment], Array(group[(index + 1)...])) }
                return (head, Array(group[index...]))
            }
            let (prefix, suffix) = TextFitting.splitWord(segment, available: available - used,
                                                          atLeastOne: head.isEmpty, measurer: measurer)
            if let prefix { head.append(prefix) }
            var rest: [TextSegment] = []
            if let suffix { rest.append(suffix) }
            rest.append(contentsOf: group[(index + 1)...])
            return (head, rest)
        }
        return (head, [])
    }
}

/// Text of one run, one embedding level and one script, shaped in one call: a line's fragments
/// before they are put in visual order.
struct ShapedPiece {
    var run: Int
    var level: UInt8
    var script: TextScript
    var text: String
    /// Pixels.
    var width: Int
    var isAttachment: Bool
    /// The fallback face that draws it (nil: the run's own).
    var face: ResolvedFace? = nil
    /// Where its text lies in its run's string (a truncation token's, in the token's).
    var source: Range<String.Index>? = nil
}

extension TextMeasurer {
    /// A line's segments (logical order) resolved to bidi levels, merged into pieces that are shaped
    /// together, and measured as such. Spaces ending the line are left out.
    func shape(_ line: [TextSegment], paragraphIsRightToLeft: Bool) -> [ShapedPiece] {
        var segments = line
        while segments.last?.kind == .space { segments.removeLast() }
        let levels = Bidi.levels(of: segments, paragraphIsRightToLeft: paragraphIsRightToLeft)
        var groups: [(first: Int, end: Int, script: TextScript)] = []
        for (index, segment) in segments.enumerated() {
            if let last = groups.last, segment.kind != .attachment, segments[last.first].kind != .attachment,
               segments[last.first].run == segment.run, levels[last.first] == levels[index],
               last.script.isCompatible(with: segment.script) {
                groups[groups.count - 1] = (last.first, index + 1, last.script.merged(with: segment.script))
            } else {
                groups.append((index, index + 1, segment.script))
            }
        }
        return groups.flatMap { group -> [ShapedPiece] in
            let first = segments[group.first]
            let level = levels[group.first]
            if first.kind == .attachment {
                return [ShapedPiece(run: first.run, level: level, script: group.script, text: String(first.text),
                                    width: first.width, isAttachment: true, source: first.text.startIndex..<first.text.endIndex)]
            }
            let single = group.end - group.first == 1
            let source = first.text.startIndex..<segments[group.end - 1].text.endIndex
            let text = single ? first.text : segments[group.first..<group.end].map(\.text).joined()[...]
            if !needsFallback(text, run: first.run) {
                let width = single ? first.width
                    : self.width(of: text, run: first.run, rightToLeft: level % 2 == 1, script: group.script, face: nil)
                return [ShapedPiece(run: first.run, level: level, script: group.script, text: String(text),
                                    width: width, isAttachment: false, source: source)]
            }
            // Each stretch that a fallback face draws is shaped and measured with that face. A stretch
            // of joined text finds its place in the run's string by its UTF-8 offset.
            let base = first.text.base.utf8
            return faceRuns(of: text, run: first.run).map { stretch in
                let width = group.end - group.first == 1 && stretch.face == nil && stretch.text.count == text.count
                    ? first.width
                    : self.width(of: stretch.text, run: first.run, rightToLeft: level % 2 == 1, script: group.script, face: stretch.face)
                let stretchSource: Range<String.Index>
                if single {
                    stretchSource = stretch.text.startIndex..<stretch.text.endIndex
                } else {
                    let start = base.index(source.lowerBound, offsetBy: text.utf8.distance(from: text.startIndex, to: stretch.text.startIndex))
                    stretchSource = start..<base.index(start, offsetBy: stretch.text.utf8.count)
                }
                return ShapedPiece(run: first.run, level: level, script: group.script, text: String(stretch.text),
                                   width: width, isAttachment: false, face: stretch.face, source: stretchSource)
            }
        }
    }
}

/// Fitting text into a width by whole segments and, for the last one, by characters.
enum TextFitting {
    /// Cuts `segment` (a word) after as many characters as fit in `available` pixels; with `atLeastOne`
    /// the head keeps at least one character even when it does not fit. Either part may be nil.
    static func splitWord(_ segment: TextSegment, available: Int, atLeastOne: Bool,
                          measurer: TextMeasurer) -> (TextSegment?, TextSegment?) {
        let text = segment.text
        let count = text.count
        let rtl = segment.bidi == .rightToLeft
        func width(_ k: Int) -> Int {
            measurer.width(of: text.prefix(k), run: segment.run, rightToLeft: rtl, script: segment.script)
        }
        // The largest k with width(k) <= available; widths grow with k.
        var low = 0, high = count
        while low < high {
            let mid = (low + high + 1) / 2
            if width(mid) <= available { low = mid } else { high = mid - 1 }
        }
        if low == 0 && atLeastOne { low = 1 }
        guard low > 0 else { return (nil, segment) }
        guard low < count else { return (segment, nil) }
        let cut = text.index(text.startIndex, offsetBy: low)
        var head = segment, tail = segment
        head.text = text[..<cut]
        head.width = width(low)
        tail.text = text[cut...]
        tail.width = measurer.width(of: tail.text, run: segment.run, rightToLeft: rtl, script: segment.script)
        return (head, tail)
    }

    /// Cuts `segment` (a word) before as many of its last characters as fit in `available` pixels.
    static func splitWordKeepingEnd(_ segment: TextSegment, available: Int, measurer: TextMeasurer) -> TextSegment? {
        let text = segment.text
        let rtl = segment.bidi == .rightToLeft
        func width(_ k: Int) -> Int {
            measurer.width(of: text.suffix(k), run: segment.run, rightToLeft: rtl, script: segment.script)
        }
        var low = 0, high = text.count
        while low < high {
            let mid = (low + high + 1) / 2
            if width(mid) <= available { low = mid } else { high = mid - 1 }
        }
        guard low > 0 else { return nil }
        var tail = segment
        tail.text = text.suffix(low)
        tail.width = width(low)
        return tail
    }

    /// The segments of `pieces` from the start that fit in `available` pixels, the last word cut
    /// between characters; spaces at the end are dropped.
    static func prefix(of pieces: [TextPiece], available: Int, measurer: TextMeasurer) -> [TextSegment] {
        var stream = SegmentStream(pieces: pieces) { [runs = measurer.runs] in runs[$0].attachment != nil }
        var result: [TextSegment] = []
        var used = 0
        while let raw = stream.next() {
            let segment = measurer.measured(raw)
            if used + segment.width <= available {
                result.append(segment)
                used += segment.width
                continue
            }
            if segment.kind == .word,
               case let (head?, _) = splitWord(segment, available: available - used, atLeastOne: false, measurer: measurer) {
                result.append(head)
            }
            break
        }
        while result.last?.kind == .space { result.removeLast() }
        return result
    }

    /// The segments of `pieces` from the end that fit in `available` pixels, the first word cut
    /// between characters; spaces at the start are dropped.
    static func suffix(of pieces: [TextPiece], available: Int, measurer: TextMeasurer) -> [TextSegment] {
        var stream = SegmentStream(pieces: pieces) { [runs = measurer.runs] in runs[$0].attachment != nil }
        var all: [TextSegment] = []
        while let raw = stream.next() { all.append(measurer.measured(raw)) }
        var result: [TextSegment] = []
        var used = 0
        for segment in all.reversed() {
            if used + segment.width <= available {
                result.append(segment)
                used += segment.width
                continue
            }
            if segment.kind == .word, let tail = splitWordKeepingEnd(segment, available: available - used, measurer: measurer) {
                result.append(tail)
            }
            break
        }
        result.reverse()
        while result.first?.kind == .space { result.removeFirst() }
        return result
    }

    /// Removes the last character of the last segment (the segment, when it has one character left,
    /// and any spaces then ending the list). False when there is nothing to remove.
    static func dropLastCharacter(of segments: inout [TextSegment], measurer: TextMeasurer) -> Bool {
        guard var last = segments.popLast() else { return false }
        if last.kind != .attachment && last.text.count > 1 {
            last.text = last.text.dropLast()
            segments.append(measurer.measured(last))
        }
        while segments.last?.kind == .space { segments.removeLast() }
        return true
    }

    /// Removes the first character of the first segment, as `dropLastCharacter` does at the end.
    static func dropFirstCharacter(of segments: inout [TextSegment], measurer: TextMeasurer) -> Bool {
        guard !segments.isEmpty else { return false }
        var first = segments.removeFirst()
        if first.kind != .attachment && first.text.count > 1 {
            first.text = first.text.dropFirst()
            segments.insert(measurer.measured(first), at: 0)
        }
        while segments.first?.kind == .space { segments.removeFirst() }
        return true
    }
}
