/// Grapheme and word boundaries near one position of a text, found by reading a bounded stretch of
/// it around that position: a caret step in a 100,000-character text reads a few hundred UTF-16 units,
/// as it does in a short one.
///
/// A stretch is read from a place where a boundary is certain whatever precedes it (see
/// `isCertainGraphemeBoundary` and `isCertainWordBoundary`), so the boundaries found after that place
/// are the ones the whole text has. A grapheme stretch also reads two units past its end, which
/// decide whether a cluster goes on; a word stretch ends at a certain place too (ICU cuts a run of
/// Thai or CJK as a whole, so the whole run must be read). A stretch that does not hold the answer
/// grows, twice as far each time. Graphemes are Swift's `Character`s (Unicode's extended grapheme
/// clusters); words are ICU's (UAX #29), as `UnicodeText.wordSegments(in:)` gives them for the whole
/// text.
///
/// The cost is bounded by the window, except in text that offers no certain place near the position:
/// a cluster of thousands of combining marks or flags is read whole (it is one caret step), and words
/// in a stretch of more than `maximumWordStretch` units without a space or a newline (CJK or Thai
/// prose) are looked up from a stretch that starts at an uncertain place, where ICU's dictionary may
/// cut the first words of the stretch otherwise than it would cut them in the whole text.
/// - Thread: any (a value over an immutable string)
struct TextBoundaries {
    let text: String
    /// The text's length in UTF-16 units.
    let length: Int

    /// The stretch a grapheme step reads on each side of the position at first.
    static let graphemeWindow = 32
    /// The stretch a word step reads at a time, looking for a certain place on each side.
    static let wordWindow = 64
    /// How far a word step looks for a certain place before it settles for an uncertain one.
    static let maximumWordStretch = 512

    init(_ text: String) {
        self.text = text
        length = text.utf16.count
    }

    // MARK: - Graphemes

    /// The first grapheme boundary after `offset` (the text's length at its end).
    func graphemeBoundary(after offset: Int, window: Int = graphemeWindow) -> Int {
        let offset = clamped(offset)
        guard offset < length else { return length }
        var window = max(1, window)
        let start = certainGraphemeStart(atOrBefore: offset, window: window)
        while true {
            let end = min(length, offset + window)
            if let found = graphemeBoundaries(from: start, to: end).first(where: { $0 > offset }) { return found }
            if end == length { return length }
            window *= 2
        }
    }

    /// The last grapheme boundary before `offset` (0 at the start).
    func graphemeBoundary(before offset: Int, window: Int = graphemeWindow) -> Int {
        let offset = clamped(offset)
        guard offset > 0 else { return 0 }
        let start = certainGraphemeStart(atOrBefore: offset - 1, window: max(1, window))
        return graphemeBoundaries(from: start, to: offset).last { $0 < offset } ?? start
    }

    /// `offset` moved down to the nearest grapheme boundary (itself when it is one).
    func graphemeBoundary(atOrBefore offset: Int, window: Int = graphemeWindow) -> Int {
        let offset = clamped(offset)
        guard offset > 0, offset < length else { return offset }
        let start = certainGraphemeStart(atOrBefore: offset, window: max(1, window))
        guard start < offset else { return start }
        return graphemeBoundaries(from: start, to: offset).last ?? start
    }

    /// The cluster boundaries from `start` (a certain boundary) up to `end`, both included when they
    /// are boundaries: the units just after `end` are read too, so whether a cluster goes on through
    /// `end` is decided as it is in the whole text.
    private func graphemeBoundaries(from start: Int, to end: Int) -> [Int] {
        let units = read(start..<min(length, end + 2))
        var boundaries = [start]
        var position = start
        for character in String(decoding: units, as: UTF16.self) {
            position += character.utf16.count
            if position > end { break }
            boundaries.append(position)
        }
        return boundaries
    }

    /// The nearest place at or before `offset` where a cluster certainly starts, searching back
    /// `window` units and then twice as far each time (to the text's start at worst).
    private func certainGraphemeStart(atOrBefore offset: Int, window: Int) -> Int {
        if offset <= 0 { return 0 }
        if offset >= length { return length }
        var high = offset
        var window = window
        while true {
            let low = max(1, offset - window)
            if low <= high {
                let base = low - 1
                let units = read(base..<(high + 1))
                var position = high
                while position >= low {
                    if Self.isCertainGraphemeBoundary(units[position - 1 - base], units[position - base]) { return position }
                    position -= 1
                }
            }
            if low == 1 { return 0 }
            high = low - 1
            window *= 2
        }
    }

    // MARK: - Words

    /// The end of the first word that ends after `offset` (Ctrl+→), or the text's length when none does.
    func wordEnd(after offset: Int, window: Int = wordWindow) -> Int {
        let offset = clamped(offset)
        guard offset < length else { return length }
        let start = certainWordBoundary(atOrBefore: offset, window: window)
        var end = certainWordBoundary(after: offset, window: window)
        while true {
            if let word = wordSegments(start..<end).first(where: { $0.isWord && $0.range.upperBound > offset }) {
                return word.range.upperBound
            }
            if end == length { return length }
            end = certainWordBoundary(after: end, window: window)
        }
    }

    /// The start of the last word that starts before `offset` (Ctrl+←), or 0 when none does.
    func wordStart(before offset: Int, window: Int = wordWindow) -> Int {
        let offset = clamped(offset)
        guard offset > 0 else { return 0 }
        let end = offset == length ? length : certainWordBoundary(atOrAfter: offset, window: window)
        var start = certainWordBoundary(atOrBefore: offset - 1, window: window)
        while true {
            if let word = wordSegments(start..<end).last(where: { $0.isWord && $0.range.lowerBound < offset }) {
                return word.range.lowerBound
            }
            if start == 0 { return 0 }
            start = certainWordBoundary(atOrBefore: start - 1, window: window)
        }
    }

    /// The word or the stretch between words that holds `offset` (what a double click selects); at the
    /// text's end, the last one.
    func segment(around offset: Int, window: Int = wordWindow) -> Range<Int> {
        let offset = clamped(offset)
        guard length > 0 else { return 0..<0 }
        let probe = min(offset, length - 1)
        let start = certainWordBoundary(atOrBefore: probe, window: window)
        let end = certainWordBoundary(after: probe, window: window)
        let segments = wordSegments(start..<end)
        return segments.first { $0.range.contains(probe) }?.range ?? segments.last?.range ?? offset..<offset
    }

    /// ICU's word segments of the text's `range`, in the text's offsets.
    private func wordSegments(_ range: Range<Int>) -> [(range: Range<Int>, isWord: Bool)] {
        guard !range.isEmpty else { return [] }
        let base = range.lowerBound
        return UnicodeText.wordSegments(inUTF16: read(range)).map {
            (range: ($0.range.lowerBound + base)..<($0.range.upperBound + base), isWord: $0.isWord)
        }
    }

    /// The nearest place at or before `offset` where a word boundary is certain (beside a space or a
    /// newline, or the text's start), reading back `window` units at a time; after
    /// `maximumWordStretch` units without one, the place that far back.
    private func certainWordBoundary(atOrBefore offset: Int, window: Int) -> Int {
        if offset <= 0 { return 0 }
        if offset >= length { return length }
        var high = offset
        var chunk = max(1, window)
        while true {
            let low = max(1, high - chunk + 1, offset - Self.maximumWordStretch)
            let base = low - 1
            let units = read(base..<(high + 1))
            var position = high
            while position >= low {
                if Self.isCertainWordBoundary(units[position - 1 - base], units[position - base]) { return position }
                position -= 1
            }
            if low == 1 { return 0 }
            if offset - low >= Self.maximumWordStretch { return low }
            high = low - 1
            chunk *= 2
        }
    }

    /// The nearest place after `offset` where a word boundary is certain (the text's end at worst),
    /// reading on `window` units at a time; after `maximumWordStretch` units without one, the place
    /// that far on.
    private func certainWordBoundary(after offset: Int, window: Int) -> Int {
        certainWordBoundary(atOrAfter: offset + 1, window: window)
    }

    private func certainWordBoundary(atOrAfter offset: Int, window: Int) -> Int {
        if offset <= 0 { return 0 }
        if offset >= length { return length }
        var low = offset
        var chunk = max(1, window)
        while true {
            let high = min(length - 1, low + chunk - 1, offset + Self.maximumWordStretch)
            let units = read((low - 1)..<(high + 1))
            for position in low...high where Self.isCertainWordBoundary(units[position - low], units[position - low + 1]) {
                return position
            }
            if high == length - 1 { return length }
            if high - offset >= Self.maximumWordStretch { return high }
            low = high + 1
            chunk *= 2
        }
    }

    // MARK: - Reading

    private func clamped(_ offset: Int) -> Int { min(max(0, offset), length) }

    /// The text's UTF-16 units in `range` (counted as examined).
    private func read(_ range: Range<Int>) -> [UInt16] {
        let range = max(0, range.lowerBound)..<min(length, max(range.lowerBound, range.upperBound))
        guard !range.isEmpty else { return [] }
        TextWorkCounters.countExamined(range.count)
        let utf16 = text.utf16
        let start = utf16.index(utf16.startIndex, offsetBy: range.lowerBound)
        let end = utf16.index(start, offsetBy: range.count)
        return Array(utf16[start..<end])
    }

    // MARK: - Certain places

    /// True when a grapheme cluster certainly starts between `before` and `after` whatever text
    /// precedes them: both are whole characters (no surrogate), and no rule of UAX #29 can join them
    /// (neither a control pair CR LF, nor a prepended mark, a joiner or a Hangul syllable before, nor
    /// a mark, a joiner, a variation selector or a Hangul vowel or trailing consonant after). Regional
    /// indicators and emoji modifiers are surrogate pairs, so their runs are never cut.
    static func isCertainGraphemeBoundary(_ before: UInt16, _ after: UInt16) -> Bool {
        if isSurrogate(before) || isSurrogate(after) { return false }
        if before == 0x0D { return after != 0x0A }
        if isControl(before) || isControl(after) { return true }
        if before < 0x80 && after < 0x80 { return true }
        if isPrepend(before) || isHangul(before) || extendsCluster(before) { return false }
        return !extendsCluster(after)
    }

    /// True when a word boundary certainly lies between `before` and `after` whatever surrounds them:
    /// beside a newline (but inside CR LF), between a space and what is neither a space nor a mark or
    /// joiner attached to it, and between anything else and a space.
    static func isCertainWordBoundary(_ before: UInt16, _ after: UInt16) -> Bool {
        if isSurrogate(before) || isSurrogate(after) { return false }
        if before == 0x0D { return after != 0x0A }
        if isNewline(before) || isNewline(after) { return true }
        if after == 0x20 { return before != 0x20 }
        if before == 0x20 { return !extendsCluster(after) && after != 0x20 && !isFormat(after) }
        return false
    }

    private static func isSurrogate(_ unit: UInt16) -> Bool { (0xD800...0xDFFF).contains(unit) }

    private static func isNewline(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    private static func isControl(_ unit: UInt16) -> Bool {
        unit < 0x20 || (0x7F...0x9F).contains(unit) || unit == 0x2028 || unit == 0x2029
    }

    /// Grapheme_Cluster_Break=Prepend in the Basic Multilingual Plane.
    private static func isPrepend(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x0600...0x0605, 0x06DD, 0x070F, 0x0890...0x0891, 0x08E2, 0x0D4E: return true
        default: return false
        }
    }

    /// Hangul jamo and syllables, which join one another.
    private static func isHangul(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x1100...0x11FF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xD7B0...0xD7FF: return true
        default: return false
        }
    }

    /// What joins the character before it: marks (Extend, SpacingMark), joiners, variation selectors,
    /// Hangul vowels and trailing consonants.
    private static func extendsCluster(_ unit: UInt16) -> Bool {
        if unit < 0x300 { return false }
        switch unit {
        case 0x200C, 0x200D, 0xFE00...0xFE0F, 0x1160...0x11FF, 0xD7B0...0xD7FF, 0xFF9E, 0xFF9F, 0x0E33, 0x0EB3: return true
        default: break
        }
        guard let scalar = Unicode.Scalar(unit) else { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return scalar.properties.isGraphemeExtend
        }
    }

    private static func isFormat(_ unit: UInt16) -> Bool {
        guard let scalar = Unicode.Scalar(unit) else { return false }
        return scalar.properties.generalCategory == .format
    }
}
