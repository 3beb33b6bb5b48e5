import Compositor
internal import CWebP
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The formats beyond plain JPEG and PNG: progressive, CMYK and grey JPEG, lossy, lossless and
/// animated WebP. Each shows the same four-quadrant picture (red, green / blue, white, a dark diagonal).
@MainActor
final class ImageFormatTests: XCTestCase {
    private func fixture(_ name: String) -> ImageSource {
        .file(GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/\(name)").path)
    }

    /// The colour nearest a point inside each quadrant, away from the diagonal, for a picture of any size.
    private func quadrantColours(_ bitmap: Bitmap) -> [String] {
        let points: [(Double, Double)] = [(0.3, 0.1), (0.8, 0.2), (0.2, 0.8), (0.9, 0.6)]
        let named: [(String, UInt32)] = [("red", 0xFF0000), ("green", 0x00FF00), ("blue", 0x0000FF), ("white", 0xFFFFFF)]
        return points.map { point -> String in
            let p = bitmap.pixel(x: Int(Double(bitmap.width) * point.0), y: Int(Double(bitmap.height) * point.1))
            func distance(_ c: UInt32) -> Int {
                var total = 0
                for shift: UInt32 in [0, 8, 16] {
                    let a = Int((p >> shift) & 0xFF), b = Int((c >> shift) & 0xFF)
                    total += abs(a - b)
                }
                return total
            }
            return named.min { distance($0.1) < distance($1.1) }!.0
        }
    }

    private let expected = ["red", "green", "blue", "white"]

    private func decode(_ source: ImageSource, width: Int = 48, height: Int = 32) throws -> Bitmap {
        try XCTUnwrap(try ImageDecoder.decode(source, for: .init(width: width, height: height, mode: .aspectFit)))
    }

    func testProgressiveCMYKAndGreyJPEGs() async throws {
        let progressive = try decode(fixture("quadrants-progressive.jpg"))
        XCTAssertEqual([progressive.width, progressive.height], [48, 32])
        XCTAssertEqual(quadrantColours(progressive), expected)
        let cmyk = try decode(fixture("quadrants-cmyk.jpg"))
        XCTAssertEqual(quadrantColours(cmyk), expected, "Adobe's inverted CMYK converted to RGB")
        let grey = try decode(fixture("quadrants-grey.jpg"))
        let p = grey.pixel(x: 40, y: 28)
        XCTAssertEqual((p >> 16) & 0xFF, p & 0xFF, "grey stays grey")
        XCTAssertEqual(p >> 24, 0xFF)
    }

    /// A progressive file needs its coefficients for the whole image: a budget below that refuses it.
    func testProgressiveJPEGCountsItsCoefficientsAgainstTheBudget() async {
        XCTAssertThrowsError(try ImageDecoder.decode(fixture("quadrants-progressive.jpg"), for: .init(width: 10, height: 10, mode: .aspectFit),
                                                     limits: .init(workingMemoryBytes: 20_000))) { error in
            guard case .overLimit = error as? ImageError else { return XCTFail("\(error)") }
        }
    }

    /// GIF through giflib: plain and interlaced frames, and a transparent colour.
    func testGIFPlainInterlacedAndTransparent() async throws {
        let plain = try decode(fixture("quadrants.gif"))
        XCTAssertEqual([plain.width, plain.height], [48, 32])
        XCTAssertEqual(quadrantColours(plain), expected)
        let interlaced = try decode(fixture("quadrants-interlaced.gif"))
        XCTAssertEqual(interlaced.pixels, plain.pixels, "the passes land on the same rows")
        let transparent = try decode(fixture("quadrants-transparent.gif"), width: 96, height: 64)
        XCTAssertEqual(transparent.pixel(x: 88, y: 40) >> 24, 0, "white is the transparent colour")
        XCTAssertEqual(transparent.pixel(x: 5, y: 60), 0xFF00_00FF)
    }

    /// Encodes the quadrant picture with libwebp, lossy or lossless.
    private func webp(lossless: Bool) throws -> [UInt8] {
        let width = 96, height = 64
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let c: [UInt8] = y < 32 ? (x < 48 ? [255, 0, 0] : [0, 255, 0]) : (x < 48 ? [0, 0, 255] : [255, 255, 255])
                rgba.replaceSubrange((y * width + x) * 4..<((y * width + x) * 4 + 3), with: c)
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.withUnsafeBufferPointer { buffer in
            lossless ? WebPEncodeLosslessRGBA(buffer.baseAddress, Int32(width), Int32(height), Int32(width * 4), &output)
                     : WebPEncodeRGBA(buffer.baseAddress, Int32(width), Int32(height), Int32(width * 4), 90, &output)
        }
        guard size > 0, let output else { throw XCTSkip("libwebp could not encode") }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    func testWebPLossyLosslessAndAnimated() async throws {
        let lossless = try webp(lossless: true)
        let whole = try decode(.data(lossless, name: "q.webp"), width: 96, height: 64)
        XCTAssertEqual(whole.pixel(x: 10, y: 10), 0xFFFF_0000, "lossless is exact")
        XCTAssertEqual(whole.pixel(x: 90, y: 60), 0xFFFF_FFFF)
        XCTAssertEqual(quadrantColours(try decode(.data(lossless, name: "q.webp"))), expected)
        let lossy = try decode(.data(try webp(lossless: false), name: "q-lossy.webp"), width: 24, height: 16)
        XCTAssertEqual([lossy.width, lossy.height], [24, 16], "scaled by libwebp while decoding")
        XCTAssertEqual(quadrantColours(lossy), expected)
        let animated = try decode(fixture("quadrants-animated.webp"))
        XCTAssertEqual(quadrantColours(animated), expected, "the first frame, not the black second one")
        XCTAssertEqual(try ImageDecoder.header(of: lossless, source: "q").format, .webp)
    }

    /// One golden sheet: progressive, CMYK, grey JPEG, lossless, lossy and animated WebP, interlaced
    /// and transparent GIF, at 48×32.
    func testFormatsGoldenSheet() async throws {
        let shown = [try decode(fixture("quadrants-progressive.jpg")), try decode(fixture("quadrants-cmyk.jpg")),
                     try decode(fixture("quadrants-grey.jpg")), try decode(.data(try webp(lossless: true), name: "l")),
                     try decode(.data(try webp(lossless: false), name: "y")), try decode(fixture("quadrants-animated.webp")),
                     try decode(fixture("quadrants-interlaced.gif")), try decode(fixture("quadrants-transparent.gif"))]
        var context = try BitmapContext(pixelWidth: shown.count * 52, pixelHeight: 36, scale: 1)
        context.fill(context.bounds, color: Color(red: 77, green: 77, blue: 77))
        for (i, bitmap) in shown.enumerated() {
            context.draw(bitmap, in: Rect(x: Double(i * 52 + 2), y: 2, width: Double(bitmap.width), height: Double(bitmap.height)))
        }
        GoldenImage.assertMatches(context.makeBitmap(), named: "image-formats", in: "NodeRuntimeTests", tolerance: 8)
    }
}
