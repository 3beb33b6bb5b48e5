import Compositor
import Foundation
import NodeRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The fling benchmark: a chat list of `rows` rows (avatar, title, time, two-line preview) scrolled at
/// `speed` points a second for `frames` frames on the software renderer, 1280×800, measuring the UI
/// thread's time per frame and what the frames showed.
///
/// The scroll position follows a virtual clock (frame i is at `speed · i / 60`), so every run scrolls
/// through the same rows; frames are paced by a `RealFrameClock` at 60 Hz, so the display workers get
/// the time they would in an app. Every row's avatar is a distinct image (its own cache key), as in a
/// list of distinct people: nothing is saved by the decoded-image cache. Each row's avatar is a file
/// of its own (a link to one of the photos in a temporary folder), read and decoded on a worker, as
/// avatars from an app's disk cache would be.
///
/// Modes:
/// - `async`: the runtime as it is — rows made and measured on workers, drawn ahead of the viewport,
///   committed within the upload budget.
/// - `sync`: the way a UIKit-style app does it: a row is made, measured, decoded and drawn on the UI
///   thread when it becomes visible (`loadsRowsOnMainThread`, visible-only ranges,
///   `Runtime.forcesSynchronousDisplay`, avatars decoded inside their draw).
/// - `floor`: every row the fling passes is drawn and uploaded before timing starts, so a frame only
///   places textures: the least a frame can cost.
///
/// Main-thread time is measured from the start of the frame's work (the scroll step, then event
/// handling) to the return of present, without the pacing wait.
/// - Thread: main
struct FlingBenchmark {
    enum Mode: String, CaseIterable, Sendable {
        case floor, async, sync
    }

    let assets: URL
    let rows: Int
    let frames: Int
    let speed: Double
    let mode: Mode

    static let viewport = Size(width: 1280, height: 800)
    static let rowHeight = 76.0
    /// The UI thread's budget at 60 Hz, in milliseconds.
    static let frameBudgetMilliseconds = 1000.0 / 60

    init(assets: URL, rows: Int, frames: Int, speed: Double, mode: Mode) {
        self.assets = assets
        self.rows = max(1, rows)
        self.frames = max(1, frames)
        self.speed = speed.isFinite ? max(0, speed) : 3000
        self.mode = mode
    }

    /// One mode's results.
    struct Report {
        var mode: Mode
        var rows: Int
        var frames: Int
        var speed: Double
        var viewport: Size
        var renderer: String
        var workers: Int
        /// The UI thread's milliseconds for each timed frame.
        var frameMilliseconds: [Double] = []
        var framesOverBudget = 0
        var checkerboardPercent = 0.0
        var uploadCount = 0
        var uploadBytes = 0
        var rendersCompleted = 0
        var rendersCancelled = 0
        var peakTextureBytes = 0
        var peakBitmapBytes = 0
        var peakRSSBytes = 0
        /// Mean milliseconds per frame by phase of the host's frame (for the table, not the JSON).
        var phaseMeans: [(name: String, milliseconds: Double)] = []
        /// The UI thread's CPU milliseconds for each timed frame: the frame's own work, without the time
        /// the thread waited for a core (for the table, not the JSON).
        var frameCPUMilliseconds: [Double] = []
        /// The slowest frames' phases (for the table, not the JSON).
        var slowestFrames: [(milliseconds: Double, phases: [Double])] = []

        /// The nearest-rank percentile of the frame times.
        func percentile(_ p: Double) -> Double {
            let sorted = frameMilliseconds.sorted()
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((p * Double(sorted.count)).rounded(.up))
            return sorted[min(sorted.count - 1, max(0, rank - 1))]
        }

        /// This mode alone, in the gallery's fling report format (ratios need the other modes: null).
        var json: String { FlingBenchmark.json([self]) }

        /// One line for a table.
        var tableRow: String {
            String(format: "%-6@ %7.2f %7.2f %7.2f %7.2f %6d %9.3f%% %7d %8.1f %6d/%-6d %7.1f %7.1f %7.1f",
                   mode.rawValue as NSString, percentile(0.5), percentile(0.95), percentile(0.99),
                   frameMilliseconds.max() ?? 0, framesOverBudget, checkerboardPercent, uploadCount,
                   Double(uploadBytes) / 1_048_576, rendersCompleted, rendersCancelled,
                   Double(peakTextureBytes) / 1_048_576, Double(peakBitmapBytes) / 1_048_576, Double(peakRSSBytes) / 1_048_576)
        }

        static let tableHeader =
            "mode       p50     p95     p99     max  >16.7 checkerbd uploads   upl MB  renders ok/cancel tex MB  bmp MB  rss MB"
    }

    /// The fling report for the modes given (any of floor, async, sync), with the ratios that they
    /// allow (null otherwise), as `gallery --bench fling --json` writes it.
    static func json(_ reports: [Report]) -> String {
        guard let first = reports.first else { return "{}\n" }
        func number(_ value: Double) -> String { value.isFinite ? String(format: "%.4f", value) : "null" }
        var modes: [String] = []
        for mode in Mode.allCases {
            guard let report = reports.first(where: { $0.mode == mode }) else { continue }
            modes.append("\"\(mode.rawValue)\":{"
                + "\"mainThreadMs\":{\"p50\":\(number(report.percentile(0.5))),\"p95\":\(number(report.percentile(0.95))),"
                + "\"p99\":\(number(report.percentile(0.99))),\"max\":\(number(report.frameMilliseconds.max() ?? 0))},"
                + "\"framesOverBudget\":\(report.framesOverBudget),"
                + "\"checkerboardPercent\":\(number(report.checkerboardPercent)),"
                + "\"uploads\":{\"count\":\(report.uploadCount),\"bytes\":\(report.uploadBytes)},"
                + "\"renders\":{\"completed\":\(report.rendersCompleted),\"cancelled\":\(report.rendersCancelled)},"
                + "\"peakTextureBytes\":\(report.peakTextureBytes),\"peakBitmapBytes\":\(report.peakBitmapBytes),"
                + "\"peakRSSBytes\":\(report.peakRSSBytes)}")
        }
        func p99(_ mode: Mode) -> Double? { reports.first { $0.mode == mode }?.percentile(0.99) }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b > 0 else { return "null" }
            return number(a / b)
        }
        let renderer = first.renderer.replacingOccurrences(of: "\"", with: "'")
        return "{\"scenario\":\"fling\",\"rows\":\(first.rows),\"frames\":\(first.frames),"
            + "\"speedPxPerSec\":\(number(first.speed)),"
            + "\"viewport\":[\(Int(first.viewport.width)),\(Int(first.viewport.height))],"
            + "\"renderer\":\"\(renderer)\",\"workers\":\(first.workers),"
            + "\"modes\":{\(modes.joined(separator: ","))},"
            + "\"ratios\":{\"syncOverAsyncP99\":\(ratio(p99(.sync), p99(.async))),"
            + "\"asyncOverFloorP99\":\(ratio(p99(.async), p99(.floor)))}}\n"
    }

    /// A printable table of the modes given.
    static func table(_ reports: [Report]) -> String {
        guard let first = reports.first else { return "" }
        var lines = [String(format: "fling benchmark: %d rows, %d frames at %.0f px/s, %.0f×%.0f, renderer %@, %d workers (ms per frame, UI thread)",
                            first.rows, first.frames, first.speed, first.viewport.width, first.viewport.height,
                            first.renderer as NSString, first.workers),
                     Report.tableHeader]
        lines += reports.map(\.tableRow)
        for report in reports {
            let cpu = report.frameCPUMilliseconds.sorted()
            if !cpu.isEmpty {
                lines.append(String(format: "  %@ UI-thread CPU time per frame: p50 %.2f, p99 %.2f, max %.2f ms", report.mode.rawValue as NSString,
                                    cpu[cpu.count / 2], cpu[min(cpu.count - 1, Int(Double(cpu.count) * 0.99))], cpu.last!))
            }
            for slow in report.slowestFrames {
                lines.append(String(format: "  %@ slow frame %.2f ms: ", report.mode.rawValue as NSString, slow.milliseconds)
                    + zip(["events", "commits", "layout", "ranges", "display", "draw", "upload", "present"], slow.phases)
                        .map { String(format: "%@ %.2f", $0 as NSString, $1) }.joined(separator: ", "))
            }
            lines.append("  \(report.mode.rawValue) mean by phase: "
                + report.phaseMeans.map { String(format: "%@ %.3f", $0.name as NSString, $0.milliseconds) }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    // MARK: Running

    func run() throws -> Report {
        let data = try FlingChatData(assets: assets, rows: rows)
        defer { data.removeAvatarLinks() }
        let backend = try SDLRenderBackend(.init(title: "fling benchmark", size: Self.viewport, headless: true))
        let compositor = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0xEFEFF4)))
        let host = NodeHost(compositor: compositor)
        let runtime = host.runtime
        let scheduler = runtime.scheduler
        let wasSynchronous = runtime.forcesSynchronousDisplay
        runtime.forcesSynchronousDisplay = mode == .sync
        defer { runtime.forcesSynchronousDisplay = wasSynchronous }

        let fonts = FontRegistry(fontsFolder: assets.appendingPathComponent("fonts").path)
        let source = FlingRows(data: data, count: rows, synchronousAvatars: mode == .sync,
                               cache: ImageCache(budgetBytes: 8 << 20), fonts: fonts)
        let list = ListNode()
        list.debugName = "fling"
        list.estimatedRowHeight = Self.rowHeight  // the window's clear colour is the list's background
        let pathLength = speed * Double(frames) / 60
        // The floor keeps every row of the path drawn, and nothing past its end: ahead, the ranges
        // reach exactly to the last screen of the path; behind, over the whole of it.
        func floorTuning(at offset: Double) -> ListRangeTuning {
            let extent = ListRangeTuning.Extent(leading: max(0, pathLength - offset) / Self.viewport.height,
                                                trailing: pathLength / Self.viewport.height + 1)
            return ListRangeTuning(display: extent, preload: extent, measure: extent)
        }
        func scroll(to offset: Double) {
            if mode == .floor {
                list.fullRangeTuning = floorTuning(at: offset)
                list.minimumRangeTuning = list.fullRangeTuning
            }
            list.setContentOffset(offset, animated: false)
        }
        switch mode {
        case .async:
            break
        case .sync:
            list.loadsRowsOnMainThread = true
            list.fullRangeTuning = .visibleOnly
            list.minimumRangeTuning = .visibleOnly
        case .floor:
            list.fullRangeTuning = floorTuning(at: 0)
            list.minimumRangeTuning = list.fullRangeTuning
        }
        list.dataSource = source
        host.setRootNode(list)
        host.addFrameParticipant(list)

        // Warm-up, untimed: the list shows its first screen and has been nudged towards the end (a list
        // in use runs with its full ranges, leading the way the fling goes), and everything it started
        // has finished.
        var time = 0.0
        func untimedFrame() {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            scheduler.waitUntilIdle()
        }
        func settle() {
            for _ in 0..<8 { untimedFrame() }
        }
        settle()
        scroll(to: 1)
        settle()
        if mode == .floor {
            // Draw and upload every row of the path once, then come back to the top.
            var offset = 0.0
            while offset < pathLength {
                offset = min(pathLength, offset + Self.viewport.height / 2)
                scroll(to: offset)
                settle()
            }
            scroll(to: 0)
            settle()
            scroll(to: 1)
            settle()
        }

        // Timed.
        var report = Report(mode: mode, rows: rows, frames: frames, speed: speed, viewport: Self.viewport,
                            renderer: backend.rendererName, workers: scheduler.workerCount)
        scheduler.resetStatistics()
        let listBefore = list.statistics
        let displaysBefore = runtime.counters.snapshot.displaysStarted
        var visibleArea = 0.0, checkerboardArea = 0.0
        var phases = Array(repeating: 0.0, count: 8)
        let clock = RealFrameClock()
        let start = time
        report.frameMilliseconds.reserveCapacity(frames)
        for frame in 1...frames {
            let frameTime = start + Double(frame) / 60
            let begin = MonotonicClock.nanoseconds()
            let cpuBegin = Self.threadCPUNanoseconds()
            scroll(to: speed * Double(frame) / 60)
            let record = host.runFrame(time: frameTime, events: [])
            let milliseconds = MonotonicClock.milliseconds(since: begin)
            report.frameCPUMilliseconds.append(Double(Self.threadCPUNanoseconds() - cpuBegin) / 1_000_000)
            report.frameMilliseconds.append(milliseconds)
            if milliseconds > Self.frameBudgetMilliseconds { report.framesOverBudget += 1 }
            visibleArea += record.visibleCellArea
            checkerboardArea += record.checkerboardArea
            report.uploadCount += record.compositor.uploads
            report.uploadBytes += record.compositor.uploadBytes
            report.peakTextureBytes = max(report.peakTextureBytes, record.compositor.liveTextureBytes)
            report.peakBitmapBytes = max(report.peakBitmapBytes, Bitmap.liveByteCount)
            report.peakRSSBytes = max(report.peakRSSBytes, Self.residentBytes())
            let parts = [record.eventsMilliseconds, record.commitsMilliseconds, record.layoutMilliseconds,
                         record.rangesMilliseconds, record.displayMilliseconds,
                         record.compositor.drawMilliseconds - record.compositor.uploadMilliseconds,
                         record.compositor.uploadMilliseconds, record.compositor.presentMilliseconds]
            for (index, value) in parts.enumerated() { phases[index] += value }
            report.slowestFrames.append((milliseconds, parts))
            if report.slowestFrames.count > 5 {
                report.slowestFrames.sort { $0.milliseconds > $1.milliseconds }
                report.slowestFrames.removeLast()
            }
            clock.waitForNextFrame()
        }
        report.checkerboardPercent = visibleArea > 0 ? 100 * checkerboardArea / visibleArea : 0
        report.phaseMeans = zip(["events", "commits", "layout", "ranges", "display", "draw", "upload", "present"], phases)
            .map { ($0, $1 / Double(frames)) }

        // Renders: draw and decode jobs on the workers (not the list's measure jobs), plus draws made
        // on the UI thread in the synchronous mode.
        let statistics = scheduler.statistics
        let listAfter = list.statistics
        let measuresCompleted = listAfter.measuresCompleted - listBefore.measuresCompleted
        let measuresCancelled = listAfter.measuresCancelled - listBefore.measuresCancelled
        report.rendersCompleted = max(0, statistics.completed - measuresCompleted)
        report.rendersCancelled = max(0, statistics.cancelledBeforeStart + statistics.cancelledWhileRunning - measuresCancelled)
        if mode == .sync { report.rendersCompleted += runtime.counters.snapshot.displaysStarted - displaysBefore }

        host.removeFrameParticipant(list)
        host.setRootNode(nil)
        scheduler.waitUntilIdle()
        runtime.mainQueue.drain()
        runtime.applyPendingCommits()
        return report
    }

    /// CPU time the calling thread has used, in nanoseconds.
    static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The process's resident memory now, from /proc (0 where there is none).
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

// MARK: - The rows

/// What the benchmark takes from the chat dataset: per chat, its title, last message and avatar.
struct FlingChatData {
    struct Chat: Sendable {
        var title: String
        var preview: String
        var time: String
        /// The avatar photo's path, relative to the assets folder.
        var avatar: String
    }

    let chats: [Chat]
    /// The folder of per-row avatar links, and its path with a trailing slash.
    let avatarFolder: URL
    private let avatarPrefix: String

    private struct File: Decodable {
        struct Chat: Decodable {
            var id: Int
            var title: String
            var avatar: String?
            var group: Bool?
            var messages: [Message]
        }
        struct Message: Decodable {
            var author: String?
            var text: String
            var time: String
            var out: Bool?
        }
        var chats: [Chat]
    }

    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads the dataset and makes a link per row to that row's avatar photo, so every row's image has
    /// its own path (and cache key) while the photos stay the dataset's.
    init(assets: URL, rows: Int) throws {
        let url = assets.appendingPathComponent("data/chats.json")
        guard let json = FileManager.default.contents(atPath: url.path) else {
            throw Missing(description: "fling benchmark: cannot read \(url.path)")
        }
        let file = try JSONDecoder().decode(File.self, from: json)
        let photos = try FileManager.default.contentsOfDirectory(atPath: assets.appendingPathComponent("photos").path)
            .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()
        guard !photos.isEmpty, !file.chats.isEmpty else { throw Missing(description: "fling benchmark: no chats or photos in \(assets.path)") }
        // Every row gets a photo avatar: the chat's own, else one of the photos by the chat's id.
        let chats = file.chats.map { chat in
            let last = chat.messages.last
            var preview = last.map { $0.text.isEmpty ? "Photo" : $0.text.replacingOccurrences(of: "\n", with: " ") } ?? ""
            if chat.group == true, let last { preview = ((last.out ?? false) ? "You" : (last.author ?? "")) + ": " + preview }
            let time = last.map { String($0.time.suffix(5)) } ?? ""
            let avatar = chat.avatar ?? "photos/" + photos[abs(chat.id) % photos.count]
            return Chat(title: chat.title, preview: preview, time: time, avatar: avatar)
        }
        self.chats = chats
        avatarFolder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tessera-fling-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))")
        avatarPrefix = avatarFolder.path + "/avatar-"
        try FileManager.default.createDirectory(at: avatarFolder, withIntermediateDirectories: true)
        for row in 0..<rows {
            let target = assets.appendingPathComponent(chats[row % chats.count].avatar).path
            guard FileManager.default.fileExists(atPath: target) else {
                throw Missing(description: "fling benchmark: missing avatar \(target)")
            }
            try FileManager.default.createSymbolicLink(atPath: avatarPath(row), withDestinationPath: target)
        }
    }

    /// Row `row`'s avatar file.
    func avatarPath(_ row: Int) -> String { avatarPrefix + String(row) }

    func removeAvatarLinks() { try? FileManager.default.removeItem(at: avatarFolder) }
}

/// The list's data source: row `i` shows chat `i mod count`, with a cache key of its own for the avatar.
/// - Thread: main
final class FlingRows: ListDataSource {
    let data: FlingChatData
    let count: Int
    let synchronousAvatars: Bool
    let cache: ImageCache
    let fonts: FontRegistry

    init(data: FlingChatData, count: Int, synchronousAvatars: Bool, cache: ImageCache, fonts: FontRegistry) {
        self.data = data
        self.count = count
        self.synchronousAvatars = synchronousAvatars
        self.cache = cache
        self.fonts = fonts
    }

    func numberOfRows(in list: ListNode) -> Int { count }

    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { FlingBenchmark.rowHeight }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let model = FlingChatRow.Model(chat: data.chats[row % data.chats.count], avatarPath: data.avatarPath(row),
                                       synchronousAvatar: synchronousAvatars, cache: cache, fonts: fonts)
        return { FlingChatRow(model) }
    }
}

/// A chat row: a round avatar, the title and time on one line, two lines of preview, rasterized into
/// one opaque bitmap (as the gallery's chat rows are), which the compositor copies without blending.
final class FlingChatRow: Node {
    struct Model: Sendable {
        var chat: FlingChatData.Chat
        var avatarPath: String
        var synchronousAvatar: Bool
        var cache: ImageCache
        var fonts: FontRegistry
    }

    let avatar: Node
    let title: TextNode
    let time: TextNode
    let preview: TextNode

    init(_ model: Model) {
        if model.synchronousAvatar {
            avatar = DecodingAvatarNode(path: model.avatarPath)
        } else {
            let image = ImageNode()
            image.imageCache = model.cache
            image.source = .file(model.avatarPath)
            image.imageCornerRadii = CornerRadii(26)
            image.emptyColor = Color(rgb: 0xE4E7EC)
            image.contentsCrossFadeDuration = 0
            avatar = image
        }
        func text(_ string: String, size: Double, bold: Bool = false, color: Color) -> TextNode {
            let node = TextNode(string, attributes: TextAttributes(font: TextFont(size: size, isBold: bold), color: color))
            node.fontRegistry = model.fonts
            return node
        }
        title = text(model.chat.title, size: 15, bold: true, color: Color(rgb: 0x111418))
        title.maximumNumberOfLines = 1
        title.truncationMode = .end
        time = text(model.chat.time, size: 12, color: Color(rgb: 0x8A94A6))
        preview = text(model.chat.preview, size: 14, color: Color(rgb: 0x5F6B7A))
        preview.maximumNumberOfLines = 2
        preview.truncationMode = .end
        super.init()
        backgroundColor = .white
        shouldRasterizeDescendants = true
        for node in [avatar, title, time, preview] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(spacing: 12, alignItems: .center) {
            avatar.size(Size(width: 52, height: 52))
            VStack(spacing: 3) {
                HStack(spacing: 8, alignItems: .center) {
                    title.flexShrink(1)
                    Spacer()
                    time
                }
                preview.flexShrink(1)
            }.flexGrow(1).flexShrink(1)
        }
        .inset(EdgeInsets(top: 10, left: 12, bottom: 10, right: 12))
        .height(.points(FlingBenchmark.rowHeight))
    }
}

/// The synchronous baseline's avatar: decodes its photo inside its draw, which that mode runs on the UI
/// thread when the row becomes visible, as a table-view cell setting its image would.
final class DecodingAvatarNode: Node, NodeDrawing {
    struct DrawParameters: Sendable {
        var path: String
    }

    private let parameters: DrawParameters

    init(path: String) {
        parameters = DrawParameters(path: path)
        super.init()
    }

    func drawParameters() -> DrawParameters { parameters }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let target = (width: Int((bounds.width * info.scale).rounded(.up)), height: Int((bounds.height * info.scale).rounded(.up)))
        guard let decoded = try? ImageDecoder.decode(.file(parameters.path)),
              let shown = try? ImageDecoder.prepareForDisplay(decoded, crop: nil, mode: .aspectFill, target: target,
                                                              scale: info.scale) else {
            context.fill(bounds, color: Color(rgb: 0xE4E7EC))
            return
        }
        context.saveClip()
        context.clip(toRoundedRect: bounds, radii: CornerRadii(bounds.width / 2))
        let w = Double(shown.width) / info.scale, h = Double(shown.height) / info.scale
        context.draw(shown, in: Rect(x: bounds.midX - w / 2, y: bounds.midY - h / 2, width: w, height: h))
        context.restoreClip()
    }
}
