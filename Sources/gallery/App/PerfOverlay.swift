import Tessera
import Foundation

/// The frame-timing overlay (F2): two graphs over the last 240 frames on one millisecond scale, like
/// Flutter's UI and raster graphs. The top graph is the UI thread, a bar per frame stacked by phase; the
/// lane under it is the display workers' busy time per frame. Both mark the 16.7 ms budget. Under the
/// graphs, the figures the benchmark reports. It reads the same `FrameRecord`s.
/// - Thread: main (updates); its chart draws on a display worker like any node.
@MainActor
final class PerfOverlayNode: Node, @unchecked Sendable {
    /// The graphs. Drawn from `Parameters` alone, so the draw runs on a display worker.
    final class ChartNode: Node, NodeDrawing, @unchecked Sendable {
        struct Parameters: Sendable {
            /// Per frame, oldest first: main-thread milliseconds by phase, in `FramePhase.allCases` order.
            var frames: [[Double]] = []
            /// Per frame, oldest first: display-worker milliseconds (all workers added up).
            var workerMilliseconds: [Double] = []
        }
        static let phaseColors: [Color] = [
            Color(rgb: 0x8E9AAF), Color(rgb: 0x4EA8DE), Color(rgb: 0xF4A261), Color(rgb: 0xB084CC),
            Color(rgb: 0xE76F51), Color(rgb: 0xF6D743), Color(rgb: 0x2A9D8F), Color(rgb: 0x90BE6D),
        ]
        static let phaseNames = FramePhase.allCases.map(\.rawValue)
        /// The workers lane's bars.
        static let workerColor = Color(rgb: 0xF15BB5)
        static let workerName = "workers"
        /// Milliseconds at the top of each graph.
        static let scaleMilliseconds = 25.0
        /// Frames the graphs have room for; the newest is at the right edge.
        static let frameSlots = 240
        static let workerLaneHeight = 28.0
        static let laneGap = 4.0
        static let height = 130.0
        private static let background = Color(rgb: 0x0B0F14, alpha: 210)
        private static let laneBackground = Color(rgb: 0x18202A)
        private static let budgetColor = Color(rgb: 0xFF5A5F)

        /// Where the UI thread's graph sits in a chart of `bounds`.
        static func phaseGraphRect(in bounds: Rect) -> Rect {
            Rect(x: bounds.minX, y: bounds.minY, width: bounds.width,
                 height: max(0, bounds.height - workerLaneHeight - laneGap))
        }

        /// Where the display workers' lane sits in a chart of `bounds`: along the bottom.
        static func workerLaneRect(in bounds: Rect) -> Rect {
            Rect(x: bounds.minX, y: max(bounds.minY, bounds.maxY - workerLaneHeight), width: bounds.width,
                 height: min(bounds.height, workerLaneHeight))
        }

        var parameters = Parameters()
        func drawParameters() -> Parameters { parameters }

        static func draw(_ p: Parameters, in context: inout BitmapContext, info: DrawInfo) {
            context.fill(info.bounds, color: background)
            let lane = workerLaneRect(in: info.bounds)
            context.fill(lane, color: laneBackground)
            drawBars(p.frames, colors: phaseColors, in: phaseGraphRect(in: info.bounds), context: &context)
            drawBars(p.workerMilliseconds.map { [$0] }, colors: [workerColor], in: lane, context: &context)
        }

        /// One graph: a bar per frame, right-aligned, each stacked from `stacks[frame]` bottom up in
        /// `colors`, then the budget line across.
        private static func drawBars(_ stacks: [[Double]], colors: [Color], in rect: Rect, context: inout BitmapContext) {
            guard rect.height > 0 else { return }
            let barWidth = rect.width / Double(frameSlots)
            func y(_ ms: Double) -> Double { rect.maxY - min(ms, scaleMilliseconds) / scaleMilliseconds * rect.height }
            for (index, stack) in stacks.suffix(frameSlots).enumerated() {
                let x = rect.maxX - Double(min(stacks.count, frameSlots) - index) * barWidth
                var bottom = 0.0
                for (part, ms) in stack.enumerated() where ms > 0 {
                    let top = bottom + ms
                    context.fill(Rect(x: x, y: y(top), width: max(0.5, barWidth - 0.25), height: max(1, y(bottom) - y(top))),
                                 color: colors[part % colors.count])
                    bottom = top
                }
            }
            let budget = y(FrameHistory.budgetMilliseconds)
            context.fill(Rect(x: rect.minX, y: budget - 0.5, width: rect.width, height: 1), color: budgetColor)
        }
    }

    let chart = ChartNode()
    let figures = TextNode()
    let legend = TextNode()
    private var lastUpdate = -Double.infinity
    /// How often the graphs and figures change: a few times a second, so a shown overlay does not keep
    /// the app drawing every frame (with nothing else changing, no frame runs and it holds still). The
    /// figures' first line says so.
    static let refreshInterval = 0.25
    /// Times the graphs and figures were refreshed.
    private(set) var refreshCount = 0

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
        let entries = Array(zip(ChartNode.phaseNames, ChartNode.phaseColors)) + [(ChartNode.workerName, ChartNode.workerColor)]
        for (name, color) in entries {
            legendText.append("■ ", attributes: TextAttributes(font: .system(size: 10), color: color))
            legendText.append(name + "  ", attributes: TextAttributes(font: .system(size: 10), color: Color(rgb: 0xC9D1DB)))
        }
        legend.attributedText = legendText
    }

    static let size = Size(width: 560, height: 254)

    /// The overlay's frame in a viewport of `viewportSize`: the top right corner.
    static func frame(in viewportSize: Size) -> Rect {
        Rect(x: viewportSize.width - size.width - 12, y: 12, width: size.width, height: size.height)
    }

    /// The chart's frame in an overlay of `overlaySize`.
    static func chartFrame(inOverlayOf overlaySize: Size) -> Rect {
        Rect(x: 8, y: 8, width: overlaySize.width - 16, height: ChartNode.height)
    }

    override func layout() {
        let width = bounds.width
        let chartFrame = Self.chartFrame(inOverlayOf: bounds.size)
        chart.frame = chartFrame
        legend.frame = Rect(x: 8, y: chartFrame.maxY + 4, width: width - 16, height: 16)
        figures.frame = Rect(x: 8, y: chartFrame.maxY + 22, width: width - 16, height: bounds.height - chartFrame.maxY - 28)
    }

    /// Shows the history, at most once per `refreshInterval` of frame time (`force`: now).
    func update(history: FrameHistory, record: FrameRecord, checkerboardPercent: Double, time: Double,
                compositorThread: CompositorThread? = nil, force: Bool = false) {
        guard force || !(time - lastUpdate < Self.refreshInterval) else { return }
        lastUpdate = time
        refreshCount += 1
        let samples = history.ordered
        chart.parameters.frames = samples.map(\.record.phaseMilliseconds)
        chart.parameters.workerMilliseconds = samples.map(\.workerMilliseconds)
        chart.setNeedsDisplay()
        let stats = Runtime.shared.scheduler.statistics
        let draws = stats.byKind[.draw] ?? DisplayScheduler.Statistics.Counts()
        let workerMean = samples.isEmpty ? 0 : samples.map(\.workerMilliseconds).reduce(0, +) / Double(samples.count)
        let main = history.percentiles(\.totalMilliseconds)
        var lines = [
            String(format: "%.0f Hz refresh  %.0f fps  main thread p50 %.2f  p95 %.2f  p99 %.2f ms  over budget %d of %d",
                   1 / Self.refreshInterval, history.framesPerSecond, main.percentile(0.5), main.percentile(0.95), main.percentile(0.99),
                   history.framesOverBudget, history.frameCount),
            Self.threadTimeFigures(history),
            String(format: "queue %d  draws %d done, %d cancelled  decodes %d  measures %d  workers %.2f ms/frame",
                   record.schedulerQueueDepth, draws.completed, draws.cancelledBeforeStart + draws.cancelledWhileRunning,
                   stats.byKind[.decode]?.completed ?? 0, stats.byKind[.measure]?.completed ?? 0, workerMean),
            String(format: "commits %d (+%d waiting)  uploads %d (%@)  textures %@  bitmaps %@  checker %.2f%%",
                   record.commitsApplied, record.commitsDeferred,
                   record.compositor.uploads, Self.bytes(record.compositor.uploadBytes) as NSString,
                   Self.bytes(record.compositor.liveTextureBytes) as NSString, Self.bytes(Bitmap.liveByteCount) as NSString,
                   checkerboardPercent),
            String(format: "caches: images %@ of %@  corners %@  text %@  decoding %@ (peak %@)",
                   Self.bytes(ImageCache.shared.byteCount) as NSString, Self.bytes(ImageCache.shared.budgetBytes) as NSString,
                   Self.bytes(record.compositor.cornerPieceBytes) as NSString,
                   Self.bytes(TextLayoutCache.shared.statistics.bytes) as NSString,
                   Self.bytes(ImageDecoder.decodeMemoryUsage.inUse) as NSString,
                   Self.bytes(ImageDecoder.decodeMemoryUsage.peak) as NSString),
        ]
        let memory = MemoryReport.processFigures()
        lines.append("process: resident \(Self.bytes(memory.residentBytes)), anonymous \(Self.bytes(memory.anonymousBytes))"
                     + "  (gallery --bench memory says by whom)")
        if let compositorThread { lines.insert(Self.compositorFigures(compositorThread), at: 2) }
        figures.attributedText = AttributedText(lines.joined(separator: "\n"),
                                                attributes: TextAttributes(font: .monospaced(size: 10), color: Color(rgb: 0xE6EDF3)))
    }

    /// The figures' line on the compositor thread's own frames: how many it presented a second and
    /// what one took to draw and present, apart from the UI thread's.
    static func compositorFigures(_ thread: CompositorThread) -> String {
        let frames = thread.recentFrames
        let span = (frames.last?.time ?? 0) - (frames.first?.time ?? 0)
        let rate = frames.count > 1 && span > 0 ? Double(frames.count - 1) / span : 0
        let times = Percentiles(frames.map(\.milliseconds))
        return String(format: "compositor thread  %.0f fps  frame p50 %.2f  p99 %.2f ms  presents %d", rate,
                      times.percentile(0.5), times.percentile(0.99), thread.presentCount)
    }

    /// The figures' line on where the UI thread's frame time went: its CPU time per frame, and the
    /// interference (wall minus CPU: the time it lost its core or waited), over the kept frames.
    static func threadTimeFigures(_ history: FrameHistory) -> String {
        let cpu = history.percentiles(\.cpuMilliseconds)
        let interference = history.percentiles(\.interferenceMilliseconds)
        return String(format: "UI thread CPU p50 %.2f  p99 %.2f ms  interference p50 %.2f  p99 %.2f  max %.2f ms",
                      cpu.percentile(0.5), cpu.percentile(0.99),
                      interference.percentile(0.5), interference.percentile(0.99), interference.maximum)
    }

    static func bytes(_ count: Int) -> String {
        if count >= 1 << 20 { return String(format: "%.1f MB", Double(count) / Double(1 << 20)) }
        if count >= 1 << 10 { return String(format: "%.0f KB", Double(count) / Double(1 << 10)) }
        return "\(count) B"
    }
}
