internal import CFontconfig
import FoundationEssentials
import Glibc
import Dispatch

/// Finds, through fontconfig, an installed font for the characters a text's own font lacks (CJK,
/// emoji, scripts DejaVu does not cover), and remembers each choice: per (family, block of 128 code
/// points, colour or not), and per character when the block's choice lacks that one too. A lookup
/// that finds nothing is remembered as well, so a character no font has costs one query.
/// - Thread: any
final class FontFallback: Sendable {
    static let shared = FontFallback()

    private struct Key: Hashable {
        var family: String
        /// A block (code point / 128) or, with `exact`, the code point itself.
        var value: UInt32
        var exact: Bool
        var color: Bool
    }
    private struct State {
        var choices: [Key: FontFileLocation?] = [:]
        var queries = 0
    }
    private let state = Locked(State())

    /// How many times fontconfig was asked (for tests of the cache).
    var queryCount: Int { state.withLock { $0.queries } }

    /// The font file (and face in it) that has `scalar`, for text set in `family`; `color` prefers
    /// colour fonts (emoji). `covers` tells whether a candidate has the scalar (the caller checks with
    /// its own face); the block's choice is tried first, then one for the exact scalar.
    func font(for scalar: Unicode.Scalar, family: String, color: Bool, covers: (FontFileLocation) -> Bool) -> FontFileLocation? {
        let block = Key(family: family, value: scalar.value >> 7, exact: false, color: color)
        if let font = choice(block, scalar: scalar), covers(font) { return font }
        let exact = Key(family: family, value: scalar.value, exact: true, color: color)
        guard let font = choice(exact, scalar: scalar), covers(font) else { return nil }
        return font
    }

    /// The cached choice for `key`, asking fontconfig (outside the lock) the first time.
    private func choice(_ key: Key, scalar: Unicode.Scalar) -> FontFileLocation? {
        if let known = state.withLock({ $0.choices[key] }) { return known }
        var buffer = [CChar](repeating: 0, count: 4096)
        var index: Int32 = 0
        TextWorkCounters.countFontconfigQuery()
        let found = key.family.withCString { tessera_fc_font_for(scalar.value, $0, key.color ? 1 : 0, &buffer, 4096, &index) } == 1
        let path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let font = found ? FontFileLocation(path: path, faceIndex: Int(index)) : nil
        return state.withLock { state in
            state.queries += 1
            if let existing = state.choices[key] { return existing }
            state.choices[key] = .some(font)
            return font
        }
    }
}
