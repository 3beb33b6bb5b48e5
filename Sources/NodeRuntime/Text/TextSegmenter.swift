internal import TesseraICU

// Cutting text into segments: the smallest pieces line breaking and bidi reordering work with.
//
// A segment lies inside one run and holds characters of one kind: a stretch of spaces, or a stretch of
// non-space characters of one bidi class (left-to-right letters, right-to-left letters, digits, or
// neutral punctuation), at most `maximumWordSegmentLength` characters long, never across a line-break
// opportunity. A line may break where UAX #14 allows (from ICU: after spaces, after hyphens, between
// ideographs, inside URLs after a slash…), before or after an attachment, or (for a word wider than
// the line) between characters. In a paragraph whose levels are resolved, a segment also holds
// characters of one embedding level.

/// The writing system of a piece of text, as HarfBuzz needs it to choose a shaper (Arabic letters
/// join only when the script says Arabic).
enum TextScript: UInt8, Sendable, Hashable {
    case common, latin, greek, cyrillic, hebrew, arabic, devanagari, thai

    /// The ISO 15924 tag SDL_ttf passes to HarfBuzz.
    var tag: String {
        switch self {
        case .common: return "Zyyy"
        case .latin: return "Latn"
        case .greek: return "Grek"
        case .cyrillic: return "Cyrl"
        case .hebrew: return "Hebr"
        case .arabic: return "Arab"
        case .devanagari: return "Deva"
        case .thai: return "Thai"
        }
    }

    /// True when text in `self` and `other` may be shaped in one call: equal, or one is common.
    func isCompatible(with other: TextScript) -> Bool { self == other || self == .common || other == .common }
    /// The more specific of two compatible scripts.
    func merged(with other: TextScript) -> TextScript { self == .common ? other : self }
}

/// The bidi classes this layout distinguishes: a small subset of the Unicode Bidirectional
/// Algorithm's, enough for Latin, Greek, Cyrillic, Hebrew and Arabic text with digits.
enum BidiClass: UInt8, Sendable, Hashable {
    /// Strong left-to-right (Latin, Greek, Cyrillic letters…).
    case leftToRight
    /// Strong right-to-left (Hebrew, Arabic letters).
    case rightToLeft
    /// Digits (European and Arabic-Indic): laid out left to right, placed by their surroundings.
    case number
    /// Punctuation and symbols: take the direction of their surroundings.
    case neutral
    /// Spaces: neutral, and the places where lines break.
    case whitespace
}

/// Classifies one character by its first scalar.
@inline(__always)
func classify(_ character: Character) -> (BidiClass, TextScript) {
    if let ascii = character.asciiValue {
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return (.leftToRight, .latin)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return (.number, .common)
        case UInt8(ascii: " "): return (.whitespace, .common)
        default: return (.neutral, .common)
        }
    }
    guard let scalar = character.unicodeScalars.first else { return (.neutral, .common) }
    let value = scalar.value
    switch value {
    case 0x0590...0x05FF, 0xFB1D...0xFB4F:
        return (.rightToLeft, .hebrew)
    case 0x0660...0x0669, 0x06F0...0x06F9:
        return (.number, .arabic)
    case 0x060C:  // the Arabic comma separates like a Latin one
        return (.neutral, .arabic)
    case 0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF:
        return (.rightToLeft, .arabic)
    case 0x07C0...0x085F:
        return (.rightToLeft, .common)
    case 0x00A0, 0x2007, 0x202F:  // no-break spaces must not become break opportunities
        return (.neutral, .common)
    case 0x2000...0x200A, 0x3000:
        return (.whitespace, .common)
    default:
        break
    }
    if character.isLetter {
        switch value {
        case 0x0370...0x03FF, 0x1F00...0x1FFF: return (.leftToRight, .greek)
        case 0x0400...0x052F: return (.leftToRight, .cyrillic)
        case 0x0900...0x097F, 0xA8E0...0xA8FF: return (.leftToRight, .devanagari)
        case 0x0E00...0x0E7F: return (.leftToRight, .thai)
        case 0x00C0...0x024F, 0x1E00...0x1EFF: return (.leftToRight, .latin)
        default: return (.leftToRight, .common)
        }
    }
    if character.isNumber { return (.number, .common) }
    return (.neutral, .common)
}

/// Part of one run's text.
struct TextPiece: Sendable {
    var run: Int
    var text: Substring
}

/// A measured segment.
struct TextSegment: Sendable {
    enum Kind: Sendable { case word, space, attachment }
    var run: Int
    var text: Substring
    var kind: Kind
    var bidi: BidiClass
    var script: TextScript
    /// Advance in pixels.
    var width: Int
    /// Whether a line may break right after this segment (UAX #14).
    var breakAfter = false
    /// The embedding level the paragraph's bidi resolution gave every character of the segment; nil
    /// when the paragraph's levels were not resolved this far (the line's are resolved on their own).
    var level: UInt8? = nil
}

/// Produces the segments of a sequence of pieces (one paragraph, or the text a truncated line is made
/// of), one at a time, so that a huge paragraph is only cut as far as lines are needed. A segment never
/// crosses a line-break opportunity, nor a change of embedding level when the analysis resolved them.
struct SegmentStream {
    /// Longest non-space segment, in characters; longer words are cut into several (with no break
    /// opportunity between them) so that measuring an overlong word stays cheap.
    static let maximumWordSegmentLength = 32

    private let analysis: ParagraphAnalysis
    private var pieces: [TextPiece] { analysis.pieces }
    private let attachmentRuns: (Int) -> Bool
    private var pieceIndex = 0
    private var position: Substring.Index?
    private var breakCursor = 0
    private var levelCursor = 0

    /// Segments of `pieces`, analysed for line breaks only (their levels are resolved per line).
    init(pieces: [TextPiece], isAttachmentRun: @escaping (Int) -> Bool) {
        self.init(analysis: ParagraphAnalysis(pieces: pieces, isAttachmentRun: isAttachmentRun, resolvingLevels: false),
                  isAttachmentRun: isAttachmentRun)
    }

    /// Segments of an analysed paragraph.
    init(analysis: ParagraphAnalysis, isAttachmentRun: @escaping (Int) -> Bool) {
        self.analysis = analysis
        self.attachmentRuns = isAttachmentRun
        position = analysis.pieces.first?.text.startIndex
    }

    /// The next unmeasured segment (width 0), or nil at the end.
    mutating func next() -> TextSegment? {
        while pieceIndex < pieces.count {
            let piece = pieces[pieceIndex]
            let start = position ?? piece.text.startIndex
            guard start < piece.text.endIndex else {
                pieceIndex += 1
                breakCursor = 0
                levelCursor = 0
                position = pieceIndex < pieces.count ? pieces[pieceIndex].text.startIndex : nil
                continue
            }
            let known = analysis.pieceAnalyses[pieceIndex]
            // The level at `start`, and where the next level starts (or the analysis ends).
            var level: UInt8? = nil
            var levelEnd: Substring.Index? = nil
            if start < known.analysedUpTo, !known.levelRuns.isEmpty {
                while levelCursor + 1 < known.levelRuns.count, known.levelRuns[levelCursor + 1].start <= start { levelCursor += 1 }
                level = known.levelRuns[levelCursor].level
                levelEnd = levelCursor + 1 < known.levelRuns.count ? known.levelRuns[levelCursor + 1].start : known.analysedUpTo
            }
            if attachmentRuns(piece.run) {
                // An attachment is one segment whatever its characters are, with a break after it.
                position = piece.text.endIndex
                return TextSegment(run: piece.run, text: piece.text[start...], kind: .attachment,
                                   bidi: .neutral, script: .common, width: 0, breakAfter: true, level: level)
            }
            let text = piece.text
            let positions = known.breaks
            while breakCursor < positions.count, positions[breakCursor] <= start { breakCursor += 1 }
            let nextBreak = breakCursor < positions.count ? positions[breakCursor] : nil
            let (firstClass, firstScript) = classify(text[start])
            var script = firstScript
            var end = text.index(after: start)
            var count = 1
            while end < text.endIndex {
                if firstClass != .whitespace, let nextBreak, end >= nextBreak { break }
                if let levelEnd, end >= levelEnd { break }
                let (bidi, nextScript) = classify(text[end])
                guard bidi == firstClass, script.isCompatible(with: nextScript) else { break }
                if firstClass != .whitespace && count >= SegmentStream.maximumWordSegmentLength { break }
                script = script.merged(with: nextScript)
                end = text.index(after: end)
                count += 1
            }
            position = end
            let breakAfter = start < known.analysedUpTo ? (nextBreak.map { end >= $0 } ?? false) : firstClass == .whitespace
            return TextSegment(run: piece.run, text: text[start..<end],
                               kind: firstClass == .whitespace ? .space : .word,
                               bidi: firstClass, script: script, width: 0, breakAfter: breakAfter, level: level)
        }
        return nil
    }
}

/// Measures segments and text with the calling thread's faces, for one layout's runs at one scale.
/// - Thread: the thread that made it (its faces belong to that thread)
final class TextMeasurer {
    let scale: Double
    private let registry: FontRegistry
    private let cache = ThreadFontCache.current
    /// The layout's run styles; grows when a truncation token adds runs.
    private(set) var runs: [TextAttributes]
    private var handles: [Int: FontHandle?] = [:]

    init(runs: [TextAttributes], registry: FontRegistry, scale: Double) {
        self.runs = runs
        self.registry = registry
        self.scale = scale
    }

    /// Adds a run style (for a truncation token) and returns its index.
    func addRun(_ attributes: TextAttributes) -> Int {
        runs.append(attributes)
        return runs.count - 1
    }

    func pixelSize(of font: TextFont) -> Int { max(1, Int((font.sanitizedSize * scale).rounded())) }

    /// The face of `run` on this thread, or nil when no font can be opened.
    func handle(run: Int) -> FontHandle? {
        if let known = handles[run] { return known }
        let font = runs[run].effectiveFont
        let handle = registry.resolve(font).flatMap { cache.handle(for: $0, pixelSize: pixelSize(of: font)) }
        handles[run] = handle
        return handle
    }

    /// The metrics of `run`'s face; an estimate from the size when no face opens.
    func metrics(run: Int) -> FontMetrics {
        if let handle = handle(run: run) { return handle.metrics }
        let size = pixelSize(of: runs[run].effectiveFont)
        return FontMetrics(ascent: Int((Double(size) * 0.93).rounded()), descent: Int((Double(size) * 0.24).rounded()),
                           lineSkip: Int((Double(size) * 1.17).rounded()))
    }

    /// The width of `text` in `run`'s face, in pixels, each stretch its own font lacks measured in
    /// the fallback face that draws it.
    func width(of text: Substring, run: Int, rightToLeft: Bool, script: TextScript) -> Int {
        if !needsFallback(text, run: run) {
            return width(of: text, run: run, rightToLeft: rightToLeft, script: script, face: nil)
        }
        return faceRuns(of: text, run: run).reduce(0) { total, stretch in
            total + width(of: stretch.text, run: run, rightToLeft: rightToLeft, script: script, face: stretch.face)
        }
    }

    /// The width of `text` in one face: `face`, or the run's own when nil.
    func width(of text: Substring, run: Int, rightToLeft: Bool, script: TextScript, face: ResolvedFace?) -> Int {
        guard let face else {
            return handle(run: run)?.width(of: text, rightToLeft: rightToLeft, script: script) ?? placeholderWidth(of: text, run: run)
        }
        guard let handle = handle(face: face, run: run) else { return placeholderWidth(of: text, run: run) }
        let width = handle.width(of: text, rightToLeft: rightToLeft, script: script)
        return handle.glyphScale == 1 ? width : Int((Double(width) * handle.glyphScale).rounded())
    }

    /// The width of `text` as `TextRenderer` draws it when no font opens for it: a box advance for
    /// each character (`placeholderAdvance`, half that for white space), so such text keeps a size,
    /// breaks into lines and shows where it is.
    func placeholderWidth(of text: Substring, run: Int) -> Int {
        let em = Double(pixelSize(of: runs[run].effectiveFont))
        return text.reduce(0) { total, character in
            total + Int((em * Self.placeholderAdvance * (character.isWhitespace ? 0.5 : 1)).rounded())
        }
    }

    /// A placeholder box's advance, in ems.
    static let placeholderAdvance = 0.6

    /// This thread's handle of a fallback `face` at `run`'s size.
    func handle(face: ResolvedFace, run: Int) -> FontHandle? {
        cache.handle(for: face, pixelSize: pixelSize(of: runs[run].effectiveFont))
    }

    /// Whether some character of `text` is drawn by another face than the run's own (a quick pass
    /// over the scalars with the decisions already made; the first sight of a character decides it).
    func needsFallback(_ text: Substring, run: Int) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return false }
        guard let primary = handle(run: run) else { return false }
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if scalar.value >= 0x80 && !Self.continuesCluster(scalar) {
                let following = next < scalars.endIndex ? scalars[next] : nil
                if fallbackFace(for: scalar, emojiRequested: following == "\u{FE0F}" || following == "\u{20E3}",
                                run: run, primary: primary) != nil { return true }
            } else if scalar == "\u{FE0F}" || scalar == "\u{20E3}" {
                return true  // a keycap or VS16 sequence: let the full pass decide
            }
            index = next
        }
        return false
    }

    /// `text` cut into stretches by the face that draws them: nil for the run's own face, or the
    /// fallback face fontconfig finds for characters it lacks (colour fonts first for emoji). Marks,
    /// joiners, variation selectors and emoji modifiers stay with the character before them, so a
    /// cluster (an emoji sequence, a base with its accents) is drawn by one face.
    func faceRuns(of text: Substring, run: Int) -> [(text: Substring, face: ResolvedFace?)] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return [(text, nil)] }
        guard let primary = handle(run: run) else { return [(text, nil)] }
        let scalars = text.unicodeScalars
        var stretches: [(text: Substring, face: ResolvedFace?)] = []
        var start = scalars.startIndex
        var current: ResolvedFace? = nil
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if index > scalars.startIndex, Self.continuesCluster(scalar) { index = next; continue }
            // A keycap or VS16 sequence asks for the emoji presentation of what precedes it.
            let following = next < scalars.endIndex ? scalars[next] : nil
            let face = fallbackFace(for: scalar, emojiRequested: following == "\u{FE0F}" || following == "\u{20E3}",
                                    run: run, primary: primary)
            if face?.file.identity != current?.file.identity {
                if index > start { stretches.append((text[start..<index], current)) }
                start = index
                current = face
            }
            index = next
        }
        if start < scalars.endIndex { stretches.append((text[start...], current)) }
        return stretches
    }

    /// Scalars that belong to the character before them: marks, joiners, variation selectors, emoji
    /// modifiers (skin tones), tag characters and the keycap.
    private static func continuesCluster(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x300 { return false }  // Latin: no marks or joiners below U+0300
        switch scalar.value {
        case 0x200D, 0xFE00...0xFE0F, 0x20E3, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F: return true
        default:
            return tessera_icu_is_mark(Int32(bitPattern: scalar.value)) != 0
        }
    }

    private func fallbackFace(for first: Unicode.Scalar, emojiRequested: Bool, run: Int, primary: FontHandle) -> ResolvedFace? {
        if first.value < 0x80 && !emojiRequested { return nil }
        let low = first.value < 0x800 && !emojiRequested
        if low && primary.drawsOwnCharacter[Int(first.value)] == 1 { return nil }
        let key = first.value | (emojiRequested ? 1 << 31 : 0)
        if let known = primary.fallbackDecisions[key] { return known }
        let wantsColor = first.properties.isEmojiPresentation || (emojiRequested && first.properties.isEmoji)
        let face = lookUpFallback(for: first, wantsColor: wantsColor, run: run, primary: primary)
        if low && face == nil {
            primary.drawsOwnCharacter[Int(first.value)] = 1
        } else {
            primary.fallbackDecisions[key] = .some(face)
        }
        return face
    }

    private func lookUpFallback(for first: Unicode.Scalar, wantsColor: Bool, run: Int, primary: FontHandle) -> ResolvedFace? {
        if !wantsColor {
            if primary.provides(first) { return nil }
            switch first.properties.generalCategory {
            case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator: return nil
            default: break
            }
        }
        let family = runs[run].effectiveFont.family
        let location = FontFallback.shared.font(for: first, family: family, color: wantsColor) { location in
            guard let face = registry.fallbackFace(at: location), let handle = handle(face: face, run: run) else { return false }
            return handle.provides(first)
        }
        // A bold run gets its fallback in synthesized bold (fallback fonts come with one weight);
        // colour emoji stay as drawn.
        let bold = runs[run].effectiveFont.isBold && !wantsColor
        let face = location.flatMap { registry.fallbackFace(at: $0) }.map { ResolvedFace(file: $0.file, synthesizesBold: bold) }
        return face?.file.identity == primary.file.identity ? nil : face
    }

    /// The segment with its width filled in.
    func measured(_ segment: TextSegment) -> TextSegment {
        var segment = segment
        switch segment.kind {
        case .attachment:
            let size = runs[segment.run].attachment?.sanitizedSize ?? .zero
            segment.width = Int((size.width * scale).rounded())
        case .word, .space:
            segment.width = width(of: segment.text, run: segment.run, rightToLeft: segment.bidi == .rightToLeft,
                                  script: segment.script)
        }
        return segment
    }
}
