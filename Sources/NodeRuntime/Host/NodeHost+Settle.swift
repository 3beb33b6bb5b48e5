public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// What a host still had to do after a frame. All zero (and nothing in flight) means the screen shows
/// the final state of the node tree: every node measured, every image decoded, every draw committed,
/// nothing moving.
/// - Thread: any (a value)
public struct PendingWork: Sendable, Equatable, CustomStringConvertible {
    /// Draws the frame started (a draw started is a commit still to come).
    public var drawsStarted = 0
    /// Transactions the frame committed (a commit can start layout and new draws).
    public var commitsApplied = 0
    /// Main-queue items the frame ran (results and writes from other threads).
    public var mainQueueItems = 0
    /// Transactions finished and waiting for a frame to commit them.
    public var pendingCommits = 0
    /// Jobs (draws, decodes, row measurements) waiting for a worker.
    public var queuedJobs = 0
    /// Jobs running on workers.
    public var runningJobs = 0
    /// Layer animations running.
    public var animations = 0
    /// Background layouts being measured or waiting to be applied.
    public var layoutsInFlight = 0
    /// Frame participants (lists) that are still moving or taking in rows.
    public var movingParticipants = 0
    /// Image nodes in the tree fetching by URL (their image or its natural size).
    public var imagesLoading = 0
    /// What they load (the sources of the first few), for a `SettleTimeout` to name.
    public var loadingImages: [String] = []
    /// Frames committed to a compositor thread that it has not shown yet (`Application.Window.settle`
    /// waits for them; the host's own frames never set it).
    public var framesNotShown = 0

    public init() {}

    /// The same without the fetches by URL: what the event loop looks at to know that work off this
    /// thread has finished (a fetch's result wakes it by itself; a slow server must not keep it busy).
    public var excludingNetwork: PendingWork {
        var work = self
        work.imagesLoading = 0
        work.loadingImages = []
        return work
    }

    /// True when nothing is left.
    public var isEmpty: Bool { self == PendingWork() }

    public var description: String {
        let parts: [(String, Int)] = [
            ("draws started", drawsStarted), ("commits applied", commitsApplied), ("main-queue items", mainQueueItems),
            ("commits pending", pendingCommits), ("jobs queued", queuedJobs), ("jobs running", runningJobs),
            ("animations", animations), ("layouts in flight", layoutsInFlight), ("lists moving", movingParticipants),
            ("images loading by URL", imagesLoading), ("frames not yet shown by the compositor thread", framesNotShown),
        ]
        var busy = parts.filter { $0.1 != 0 }.map { "\($0.1) \($0.0)" }
        if !loadingImages.isEmpty {
            busy.append("loading: " + loadingImages.joined(separator: ", ") + (imagesLoading > loadingImages.count ? ", …" : ""))
        }
        return busy.isEmpty ? "nothing pending" : busy.joined(separator: ", ")
    }
}

/// `NodeHost.settle(timeout:clock:)` ran out of time before the host settled.
/// - Thread: any (a value)
public struct SettleTimeout: Error, CustomStringConvertible {
    /// Frames run before giving up.
    public let frames: Int
    /// The time allowed, in seconds.
    public let timeout: Double
    /// What was still pending after the last frame.
    public let pending: PendingWork

    /// - Thread: any
    public init(frames: Int, timeout: Double, pending: PendingWork) {
        self.frames = frames
        self.timeout = timeout
        self.pending = pending
    }

    public var description: String {
        "the host did not settle within \(timeout) s (\(frames) frames); still pending: \(pending)"
    }
}

extension NodeHost {
    /// What is still to do after the most recent frame (see `PendingWork`). - Thread: main
    public var pendingWork: PendingWork {
        var work = PendingWork()
        work.drawsStarted = lastFrame.displaysStarted
        work.commitsApplied = lastFrame.commitsApplied
        work.mainQueueItems = lastFrame.mainQueueItems + runtime.mainQueue.count
        work.pendingCommits = runtime.pendingCommitCount
        work.queuedJobs = runtime.scheduler.queueDepth
        work.runningJobs = runtime.scheduler.runningCount
        work.animations = runtime.animator.count
        work.layoutsInFlight = isLayoutInFlight ? 1 : 0
        work.movingParticipants = frameParticipants.count { !$0.isSettled }
        let loading = imagesLoadingOverNetwork()
        work.imagesLoading = loading.count
        work.loadingImages = Array(loading.prefix(4))
        return work
    }

    /// The sources of the image nodes in this host's tree that are fetching by URL.
    private func imagesLoadingOverNetwork() -> [String] {
        let entries = ImageNode.networkLoads.withLock { $0 }
        guard !entries.isEmpty else { return [] }
        var names: [String] = []
        var gone: [ObjectIdentifier] = []
        for (id, entry) in entries {
            guard let node = entry.node else { gone.append(id); continue }
            if node.isLoadingOverNetwork && node.nodeHost === self { names.append(node.source?.description ?? "an image") }
        }
        if !gone.isEmpty {
            // Only entries whose node is gone: another may have taken the identifier since.
            ImageNode.networkLoads.withLock { loads in for id in gone where loads[id]?.node == nil { loads[id] = nil } }
        }
        return names.sorted()
    }

    /// Runs frames until the screen shows the final state of the tree: everything measured, fetched by
    /// URL, decoded, drawn and committed, nothing moving (`pendingWork` empty for two frames in a row). Between
    /// frames it waits for the workers, so it finishes as soon as their work allows.
    ///
    /// For app tests, screenshots and a headless run: the UI thread waits here, bounded by `timeout`.
    /// - Parameters:
    ///   - timeout: the most wall time to spend; an app that never settles (an endless animation)
    ///     throws `SettleTimeout` saying what was still pending.
    ///   - clock: the frame clock to step (a real one waits for each frame's deadline); nil steps
    ///     the frame time by 1/60 s from the last frame's, without waiting.
    /// - Returns: the frames it ran.
    /// - Thread: main
    @discardableResult
    public func settle(timeout: Double = 10, clock: FrameClock? = nil) throws -> Int {
        try settle(timeout: timeout) {
            runFrame(time: clock?.waitForNextFrame() ?? (time + 1.0 / 60), events: [])
        }
    }

    /// `settle(timeout:clock:)` with the app's own frame: `runFrame` runs one frame of this host (with
    /// whatever the app does around its frames), so observers see the frames settling runs.
    /// - Thread: main
    @discardableResult
    public func settle(timeout: Double, runFrame: () -> Void) throws -> Int {
        UIThread.precondition("NodeHost.settle")
        let limit = timeout.isFinite ? max(0, timeout) : 10
        let start = MonotonicClock.nanoseconds()
        func remaining() -> Double { limit - Double(MonotonicClock.nanoseconds() &- start) / 1e9 }
        var frames = 0
        var quietFrames = 0
        while true {
            // Workers and background layouts finish first, so the frame commits what they made.
            _ = runtime.scheduler.waitUntilIdle(timeout: max(0, remaining()))
            _ = Node.backgroundLayouts.wait(timeout: .now() + max(0, remaining()))
            runFrame()
            frames += 1
            let work = pendingWork
            quietFrames = work.isEmpty ? quietFrames + 1 : 0
            if quietFrames >= 2 { return frames }
            if remaining() <= 0 { throw SettleTimeout(frames: frames, timeout: limit, pending: work) }
            if work.excludingNetwork.isEmpty && work.imagesLoading > 0 {
                // Only fetches by URL: their results wake this thread (through the main queue).
                _ = UIWakeup.shared.wait(timeout: min(0.1, max(0, remaining())))
            }
        }
    }

    /// True once the most recent frame left nothing to do (see `pendingWork`). - Thread: main
    public var isSettled: Bool { pendingWork.isEmpty }
}
