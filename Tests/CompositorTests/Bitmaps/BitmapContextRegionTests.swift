import XCTest
@testable import Compositor

/// Drawing into a region of a canvas (how a rasterizing node draws its subtree) and clipping to a
/// coverage mask (how a bubble with a tail is cut in one pass).
@MainActor
final class BitmapContextRegionTests: XCTestCase {
    private let red = Color(red: 255, green: 0, blue: 0)
    private let blue = Color(red: 0, green: 0, blue: 255)

    func testARegionMovesTheOriginReportsItsSizeAndKeepsDrawingInside() async throws {
        var context = try BitmapContext(pixelWidth: 40, pixelHeight: 30, scale: 1)
        context.drawing(in: Rect(x: 10, y: 5, width: 20, height: 10)) { region in
            XCTAssertEqual(region.bounds, Rect(x: 0, y: 0, width: 20, height: 10))
            // Filling far more than the region stays inside it.
            region.fill(Rect(x: -100, y: -100, width: 500, height: 500), color: red)
            region.drawing(in: Rect(x: 2, y: 2, width: 4, height: 4)) { inner in
                inner.fill(inner.bounds, color: blue)
            }
        }
        XCTAssertEqual(context.pixel(x: 9, y: 5), 0, "left of the region")
        XCTAssertEqual(context.pixel(x: 10, y: 5), red.premultipliedARGB)
        XCTAssertEqual(context.pixel(x: 29, y: 14), red.premultipliedARGB)
        XCTAssertEqual(context.pixel(x: 30, y: 14), 0, "right of the region")
        XCTAssertEqual(context.pixel(x: 10, y: 15), 0, "below the region")
        XCTAssertEqual(context.pixel(x: 12, y: 7), blue.premultipliedARGB, "nested regions add their origins")
        XCTAssertEqual(context.pixel(x: 16, y: 11), red.premultipliedARGB)
        XCTAssertEqual(context.bounds, Rect(x: 0, y: 0, width: 40, height: 30), "the whole canvas again afterwards")
        // A clear inside a region clears only the region.
        context.fill(context.bounds, color: blue)
        context.drawing(in: Rect(x: 0, y: 0, width: 10, height: 10)) { $0.clear() }
        XCTAssertEqual(context.pixel(x: 5, y: 5), 0)
        XCTAssertEqual(context.pixel(x: 15, y: 5), blue.premultipliedARGB)
    }

    func testAClipToACoverageMaskMultipliesWhatIsDrawn() async throws {
        var context = try BitmapContext(pixelWidth: 8, pixelHeight: 2, scale: 1)
        // Left half inside, one half-covered column, the rest outside.
        var mask = [UInt8](repeating: 0, count: 16)
        for y in 0..<2 {
            for x in 0..<4 { mask[y * 8 + x] = 255 }
            mask[y * 8 + 4] = 128
        }
        context.clip(toCoverage: mask, width: 8, height: 2)
        context.fill(context.bounds, color: red)
        XCTAssertEqual(context.pixel(x: 0, y: 0), red.premultipliedARGB)
        XCTAssertEqual(context.pixel(x: 3, y: 1), red.premultipliedARGB)
        XCTAssertEqual(context.pixel(x: 4, y: 0) >> 24, 128, "partial coverage gives partial alpha")
        XCTAssertEqual(context.pixel(x: 5, y: 0), 0)
        // A mask of the wrong size leaves nothing inside.
        var other = try BitmapContext(pixelWidth: 4, pixelHeight: 4, scale: 1)
        other.clip(toCoverage: [255, 255], width: 4, height: 4)
        other.fill(other.bounds, color: red)
        XCTAssertEqual(other.pixel(x: 1, y: 1), 0)
    }
}
