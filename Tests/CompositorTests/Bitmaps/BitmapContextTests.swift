import CSDL
import XCTest
@testable import Compositor

final class BitmapContextTests: XCTestCase {
    // MARK: Helpers

    private func context(_ w: Int, _ h: Int, scale: Double = 1) throws -> BitmapContext {
        try BitmapContext(pixelWidth: w, pixelHeight: h, scale: scale)
    }

    private func alpha(_ c: BitmapContext, _ x: Int, _ y: Int) -> Int { Int(c.pixel(x: x, y: y) >> 24) }

    private func channels(_ p: UInt32) -> [Int] {
        [Int(p >> 24), Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF)]
    }

    private func allPixels(_ c: BitmapContext) -> [UInt32] { c.makeBitmap().pixels }

    private func grey(_ v: UInt32) -> UInt32 { 0xFF00_0000 | (v << 16) | (v << 8) | v }

    // MARK: Construction

    func testInitialStateAndSizes() throws {
        let c = try context(3, 2, scale: 2)
        XCTAssertEqual(c.pixelWidth, 3)
        XCTAssertEqual(c.pixelHeight, 2)
        XCTAssertEqual(c.bounds, Rect(x: 0, y: 0, width: 1.5, height: 1))
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0, count: 6))

        let rounded = try BitmapContext(size: Size(width: 10.5, height: 3), scale: 1)
        XCTAssertEqual(rounded.pixelWidth, 11)
        XCTAssertEqual(rounded.pixelHeight, 3)
        let tripled = try BitmapContext(size: Size(width: 10, height: 0.1 * 3), scale: 3)
        XCTAssertEqual(tripled.pixelWidth, 30)
        XCTAssertEqual(tripled.pixelHeight, 1)  // 0.9000000000000001 px rounds up to 1, never 2
        let bad = try BitmapContext(size: Size(width: .nan, height: -5))
        XCTAssertEqual(bad.pixelWidth, 0)
        XCTAssertEqual(bad.pixelHeight, 0)

        XCTAssertThrowsError(try BitmapContext(pixelWidth: -1, pixelHeight: 4))
        XCTAssertThrowsError(try BitmapContext(pixelWidth: 4, pixelHeight: 4, scale: 0))
        XCTAssertThrowsError(try BitmapContext(pixelWidth: 4, pixelHeight: 4, scale: .nan))
        XCTAssertThrowsError(try BitmapContext(size: Size(width: .infinity, height: 4)))
        XCTAssertThrowsError(try BitmapContext(size: Size(width: 4, height: 4), scale: -1))
    }

    func testClearIgnoresClipAndMakeBitmapKeepsScale() throws {
        var c = try context(4, 4, scale: 2)
        c.clip(to: Rect(x: 0, y: 0, width: 1, height: 1))
        c.clear(Color(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0x8080_0000, count: 16))
        let bitmap = c.makeBitmap()
        XCTAssertEqual(bitmap.scale, 2)
        XCTAssertEqual(bitmap.width, 4)
        XCTAssertEqual(bitmap.pointSize, Size(width: 2, height: 2))
    }

    // MARK: Fills

    func testCrispIntegerFill() throws {
        var c = try context(10, 10)
        c.fill(Rect(x: 2, y: 2, width: 4, height: 4), color: Color(rgb: 0x336699))
        var filled = 0
        for y in 0..<10 {
            for x in 0..<10 {
                let inside = (2..<6).contains(x) && (2..<6).contains(y)
                XCTAssertEqual(c.pixel(x: x, y: y), inside ? 0xFF33_6699 : 0, "pixel \(x),\(y)")
                if c.pixel(x: x, y: y) != 0 { filled += 1 }
            }
        }
        XCTAssertEqual(filled, 16)
    }

    func testFractionalEdgesGetAreaCoverage() throws {
        var c = try context(6, 4)
        c.fill(Rect(x: 1.5, y: 1, width: 2, height: 1), color: .white)
        XCTAssertEqual(c.pixel(x: 0, y: 1), 0)
        XCTAssertEqual(c.pixel(x: 1, y: 1), 0x8080_8080)  // half covered: 127.5 rounds to 128
        XCTAssertEqual(c.pixel(x: 2, y: 1), 0xFFFF_FFFF)
        XCTAssertEqual(c.pixel(x: 3, y: 1), 0x8080_8080)
        XCTAssertEqual(c.pixel(x: 4, y: 1), 0)
        XCTAssertEqual(c.pixel(x: 2, y: 0), 0)
        XCTAssertEqual(c.pixel(x: 2, y: 2), 0)

        c.fill(Rect(x: 0, y: 2.25, width: 1, height: 0.5), color: .white)
        XCTAssertEqual(c.pixel(x: 0, y: 2), 0x8080_8080)
        XCTAssertEqual(c.pixel(x: 0, y: 3), 0)

        c.fill(Rect(x: 4.5, y: 2.5, width: 1, height: 1), color: .white)
        for (x, y) in [(4, 2), (5, 2), (4, 3), (5, 3)] {
            XCTAssertEqual(c.pixel(x: x, y: y), 0x4040_4040, "quarter-covered pixel \(x),\(y)")
        }
    }

    func testSourceOverBlendsHalfTransparentColour() throws {
        var c = try context(3, 1)
        c.clear(.white)
        c.fill(Rect(x: 0, y: 0, width: 2, height: 1), color: Color(red: 255, green: 0, blue: 0, alpha: 128))
        // red 128/255 over white: a = 128 + 127, r = 128 + 127, g = b = 127
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0xFFFF_7F7F)
        XCTAssertEqual(c.pixel(x: 1, y: 0), 0xFFFF_7F7F)
        XCTAssertEqual(c.pixel(x: 2, y: 0), 0xFFFF_FFFF)

        var clear = try context(1, 1)
        clear.fill(Rect(x: 0, y: 0, width: 1, height: 1), color: Color(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(clear.pixel(x: 0, y: 0), 0x8080_0000)
        clear.fill(Rect(x: 0, y: 0, width: 1, height: 1), color: Color(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(clear.pixel(x: 0, y: 0), 0xC0C0_0000)  // 128 + round(128 × 127/255) = 192
    }

    func testRoundedRectCornerCentreAndEdge() throws {
        var c = try context(20, 20)
        c.fillRoundedRect(Rect(x: 0, y: 0, width: 20, height: 20), radii: CornerRadii(8), color: .black)
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0)
        XCTAssertEqual(c.pixel(x: 1, y: 1), 0)
        XCTAssertEqual(c.pixel(x: 19, y: 19), 0)
        XCTAssertEqual(c.pixel(x: 10, y: 10), 0xFF00_0000)
        XCTAssertEqual(c.pixel(x: 10, y: 0), 0xFF00_0000)  // straight top edge on a pixel boundary: crisp
        XCTAssertEqual(c.pixel(x: 0, y: 10), 0xFF00_0000)
        let edge = alpha(c, 2, 2)  // the arc passes through this pixel
        XCTAssertGreaterThan(edge, 40)
        XCTAssertLessThan(edge, 240)
        XCTAssertEqual(c.pixel(x: 2, y: 2) & 0x00FF_FFFF, 0)  // premultiplied black stays black

        // Every pixel's alpha is close to its true area coverage (64 × 64 supersampled here).
        for y in 0..<20 {
            for x in 0..<20 {
                var inside = 0
                for sy in 0..<64 {
                    for sx in 0..<64 {
                        let px = Double(x) + (Double(sx) + 0.5) / 64, py = Double(y) + (Double(sy) + 0.5) / 64
                        let cx = min(max(px, 8), 12), cy = min(max(py, 8), 12)
                        if (px - cx) * (px - cx) + (py - cy) * (py - cy) <= 64 { inside += 1 }
                    }
                }
                let expected = Double(inside) / 4096 * 255
                XCTAssertEqual(Double(alpha(c, x, y)), expected, accuracy: 6, "pixel \(x),\(y)")
            }
        }
    }

    func testPerCornerRadiiRoundOnlyMaskedCorners() throws {
        var c = try context(20, 20)
        c.fillRoundedRect(Rect(x: 0, y: 0, width: 20, height: 20),
                          radii: CornerRadii(8, corners: [.topLeft, .bottomRight]), color: .white)
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0)
        XCTAssertEqual(c.pixel(x: 19, y: 19), 0)
        XCTAssertEqual(c.pixel(x: 19, y: 0), 0xFFFF_FFFF)
        XCTAssertEqual(c.pixel(x: 0, y: 19), 0xFFFF_FFFF)

        var d = try context(20, 20)
        d.fillRoundedRect(Rect(x: 0, y: 0, width: 20, height: 20),
                          radii: CornerRadii(topLeft: 0, topRight: 2, bottomLeft: 6, bottomRight: 0), color: .white)
        XCTAssertEqual(d.pixel(x: 0, y: 0), 0xFFFF_FFFF)
        XCTAssertEqual(d.pixel(x: 19, y: 19), 0xFFFF_FFFF)
        XCTAssertGreaterThan(alpha(d, 19, 0), 0)  // radius 2: about a third of the corner pixel is inside
        XCTAssertLessThan(alpha(d, 19, 0), 128)
        XCTAssertEqual(d.pixel(x: 18, y: 1), 0xFFFF_FFFF)
        XCTAssertEqual(d.pixel(x: 0, y: 19), 0)
        XCTAssertEqual(d.pixel(x: 0, y: 18), 0)  // radius 6 reaches further in
        XCTAssertLessThan(alpha(d, 1, 18), 255)
    }

    func testOversizedRadiusGivesSymmetricCircle() throws {
        var c = try context(20, 20)
        c.fillRoundedRect(Rect(x: 0, y: 0, width: 20, height: 20), radii: CornerRadii(100), color: .white)
        XCTAssertEqual(alpha(c, 10, 10), 255)
        XCTAssertEqual(alpha(c, 0, 0), 0)
        XCTAssertEqual(alpha(c, 1, 1), 0)  // pixel [1,2]² is 11.3 from the centre at best: outside r = 10
        XCTAssertEqual(alpha(c, 3, 3), 255)  // pixel [3,4]² is 9.9 from the centre at worst: inside
        XCTAssertGreaterThan(alpha(c, 2, 2), 0)
        XCTAssertLessThan(alpha(c, 2, 2), 255)
        XCTAssertGreaterThan(alpha(c, 0, 10), 200)  // the circle touches the left side at mid-height
        XCTAssertGreaterThan(alpha(c, 9, 0), 200)
        for y in 0..<20 {
            for x in 0..<20 {
                let a = alpha(c, x, y)
                XCTAssertEqual(a, alpha(c, 19 - x, y), accuracy: 1, "mirror x at \(x),\(y)")
                XCTAssertEqual(a, alpha(c, x, 19 - y), accuracy: 1, "mirror y at \(x),\(y)")
                XCTAssertEqual(a, alpha(c, y, x), accuracy: 3, "transpose at \(x),\(y)")
            }
        }
    }

    func testFillRespectsCanvasEdges() throws {
        var c = try context(4, 4)
        c.fill(Rect(x: -10, y: 2, width: 100, height: 100), color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0, count: 8) + [UInt32](repeating: 0xFFFF_FFFF, count: 8))
        c.fill(Rect(x: 10, y: 10, width: 5, height: 5), color: .black)  // wholly outside
        XCTAssertEqual(c.pixel(x: 3, y: 3), 0xFFFF_FFFF)
        c.fillRoundedRect(Rect(x: -50, y: -50, width: 200, height: 200), radii: CornerRadii(20), color: .black)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFF00_0000, count: 16))
    }

    // MARK: Clipping

    func testClipToRect() throws {
        var c = try context(10, 10)
        c.clip(to: Rect(x: 0, y: 0, width: 5, height: 10))
        c.fill(Rect(x: 0, y: 0, width: 10, height: 10), color: .white)
        for x in 0..<10 {
            XCTAssertEqual(c.pixel(x: x, y: 3), x < 5 ? 0xFFFF_FFFF : 0, "column \(x)")
        }
        c.clip(to: Rect(x: 0, y: 0, width: 10, height: 2))  // intersects with the previous clip
        c.fill(Rect(x: 0, y: 0, width: 10, height: 10), color: .black)
        XCTAssertEqual(c.pixel(x: 1, y: 1), 0xFF00_0000)
        XCTAssertEqual(c.pixel(x: 1, y: 2), 0xFFFF_FFFF)
        XCTAssertEqual(c.pixel(x: 6, y: 1), 0)

        var f = try context(10, 1)
        f.clip(to: Rect(x: 0, y: 0, width: 5.5, height: 1))
        f.fill(Rect(x: 0, y: 0, width: 10, height: 1), color: .white)
        XCTAssertEqual(f.pixel(x: 4, y: 0), 0xFFFF_FFFF)
        XCTAssertEqual(f.pixel(x: 5, y: 0), 0x8080_8080)  // a fractional clip edge is anti-aliased
        XCTAssertEqual(f.pixel(x: 6, y: 0), 0)
    }

    func testClipToRoundedRectMatchesRoundedFill() throws {
        let rect = Rect(x: 1.5, y: 2, width: 15, height: 12), radii = CornerRadii(5)
        var clipped = try context(20, 20)
        clipped.clip(toRoundedRect: rect, radii: radii)
        clipped.fill(Rect(x: 0, y: 0, width: 20, height: 20), color: .white)
        var filled = try context(20, 20)
        filled.fillRoundedRect(rect, radii: radii, color: .white)
        XCTAssertEqual(allPixels(clipped), allPixels(filled))
        XCTAssertEqual(clipped.pixel(x: 1, y: 2), 0)
        XCTAssertEqual(clipped.pixel(x: 9, y: 8), 0xFFFF_FFFF)
        XCTAssertEqual(clipped.pixel(x: 0, y: 8), 0)

        // Two rounded clips multiply: inside both is opaque, inside one only is empty.
        var both = try context(20, 20)
        both.clip(toRoundedRect: Rect(x: 0, y: 0, width: 12, height: 20), radii: CornerRadii(4))
        both.clip(toRoundedRect: Rect(x: 8, y: 0, width: 12, height: 20), radii: CornerRadii(4))
        both.fill(Rect(x: 0, y: 0, width: 20, height: 20), color: .white)
        XCTAssertEqual(both.pixel(x: 10, y: 10), 0xFFFF_FFFF)
        XCTAssertEqual(both.pixel(x: 5, y: 10), 0)
        XCTAssertEqual(both.pixel(x: 15, y: 10), 0)
        XCTAssertEqual(both.pixel(x: 11, y: 0), 0)  // top-right corner of the first clip
    }

    func testSaveAndRestoreClip() throws {
        var c = try context(10, 10)
        c.saveClip()
        c.clip(to: Rect(x: 0, y: 0, width: 5, height: 5))
        c.saveClip()
        c.clip(to: Rect(x: 0, y: 0, width: 2, height: 2))
        c.fill(c.bounds, color: Color(rgb: 0xFF0000))
        c.restoreClip()
        c.fill(Rect(x: 3, y: 3, width: 7, height: 7), color: Color(rgb: 0x00FF00))
        c.restoreClip()
        c.fill(Rect(x: 8, y: 0, width: 2, height: 2), color: Color(rgb: 0x0000FF))
        XCTAssertEqual(c.pixel(x: 1, y: 1), 0xFFFF_0000)
        XCTAssertEqual(c.pixel(x: 2, y: 2), 0)
        XCTAssertEqual(c.pixel(x: 4, y: 4), 0xFF00_FF00)
        XCTAssertEqual(c.pixel(x: 5, y: 5), 0)  // the green fill was still clipped to 5×5
        XCTAssertEqual(c.pixel(x: 9, y: 1), 0xFF00_00FF)  // unclipped again
    }

    func testUnbalancedRestoreResetsClip() throws {
        var c = try context(4, 4)
        c.clip(to: Rect(x: 0, y: 0, width: 1, height: 1))
        c.restoreClip()
        c.restoreClip()
        c.fill(c.bounds, color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFFFF_FFFF, count: 16))
    }

    // MARK: Outside fill

    func testOutsideFillIsComplementOfRoundedFill() throws {
        let rect = Rect(x: 2.25, y: 1.5, width: 20, height: 17), radii = CornerRadii(topLeft: 7, topRight: 3,
                                                                                    bottomLeft: 0, bottomRight: 12)
        let colour = Color(red: 200, green: 100, blue: 50, alpha: 255)
        var inside = try context(26, 22), outside = try context(26, 22)
        inside.fillRoundedRect(rect, radii: radii, color: colour)
        outside.fill(outsideRoundedRect: rect, radii: radii, color: colour)
        let full = channels(colour.premultipliedARGB)
        var partial = 0
        for (a, b) in zip(allPixels(inside), allPixels(outside)) {
            let sum = zip(channels(a), channels(b)).map { $0 + $1 }
            for k in 0..<4 { XCTAssertEqual(sum[k], full[k], accuracy: 2) }
            if a >> 24 != 0 && b >> 24 != 0 { partial += 1 }
        }
        XCTAssertGreaterThan(partial, 20)  // the edges really were partial on both sides
        XCTAssertEqual(outside.pixel(x: 0, y: 0), 0xFFC8_6432)
        XCTAssertEqual(outside.pixel(x: 25, y: 21), 0xFFC8_6432)
        XCTAssertEqual(outside.pixel(x: 12, y: 10), 0)
    }

    func testOutsideFillRespectsClipAndBlends() throws {
        var c = try context(10, 10)
        c.clear(.black)
        c.clip(to: Rect(x: 0, y: 0, width: 10, height: 5))
        c.fill(outsideRoundedRect: Rect(x: 2, y: 2, width: 6, height: 6), radii: .zero,
               color: Color(red: 255, green: 255, blue: 255, alpha: 128))
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0xFF80_8080)
        XCTAssertEqual(c.pixel(x: 4, y: 4), 0xFF00_0000)  // inside the rect
        XCTAssertEqual(c.pixel(x: 0, y: 7), 0xFF00_0000)  // outside the clip
        var z = try context(3, 3)
        z.fill(outsideRoundedRect: Rect(x: 1, y: 1, width: 0, height: 0), radii: .zero, color: .white)
        XCTAssertEqual(allPixels(z), [UInt32](repeating: 0xFFFF_FFFF, count: 9))  // nothing is inside
    }

    // MARK: Bitmaps

    private func sampleBitmap() throws -> Bitmap {
        var pixels: [UInt32] = []
        for i in 0..<20 {
            let a = UInt32(i * 13 % 256)
            pixels.append((a << 24) | ((a * 3 / 4) << 16) | ((a / 2) << 8) | (a / 5))
        }
        return try Bitmap(width: 5, height: 4, premultipliedARGB: pixels)
    }

    func testDrawBitmapOneToOneIsExactCopy() throws {
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

    func testEnlargeTwiceIsBilinear() throws {
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

    func testScaledDrawKeepsChannelsApartAndFlatColoursExact() throws {
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

    func testShrinkEightTimesAveragesArea() throws {
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

    func testLargePhotoShrinkAveragesEveryPixel() throws {
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

    func testDrawWithHalfOpacity() throws {
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

    func testDrawWithSourceRect() throws {
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

    func testDrawRespectsClip() throws {
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

    func testDrawSDLSurface() throws {
        guard let surface = SDL_CreateRGBSurfaceWithFormat(0, 2, 1, 32, SDL_PIXELFORMAT_ARGB8888.rawValue) else {
            return XCTFail("SDL could not make a surface")
        }
        defer { SDL_FreeSurface(surface) }
        let row = surface.pointee.pixels.assumingMemoryBound(to: UInt32.self)
        row[0] = 0x80FF_0000  // straight half-transparent red
        row[1] = 0xFF00_FF00
        var c = try context(2, 1)
        try c.draw(sdlSurface: UnsafeMutableRawPointer(surface), in: Rect(x: 0, y: 0, width: 2, height: 1))
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0x8080_0000)
        XCTAssertEqual(c.pixel(x: 1, y: 0), 0xFF00_FF00)
    }

    // MARK: Scale

    func testScaleTwoDrawsInPoints() throws {
        var c = try BitmapContext(size: Size(width: 20, height: 20), scale: 2)
        XCTAssertEqual(c.pixelWidth, 40)
        XCTAssertEqual(c.bounds, Rect(x: 0, y: 0, width: 20, height: 20))
        c.fill(Rect(x: 0, y: 0, width: 10, height: 10), color: .white)
        var filled = 0
        for y in 0..<40 { for x in 0..<40 where c.pixel(x: x, y: y) != 0 { filled += 1 } }
        XCTAssertEqual(filled, 400)
        XCTAssertEqual(c.pixel(x: 19, y: 19), 0xFFFF_FFFF)
        XCTAssertEqual(c.pixel(x: 20, y: 19), 0)
        XCTAssertEqual(c.pixel(x: 19, y: 20), 0)

        c.fill(Rect(x: 10.25, y: 0, width: 1, height: 1), color: .white)  // 20.5 px: a half pixel
        XCTAssertEqual(c.pixel(x: 20, y: 0), 0x8080_8080)

        var r = try BitmapContext(size: Size(width: 10, height: 10), scale: 2)
        r.fillRoundedRect(r.bounds, radii: CornerRadii(5), color: .white)  // radius 10 px
        XCTAssertEqual(r.pixel(x: 1, y: 1), 0)
        XCTAssertEqual(r.pixel(x: 10, y: 10), 0xFFFF_FFFF)
        XCTAssertEqual(r.pixel(x: 10, y: 2), 0xFFFF_FFFF)
        XCTAssertEqual(r.pixel(x: 0, y: 0), 0)
    }

    // MARK: Bad input

    func testBadInputsLeavePixelsUnchanged() throws {
        var c = try context(6, 6)
        c.fill(Rect(x: 1, y: 1, width: 3, height: 3), color: Color(rgb: 0x204060))
        let before = allPixels(c)
        let white = try Bitmap(width: 2, height: 2, filledWith: .white)
        let bad = [
            Rect(x: .nan, y: 0, width: 4, height: 4),
            Rect(x: 0, y: 0, width: .nan, height: 4),
            Rect(x: 0, y: 0, width: .infinity, height: 4),
            Rect(x: -.infinity, y: 0, width: 4, height: 4),
            Rect(x: 0, y: 0, width: -3, height: 4),
            Rect(x: 1, y: 1, width: 0, height: 4),
        ]
        for rect in bad {
            c.fill(rect, color: .white)
            c.fillRoundedRect(rect, radii: CornerRadii(2), color: .white)
            c.draw(white, in: rect)
            if !rect.isFinite || rect.width < 0 {
                c.fill(outsideRoundedRect: rect, radii: CornerRadii(1), color: .white)
            }
            c.draw(white, in: Rect(x: 0, y: 0, width: 4, height: 4), from: rect)
        }
        c.draw(white, in: Rect(x: 0, y: 0, width: 4, height: 4), opacity: .nan)
        c.draw(white, in: Rect(x: 0, y: 0, width: 4, height: 4), opacity: -1)
        c.draw(Bitmap.empty(), in: Rect(x: 0, y: 0, width: 4, height: 4))
        c.draw(white, in: Rect(x: 0, y: 0, width: 4, height: 4), from: Rect(x: 5, y: 5, width: 2, height: 2))
        c.fill(Rect(x: 0, y: 0, width: 4, height: 4), color: .clear)
        XCTAssertEqual(allPixels(c), before)

        // A bad clip makes the clip empty until restored.
        c.saveClip()
        c.clip(to: Rect(x: .nan, y: 0, width: 4, height: 4))
        c.fill(c.bounds, color: .white)
        c.clip(toRoundedRect: Rect(x: 0, y: 0, width: -1, height: 4), radii: CornerRadii(1))
        c.fill(c.bounds, color: .white)
        XCTAssertEqual(allPixels(c), before)
        c.restoreClip()
        c.fill(c.bounds, color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFFFF_FFFF, count: 36))
    }

    func testExtremeGeometryDoesNotTrap() throws {
        var c = try context(4, 4)
        c.fillRoundedRect(Rect(x: 0, y: 0, width: 4, height: 4), radii: CornerRadii(.nan), color: .white)
        XCTAssertEqual(c.pixel(x: 0, y: 0), 0xFFFF_FFFF)  // NaN radii count as 0
        c.clear()
        c.fill(Rect(x: -1e300, y: -1e300, width: 2e300, height: 2e300), color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFFFF_FFFF, count: 16))
        c.fillRoundedRect(Rect(x: -1e300, y: -1e300, width: 2e300, height: 2e300), radii: CornerRadii(1e300),
                          color: .black)
        c.fill(outsideRoundedRect: Rect(x: 1e300, y: 0, width: 1e300, height: 1), radii: CornerRadii(1e299),
               color: .black)
        c.clip(toRoundedRect: Rect(x: -1e200, y: 0, width: 1e200, height: 3), radii: CornerRadii(1e150))
        c.restoreClip()
        c.draw(try Bitmap(width: 3, height: 3, filledWith: .white), in: Rect(x: -1e300, y: 0, width: 2e300, height: 1e-300))
        c.draw(try Bitmap(width: 3, height: 3, filledWith: .white), in: Rect(x: 0, y: 0, width: 1e-300, height: 2))
        XCTAssertEqual(c.pixel(x: 3, y: 3), 0xFF00_0000)
        c.draw(try Bitmap(width: 3, height: 3, filledWith: .white), in: Rect(x: 0, y: 0, width: 4, height: 4),
               from: Rect(x: 0.5, y: 0.5, width: 1e-12, height: 1e-12))
        XCTAssertEqual(c.pixel(x: 3, y: 3), 0xFFFF_FFFF)
    }

    func testZeroSizedContextDrawsNothing() throws {
        var c = try BitmapContext(size: .zero, scale: 2)
        XCTAssertEqual(c.pixelWidth, 0)
        XCTAssertEqual(c.bounds, .zero)
        c.clear(.white)
        c.fill(Rect(x: 0, y: 0, width: 10, height: 10), color: .white)
        c.fillRoundedRect(Rect(x: 0, y: 0, width: 10, height: 10), radii: CornerRadii(3), color: .white)
        c.fill(outsideRoundedRect: Rect(x: 0, y: 0, width: 1, height: 1), radii: .zero, color: .white)
        c.clip(toRoundedRect: Rect(x: 0, y: 0, width: 1, height: 1), radii: CornerRadii(1))
        c.draw(try Bitmap(width: 2, height: 2, filledWith: .white), in: Rect(x: 0, y: 0, width: 1, height: 1))
        c.restoreClip()
        XCTAssertTrue(c.makeBitmap().isEmpty)
        XCTAssertEqual(c.makeBitmap().scale, 2)

        var wide = try context(5, 0)
        wide.fill(Rect(x: 0, y: 0, width: 5, height: 5), color: .white)
        XCTAssertTrue(wide.makeBitmap().isEmpty)
    }
}
