import Compositor
import XCTest
@testable import gallery

/// Reads the perf overlay's chart out of a screenshot: how many pixels in a rectangle have one of the
/// chart's bar colours, and in how many pixel columns.
struct ChartPixels: CustomStringConvertible {
    var pixels = 0
    var columns = 0

    var description: String { "\(pixels) px in \(columns) columns" }

    /// Per channel, how far a pixel may be from a bar colour (OpenGL and the software renderer round
    /// blended edges differently; bar interiors are exact).
    static let tolerance = 6

    /// Counts the pixels of `bitmap` inside `rect` (points) within `tolerance` of one of `colors`.
    init(in bitmap: Bitmap, rect: Rect, colors: [Color]) {
        let scale = bitmap.scale
        let minX = max(0, Int((rect.minX * scale).rounded())), maxX = min(bitmap.width, Int((rect.maxX * scale).rounded()))
        let minY = max(0, Int((rect.minY * scale).rounded())), maxY = min(bitmap.height, Int((rect.maxY * scale).rounded()))
        guard minX < maxX, minY < maxY else { return }
        for x in minX..<maxX {
            var columnHit = false
            for y in minY..<maxY where Self.matches(bitmap.pixel(x: x, y: y), colors) {
                pixels += 1
                columnHit = true
            }
            if columnHit { columns += 1 }
        }
    }

    private static func matches(_ argb: UInt32, _ colors: [Color]) -> Bool {
        guard argb >> 24 == 0xFF else { return false }
        let red = Int((argb >> 16) & 0xFF), green = Int((argb >> 8) & 0xFF), blue = Int(argb & 0xFF)
        return colors.contains {
            abs(Int($0.red) - red) <= tolerance && abs(Int($0.green) - green) <= tolerance
                && abs(Int($0.blue) - blue) <= tolerance
        }
    }

    /// Where the overlay's two graphs are in a screenshot of a `viewport`-sized window.
    @MainActor
    static func graphRects(viewport: Size) -> (phases: Rect, workers: Rect) {
        let overlay = PerfOverlayNode.frame(in: viewport)
        let chart = PerfOverlayNode.chartFrame(inOverlayOf: overlay.size).offsetBy(dx: overlay.minX, dy: overlay.minY)
        return (PerfOverlayNode.ChartNode.phaseGraphRect(in: chart), PerfOverlayNode.ChartNode.workerLaneRect(in: chart))
    }

    /// Asserts that the overlay in `bitmap` (a `viewport`-sized screenshot) has drawn its chart: phase
    /// bars over at least `minimumBars` frames, and the workers lane holds bars. A chart that was never
    /// drawn shows only the overlay's background there.
    @MainActor
    static func assertChartDrawn(in bitmap: Bitmap, viewport: Size, minimumBars: Int = 20, _ label: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let rects = graphRects(viewport: viewport)
        let phases = ChartPixels(in: bitmap, rect: rects.phases, colors: PerfOverlayNode.ChartNode.phaseColors)
        let workers = ChartPixels(in: bitmap, rect: rects.workers, colors: [PerfOverlayNode.ChartNode.workerColor])
        // A bar is a little over 2 px wide: a bar for each of `minimumBars` frames covers at least that many columns.
        XCTAssertGreaterThanOrEqual(phases.columns, minimumBars,
                                    "\(label): phase bars in the chart at \(rects.phases): \(phases)", file: file, line: line)
        // Each phase of a bar is at least a pixel tall; frames at rest, with the compositor on its own
        // thread, take a fraction of a millisecond on the UI thread, so bars are often just that.
        XCTAssertGreaterThanOrEqual(phases.pixels, 2 * minimumBars,
                                    "\(label): phase bars in the chart at \(rects.phases): \(phases)", file: file, line: line)
        XCTAssertGreaterThan(workers.columns, 0,
                             "\(label): worker bars in the lane at \(rects.workers): \(workers)", file: file, line: line)
    }
}
