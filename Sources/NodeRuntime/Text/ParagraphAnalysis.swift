internal import TesseraICU

/// What one paragraph's text says about itself, found once before its lines are cut: where a line may
/// break (UAX #14) and, for a paragraph laid out as such, its base direction and each character's
/// embedding level (UAX #9, resolved over the paragraph as a whole, as the algorithm asks: a neutral at
/// a line's end takes its level from the text around it, not from where the line happens to end).
///
/// Both cover the paragraph's first `limit` UTF-16 units (cut after a space). Past them lines break
/// only after spaces, and each line's levels are resolved over that line alone; a preview of a
/// megabyte message then costs what its first lines need.
struct ParagraphAnalysis {
    static let limit = 4_096

    /// What is known about one piece of the paragraph.
    struct PieceAnalysis {
        /// Positions in the piece's text after which a line may break, in order.
        var breaks: [Substring.Index] = []
        /// The position up to which `breaks` and `levelRuns` are complete.
        var analysedUpTo: Substring.Index
        /// Where each stretch of one embedding level starts, with that level, in order; the first
        /// starts at the piece's start. Empty when levels were not resolved.
        var levelRuns: [(start: Substring.Index, level: UInt8)] = []
    }

    /// The paragraph's non-empty pieces.
    let pieces: [TextPiece]
    let pieceAnalyses: [PieceAnalysis]
    /// The base direction: from the first strong character outside isolates (P2, P3), left to right
    /// when there is none. False when levels were not resolved.
    let isRightToLeft: Bool
    /// Whether `levelRuns` are filled in.
    let resolvesLevels: Bool

    /// Analyses `pieces`, their first `limit` units; with `resolvingLevels`, the bidi algorithm runs
    /// over them too, in `direction` (true: right to left) when it is given, else in the direction
    /// the pieces' first strong character sets (for pieces that continue a paragraph whose direction
    /// is known).
    init(pieces: [TextPiece], isAttachmentRun: (Int) -> Bool, resolvingLevels: Bool, direction: Bool? = nil,
         limit: Int = ParagraphAnalysis.limit) {
        let pieces = pieces.filter { !$0.text.isEmpty }
        self.pieces = pieces
        resolvesLevels = resolvingLevels
        let (units, analysed) = Self.units(of: pieces, isAttachmentRun: isAttachmentRun, limit: limit)
        let breakOffsets = units.isEmpty ? [] : UnicodeText.lineBreakUTF16Offsets(units)
        var unitLevels: [UInt8]? = nil  // nil: every level is the paragraph's
        var paragraphLevel: UInt8 = direction == true ? 1 : 0
        // Text of one direction in a paragraph of that direction needs no resolving: every level is the
        // paragraph's (left-to-right text in a right-to-left paragraph does).
        let needsBidi = direction == true
            || (!units.isEmpty && units.withUnsafeBufferPointer({ tessera_icu_needs_bidi($0.baseAddress, Int32($0.count)) }) != 0)
        if resolvingLevels, !units.isEmpty, needsBidi {
            var levels = [UInt8](repeating: 0, count: units.count)
            let requested: Int32 = direction.map { $0 ? 1 : 0 } ?? -1
            let level = units.withUnsafeBufferPointer {
                tessera_icu_bidi($0.baseAddress, Int32($0.count), requested, &levels, nil)
            }
            if level >= 0 {
                paragraphLevel = UInt8(level)
                unitLevels = levels
            }
        }
        isRightToLeft = paragraphLevel == 1
        // Offsets become positions in each piece's own text, walking the pieces once.
        var breakIndex = 0, base = 0
        var analyses: [PieceAnalysis] = []
        analyses.reserveCapacity(pieces.count)
        for piece in pieces {
            let utf16 = piece.text.utf16
            let length = utf16.count
            let end = min(max(0, analysed - base), length)
            var analysis = PieceAnalysis(analysedUpTo: utf16.index(utf16.startIndex, offsetBy: end))
            var index = utf16.startIndex, at = 0
            func position(_ offset: Int) -> Substring.Index {
                index = utf16.index(index, offsetBy: offset - at)
                at = offset
                return index
            }
            while breakIndex < breakOffsets.count, breakOffsets[breakIndex] - base <= length {
                analysis.breaks.append(position(breakOffsets[breakIndex] - base))
                breakIndex += 1
            }
            if resolvingLevels && end > 0 {
                if let unitLevels {
                    index = utf16.startIndex
                    at = 0
                    var previous: UInt8? = nil
                    for offset in 0..<end where unitLevels[base + offset] != previous {
                        previous = unitLevels[base + offset]
                        analysis.levelRuns.append((position(offset), previous!))
                    }
                } else {
                    analysis.levelRuns = [(utf16.startIndex, paragraphLevel)]
                }
            }
            analyses.append(analysis)
            base += length
        }
        pieceAnalyses = analyses
    }

    /// The base direction of the paragraph made of `pieces` (P2, P3 over its first `limit` units).
    static func isRightToLeft(_ pieces: [TextPiece], isAttachmentRun: (Int) -> Bool) -> Bool {
        let units = units(of: pieces, isAttachmentRun: isAttachmentRun).units
        guard !units.isEmpty else { return false }
        return units.withUnsafeBufferPointer { text in
            guard tessera_icu_needs_bidi(text.baseAddress, Int32(text.count)) != 0 else { return false }
            var levels = [UInt8](repeating: 0, count: text.count)
            return tessera_icu_bidi(text.baseAddress, Int32(text.count), -1, &levels, nil) == 1
        }
    }

    /// The UTF-16 units analysed (attachments as object replacement characters, one per unit they
    /// span, so offsets stay those of the text) and how many of the paragraph's units they cover.
    private static func units(of pieces: [TextPiece], isAttachmentRun: (Int) -> Bool,
                              limit: Int = ParagraphAnalysis.limit) -> (units: [UInt16], analysed: Int) {
        var units: [UInt16] = []
        var truncated = false
        for piece in pieces where !piece.text.isEmpty {
            let room = limit - units.count
            guard room > 0 else { truncated = true; break }
            let attachment = isAttachmentRun(piece.run)
            var taken = 0
            for unit in piece.text.utf16 {
                if taken == room { truncated = true; break }
                units.append(attachment ? 0xFFFC : unit)
                taken += 1
            }
        }
        // A cut paragraph is analysed up to just after its last space, where a line may break anyway.
        if truncated {
            let analysed = (units.lastIndex(of: 0x20).map { $0 + 1 }) ?? 0
            units.removeSubrange(analysed...)
        }
        return (units, units.count)
    }
}
