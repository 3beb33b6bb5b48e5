import XCTest
@testable import Compositor

@MainActor
final class BitmapContextTests: XCTestCase, CanvasInspecting {
    // MARK: Construction

    func testInitialStateAndSizes() async throws {
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

    func testClearIgnoresClipAndMakeBitmapKeepsScale() async throws {
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

    func testCrispIntegerFill() async throws {
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

    func testFractionalEdgesGetAreaCoverage() async throws {
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

    func testSourceOverBlendsHalfTransparentColour() async throws {
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

    func testRoundedRectCornerCentreAndEdge() async throws {
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

    func testPerCornerRadiiRoundOnlyMaskedCorners() async throws {
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

    func testOversizedRadiusGivesSymmetricCircle() async throws {
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

    func testFillRespectsCanvasEdges() async throws {
        var c = try context(4, 4)
        c.fill(Rect(x: -10, y: 2, width: 100, height: 100), color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0, count: 8) + [UInt32](repeating: 0xFFFF_FFFF, count: 8))
        c.fill(Rect(x: 10, y: 10, width: 5, height: 5), color: .black)  // wholly outside
        XCTAssertEqual(c.pixel(x: 3, y: 3), 0xFFFF_FFFF)
        c.fillRoundedRect(Rect(x: -50, y: -50, width: 200, height: 200), radii: CornerRadii(20), color: .black)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFF00_0000, count: 16))
    }

    // MARK: Clipping

    func testClipToRect() async throws {
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

    func testClipToRoundedRectMatchesRoundedFill() async throws {
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

    func testSaveAndRestoreClip() async throws {
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

    func testUnbalancedRestoreResetsClip() async throws {
        var c = try context(4, 4)
        c.clip(to: Rect(x: 0, y: 0, width: 1, height: 1))
        c.restoreClip()
        c.restoreClip()
        c.fill(c.bounds, color: .white)
        XCTAssertEqual(allPixels(c), [UInt32](repeating: 0xFFFF_FFFF, count: 16))
    }

    // MARK: Outside fill

    func testOutsideFillIsComplementOfRoundedFill() async throws {
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

    func testOutsideFillRespectsClipAndBlends() async throws {
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
    // MARK: Scale

    func testScaleTwoDrawsInPoints() async throws {
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

    func testBadInputsLeavePixelsUnchanged() async throws {
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

    func testExtremeGeometryDoesNotTrap() async throws {
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

    func testZeroSizedContextDrawsNothing() async throws {
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
