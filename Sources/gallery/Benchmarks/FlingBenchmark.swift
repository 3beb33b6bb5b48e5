import Compositor
import Foundation
import NodeRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The fling benchmark: a chat list of `rows` rows (avatar, title, time, two-line preview) scrolled at
/// `speed` points a second for `frames` frames, 1280×800 at scale 1, measuring the UI thread's time per
/// frame and what the frames showed. One `run` is one mode once; `FlingCommand` interleaves the modes
/// and repeats them, and `FlingReport` sums the runs up.
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
/// handling) to the end of the host's frame record, once present has returned: the scroll step's wall
/// time plus `FrameRecord.wallMilliseconds`. Not in it: the pacing wait, and the release of the worker
/// wake-ups held during the frame, which `runFrame` does on its way out (`afterRecordMilliseconds`,
/// reported apart: a worker woken there can take the UI thread's core for a few milliseconds, after
/// the frame was shown). The UI thread's CPU time and the interference (wall minus CPU) are the
/// record's figures, over `runFrame` up to the same point.
/// - Thread: main
struct FlingBenchmark {
    enum Mode: String, CaseIterable, Codable, Sendable {
        case floor, async, sync
    }

    let data: FlingChatData
    let fonts: FontRegistry
    let rows: Int
    let frames: Int
    let speed: Double
    let mode: Mode

    static let viewport = Size(width: 1280, height: 800)
    static let rowHeight = 76.0
    /// The UI thread's budget at 60 Hz, in milliseconds.
    static let frameBudgetMilliseconds = 1000.0 / 60
    /// The host's frame phases, in the order `Measurement.phaseTotals` keeps them.
    static let phaseNames = FramePhase.allCases.map(\.rawValue)

    init(data: FlingChatData, fonts: FontRegistry, rows: Int, frames: Int, speed: Double, mode: Mode) {
        self.data = data
        self.fonts = fonts
        self.rows = max(1, rows)
        self.frames = max(1, frames)
        self.speed = speed.isFinite ? max(0, speed) : 3000
        self.mode = mode
    }

    /// What one mode measured in one run: a value per timed frame, and the run's totals.
    struct Measurement {
        var mode: Mode
        /// The UI thread's wall milliseconds for each timed frame (scroll step to the end of the record).
        var frameMilliseconds: [Double] = []
        /// The UI thread's CPU milliseconds in each frame's `runFrame` (`FrameRecord.cpuMilliseconds`).
        var cpuMilliseconds: [Double] = []
        /// Each frame's `FrameRecord.interferenceMilliseconds`: wall minus CPU over `runFrame`.
        var interferenceMilliseconds: [Double] = []
        /// Each frame's milliseconds of the UI thread waiting for a core (`RunQueueWait`), from the
        /// scroll step to the return of `runFrame`; empty where the kernel does not say.
        var runQueueWaitMilliseconds: [Double] = []
        /// Each frame's milliseconds from the end of the host's record (present returned) to the return
        /// of `runFrame`: releasing the worker wake-ups held during the frame.
        var afterRecordMilliseconds: [Double] = []
        /// Each frame's draw calls and texture binds (`FrameStatistics`).
        var drawCalls: [Double] = []
        var textureBinds: [Double] = []
        var framesOverBudget = 0
        var checkerboardPercent = 0.0
        var uploadCount = 0
        var uploadBytes = 0
        var rendersCompleted = 0
        var rendersCancelled = 0
        var peakTextureBytes = 0
        var peakBitmapBytes = 0
        var peakRSSBytes = 0
        /// Milliseconds per phase (`FlingBenchmark.phaseNames`), summed over the timed frames.
        var phaseTotals = Array(repeating: 0.0, count: FlingBenchmark.phaseNames.count)
        /// The slowest frames, slowest first, with their phases.
        var slowestFrames: [(milliseconds: Double, phases: [Double])] = []
    }

    // MARK: Running

    /// Runs this mode once on `backend` (a compositor and a host of its own, torn down at the end).
    func run(on backend: SDLRenderBackend) throws -> Measurement {
        let compositor = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0xEFEFF4)))
        let host = NodeHost(compositor: compositor)
        let runtime = host.runtime
        let scheduler = runtime.scheduler
        let wasSynchronous = runtime.forcesSynchronousDisplay
        runtime.forcesSynchronousDisplay = mode == .sync
        defer { runtime.forcesSynchronousDisplay = wasSynchronous }

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
        // has finished. A real window's events are drained every frame, outside the timed span.
        var time = 0.0
        func untimedFrame() {
            time += 1.0 / 60
            _ = compositor.pollEvents()
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
        var measurement = Measurement(mode: mode)
        scheduler.resetStatistics()
        let listBefore = list.statistics
        let displaysBefore = runtime.counters.snapshot.displaysStarted
        var visibleArea = 0.0, checkerboardArea = 0.0
        let clock = RealFrameClock()
        let runQueue = RunQueueWait()
        let start = time
        measurement.frameMilliseconds.reserveCapacity(frames)
        for frame in 1...frames {
            _ = compositor.pollEvents()
            let frameTime = start + Double(frame) / 60
            let waitedBefore = runQueue?.nanoseconds()
            let begin = MonotonicClock.nanoseconds()
            scroll(to: speed * Double(frame) / 60)
            let scrollMilliseconds = MonotonicClock.milliseconds(since: begin)
            let record = host.runFrame(time: frameTime, events: [])
            let untilReturn = MonotonicClock.milliseconds(since: begin)
            // The frame ends where its record does, once present has returned; the wake-ups released
            // after that are kept apart (the next frame is paced from the clock, not from here).
            let milliseconds = scrollMilliseconds + record.wallMilliseconds
            measurement.afterRecordMilliseconds.append(max(0, untilReturn - milliseconds))
            if let waitedBefore, let waitedAfter = runQueue?.nanoseconds() {
                measurement.runQueueWaitMilliseconds.append(Double(waitedAfter &- waitedBefore) / 1_000_000)
            }
            measurement.frameMilliseconds.append(milliseconds)
            measurement.cpuMilliseconds.append(record.cpuMilliseconds)
            measurement.interferenceMilliseconds.append(record.interferenceMilliseconds)
            measurement.drawCalls.append(Double(record.compositor.drawCalls))
            measurement.textureBinds.append(Double(record.compositor.textureBinds))
            if milliseconds > Self.frameBudgetMilliseconds { measurement.framesOverBudget += 1 }
            visibleArea += record.visibleCellArea
            checkerboardArea += record.checkerboardArea
            measurement.uploadCount += record.compositor.uploads
            measurement.uploadBytes += record.compositor.uploadBytes
            measurement.peakTextureBytes = max(measurement.peakTextureBytes, record.compositor.liveTextureBytes)
            measurement.peakBitmapBytes = max(measurement.peakBitmapBytes, Bitmap.liveByteCount)
            measurement.peakRSSBytes = max(measurement.peakRSSBytes, Self.residentBytes())
            let parts = record.phaseMilliseconds
            for (index, value) in parts.enumerated() { measurement.phaseTotals[index] += value }
            measurement.slowestFrames.append((milliseconds, parts))
            if measurement.slowestFrames.count > 5 {
                measurement.slowestFrames.sort { $0.milliseconds > $1.milliseconds }
                measurement.slowestFrames.removeLast()
            }
            clock.waitForNextFrame()
        }
        measurement.slowestFrames.sort { $0.milliseconds > $1.milliseconds }
        measurement.checkerboardPercent = visibleArea > 0 ? 100 * checkerboardArea / visibleArea : 0

        // Renders: draw and decode jobs on the workers (not the list's measure jobs), plus draws made
        // on the UI thread in the synchronous mode.
        let statistics = scheduler.statistics
        let listAfter = list.statistics
        let measuresCompleted = listAfter.measuresCompleted - listBefore.measuresCompleted
        let measuresCancelled = listAfter.measuresCancelled - listBefore.measuresCancelled
        measurement.rendersCompleted = max(0, statistics.completed - measuresCompleted)
        measurement.rendersCancelled = max(0, statistics.cancelledBeforeStart + statistics.cancelledWhileRunning - measuresCancelled)
        if mode == .sync { measurement.rendersCompleted += runtime.counters.snapshot.displaysStarted - displaysBefore }

        host.removeFrameParticipant(list)
        host.setRootNode(nil)
        scheduler.waitUntilIdle()
        runtime.mainQueue.drain()
        runtime.applyPendingCommits()
        return measurement
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
