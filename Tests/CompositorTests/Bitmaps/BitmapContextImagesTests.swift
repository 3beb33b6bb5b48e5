import XCTest
@testable import Compositor

/// Drawing bitmaps into a canvas: exact copies, bilinear and area filtering, opacity, source rects, clips.
@MainActor
final class BitmapContextImagesTests: XCTestCase, CanvasInspecting {
    private func sampleBitmap() throws -> Bitmap {
        var pixels: [UInt32] = []
        for i in 0..<20 {
            let a = UInt32(i * 13 % 256)
            pixels.append((a << 24) | ((a * 3 / 4) << 16) | ((a / 2) << 8) | (a / 5))
        }
        return try Bitmap(width: 5, height: 4, premultipliedARGB: pixels)
    }

    func testDrawBitmapOneToOneIsExactCopy() async throws {
        let bitmap = try sampleBitmap()
        var c = try context(5, 4)
        c.draw(bitmap, in: Rect(x: 0, y: 0, width: 5, height: 4))
        XCTAssertEqual(allPixels(c), bitmap.pixels)

        var offset = try context(10, 10)
        offset.draw(bitmap, in: Rect(x: 3, y: 2, width: 5, height: 4))
        for y in 0..<10 {
            for x in 0..<10 {
                XCTAssertEqual(offset.pixel(x: x, y: y), bitmap.pixel(x: x - 3, y: y - 2), "pixel \(x),\(y)")
            }
        }
    }

    func testEnlargeTwiceIsBilinear() async throws {
        let bitmap = try Bitmap(width: 2, height: 1, premultipliedARGB: [0xFF00_0000, 0xFFFF_FFFF])
        var c = try context(4, 2)
        c.draw(bitmap, in: Rect(x: 0, y: 0, width: 4, height: 2))
        for y in 0..<2 {
            XCTAssertEqual(c.pixel(x: 0, y: y), grey(0))
            XCTAssertEqual(c.pixel(x: 1, y: y), grey(64))  // ¼ white
            XCTAssertEqual(c.pixel(x: 2, y: y), grey(191))  // ¾ white
            XCTAssertEqual(c.pixel(x: 3, y: y), grey(255))
        }
    }

    func testScaledDrawKeepsChannelsApartAndFlatColoursExact() async throws {
        // Opaque red next to half-transparent blue, enlarged 2×: each channel is interpolated on its own.
        let pair = try Bitmap(width: 2, height: 1, premultipliedARGB: [0xFFFF_0000, 0x8000_0080])
        var c = try context(4, 1)
        c.draw(pair, in: Rect(x: 0, y: 0, width: 4, height: 1))
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0xFFFF_0000)
        XCTAssertEqual(c.pixel(x: 1, y: 0), 0xDFBF_0020)  // ¾ red + ¼ blue: a 223, r 191, b 32
        XCTAssertEqual(c.pixel(x: 2, y: 0), 0xA040_0060)  // ¼ red + ¾ blue: a 160, r 64, b 96
        XCTAssertEqual(c.pixel(x: 3, y: 0), 0x8000_0080)

        // A flat colour stays exact through the box filter, whole or fractional (10 → 3 is 3.33×).
        let flat = try Bitmap(width: 12, height: 10, premultipliedARGB: [UInt32](repeating: 0x8040_2010, count: 120))
        var d = try context(3, 3)
        d.draw(flat, in: Rect(x: 0, y: 0, width: 3, height: 3))
        XCTAssertEqual(allPixels(d), [UInt32](repeating: 0x8040_2010, count: 9))
    }

    func testShrinkEightTimesAveragesArea() async throws {
        var checker = [UInt32](), sparse = [UInt32]()
        for y in 0..<64 {
            for x in 0..<64 {
                checker.append((x + y) % 2 == 0 ? 0xFF00_0000 : 0xFFFF_FFFF)
                sparse.append(x % 8 == 0 ? 0xFFFF_FFFF : 0xFF00_0000)
            }
        }
        var c = try context(8, 8)
        c.draw(try Bitmap(width: 64, height: 64, premultipliedARGB: checker), in: Rect(x: 0, y: 0, width: 8, height: 8))
        var s = try context(8, 8)
        s.draw(try Bitmap(width: 64, height: 64, premultipliedARGB: sparse), in: Rect(x: 0, y: 0, width: 8, height: 8))
        for y in 0..<8 {
            for x in 0..<8 {
                let p = channels(c.pixel(x: x, y: y)), q = channels(s.pixel(x: x, y: y))
                XCTAssertEqual(p[0], 255)
                XCTAssertEqual(q[0], 255)
                for k in 1..<4 {
                    XCTAssertEqual(p[k], 128, accuracy: 3, "checkerboard at \(x),\(y)")
                    XCTAssertEqual(q[k], 32, accuracy: 3, "one white column in eight at \(x),\(y)")  // point sampling gives 0
                }
            }
        }
    }

    func testLargePhotoShrinkAveragesEveryPixel() async throws {
        // 1411 → 52 (27× smaller): one-pixel stripes must come out grey, not as aliased black or white.
        let n = 1411
        var stripes = [UInt32](repeating: 0xFF00_0000, count: n * n)
        for y in 0..<n { for x in stride(from: 1, to: n, by: 2) { stripes[y * n + x] = 0xFFFF_FFFF } }
        let bitmap = try Bitmap(width: n, height: n, premultipliedARGB: stripes)
        var c = try context(52, 52)
        c.draw(bitmap, in: Rect(x: 0, y: 0, width: 52, height: 52))
        var total = 0
        for y in 0..<52 {
            for x in 0..<52 {
                let p = channels(c.pixel(x: x, y: y))
                XCTAssertEqual(p[0], 255)
                XCTAssertEqual(p[1], 127, accuracy: 8, "pixel \(x),\(y)")
                total += p[1]
            }
        }
        XCTAssertEqual(Double(total) / (52 * 52), 127.4, accuracy: 1)
    }

    func testDrawWithHalfOpacity() async throws {
        let white = try Bitmap(width: 2, height: 2, filledWith: .white)
        var c = try context(2, 1)
        c.draw(white, in: Rect(x: 0, y: 0, width: 1, height: 1), opacity: 0.5)
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0x8080_8080)
        XCTAssertEqual(c.pixel(x: 1, y: 0), 0)

        var d = try context(1, 1)
        d.clear(.black)
        d.draw(white, in: Rect(x: 0, y: 0, width: 1, height: 1), opacity: 0.5)
        XCTAssertEqual(d.pixel(x: 0, y: 0), 0xFF80_8080)
        d.draw(white, in: Rect(x: 0, y: 0, width: 1, height: 1), opacity: 7)  // clamped to 1
        XCTAssertEqual(d.pixel(x: 0, y: 0), 0xFFFF_FFFF)
    }

    func testDrawWithSourceRect() async throws {
        // Quadrants: red, green / blue, white.
        var pixels = [UInt32]()
        for y in 0..<4 {
            for x in 0..<4 {
                switch (x < 2, y < 2) {
                case (true, true): pixels.append(0xFFFF_0000)
                case (false, true): pixels.append(0xFF00_FF00)
                case (true, false): pixels.append(0xFF00_00FF)
                case (false, false): pixels.append(0xFFFF_FFFF)
                }
            }
        }
        let atlas = try Bitmap(width: 4, height: 4, premultipliedARGB: pixels)
        var c = try context(2, 2)
        c.draw(atlas, in: Rect(x: 0, y: 0, width: 2, height: 2), from: Rect(x: 2, y: 0, width: 2, height: 2))
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFF00_FF00, count: 4))

        // Enlarged, the cell must not bleed into its neighbours.
        var big = try context(8, 8)
        big.draw(atlas, in: Rect(x: 0, y: 0, width: 8, height: 8), from: Rect(x: 0, y: 2, width: 2, height: 2))
        XCTAssertEqual(allPixels(big), [UInt32](repeating: 0xFF00_00FF, count: 64))

        // A source rect reaching past the bitmap is cut, and the destination shrinks with it.
        var cut = try context(8, 8)
        cut.draw(atlas, in: Rect(x: 0, y: 0, width: 8, height: 8), from: Rect(x: 2, y: 2, width: 4, height: 4))
        XCTAssertEqual(cut.pixel(x: 0, y: 0), 0xFFFF_FFFF)
        XCTAssertEqual(cut.pixel(x: 3, y: 3), 0xFFFF_FFFF)
        XCTAssertEqual(cut.pixel(x: 4, y: 0), 0)
        XCTAssertEqual(cut.pixel(x: 0, y: 4), 0)
    }

    func testDrawRespectsClip() async throws {
        let white = try Bitmap(width: 4, height: 4, filledWith: .white)
        var c = try context(4, 4)
        c.clip(toRoundedRect: Rect(x: 0, y: 0, width: 4, height: 4), radii: CornerRadii(2))
        c.draw(white, in: Rect(x: 0, y: 0, width: 4, height: 4))
        var reference = try context(4, 4)
        reference.fillRoundedRect(Rect(x: 0, y: 0, width: 4, height: 4), radii: CornerRadii(2), color: .white)
        XCTAssertEqual(allPixels(c), allPixels(reference))
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0x5050_5050)  // about 0.31 of the corner pixel is inside r = 2
        XCTAssertEqual(c.pixel(x: 1, y: 1), 0xFFFF_FFFF)
    }
}
