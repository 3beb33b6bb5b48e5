import Tessera
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The fling benchmark: the app's chat list rows (`ChatRowNode`: avatar, title with marks and time,
/// two-line preview, unread badge), `rows` of them, scrolled at `speed` points a second for `frames`
/// frames, 1280×800 at scale 1, measuring the UI thread's time per frame and what the frames showed.
/// One `run` is one mode once; `FlingCommand` interleaves the modes and repeats them, and
/// `FlingReport` sums the runs up.
///
/// The scroll position follows a virtual clock (frame i is at `speed · i / 60`), so every run scrolls
/// through the same rows; frames are paced by a `RealFrameClock` at 60 Hz, so the display workers get
/// the time they would in an app. Every photo avatar is a distinct image (its own cache key), as in a
/// list of distinct people: nothing is saved by the decoded-image cache. Each row's avatar is a file
/// of its own (`DistinctAvatarFiles`: a link to its chat's photo in a temporary folder), read and
/// decoded on a worker, as avatars from an app's disk cache would be; chats without a photo show
/// their initials, as in the app.
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
@MainActor
struct FlingBenchmark {
    enum Mode: String, CaseIterable, Codable, Sendable {
        case floor, async, sync
    }

    /// What scrolls (`--layout`): the chat list; the same rows in a three-column grid (a
    /// `CollectionNode` over `GridLayout`); or a horizontal collection of them, eight rows across, each
    /// item 400 points wide, scrolled sideways.
    enum Arrangement: String, CaseIterable, Codable, Sendable {
        case list, grid, horizontal
    }

    let data: ChatData
    /// Each row's avatar file (made for at least `rows` rows).
    let avatars: DistinctAvatarFiles
    let rows: Int
    let frames: Int
    let speed: Double
    let mode: Mode
    let arrangement: Arrangement

    /// Columns of the grid, and rows across the horizontal collection.
    nonisolated static let gridColumns = 3
    nonisolated static let horizontalRows = 8
    /// The width of a horizontal collection's items.
    static let horizontalItemWidth = 400.0

    nonisolated static let viewport = Size(width: 1280, height: 800)
    /// The UI thread's budget at 60 Hz, in milliseconds.
    static let frameBudgetMilliseconds = 1000.0 / 60
    /// The host's frame phases, in the order `Measurement.phaseTotals` keeps them.
    nonisolated static let phaseNames = FramePhase.allCases.map(\.rawValue)

    init(data: ChatData, avatars: DistinctAvatarFiles, rows: Int, frames: Int, speed: Double, mode: Mode,
         arrangement: Arrangement = .list) {
        self.data = data
        self.avatars = avatars
        self.rows = max(1, rows)
        self.frames = max(1, frames)
        self.speed = speed.isFinite ? max(0, speed) : 3000
        self.mode = mode
        self.arrangement = arrangement
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
        let harness = BenchmarkHost(backend: backend, clearColor: Color(rgb: 0xEFEFF4))
        let runtime = harness.runtime
        let scheduler = harness.scheduler
        let wasSynchronous = runtime.forcesSynchronousDisplay
        runtime.forcesSynchronousDisplay = mode == .sync
        defer { runtime.forcesSynchronousDisplay = wasSynchronous }

        // A decoded-image cache of this run's own, so no run starts with another's avatars decoded.
        let configuration = ChatRowNode.Configuration(avatarFiles: .distinct(avatars), decodesAvatarInDraw: mode == .sync,
                                                      imageCache: ImageCache(budgetBytes: 8 << 20))
        let source = FlingRows(data: data, count: rows, configuration: configuration)
        // A collection scrolls through its list: the same ranges, tuning and statistics.
        let collection: CollectionNode?
        let list: ListNode
        switch arrangement {
        case .list:
            collection = nil
            list = ListNode()
        case .grid, .horizontal:
            let node = CollectionNode()
            node.collectionLayout = GridLayout(columns: .fixed(arrangement == .grid ? Self.gridColumns : Self.horizontalRows))
            node.scrollDirection = arrangement == .grid ? .vertical : .horizontal
            collection = node
            list = node.list
        }
        list.debugName = "fling"
        list.estimatedRowHeight = arrangement == .horizontal ? Self.horizontalItemWidth : ChatRowNode.height
        // The window's clear colour is the list's background.
        let viewportLength = arrangement == .horizontal ? Self.viewport.width : Self.viewport.height
        let pathLength = speed * Double(frames) / 60
        // The floor keeps every row of the path drawn, and nothing past its end: ahead, the ranges
        // reach exactly to the last screen of the path; behind, over the whole of it.
        func floorTuning(at offset: Double) -> ListRangeTuning {
            let extent = ListRangeTuning.Extent(leading: max(0, pathLength - offset) / viewportLength,
                                                trailing: pathLength / viewportLength + 1)
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
        if let collection {
            source.itemWidth = arrangement == .horizontal ? Self.horizontalItemWidth : nil
            harness.show(collection, participants: [list])
            collection.dataSource = source
        } else {
            list.dataSource = source
            harness.show(list, participants: [list])
        }

        // Warm-up, untimed: the list shows its first screen and has been nudged towards the end (a list
        // in use runs with its full ranges, leading the way the fling goes), and everything it started
        // has finished. A real window's events are drained every frame, outside the timed span.
        func settle() { harness.settle(frames: 8) }
        settle()
        scroll(to: 1)
        settle()
        if mode == .floor {
            // Draw and upload every row of the path once, then come back to the top.
            var offset = 0.0
            while offset < pathLength {
                offset = min(pathLength, offset + viewportLength / 2)
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
        measurement.frameMilliseconds.reserveCapacity(frames)
        for frame in 1...frames {
            harness.drainWindowEvents()
            let waitedBefore = runQueue?.nanoseconds()
            let begin = MonotonicClock.nanoseconds()
            scroll(to: speed * Double(frame) / 60)
            let scrollMilliseconds = MonotonicClock.milliseconds(since: begin)
            let record = harness.runFrame()
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

        harness.tearDown()
        withExtendedLifetime(source) {}  // lists and collections hold their data sources weakly
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

// MARK: - What the runs share

extension FlingBenchmark {
    /// What the runs of one command share: the dataset, an avatar file for each of `rows` rows, and
    /// the window every run draws in. `remove()` deletes the avatar files.
    /// - Thread: main
    @MainActor
    struct Fixture {
        let data: ChatData
        let avatars: DistinctAvatarFiles
        let backend: SDLRenderBackend
        let rows: Int

        /// Reads the dataset from `assets`, makes the avatar files, and opens a window of the fling's
        /// viewport titled `title` as `output` says.
        init(assets: URL, rows: Int, output: BenchmarkOutput, title: String) throws {
            data = try ChatData(assets: assets)
            avatars = try DistinctAvatarFiles(data: data, rows: rows)
            do {
                backend = try output.makeBackend(title: title, size: FlingBenchmark.viewport)
            } catch {
                avatars.remove()
                throw error
            }
            self.rows = rows
        }

        /// Runs `mode` once: `frames` frames at `speed` points a second.
        func run(_ mode: Mode, frames: Int, speed: Double, arrangement: Arrangement = .list) throws -> Measurement {
            try FlingBenchmark(data: data, avatars: avatars, rows: rows, frames: frames, speed: speed, mode: mode,
                               arrangement: arrangement).run(on: backend)
        }

        func remove() { avatars.remove() }
    }
}

// MARK: - The rows

/// The list's (or collection's) data source: row `i` shows dataset row `i` (the dataset repeats) in
/// the app's chat row, its avatar loaded as `configuration` says.
/// - Thread: main
@MainActor
final class FlingRows: ListDataSource, CollectionDataSource {
    let data: ChatData
    let count: Int
    let configuration: ChatRowNode.Configuration
    /// A collection's items are this wide (a horizontal one's); nil: as wide as their cell.
    var itemWidth: Double?

    init(data: ChatData, count: Int, configuration: ChatRowNode.Configuration) {
        self.data = data
        self.count = count
        self.configuration = configuration
    }

    func numberOfRows(in list: ListNode) -> Int { count }

    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { ChatRowNode.height }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        let model = ChatRowNode.Model(data: data, row: row, configuration: configuration)
        return { ChatRowNode(model) }
    }

    func numberOfItems(in collection: CollectionNode) -> Int { count }

    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock {
        let model = ChatRowNode.Model(data: data, row: item, configuration: configuration)
        let width = itemWidth
        return {
            let node = ChatRowNode(model)
            if let width { node.style.width = .points(width) }
            return node
        }
    }
}
