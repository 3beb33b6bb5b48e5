/// What a file says its stored colours mean: nothing or sRGB (shown as stored), an embedded ICC
/// profile, or primaries with a transfer curve (a PNG's `cICP`, or its `gAMA` and `cHRM`). Decoders
/// read it from the file; `ColourConversions` turns it into a conversion to sRGB.
/// - Thread: any (a value)
enum EmbeddedColour: Hashable, Sendable {
    case sRGB
    case profile(ICCProfile)
    case parametric(ParametricColour)
}

/// The colour a decode uses, and where in the file it was said ("its ICC profile", "its cICP chunk"),
/// for the decode's notes.
/// - Thread: any (a value)
struct ColourChoice: Sendable {
    var colour: EmbeddedColour
    var origin: String
}

/// An embedded ICC profile's bytes, compared and hashed by their digest (computed once), so a cache
/// key holding one costs constant time whatever the profile's size.
/// - Thread: any (a value)
struct ICCProfile: Hashable, Sendable {
    let bytes: [UInt8]
    let digest: ContentDigest

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        digest = ContentDigest(bytes)
    }

    static func == (a: ICCProfile, b: ICCProfile) -> Bool { a.digest == b.digest }
    func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}

/// An RGB space given by its white point and primaries (CIE 1931 x, y) and one transfer curve, from
/// the signal stored in the file to linear light.
/// - Thread: any (a value)
struct ParametricColour: Hashable, Sendable {
    /// White, red, green, blue: x, y for each.
    var chromaticities: [Double]
    var transfer: Transfer

    /// From stored values to linear light.
    enum Transfer: Hashable, Sendable {
        /// Linear = stored^exponent (a PNG's `gAMA` gives 1 / its value).
        case power(Double)
        /// IEC 61966-2-1, sRGB's own piecewise curve.
        case sRGB
        /// The inverse of ITU-R BT.709's camera curve (also BT.601's and BT.2020's).
        case bt709

        /// LittleCMS's parametric curve type and its five parameters (g, a, b, c, d).
        var lcmsCurve: (type: Int32, parameters: [Double]) {
            switch self {
            case .power(let exponent): return (1, [exponent, 0, 0, 0, 0])
            case .sRGB: return (4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
            case .bt709: return (4, [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081])
            }
        }
    }

    static let d65 = [0.3127, 0.3290]
    /// ITU-R BT.709 primaries, which sRGB shares.
    static let bt709Primaries = d65 + [0.640, 0.330, 0.300, 0.600, 0.150, 0.060]
    /// SMPTE EG 432-1 (Display P3): DCI-P3's primaries with a D65 white.
    static let displayP3Primaries = d65 + [0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
    /// SMPTE RP 431-2 (DCI-P3, the cinema white point).
    static let dciP3Primaries = [0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
    /// ITU-R BT.2020 (and BT.2100).
    static let bt2020Primaries = d65 + [0.708, 0.292, 0.170, 0.797, 0.131, 0.046]
}

// MARK: - PNG

/// The colour chunks a PNG carries before its image data (`PNGChunkStream` gathers them), and which
/// one wins: `cICP`, then `iCCP`, then `sRGB`, then `gAMA` with `cHRM`, as the PNG specification's
/// third edition orders them. A chunk that cannot be used is noted and the next one is tried.
/// - Thread: any (a value)
struct PNGColourChunks {
    /// `cICP`: colour primaries, transfer function, matrix coefficients, full-range flag.
    var codingPoints: [UInt8]?
    /// Whether an `iCCP` chunk came, and why it was not given to libpng when it was not.
    var sawProfile = false
    var profileSkipped: String?
    var sRGB = false
    /// `gAMA` and `cHRM` as stored: times 100,000.
    var gamma: Int?
    var chromaticities: [Int]?
    /// Colour chunks that were malformed (a wrong length), for the decode's notes.
    var malformed: [String] = []

    /// What the chunks say. `profile` is the `iCCP` profile libpng inflated and accepted (nil when it
    /// refused the chunk, for `profileRefusal`); unusable chunks are noted in `notes`.
    func resolve(profile: [UInt8]?, profileRefusal: @autoclosure () -> String, notes: DecodeNotes) -> ColourChoice {
        for chunk in malformed { notes.colourFallback("a malformed PNG \(chunk) chunk is ignored") }
        if let codingPoints {
            switch Self.colour(codingPoints: codingPoints) {
            case .success(let colour): return ColourChoice(colour: colour, origin: "its cICP chunk")
            case .failure(let refusal): notes.colourFallback("its cICP chunk is not used (\(refusal.reason))")
            }
        }
        if sawProfile {
            if let skipped = profileSkipped {
                notes.colourFallback("its iCCP profile is not used (\(skipped))")
            } else if let profile {
                return ColourChoice(colour: .profile(ICCProfile(profile)), origin: "its iCCP profile")
            } else {
                notes.colourFallback("its iCCP profile is not used (\(profileRefusal()))")
            }
        }
        if sRGB { return ColourChoice(colour: .sRGB, origin: "its sRGB chunk") }
        return ColourChoice(colour: gammaAndChromaticities(notes: notes), origin: "its gAMA and cHRM chunks")
    }

    /// `gAMA` and `cHRM`, without a better chunk: sRGB's primaries when there is no `cHRM`, sRGB's
    /// curve when there is no `gAMA`.
    private func gammaAndChromaticities(notes: DecodeNotes) -> EmbeddedColour {
        var transfer = ParametricColour.Transfer.sRGB
        var primaries = ParametricColour.bt709Primaries
        var said = false
        if let gamma {
            // 0.01 to 10: PngSuite's extremes are 0.35 and 2.5; past these the picture would be black or white.
            if (1_000...1_000_000).contains(gamma) {
                transfer = .power(100_000 / Double(gamma))
                said = true
            } else {
                notes.colourFallback("its gAMA of \(Double(gamma) / 100_000) is outside 0.01…10 and is ignored")
            }
        }
        if let chromaticities {
            let xy = chromaticities.map { Double($0) / 100_000 }
            let valid = stride(from: 0, to: 8, by: 2).allSatisfy { xy[$0] >= 0 && xy[$0 + 1] > 0 && xy[$0] + xy[$0 + 1] <= 1 }
            if valid {
                primaries = xy
                said = true
            } else {
                notes.colourFallback("its cHRM chromaticities are impossible (\(xy)) and are ignored")
            }
        }
        return said ? .parametric(ParametricColour(chromaticities: primaries, transfer: transfer)) : .sRGB
    }

    /// A `cICP` chunk's colour, or why it cannot be shown: the BT.709/sRGB, Display P3, DCI-P3 and
    /// BT.2020 primaries with the sRGB, BT.709-family, linear and pure-power curves, full range, RGB.
    /// PQ and HLG (high dynamic range) and narrow-range values are not converted.
    static func colour(codingPoints bytes: [UInt8]) -> Result<EmbeddedColour, ColourRefusal> {
        let (primaries, transfer, matrix, fullRange) = (bytes[0], bytes[1], bytes[2], bytes[3])
        guard matrix == 0 else { return .failure(ColourRefusal("matrix coefficients \(matrix); a PNG stores RGB (0)")) }
        guard fullRange == 1 else { return .failure(ColourRefusal("narrow-range values are not supported")) }
        let xy: [Double]
        switch primaries {
        case 1: xy = ParametricColour.bt709Primaries
        case 9: xy = ParametricColour.bt2020Primaries
        case 11: xy = ParametricColour.dciP3Primaries
        case 12: xy = ParametricColour.displayP3Primaries
        default: return .failure(ColourRefusal("colour primaries \(primaries) are not supported"))
        }
        let curve: ParametricColour.Transfer
        switch transfer {
        case 13: curve = .sRGB
        case 1, 6, 14, 15: curve = .bt709
        case 8: curve = .power(1)
        case 4: curve = .power(2.2)
        case 5: curve = .power(2.8)
        case 16, 18:
            return .failure(ColourRefusal("transfer \(transfer == 16 ? "PQ" : "HLG") is high dynamic range, which is not tone-mapped"))
        default: return .failure(ColourRefusal("transfer characteristics \(transfer) are not supported"))
        }
        if primaries == 1 && curve == .sRGB { return .success(.sRGB) }
        return .success(.parametric(ParametricColour(chromaticities: xy, transfer: curve)))
    }
}

/// Why colour information cannot be used; the message completes "… is not used (…)".
/// - Thread: any (a value)
struct ColourRefusal: Error, Hashable, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

// MARK: - JPEG

/// Where one APP2 segment of a JPEG's ICC profile lies: its number among the profile's segments, how
/// many there are, and its part of the profile (after the 14-byte "ICC_PROFILE" header and the two
/// numbers).
/// - Thread: any (a value)
struct JPEGProfileSegment: Sendable {
    var sequence: Int
    var count: Int
    var offset: Int
    var length: Int
}

extension ImageDecoder {
    /// The ICC profile a JPEG's APP2 segments carry, joined in their numbered order; nil, noted in
    /// `notes`, when the numbers are not 1 to N once each, the profile is larger than
    /// `ColourConversions.maximumProfileBytes`, or the file ends inside it.
    static func jpegProfile(_ reader: EncodedReader, segments: [JPEGProfileSegment], notes: DecodeNotes) throws -> [UInt8]? {
        guard let first = segments.first else { return nil }
        let ordered = segments.sorted { $0.sequence < $1.sequence }
        guard ordered.count == first.count, ordered.allSatisfy({ $0.count == first.count }),
              ordered.enumerated().allSatisfy({ $0.offset + 1 == $0.element.sequence }) else {
            let numbers = segments.map { "\($0.sequence)/\($0.count)" }.joined(separator: ", ")
            notes.colourFallback("its ICC profile is not used (its APP2 segments are numbered \(numbers), not 1 to N once each)")
            return nil
        }
        let total = ordered.reduce(0) { $0 + $1.length }
        guard total <= ColourConversions.maximumProfileBytes else {
            notes.colourFallback("its ICC profile is not used (\(total) bytes, over the \(ColourConversions.maximumProfileBytes)-byte limit)")
            return nil
        }
        var profile: [UInt8] = []
        profile.reserveCapacity(total)
        for segment in ordered {
            reader.seek(to: segment.offset)
            let part = try reader.bytes(segment.length)
            guard part.count == segment.length else {
                notes.colourFallback("its ICC profile is not used (the file ends inside it)")
                return nil
            }
            profile += part
        }
        return profile
    }
}
