import CSDL
import XCTest
@testable import Compositor

/// Bitmaps from SDL surfaces: converted by SDL, read as plain rows, premultiplied, drawn like any bitmap.
@MainActor
final class BitmapSDLTests: XCTestCase, CanvasInspecting {
    func testDrawSDLSurface() async throws {
        guard let surface = SDL_CreateRGBSurfaceWithFormat(0, 2, 1, 32, SDL_PIXELFORMAT_ARGB8888.rawValue) else {
            return XCTFail("SDL could not make a surface")
        }
        defer { SDL_FreeSurface(surface) }
        let row = surface.pointee.pixels.assumingMemoryBound(to: UInt32.self)
        row[0] = 0x80FF_0000  // straight half-transparent red
        row[1] = 0xFF00_FF00
        var c = try context(2, 1)
        c.draw(try Bitmap(surface: surface), in: Rect(x: 0, y: 0, width: 2, height: 1))
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0x8080_0000)
        XCTAssertEqual(c.pixel(x: 1, y: 0), 0xFF00_FF00)
    }

    func testAnotherFormatAndAPaddedPitchAreConverted() async throws {
        // Three bytes a pixel (blue, green, red in memory), rows padded to 8 bytes.
        var bytes: [UInt8] = [0, 0, 255, 0, 255, 0, 7, 7,
                              255, 0, 0, 255, 255, 255, 7, 7]
        let bitmap = try bytes.withUnsafeMutableBytes { raw -> Bitmap in
            guard let surface = SDL_CreateRGBSurfaceWithFormatFrom(raw.baseAddress, 2, 2, 24, 8,
                                                                   SDL_PIXELFORMAT_BGR24.rawValue) else {
                throw BitmapError.decodeFailed(source: "test", reason: String(cString: SDL_GetError()))
            }
            defer { SDL_FreeSurface(surface) }
            return try Bitmap(surface: surface, scale: 2)
        }
        XCTAssertEqual(bitmap.pixels, [0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF, 0xFFFF_FFFF])
        XCTAssertEqual(bitmap.pointSize, Size(width: 1, height: 1))
    }

    func testASurfaceWiderThanABitmapIsRefusedBeforeItIsConverted() async throws {
        guard let surface = SDL_CreateRGBSurfaceWithFormat(0, Int32(Bitmap.maximumSide + 1), 1, 32,
                                                           SDL_PIXELFORMAT_ARGB8888.rawValue) else {
            return XCTFail("SDL could not make a surface")
        }
        defer { SDL_FreeSurface(surface) }
        XCTAssertThrowsError(try Bitmap(surface: surface)) {
            XCTAssertEqual($0 as? BitmapError, .invalidSize(width: Bitmap.maximumSide + 1, height: 1))
        }
    }
}
