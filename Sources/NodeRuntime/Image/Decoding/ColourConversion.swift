import Compositor
import FoundationEssentials
import Glibc
import Dispatch
internal import CLCMS

/// What a conversion converts, 8 bits a sample.
/// - Thread: any (a value)
enum ColourPixelLayout: Int, Hashable, Sendable {
    /// A decoded bitmap's premultiplied ARGB words (its colours in the file's RGB space), converted
    /// once the picture is at the size shown.
    case bitmap
    /// A decoded bitmap of a grey image (R = G = B), converted through a table of the 256 greys.
    case grey
    /// Rows of CMYK (0 = no ink), converted to opaque RGBA bytes in place before they are filtered.
    case cmyk
    /// Rows of CMYK stored inverted as Adobe writes it (255 = no ink), likewise.
    case cmykInverted

    var lcmsLayout: Int32 {
        switch self {
        case .bitmap: return Int32(TESSERA_COLOUR_BGRA)
        case .grey: return Int32(TESSERA_COLOUR_GREY)
        case .cmyk: return Int32(TESSERA_COLOUR_CMYK)
        case .cmykInverted: return Int32(TESSERA_COLOUR_CMYK_INVERTED)
        }
    }
}

/// A conversion from an image's colour space to sRGB, made by LittleCMS. Shared by every decode of
/// images with the same colour description (`ColourConversions`); LittleCMS transforms made without
/// its one-pixel cache may run on many threads at once.
///
/// RGB and grey pictures are converted once decoded at the size shown (the area filter's output), so
/// the cost follows the pixels shown, not the file's: a 24-megapixel photo shown as a thumbnail
/// converts the thumbnail's pixels. CMYK rows are converted as they are decoded, as the filter
/// averages RGB.
///
/// The rendering intent is perceptual. For a matrix-and-curves profile (Display P3, Adobe RGB, a
/// camera's or a phone's profile, every `cICP` and `gAMA`/`cHRM` space) LittleCMS computes it as it
/// computes relative colorimetric: colours inside sRGB keep their values and colours outside are
/// clipped to its edge, the white point adapted. For a profile with lookup tables (a press CMYK
/// profile, some RGB ones) perceptual uses the table its author made for showing pictures, which
/// compresses the gamut rather than clipping it, and black-point compensation maps its black to
/// sRGB's black: what a photograph wants, where colorimetric matching would flatten what lies outside.
/// - Thread: any
final class ColourConversion: @unchecked Sendable {
    let layout: ColourPixelLayout
    /// The LittleCMS transform (nil for grey, converted through `greyTable`). Never changed after init.
    private let conversion: UnsafeMutablePointer<TesseraColourConversion>?
    /// For grey: the sRGB red, green and blue of each of the 256 grey values.
    private let greyTable: [UInt8]
    /// Whether the conversion leaves every colour within one level of where it was: a profile that
    /// describes sRGB itself (the one most cameras and editors embed), whose conversion is skipped.
    /// Probed on a 17 × 17 × 17 lattice of the RGB cube (every grey, for a grey profile).
    let isIdentity: Bool

    /// LittleCMS's perceptual intent (`INTENT_PERCEPTUAL`).
    static let intent: Int32 = 0

    /// Makes the conversion for `colour` (not `.sRGB`) and `layout`, or says why it cannot be made,
    /// LittleCMS holding at most `memoryLimit` bytes while it reads the profile and makes the
    /// conversion (`ColourConversions.memoryLimit`). A profile whose lookup tables do not fit in their
    /// tags is refused before LittleCMS sees it (`ICCProfileTables`). Primaries and a curve describe
    /// RGB: for a grey picture they convert it as RGB (R = G = B).
    static func make(_ colour: EmbeddedColour, layout: ColourPixelLayout, memoryLimit: Int) -> Result<ColourConversion, ColourRefusal> {
        let made: UnsafeMutablePointer<TesseraColourConversion>?
        var effective = layout
        let limit = max(0, memoryLimit)
        switch colour {
        case .sRGB:
            return .failure(ColourRefusal("sRGB needs no conversion"))
        case .profile(let profile):
            guard profile.bytes.count <= ColourConversions.maximumProfileBytes else {
                return .failure(ColourRefusal("\(profile.bytes.count) bytes, over the \(ColourConversions.maximumProfileBytes)-byte limit"))
            }
            if let refusal = ICCProfileTables.refusal(profile.bytes) { return .failure(ColourRefusal(refusal)) }
            made = profile.bytes.withUnsafeBufferPointer {
                tessera_colour_open_profile($0.baseAddress, $0.count, layout.lcmsLayout, intent, limit)
            }
        case .parametric(let space):
            guard layout == .bitmap || layout == .grey, space.chromaticities.count == 8 else {
                return .failure(ColourRefusal("primaries and a curve describe RGB, not \(layout)"))
            }
            effective = .bitmap
            let curve = space.transfer.lcmsCurve
            made = tessera_colour_open_parametric(space.chromaticities, curve.type, curve.parameters, intent, limit)
        }
        guard let made else { return .failure(ColourRefusal("out of memory")) }
        guard made.pointee.transform != nil else {
            let message = withUnsafeBytes(of: made.pointee.message) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let overLimit = made.pointee.memoryRefused != 0
            tessera_colour_close(made)
            if overLimit {
                return .failure(ColourRefusal("LittleCMS would need more than \(limit) bytes for it (\(message.isEmpty ? "refused" : message))"))
            }
            return .failure(ColourRefusal(message.isEmpty ? "LittleCMS refused it" : message))
        }
        return .success(ColourConversion(made, layout: effective))
    }

    private init(_ made: UnsafeMutablePointer<TesseraColourConversion>, layout: ColourPixelLayout) {
        self.layout = layout
        if layout == .grey {
            var levels = [UInt8](0...255)
            var table = [UInt8](repeating: 0, count: 256 * 3)
            tessera_colour_convert(made, &levels, &table, 256)
            tessera_colour_close(made)
            conversion = nil
            greyTable = table
            isIdentity = (0..<768).allSatisfy { abs(Int(table[$0]) - $0 / 3) <= 1 }
        } else {
            conversion = made
            greyTable = []
            isIdentity = layout == .bitmap && Self.isNearIdentity(made)
        }
    }

    deinit { tessera_colour_close(conversion) }

    private static func isNearIdentity(_ conversion: UnsafeMutablePointer<TesseraColourConversion>) -> Bool {
        let steps = (0..<17).map { UInt8(min(255, $0 * 16)) }
        var lattice: [UInt8] = []
        lattice.reserveCapacity(17 * 17 * 17 * 4)
        for r in steps { for g in steps { for b in steps { lattice += [b, g, r, 255] } } }
        var converted = [UInt8](repeating: 0, count: lattice.count)
        tessera_colour_convert(conversion, lattice, &converted, lattice.count / 4)
        return zip(lattice, converted).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }

    /// Converts a decoded bitmap's premultiplied ARGB words in place (`.bitmap` and `.grey`): colours
    /// converted, alpha kept, translucent pixels unpremultiplied for the conversion and premultiplied
    /// again. Nothing is done for an identity (`isIdentity`).
    func convert(_ pixels: inout [UInt32]) {
        guard !isIdentity, !pixels.isEmpty else { return }
        switch layout {
        case .bitmap:
            pixels.withUnsafeMutableBytes { raw in
                tessera_colour_convert_premultiplied(conversion, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count / 4)
            }
        case .grey:
            greyTable.withUnsafeBufferPointer { table in
                for i in pixels.indices {
                    let word = pixels[i], a = word >> 24
                    guard a > 0 else { continue }
                    let level = a == 255 ? Int(word & 0xFF) : min(255, Int(((word & 0xFF) * 255 + a / 2) / a))
                    var out = word & 0xFF00_0000
                    for (c, shift) in [(0, 16), (1, 8), (2, 0)] as [(Int, UInt32)] {
                        let v = UInt32(table[level * 3 + c])
                        out |= min(a, a == 255 ? v : (v * a + 127) / 255) << shift
                    }
                    pixels[i] = out
                }
            }
        case .cmyk, .cmykInverted:
            Contract.violated("a CMYK conversion converts rows (convertRows), not a decoded bitmap")
        }
    }

    /// Converts `count` CMYK pixels at `row` to opaque RGBA bytes in place (`.cmyk`, `.cmykInverted`).
    func convertRows(_ row: UnsafeMutablePointer<UInt8>, count: Int) {
        guard count > 0 else { return }
        Contract.require(layout == .cmyk || layout == .cmykInverted, "only CMYK is converted row by row")
        tessera_colour_convert(conversion, row, row, count)
        for i in 0..<count { row[i * 4 + 3] = 255 }
    }
}

/// The conversions to sRGB made so far, by colour description and pixel layout, least recently used
/// out first; a description LittleCMS refused is kept too, with its reason, so a broken profile is not
/// parsed again by every decode. Making a transform costs far more than converting a photo's rows
/// with it (LittleCMS builds and optimises its pipeline), so decodes of images that share a profile
/// (a camera's photos, a phone's screenshots) make it once.
///
/// The lock is held only to look up and to insert: a conversion is made outside it (two decodes that
/// miss together both make one, and the later insert wins), and what an insert evicts is released
/// after the lock is let go.
/// - Thread: any
final class ColourConversions: Sendable {
    /// The largest ICC profile used, in bytes: real profiles take a few hundred bytes (matrix and
    /// curves) to a few megabytes (press CMYK tables). A larger one is ignored, and the image shown as
    /// sRGB; it is never read whole.
    static let maximumProfileBytes = 4 << 20

    /// The conversions every decode shares.
    static let shared = ColourConversions(countLimit: 32)

    struct Key: Hashable, Sendable {
        let colour: EmbeddedColour
        let layout: ColourPixelLayout
        let memoryLimit: Int
    }

    /// The most LittleCMS may hold while it reads a profile of `profileBytes` (0 for primaries and a
    /// curve) and makes its conversion: 4 MB and eight times the profile (its tables widened to 16
    /// bits, the conversion's own table, the sRGB profile), and never more than the decode's
    /// `workingMemoryBytes`. Real profiles need far less; a profile that asks more is not used.
    static func memoryLimit(profileBytes: Int, workingMemoryBytes: Int) -> Int {
        min(max(0, workingMemoryBytes), ByteCount.sum(4 << 20, ByteCount.product(profileBytes, 8)))
    }

    enum Outcome: Sendable {
        case made(ColourConversion)
        case refused(ColourRefusal)
    }

    private struct State {
        var entries: LRUCache<Key, Outcome>
        /// LittleCMS transforms attempted (made or refused) since start.
        var attempts = 0
    }

    private let state: Locked<State>  // every access through its lock

    init(countLimit: Int) {
        state = Locked(State(entries: LRUCache(countLimit: max(1, countLimit))))
    }

    /// How many times a conversion was asked of LittleCMS (a cache miss), since start.
    var attempts: Int { state.withLock { $0.attempts } }

    /// The conversion for `colour` and `layout`: nil for sRGB, else made once and kept. LittleCMS
    /// holds at most `memoryLimit(profileBytes:workingMemoryBytes:)` while it makes it.
    func conversion(for colour: EmbeddedColour, layout: ColourPixelLayout,
                    workingMemoryBytes: Int = ImageDecoder.Limits().workingMemoryBytes) -> Result<ColourConversion?, ColourRefusal> {
        if colour == .sRGB { return .success(nil) }
        var profileBytes = 0
        if case .profile(let profile) = colour { profileBytes = profile.bytes.count }
        let limit = Self.memoryLimit(profileBytes: profileBytes, workingMemoryBytes: workingMemoryBytes)
        let key = Key(colour: colour, layout: layout, memoryLimit: limit)
        if let found = state.withLock({ $0.entries.value(for: key) }) { return Self.result(found) }
        let outcome: Outcome
        switch ColourConversion.make(colour, layout: layout, memoryLimit: limit) {
        case .success(let conversion): outcome = .made(conversion)
        case .failure(let refusal): outcome = .refused(refusal)
        }
        let evicted = state.withLock { state -> [LRUCache<Key, Outcome>.Entry] in
            state.attempts += 1
            return state.entries.insert(outcome, for: key, cost: 1)
        }
        _ = evicted  // released here, after unlocking
        return Self.result(outcome)
    }

    private static func result(_ outcome: Outcome) -> Result<ColourConversion?, ColourRefusal> {
        switch outcome {
        case .made(let conversion): return .success(conversion)
        case .refused(let refusal): return .failure(refusal)
        }
    }
}

/// What one decode did instead of what its file asked: colour information it could not use (a broken,
/// unsupported or mismatched profile or chunk), and what it showed instead. Once the decode has chosen
/// its colours, the notes are written to `TesseraLog.images`, each distinct line once per process.
/// - Thread: the one decoding thread that made it
final class DecodeNotes {
    let source: String
    /// Each completes "<source>: …", e.g. "its ICC profile is not used (…)".
    private(set) var colourFallbacks: [String] = []
    /// What the decode showed, once chosen: "as stored (sRGB)", "converted from its ICC profile".
    private(set) var colourShown: String?

    init(source: String) { self.source = source }

    func colourFallback(_ what: String) { colourFallbacks.append(what) }

    /// Records how the colours are shown and, if anything was not used, writes it to the log.
    func colourChosen(_ shown: String) {
        colourShown = shown
        guard !colourFallbacks.isEmpty else { return }
        ImageLog.reportOnce("\(source): \(colourFallbacks.joined(separator: "; ")); its colours are shown \(shown)")
    }
}

/// Writes each distinct image diagnostic once per process, and at most `limit` of them, so a feed of
/// thousands of images with one broken profile cannot flood the log.
enum ImageLog {
    static let limit = 200
    private static let reported = Locked(Set<String>())

    static func reportOnce(_ line: String) {
        let action = reported.withLock { reported -> Int in
            guard reported.count <= limit, !reported.contains(line) else { return 0 }
            reported.insert(line)
            return reported.count <= limit ? 1 : 2
        }
        switch action {
        case 1: TesseraLog.images.warning("\(line)")
        case 2: TesseraLog.images.warning("further image diagnostics are not reported")
        default: break
        }
    }
}
