import ArgumentParser
import Compositor
import Foundation

/// The Tessera gallery: a window (or, with no display, a headless run) showing composited layers,
/// and the compositor benchmark.
@main
struct Gallery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gallery",
        abstract: "Tessera's gallery: composited layers in a window, or headless with a screenshot.")

    enum Benchmark: String, ExpressibleByArgument, CaseIterable {
        case compositor
        case display
        case images
    }

    @Flag(help: "Use SDL's dummy video driver even when a display exists.")
    var headless = false

    @Option(help: "Frames to run. Default: until the window closes; 120 when headless.")
    var frames: Int?

    @Option(help: "Output pixels per point (1 or 2).")
    var scale: Double = 1

    @Option(help: "Write the composited frame after the last frame to this PNG file.")
    var screenshot: String?

    @Option(help: "Run a benchmark instead of the app: \(Benchmark.allCases.map(\.rawValue).joined(separator: ", ")).")
    var bench: Benchmark?

    @Option(help: "Layers in the compositor benchmark.")
    var layers: Int = 200

    @Option(help: "Write the benchmark's report as JSON to this file.")
    var json: String?

    @Option(help: "Folder with the gallery's photos and fonts.")
    var assets: String?

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1 (got \(frames))") }
        guard scale == 1 || scale == 2 else { throw ValidationError("--scale must be 1 or 2 (got \(scale))") }
        guard layers >= 1 && layers <= 10_000 else { throw ValidationError("--layers must be in 1...10000 (got \(layers))") }
    }

    func run() throws {
        let assetsFolder = try AssetLocator.locate(explicit: assets)
        let displayAvailable = ProcessInfo.processInfo.environment["DISPLAY"].map { !$0.isEmpty } == true
            || ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } == true
        let runHeadless = headless || bench != nil || !displayAvailable
        if runHeadless && !headless && bench == nil {
            print("gallery: no display found (DISPLAY is unset); running headless with SDL's dummy video driver")
        }
        if let bench {
            switch bench {
            case .compositor:
                let report = try CompositorBenchmark(layerCount: layers, frames: frames ?? 300,
                                                     assets: assetsFolder).run()
                print(report.table)
                if let json { try report.json.write(toFile: json, atomically: true, encoding: .utf8) }
            case .display:
                print(try DisplayBenchmark(assets: assetsFolder, frames: frames ?? 600).run().table)
            case .images:
                print(try ImageBenchmark(assets: assetsFolder, repetitions: frames ?? 9).run())
            }
            return
        }
        let output = screenshot ?? (runHeadless ? "gallery-output/showcase.png" : nil)
        try ShowcaseApp(assets: assetsFolder, scale: scale, headless: runHeadless,
                        frames: frames ?? (runHeadless ? 120 : nil), screenshot: output).run()
    }
}

/// Finds the `Assets` folder: the one given, else beside the current directory or the executable.
enum AssetLocator {
    struct Missing: Error, CustomStringConvertible {
        let tried: [String]
        var description: String { "gallery: cannot find the Assets folder (tried \(tried.joined(separator: ", ")))" }
    }

    static func locate(explicit: String?) throws -> URL {
        var candidates: [URL] = []
        if let explicit { candidates.append(URL(fileURLWithPath: explicit)) } else {
            candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Assets"))
            var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(folder.appendingPathComponent("Assets"))
                folder = folder.deletingLastPathComponent()
            }
        }
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("photos").path, isDirectory: &isDirectory),
               isDirectory.boolValue {
                return candidate
            }
        }
        throw Missing(tried: candidates.map(\.path))
    }
}
