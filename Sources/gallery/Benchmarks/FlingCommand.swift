import Tessera
import Foundation

/// `gallery --bench fling [--compare] [--runs N]`: the async mode, or the floor, async and sync modes,
/// each run `runs` times, interleaved in one process on one window, as a table and as the JSON report.
///
/// Run r (from 0) takes the modes in their order rotated by r steps (floor, async, sync; then async,
/// sync, floor; …), so no mode always runs first, after the same mode, or last; the modes of one run
/// are minutes apart at most, so a ratio taken within a run sees the same machine on both sides.
/// - Thread: main
@MainActor
struct FlingCommand {
    let assets: URL
    let rows: Int
    let frames: Int
    let speed: Double
    let compare: Bool
    let runs: Int
    let output: BenchmarkOutput
    let arrangement: FlingBenchmark.Arrangement

    init(assets: URL, rows: Int, frames: Int, speed: Double, compare: Bool, runs: Int = 1,
         output: BenchmarkOutput = BenchmarkOutput(), arrangement: FlingBenchmark.Arrangement = .list) {
        self.assets = assets
        self.rows = rows
        self.frames = frames
        self.speed = speed
        self.compare = compare
        self.runs = max(1, runs)
        self.output = output
        self.arrangement = arrangement
    }

    /// The modes of run `run` (from 0), in the order they run.
    static func modeOrder(run: Int, compare: Bool) -> [FlingBenchmark.Mode] {
        guard compare else { return [.async] }
        let modes = FlingBenchmark.Mode.allCases
        let shift = run % modes.count
        return Array(modes[shift...] + modes[..<shift])
    }

    /// Runs every mode `runs` times; `progress` gets a line after each run.
    func run(progress: (String) -> Void = { _ in }) throws -> (report: FlingReport, table: String) {
        let fixture = try FlingBenchmark.Fixture(assets: assets, rows: rows, output: output, title: "fling benchmark")
        defer { fixture.remove() }
        let backend = fixture.backend
        var measurements: [[FlingBenchmark.Measurement]] = []
        for run in 0..<runs {
            let measured = try Self.modeOrder(run: run, compare: compare).map { mode in
                try fixture.run(mode, frames: frames, speed: speed, arrangement: arrangement)
            }
            measurements.append(measured)
            progress("fling run \(run + 1)/\(runs): " + measured.map {
                String(format: "%@ p99 %.2f ms", $0.mode.rawValue as NSString, $0.frameMilliseconds.percentile(0.99))
            }.joined(separator: ", "))
        }
        let report = FlingReport(rows: rows, frames: frames, speed: speed, renderer: backend.rendererName,
                                 videoDriver: backend.window.videoDriverName, graphicsDevice: backend.graphicsDeviceName,
                                 workers: Runtime.shared.scheduler.workerCount,
                                 runs: measurements, layout: arrangement)
        let table = ([report.table] + FlingReport.slowFrameLines(measurements)).joined(separator: "\n")
        return (report, table)
    }
}
