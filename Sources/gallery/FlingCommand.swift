import Foundation

/// `gallery --bench fling [--compare]`: the async pass, or the floor, async and sync passes in one
/// process, as a table and as the JSON report.
struct FlingCommand {
    let assets: URL
    let rows: Int
    let frames: Int
    let speed: Double
    let compare: Bool

    func run() throws -> (table: String, json: String) {
        let modes: [FlingBenchmark.Mode] = compare ? [.floor, .async, .sync] : [.async]
        let reports = try modes.map { try FlingBenchmark(assets: assets, rows: rows, frames: frames, speed: speed, mode: $0).run() }
        var table = FlingBenchmark.table(reports)
        let p99 = Dictionary(reports.map { ($0.mode, $0.percentile(0.99)) }, uniquingKeysWith: { a, _ in a })
        if let sync = p99[.sync], let async = p99[.async], async > 0 {
            table += String(format: "\nsync / async p99: %.2f×", sync / async)
        }
        if let async = p99[.async], let floor = p99[.floor], floor > 0 {
            table += String(format: "\nasync / floor p99: %.2f×", async / floor)
        }
        return (table, FlingBenchmark.json(reports))
    }
}
