import Compositor
internal import CLCMS
internal import CWebP
import Foundation
import TesseraRandom
import TestSupport
import XCTest
@testable import NodeRuntime

/// Colours as the file means them: embedded ICC profiles (JPEG APP2, PNG iCCP, WebP ICCP) and PNG's
/// colour chunks (cICP, sRGB, gAMA, cHRM) converted to sRGB with LittleCMS, what is done with
/// profiles that cannot be used, the conversions' cache, PNG's eXIf orientation, and a lossless WebP
/// without alpha shown opaque.
///
/// Profiles are made here with LittleCMS (`cmsCreateRGBProfile` with Display P3's primaries and
/// sRGB's curve); the sRGB values every converted pixel must have are computed independently, from
/// the primaries (the RGB-to-XYZ matrices of both spaces) and the transfer curves' formulas.
@MainActor
final class ColourManagementTests: XCTestCase {
    private var time = 0.0
    private let output = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/colour")

    override func setUpWithError() throws {
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    // MARK: The expected values, by the formulas

    private typealias Matrix = [[Double]]

    private func multiply(_ m: Matrix, _ v: [Double]) -> [Double] {
        m.map { row in zip(row, v).reduce(0) { $0 + $1.0 * $1.1 } }
    }

    private func inverse(_ m: Matrix) -> Matrix {
        let (a, b, c) = (m[0][0], m[0][1], m[0][2])
        let (d, e, f) = (m[1][0], m[1][1], m[1][2])
        let (g, h, i) = (m[2][0], m[2][1], m[2][2])
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
                [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
                [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]
    }

    /// The matrix from linear RGB to XYZ for a white point and primaries (x, y pairs: white, red,
    /// green, blue): the primaries' XYZ as columns, scaled so that RGB (1, 1, 1) is the white.
    private func rgbToXYZ(_ xy: [Double]) -> Matrix {
        func xyz(_ x: Double, _ y: Double) -> [Double] { [x / y, 1, (1 - x - y) / y] }
        let r = xyz(xy[2], xy[3]), g = xyz(xy[4], xy[5]), b = xyz(xy[6], xy[7])
        let primaries: Matrix = [[r[0], g[0], b[0]], [r[1], g[1], b[1]], [r[2], g[2], b[2]]]
        let s = multiply(inverse(primaries), xyz(xy[0], xy[1]))
        return primaries.map { row in [row[0] * s[0], row[1] * s[1], row[2] * s[2]] }
    }

    private static let sRGBPrimaries = [0.3127, 0.3290, 0.640, 0.330, 0.300, 0.600, 0.150, 0.060]
    private static let p3Primaries = [0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
    private static let bt2020Primaries = [0.3127, 0.3290, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046]

    private func sRGBDecode(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
    private func sRGBEncode(_ v: Double) -> Double {
        let c = min(1, max(0, v))
        return c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055
    }
    private func bt709Decode(_ v: Double) -> Double { v < 0.081 ? v / 4.5 : pow((v + 0.099) / 1.099, 1 / 0.45) }

    /// The sRGB value (0–255, unrounded) of the stored `rgb` in the space of `primaries` whose curve
    /// from stored value to linear light is `decode`. Both spaces here share D65, so no adaptation.
    private func expected(_ rgb: [Int], primaries: [Double], decode: (Double) -> Double) -> [Double] {
        let linear = rgb.map { decode(Double($0) / 255) }
        let toSRGB = inverse(rgbToXYZ(Self.sRGBPrimaries))
        let converted = multiply(toSRGB, multiply(rgbToXYZ(primaries), linear))
        return converted.map { sRGBEncode($0) * 255 }
    }

    private func rgb(_ pixel: UInt32) -> [Int] {
        [Int((pixel >> 16) & 0xFF), Int((pixel >> 8) & 0xFF), Int(pixel & 0xFF)]
    }

    private func assertClose(_ actual: [Int], _ expected: [Double], within tolerance: Double = 2, _ message: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        let far = zip(actual, expected).contains { abs(Double($0) - $1) > tolerance }
        XCTAssertFalse(far, "\(message): \(actual), expected \(expected.map { ($0 * 10).rounded() / 10 })", file: file, line: line)
    }

    // MARK: Profiles, made with LittleCMS

    private func profileBytes(_ profile: cmsHPROFILE?) throws -> [UInt8] {
        let profile = try XCTUnwrap(profile, "LittleCMS made no profile")
        defer { cmsCloseProfile(profile) }
        let size = tessera_colour_profile_bytes(profile, nil, 0)
        var bytes = [UInt8](repeating: 0, count: size)
        XCTAssertEqual(tessera_colour_profile_bytes(profile, &bytes, size), size)
        return bytes
    }

    /// An RGB profile of `primaries` with sRGB's curve, or a pure power curve of `exponent`.
    private func rgbProfile(_ primaries: [Double], exponent: Double? = nil) throws -> [UInt8] {
        let curve: (Int32, [Double]) = exponent.map { (1, [$0, 0, 0, 0, 0]) }
            ?? (4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
        return try profileBytes(tessera_colour_rgb_profile(nil, primaries, curve.0, curve.1))
    }

    /// Display P3: its primaries, a D65 white and sRGB's curve.
    private func p3Profile() throws -> [UInt8] { try rgbProfile(Self.p3Primaries) }

    /// A grey profile whose values are linear light (gamma 1).
    private func linearGreyProfile() throws -> [UInt8] {
        let curve = try XCTUnwrap(cmsBuildGamma(nil, 1.0))
        defer { cmsFreeToneCurve(curve) }
        return try profileBytes(cmsCreateGrayProfile(cmsD50_xyY(), curve))
    }

    // MARK: Files

    /// `png` with `chunks` inserted right after its header chunk (before any palette or image data).
    private func png(_ png: [UInt8], inserting chunks: [[UInt8]]) -> [UInt8] {
        Array(png[..<33]) + chunks.flatMap { $0 } + Array(png[33...])
    }

    private func iCCP(_ profile: [UInt8]) -> [UInt8] {
        TestImageFiles.chunk("iCCP", Array("profile".utf8) + [0, 0] + TestImageFiles.zlibStored(profile))
    }

    /// The colours every colour test shows, one pixel each: P3's pure red, an orange, a grey, a teal.
    private let swatches: [[Int]] = [[255, 0, 0], [200, 100, 50], [128, 128, 128], [30, 160, 140]]

    /// A 4×1 RGB PNG of the swatches.
    private func swatchPNG(_ chunks: [[UInt8]] = []) -> [UInt8] {
        png(TestImageFiles.png(width: 4, height: 1, colourType: 2, bitDepth: 8) { x, _ in self.swatches[x] }, inserting: chunks)
    }

    /// `jpeg` with APP2 segments carrying `profile` in `parts` pieces, written in the order `order`
    /// (1-based sequence numbers; `count` as the declared total, the real one by default).
    private func jpeg(_ jpeg: [UInt8], profile: [UInt8], parts: Int, order: [Int], count: Int? = nil) -> [UInt8] {
        let size = (profile.count + parts - 1) / parts
        var segments: [UInt8] = []
        for sequence in order {
            let start = min(profile.count, (sequence - 1) * size), end = min(profile.count, start + size)
            let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(sequence), UInt8(count ?? parts)] + Array(profile[start..<end])
            let length = payload.count + 2
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }

    /// A 32×16 JPEG (quality 100) of the orange swatch on the left and the teal on the right.
    private func swatchJPEG() throws -> [UInt8] {
        let pixels = (0..<(32 * 16)).map { i -> UInt32 in i % 32 < 16 ? 0xFFC8_6432 : 0xFF1E_A08C }
        let path = output.appendingPathComponent("swatches.jpg").path
        try Bitmap(width: 32, height: 16, premultipliedARGB: pixels).writeJPEG(to: path, quality: 100)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func riffChunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let count = payload.count
        return Array(type.utf8) + [0, 8, 16, 24].map { UInt8((count >> $0) & 0xFF) } + payload + (count % 2 == 1 ? [0] : [])
    }

    private func riff(_ chunks: [UInt8]) -> [UInt8] {
        let body = Array("WEBP".utf8) + chunks
        return Array("RIFF".utf8) + [0, 8, 16, 24].map { UInt8((body.count >> $0) & 0xFF) } + body
    }

    /// A lossless WebP of `rgba` (`width` × `height`) in the extended container with `profile`.
    private func webp(_ rgba: [UInt8], width: Int, height: Int, profile: [UInt8], alpha: Bool) throws -> [UInt8] {
        var encoded: UnsafeMutablePointer<UInt8>?
        let size = rgba.withUnsafeBufferPointer {
            WebPEncodeLosslessRGBA($0.baseAddress, Int32(width), Int32(height), Int32(width * 4), &encoded)
        }
        guard size > 0, let encoded else { throw XCTSkip("libwebp could not encode") }
        defer { WebPFree(encoded) }
        let simple = Array(UnsafeBufferPointer(start: encoded, count: size))
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF)] }
        let header = riffChunk("VP8X", [0x20 | (alpha ? 0x10 : 0), 0, 0, 0] + le24(width - 1) + le24(height - 1))
        return riff(header + riffChunk("ICCP", profile) + Array(simple[12...]))
    }

    /// Decodes `bytes` at its natural size (EXIF orientation applied), keeping the decode's notes.
    private func decode(_ bytes: [UInt8], _ name: String) throws -> (bitmap: Bitmap, notes: DecodeNotes) {
        let source = ImageSource.data(bytes, name: name)
        let size = try ImageDecoder.naturalPixelSize(of: source)
        let notes = DecodeNotes(source: source.description)
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(source, for: .init(width: size.width, height: size.height, mode: .aspectFit),
                                                           limits: .init(), notes: notes, isCancelled: { false }))
        return (bitmap, notes)
    }

    // MARK: Embedded ICC profiles

    /// A Display P3 PNG is not shown washed out: each pixel is the sRGB colour of its P3 value.
    func testADisplayP3PNGShowsItsColoursInSRGB() async throws {
        let (stored, _) = try decode(swatchPNG(), "plain.png")
        XCTAssertEqual(rgb(stored.pixel(x: 1, y: 0)), [200, 100, 50], "without a profile, shown as stored")
        let (shown, notes) = try decode(swatchPNG([iCCP(try p3Profile())]), "p3.png")
        for (x, swatch) in swatches.enumerated() {
            assertClose(rgb(shown.pixel(x: x, y: 0)), expected(swatch, primaries: Self.p3Primaries, decode: sRGBDecode), "swatch \(x)")
            XCTAssertEqual(shown.pixel(x: x, y: 0) >> 24, 255)
        }
        XCTAssertEqual(rgb(shown.pixel(x: 0, y: 0))[0], 255, "P3's red is outside sRGB: clipped to sRGB's red")
        XCTAssertLessThanOrEqual(rgb(shown.pixel(x: 0, y: 0))[1], 2)
        let orange = rgb(shown.pixel(x: 1, y: 0))
        XCTAssertGreaterThanOrEqual(orange[0] - 200, 10, "more saturated than the stored values: \(orange)")
        XCTAssertGreaterThanOrEqual(50 - orange[2], 10, "more saturated than the stored values: \(orange)")
        assertClose(rgb(shown.pixel(x: 2, y: 0)), [128, 128, 128], within: 1, "grey stays grey: both spaces share D65")
        XCTAssertEqual(notes.colourShown, "converted to sRGB from its iCCP profile")
        XCTAssertEqual(notes.colourFallbacks, [])
    }

    /// Alpha passes through the conversion: a half-transparent orange keeps its alpha, its colour
    /// converted (and premultiplied, as every bitmap is).
    func testAlphaIsKeptThroughTheConversion() async throws {
        let base = TestImageFiles.png(width: 2, height: 1, colourType: 6, bitDepth: 8) { x, _ in x == 0 ? [200, 100, 50, 128] : [200, 100, 50, 255] }
        let (shown, _) = try decode(png(base, inserting: [iCCP(try p3Profile())]), "p3-alpha.png")
        let half = shown.pixel(x: 0, y: 0), opaque = shown.pixel(x: 1, y: 0)
        XCTAssertEqual(half >> 24, 128)
        XCTAssertEqual(opaque >> 24, 255)
        let colour = expected([200, 100, 50], primaries: Self.p3Primaries, decode: sRGBDecode)
        assertClose(rgb(opaque), colour, "opaque")
        assertClose(rgb(half), colour.map { $0 * 128 / 255 }, "premultiplied by 128/255")
    }

    /// A JPEG's profile in three APP2 segments written out of order (2, 3, 1) is joined by their
    /// numbers; numbers that are not 1 to N once each make the decode show the stored colours.
    func testAJPEGProfileInSegmentsIsJoinedByTheirNumbers() async throws {
        let plain = try swatchJPEG()
        let profile = try p3Profile()
        let (stored, _) = try decode(plain, "plain.jpg")
        let (shown, notes) = try decode(jpeg(plain, profile: profile, parts: 3, order: [2, 3, 1]), "p3.jpg")
        XCTAssertEqual(notes.colourShown, "converted to sRGB from its ICC profile")
        for x in [4, 27] {
            let was = rgb(stored.pixel(x: x, y: 8))
            assertClose(rgb(shown.pixel(x: x, y: 8)), expected(was, primaries: Self.p3Primaries, decode: sRGBDecode), "x \(x) (stored \(was))")
        }
        let (misnumbered, misnumberedNotes) = try decode(jpeg(plain, profile: profile, parts: 3, order: [1, 3, 3]), "bad-numbers.jpg")
        XCTAssertEqual(misnumbered.pixels, stored.pixels, "shown as stored")
        XCTAssertTrue(misnumberedNotes.colourFallbacks.joined().contains("numbered 1/3, 3/3, 3/3"), "\(misnumberedNotes.colourFallbacks)")
        XCTAssertEqual(misnumberedNotes.colourShown, "as stored (sRGB)")
    }

    /// A grey JPEG's grey profile converts through grey: linear values come out sRGB-encoded.
    func testAGreyJPEGWithAGreyProfile() async throws {
        let fixture = GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/quadrants-grey.jpg")
        let plain = [UInt8](try Data(contentsOf: fixture))
        let (stored, _) = try decode(plain, "grey.jpg")
        let (shown, notes) = try decode(jpeg(plain, profile: try linearGreyProfile(), parts: 1, order: [1]), "linear-grey.jpg")
        XCTAssertEqual(notes.colourShown, "converted to sRGB from its ICC profile")
        var checked = Set<Int>()
        for y in stride(from: 0, to: stored.height, by: 7) {
            for x in stride(from: 0, to: stored.width, by: 7) {
                let level = rgb(stored.pixel(x: x, y: y))[0]
                let encoded = sRGBEncode(Double(level) / 255) * 255
                assertClose(rgb(shown.pixel(x: x, y: y)), [encoded, encoded, encoded], "grey \(level) at \(x),\(y)")
                checked.insert(level)
            }
        }
        XCTAssertGreaterThan(checked.count, 2, "several grey levels were compared: \(checked.sorted())")
    }

    /// A WebP's ICCP chunk converts its pixels, lossless or with alpha.
    func testAWebPProfileConvertsItsPixels() async throws {
        let rgba = swatches.flatMap { $0 + [255] }.map { UInt8($0) }
        let (shown, notes) = try decode(try webp(rgba, width: 4, height: 1, profile: try p3Profile(), alpha: false), "p3.webp")
        XCTAssertEqual(notes.colourShown, "converted to sRGB from its ICCP profile")
        for (x, swatch) in swatches.enumerated() {
            assertClose(rgb(shown.pixel(x: x, y: 0)), expected(swatch, primaries: Self.p3Primaries, decode: sRGBDecode), "swatch \(x)")
        }
        let translucent = [200, 100, 50, 128, 200, 100, 50, 255].map { UInt8($0) }
        let (withAlpha, _) = try decode(try webp(translucent, width: 2, height: 1, profile: try p3Profile(), alpha: true), "p3-alpha.webp")
        let colour = expected([200, 100, 50], primaries: Self.p3Primaries, decode: sRGBDecode)
        XCTAssertEqual(withAlpha.pixel(x: 0, y: 0) >> 24, 128)
        assertClose(rgb(withAlpha.pixel(x: 0, y: 0)), colour.map { $0 * 128 / 255 }, "premultiplied by 128/255")
        assertClose(rgb(withAlpha.pixel(x: 1, y: 0)), colour, "opaque")
    }

    // MARK: Profiles that cannot be used

    /// Broken, mismatched and oversized profiles: each image decodes, shows its stored colours, and
    /// says why in its notes.
    func testProfilesThatCannotBeUsedLeaveTheStoredColoursAndSaySo() async throws {
        let p3 = try p3Profile()
        var wrongSignature = p3
        wrongSignature.replaceSubrange(36..<40, with: Array("xxxx".utf8))
        let (stored, _) = try decode(swatchPNG(), "plain.png")
        let pngCases: [(String, [UInt8], String)] = [
            ("truncated", Array(p3.prefix(100)), "iCCP profile is not used"),
            ("wrong signature", wrongSignature, "iCCP profile is not used"),
            ("grey profile on RGB pixels", try linearGreyProfile(), "iCCP profile is not used"),
        ]
        for (name, profile, words) in pngCases {
            let (shown, notes) = try decode(swatchPNG([iCCP(profile)]), "\(name).png")
            XCTAssertEqual(shown.pixels, stored.pixels, "\(name): shown as stored")
            XCTAssertTrue(notes.colourFallbacks.contains { $0.contains(words) }, "\(name): \(notes.colourFallbacks)")
            XCTAssertEqual(notes.colourShown, "as stored (sRGB)", name)
        }

        // JPEG profiles reach LittleCMS without libpng's checks: its own refusal is the reason.
        let plain = try swatchJPEG()
        let (storedJPEG, _) = try decode(plain, "plain.jpg")
        let jpegCases: [(String, [UInt8], Int, String)] = [
            ("truncated", Array(p3.prefix(300)), 1, "its ICC profile is not used"),
            ("wrong signature", wrongSignature, 1, "its ICC profile is not used"),
            ("grey profile on RGB pixels", try linearGreyProfile(), 1, "not an RGB profile"),
            // 70 segments of 65,000 bytes: over the 4 MB a profile may have, never joined.
            ("absurdly large", [UInt8](repeating: 7, count: 70 * 65_000), 70, "over the 4194304-byte limit"),
        ]
        for (name, profile, parts, words) in jpegCases {
            let (shown, notes) = try decode(jpeg(plain, profile: profile, parts: parts, order: Array(1...parts)), "\(name).jpg")
            XCTAssertEqual(shown.pixels, storedJPEG.pixels, "\(name): shown as stored")
            XCTAssertTrue(notes.colourFallbacks.contains { $0.contains(words) }, "\(name): \(notes.colourFallbacks)")
        }
        // An RGB profile on a grey JPEG and a CMYK one: refused for their pixels, the picture as before.
        let grey = [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/quadrants-grey.jpg")))
        let (greyShown, greyNotes) = try decode(jpeg(grey, profile: p3, parts: 1, order: [1]), "rgb-on-grey.jpg")
        XCTAssertEqual(greyShown.pixels, try decode(grey, "grey.jpg").bitmap.pixels)
        XCTAssertTrue(greyNotes.colourFallbacks.contains { $0.contains("not an RGB profile") || $0.contains("not a grey profile") },
                      "\(greyNotes.colourFallbacks)")
        let cmyk = [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/quadrants-cmyk.jpg")))
        let (cmykShown, cmykNotes) = try decode(jpeg(cmyk, profile: p3, parts: 1, order: [1]), "rgb-on-cmyk.jpg")
        XCTAssertEqual(cmykShown.pixels, try decode(cmyk, "cmyk.jpg").bitmap.pixels, "Adobe CMYK converted as without a profile")
        XCTAssertTrue(cmykNotes.colourFallbacks.contains { $0.contains("not a CMYK profile") }, "\(cmykNotes.colourFallbacks)")

        // A WebP profile over the limit is skipped unread.
        let big = try webp(swatches.flatMap { $0 + [255] }.map { UInt8($0) }, width: 4, height: 1, profile: [UInt8](repeating: 9, count: 5 << 20), alpha: false)
        let (bigShown, bigNotes) = try decode(big, "big-profile.webp")
        XCTAssertEqual(rgb(bigShown.pixel(x: 1, y: 0)), [200, 100, 50])
        XCTAssertTrue(bigNotes.colourFallbacks.contains { $0.contains("over the 4194304-byte limit") }, "\(bigNotes.colourFallbacks)")
    }

    /// Seeded damage to a profile, byte by byte, in PNG (libpng checks first) and JPEG (straight to
    /// LittleCMS): every file decodes, opaque, either converted or shown as stored with a reason.
    func testDamagedProfilesNeverCrash() async throws {
        let p3 = try p3Profile()
        let plain = try swatchJPEG()
        var random = SeededRandom(seed: 0xC0_10_0E)
        var converted = 0, refused = 0
        for round in 0..<150 {
            var damaged = p3
            for _ in 0..<(1 + Int(random.next() % 12)) {
                let at = Int(random.next() % UInt64(damaged.count))
                damaged[at] = UInt8(truncatingIfNeeded: random.next())
            }
            if round % 10 == 0 { damaged = Array(damaged.prefix(Int(random.next() % UInt64(damaged.count)))) }
            for (bytes, name) in [(swatchPNG([iCCP(damaged)]), "damaged-\(round).png"),
                                  (jpeg(plain, profile: damaged, parts: 2, order: [1, 2]), "damaged-\(round).jpg")] {
                let (shown, notes) = try decode(bytes, name)
                XCTAssertEqual(shown.pixel(x: 1, y: 0) >> 24, 255, name)
                if notes.colourFallbacks.isEmpty { converted += 1 } else { refused += 1 }
                XCTAssertNotNil(notes.colourShown, name)
            }
        }
        XCTAssertGreaterThan(refused, 0, "some damage is refused")
        XCTAssertEqual(converted + refused, 300)
    }

    // MARK: The cache

    /// A conversion is made once per profile and pixel layout and shared; a refused profile is kept
    /// with its reason; the least recently used leaves past the count limit.
    func testConversionsAreMadeOncePerProfile() async throws {
        let cache = ColourConversions(countLimit: 2)
        let p3 = EmbeddedColour.profile(ICCProfile(try p3Profile()))
        let first = try XCTUnwrap(try cache.conversion(for: p3, layout: .bitmap).get())
        let again = try XCTUnwrap(try cache.conversion(for: p3, layout: .bitmap).get())
        XCTAssertTrue(first === again, "the same conversion")
        XCTAssertEqual(cache.attempts, 1)
        XCTAssertNil(try cache.conversion(for: .sRGB, layout: .bitmap).get(), "sRGB needs none")
        let broken = EmbeddedColour.profile(ICCProfile([1, 2, 3]))
        for _ in 0..<3 { XCTAssertThrowsError(try cache.conversion(for: broken, layout: .bitmap).get()) }
        XCTAssertEqual(cache.attempts, 2, "a refusal is kept too")
        _ = cache.conversion(for: .profile(ICCProfile(try rgbProfile(Self.bt2020Primaries))), layout: .bitmap)
        let remade = try XCTUnwrap(try cache.conversion(for: p3, layout: .bitmap).get())
        XCTAssertFalse(first === remade, "evicted by two newer entries, then made again")
        XCTAssertEqual(cache.attempts, 4)

        // Decodes share the process's cache: a second image with the same profile makes none.
        let profile = try rgbProfile(Self.p3Primaries, exponent: 1.9)
        _ = try decode(swatchPNG([iCCP(profile)]), "shared-1.png")
        let made = ColourConversions.shared.attempts
        _ = try decode(jpeg(try swatchJPEG(), profile: profile, parts: 1, order: [1]), "shared-2.jpg")
        XCTAssertEqual(ColourConversions.shared.attempts, made, "the PNG's conversion served the JPEG")
    }

    /// Decodes on eight threads at once share one conversion and all convert alike.
    func testConcurrentDecodesShareConversions() async throws {
        let bytes = swatchPNG([iCCP(try rgbProfile(Self.p3Primaries, exponent: 2.05))])
        let results = Locked([[UInt32]]())
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for round in 0..<4 {
                let bitmap = try? ImageDecoder.decode(.data(bytes, name: "concurrent-\(i)-\(round).png"),
                                                      for: .init(width: 4, height: 1, mode: .aspectFit))
                results.withLock { $0.append(bitmap?.pixels ?? []) }
            }
        }
        let all = results.withLock { $0 }
        XCTAssertEqual(all.count, 32)
        XCTAssertEqual(Set(all.map { $0.description }).count, 1, "every decode converted alike")
        let orange = rgb(all[0][1])
        assertClose(orange, expected([200, 100, 50], primaries: Self.p3Primaries, decode: { pow($0, 2.05) }), "converted")
    }

    // MARK: PNG colour chunks

    private func gAMA(_ value: Int) -> [UInt8] { TestImageFiles.chunk("gAMA", TestImageFiles.be32(value)) }
    private func cHRM(_ xy: [Double]) -> [UInt8] {
        TestImageFiles.chunk("cHRM", xy.flatMap { TestImageFiles.be32(Int(($0 * 100_000).rounded())) })
    }
    private func cICP(_ primaries: UInt8, _ transfer: UInt8, fullRange: UInt8 = 1) -> [UInt8] {
        TestImageFiles.chunk("cICP", [primaries, transfer, 0, fullRange])
    }
    private let sRGBChunk = TestImageFiles.chunk("sRGB", [0])

    /// Each swatch of a decode against the formula.
    private func assertSwatches(_ chunks: [[UInt8]], _ name: String, primaries: [Double], decode curve: (Double) -> Double,
                                shown: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (bitmap, notes) = try decode(swatchPNG(chunks), name)
        for (x, swatch) in swatches.enumerated() {
            assertClose(rgb(bitmap.pixel(x: x, y: 0)), expected(swatch, primaries: primaries, decode: curve), "\(name) swatch \(x)",
                        file: file, line: line)
        }
        XCTAssertEqual(notes.colourShown, shown, name, file: file, line: line)
    }

    func testGammaAndChromaticitiesWithoutAProfile() async throws {
        // gAMA 1.0: the stored values are linear light; sRGB's primaries.
        try assertSwatches([gAMA(100_000)], "linear.png", primaries: Self.sRGBPrimaries, decode: { $0 },
                           shown: "converted to sRGB from its gAMA and cHRM chunks")
        // gAMA 1/2.2 with Display P3's chromaticities.
        try assertSwatches([gAMA(45_455), cHRM(Self.p3Primaries)], "p3-gamma.png", primaries: Self.p3Primaries,
                           decode: { pow($0, 100_000 / 45_455) }, shown: "converted to sRGB from its gAMA and cHRM chunks")
        // cHRM alone: sRGB's curve.
        try assertSwatches([cHRM(Self.bt2020Primaries)], "bt2020-chrm.png", primaries: Self.bt2020Primaries,
                           decode: sRGBDecode, shown: "converted to sRGB from its gAMA and cHRM chunks")
    }

    /// cICP, then iCCP, then sRGB, then gAMA and cHRM (PNG, third edition): the first usable one wins.
    func testColourChunkPrecedence() async throws {
        let p3 = try p3Profile(), bt2020 = try rgbProfile(Self.bt2020Primaries)
        try assertSwatches([sRGBChunk, gAMA(100_000)], "srgb-over-gamma.png", primaries: Self.sRGBPrimaries,
                           decode: sRGBDecode, shown: "as stored (sRGB)")
        try assertSwatches([iCCP(p3), sRGBChunk], "profile-over-srgb.png", primaries: Self.p3Primaries,
                           decode: sRGBDecode, shown: "converted to sRGB from its iCCP profile")
        try assertSwatches([cICP(12, 13), iCCP(bt2020)], "cicp-over-profile.png", primaries: Self.p3Primaries,
                           decode: sRGBDecode, shown: "converted to sRGB from its cICP chunk")
        try assertSwatches([cICP(9, 13)], "cicp-bt2020.png", primaries: Self.bt2020Primaries,
                           decode: sRGBDecode, shown: "converted to sRGB from its cICP chunk")
        try assertSwatches([cICP(1, 1)], "cicp-bt709.png", primaries: Self.sRGBPrimaries,
                           decode: bt709Decode, shown: "converted to sRGB from its cICP chunk")
        try assertSwatches([cICP(1, 13)], "cicp-srgb.png", primaries: Self.sRGBPrimaries,
                           decode: sRGBDecode, shown: "as stored (sRGB)")
        // PQ is not tone-mapped: the profile after it is used, and the reason noted.
        let (pq, pqNotes) = try decode(swatchPNG([cICP(9, 16), iCCP(p3)]), "pq-with-profile.png")
        assertClose(rgb(pq.pixel(x: 1, y: 0)), expected([200, 100, 50], primaries: Self.p3Primaries, decode: sRGBDecode), "PQ falls to iCCP")
        XCTAssertTrue(pqNotes.colourFallbacks.contains { $0.contains("PQ") }, "\(pqNotes.colourFallbacks)")
        XCTAssertEqual(pqNotes.colourShown, "converted to sRGB from its iCCP profile")
        for (chunks, name, words) in [([cICP(9, 18)], "hlg.png", "HLG"), ([cICP(1, 13, fullRange: 0)], "narrow.png", "narrow-range"),
                                      ([TestImageFiles.chunk("gAMA", [0, 1, 0])], "short-gama.png", "malformed PNG gAMA"),
                                      ([gAMA(0)], "zero-gama.png", "outside 0.01…10")] {
            let (shown, notes) = try decode(swatchPNG(chunks), name)
            XCTAssertEqual(rgb(shown.pixel(x: 1, y: 0)), [200, 100, 50], "\(name): shown as stored")
            XCTAssertTrue(notes.colourFallbacks.contains { $0.contains(words) }, "\(name): \(notes.colourFallbacks)")
        }
    }

    /// Files made like PngSuite's gamma series (g03n0g16, g05n2c08, g10n3p04, g25n2c08 …): a
    /// gradient at gAMA 0.35 to 2.5, grey 16-bit, RGB 8-bit and 4-bit palette. Each decodes with its
    /// gamma applied: linear = stored^(1/gAMA), then sRGB-encoded.
    func testGammaSeriesLikePngSuite() async throws {
        for gamma in [35_000, 45_000, 55_000, 70_000, 100_000, 250_000] {
            let exponent = 100_000 / Double(gamma)
            let grey = TestImageFiles.png(width: 32, height: 1, colourType: 0, bitDepth: 16) { x, _ in [x * 2_114] }
            let rgb8 = TestImageFiles.png(width: 32, height: 1, colourType: 2, bitDepth: 8) { x, _ in [x * 8, 255 - x * 8, 128] }
            let palette: [UInt8] = (0..<16).flatMap { (i: Int) -> [UInt8] in [UInt8(i * 17), UInt8(255 - i * 17), 64] }
            let indexed = TestImageFiles.png(width: 16, height: 1, colourType: 3, bitDepth: 4, palette: palette) { x, _ in [x] }
            let prefix = "g\(gamma / 1000)"
            let files: [([UInt8], String)] = [(grey, prefix + "n0g16"), (rgb8, prefix + "n2c08"), (indexed, prefix + "n3p04")]
            for (file, name) in files {
                let (stored, _) = try decode(file, "\(name)-plain.png")
                let (shown, notes) = try decode(png(file, inserting: [gAMA(gamma)]), "\(name).png")
                XCTAssertEqual(notes.colourShown, "converted to sRGB from its gAMA and cHRM chunks", name)
                for x in 0..<stored.width {
                    let was = rgb(stored.pixel(x: x, y: 0))
                    let want = was.map { sRGBEncode(pow(Double($0) / 255, exponent)) * 255 }
                    assertClose(rgb(shown.pixel(x: x, y: 0)), want, within: 2.5, "\(name) x \(x) (stored \(was))")
                }
            }
        }
    }

    // MARK: PNG eXIf

    /// A PNG's eXIf orientation turns it as a JPEG's EXIF does: natural size, pixels and all eight
    /// values against the same file without the chunk, turned by `ImageOrientation.apply`.
    func testPNGEXIFOrientationTurnsThePicture() async throws {
        let base = TestImageFiles.png(width: 4, height: 2, colourType: 2, bitDepth: 8) { x, y in [x * 60, y * 200, 30] }
        let (upright, _) = try decode(base, "upright.png")
        for orientation in ImageOrientation.allCases {
            let chunk = TestImageFiles.chunk("eXIf", TestImageFiles.exifTIFF(orientation: orientation.rawValue))
            let file = png(base, inserting: [chunk])
            let size = try ImageDecoder.naturalPixelSize(of: .data(file, name: "o"))
            XCTAssertEqual([size.width, size.height], orientation.swapsSides ? [2, 4] : [4, 2], "\(orientation)")
            let (shown, _) = try decode(file, "exif-\(orientation.rawValue).png")
            let turned = orientation.apply(upright.pixels, width: 4, height: 2)
            XCTAssertEqual([shown.width, shown.height], [turned.width, turned.height], "\(orientation)")
            XCTAssertEqual(shown.pixels, turned.pixels, "\(orientation)")
        }
        // "Exif\0\0" before the TIFF data, as some writers put it, is read too; a chunk after the
        // image data is not looked for.
        let prefixed = TestImageFiles.chunk("eXIf", Array("Exif".utf8) + [0, 0] + TestImageFiles.exifTIFF(orientation: 6))
        XCTAssertEqual(try decode(png(base, inserting: [prefixed]), "prefixed.png").bitmap.width, 2)
        let end = base.count - 12
        let late = Array(base[..<end]) + TestImageFiles.chunk("eXIf", TestImageFiles.exifTIFF(orientation: 6)) + Array(base[end...])
        XCTAssertEqual(try decode(late, "late.png").bitmap.pixels, upright.pixels)
        // A malformed chunk leaves the picture upright.
        let broken = TestImageFiles.chunk("eXIf", Array("MM".utf8) + [0, 42, 0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(try decode(png(base, inserting: [broken]), "broken-exif.png").bitmap.pixels, upright.pixels)
    }

    // MARK: Lossless WebP without alpha

    /// A lossless bitstream, written bit by bit: 4×4, no alpha, a colour-indexing transform with a
    /// three-colour palette (red, yellow, white) and two-bit indices 0, 1, 2, 3 on every row. Index 3
    /// is past the palette's end: libwebp gives it transparent black.
    private func paletteOverrunWebP() -> [UInt8] {
        var bytes: [UInt8] = [0x2F]
        var accumulator: UInt64 = 0, count = 0
        func put(_ value: Int, _ bits: Int) {
            accumulator |= UInt64(value) << UInt64(count)
            count += bits
            while count >= 8 { bytes.append(UInt8(accumulator & 0xFF)); accumulator >>= 8; count -= 8 }
        }
        /// A simple prefix code: one symbol (no bits a pixel) or two 8-bit symbols (one bit each).
        func code(_ symbols: [Int]) {
            put(1, 1)
            put(symbols.count - 1, 1)
            if symbols.count == 1 && symbols[0] < 2 {
                put(0, 1); put(symbols[0], 1)
            } else {
                put(1, 1)
                for symbol in symbols { put(symbol, 8) }
            }
        }
        put(3, 14); put(3, 14)    // 4 × 4
        put(0, 1); put(0, 3)      // alpha unused, version 0
        put(1, 1); put(3, 2)      // a transform: colour indexing
        put(2, 8)                 // three colours
        // The palette, a 3×1 image of differences from the previous entry: red, +green, +blue.
        put(0, 1)                 // no colour cache
        code([0, 255]); code([0, 255]); code([0, 255]); code([0, 255]); code([0])
        for pixel in [[0, 1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0]] {  // green, red, blue, alpha: 0 or 255
            for bit in pixel { put(bit, 1) }
        }
        put(0, 1)                 // no more transforms
        // The packed image: one pixel a row whose green holds four 2-bit indices, 0b11_10_01_00.
        put(0, 1); put(0, 1)      // no colour cache, no meta prefix codes
        code([0xE4]); code([0]); code([0]); code([255]); code([0])
        put(0, 32)
        let chunk = riffChunk("VP8L", bytes)
        let body = Array("WEBP".utf8) + chunk
        return Array("RIFF".utf8) + [0, 8, 16, 24].map { UInt8((body.count >> $0) & 0xFF) } + body
    }

    func testALosslessWebPWithoutAlphaIsOpaqueLikeDwebp() async throws {
        let file = paletteOverrunWebP()
        // libwebp itself: the fourth column is transparent black, and the header says no alpha.
        var width: Int32 = 0, height: Int32 = 0
        let raw = try XCTUnwrap(file.withUnsafeBufferPointer { WebPDecodeRGBA($0.baseAddress, $0.count, &width, &height) })
        defer { WebPFree(raw) }
        XCTAssertEqual([width, height], [4, 4])
        XCTAssertEqual(Array(UnsafeBufferPointer(start: raw, count: 16)),
                       [255, 0, 0, 255, 255, 255, 0, 255, 255, 255, 255, 255, 0, 0, 0, 0], "red, yellow, white, transparent")
        var features = WebPBitstreamFeatures()
        XCTAssertEqual(file.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }, VP8_STATUS_OK)
        XCTAssertEqual(features.has_alpha, 0)

        let (shown, _) = try decode(file, "palette-overrun.webp")
        for y in 0..<4 {
            XCTAssertEqual((0..<4).map { shown.pixel(x: $0, y: y) }, [0xFFFF_0000, 0xFFFF_FF00, 0xFFFF_FFFF, 0xFF00_0000], "row \(y)")
        }
        // Shrunk to 2×2, the black counts as black: each pixel is the mean of a 2×2 block, red with
        // yellow on the left, white with black on the right.
        let small = try XCTUnwrap(try ImageDecoder.decode(.data(file, name: "small.webp"), for: .init(width: 2, height: 2, mode: .aspectFit)))
        XCTAssertEqual([small.width, small.height], [2, 2])
        for y in 0..<2 {
            XCTAssertEqual(small.pixel(x: 0, y: y) >> 24, 255)
            XCTAssertEqual(small.pixel(x: 1, y: y) >> 24, 255)
            assertClose(rgb(small.pixel(x: 0, y: y)), [255, 127.5, 0], within: 1, "red and yellow, row \(y)")
            assertClose(rgb(small.pixel(x: 1, y: y)), [127.5, 127.5, 127.5], within: 1, "white and black, row \(y)")
        }

        // dwebp, where it is installed, shows the same colours.
        let dwebp = ["/usr/bin/dwebp", "/usr/local/bin/dwebp"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let dwebp else { throw XCTSkip("dwebp is not installed (apt package webp); compared with libwebp's own output above") }
        let input = output.appendingPathComponent("palette-overrun.webp"), ppm = output.appendingPathComponent("palette-overrun.ppm")
        try Data(file).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: dwebp)
        process.arguments = [input.path, "-ppm", "-o", ppm.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let image = [UInt8](try Data(contentsOf: ppm))
        // "P6\n4 4\n255\n" then RGB.
        let pixels = Array(image.suffix(4 * 4 * 3))
        for y in 0..<4 {
            for x in 0..<4 {
                let i = (y * 4 + x) * 3
                XCTAssertEqual(rgb(shown.pixel(x: x, y: y)), pixels[i..<(i + 3)].map(Int.init), "\(x),\(y) as dwebp shows it")
            }
        }
    }

    // MARK: An image node

    /// An image node showing a Display P3 picture draws its sRGB colours.
    func testAnImageNodeShowsAP3PictureInSRGB() async throws {
        let side = 24
        let file = png(TestImageFiles.png(width: side, height: side, colourType: 2, bitDepth: 8) { x, _ in x < side / 2 ? [200, 100, 50] : [30, 160, 140] },
                       inserting: [iCCP(try p3Profile())])
        let node = ImageNode()
        node.frame = Rect(x: 8, y: 8, width: Double(side), height: Double(side))
        node.contentMode = .aspectFill
        node.imageCache = ImageCache(budgetBytes: 0)
        node.source = .data(file, name: "p3-node.png")
        let root = Node()
        root.addSubnode(node)
        let shot = try XCTUnwrap(try OffscreenRender.render(root, size: Size(width: 40, height: 40), scale: 1,
                                                            clearColor: Color(rgb: 0x1E2630), time: &time, finalFrameAfter: 1))
        try shot.writePNG(to: output.appendingPathComponent("p3-node.png").path)
        let orange = rgb(shot.pixel(x: 12, y: 20)), teal = rgb(shot.pixel(x: 26, y: 20))
        assertClose(orange, expected([200, 100, 50], primaries: Self.p3Primaries, decode: sRGBDecode), "orange on screen")
        assertClose(teal, expected([30, 160, 140], primaries: Self.p3Primaries, decode: sRGBDecode), "teal on screen")
        XCTAssertGreaterThanOrEqual(orange[0] - 200, 10, "not the stored (washed-out) value")
        assertClose(rgb(shot.pixel(x: 2, y: 2)), [0x1E, 0x26, 0x30], within: 0, "the background around it")
    }
}
