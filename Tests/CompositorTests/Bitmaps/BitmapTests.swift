import Foundation
import XCTest
@testable import Compositor
import TestSupport

@MainActor
final class BitmapTests: XCTestCase {
    func testIdentitySurvivesCopies() async throws {
        let a = try Bitmap(width: 2, height: 2, filledWith: .white)
        let b = a
        let c = try Bitmap(width: 2, height: 2, filledWith: .white)
        XCTAssertEqual(a.identity, b.identity)
        XCTAssertNotEqual(a.identity, c.identity)
    }

    /// A path that is not a regular file is refused before it is read: a directory, a device, and a
    /// named pipe, which would otherwise keep the caller waiting for a writer.
    func testOnlyARegularFileIsDecoded() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/bitmap-file-kinds")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("pipe.png").path
        guard mkfifo(pipe, 0o600) == 0 else { throw XCTSkip("mkfifo failed") }
        // Should the open block, a writer arriving after 10 s releases it and the test fails on time.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
            let descriptor = open(pipe, O_WRONLY | O_NONBLOCK)
            if descriptor >= 0 { close(descriptor) }
        }
        let started = Date()
        for path in [pipe, folder.path, "/dev/zero"] {
            XCTAssertThrowsError(try Bitmap(contentsOfFile: path), path) { error in
                XCTAssertEqual(error as? BitmapError, .decodeFailed(source: path, reason: "not a regular file"))
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "the pipe kept the decode waiting")
        XCTAssertThrowsError(try Bitmap(contentsOfFile: folder.appendingPathComponent("missing.png").path))
    }
}

/// Bitmaps copied from rows of pixels in memory, and the checks that keep a hostile stride or a short
/// buffer from being read.
@MainActor
final class BitmapRowsTests: XCTestCase {
    /// Little-endian bytes of ARGB8888 words.
    private func bytes(_ words: [UInt32]) -> [UInt8] {
        words.flatMap { w in [UInt8(w & 0xFF), UInt8((w >> 8) & 0xFF), UInt8((w >> 16) & 0xFF), UInt8(w >> 24)] }
    }

    func testPaddedUnalignedRowsArePremultiplied() async throws {
        // One byte of offset, then two rows of two pixels, each row padded by four bytes of junk.
        let rows = [0xEE] + bytes([0x80FF_0000, 0xFF00_FF00, 0xDEAD_BEEF]) + bytes([0x0012_3456, 0x40FF_FFFF, 0xDEAD_BEEF])
        let bitmap = try rows.withUnsafeBytes { raw in
            try Bitmap(width: 2, height: 2, scale: 2, format: .straightARGB8888, bytesPerRow: 12,
                       rows: UnsafeRawBufferPointer(rebasing: raw[1...]))
        }
        XCTAssertEqual(bitmap.pixels, [0x8080_0000, 0xFF00_FF00, 0x0000_0000, 0x4040_4040])
        XCTAssertEqual(bitmap.scale, 2)
    }

    func testCoverageRowsPaintTheTintAtEachAlpha() async throws {
        // Only alpha is read: the colour channels of a glyph mask do not matter.
        let rows = bytes([0x0000_0000, 0xFF12_3456, 0x80FF_FFFF, 0x01FF_FFFF])
        let tint = Color(red: 255, green: 0, blue: 0, alpha: 128)
        let bitmap = try rows.withUnsafeBytes {
            try Bitmap(width: 4, height: 1, format: .coverageARGB8888(tint: tint), bytesPerRow: 16, rows: $0)
        }
        func shade(_ coverage: Int) -> UInt32 {
            var color = tint
            color.alpha = UInt8((coverage * 128 + 127) / 255)
            return color.premultipliedARGB
        }
        XCTAssertEqual(bitmap.pixels, [0, shade(255), shade(128), shade(1)])
        XCTAssertEqual(bitmap.pixel(x: 1, y: 0), 0x8080_0000)
    }

    func testHostileStridesAndShortBuffersAreRefusedUnread() async throws {
        let rows = bytes([UInt32](repeating: 0xFFFF_FFFF, count: 8))  // 32 bytes
        try rows.withUnsafeBytes { raw in
            func refused(width: Int, height: Int, bytesPerRow: Int, _ buffer: UnsafeRawBufferPointer? = nil,
                         line: UInt = #line) {
                let buffer = buffer ?? raw
                XCTAssertThrowsError(try Bitmap(width: width, height: height, format: .straightARGB8888,
                                                bytesPerRow: bytesPerRow, rows: buffer), line: line) {
                    XCTAssertEqual($0 as? BitmapError, .invalidRows(width: width, height: height,
                                                                    bytesPerRow: bytesPerRow, byteCount: buffer.count),
                                   line: line)
                }
            }
            refused(width: 4, height: 2, bytesPerRow: 12)                 // a stride shorter than a row
            refused(width: 2, height: 2, bytesPerRow: -8)                 // a negative stride
            refused(width: 4, height: 3, bytesPerRow: 16)                 // the third row is not there
            refused(width: 1, height: 3, bytesPerRow: Int.max)            // a stride that overflows
            refused(width: 4, height: 2, bytesPerRow: 16, UnsafeRawBufferPointer(rebasing: raw[1...]))  // one byte short
            // The last row needs only its pixels, not a whole stride.
            let exact = try Bitmap(width: 2, height: 2, format: .straightARGB8888, bytesPerRow: 24, rows: raw)
            XCTAssertEqual(exact.pixels.count, 4)
            XCTAssertThrowsError(try Bitmap(width: Bitmap.maximumSide + 1, height: 0, format: .straightARGB8888,
                                            bytesPerRow: 0, rows: raw)) {
                XCTAssertEqual($0 as? BitmapError, .invalidSize(width: Bitmap.maximumSide + 1, height: 0))
            }
            XCTAssertThrowsError(try Bitmap(width: 1, height: 1, scale: .nan, format: .straightARGB8888,
                                            bytesPerRow: 4, rows: raw))
        }
        // Nothing to read: an empty buffer makes an empty bitmap.
        let empty = try Bitmap(width: 0, height: 3, format: .straightARGB8888, bytesPerRow: 0,
                               rows: UnsafeRawBufferPointer(start: nil, count: 0))
        XCTAssertTrue(empty.isEmpty)
    }
}

@MainActor
final class BitmapConversionTests: XCTestCase {
    private var scratch: URL {
        let url = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/bitmap")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func testStraightRGBAIsPremultipliedAndPNGRoundTrips() async throws {
        // Opaque red, half-transparent green, transparent, half-transparent white.
        let bytes: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 0, 0, 255, 255, 255, 128]
        let bitmap = try Bitmap(width: 2, height: 2, straightRGBA: bytes)
        XCTAssertEqual(bitmap.pixels, [0xFFFF_0000, 0x8000_8000, 0x0000_0000, 0x8080_8080])
        let path = scratch.appendingPathComponent("roundtrip.png").path
        try bitmap.writePNG(to: path)
        let read = try Bitmap(contentsOfFile: path)
        XCTAssertEqual(read.width, 2)
        XCTAssertEqual(read.pixels, bitmap.pixels)
        XCTAssertNotEqual(read.identity, bitmap.identity)
    }

    func testDecodesJPEGAndGreyAndRGBAPhotosToPremultipliedARGB() async throws {
        let photos = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos")
        let horse = try Bitmap(contentsOfFile: photos.appendingPathComponent("horse.png").path)  // RGBA
        XCTAssertEqual(horse.width, 400)
        XCTAssertEqual(horse.height, 328)
        // Every pixel premultiplied: no channel above alpha.
        for p in horse.pixels {
            let a = p >> 24
            XCTAssertTrue((p >> 16) & 0xFF <= a && (p >> 8) & 0xFF <= a && p & 0xFF <= a)
        }
        // Its top-left pixel is white at alpha 110: premultiplied, 110 in every channel.
        XCTAssertEqual(horse.pixel(x: 0, y: 0), 0x6E6E_6E6E)
        let camera = try Bitmap(contentsOfFile: photos.appendingPathComponent("camera.png").path)  // 8-bit grey
        XCTAssertTrue(camera.pixels.allSatisfy { $0 >> 24 == 0xFF })
        let p = camera.pixel(x: 100, y: 100)
        XCTAssertEqual((p >> 16) & 0xFF, p & 0xFF, "grey converts to equal channels")
        let bytes = try [UInt8](Data(contentsOf: photos.appendingPathComponent("clock.jpg")))
        let clock = try Bitmap(encoded: bytes, scale: 2)
        XCTAssertEqual(clock.pointSize, Size(width: 200, height: 150))
    }

    func testBadInputsThrowClearErrors() async {
        XCTAssertThrowsError(try Bitmap(width: -1, height: 2, premultipliedARGB: [])) {
            XCTAssertEqual($0 as? BitmapError, .invalidSize(width: -1, height: 2))
        }
        XCTAssertThrowsError(try Bitmap(width: 1 << 20, height: 1 << 20, premultipliedARGB: []))
        XCTAssertThrowsError(try Bitmap(width: 2, height: 2, premultipliedARGB: [1, 2, 3])) {
            XCTAssertEqual($0 as? BitmapError, .pixelCountMismatch(expected: 4, actual: 3))
        }
        XCTAssertThrowsError(try Bitmap(width: 1, height: 1, scale: .nan, premultipliedARGB: [0]))
        XCTAssertThrowsError(try Bitmap(width: 1, height: 1, scale: 0, premultipliedARGB: [0]))
        XCTAssertThrowsError(try Bitmap(contentsOfFile: "/nonexistent/photo.png")) {
            XCTAssertTrue("\($0)".contains("/nonexistent/photo.png"))
        }
        XCTAssertThrowsError(try Bitmap(encoded: []))
        XCTAssertThrowsError(try Bitmap(encoded: [UInt8](repeating: 0x5A, count: 4096)))
        XCTAssertThrowsError(try Bitmap.empty().writePNG(to: scratch.appendingPathComponent("empty.png").path))
        XCTAssertThrowsError(try TestContent.solid(.white).writePNG(to: "/nonexistent/dir/out.png"))
    }

    func testLiveByteCountFollowsBitmapLifetimes() async throws {
        let before = Bitmap.liveByteCount
        var bitmap: Bitmap? = try Bitmap(width: 100, height: 10, filledWith: .white)
        let copy = bitmap
        XCTAssertEqual(Bitmap.liveByteCount - before, 4000, "copies share pixels")
        bitmap = nil
        XCTAssertEqual(Bitmap.liveByteCount - before, 4000)
        _ = copy
    }
}
