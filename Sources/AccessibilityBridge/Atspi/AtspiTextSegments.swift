import FoundationEssentials
import Glibc
import Dispatch

/// The pieces of an element's text AT-SPI's Text interface asks for by offset: characters, words,
/// sentences and lines, in Unicode scalars (AT-SPI's offsets).
///
/// Words are runs of letters, digits, marks and connecting punctuation (an apostrophe inside a
/// word keeps it whole); sentences end after `.`, `!`, `?` or `…` followed by white space or
/// the end; lines and paragraphs are the text's own lines, split at line breaks (the field's
/// wrapped lines are not in the snapshot, so a wrapped paragraph reads as one line).
/// - Thread: any (a value)
struct AtspiTextSegments {
    let scalars: [Unicode.Scalar]

    init(_ string: String) { scalars = Array(string.unicodeScalars) }

    var count: Int { scalars.count }

    func text(_ range: Range<Int>) -> String {
        let clamped = range.clamped(to: 0..<count)
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[clamped])
        return String(result)
    }

    // MARK: Boundaries (GetTextAtOffset, GetTextBeforeOffset, GetTextAfterOffset)

    /// Where segments of the `boundary` kind start: always 0 and `count` included, sorted.
    func boundaries(_ boundary: Atspi.TextBoundary) -> [Int] {
        var marks: [Int]
        switch boundary {
        case .character: marks = Array(0...count)
        case .wordStart: marks = wordRanges.map(\.lowerBound)
        case .wordEnd: marks = wordRanges.map(\.upperBound)
        case .sentenceStart: marks = sentenceRanges.map(\.lowerBound)
        case .sentenceEnd: marks = sentenceRanges.map { trimmingTrailingSpace($0).upperBound }
        case .lineStart: marks = lineBreaks.map { $0 + 1 }
        case .lineEnd: marks = lineBreaks
        }
        marks.append(0)
        marks.append(count)
        return Array(Set(marks.filter { $0 >= 0 && $0 <= count })).sorted()
    }

    /// The segment of kind `boundary` holding `offset` (`shift` 0: GetTextAtOffset), the one before
    /// it (-1) or the one after (+1): ATK's and AT-SPI's rule, where a segment runs from one boundary
    /// to the next (a word-start segment is a word and the spaces after it). At the end of the text
    /// the last segment holds the offset, except for characters, where nothing does. A segment past
    /// either end is empty there.
    func segment(_ boundary: Atspi.TextBoundary, at offset: Int, shift: Int = 0) -> Range<Int> {
        let marks = boundaries(boundary)
        let segments = zip(marks, marks.dropFirst()).map { $0..<$1 }
        let clamped = min(max(0, offset), count)
        let holding: Int
        if let index = segments.firstIndex(where: { $0.contains(clamped) }) {
            holding = index
        } else {
            // The end of the text: after the last character, or in the last segment.
            holding = boundary == .character ? segments.count : segments.count - 1
        }
        let index = holding + shift
        if index < 0 { return 0..<0 }
        if index >= segments.count { return count..<count }
        return segments[index]
    }

    // MARK: Granularity (GetStringAtOffset)

    /// The piece of `granularity` at `offset`: the character; the word holding it (or the one before,
    /// between words); the sentence or line holding it, without the white space or line break after.
    func piece(_ granularity: Atspi.TextGranularity, at offset: Int) -> Range<Int> {
        let clamped = min(max(0, offset), count)
        switch granularity {
        case .character:
            return clamped < count ? clamped..<(clamped + 1) : count..<count
        case .word:
            let words = wordRanges
            if let inside = words.first(where: { $0.contains(clamped) }) { return inside }
            return words.last(where: { $0.upperBound <= clamped }) ?? clamped..<clamped
        case .sentence:
            return sentenceRanges.first(where: { $0.contains(clamped) || $0.upperBound == clamped && clamped == count })
                .map(trimmingTrailingSpace) ?? clamped..<clamped
        case .line, .paragraph:
            let breaks = lineBreaks
            let start = (breaks.last(where: { $0 < clamped }).map { $0 + 1 }) ?? 0
            let end = breaks.first(where: { $0 >= clamped }) ?? count
            return start..<max(start, end)
        }
    }

    private func trimmingTrailingSpace(_ range: Range<Int>) -> Range<Int> {
        var end = range.upperBound
        while end > range.lowerBound, scalars[end - 1].properties.isWhitespace { end -= 1 }
        return range.lowerBound..<end
    }

    // MARK: Segmentation

    private func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isAlphabetic || properties.numericType != nil { return true }
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation, .decimalNumber: return true
        default: return false
        }
    }

    /// Each word's range, in order.
    var wordRanges: [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start: Int?
        for index in 0..<count {
            let scalar = scalars[index]
            var inWord = isWordScalar(scalar)
            // An apostrophe between two word characters ("don't") belongs to the word.
            if !inWord, start != nil, scalar == "'" || scalar == "\u{2019}", index + 1 < count, isWordScalar(scalars[index + 1]) {
                inWord = true
            }
            if inWord {
                if start == nil { start = index }
            } else if let begun = start {
                ranges.append(begun..<index)
                start = nil
            }
        }
        if let begun = start { ranges.append(begun..<count) }
        return ranges
    }

    /// Each sentence's range: from its first character that is not white space to the character after
    /// its terminating punctuation (or the end), its trailing white space included up to the next.
    var sentenceRanges: [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        while start < count, scalars[start].properties.isWhitespace { start += 1 }
        var index = start
        while index < count {
            let scalar = scalars[index]
            let terminal = scalar == "." || scalar == "!" || scalar == "?" || scalar == "\u{2026}"
            if terminal {
                var end = index + 1
                while end < count, scalars[end] == "." || scalars[end] == "!" || scalars[end] == "?" { end += 1 }
                if end == count || scalars[end].properties.isWhitespace {
                    var next = end
                    while next < count, scalars[next].properties.isWhitespace { next += 1 }
                    ranges.append(start..<next)
                    start = next
                    index = next
                    continue
                }
            }
            index += 1
        }
        if start < count { ranges.append(start..<count) }
        return ranges
    }

    /// The offsets of the line breaks (`\n`, `\r`, U+2028, U+2029).
    var lineBreaks: [Int] {
        scalars.indices.filter { index in
            let scalar = scalars[index]
            return scalar == "\n" || scalar == "\r" || scalar == "\u{2028}" || scalar == "\u{2029}"
        }
    }
}
