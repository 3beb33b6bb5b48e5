// Cutting a text's runs into sections (plain text, or one quote or code block) and sections into
// paragraphs, lazily: a megabyte of text is scanned only as far as lines are laid out.

/// Consecutive runs with equal `block` values.
struct TextSection {
    var block: TextBlock?
    var runs: Range<Int>

    static func sections(of text: AttributedText) -> [TextSection] {
        let runs = text.runs
        guard !runs.isEmpty else { return [] }
        var sections: [TextSection] = []
        var start = 0
        for index in 1...runs.count where index == runs.count || runs[index].attributes.block != runs[start].attributes.block {
            sections.append(TextSection(block: runs[start].attributes.block, runs: start..<index))
            start = index
        }
        return sections
    }
}

/// One paragraph: its pieces (one per run it spans), where it starts, and the run that gives an empty
/// paragraph its height.
struct TextParagraph {
    var pieces: [TextPiece]
    var run: Int
    var start: String.Index
    var isEmpty: Bool { pieces.isEmpty }
}

/// The paragraphs of one section, one at a time, with one paragraph of lookahead.
///
/// The newline that separates a section from its neighbour belongs to the boundary: it does not also
/// make an empty first paragraph (after a block) or an empty last one (before a block).
struct ParagraphIterator {
    private let text: AttributedText
    private let runs: Range<Int>
    private let dropsLeadingEmpty: Bool
    private let dropsTrailingEmpty: Bool
    private var runIndex: Int
    private var position: String.Index?
    private var lookahead: TextParagraph??
    private var isFirst = true

    init(text: AttributedText, section: TextSection, isFirstSection: Bool, isLastSection: Bool) {
        self.text = text
        runs = section.runs
        runIndex = section.runs.lowerBound
        dropsLeadingEmpty = !isFirstSection
        dropsTrailingEmpty = !isLastSection
    }

    /// The next paragraph, or nil at the end of the section.
    mutating func next() -> TextParagraph? {
        while true {
            guard let paragraph = take() else { return nil }
            let first = isFirst
            isFirst = false
            if paragraph.isEmpty {
                let hasNext = peek() != nil
                if first && dropsLeadingEmpty && hasNext { continue }
                if !first && dropsTrailingEmpty && !hasNext { return nil }
            }
            return paragraph
        }
    }

    /// True when `next()` would return a paragraph.
    mutating func hasNext() -> Bool {
        guard let upcoming = peek() else { return false }
        if upcoming.isEmpty && dropsTrailingEmpty && !isFirst {
            // Only a trailing empty paragraph is left when nothing follows it.
            var copy = self
            _ = copy.take()
            return copy.peek() != nil
        }
        return true
    }

    private mutating func peek() -> TextParagraph? {
        if lookahead == nil { lookahead = .some(scan()) }
        return lookahead!
    }

    private mutating func take() -> TextParagraph? {
        let paragraph = peek()
        lookahead = nil
        return paragraph
    }

    /// Reads up to the next newline (across runs) or the end of the section.
    private mutating func scan() -> TextParagraph? {
        guard runIndex < runs.upperBound else { return nil }
        var paragraph: TextParagraph?
        while runIndex < runs.upperBound {
            let run = text.runs[runIndex]
            let start = position ?? run.text.startIndex
            if paragraph == nil { paragraph = TextParagraph(pieces: [], run: runIndex, start: start) }
            if run.attributes.attachment != nil {
                paragraph!.pieces.append(TextPiece(run: runIndex, text: run.text[...]))
                runIndex += 1
                position = nil
                continue
            }
            let rest = run.text[start...]
            if let separator = ParagraphIterator.firstSeparator(in: rest) {
                if separator.lowerBound > start {
                    paragraph!.pieces.append(TextPiece(run: runIndex, text: run.text[start..<separator.lowerBound]))
                }
                position = separator.upperBound
                return paragraph
            }
            if !rest.isEmpty { paragraph!.pieces.append(TextPiece(run: runIndex, text: rest)) }
            runIndex += 1
            position = nil
        }
        return paragraph
    }

    /// The first newline in `text` (`\n`, `\r\n`, `\r`, VT, FF, NEL, U+2028, U+2029), found on UTF-8
    /// bytes, which is much faster than walking characters.
    static func firstSeparator(in text: Substring) -> Range<String.Index>? {
        let utf8 = text.utf8
        // Native strings expose their bytes: scan them through a pointer, then turn offsets into indices.
        let found: (start: Int, length: Int)?? = utf8.withContiguousStorageIfAvailable { bytes in
            separator(in: bytes.count) { bytes[$0] }
        }
        let offsets = found ?? separator(in: utf8.count) { utf8[utf8.index(utf8.startIndex, offsetBy: $0)] }
        guard let offsets else { return nil }
        let start = utf8.index(utf8.startIndex, offsetBy: offsets.start)
        return start..<utf8.index(start, offsetBy: offsets.length)
    }

    /// The offset and length of the first newline among `count` bytes.
    @inline(__always)
    private static func separator(in count: Int, byte: (Int) -> UInt8) -> (start: Int, length: Int)? {
        var i = 0
        while i < count {
            switch byte(i) {
            case 0x0A, 0x0B, 0x0C:
                return (i, 1)
            case 0x0D:
                return (i, i + 1 < count && byte(i + 1) == 0x0A ? 2 : 1)
            case 0xC2:
                if i + 1 < count && byte(i + 1) == 0x85 { return (i, 2) }
            case 0xE2:
                if i + 2 < count && byte(i + 1) == 0x80 && (byte(i + 2) == 0xA8 || byte(i + 2) == 0xA9) { return (i, 3) }
            default:
                break
            }
            i += 1
        }
        return nil
    }

    /// The pieces of `text` between newlines.
    static func lines(of text: Substring) -> [Substring] {
        var result: [Substring] = []
        var rest = text
        while let separator = firstSeparator(in: rest) {
            result.append(rest[..<separator.lowerBound])
            rest = rest[separator.upperBound...]
        }
        result.append(rest)
        return result
    }
}
