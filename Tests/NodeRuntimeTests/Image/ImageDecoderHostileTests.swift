import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Files that lie, made here: each is refused from its header (before any pixel is decoded) with a
/// defined error, or decodes to the right picture; none crashes or hangs.
@MainActor
final class ImageDecoderHostileTests: XCTestCase {
    /// A valid 1×1 GIF89a: screen, a graphic-control extension, one frame, its LZW data, the trailer.
    private let tinyGIF: [UInt8] = [
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00,
        0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF,
        0x21, 0xF9, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
        0x02, 0x02, 0x44, 0x01, 0x00,
        0x3B,
    ]
    /// Offset of the frame descriptor's width in `tinyGIF`.
    private let gifFrameWidthOffset = 32

    private func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
    private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    /// A 24-bit BMP whose rows are all there, bottom-up, each pixel `(blue, green, red)`.
    private func bmp(width: Int, height: Int, pixel: (UInt8, UInt8, UInt8)) -> [UInt8] {
        let stride = (width * 24 + 31) / 32 * 4
        let row = (0..<width).flatMap { _ in [pixel.0, pixel.1, pixel.2] } + Array(repeating: 0, count: stride - width * 3)
        let pixels = (0..<height).flatMap { _ in row }
        var bytes = Array("BM".utf8) + le32(54 + pixels.count) + le32(0) + le32(54)
        bytes += le32(40) + le32(width) + le32(height) + le16(1) + le16(24) + le32(0) + le32(pixels.count)
        bytes += le32(2835) + le32(2835) + le32(0) + le32(0)
        return bytes + pixels
    }

    private func photoBytes(_ name: String) throws -> [UInt8] {
        let path = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/\(name)").path
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func png() throws -> [UInt8] { try photoBytes("horse.png") }

    private func expectError(_ bytes: [UInt8], _ name: String, limits: ImageDecoder.Limits = .init(),
                             file: StaticString = #filePath, line: UInt = #line,
                             _ matches: (ImageError) -> Bool) {
        XCTAssertThrowsError(try ImageDecoder.decode(.data(bytes, name: name), limits: limits), name, file: file, line: line) { error in
            guard let imageError = error as? ImageError else { return XCTFail("\(name): \(error)", file: file, line: line) }
            XCTAssertTrue(matches(imageError), "\(name): \(imageError)", file: file, line: line)
        }
    }

    private func isTooLarge(_ error: ImageError) -> Bool { if case .tooLarge = error { return true } else { return false } }
    private func isTruncated(_ error: ImageError) -> Bool { if case .truncated = error { return true } else { return false } }
    private func isRefused(_ error: ImageError) -> Bool { if case .decodeFailed = error { return true } else { return false } }

    // MARK: GIF

    func testAValidGIFDecodes() async throws {
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(tinyGIF, name: "tiny.gif")))
        XCTAssertEqual([bitmap.width, bitmap.height], [1, 1])
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 0, y: 0)), Color(red: 255, green: 0, blue: 0))
    }

    /// A 10×10 screen whose frame descriptor says 30000×30000: refused from the descriptor.
    func testAFrameLargerThanItsScreenIsCheckedAgainstTheLimits() async {
        var bomb = tinyGIF
        bomb.replaceSubrange(6..<10, with: le16(10) + le16(10))
        bomb.replaceSubrange(gifFrameWidthOffset..<(gifFrameWidthOffset + 4), with: le16(30_000) + le16(30_000))
        expectError(bomb, "frame-bomb.gif") { $0 == .tooLarge("frame-bomb.gif (\(bomb.count) bytes)", width: 30_000, height: 30_000) }
    }

    /// The second frame claims 20000×20000: only the first frame is shown, so the second is never
    /// read, and the file shows its first frame.
    func testOnlyTheFirstFrameIsRead() async throws {
        var second = Array(tinyGIF[19..<(tinyGIF.count - 1)])  // extension + frame + data
        let frameWidth = gifFrameWidthOffset - 19
        second.replaceSubrange(frameWidth..<(frameWidth + 4), with: le16(20_000) + le16(20_000))
        let bytes = Array(tinyGIF.dropLast()) + second + [0x3B]
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(bytes, name: "second-frame.gif")))
        XCTAssertEqual([bitmap.width, bitmap.height], [1, 1])
        XCTAssertEqual(try ImageDecoder.header(of: bytes, source: "second-frame.gif").width, 1)
    }

    /// A frame placed far off the screen makes the canvas that large.
    func testAFramesOffsetCountsTowardsItsSize() async {
        var bytes = tinyGIF
        bytes.replaceSubrange((gifFrameWidthOffset - 4)..<gifFrameWidthOffset, with: le16(60_000) + le16(0))
        expectError(bytes, "far-frame.gif", file: #filePath, line: #line, isTooLarge)
    }

    func testAZeroSizedFrameAndAnUnknownBlockAreRefused() async {
        var zero = tinyGIF
        zero.replaceSubrange(gifFrameWidthOffset..<(gifFrameWidthOffset + 2), with: le16(0))
        expectError(zero, "zero-frame.gif", file: #filePath, line: #line, isRefused)
        var unknown = tinyGIF
        unknown[19] = 0x99
        expectError(unknown, "unknown-block.gif", file: #filePath, line: #line, isRefused)
    }

    // MARK: BMP

    func testAValidBMPDecodes() async throws {
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(bmp(width: 3, height: 2, pixel: (200, 100, 50)), name: "ok.bmp")))
        XCTAssertEqual([bitmap.width, bitmap.height], [3, 2])
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 2, y: 1)), Color(red: 50, green: 100, blue: 200))
    }

    /// A 154-byte file claiming 6000×6000 pixels: its rows cannot be there.
    func testABMPClaimingMoreRowsThanItsLengthIsTruncated() async {
        var bytes = bmp(width: 10, height: 3, pixel: (1, 2, 3))
        bytes.replaceSubrange(18..<26, with: le32(6000) + le32(6000))
        XCTAssertEqual(bytes.count, 54 + 3 * 32)
        expectError(bytes, "liar.bmp", file: #filePath, line: #line, isTruncated)
    }

    func testBMPHeadersThatCannotBeRightAreRefused() async {
        let good = bmp(width: 2, height: 2, pixel: (0, 0, 0))
        var offsetPastEnd = good
        offsetPastEnd.replaceSubrange(10..<14, with: le32(100_000))
        expectError(offsetPastEnd, "offset.bmp", file: #filePath, line: #line, isTruncated)
        var oddDepth = good
        oddDepth.replaceSubrange(28..<30, with: le16(7))
        expectError(oddDepth, "depth.bmp", file: #filePath, line: #line, isRefused)
        var zeroWide = good
        zeroWide.replaceSubrange(18..<22, with: le32(0))
        expectError(zeroWide, "zero.bmp", file: #filePath, line: #line, isRefused)
        var negativeWide = good
        negativeWide.replaceSubrange(18..<22, with: [0x00, 0x00, 0x00, 0x80])
        expectError(negativeWide, "negative.bmp", file: #filePath, line: #line, isRefused)
        var hugeWide = good
        hugeWide.replaceSubrange(18..<22, with: [0xFF, 0xFF, 0xFF, 0x7F])
        expectError(hugeWide, "huge.bmp", limits: .init(maximumSide: .max, maximumPixelCount: .max),
                    file: #filePath, line: #line, isTruncated)
    }

    // MARK: PNG

    func testPNGHeadersThatCannotBeRightAreRefused() async throws {
        let good = try png()
        var length = good
        length[11] = 14
        expectError(length, "ihdr-length.png", file: #filePath, line: #line, isRefused)
        var name = good
        name[12] = UInt8(ascii: "X")
        expectError(name, "ihdr-name.png", file: #filePath, line: #line, isRefused)
        var depth = good
        depth[24] = 3
        expectError(depth, "depth.png", file: #filePath, line: #line, isRefused)
        var huge = good
        huge.replaceSubrange(16..<20, with: [0xFF, 0xFF, 0xFF, 0xFF])
        expectError(huge, "huge.png", limits: .init(maximumSide: .max, maximumPixelCount: .max),
                    file: #filePath, line: #line, isRefused)
    }

    // MARK: Every format, cut short anywhere

    /// Every prefix of each valid file ends in an error or a picture, never a crash or a hang. (A PNG
    /// cut inside its first chunk after the header once made the decoder spin forever.)
    func testFilesCutShortAnywhereEndInAnErrorOrAPicture() async throws {
        let samples: [(String, [UInt8])] = [
            ("tiny.gif", tinyGIF), ("ok.bmp", bmp(width: 5, height: 4, pixel: (9, 8, 7))), ("horse.png", try png()),
            ("coffee.jpg", try photoBytes("coffee.jpg")),
        ]
        for (name, bytes) in samples {
            let offsets = Array(0..<min(bytes.count, 160)) + Array(stride(from: 160, to: bytes.count, by: 4_093))
            for offset in offsets {
                do {
                    _ = try ImageDecoder.decode(.data(Array(bytes.prefix(offset)), name: "\(name)@\(offset)"))
                } catch is ImageError {
                    continue
                } catch {
                    XCTFail("\(name) cut at \(offset): \(error) is not an ImageError")
                }
            }
        }
    }

    // MARK: The entry point for a target

    func testDecodingForATargetKeepsWhatTheTargetShows() async throws {
        let retina = ImageSource.file(GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/retina.jpg").path)
        let avatar = try XCTUnwrap(try ImageDecoder.decode(retina, for: .init(width: 104, height: 104, mode: .aspectFill, scale: 2)))
        XCTAssertEqual([Double(avatar.width), Double(avatar.height), avatar.scale], [104, 104, 2])
        let odd = try XCTUnwrap(try ImageDecoder.decode(retina, for: .init(width: 50, height: 20, mode: .aspectFit, scale: .nan)))
        XCTAssertEqual([Double(odd.width), Double(odd.height), odd.scale], [20, 20, 1], "aspect fit inside 50×20; a NaN scale counts as 1")
        XCTAssertNil(try ImageDecoder.decode(retina, for: .init(width: 10, height: 10, mode: .aspectFill), isCancelled: { true }))
        XCTAssertThrowsError(try ImageDecoder.decode(retina, for: .init(width: 0, height: 10, mode: .aspectFill)))
        XCTAssertThrowsError(try ImageDecoder.decode(retina, for: .init(width: 10, height: -1, mode: .aspectFill)))
        XCTAssertThrowsError(try ImageDecoder.decode(.data(tinyGIF.map { $0 ^ 0x5A }, name: "noise"),
                                                     for: .init(width: 10, height: 10, mode: .aspectFill)))
    }
}
