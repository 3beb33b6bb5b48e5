import Tessera
import Foundation

/// The compositor's cost per frame against a bare loop of texture copies, in one run.
///
/// A scene of `layerCount` visible layers fills a 1280×800 window (headless: the software renderer;
/// in a window: the renderer asked for). Once every texture is resident, frames alternate between the
/// two ways of drawing the same copies: the compositor (walk the tree, check residency, clip, draw,
/// record statistics) and a bare loop that replays the compositor's own texture copies straight into
/// the renderer (the same textures, rectangles and opacity). Both clear and present. Alternating
/// frames spreads the machine's noise over both sides.
/// - Thread: main
@MainActor
struct CompositorBenchmark {
    let layerCount: Int
    let frames: Int
    let assets: URL
    var output = BenchmarkOutput()

    struct Report {
        var renderer = ""
        var videoDriver = ""
        /// The window drawn in (`BenchmarkOutput.describe`).
        var output = ""
        var compositorMs: [Double] = []
        var bareMs: [Double] = []
        var uploadBytesAfterWarmUp = 0
        var layers = 0
        /// The compositor's draw calls and texture binds in its last frame.
        var drawCalls = 0
        var textureBinds = 0

        var overheadPercent: Double {
            let bare = bareMs.median()
            return bare > 0 ? (compositorMs.median() / bare - 1) * 100 : 0
        }

        var table: String {
            func row(_ name: String, _ v: [Double]) -> String {
                let p = Percentiles(v)
                return name.padded(to: 12) + String(format: " %8.3f %8.3f %8.3f", p.percentile(0.5), p.percentile(0.95), p.percentile(0.99))
            }
            return """
            compositor benchmark: \(layers) layers, 1280×800, \(output), \(compositorMs.count) frames each
            mode               p50      p95      p99   (ms per frame, main thread)
            \(row("bare copies", bareMs))
            \(row("compositor", compositorMs))
            compositor overhead at p50: \(String(format: "%+.1f%%", overheadPercent))
            draw calls per frame: \(drawCalls), texture binds: \(textureBinds)
            bytes uploaded after warm-up: \(uploadBytesAfterWarmUp)
            """
        }

        /// The figures `--json` writes.
        struct JSON: Codable, Equatable {
            struct Milliseconds: Codable, Equatable {
                var p50: Double, p95: Double, p99: Double
                init(_ values: [Double]) {
                    let p = Percentiles(values)
                    p50 = p.percentile(0.5); p95 = p.percentile(0.95); p99 = p.percentile(0.99)
                }
            }
            var scenario = "compositor"
            var layers: Int
            var frames: Int
            var renderer: String
            var videoDriver: String
            var bareMs: Milliseconds
            var compositorMs: Milliseconds
            var overheadPercentP50: Double
            var drawCallsPerFrame: Int
            var textureBindsPerFrame: Int
            var uploadBytesAfterWarmUp: Int
        }

        func json() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return try encoder.encode(JSON(layers: layers, frames: compositorMs.count, renderer: renderer, videoDriver: videoDriver,
                                           bareMs: .init(bareMs), compositorMs: .init(compositorMs),
                                           overheadPercentP50: overheadPercent, drawCallsPerFrame: drawCalls,
                                           textureBindsPerFrame: textureBinds, uploadBytesAfterWarmUp: uploadBytesAfterWarmUp))
        }
    }

    func run() throws -> Report {
        let viewport = Size(width: 1280, height: 800)
        let backend = try output.makeBackend(title: "benchmark", size: viewport)
        let compositor = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0x101418)))
        compositor.recordsDrawList = true

        // A grid of layers covering the window, each with its own contents (no shared textures).
        let columns = Int(Double(layerCount).squareRoot() * 1.6).clamped(to: 1...layerCount)
        let rows = (layerCount + columns - 1) / columns
        let cell = Size(width: viewport.width / Double(columns), height: viewport.height / Double(rows))
        let photo = try Bitmap(contentsOfFile: assets.appendingPathComponent("photos/chelsea.jpg").path)
        let root = Layer(name: "root")
        root.frame = Rect(origin: .zero, size: viewport)
        for index in 0..<layerCount {
            let layer = Layer()
            layer.frame = Rect(x: Double(index % columns) * cell.width + 2, y: Double(index / columns) * cell.height + 2,
                               width: cell.width - 4, height: cell.height - 4).integral
            var context = try BitmapContext(size: layer.frame.size)
            context.draw(photo, in: context.bounds,
                         from: Rect(x: Double(index % 50), y: Double(index % 30), width: 300, height: 200))
            layer.contents = context.makeBitmap()
            root.addSublayer(layer)
        }

        var report = Report()
        report.renderer = backend.rendererName
        report.videoDriver = backend.window.videoDriverName
        report.output = BenchmarkOutput.describe(backend)
        report.layers = layerCount
        for _ in 0..<10 { compositor.render(root) }  // warm-up: uploads happen here
        let draws = compositor.lastDrawList
        for _ in 0..<frames {
            _ = compositor.pollEvents()
            var start = MonotonicClock.nanoseconds()
            let statistics = compositor.render(root)
            report.compositorMs.append(MonotonicClock.milliseconds(since: start))
            report.uploadBytesAfterWarmUp += statistics.uploadBytes
            report.drawCalls = statistics.drawCalls
            report.textureBinds = statistics.textureBinds

            start = MonotonicClock.nanoseconds()
            backend.beginFrame(clearColor: Color(rgb: 0x101418))
            for draw in draws {
                backend.drawTexture(draw.texture, source: draw.source, destination: draw.destination, opacity: draw.opacity)
            }
            backend.present()
            report.bareMs.append(MonotonicClock.milliseconds(since: start))
        }
        return report
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { min(range.upperBound, max(range.lowerBound, self)) }
}

extension Rect {
    /// The rectangle with its edges rounded to whole points.
    var integral: Rect {
        let x0 = minX.rounded(), y0 = minY.rounded()
        return Rect(x: x0, y: y0, width: maxX.rounded() - x0, height: maxY.rounded() - y0)
    }
}
