import XCTest
@testable import Compositor

/// The rounding rules from points to pixels: extents outward, placement to the nearest, float noise
/// forgiven where stated, and no trap on any input.
@MainActor
final class PixelGeometryTests: XCTestCase {
    func testSnappingForgivesOnlyFloatNoise() async {
        XCTAssertEqual(PixelGeometry.snapped(10.0 / 3 * 3 + 1e-12), 10)
        XCTAssertEqual(PixelGeometry.snapped(30.000000000000004), 30)
        XCTAssertEqual(PixelGeometry.snapped(29.9999999999), 30)
        XCTAssertEqual(PixelGeometry.snapped(30.5), 30.5)
        XCTAssertEqual(PixelGeometry.snapped(30.00001), 30.00001)
    }

    func testExtentsRoundOutward() async {
        XCTAssertEqual(PixelGeometry.coveredPixels(from: 1.5, to: 3.2), 1..<4)
        XCTAssertEqual(PixelGeometry.coveredPixels(from: -0.5, to: 2), -1..<2)
        XCTAssertEqual(PixelGeometry.coveredPixels(from: 3, to: 3), 3..<3)
        XCTAssertEqual(PixelGeometry.coveredPixels(from: 5, to: 2), 5..<5, "never inverted")
        XCTAssertEqual(PixelGeometry.lowerPixel(2.999), 2)
        XCTAssertEqual(PixelGeometry.upperPixel(2.001), 3)

        // A canvas covers the whole length; float noise adds no column.
        XCTAssertEqual(PixelGeometry.pixelCount(covering: 10.25, scale: 2), 21)
        XCTAssertEqual(PixelGeometry.pixelCount(covering: 15.000000000000002, scale: 2), 30)
        XCTAssertEqual(PixelGeometry.pixelCount(covering: .nan, scale: 2), 0)
        XCTAssertEqual(PixelGeometry.pixelCount(covering: -4, scale: 2), 0)
        XCTAssertNil(PixelGeometry.pixelCount(covering: .infinity, scale: 1))
        XCTAssertNil(PixelGeometry.pixelCount(covering: Double(Bitmap.maximumSide) + 1, scale: 1))
        XCTAssertEqual(PixelGeometry.pixelCount(covering: Double(Bitmap.maximumSide), scale: 1), Bitmap.maximumSide)
        // The strict count takes the noise as a fraction of a pixel.
        XCTAssertEqual(PixelGeometry.pixelCount(strictlyCovering: 15.000000000000002, scale: 2), 31)
        XCTAssertEqual(PixelGeometry.pixelCount(strictlyCovering: 10.25, scale: 2), 21)

        // Lengths aligned up onto the pixel grid, in points.
        XCTAssertEqual(PixelGeometry.alignedUp(10.2, scale: 2), 10.5)
        XCTAssertEqual(PixelGeometry.alignedUp(10.5, scale: 2), 10.5)
        XCTAssertEqual(PixelGeometry.alignedUp(1.0 / 3 * 3, scale: 3), 1)
    }

    func testPlacementRoundsToTheNearestHalvesAwayFromZero() async {
        XCTAssertEqual(PixelGeometry.nearestWhole(2.5), 3)
        XCTAssertEqual(PixelGeometry.nearestWhole(-2.5), -3)
        XCTAssertEqual(PixelGeometry.nearestIndex(2.49), 2)
        XCTAssertEqual(PixelGeometry.aligned(1.26, scale: 2), 1.5)
        XCTAssertEqual(PixelGeometry.aligned(1.24, scale: 2), 1)
        XCTAssertEqual(Rect(x: 0.4, y: 0.6, width: 2.2, height: 1).nearestPixelRect,
                       PixelRect(x: 0, y: 1, width: 3, height: 1))
        XCTAssertEqual(CornerRadii(topLeft: 1.5, topRight: 0.4, bottomLeft: 2.49, bottomRight: 0).nearestWholePixels,
                       CornerRadii(topLeft: 2, topRight: 0, bottomLeft: 2, bottomRight: 0))
    }

    func testRectanglesInPixelsSnapEachEdge() async {
        XCTAssertEqual(PixelGeometry.snappedPixelEdges(of: Rect(x: 1.0 / 3, y: 0.25, width: 1.0 / 3, height: 1), scale: 3),
                       Rect(x: 1, y: 0.75, width: 1, height: 3))
        XCTAssertNil(PixelGeometry.snappedPixelEdges(of: Rect(x: .nan, y: 0, width: 1, height: 1), scale: 1))
        XCTAssertNil(PixelGeometry.snappedPixelEdges(of: Rect(x: 0, y: 0, width: 1e308, height: 1), scale: 10))
    }

    func testIndicesNeverTrap() async {
        XCTAssertEqual(PixelGeometry.index(.nan), -(1 << 40))
        XCTAssertEqual(PixelGeometry.index(.infinity), 1 << 40)
        XCTAssertEqual(PixelGeometry.index(-1e300), -(1 << 40))
        XCTAssertEqual(PixelGeometry.nearestIndex(1e300), 1 << 40)
        XCTAssertEqual(PixelGeometry.coveredPixels(from: .nan, to: .nan), -(1 << 40)..<(-(1 << 40)))
        XCTAssertEqual(Rect(x: -1e300, y: 0, width: 2e300, height: 1).nearestPixelRect.x, -Int(Int32.max / 2))
    }
}
