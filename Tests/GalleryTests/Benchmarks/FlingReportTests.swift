import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The fling benchmark's report: medians and worst ratios over interleaved runs, the JSON that
/// `--json` writes, and the options that choose the runs and the renderer.
@MainActor
final class FlingReportTests: XCTestCase {
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.forcesSynchronousDisplay = false
        }
    }

    /// A measurement whose every frame took `milliseconds`, `interference` of it lost.
    private func measurement(_ mode: FlingBenchmark.Mode, _ milliseconds: [Double], interference: Double = 0.1) -> FlingBenchmark.Measurement {
        var m = FlingBenchmark.Measurement(mode: mode)
        m.frameMilliseconds = milliseconds
        m.cpuMilliseconds = milliseconds.map { $0 - interference }
        m.interferenceMilliseconds = milliseconds.map { _ in interference }
        m.drawCalls = milliseconds.map { _ in 24 }
        m.textureBinds = milliseconds.map { _ in 12 }
        m.framesOverBudget = milliseconds.filter { $0 > FlingBenchmark.frameBudgetMilliseconds }.count
        return m
    }

    private func assertEqual(_ values: [Double], _ expected: [Double], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(values.count, expected.count, "\(values)", file: file, line: line)
        for (value, wanted) in zip(values, expected) {
            XCTAssertEqual(value, wanted, accuracy: 1e-12, "\(values)", file: file, line: line)
        }
    }

    private func report(_ runs: [[FlingBenchmark.Measurement]]) -> FlingReport {
        FlingReport(rows: 100, frames: 10, speed: 3000, renderer: "software", videoDriver: "dummy", workers: 2, runs: runs)
    }

    func testRatiosTakeTheMedianAndTheWorstRunInTheDirectionThatHurts() async throws {
        let report = report([
            [measurement(.floor, [1, 1, 2]), measurement(.async, [1, 1, 2.2]), measurement(.sync, [3, 5, 22])],
            [measurement(.async, [1, 1, 3]), measurement(.sync, [3, 5, 36]), measurement(.floor, [1, 1, 2])],
            [measurement(.sync, [3, 5, 20]), measurement(.floor, [1, 1, 2.5]), measurement(.async, [1, 1, 2.5])],
        ])
        let asyncOverFloor = try XCTUnwrap(report.ratios.asyncOverFloorP99)
        assertEqual(asyncOverFloor.runs, [1.1, 1.5, 1.0])
        XCTAssertEqual(asyncOverFloor.median, 1.1, accuracy: 1e-12)
        XCTAssertEqual(asyncOverFloor.worst, 1.5, accuracy: 1e-12, "higher is worse: the highest run")
        XCTAssertEqual(asyncOverFloor.worseWhen, .higher)
        let syncOverAsync = try XCTUnwrap(report.ratios.syncOverAsyncP99)
        assertEqual(syncOverAsync.runs, [10, 12, 8])
        XCTAssertEqual(syncOverAsync.median, 10, accuracy: 1e-12)
        XCTAssertEqual(syncOverAsync.worst, 8, accuracy: 1e-12, "lower is worse: the lowest run")
        // Per mode, each figure is the median of the runs' figures.
        XCTAssertEqual(report.modes.async?.mainThreadMs.p99, 2.5)
        XCTAssertEqual(report.modes.sync?.mainThreadMs.p99, 22)
        XCTAssertEqual(report.modes.sync?.framesOverBudget, 1)
        XCTAssertEqual(report.modes.floor?.interferenceMs.p99 ?? 0, 0.1, accuracy: 1e-12)
        XCTAssertEqual(report.modes.floor?.drawCallsPerFrame, 24)
        XCTAssertEqual(report.modes.floor?.textureBindsPerFrame, 12)
        XCTAssertEqual(report.modeOrder, [[.floor, .async, .sync], [.async, .sync, .floor], [.sync, .floor, .async]])
        XCTAssertEqual(report.perRun.count, 3)
        XCTAssertEqual(report.perRun[1].sync?.mainThreadMs.p99, 36)

        let table = report.table
        XCTAssertTrue(table.contains("renderer software, video driver dummy"), table)
        XCTAssertTrue(table.contains("async / floor p99        1.10×   1.50×"), table)
        XCTAssertTrue(table.contains("sync / async p99        10.00×   8.00×"), table)
        // CPU time per frame is the wall time less the 0.1 ms of interference each frame had.
        let cpu = try XCTUnwrap(report.ratios.asyncOverFloorCPUP99)
        assertEqual(cpu.runs, [2.1 / 1.9, 2.9 / 1.9, 2.4 / 2.4])
    }

    func testWithoutTheOtherModesThereAreNoRatiosAndTheJSONLeavesThemOut() async throws {
        let report = report([[measurement(.async, [1, 2])]])
        XCTAssertNil(report.ratios.asyncOverFloorP99)
        XCTAssertNil(report.ratios.syncOverAsyncP99)
        XCTAssertNil(report.modes.floor)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: try report.json()) as? [String: Any])
        XCTAssertEqual((object["ratios"] as? [String: Any])?.count, 0)
        XCTAssertEqual((object["modes"] as? [String: Any]).map { Array($0.keys) }, ["async"])
        XCTAssertEqual(try JSONDecoder().decode(FlingReport.self, from: try report.json()), report)
    }

    func testEachRunRotatesTheOrderOfTheModes() async {
        XCTAssertEqual(FlingCommand.modeOrder(run: 0, compare: true), [.floor, .async, .sync])
        XCTAssertEqual(FlingCommand.modeOrder(run: 1, compare: true), [.async, .sync, .floor])
        XCTAssertEqual(FlingCommand.modeOrder(run: 2, compare: true), [.sync, .floor, .async])
        XCTAssertEqual(FlingCommand.modeOrder(run: 3, compare: true), [.floor, .async, .sync])
        XCTAssertEqual(FlingCommand.modeOrder(run: 4, compare: false), [.async])
    }

    func testRunsAndRendererOptions() async throws {
        XCTAssertEqual(try Gallery.parse(["--bench", "fling", "--runs", "5", "--renderer", "opengl"]).renderer, .opengl)
        XCTAssertEqual(try Gallery.parse([]).renderer, .auto)
        XCTAssertEqual(try Gallery.parse(["--renderer", "opengles2"]).renderer, .opengles2)
        XCTAssertThrowsError(try Gallery.parse(["--renderer", "vulkan"]))
        XCTAssertThrowsError(try Gallery.parse(["--runs", "3"]), "--runs goes with --bench fling")
        XCTAssertThrowsError(try Gallery.parse(["--bench", "fling", "--runs", "0"]))
        XCTAssertTrue(Gallery.helpMessage().contains("--renderer"))
    }

    /// The whole command, as `gallery --headless --bench fling --compare --runs 2 --json FILE` runs it,
    /// on a short fling: the file decodes, and the figures asked of it are there and finite.
    func testAShortCompareRunWritesTheJSONReport() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("fling-short.json")
        try? FileManager.default.removeItem(at: file)
        try Gallery.parse(["--headless", "--bench", "fling", "--compare", "--runs", "2", "--rows", "40", "--frames", "12",
                           "--json", file.path, "--assets", assets.path]).run()
        let data = try Data(contentsOf: file)
        let report = try JSONDecoder().decode(FlingReport.self, from: data)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])

        XCTAssertEqual(object["renderer"] as? String, "software")
        XCTAssertEqual(object["videoDriver"] as? String, "dummy")
        XCTAssertEqual(object["runs"] as? Int, 2)
        XCTAssertEqual((object["perRun"] as? [Any])?.count, 2)
        XCTAssertEqual(report.modeOrder, [[.floor, .async, .sync], [.async, .sync, .floor]])

        func number(_ path: String) -> Double? {
            var value: Any? = object
            for key in path.split(separator: ".") { value = (value as? [String: Any])?[String(key)] }
            return (value as? NSNumber)?.doubleValue
        }
        for ratio in ["asyncOverFloorP99", "asyncOverFloorP50", "asyncOverFloorCPUP99", "syncOverAsyncP99", "syncOverAsyncP50"] {
            let median = try XCTUnwrap(number("ratios.\(ratio).median"), ratio)
            let worst = try XCTUnwrap(number("ratios.\(ratio).worst"), ratio)
            XCTAssertTrue(median.isFinite && median > 0, ratio)
            XCTAssertTrue(worst.isFinite && worst > 0, ratio)
        }
        let asyncOverFloor = try XCTUnwrap(report.ratios.asyncOverFloorP99)
        XCTAssertGreaterThanOrEqual(asyncOverFloor.worst, asyncOverFloor.median)
        for (run, ratio) in asyncOverFloor.runs.enumerated() {
            let async = try XCTUnwrap(report.perRun[run].async?.mainThreadMs.p99)
            let floor = try XCTUnwrap(report.perRun[run].floor?.mainThreadMs.p99)
            XCTAssertEqual(ratio, async / floor, accuracy: 1e-9, "run \(run + 1)'s ratio is of that run's p99s")
        }
        let syncOverAsync = try XCTUnwrap(report.ratios.syncOverAsyncP99)
        XCTAssertLessThanOrEqual(syncOverAsync.worst, syncOverAsync.median)

        for mode in FlingBenchmark.Mode.allCases {
            let name = mode.rawValue
            let p50 = try XCTUnwrap(number("modes.\(name).interferenceMs.p50"), name)
            let p99 = try XCTUnwrap(number("modes.\(name).interferenceMs.p99"), name)
            XCTAssertTrue(p50.isFinite && p50 >= 0 && p99 >= p50, "\(name): \(p50), \(p99)")
            XCTAssertGreaterThan(try XCTUnwrap(number("modes.\(name).mainThreadMs.p99")), 0, name)
            XCTAssertGreaterThan(try XCTUnwrap(number("modes.\(name).cpuMs.p50")), 0, name)
            let draws = try XCTUnwrap(number("modes.\(name).drawCallsPerFrame"), name)
            let binds = try XCTUnwrap(number("modes.\(name).textureBindsPerFrame"), name)
            XCTAssertGreaterThan(binds, 0, "\(name): the rows are textures")
            XCTAssertLessThanOrEqual(binds, draws, name)
            // With two runs the nearest-rank median is the lower one.
            let p99s = report.perRun.compactMap { $0[mode]?.mainThreadMs.p99 }
            XCTAssertEqual(p99s.count, 2)
            XCTAssertEqual(report.modes[mode]?.mainThreadMs.p99, p99s.min(), name)
        }

        // Every number in the file is finite.
        func checkFinite(_ value: Any, at path: String) {
            switch value {
            case let dictionary as [String: Any]: for (key, inner) in dictionary { checkFinite(inner, at: path + "." + key) }
            case let array as [Any]: for (index, inner) in array.enumerated() { checkFinite(inner, at: path + "[\(index)]") }
            case let number as NSNumber: XCTAssertTrue(number.doubleValue.isFinite, path)
            default: break
            }
        }
        checkFinite(object, at: "report")
    }
}
