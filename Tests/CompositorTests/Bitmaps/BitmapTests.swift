import Foundation
import XCTest
@testable import Compositor
import TestSupport

final class BitmapTests: XCTestCase {
    func testIdentitySurvivesCopies() throws {
        let a = try Bitmap(width: 2, height: 2, filledWith: .white)
        let b = a
        let c = try Bitmap(width: 2, height: 2, filledWith: .white)
        XCTAssertEqual(a.identity, b.identity)
        XCTAssertNotEqual(a.identity, c.identity)
    }
}

final class BitmapConversionTests: XCTestCase {
    private var scratch: URL {
        let url = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/bitmap")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func testStraightRGBAIsPremultipliedAndPNGRoundTrips() throws {
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

    func testDecodesJPEGAndGreyAndRGBAPhotosToPremultipliedARGB() throws {
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

    func testBadInputsThrowClearErrors() {
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

    func testLiveByteCountFollowsBitmapLifetimes() throws {
        let before = Bitmap.liveByteCount
        var bitmap: Bitmap? = try Bitmap(width: 100, height: 10, filledWith: .white)
        let copy = bitmap
        XCTAssertEqual(Bitmap.liveByteCount - before, 4000, "copies share pixels")
        bitmap = nil
        XCTAssertEqual(Bitmap.liveByteCount - before, 4000)
        _ = copy
    }
}
