internal import CFontconfig
import FoundationEssentials
import Glibc
import Dispatch

/// An installed font standing in for a bundled face, as fontconfig chose it.
/// - Thread: any (a value)
struct SystemFace: Sendable, Hashable {
    /// The font file.
    var path: String
    /// The face's index in the file (a collection, `.ttc`, holds several).
    var faceIndex: Int
    /// The family fontconfig was asked for: a bundled family, or the generic name tried after it.
    var requestedFamily: String
    /// Whether the file's face is itself bold (fontconfig's weight is demibold or heavier).
    var isBold: Bool
    /// Why this file: which names were asked for and which one it answers.
    var reason: String
}

/// The system's fonts for text whose bundled faces cannot be found or opened: fontconfig's match for
/// the bundled family ("DejaVu Sans", "DejaVu Sans Mono") when it is installed, else for the generic
/// name ("sans-serif", "monospace"), in the weight asked for. Used by `FontRegistry` as its last
/// step before giving up, so text is drawn in some installed font rather than not at all.
/// - Thread: any (fontconfig's queries are made outside any Tessera lock)
enum SystemFonts {
    /// The names asked of fontconfig, in order, for text in `family`: the monospaced family's own
    /// name then "monospace"; for any other family DejaVu Sans then "sans-serif".
    static func families(for family: String) -> [String] {
        family == TextFont.monospacedFamily ? [TextFont.monospacedFamily, "monospace"] : [TextFont.sansFamily, "sans-serif"]
    }

    /// The installed face for the first of `families` that fontconfig has: a named family counts only
    /// when the file's face is that family (fontconfig otherwise substitutes another), the last name
    /// (generic) takes what fontconfig gives. Nil when fontconfig has no scalable font at all.
    static func match(families: [String], bold: Bool) -> SystemFace? {
        var skipped: [String] = []
        for (position, family) in families.enumerated() {
            var buffer = [CChar](repeating: 0, count: 4096)
            var index: Int32 = 0, weight: Int32 = 0, familyMatched: Int32 = 0
            let found = family.withCString {
                tessera_fc_match($0, bold ? 1 : 0, &buffer, Int32(buffer.count), &index, &weight, &familyMatched)
            } == 1
            guard found else { skipped.append(family); continue }
            let isLast = position == families.count - 1
            guard familyMatched == 1 || isLast else { skipped.append(family); continue }
            let path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let weightName = bold ? "bold" : "regular"
            var reason = familyMatched == 1 ? "fontconfig's \(weightName) \(family)"
                : "fontconfig's choice for \(family) (\(weightName))"
            if !skipped.isEmpty { reason += "; \(skipped.joined(separator: ", ")) is not installed" }
            return SystemFace(path: path, faceIndex: Int(index), requestedFamily: family,
                              isBold: weight >= Int32(FC_WEIGHT_DEMIBOLD), reason: reason)
        }
        return nil
    }
}
