import Compositor
import Foundation
import NodeRuntime

/// The frame-timing overlay (F2): a bar per frame for the last 240 frames, stacked by phase, a 16.7 ms
/// line, and the figures the benchmark reports. It reads the same `FrameRecord`s.
/// - Thread: main (updates); its chart draws on a display worker like any node.
final class PerfOverlayNode: Node {
    /// The bars: main-thread milliseconds per frame by phase.
    final class ChartNode: Node, NodeDrawing {
        struct Parameters: Sendable {
            var frames: [[Double]] = []  // per frame: events, commits, layout, ranges, displays, uploads, draw, present
        }
        static let phaseColors: [Color] = [
            Color(rgb: 0x8E9AAF), Color(rgb: 0x4EA8DE), Color(rgb: 0xF4A261), Color(rgb: 0xB084CC),
            Color(rgb: 0xE76F51), Color(rgb: 0xF6D743), Color(rgb: 0x2A9D8F), Color(rgb: 0x90BE6D),
        ]
        static let phaseNames = ["events", "commits", "layout", "ranges", "displays", "uploads", "draw", "present"]
        /// Milliseconds at the top of the chart.
        static let scaleMilliseconds = 25.0

        var parameters = Parameters()
        func drawParameters() -> Parameters { parameters }

        static func draw(_ p: Parameters, in context: inout BitmapContext, info: DrawInfo) {
            let bounds = info.bounds
            context.fill(bounds, color: Color(rgb: 0x0B0F14, alpha: 210))
            guard !p.frames.isEmpty else { return }
            let barWidth = bounds.width / 240
            func y(_ ms: Double) -> Double { bounds.maxY - min(ms, scaleMilliseconds) / scaleMilliseconds * bounds.height }
            for (index, phases) in p.frames.enumerated() {
                let x = bounds.maxX - Double(p.frames.count - index) * barWidth
                var bottom = 0.0
                for (phase, ms) in phases.enumerated() where ms > 0 {
                    let top = bottom + ms
                    context.fill(Rect(x: x, y: y(top), width: max(0.5, barWidth - 0.25), height: max(1, y(bottom) - y(top))),
                                 color: phaseColors[phase % phaseColors.count])
                    bottom = top
                }
            }
            let budget = y(FrameHistory.budgetMilliseconds)
            context.fill(Rect(x: 0, y: budget - 0.5, width: bounds.width, height: 1), color: Color(rgb: 0xFF5A5F))
        }
    }

    let chart = ChartNode()
    let figures = TextNode()
    let legend = TextNode()
    private var lastFiguresUpdate = -1.0

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x0B0F14, alpha: 230)
        cornerRadius = 8
        cornerRoundingMode = .compositorClip
        zPosition = 1000
        addSubnode(chart)
        addSubnode(figures)
        addSubnode(legend)
        var legendText = AttributedText()
        for (i, name) in ChartNode.phaseNames.enumerated() {
            legendText.append("■ ", attributes: TextAttributes(font: .system(size: 10), color: ChartNode.phaseColors[i]))
            legendText.append(name + "  ", attributes: TextAttributes(font: .system(size: 10), color: Color(rgb: 0xC9D1DB)))
        }
        legend.attributedText = legendText
    }

    static let size = Size(width: 560, height: 214)

    override func layout() {
        let width = bounds.width
        chart.frame = Rect(x: 8, y: 8, width: width - 16, height: 110)
        legend.frame = Rect(x: 8, y: 122, width: width - 16, height: 16)
        figures.frame = Rect(x: 8, y: 140, width: width - 16, height: bounds.height - 146)
    }

    /// Shows the history; the figures' text changes four times a second so reading it costs little.
    func update(history: FrameHistory, record: FrameRecord, checkerboardPercent: Double, time: Double) {
        chart.parameters.frames = history.ordered.map { r in
            let draw = max(0, r.compositor.drawMilliseconds - r.compositor.uploadMilliseconds)
            return [r.eventsMilliseconds, r.commitsMilliseconds, r.layoutMilliseconds, r.rangesMilliseconds,
                    r.displayMilliseconds, r.compositor.uploadMilliseconds, draw, r.compositor.presentMilliseconds]
        }
        chart.setNeedsDisplay()
        guard time - lastFiguresUpdate >= 0.25 else { return }
        lastFiguresUpdate = time
        let stats = Runtime.shared.scheduler.statistics
        let lines = [
            String(format: "%.0f fps   main thread p50 %.2f  p95 %.2f  p99 %.2f ms   over budget %d of %d",
                   history.framesPerSecond, history.percentile(0.5), history.percentile(0.95), history.percentile(0.99),
                   history.framesOverBudget, history.frameCount),
            String(format: "queue %d   renders %d done, %d cancelled   uploads %d (%@)   commits %d (+%d waiting)",
                   record.schedulerQueueDepth, stats.completed, stats.cancelledBeforeStart + stats.cancelledWhileRunning,
                   record.compositor.uploads, Self.bytes(record.compositor.uploadBytes) as NSString,
                   record.commitsApplied, record.commitsDeferred),
            String(format: "textures %@   bitmaps %@   checkerboard %.2f%%",
                   Self.bytes(record.compositor.liveTextureBytes) as NSString, Self.bytes(Bitmap.liveByteCount) as NSString,
                   checkerboardPercent),
        ]
        figures.attributedText = AttributedText(lines.joined(separator: "\n"),
                                                attributes: TextAttributes(font: .monospaced(size: 10), color: Color(rgb: 0xE6EDF3)))
    }

    static func bytes(_ count: Int) -> String {
        if count >= 1 << 20 { return String(format: "%.1f MB", Double(count) / Double(1 << 20)) }
        if count >= 1 << 10 { return String(format: "%.0f KB", Double(count) / Double(1 << 10)) }
        return "\(count) B"
    }
}
