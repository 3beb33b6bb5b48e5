internal import TesseraICU

/// The Unicode text algorithms Tessera lays text out with, from ICU: line-break opportunities
/// (UAX #14), grapheme clusters (UAX #29) and the bidirectional algorithm (UAX #9). Offsets and indices
/// are in Unicode scalars of the string.
/// - Thread: any
public enum UnicodeText {
    /// How a paragraph's base direction is chosen.
    public enum ParagraphDirection: Sendable, Hashable {
        case leftToRight
        case rightToLeft
        /// From the first strong character (left to right when there is none).
        case auto
    }

    /// The version of the Unicode data ICU carries, such as "15.0".
    public static var unicodeVersion: String {
        var buffer = [CChar](repeating: 0, count: 20)
        tessera_icu_unicode_version(&buffer)
        let version = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return version.hasSuffix(".0.0") ? String(version.dropLast(2)) : version
    }

    /// Scalar offsets where a line may break: after the scalar at offset − 1, never at 0, always at the
    /// end of a non-empty string (as LineBreakTest.txt marks them).
    public static func lineBreakOffsets(in string: String) -> [Int] {
        breaks(in: string, kind: 1)
    }

    /// Scalar offsets where grapheme clusters end (extended clusters, as GraphemeBreakTest.txt marks
    /// them): the caret stops, selection ends and truncation points of text.
    public static func graphemeBreakOffsets(in string: String) -> [Int] {
        breaks(in: string, kind: 0)
    }

    /// The words and the stretches between them (UAX #29 word boundaries), as UTF-16 ranges of
    /// `string` in order, each marked as a word (letters, numbers, kana, ideographs) or not (spaces,
    /// punctuation): where Ctrl+arrow stops and what a double click selects.
    public static func wordSegments(in string: String) -> [(range: Range<Int>, isWord: Bool)] {
        wordSegments(inUTF16: Array(string.utf16))
    }

    /// `wordSegments(in:)` over UTF-16 units.
    static func wordSegments(inUTF16 units: [UInt16]) -> [(range: Range<Int>, isWord: Bool)] {
        guard !units.isEmpty else { return [] }
        var out = [Int32](repeating: 0, count: units.count + 1)
        var flags = [UInt8](repeating: 0, count: units.count + 1)
        let count = units.withUnsafeBufferPointer { tessera_icu_word_boundaries($0.baseAddress, Int32(units.count), &out, &flags) }
        guard count > 0 else { return [(0..<units.count, true)] }
        var segments: [(range: Range<Int>, isWord: Bool)] = []
        var start = 0
        for index in 0..<Int(count) {
            let end = Int(out[index])
            segments.append((start..<end, flags[index] != 0))
            start = end
        }
        return segments
    }

    /// The bidirectional algorithm over one paragraph: its resolved level, each scalar's level (nil for
    /// characters rule X9 removes: embedding and override controls and boundary neutrals), and the
    /// scalar indices in visual order from left to right, removed characters left out (as
    /// BidiCharacterTest.txt states them).
    public static func bidi(_ string: String, paragraph: ParagraphDirection)
        -> (paragraphLevel: Int, levels: [Int?], visualOrder: [Int]) {
        let units = Array(string.utf16)
        let scalars = Array(string.unicodeScalars)
        let requested: Int32 = paragraph == .leftToRight ? 0 : paragraph == .rightToLeft ? 1 : -1
        guard !units.isEmpty else { return (requested == 1 ? 1 : 0, [], []) }
        var unitLevels = [UInt8](repeating: 0, count: units.count)
        var visual = [Int32](repeating: 0, count: units.count)
        let level = units.withUnsafeBufferPointer { text in
            tessera_icu_bidi(text.baseAddress, Int32(units.count), requested, &unitLevels, &visual)
        }
        guard level >= 0 else {
            // ICU refused (it cannot run out of anything but memory here): show the text as it is.
            return (0, scalars.map { _ in 0 }, Array(scalars.indices))
        }
        // Scalar index of each UTF-16 unit, and whether rule X9 removes the scalar.
        var scalarOfUnit = [Int](repeating: 0, count: units.count)
        var unit = 0
        var removed = [Bool](repeating: false, count: scalars.count)
        var levels = [Int?](repeating: nil, count: scalars.count)
        for (index, scalar) in scalars.enumerated() {
            let width = scalar.utf16.count
            for k in 0..<width { scalarOfUnit[unit + k] = index }
            removed[index] = isRemovedByX9(scalar)
            levels[index] = removed[index] ? nil : Int(unitLevels[unit])
            unit += width
        }
        var order: [Int] = []
        order.reserveCapacity(scalars.count)
        var previous = -1
        for logical in visual {
            let index = scalarOfUnit[Int(logical)]
            if index != previous, !removed[index] { order.append(index) }
            previous = index
        }
        return (Int(level), levels, order)
    }

    /// Embedding, override and pop controls and boundary neutrals (ICU's LRE, LRO, RLE, RLO, PDF, BN).
    static func isRemovedByX9(_ scalar: Unicode.Scalar) -> Bool {
        switch tessera_icu_bidi_class(Int32(bitPattern: scalar.value)) {
        case 11, 12, 14, 15, 16, 18: return true  // LRE, LRO, RLE, RLO, PDF, BN
        default: return false
        }
    }

    /// Line-break opportunities as UTF-16 offsets (ascending, after 0, the end included) in `units`.
    static func lineBreakUTF16Offsets(_ units: [UInt16]) -> [Int] {
        guard !units.isEmpty else { return [] }
        var out = [Int32](repeating: 0, count: units.count + 1)
        let count = units.withUnsafeBufferPointer { tessera_icu_breaks(1, $0.baseAddress, Int32(units.count), &out) }
        guard count > 0 else { return [units.count] }
        return out.prefix(Int(count)).map { Int($0) }
    }

    private static func breaks(in string: String, kind: Int32) -> [Int] {
        let units = Array(string.utf16)
        guard !units.isEmpty else { return [] }
        var out = [Int32](repeating: 0, count: units.count + 1)
        let count = units.withUnsafeBufferPointer { tessera_icu_breaks(kind, $0.baseAddress, Int32(units.count), &out) }
        // Scalar offset at each UTF-16 offset (offsets inside a surrogate pair never come back from ICU).
        var scalarOffset = [Int](repeating: 0, count: units.count + 1)
        var unit = 0, scalar = 0
        for s in string.unicodeScalars {
            unit += s.utf16.count
            scalar += 1
            scalarOffset[unit] = scalar
        }
        guard count > 0 else {
            return [scalar]  // ICU refused: a break at the end only
        }
        return out.prefix(Int(count)).map { scalarOffset[Int($0)] }
    }
}
