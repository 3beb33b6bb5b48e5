import Tessera
import Foundation

/// `gallery --bench policies [--runs N]`: the async fling under each candidate worker policy, the
/// policies interleaved in one process on one window (run r takes them rotated by r), so every policy
/// sees the same machine. Reports per policy the medians over runs of the UI thread's frame p50/p99,
/// its interference p99 (wall − CPU), the time to release the held worker wake-ups after present, the
/// frames over budget and the checkerboard — how much each policy costs the UI thread and how much it
/// slows the drawing.
/// - Thread: main
@MainActor
struct WorkerPolicyBenchmark {
    let assets: URL
    let rows: Int
    let frames: Int
    let speed: Double
    let runs: Int
    let output: BenchmarkOutput

    /// The candidates, by name.
    static let candidates: [(name: String, policy: DisplayScheduler.WorkerPolicy)] = {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return [
            ("nice 5, all workers", .default),
            ("nice 0, all workers", .init(priority: .normal)),
            ("nice 19, all workers", .init(priority: .nice(19))),
            ("SCHED_IDLE, all workers", .init(priority: .idle)),
            ("nice 5, cores/2 active (\(max(1, cores / 2)))", .keepingACoreForTheUIThread),
        ]
    }()

    struct Row: Codable {
        var policy: String
        var frameP50: Double
        var frameP99: Double
        var interferenceP99: Double
        var afterPresentP99: Double
        var framesOverBudget: Int
        var checkerboardPercent: Double
        var drawsCompleted: Int
    }

    struct Report: Codable {
        var renderer: String
        var videoDriver: String
        var workers: Int
        var runs: Int
        var framesPerRun: Int
        var policies: [Row]
    }

    func run(progress: (String) -> Void = { _ in }) throws -> (report: Report, table: String) {
        let fixture = try FlingBenchmark.Fixture(assets: assets, rows: rows, output: output, title: "worker policies")
        defer { fixture.remove() }
        let backend = fixture.backend
        let scheduler = Runtime.shared.scheduler
        let before = scheduler.workerPolicy
        defer { scheduler.workerPolicy = before }
        let candidates = Self.candidates
        var measured = Array(repeating: [FlingBenchmark.Measurement](), count: candidates.count)
        for run in 0..<max(1, runs) {
            for step in 0..<candidates.count {
                let index = (step + run) % candidates.count
                scheduler.workerPolicy = candidates[index].policy
                measured[index].append(try fixture.run(.async, frames: frames, speed: speed))
            }
            progress("policies run \(run + 1)/\(runs) done")
        }
        let rows = candidates.indices.map { index -> Row in
            let runs = measured[index]
            func median(_ figure: (FlingBenchmark.Measurement) -> Double) -> Double { runs.map(figure).median() }
            return Row(policy: candidates[index].name,
                       frameP50: median { $0.frameMilliseconds.percentile(0.5) },
                       frameP99: median { $0.frameMilliseconds.percentile(0.99) },
                       interferenceP99: median { $0.interferenceMilliseconds.percentile(0.99) },
                       afterPresentP99: median { $0.afterRecordMilliseconds.percentile(0.99) },
                       framesOverBudget: Int(median { Double($0.framesOverBudget) }),
                       checkerboardPercent: median { $0.checkerboardPercent },
                       drawsCompleted: Int(median { Double($0.rendersCompleted) }))
        }
        let report = Report(renderer: backend.rendererName, videoDriver: backend.window.videoDriverName,
                            workers: scheduler.workerCount, runs: max(1, runs), framesPerRun: frames, policies: rows)
        var lines = ["worker policies (release build, \(backend.rendererName) renderer, \(backend.window.videoDriverName) driver, "
                     + "\(scheduler.workerCount) workers, async fling of \(self.rows) rows, \(frames) frames a run, "
                     + "medians of \(max(1, runs)) interleaved runs; ms)",
                     "  policy                               frame p50  frame p99  interference p99  after present p99  over budget  checkerboard %  draws"]
        for row in rows {
            let name = "  " + row.policy.padded(to: 36)
            lines.append(name + String(format: " %9.2f  %9.2f  %16.2f  %17.2f  %11d  %14.2f  %5d",
                                row.frameP50, row.frameP99, row.interferenceP99, row.afterPresentP99, row.framesOverBudget,
                                row.checkerboardPercent, row.drawsCompleted))
        }
        return (report, lines.joined(separator: "\n"))
    }
}
