// A small bidirectional layout: enough of the Unicode Bidirectional Algorithm (UAX #9) for chat text
// that mixes Latin, Greek or Cyrillic with Hebrew or Arabic, and digits.
//
// What it does, on segments rather than single characters (segments never mix classes):
//   - P2/P3: the paragraph's direction is that of its first strong character (left-to-right if none);
//   - W4/W5: one separator between two numbers ("3.14", "1,000") and currency or percent signs next to
//     a number belong to the number; W7: a number after left-to-right text is left-to-right;
//   - N1/N2: punctuation and spaces take the direction shared by the strong text on both sides, else
//     the paragraph's (numbers count as right-to-left here);
//   - I1/I2: embedding levels 0, 1 or 2; L1: spaces at the end of a line get the paragraph's level;
//   - L2: from the highest level down to 1, every stretch at that level or above is reversed.
// What it leaves out: explicit embeddings, isolates and overrides (U+202A…U+2069), which chat text
// rarely carries; and N1 looks no further than the line, so punctuation that ends a line between two
// right-to-left words in a left-to-right paragraph takes the paragraph's direction. Mirroring of
// brackets is HarfBuzz's: it mirrors them in text shaped right to left.

enum Bidi {
    /// The direction of the first strong character in `pieces`: true for right to left, false for left
    /// to right, nil when there is none. Looks at most `scanLimit` scalars, so that a huge paragraph of
    /// digits and punctuation costs little.
    static func paragraphIsRightToLeft(_ pieces: [TextPiece], scanLimit: Int = 20_000) -> Bool? {
        var scanned = 0
        for piece in pieces {
            for scalar in piece.text.unicodeScalars {
                scanned += 1
                if scanned > scanLimit { return nil }
                let value = scalar.value
                if value < 0x80 {
                    if (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A) { return false }
                    continue
                }
                switch value {
                case 0x0590...0x05FF, 0xFB1D...0xFB4F, 0x07C0...0x085F: return true
                case 0x0660...0x0669, 0x06F0...0x06F9, 0x060C: continue
                case 0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: return true
                default:
                    if scalar.properties.isAlphabetic { return false }
                }
            }
        }
        return nil
    }

    /// Characters that join two numbers into one ("3.14", "1,000", "12:30", "1/2", "2-3"): UAX #9's
    /// common and European separators.
    private static let numberSeparators: Set<Substring> = [".", ",", ":", "/", "\u{060C}", "+", "-", "\u{2212}"]
    /// Characters that belong to an adjacent number ("%", "$", "€", "#", "°"): its European terminators.
    private static let numberTerminators: Set<Character> = ["%", "$", "€", "£", "¥", "#", "°", "٪", "\u{2030}"]

    /// The embedding level of each segment of a line, in logical order.
    static func levels(of segments: [TextSegment], paragraphIsRightToLeft: Bool) -> [UInt8] {
        let count = segments.count
        guard count > 0 else { return [] }
        var types = segments.map { $0.kind == .attachment ? BidiClass.neutral : $0.bidi }

        // W4: a single separator between two numbers becomes part of them.
        if count >= 3 {
            for i in 1..<(count - 1) where types[i] == .neutral && types[i - 1] == .number && types[i + 1] == .number
                && numberSeparators.contains(segments[i].text) {
                types[i] = .number
            }
        }
        // W5: terminators next to a number become part of it.
        for i in 0..<count where types[i] == .neutral && segments[i].kind == .word
            && segments[i].text.allSatisfy({ numberTerminators.contains($0) }) {
            let before = i > 0 && types[i - 1] == .number
            let after = i + 1 < count && types[i + 1] == .number
            if before || after { types[i] = .number }
        }
        // W7: a number whose preceding strong text (or the paragraph) is left-to-right is left-to-right.
        var lastStrong: BidiClass = paragraphIsRightToLeft ? .rightToLeft : .leftToRight
        for i in 0..<count {
            switch types[i] {
            case .leftToRight, .rightToLeft: lastStrong = types[i]
            case .number: if lastStrong == .leftToRight { types[i] = .leftToRight }
            default: break
            }
        }
        // N1/N2: neutrals between equal strong directions take it; others take the paragraph's.
        let base: BidiClass = paragraphIsRightToLeft ? .rightToLeft : .leftToRight
        func strength(_ type: BidiClass) -> BidiClass? {
            switch type {
            case .leftToRight: return .leftToRight
            case .rightToLeft, .number: return .rightToLeft
            case .neutral, .whitespace: return nil
            }
        }
        var i = 0
        while i < count {
            guard strength(types[i]) == nil else { i += 1; continue }
            var end = i
            while end < count && strength(types[end]) == nil { end += 1 }
            let before = i > 0 ? strength(types[i - 1])! : base
            let after = end < count ? strength(types[end])! : base
            let resolved = before == after ? before : base
            for j in i..<end { types[j] = resolved }
            i = end
        }
        // I1/I2.
        let baseLevel: UInt8 = paragraphIsRightToLeft ? 1 : 0
        var levels = types.map { type -> UInt8 in
            switch type {
            case .leftToRight: return baseLevel == 0 ? 0 : 2
            case .rightToLeft: return 1
            case .number: return 2
            case .neutral, .whitespace: return baseLevel
            }
        }
        // L1: the spaces that end the line.
        var k = count - 1
        while k >= 0 && segments[k].kind == .space {
            levels[k] = baseLevel
            k -= 1
        }
        return levels
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
