import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Decoding at the size shown: each codec's picture against the whole-image decode shrunk afterwards,
/// every PNG variant, EXIF orientations, cropping and the working-memory limits.
@MainActor
final class ImageDecodeAtSizeTests: XCTestCase {
    private let photos = ["astronaut.png", "brick.jpg", "camera.png", "chelsea.jpg", "clock.jpg", "coffee.jpg",
                          "grass.jpg", "gravel.jpg", "horse.png", "hubble_deep_field.jpg", "retina.jpg", "rocket.jpg"]

    private func photo(_ name: String) -> ImageSource { .file(GoldenImage.asset("photos/\(name)")) }

    /// Per-channel differences between two bitmaps of one size: the largest and the mean.
    private func difference(_ a: Bitmap, _ b: Bitmap) -> (maximum: Int, mean: Double) {
        let pa = a.pixels, pb = b.pixels
        var maximum = 0, total = 0
        for i in 0..<min(pa.count, pb.count) {
            for shift: UInt32 in [0, 8, 16, 24] {
                let d = abs(Int((pa[i] >> shift) & 0xFF) - Int((pb[i] >> shift) & 0xFF))
                maximum = max(maximum, d)
                total += d
            }
        }
        return (maximum, Double(total) / Double(max(1, pa.count * 4)))
    }

    /// SDL_image's whole decode of a photo, its colours converted to sRGB as Tessera converts them
    /// when the file carries a JPEG ICC profile (SDL_image shows every file as stored): rocket.jpg
    /// is Adobe RGB (1998). The conversion is the one `ColourManagementTests` checks against the
    /// formulas; here only the sizes and the filtering are compared.
    private func wholeDecode(_ name: String) throws -> Bitmap {
        let path = GoldenImage.asset("photos/\(name)")
        let whole = try Bitmap(contentsOfFile: path)
        let reader = try EncodedReader(openingFile: path)
        let layout = try ImageDecoder.readLayout(reader, metadataLimit: 1_000)
        guard let profile = try ImageDecoder.jpegProfile(reader, segments: layout.jpegProfileSegments, notes: DecodeNotes(source: name)),
              case .success(let conversion?) = ColourConversions.shared.conversion(for: .profile(ICCProfile(profile)), layout: .bitmap),
              !conversion.isIdentity else { return whole }
        var pixels = whole.pixels
        conversion.convert(&pixels)
        return try Bitmap(width: whole.width, height: whole.height, premultipliedARGB: pixels)
    }

    /// Every gallery photo at 52, 104 and 600 px looks like the path it replaced, SDL_image's whole
    /// decode shrunk afterwards: same size, a mean channel difference under 2 (the largest is printed;
    /// the JPEG scaled IDCT, JPEG upsampling and the area filter round differently at sharp edges).
    func testPhotosAtSizeMatchTheWholeDecodeShrunk() async throws {
        var largest = (0, "")
        for name in photos {
            let whole = try wholeDecode(name)
            for side in [52, 104, 600] {
                let target = ImageDecoder.Target(width: side, height: side, mode: .aspectFill)
                let atSize = try XCTUnwrap(try ImageDecoder.decode(photo(name), for: target))
                let shrunk = try ImageDecoder.prepareForDisplay(whole, crop: nil, mode: .aspectFill,
                                                               target: (side, side), scale: 1)
                XCTAssertEqual([atSize.width, atSize.height], [shrunk.width, shrunk.height], "\(name) at \(side)")
                let d = difference(atSize, shrunk)
                XCTAssertLessThan(d.mean, 2, "\(name) at \(side): mean difference \(d.mean)")
                if d.maximum > largest.0 { largest = (d.maximum, "\(name) at \(side)") }
            }
        }
        print("decode at size vs SDL_image's whole decode + shrink: largest channel difference \(largest.0) (\(largest.1))")
    }

    // MARK: EXIF orientation

    /// A 64×48 picture in four quadrants: red top-left, green top-right, blue bottom-left, white bottom-right.
    private func quadrants() throws -> Bitmap {
        let colours: [UInt32] = [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FFFF]
        var pixels = [UInt32](repeating: 0, count: 64 * 48)
        for y in 0..<48 { for x in 0..<64 { pixels[y * 64 + x] = colours[(y < 24 ? 0 : 2) + (x < 32 ? 0 : 1)] } }
        return try Bitmap(width: 64, height: 48, premultipliedARGB: pixels)
    }

    private func nearest(_ pixel: UInt32) -> String {
        let named: [(String, UInt32)] = [("red", 0xFF0000), ("green", 0x00FF00), ("blue", 0x0000FF), ("white", 0xFFFFFF)]
        func distance(_ a: UInt32, _ b: UInt32) -> Int {
            [0, 8, 16].map { abs(Int((a >> $0) & 0xFF) - Int((b >> $0) & 0xFF)) }.reduce(0, +)
        }
        return named.min { distance(pixel, $0.1) < distance(pixel, $1.1) }!.0
    }

    /// All eight EXIF orientations: the shown size swaps for 5–8, and the stored quadrant at each shown
    /// corner is the one the EXIF specification names (a table written from the spec, not from the code).
    func testEXIFOrientationsTurnTheImageAsTheSpecificationSays() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-exif-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("quadrants.jpg").path
        try quadrants().writeJPEG(to: path, quality: 95)
        let plain = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Shown (top-left, top-right, bottom-left) corners for orientations 1–8.
        let expected: [Int: [String]] = [
            1: ["red", "green", "blue"], 2: ["green", "red", "white"], 3: ["white", "blue", "green"],
            4: ["blue", "white", "red"], 5: ["red", "blue", "green"], 6: ["blue", "red", "white"],
            7: ["white", "green", "blue"], 8: ["green", "white", "red"],
        ]
        var sheet: [Bitmap] = []
        for orientation in 1...8 {
            let bytes = TestImageFiles.jpeg(plain, withOrientation: orientation)
            let target = ImageDecoder.Target(width: 64, height: 64, mode: .aspectFit)
            let shown = try XCTUnwrap(try ImageDecoder.decode(.data(bytes, name: "o\(orientation).jpg"), for: target))
            let size = orientation >= 5 ? [48, 64] : [64, 48]
            XCTAssertEqual([shown.width, shown.height], size, "orientation \(orientation)")
            let corners = [shown.pixel(x: 4, y: 4), shown.pixel(x: shown.width - 5, y: 4), shown.pixel(x: 4, y: shown.height - 5)]
            XCTAssertEqual(corners.map(nearest), expected[orientation], "orientation \(orientation)")
            sheet.append(shown)
        }
        // One golden sheet of the eight results, left to right.
        var context = try BitmapContext(pixelWidth: 8 * 68, pixelHeight: 68, scale: 1)
        context.fill(context.bounds, color: Color(red: 77, green: 77, blue: 77))
        for (i, shown) in sheet.enumerated() {
            context.draw(shown, in: Rect(x: Double(i * 68 + 2), y: 2, width: Double(shown.width), height: Double(shown.height)))
        }
        GoldenImage.assertMatches(context.makeBitmap(), named: "image-exif-orientations", in: "NodeRuntimeTests", tolerance: 8)
    }

    // MARK: PNG variants

    /// The expected premultiplied ARGB of a straight RGBA sample.
    private func argb(_ r: Int, _ g: Int, _ b: Int, _ a: Int) -> UInt32 {
        func p(_ c: Int) -> UInt32 { UInt32((c * a + 127) / 255) }
        return UInt32(a) << 24 | p(r) << 16 | p(g) << 8 | p(b)
    }

    private func decodeWhole(_ bytes: [UInt8], _ name: String, width: Int, height: Int) throws -> Bitmap {
        let target = ImageDecoder.Target(width: width, height: height, mode: .scaleToFill)
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(bytes, name: name), for: target))
        XCTAssertEqual([bitmap.width, bitmap.height], [width, height], name)
        return bitmap
    }

    private func assertPixels(_ bitmap: Bitmap, tolerance: Int = 1, _ name: String, expected: (Int, Int) -> UInt32,
                              file: StaticString = #filePath, line: UInt = #line) {
        var worst = 0
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let a = bitmap.pixel(x: x, y: y), b = expected(x, y)
                for shift: UInt32 in [0, 8, 16, 24] {
                    worst = max(worst, abs(Int((a >> shift) & 0xFF) - Int((b >> shift) & 0xFF)))
                }
            }
        }
        XCTAssertLessThanOrEqual(worst, tolerance, "\(name): largest channel difference", file: file, line: line)
    }

    func testSixteenBitRGBAWithAlpha() async throws {
        let bytes = TestImageFiles.png(width: 17, height: 9, colourType: 6, bitDepth: 16) { x, y in
            [x * 3855, y * 7281, 65_535 - x * 3855, 65_535 - y * 4096]
        }
        let bitmap = try decodeWhole(bytes, "rgba16.png", width: 17, height: 9)
        assertPixels(bitmap, "rgba16") { x, y in
            self.argb(x * 15, Int((Double(y * 7281) / 257).rounded()), 255 - x * 15,
                      Int((Double(65_535 - y * 4096) / 257).rounded()))
        }
    }

    func testPaletteWithTransparency() async throws {
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        let bytes = TestImageFiles.png(width: 10, height: 3, colourType: 3, bitDepth: 4,
                                       palette: palette, transparency: [255, 128, 0]) { x, _ in [x % 4] }
        let bitmap = try decodeWhole(bytes, "palette.png", width: 10, height: 3)
        let expected = [argb(255, 0, 0, 255), argb(0, 255, 0, 128), argb(0, 0, 255, 0), argb(255, 255, 255, 255)]
        assertPixels(bitmap, "palette + tRNS") { x, _ in expected[x % 4] }
    }

    func testGreyWithAlphaAndOneBitGrey() async throws {
        let greyAlpha = TestImageFiles.png(width: 8, height: 8, colourType: 4, bitDepth: 8) { x, y in [x * 32, y * 32 + 3] }
        assertPixels(try decodeWhole(greyAlpha, "ga.png", width: 8, height: 8), "grey + alpha") { x, y in
            self.argb(x * 32, x * 32, x * 32, y * 32 + 3)
        }
        let oneBit = TestImageFiles.png(width: 11, height: 2, colourType: 0, bitDepth: 1) { x, y in [(x + y) % 2] }
        assertPixels(try decodeWhole(oneBit, "g1.png", width: 11, height: 2), "1-bit grey") { x, y in
            (x + y) % 2 == 1 ? 0xFFFF_FFFF : 0xFF00_0000
        }
        let greyKey = TestImageFiles.png(width: 4, height: 1, colourType: 0, bitDepth: 8, transparency: [0, 50]) { x, _ in [x * 50] }
        assertPixels(try decodeWhole(greyKey, "gt.png", width: 4, height: 1), "grey + tRNS key") { x, _ in
            x == 1 ? 0 : self.argb(x * 50, x * 50, x * 50, 255)
        }
    }

    func testInterlacedDecodesLikeNonInterlaced() async throws {
        func sample(_ x: Int, _ y: Int) -> [Int] { [(x * 37 + y) & 255, (y * 11) & 255, (x ^ y) & 255] }
        let plain = TestImageFiles.png(width: 23, height: 19, colourType: 2, bitDepth: 8, sample: sample)
        let interlaced = TestImageFiles.png(width: 23, height: 19, colourType: 2, bitDepth: 8, interlaced: true, sample: sample)
        let a = try decodeWhole(plain, "plain.png", width: 23, height: 19)
        let b = try decodeWhole(interlaced, "adam7.png", width: 23, height: 19)
        assertPixels(a, tolerance: 0, "plain") { x, y in
            let s = sample(x, y)
            return self.argb(s[0], s[1], s[2], 255)
        }
        XCTAssertEqual(a.pixels, b.pixels)
        // Shrunk, both go through the same filter.
        let target = ImageDecoder.Target(width: 7, height: 7, mode: .aspectFit)
        let small = try XCTUnwrap(try ImageDecoder.decode(.data(plain, name: "p"), for: target))
        let smallInterlaced = try XCTUnwrap(try ImageDecoder.decode(.data(interlaced, name: "i"), for: target))
        XCTAssertEqual(small.pixels, smallInterlaced.pixels)
    }

    // MARK: Cropping, modes and averaging

    func testAreaFilterAveragesAndCropsInPremultipliedSpace() async throws {
        // Left half opaque red, right half transparent; 40×20 shown at 2×1 and cropped to the right half.
        let bytes = TestImageFiles.png(width: 40, height: 20, colourType: 6, bitDepth: 8) { x, _ in
            x < 20 ? [255, 0, 0, 255] : [0, 255, 0, 0]
        }
        let halves = try decodeWhole(bytes, "halves.png", width: 2, height: 1)
        XCTAssertEqual(halves.pixels, [0xFFFF_0000, 0x0000_0000], "transparent green adds nothing to red")
        let oneCell = try decodeWhole(bytes, "halves.png", width: 1, height: 1)
        XCTAssertEqual(oneCell.pixels, [0x8080_0000], "half-covered red, premultiplied")
        let target = ImageDecoder.Target(width: 5, height: 5, mode: .scaleToFill, crop: Rect(x: 10, y: 0, width: 20, height: 20))
        let cropped = try XCTUnwrap(try ImageDecoder.decode(.data(bytes, name: "crop"), for: target))
        XCTAssertEqual(cropped.pixel(x: 0, y: 2), 0xFFFF_0000)
        XCTAssertEqual(cropped.pixel(x: 4, y: 2), 0)
    }

    func testJPEGReductionIsChosenByTheOutputSize() async {
        let target = ImageDecoder.Target(width: 104, height: 104, mode: .aspectFill)
        let plan = DecodePlan(storedWidth: 1411, storedHeight: 1411, orientation: .up, target: target, maximumSide: 16_384)
        XCTAssertEqual(plan.largestReduction(among: [1, 2, 4, 8]), 4, "353 px: twice the 104 shown")
        let big = DecodePlan(storedWidth: 1411, storedHeight: 1411, orientation: .up,
                             target: .init(width: 600, height: 600, mode: .aspectFill), maximumSide: 16_384)
        XCTAssertEqual(big.largestReduction(among: [1, 2, 4, 8]), 1, "705 px would be less than twice 600")
        let wide = DecodePlan(storedWidth: 16_000, storedHeight: 2_400, orientation: .up, target: target, maximumSide: 16_384)
        XCTAssertEqual([wide.shownOutput.width, wide.shownOutput.height], [693, 104])
        XCTAssertEqual(wide.largestReduction(among: [1, 2, 4, 8]), 8)
    }

    // MARK: Memory

    /// A tall non-interlaced PNG shown small works in memory that follows its width: the decode's own
    /// reservation stays near a few rows, whatever the height.
    func testTallPNGReservesMemoryByWidthNotArea() async throws {
        let bytes = TestImageFiles.png(width: 300, height: 4000, colourType: 2, bitDepth: 8) { x, y in [x & 255, y & 255, 0] }
        let target = ImageDecoder.Target(width: 30, height: 30, mode: .aspectFit)
        let reserved = ReservationProbe()
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(bytes, name: "tall.png"), for: target,
                                                           isCancelled: { reserved.sample(); return false }))
        XCTAssertEqual([bitmap.width, bitmap.height], [2, 30])
        XCTAssertGreaterThan(reserved.largest, 0)
        XCTAssertLessThan(reserved.largest, 300 * 4 * 8, "a few rows, not 300×4000×4 = 4.8 MB")
    }

    func testWorkingMemoryLimitRefusesAnInterlacedPNGThatWouldNotFit() async {
        let bytes = TestImageFiles.png(width: 400, height: 400, colourType: 2, bitDepth: 8, interlaced: true) { _, _ in [1, 2, 3] }
        let limits = ImageDecoder.Limits(workingMemoryBytes: 200_000)
        XCTAssertThrowsError(try ImageDecoder.decode(.data(bytes, name: "adam7.png"), for: .init(width: 10, height: 10, mode: .aspectFit),
                                                     limits: limits)) { error in
            guard case .overLimit = error as? ImageError else { return XCTFail("\(error)") }
        }
        let plain = TestImageFiles.png(width: 400, height: 400, colourType: 2, bitDepth: 8) { _, _ in [1, 2, 3] }
        XCTAssertNoThrow(try ImageDecoder.decode(.data(plain, name: "plain.png"), for: .init(width: 10, height: 10, mode: .aspectFit),
                                                 limits: limits), "the same picture, not interlaced, fits")
    }

    func testEncodedFileLimit() async {
        let bytes = TestImageFiles.png(width: 100, height: 100, colourType: 2, bitDepth: 8) { _, _ in [1, 2, 3] }
        XCTAssertThrowsError(try ImageDecoder.decode(.data(bytes, name: "big.png"), for: .init(width: 10, height: 10, mode: .aspectFit),
                                                     limits: .init(maximumEncodedBytes: 1000))) { error in
            guard case .overLimit = error as? ImageError else { return XCTFail("\(error)") }
        }
    }
}

/// Records the largest decode-memory reservation seen from inside a decode's cancellation checks.
private final class ReservationProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    var largest: Int { lock.withLock { value } }
    func sample() {
        let inUse = ImageDecoder.decodeMemoryUsage.inUse
        lock.withLock { value = max(value, inUse) }
    }
}
