// Bidirectional layout of a line: each segment's embedding level from ICU's implementation of the
// Unicode Bidirectional Algorithm (UAX #9: weak types, brackets, embeddings, isolates and overrides),
// and the visual order of a line's pieces by L2. A paragraph's direction (P2, P3) and levels are
// resolved over the whole paragraph by `ParagraphAnalysis`; a line whose segments lack them (text past
// the analysed part, a truncated line with its token) is resolved over its own text here. Spaces that
// end a line are left out of it (L1). Mirroring of brackets is HarfBuzz's: it mirrors them in text
// shaped right to left.

enum Bidi {
    /// The embedding level of each segment of a line, in logical order: the Unicode Bidirectional
    /// Algorithm from ICU (`UnicodeText.bidi`) run over the line's text at the paragraph's level, each
    /// segment taking the level of its first character (attachments count as object replacement
    /// characters; a segment of characters the algorithm removes takes the level before it).
    static func levels(of segments: [TextSegment], paragraphIsRightToLeft: Bool) -> [UInt8] {
        guard !segments.isEmpty else { return [] }
        // Levels the paragraph's resolution gave (the line's spaces at its end are already left out:
        // rule L1 puts them at the paragraph's level, where a line's end draws nothing).
        if segments.allSatisfy({ $0.level != nil }) { return segments.map { $0.level! } }
        // Most lines are left-to-right text in a left-to-right paragraph: every level is 0.
        if !paragraphIsRightToLeft, segments.allSatisfy(isPlainLeftToRight) {
            return Array(repeating: 0, count: segments.count)
        }
        var text = ""
        var starts: [Int] = []
        starts.reserveCapacity(segments.count)
        var offset = 0
        for segment in segments {
            starts.append(offset)
            if segment.kind == .attachment {
                text.unicodeScalars.append("\u{FFFC}")
                offset += 1
            } else {
                text += segment.text
                offset += segment.text.unicodeScalars.count
            }
        }
        let resolved = UnicodeText.bidi(text, paragraph: paragraphIsRightToLeft ? .rightToLeft : .leftToRight).levels
        var previous: UInt8 = paragraphIsRightToLeft ? 1 : 0
        return segments.indices.map { index in
            let first = starts[index], end = index + 1 < starts.count ? starts[index + 1] : offset
            if let level = resolved[first..<end].lazy.compactMap({ $0 }).first {
                previous = UInt8(clamping: level)
            }
            return previous
        }
    }

    /// A segment that resolves to level 0 in a left-to-right paragraph whatever surrounds it:
    /// left-to-right letters, spaces, European digits, and punctuation without directional controls.
    private static func isPlainLeftToRight(_ segment: TextSegment) -> Bool {
        switch segment.bidi {
        case .leftToRight, .whitespace: return true
        case .rightToLeft: return false
        case .number: return segment.script != .arabic
        case .neutral:
            return segment.kind != .attachment && !segment.text.unicodeScalars.contains { scalar in
                switch scalar.value {
                case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
                default: return false
                }
            }
        }
    }

    /// The visual order (left to right) of items with the given levels (L2).
    static func visualOrder(levels: [UInt8]) -> [Int] {
        var order = Array(levels.indices)
        guard let highest = levels.max(), highest > 0 else { return order }
        // Down to the lowest odd level, counting levels not present: with levels {0, 2} a number
        // stretch is reversed at 2 and again at 1, which keeps it in reading order.
        let lowest = levels.min() ?? 0
        let lowestOdd = lowest % 2 == 1 ? lowest : lowest + 1
        var level = highest
        while level >= lowestOdd {
            var i = 0
            while i < order.count {
                guard levels[order[i]] >= level else { i += 1; continue }
                var end = i
                while end < order.count && levels[order[end]] >= level { end += 1 }
                order[i..<end].reverse()
                i = end
            }
            level -= 1
        }
        return order
    }
}
