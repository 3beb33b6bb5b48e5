public import Compositor

/// The phases of a host frame on the UI thread, in the order they run. One list for everything that
/// reports frame time by phase (the perf overlay's chart, the benchmarks' tables and JSON keys).
/// - Thread: any (a value)
public enum FramePhase: String, CaseIterable, Sendable, Codable {
    /// Routing input events to nodes and recognizers.
    case events
    /// Draining the main queue: commits of finished draws, writes made on other threads.
    case commits
    /// Applying layouts.
    case layout
    /// Interface-state ranges, frame observers and animations.
    case ranges
    /// Capturing draw parameters and scheduling draws (drawing too, for synchronous nodes).
    case display
    /// The compositor's texture uploads.
    case upload
    /// The compositor's walk and draw calls, without the uploads made during it.
    case draw
    /// Presenting the frame.
    case present

    /// The runtime's phases, before the compositor takes over.
    public static let runtimePhases: [FramePhase] = [.events, .commits, .layout, .ranges, .display]
}

/// What one frame of the host cost, by phase, with the compositor's statistics: the record the perf
/// overlay and the benchmarks read.
/// - Thread: any (a value)
public struct FrameRecord: Sendable, Equatable {
    /// The frame clock's time of the frame, in seconds.
    public var time = 0.0
    /// Milliseconds routing input.
    public var eventsMilliseconds = 0.0
    /// Milliseconds draining the main queue (commits of finished draws, cross-thread writes).
    public var commitsMilliseconds = 0.0
    /// Milliseconds applying layouts.
    public var layoutMilliseconds = 0.0
    /// Milliseconds updating interface-state ranges and animations.
    public var rangesMilliseconds = 0.0
    /// Milliseconds capturing draw parameters and scheduling draws (drawing too, for synchronous nodes).
    public var displayMilliseconds = 0.0
    /// The compositor's part: walk, uploads, draw calls and present.
    public var compositor = FrameStatistics()
    /// Wall-clock milliseconds of `runFrame` from its start to the end of this record, once present has
    /// returned: the phases and the bookkeeping between them (all of the call but the release of the
    /// worker wake-ups it held, on its way out).
    public var wallMilliseconds = 0.0
    /// The UI thread's CPU milliseconds over the same call (`CLOCK_THREAD_CPUTIME_ID`): the frame's own
    /// work, without the time the thread waited for a core or was blocked.
    public var cpuMilliseconds = 0.0
    /// Main-queue items run this frame.
    public var mainQueueItems = 0
    /// `Runtime.accessibilityChangeCount` when the frame ran: what screen readers read as of it.
    public var accessibilityChangeCount = 0
    /// Display transactions applied this frame.
    public var commitsApplied = 0
    /// Finished transactions held for the next frame by the commit budget.
    public var commitsDeferred = 0
    /// Draws started this frame.
    public var displaysStarted = 0
    /// Jobs waiting in the scheduler at the end of the frame.
    public var schedulerQueueDepth = 0
    /// Area of the cells (list rows) on screen this frame, in square points, as the frame
    /// participants report it.
    public var visibleCellArea = 0.0
    /// The part of `visibleCellArea` shown without committed contents: the checkerboard. A cell counts
    /// as ready when every drawing node in it shows contents that are current.
    public var checkerboardArea = 0.0

    /// `checkerboardArea / visibleCellArea`; 0 when no cell was on screen.
    public var checkerboardFraction: Double { visibleCellArea > 0 ? checkerboardArea / visibleCellArea : 0 }
    /// `checkerboardFraction` in percent, as the overlay and the benchmark print it.
    public var checkerboardPercent: Double { checkerboardFraction * 100 }

    /// `wallMilliseconds − cpuMilliseconds`, at least 0: the part of the frame the UI thread did not run,
    /// its core taken by another thread or process, or waiting (a lock, the driver inside present).
    public var interferenceMilliseconds: Double { max(0, wallMilliseconds - cpuMilliseconds) }

    /// Main-thread milliseconds of the whole frame, from event handling to the return of present: the
    /// sum of the phases.
    public var totalMilliseconds: Double {
        FramePhase.allCases.reduce(0) { $0 + milliseconds(in: $1) }
    }

    /// Milliseconds the frame spent in `phase`.
    public func milliseconds(in phase: FramePhase) -> Double {
        switch phase {
        case .events: eventsMilliseconds
        case .commits: commitsMilliseconds
        case .layout: layoutMilliseconds
        case .ranges: rangesMilliseconds
        case .display: displayMilliseconds
        case .upload: compositor.uploadMilliseconds
        case .draw: max(0, compositor.drawMilliseconds - compositor.uploadMilliseconds)
        case .present: compositor.presentMilliseconds
        }
    }

    /// Milliseconds by phase, in `FramePhase.allCases` order: what the perf overlay stacks and the
    /// benchmarks total.
    public var phaseMilliseconds: [Double] { FramePhase.allCases.map(milliseconds(in:)) }

    /// Milliseconds of the runtime's own phases (`FramePhase.runtimePhases`): the frame without the
    /// compositor's part.
    public var runtimeMilliseconds: Double {
        FramePhase.runtimePhases.reduce(0) { $0 + milliseconds(in: $1) }
    }

    public init() {}
}
