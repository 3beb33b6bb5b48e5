import Tessera
import Foundation

/// The fling benchmark's report: each mode's figures in every run, their medians over the runs, and
/// the ratios between modes with their median and worst over the runs. `gallery --bench fling --json
/// FILE` writes it with `JSONEncoder`; the table printed is made from the same values.
///
/// Percentiles are nearest-rank (`Percentiles`), of one run's frames; a figure in `modes` is the
/// median over the runs of that figure (so `modes.async.mainThreadMs.p99` is the median run's p99).
/// Every number is finite: a ratio with no run to take it from is left out rather than encoded.
/// - Thread: any (a value)
struct FlingReport: Codable, Equatable {
    /// Percentiles of a per-frame figure, in milliseconds.
    struct Distribution: Codable, Equatable {
        var p50: Double
        var p95: Double
        var p99: Double
        var max: Double

        init(p50: Double, p95: Double, p99: Double, max: Double) {
            self.p50 = p50; self.p95 = p95; self.p99 = p99; self.max = max
        }

        /// The percentiles of one run's frames.
        init(_ values: [Double]) {
            let percentiles = Percentiles(values)
            self.init(p50: percentiles.percentile(0.5), p95: percentiles.percentile(0.95),
                      p99: percentiles.percentile(0.99), max: percentiles.maximum)
        }

        /// Each field the median of the runs' fields.
        static func medians(_ runs: [Distribution]) -> Distribution {
            Distribution(p50: runs.map(\.p50).median(), p95: runs.map(\.p95).median(),
                         p99: runs.map(\.p99).median(), max: runs.map(\.max).median())
        }
    }

    /// One mode's figures: of one run, or (in `modes`) each the median of the runs' figures.
    struct ModeFigures: Codable, Equatable {
        /// Wall milliseconds per frame on the UI thread, from the scroll step to the end of the host's
        /// record (present returned).
        var mainThreadMs: Distribution
        /// The UI thread's CPU milliseconds per frame (`FrameRecord.cpuMilliseconds`).
        var cpuMs: Distribution
        /// Wall minus CPU milliseconds per frame (`FrameRecord.interferenceMilliseconds`): time the UI
        /// thread lost its core or waited.
        var interferenceMs: Distribution
        /// Milliseconds per frame the UI thread waited for a core (`RunQueueWait`), from the scroll step
        /// to the return of `runFrame` (so `afterRecordMs` included); absent where the kernel does not say.
        var runQueueWaitMs: Distribution?
        /// Milliseconds per frame after the host's record ends (present returned) until `runFrame`
        /// returns: releasing the worker wake-ups held during the frame.
        var afterRecordMs: Distribution
        var framesOverBudget: Int
        var checkerboardPercent: Double
        /// Mean draw calls and texture binds per frame (`FrameStatistics`).
        var drawCallsPerFrame: Double
        var textureBindsPerFrame: Double
        var uploads: Int
        var uploadBytes: Int
        var rendersCompleted: Int
        var rendersCancelled: Int
        var peakTextureBytes: Int
        var peakBitmapBytes: Int
        var peakRSSBytes: Int
        /// Mean milliseconds per frame of each of the host's phases (`FlingBenchmark.phaseNames`).
        var phaseMeansMs: [String: Double]

        init(_ m: FlingBenchmark.Measurement) {
            mainThreadMs = Distribution(m.frameMilliseconds)
            cpuMs = Distribution(m.cpuMilliseconds)
            interferenceMs = Distribution(m.interferenceMilliseconds)
            runQueueWaitMs = m.runQueueWaitMilliseconds.isEmpty ? nil : Distribution(m.runQueueWaitMilliseconds)
            afterRecordMs = Distribution(m.afterRecordMilliseconds)
            framesOverBudget = m.framesOverBudget
            checkerboardPercent = m.checkerboardPercent
            drawCallsPerFrame = Self.mean(m.drawCalls)
            textureBindsPerFrame = Self.mean(m.textureBinds)
            uploads = m.uploadCount
            uploadBytes = m.uploadBytes
            rendersCompleted = m.rendersCompleted
            rendersCancelled = m.rendersCancelled
            peakTextureBytes = m.peakTextureBytes
            peakBitmapBytes = m.peakBitmapBytes
            peakRSSBytes = m.peakRSSBytes
            let frames = Double(max(1, m.frameMilliseconds.count))
            phaseMeansMs = Dictionary(uniqueKeysWithValues: zip(FlingBenchmark.phaseNames, m.phaseTotals.map { $0 / frames }))
        }

        /// Each figure the median of the runs' (`runs` not empty).
        init(medianOf runs: [ModeFigures]) {
            func median(_ figure: (ModeFigures) -> Double) -> Double { runs.map(figure).median() }
            // A nearest-rank median is one of the values: whole counts stay whole.
            func median(_ figure: (ModeFigures) -> Int) -> Int { Int(runs.map { Double(figure($0)) }.median()) }
            mainThreadMs = .medians(runs.map(\.mainThreadMs))
            cpuMs = .medians(runs.map(\.cpuMs))
            interferenceMs = .medians(runs.map(\.interferenceMs))
            let waits = runs.compactMap(\.runQueueWaitMs)
            runQueueWaitMs = waits.isEmpty ? nil : .medians(waits)
            afterRecordMs = .medians(runs.map(\.afterRecordMs))
            framesOverBudget = median { $0.framesOverBudget }
            checkerboardPercent = median { $0.checkerboardPercent }
            drawCallsPerFrame = median { $0.drawCallsPerFrame }
            textureBindsPerFrame = median { $0.textureBindsPerFrame }
            uploads = median { $0.uploads }
            uploadBytes = median { $0.uploadBytes }
            rendersCompleted = median { $0.rendersCompleted }
            rendersCancelled = median { $0.rendersCancelled }
            peakTextureBytes = median { $0.peakTextureBytes }
            peakBitmapBytes = median { $0.peakBitmapBytes }
            peakRSSBytes = median { $0.peakRSSBytes }
            phaseMeansMs = Dictionary(uniqueKeysWithValues: FlingBenchmark.phaseNames.map { name in
                (name, runs.map { $0.phaseMeansMs[name] ?? 0 }.median())
            })
        }

        private static func mean(_ values: [Double]) -> Double {
            values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
        }
    }

    /// A value per mode; a mode that did not run is absent.
    struct PerMode<Value: Codable & Equatable>: Codable, Equatable {
        var floor: Value?
        var async: Value?
        var sync: Value?

        init() {}

        subscript(mode: FlingBenchmark.Mode) -> Value? {
            get {
                switch mode {
                case .floor: floor
                case .async: async
                case .sync: sync
                }
            }
            set {
                switch mode {
                case .floor: floor = newValue
                case .async: async = newValue
                case .sync: sync = newValue
                }
            }
        }
    }

    /// One ratio of two modes' figures, run by run.
    struct Ratio: Codable, Equatable {
        /// Which way the ratio gets worse for the runtime.
        enum Direction: String, Codable {
            case higher, lower
        }
        /// Each run's ratio, in run order (runs where the divisor was 0 are left out).
        var runs: [Double]
        var median: Double
        /// The run least favourable to the runtime: the highest ratio when `worseWhen` is `higher`,
        /// the lowest when it is `lower`.
        var worst: Double
        var worseWhen: Direction

        /// The ratio `numerator / denominator` of `figure` in each run that has both modes; nil when
        /// no run does.
        init?(_ runs: [PerMode<ModeFigures>], _ numerator: FlingBenchmark.Mode, over denominator: FlingBenchmark.Mode,
              of figure: (ModeFigures) -> Double, worseWhen: Direction) {
            let values = runs.compactMap { run -> Double? in
                guard let a = run[numerator].map(figure), let b = run[denominator].map(figure), b > 0 else { return nil }
                let ratio = a / b
                return ratio.isFinite ? ratio : nil
            }
            guard !values.isEmpty else { return nil }
            let percentiles = Percentiles(values)
            self.runs = values
            median = percentiles.median
            worst = worseWhen == .higher ? percentiles.maximum : percentiles.minimum
            self.worseWhen = worseWhen
        }
    }

    struct Ratios: Codable, Equatable {
        /// What the async mode's slowest frames cost over the least a frame can cost.
        var asyncOverFloorP99: Ratio?
        var asyncOverFloorP50: Ratio?
        /// The same of the UI thread's CPU time per frame: the runtime's own work, without the time
        /// the machine took the core away (which a wall-time p99 of 600 frames is very open to).
        var asyncOverFloorCPUP99: Ratio?
        /// What drawing on the UI thread costs over the async mode.
        var syncOverAsyncP99: Ratio?
        var syncOverAsyncP50: Ratio?
    }

    struct Viewport: Codable, Equatable {
        var width: Int
        var height: Int
    }

    var scenario = "fling"
    /// What scrolled: `list`, `grid` or `horizontal` (`--layout`).
    var layout = FlingBenchmark.Arrangement.list
    var rows: Int
    var frames: Int
    var speedPointsPerSecond: Double
    var viewport: Viewport
    /// SDL's names for the renderer and the video driver the frames went through.
    var renderer: String
    var videoDriver: String
    /// The OpenGL device (`GL_RENDERER`); absent for the software renderer.
    var graphicsDevice: String?
    var workers: Int
    var cores: Int
    /// How many times each mode ran.
    var runs: Int
    /// The order the modes ran in, run by run (interleaved, rotated a step each run).
    var modeOrder: [[FlingBenchmark.Mode]]
    /// Each mode's figures, each the median over the runs.
    var modes: PerMode<ModeFigures>
    var ratios: Ratios
    /// Each run's figures.
    var perRun: [PerMode<ModeFigures>]

    /// The report of `runs`: each a run's measurements, in the order its modes ran.
    init(rows: Int, frames: Int, speed: Double, renderer: String, videoDriver: String, graphicsDevice: String? = nil,
         workers: Int, runs: [[FlingBenchmark.Measurement]], layout: FlingBenchmark.Arrangement = .list) {
        self.layout = layout
        self.rows = rows
        self.frames = frames
        speedPointsPerSecond = speed
        viewport = Viewport(width: Int(FlingBenchmark.viewport.width), height: Int(FlingBenchmark.viewport.height))
        self.renderer = renderer
        self.videoDriver = videoDriver
        self.graphicsDevice = graphicsDevice
        self.workers = workers
        cores = ProcessInfo.processInfo.activeProcessorCount
        self.runs = runs.count
        modeOrder = runs.map { $0.map(\.mode) }
        perRun = runs.map { run in
            var figures = PerMode<ModeFigures>()
            for measurement in run { figures[measurement.mode] = ModeFigures(measurement) }
            return figures
        }
        modes = PerMode()
        for mode in FlingBenchmark.Mode.allCases {
            let figures = perRun.compactMap { $0[mode] }
            if !figures.isEmpty { modes[mode] = ModeFigures(medianOf: figures) }
        }
        ratios = Ratios(
            asyncOverFloorP99: Ratio(perRun, .async, over: .floor, of: \.mainThreadMs.p99, worseWhen: .higher),
            asyncOverFloorP50: Ratio(perRun, .async, over: .floor, of: \.mainThreadMs.p50, worseWhen: .higher),
            asyncOverFloorCPUP99: Ratio(perRun, .async, over: .floor, of: \.cpuMs.p99, worseWhen: .higher),
            syncOverAsyncP99: Ratio(perRun, .sync, over: .async, of: \.mainThreadMs.p99, worseWhen: .lower),
            syncOverAsyncP50: Ratio(perRun, .sync, over: .async, of: \.mainThreadMs.p50, worseWhen: .lower))
    }

    /// The report as JSON: keys sorted, indented.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    // MARK: The table

    /// The report as the benchmark prints it.
    var table: String {
        let what = layout == .list ? "rows" : layout == .grid ? "rows in a \(FlingBenchmark.gridColumns)-column grid"
            : "rows in a horizontal collection (\(FlingBenchmark.horizontalRows) across)"
        var lines = [String(format: "fling benchmark: %d \(what), %d frames at %.0f px/s, %d×%d, ", rows, frames, speedPointsPerSecond,
                            viewport.width, viewport.height)
                     + "renderer \(renderer), video driver \(videoDriver)" + (graphicsDevice.map { ", device \($0)" } ?? "")
                     + ", \(workers) workers, \(cores) cores; \(runs) run\(runs == 1 ? "" : "s") of "
                     + (modeOrder.first ?? []).map(\.rawValue).joined(separator: ", ") + (runs > 1 ? " interleaved" : "")]
        let shown = FlingBenchmark.Mode.allCases.filter { modes[$0] != nil }
        let medians = runs > 1 ? "medians over the runs; " : ""
        lines.append("UI thread, ms per frame, scroll step to present returned (\(medians)cpu: its CPU time; intf: wall − CPU, "
                     + "the time it did not run)")
        lines.append("  rq: time it waited for a core, up to runFrame's return; after: from present returned to runFrame's "
                     + "return, where the workers' wake-ups held during the frame are released")
        lines.append("mode       p50     p95     p99     max  >16.7   cpu p50 cpu p99  intf p50 intf p99 intf max   rq p99  rq max  after p99")
        for mode in shown {
            guard let m = modes[mode] else { continue }
            let waits = m.runQueueWaitMs.map { String(format: "  %7.2f %7.2f", $0.p99, $0.max) } ?? "        –       –"
            lines.append(mode.rawValue.padded(to: 6) + String(format: " %7.2f %7.2f %7.2f %7.2f %6d   %7.2f %7.2f   %7.2f %7.2f %7.2f",
                                m.mainThreadMs.p50, m.mainThreadMs.p95, m.mainThreadMs.p99,
                                m.mainThreadMs.max, m.framesOverBudget, m.cpuMs.p50, m.cpuMs.p99,
                                m.interferenceMs.p50, m.interferenceMs.p99, m.interferenceMs.max) + waits
                         + String(format: "  %7.2f", m.afterRecordMs.p99))
        }
        lines.append("mode   checkerbd draws/f binds/f uploads  upl MB  renders ok/cancel  tex MB  bmp MB  rss MB")
        for mode in shown {
            guard let m = modes[mode] else { continue }
            lines.append(mode.rawValue.padded(to: 6) + String(format: " %8.3f%% %7.1f %7.1f %7d %7.1f %8d/%-8d %7.1f %7.1f %7.1f",
                                m.checkerboardPercent, m.drawCallsPerFrame,
                                m.textureBindsPerFrame, m.uploads, Double(m.uploadBytes) / 1_048_576,
                                m.rendersCompleted, m.rendersCancelled, Double(m.peakTextureBytes) / 1_048_576,
                                Double(m.peakBitmapBytes) / 1_048_576, Double(m.peakRSSBytes) / 1_048_576))
        }
        if runs > 1 {
            for mode in shown {
                let p99s = perRun.compactMap { $0[mode]?.mainThreadMs.p99 }
                let intf = perRun.compactMap { $0[mode]?.interferenceMs.p99 }
                lines.append("  \(mode.rawValue) p99 by run: " + p99s.map { String(format: "%.2f", $0) }.joined(separator: " ")
                             + "; interference p99 by run: " + intf.map { String(format: "%.2f", $0) }.joined(separator: " "))
            }
        }
        let ratioRows: [(String, Ratio?)] = [("async / floor p99", ratios.asyncOverFloorP99),
                                             ("async / floor p50", ratios.asyncOverFloorP50),
                                             ("async / floor cpu p99", ratios.asyncOverFloorCPUP99),
                                             ("sync / async p99", ratios.syncOverAsyncP99),
                                             ("sync / async p50", ratios.syncOverAsyncP50)]
        if ratioRows.contains(where: { $0.1 != nil }) {
            lines.append("ratio                  median   worst   (worse when)  by run")
            for case let (name, ratio?) in ratioRows {
                lines.append(name.padded(to: 21) + String(format: " %7.2f× %6.2f×   ", ratio.median, ratio.worst)
                             + "(\(ratio.worseWhen.rawValue))".padded(to: 13) + ratio.runs.map { String(format: "%.2f", $0) }.joined(separator: " "))
            }
        }
        for mode in shown {
            guard let m = modes[mode] else { continue }
            lines.append("  \(mode.rawValue) mean by phase: "
                         + FlingBenchmark.phaseNames.map { String(format: "%@ %.3f", $0 as NSString, m.phaseMeansMs[$0] ?? 0) }
                            .joined(separator: ", "))
        }
        lines += targetLines
        return lines.joined(separator: "\n")
    }

    /// The figures the runtime aims at, each with its value here and whether it was met. Targets, not
    /// tests: the machine's noise moves them.
    var targetLines: [String] {
        var lines: [String] = []
        func verdict(_ met: Bool) -> String { met ? "met" : "missed" }
        if let ratio = ratios.asyncOverFloorP99 {
            let limit = renderer == "software" ? 1.2 : 1.3
            lines.append(String(format: "  async / floor p99 median ≤ %.1f: %.2f, %@; every run ≤ 1.5: worst %.2f, %@",
                                limit, ratio.median, verdict(ratio.median <= limit) as NSString,
                                ratio.worst, verdict(ratio.worst <= 1.5) as NSString)
                         + (ratios.asyncOverFloorCPUP99.map { String(format: " (of CPU time: median %.2f, worst %.2f)", $0.median, $0.worst) } ?? ""))
        }
        if let async = modes.async {
            let worstRun = perRun.compactMap { $0.async?.framesOverBudget }.max() ?? 0
            lines.append(String(format: "  async frames over budget 0 in every run: most %d, %@; interference p99 ≤ 0.5 ms: %.2f, %@",
                                worstRun, verdict(worstRun == 0) as NSString,
                                async.interferenceMs.p99, verdict(async.interferenceMs.p99 <= 0.5) as NSString))
        }
        if let ratio = ratios.syncOverAsyncP99 {
            lines.append(String(format: "  sync / async p99 median ≥ 8: %.2f, %@", ratio.median, verdict(ratio.median >= 8) as NSString))
        }
        return lines.isEmpty ? [] : ["targets:"] + lines
    }

    /// The slowest frames of each mode over every run, with their phases (for the table: the JSON
    /// keeps only the percentiles).
    static func slowFrameLines(_ runs: [[FlingBenchmark.Measurement]], count: Int = 3) -> [String] {
        var lines: [String] = []
        for mode in FlingBenchmark.Mode.allCases {
            let slowest = runs.flatMap { $0.filter { $0.mode == mode }.flatMap(\.slowestFrames) }
                .sorted { $0.milliseconds > $1.milliseconds }.prefix(count)
            for slow in slowest {
                lines.append(String(format: "  %@ slow frame %.2f ms: ", mode.rawValue as NSString, slow.milliseconds)
                    + zip(FlingBenchmark.phaseNames, slow.phases).map { String(format: "%@ %.2f", $0 as NSString, $1) }
                        .joined(separator: ", "))
            }
        }
        return lines
    }
}
