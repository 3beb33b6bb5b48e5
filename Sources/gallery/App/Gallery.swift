import ArgumentParser
import Tessera
import Foundation

/// The Tessera gallery: a messaging app's screens built from image and text nodes, with a frame-timing
/// overlay, and the benchmarks that measure the runtime.
@main
struct Gallery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gallery",
        abstract: "Tessera's gallery: chats, a chat thread, photos and text, drawn in the background.",
        discussion: """
            Keys: 1–5 switch screens, Escape goes back, F2 shows the frame-timing overlay, Ctrl+Q quits.
            Without a display (or with --headless) it runs SDL's dummy video driver and writes a screenshot.
            Benchmarks draw in a window too when there is a display (through --renderer), headless otherwise.
            """)

    enum Screen: String, ExpressibleByArgument, CaseIterable {
        case chats, thread, photos, text, settings
        /// The compositor showcase: layers in each corner mode, no nodes.
        case layers
    }

    enum Benchmark: String, ExpressibleByArgument, CaseIterable {
        case fling
        case compositor
        case display
        case images
        case text
        case layout
        case rows
        case typing
        case policies
        case idle
        case stall
        case latency
        case memory
    }

    @Flag(help: "Use SDL's dummy video driver even when a display exists.")
    var headless = false

    @Option(help: ArgumentHelp(
        "SDL's renderer for the window and the benchmarks: \(RenderDriver.allCases.map(\.rawValue).joined(separator: ", ")).",
        discussion: "Sets SDL_HINT_RENDER_DRIVER; the dummy video driver (--headless) has only software."))
    var renderer: RenderDriver = .auto

    @Option(help: ArgumentHelp(
        "SDL's video driver for the window: wayland, x11 (default: Wayland where WAYLAND_DISPLAY names a compositor, else X11).",
        discussion: "Sets SDL_VIDEODRIVER, as the environment's would; --headless uses the dummy driver."))
    var videoDriver: String?

    @Option(help: "The screen to start on: \(Screen.allCases.map(\.rawValue).joined(separator: ", ")).")
    var screen: Screen = .chats

    @Option(help: "Rows in the chat list (the dataset repeats). Default: 1000; 10000 for --bench fling.")
    var rows: Int?

    @Option(help: "Output pixels per point, 1 to 4 (1.25, 1.5 and 1.75 too), overriding the desktop's scale (GDK_SCALE, Xft.dpi on X11; the output's on Wayland).")
    var scale: Double?

    @Option(help: "The window's size in points, WIDTHxHEIGHT (default 960x720).")
    var size: String?

    @Option(help: "Frames to run. Default: until the window closes; 120 when headless.")
    var frames: Int?

    @Option(help: "Write the composited frame after the last frame to this PNG file.")
    var screenshot: String?

    @Flag(help: "Draw the synchronous way, on the main thread as nodes become visible (the baseline).")
    var sync = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Composite on a thread of its own, which owns the window, its events and its renderer (default: in a window yes, headless no).",
        discussion: "With it, scrolling and animations go on while the UI thread is busy."))
    var compositorThread: Bool?

    @Flag(help: "Show the frame-timing overlay from the start.")
    var overlay = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Follow the desktop's appearance (dark, contrast, text scale, reduced motion) from the settings portal, live (default: in a window yes, headless no).",
        discussion: "TESSERA_APPEARANCE=dark,high-contrast,text-scale=1.5,reduced-motion overrides what it names either way."))
    var followAppearance: Bool?

    @Flag(help: ArgumentHelp(
        "Debugging: run every draw on one display worker, in the order requested, so a drawing bug reproduces.",
        discussion: "The same switch as TESSERA_SERIALIZE_DISPLAY=1 (DisplayScheduler.serializesAllDrawing)."))
    var serializeDisplay = false

    @Option(help: "Run a benchmark instead of the app: \(Benchmark.allCases.map(\.rawValue).joined(separator: ", ")).")
    var bench: Benchmark?

    @Option(help: "Fling speed in points per second (--bench fling).")
    var speed: Double = 3000

    @Option(help: "With --bench fling: what scrolls, \(FlingBenchmark.Arrangement.allCases.map(\.rawValue).joined(separator: ", ")) (default list).")
    var layout: FlingBenchmark.Arrangement = .list

    @Flag(help: "With --bench fling: run the floor, async and sync passes in one process.")
    var compare = false

    @Option(help: "With --bench fling: run each mode this many times, interleaved, and report medians and worst ratios.")
    var runs: Int = 1

    @Option(help: "With --bench idle: seconds each screen stays at rest (default 10); with --bench stall: seconds of flinging per mode (default 4); with --bench memory: seconds at rest before measuring (default 3).")
    var seconds: Double = 10

    @Flag(help: "With --bench idle: measure only --screen, in one window, with no caret pass (SDL 2.26 with libdecor, as on weston, crashes when a window opens after the last one closed).")
    var idleOneScreen = false

    @Option(help: "Layers in the compositor benchmark.")
    var layers: Int = 200

    @Option(help: "With --bench typing: the message's length in characters (default 2000).")
    var messageLength: Int = TypingBenchmark.defaultMessageLength

    @Option(help: "Write the benchmark's report as JSON to this file.")
    var json: String?

    @Option(help: "Folder with the gallery's photos and data (default: Assets in the current directory or the checkout).")
    var assets: String?

    @Flag(help: ArgumentHelp(
        "Serve the assets folder over HTTP on 127.0.0.1 (a port the system assigns) and load the chat avatars and a thread's older messages from it.",
        discussion: "Prints the address. GET /<path> answers a file under the assets folder; GET /messages?chat=ID&before=MESSAGE_ID&count=N a page of a chat's messages as JSON."))
    var serveAssets = false

    @Option(help: ArgumentHelp(
        "Load the chat avatars and a thread's older messages from an asset server at this URL (http:// or https://) instead of the files.",
        discussion: "The server answers as --serve-assets does: GET /<path> and GET /messages?chat=ID&before=MESSAGE_ID&count=N."))
    var assetsURL: String?

    @Option(help: "A PEM file of certificate authorities to trust for HTTPS besides the system's (e.g. a test server's own).")
    var trustCertificate: String?

    @Option(help: ArgumentHelp(
        "Seconds after a message is sent until the other side answers it (a simulated incoming message).",
        discussion: "While the window does not have the focus, the answer is also posted as a desktop notification. Default: no answers."))
    var replyAfter: Double?

    @Option(help: "Open the chat at this row of the chat list in a window of its own at start (as Ctrl+Enter on a chat does).")
    var openChatWindow: Int?

    @Flag(help: "Say on standard output where the input method's caret is, and where the thread's composer is, its text and its composition, as they change (for tests driving the gallery from outside).")
    var reportTextInput = false

    @Flag(help: "Say on standard output, for each frame presented, its drawable size in pixels, the scale it was drawn at, whether it was drawn whole (or only a region) and how many layers it drew; and the window's scale as it changes (for tests driving the gallery from outside).")
    var reportPresents = false

    @Option(help: ArgumentHelp(
        "Append the memory report, split by owner, to this file as a line of JSON each time the gallery receives SIGUSR1.",
        discussion: "Nothing is measured until a signal comes (for long runs such as Tools/soak.py)."))
    var memoryLog: String?

    /// How the display workers share the machine with the UI thread.
    enum WorkerPolicyChoice: String, ExpressibleByArgument, CaseIterable {
        /// At most cores / 2 workers active, nice 5 (the default).
        case keepCore = "keep-core"
        /// Every worker, nice 5.
        case all
        /// Every worker, SCHED_IDLE.
        case idle

        var policy: DisplayScheduler.WorkerPolicy {
            switch self {
            case .keepCore: return .keepingACoreForTheUIThread
            case .all: return .default
            case .idle: return .init(priority: .idle)
            }
        }
    }

    @Option(help: "How display workers share the machine: keep-core (at most cores/2 active, nice 5; the default), all (every worker, nice 5), idle (SCHED_IDLE).")
    var workerPolicy: WorkerPolicyChoice = .keepCore

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1 (got \(frames))") }
        if let scale, !(scale.isFinite && (1...4).contains(scale)) {
            throw ValidationError("--scale must be in 1...4 (got \(scale))")
        }
        if let rows, !(1...1_000_000).contains(rows) { throw ValidationError("--rows must be in 1...1000000 (got \(rows))") }
        guard layers >= 1 && layers <= 10_000 else { throw ValidationError("--layers must be in 1...10000 (got \(layers))") }
        guard (10...1_000_000).contains(messageLength) else {
            throw ValidationError("--message-length must be in 10...1000000 (got \(messageLength))")
        }
        if messageLength != TypingBenchmark.defaultMessageLength && bench != .typing {
            throw ValidationError("--message-length goes with --bench typing")
        }
        guard speed.isFinite && speed > 0 && speed <= 100_000 else {
            throw ValidationError("--speed must be in (0, 100000] points per second (got \(speed))")
        }
        if compare && bench != .fling { throw ValidationError("--compare goes with --bench fling") }
        if layout != .list && bench != .fling { throw ValidationError("--layout goes with --bench fling") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be in 1...50 (got \(runs))") }
        if runs != 1 && bench != .fling && bench != .policies { throw ValidationError("--runs goes with --bench fling or policies") }
        guard seconds.isFinite && seconds > 0 && seconds <= 3600 else {
            throw ValidationError("--seconds must be in (0, 3600] (got \(seconds))")
        }
        if serveAssets && (bench != nil || screen == .layers) {
            throw ValidationError("--serve-assets goes with the app's screens, not with --bench or --screen layers")
        }
        if let assetsURL {
            if serveAssets { throw ValidationError("--assets-url and --serve-assets: one source of assets at a time") }
            if bench != nil || screen == .layers {
                throw ValidationError("--assets-url goes with the app's screens, not with --bench or --screen layers")
            }
            guard let url = URL(string: assetsURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host?.isEmpty == false else {
                throw ValidationError("--assets-url must be an http:// or https:// URL with a host (got \(assetsURL))")
            }
        }
        if memoryLog != nil && (bench != nil || screen == .layers) {
            throw ValidationError("--memory-log goes with the app's screens, not with --bench or --screen layers")
        }
        if let trustCertificate {
            guard let text = try? String(contentsOfFile: trustCertificate, encoding: .utf8),
                  text.contains("-----BEGIN CERTIFICATE-----") else {
                throw ValidationError("--trust-certificate must name a readable PEM file of certificates (got \(trustCertificate))")
            }
        }
        if let size, Self.parseSize(size) == nil {
            throw ValidationError("--size must be WIDTHxHEIGHT in points, each 200...4096 (got \(size))")
        }
    }

    /// "960x720" as a size in points; nil unless both sides are whole numbers in 200...4096.
    static func parseSize(_ text: String) -> Size? {
        let sides = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard sides.count == 2, sides.allSatisfy({ (200...4096).contains($0) }) else { return nil }
        return Size(width: Double(sides[0]), height: Double(sides[1]))
    }

    /// ArgumentParser calls this on the process's main thread, which is the main actor's.
    func run() throws {
        try MainActor.assumeIsolated { try runOnUIThread() }
    }

    @MainActor
    private func runOnUIThread() throws {
        applyDebugSwitches()
        // The user's driver, as SDL_VIDEODRIVER in the environment would name it (it wins over Tessera's choice).
        if let videoDriver, !headless { setenv("SDL_VIDEODRIVER", videoDriver, 1) }
        let assetsFolder = try AssetLocator.locate(explicit: assets)
        let runHeadless = headless || !Application.Configuration.displayIsAvailable
        if runHeadless && !headless {
            print("gallery: no display found (DISPLAY is unset); running headless with SDL's dummy video driver")
        }
        if let bench {
            try runBenchmark(bench, assets: assetsFolder, output: BenchmarkOutput(headless: runHeadless, renderDriver: renderer))
            return
        }
        let output = screenshot ?? (runHeadless ? "gallery-output/\(screen.rawValue).png" : nil)
        let frameCount = frames ?? (runHeadless ? 120 : nil)
        if screen == .layers {
            try ShowcaseApp(assets: assetsFolder, scale: scale ?? 1, headless: runHeadless, renderDriver: renderer,
                            frames: frameCount, screenshot: output).run()
            return
        }
        var options = GalleryOptions()
        options.screen = GalleryOptions.Screen(rawValue: screen.rawValue) ?? .chats
        options.rows = rows ?? 1000
        options.scale = scale
        if let size, let parsed = Self.parseSize(size) { options.size = parsed }
        options.frames = frameCount
        options.screenshot = output
        options.synchronous = sync
        options.headless = runHeadless
        options.renderDriver = renderer
        options.showsOverlay = overlay
        options.compositorThread = compositorThread
        options.followsAppearance = followAppearance
        options.servesAssets = serveAssets
        options.assetsURL = assetsURL.flatMap { URL(string: $0) }
        options.trustedCertificates = trustCertificate.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }.map { [$0] } ?? []
        options.replyDelay = replyAfter
        options.chatWindowRow = openChatWindow
        options.reportsTextInput = reportTextInput
        options.reportsPresents = reportPresents
        options.memoryLog = memoryLog
        do {
            try GalleryApp.make(options: options, assets: assetsFolder).run()
        } catch let error as ChatData.LoadError {
            throw ValidationError(error.description)
        }
    }

    /// Turns on the runtime's debugging switches that were asked for. Never turns one off, so the
    /// runtime's own environment variables still hold.
    func applyDebugSwitches() {
        Runtime.shared.scheduler.workerPolicy = workerPolicy.policy
        if serializeDisplay { Runtime.shared.scheduler.serializesAllDrawing = true }
    }

    /// Writes a benchmark's report to the `--json` file, when one was given.
    private func writeJSON(_ report: some Encodable) throws {
        guard let json else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: json))
    }

    @MainActor
    private func runBenchmark(_ bench: Benchmark, assets assetsFolder: URL, output: BenchmarkOutput) throws {
        switch bench {
        case .fling:
            let result = try FlingCommand(assets: assetsFolder, rows: rows ?? 10_000, frames: frames ?? 600, speed: speed,
                                          compare: compare, runs: runs, output: output, arrangement: layout)
                .run { line in
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            print(result.table)
            if let json { try result.report.json().write(to: URL(fileURLWithPath: json)) }
        case .policies:
            let result = try WorkerPolicyBenchmark(assets: assetsFolder, rows: rows ?? 10_000, frames: frames ?? 600,
                                                   speed: speed, runs: runs, output: output)
                .run { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
            print(result.table)
            try writeJSON(result.report)
        case .compositor:
            let report = try CompositorBenchmark(layerCount: layers, frames: frames ?? 300, assets: assetsFolder,
                                                 output: output).run()
            print(report.table)
            if let json { try report.json().write(to: URL(fileURLWithPath: json)) }
        case .display:
            print(try DisplayBenchmark(assets: assetsFolder, frames: frames ?? 600, output: output).run().table)
        case .images:
            print(try ImageBenchmark(assets: assetsFolder, repetitions: frames ?? 9).run())
        case .text:
            print(try TextBenchmark(assets: assetsFolder, runs: frames ?? 3_000).run())
        case .rows:
            print(try RowDrawBenchmark(assets: assetsFolder, rounds: frames ?? 40).run())
        case .layout:
            print(LayoutBenchmark(cellCount: 10_000, rounds: frames ?? 5).run().table)
        case .idle:
            let only = idleOneScreen ? GalleryOptions.Screen(rawValue: screen.rawValue) : nil
            if idleOneScreen && only == nil { throw ValidationError("--idle-one-screen measures one of the app's screens") }
            let result = try IdleBenchmark(assets: assetsFolder, seconds: seconds, output: output, onlyScreen: only)
                .run { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
            print(result.table)
            try writeJSON(result.report)
        case .memory:
            guard let memoryScreen = GalleryOptions.Screen(rawValue: screen.rawValue), screen != .layers else {
                throw ValidationError("--bench memory measures one of the app's screens, not --screen layers")
            }
            let result = try MemoryBenchmark(assets: assetsFolder, screen: memoryScreen, seconds: seconds == 10 ? 3 : seconds,
                                             output: output).run()
            print(result.table)
            try writeJSON(result.report)
        case .stall:
            let result = try StallBenchmark(assets: assetsFolder, seconds: seconds == 10 ? 4 : seconds, output: output)
                .run { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
            print(result.table)
            try writeJSON(result.report)
        case .latency:
            let result = try LatencyBenchmark(assets: assetsFolder, inputs: frames ?? 100, output: output)
                .run { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
            print(result.table)
            try writeJSON(result.report)
        case .typing:
            print(try TypingBenchmark(assets: assetsFolder, keystrokes: frames ?? 300, messageLength: messageLength,
                                      output: output).run())
        }
    }
}

/// Finds the `Assets` folder (photos and the chat dataset): the one given with `--assets`, else in
/// the current directory, beside the executable or up to three folders above it (so a binary in
/// `.build/<triple>/<configuration>` finds the checkout's), else the checkout this file was compiled
/// from (so a binary copied out of the build tree still runs on the machine that built it).
///
/// The photos and the dataset stay a folder of the repository rather than becoming resources of the
/// gallery target: the tests of every target, the image fuzzer and the benchmarks read the same
/// files, and as the gallery's resources they would still be reached through the gallery's folder.
/// The runtime's own fonts are its resources (see `BundledFonts`), because every app needs them.
enum AssetLocator {
    struct Missing: Error, CustomStringConvertible {
        let tried: [String]
        var description: String { "gallery: cannot find the Assets folder (tried \(tried.joined(separator: ", ")))" }
    }

    /// The folders tried, in order, when none is given.
    static func candidates() -> [URL] {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Assets")]
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(folder.appendingPathComponent("Assets"))
            folder = folder.deletingLastPathComponent()
        }
        // Sources/gallery/App/Gallery.swift → the package root.
        var source = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { source = source.deletingLastPathComponent() }
        candidates.append(source.appendingPathComponent("Assets"))
        var unique: [URL] = []
        for candidate in candidates where !unique.contains(where: { $0.standardizedFileURL == candidate.standardizedFileURL }) {
            unique.append(candidate)
        }
        return unique
    }

    static func locate(explicit: String?) throws -> URL {
        let candidates = explicit.map { [URL(fileURLWithPath: $0)] } ?? Self.candidates()
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("photos").path, isDirectory: &isDirectory),
               isDirectory.boolValue {
                return candidate
            }
        }
        throw Missing(tried: candidates.map(\.path))
    }

    /// The names of the photos (JPEG and PNG files) in the `photos` folder of `assets`, sorted.
    static func photoNames(in assets: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: assets.appendingPathComponent("photos").path)
            .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()
    }
}

extension FlingBenchmark.Arrangement: ExpressibleByArgument {}
