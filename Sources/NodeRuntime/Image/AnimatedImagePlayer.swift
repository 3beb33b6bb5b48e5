import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Where an image node's animation stands (`ImageNode.animationStatus`).
/// - Thread: any (a value)
public struct ImageAnimationStatus: Sendable, Equatable {
    /// The frame shown, by its index in the sequence (0 for the first).
    public var frameIndex: Int
    /// How many times the sequence has played through before the current play.
    public var completedPlays: Int
    /// How many times the sequence plays in all; 0 plays it for ever.
    public var playCount: Int
    /// The frames in the sequence, once the decoder has reached its end; nil before.
    public var frameCount: Int?
    /// True once the last play has reached its last frame: the node shows it from then on.
    public var isFinished: Bool
}

/// Plays an image node's animation: decodes its frames on display workers a few ahead of the one
/// shown, at the pixel size the node's still image was decoded at, and shows each on the frame clock.
///
/// - Timing: the first frame shows from the first host frame after it is decoded; each next frame is
///   due when the one before has shown for its delay, and the node shows, at each host frame, the
///   frame due at that frame's time. A virtual clock drives it exactly; a decoder that falls behind
///   catches up by passing over frames whose time is already past (composited, not rendered), at
///   most `framesPerJob` a job, and whole plays at once once the length of one play is known.
/// - Memory: the frame shown and at most `framesAhead` decoded ahead, each at display size, plus the
///   decoder's canvas: never the whole animation.
/// - Pausing: outside the visible state, with `isAnimationPaused`, or with `animatesImages` off, the
///   player cancels its decode, leaves the host's frames and asks for nothing; the frame shown stays.
///   Back in view it goes on from that frame, which shows for what was left of its delay.
/// - Failure: a frame that cannot be decoded stops the animation on the frame shown; the reason is
///   reported once (`animationStopped` in the node's diagnostics). A source that is no animation is
///   left as the still image the node shows.
/// - Thread: settings and `reset` any; frames, interface states and results main.
final class AnimatedImagePlayer: @unchecked Sendable {
    /// Frames decoded ahead of the one shown.
    static let framesAhead = 2
    /// The most frames one decode job composites, catching up or fast-forwarding, before it hands the
    /// decoder back.
    static let framesPerJob = 256

    /// A frame decoded for showing.
    struct Frame {
        var bitmap: Bitmap
        var index: Int
        var play: Int
        var delay: Double
        /// The delays of the frames passed over (their time was past) between the frame before and this.
        var skippedBefore: Double
    }

    enum Phase: Equatable {
        /// Nothing known yet about the current source (or none).
        case none
        /// The decoder is being opened and the first frame decoded.
        case opening
        case playing
        /// The source is a still image.
        case still
        /// The last play reached its last frame.
        case finished
        /// A frame could not be decoded: the frame shown stays.
        case failed
    }

    private struct State {
        var node = WeakNode?.none
        var animatesImages = true
        var isPaused = false
        /// The appearance asks for reduced motion: held like a pause.
        var holdsForReducedMotion = false
        var isVisible = false
        /// Visible, but clipped away entirely (below the fold of a scroll node, outside the window):
        /// the clock stops and no frame is asked for until a frame finds it on screen again.
        var isClipped = false
        var source: ImageSource?
        var target: ImageDecoder.Target?
        var limits = ImageDecoder.Limits()
        /// A source found to be a still image: not opened again until the source changes.
        var stillSource: ImageSource?
        var phase = Phase.none
        /// Held here between jobs; a running job holds it.
        var decoder: UncheckedSendable<AnimatedImageDecoder>?
        /// The frame the decoder stands on (play, index); nil before the first.
        var decoderAt: (play: Int, index: Int)?
        var job: DisplayJob?
        var shown: Frame?
        /// The host time the shown frame started showing at.
        var shownStart = 0.0
        var queue: [Frame] = []
        /// No frame follows the last one held.
        var sequenceEnded = false
        /// The sequence ended because a frame could not be decoded: once the frames held have
        /// shown, the animation has failed rather than finished.
        var endedInFailure = false
        var frameCount: Int?
        /// The length of one play, once a job has seen one whole.
        var playDuration: Double?
        var playCount = 1
        /// The time of the last host frame seen.
        var lastTime: Double?
        /// The time playing stopped at, while paused with a frame shown.
        var pausedAt: Double?
        var peakFramesHeld = 0

        var framesHeld: Int { (shown == nil ? 0 : 1) + queue.count }
        var runs: Bool { animatesImages && isVisible && !isPaused && !holdsForReducedMotion && target != nil }
    }

    private let state: Locked<State>
    /// Invalidates decode jobs: bumped (under the state's lock) by every reset and pause.
    private let sentinel = DisplaySentinel()
    /// The host whose frames the player takes part in. (main thread only)
    private weak var host: NodeHost?

    /// What `animatesImages` starts as in players made from now on (`ImageNode.animatesImagesByDefault`).
    static let animatesByDefault = Locked(true)

    init() {
        var initial = State()
        initial.animatesImages = Self.animatesByDefault.withLock { $0 }
        state = Locked(initial)
    }

    /// Ties the player to its node (once, from the node's initialiser).
    func attach(_ node: ImageNode) {
        state.withLock { $0.node = WeakNode(node) }
    }

    // MARK: Settings (any thread)

    var animatesImages: Bool {
        get { state.withLock { $0.animatesImages } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.animatesImages = newValue }
                return state.animatesImages != newValue
            }
            guard changed else { return }
            // Off lets the decoder and the frames ahead go; the frame shown stays.
            if !newValue { release(keepingShown: true) }
            update()
        }
    }

    var isPaused: Bool {
        get { state.withLock { $0.isPaused } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.isPaused = newValue }
                return state.isPaused != newValue
            }
            if changed { update() }
        }
    }

    /// Held on the frame shown while the appearance asks for reduced motion (as a pause is).
    var holdsForReducedMotion: Bool {
        get { state.withLock { $0.holdsForReducedMotion } }
        set {
            let changed = state.withLock { state -> Bool in
                defer { state.holdsForReducedMotion = newValue }
                return state.holdsForReducedMotion != newValue
            }
            if changed { update() }
        }
    }

    var isAnimating: Bool { state.withLock { $0.phase == .playing && $0.runs } }

    var status: ImageAnimationStatus? {
        state.withLock { state in
            guard let shown = state.shown, state.phase != .still, state.phase != .none else { return nil }
            return ImageAnimationStatus(frameIndex: shown.index, completedPlays: shown.play, playCount: state.playCount,
                                        frameCount: state.frameCount, isFinished: state.phase == .finished)
        }
    }

    /// Frames held now (the one shown and those decoded ahead), and the most held at once.
    var framesHeld: (now: Int, peak: Int) { state.withLock { ($0.framesHeld, $0.peakFramesHeld) } }

    // MARK: From the node

    /// The node's image was decoded for `target`: the animation, if the source is one, plays at that
    /// size, from its first frame (a new size starts it again). - Thread: any
    func stillImageDidLoad(source: ImageSource, target: ImageDecoder.Target, limits: ImageDecoder.Limits) {
        let same = state.withLock { $0.source == source && $0.target == target && $0.limits == limits }
        guard !same else { return }
        release(keepingShown: false)
        state.withLock { state in
            state.source = source
            state.target = target
            state.limits = limits
        }
        update()
    }

    /// Forgets the animation (the source, its size or the node's preload state changed): the decode
    /// in flight is cancelled, the decoder and every frame go. - Thread: any
    func reset() {
        release(keepingShown: false)
        state.withLock { state in
            state.source = nil
            state.target = nil
        }
        update()
    }

    /// The node entered or left the visible state. - Thread: main
    @MainActor
    func setVisible(_ visible: Bool) {
        let changed = state.withLock { state -> Bool in
            defer { state.isVisible = visible }
            return state.isVisible != visible
        }
        if changed { update() }
    }

    /// Stops everything under way: the job is cancelled and the decoder and the frames ahead are let
    /// go (outside the lock); the frame shown goes too unless `keepingShown`, and then the animation
    /// starts again from its first frame the next time it runs.
    private func release(keepingShown: Bool) {
        let (job, garbage) = state.withLock { state -> (DisplayJob?, (UncheckedSendable<AnimatedImageDecoder>?, [Frame], Frame?)) in
            sentinel.bump()
            let job = state.job
            state.job = nil
            let garbage = (state.decoder, state.queue, keepingShown ? nil : state.shown)
            state.decoder = nil
            state.decoderAt = nil
            state.queue = []
            state.sequenceEnded = false
            state.endedInFailure = false
            if !keepingShown {
                state.shown = nil
                state.pausedAt = nil
                state.frameCount = nil
                state.playDuration = nil
            } else if state.shown != nil, state.pausedAt == nil {
                state.pausedAt = state.lastTime
            }
            if !keepingShown || state.phase == .opening || state.phase == .playing { state.phase = .none }
            return (job, garbage)
        }
        job?.cancel()
        withExtendedLifetime(garbage) {}
    }

    /// Brings the player in line with its settings and state: starts the first decode, joins or
    /// leaves the host's frames, cancels decoding when it should not run. Hops to the main thread.
    private func update() {
        Runtime.shared.mainQueue.performOrEnqueue { [self] in updateOnMain() }
    }

    @MainActor
    private func updateOnMain() {
        let (runs, phase, hadJob, node) = state.withLock { state -> (Bool, Phase, Bool, ImageNode?) in
            (state.runs && state.source != nil, state.phase, state.job != nil, state.node?.node as? ImageNode)
        }
        defer {
            // Frames of an animation replace one another at once, without the contents' cross-fade.
            let animated = state.withLock { $0.shown != nil }
            if let node, node.contentsAreAnimationFrames != animated { node.contentsAreAnimationFrames = animated }
        }
        guard runs else {
            pauseDecoding()
            leaveFrames()
            return
        }
        if phase == .none { startOpening() }
        let playing = state.withLock { $0.phase == .opening || $0.phase == .playing }
        if playing {
            joinFrames()
            if phase == .playing && !hadJob { scheduleIfNeeded() }
        } else {
            leaveFrames()
        }
    }

    /// Not running: the job in flight is cancelled (its decoder goes with it) and the time stops, at
    /// the time of the host's frame under way (the node left the screen in it).
    @MainActor
    private func pauseDecoding() {
        let now = host?.time
        let job = state.withLock { state -> DisplayJob? in
            if state.shown != nil, state.pausedAt == nil, let time = now ?? state.lastTime {
                state.pausedAt = max(time, state.lastTime ?? time)
            }
            guard state.job != nil else { return nil }
            sentinel.bump()
            defer { state.job = nil }
            if state.phase == .opening { state.phase = .none }
            return state.job
        }
        job?.cancel()
    }

    @MainActor
    private func joinFrames() {
        guard let node = state.withLock({ $0.node?.node }), let host = node.nodeHost else { return }
        if let previous = self.host, previous !== host { previous.removeFrameParticipant(self) }
        self.host = host
        host.addFrameParticipant(self)
    }

    @MainActor
    private func leaveFrames() {
        host?.removeFrameParticipant(self)
        host = nil
    }

    // MARK: Decoding

    /// Opens the decoder and decodes the first frame, unless the source is known to be still.
    private func startOpening() {
        let start = state.withLock { state -> Bool in
            guard state.phase == .none, state.job == nil, let source = state.source else { return false }
            guard source != state.stillSource else {
                state.phase = .still
                return false
            }
            state.phase = .opening
            return true
        }
        if start { schedule() }
    }

    /// Schedules the next decode when fewer than `framesAhead` frames wait and the sequence goes on.
    private func scheduleIfNeeded() {
        let needed = state.withLock { state -> Bool in
            state.phase == .playing && state.runs && state.job == nil && !state.sequenceEnded
                && state.queue.count < Self.framesAhead
        }
        if needed { schedule() }
    }

    /// What a job is given: the decoder (nil to open one), where it stands, which frame comes next
    /// and how late it is.
    private struct JobInput: @unchecked Sendable {
        var decoder: AnimatedImageDecoder?
        var decoderAt: (play: Int, index: Int)?
        /// The last frame held (shown or queued); nil for the start of the animation.
        var after: (play: Int, index: Int)?
        /// How far past the next frame's due time the clock already is (≤ 0: not due yet).
        var lateness: Double
        var source: ImageSource
        var target: ImageDecoder.Target
        var limits: ImageDecoder.Limits
        var playDuration: Double?
        /// Where a `.url` source's fetched bytes are kept (the node's loader).
        var loader: NetworkImageLoader
    }

    /// What a job hands back.
    private struct JobResult: @unchecked Sendable {
        enum Outcome {
            case frame(Frame)
            /// The decoder moved on without reaching a frame to show (a long fast-forward).
            case progress
            /// The last play is over: no frame follows the last one held.
            case ended
            case still
            case failed(ImageError)
        }
        var outcome: Outcome
        var decoder: AnimatedImageDecoder?
        var decoderAt: (play: Int, index: Int)?
        /// Set when the frame handed back is the last of the last play.
        var sequenceEnded = false
        var frameCount: Int?
        var playDuration: Double?
        var playCount = 1
    }

    private func schedule() {
        let request = state.withLock { state -> (JobInput, UInt64, ImageNode?)? in
            guard state.job == nil, let source = state.source, let target = state.target else { return nil }
            let last = state.queue.last ?? state.shown
            var lateness = -Double.infinity
            if let shown = state.shown, let time = state.lastTime, state.pausedAt == nil {
                let due = state.queue.reduce(state.shownStart + shown.delay) { $0 + $1.skippedBefore + $1.delay }
                lateness = time - due
            }
            let node = state.node?.node as? ImageNode
            let input = JobInput(decoder: state.decoder?.value, decoderAt: state.decoderAt,
                                 after: last.map { ($0.play, $0.index) }, lateness: lateness, source: source,
                                 target: target, limits: state.limits, playDuration: state.playDuration,
                                 loader: .shared)
            state.decoder = nil
            state.decoderAt = nil
            return (input, self.sentinel.value, node)
        }
        guard let (claimed, token, node) = request else { return }
        // The node's loader, read outside this player's lock (it takes the node's own).
        var prepared = claimed
        if let node { prepared.loader = node.networkLoader }
        let input = prepared
        let sentinel = self.sentinel
        let mainQueue = Runtime.shared.mainQueue
        let job = Runtime.shared.scheduler.schedule(
            priority: node?.displayPriority ?? .visible,
            kind: .decode,
            isCancelled: { sentinel.value != token },
            work: { [self] isCancelled in
                guard let result = Self.run(input, isCancelled: isCancelled) else { return .cancelled }
                mainQueue.enqueue { [self] in finish(result, token: token) }
                return .completed
            })
        // A reset or pause since the claim above already bumped the sentinel: the job is dropped.
        state.withLock { state in if sentinel.value == token { state.job = job } }
    }

    /// One job: opens the decoder if it has none, moves it to the last frame held, then decodes the
    /// next frame to show, passing over (without rendering) frames whose time is already past. Nil
    /// when cancelled.
    private static func run(_ input: JobInput, isCancelled: @escaping @Sendable () -> Bool) -> JobResult? {
        var result = JobResult(outcome: .progress)
        do {
            guard let decoder = try input.decoder ?? AnimatedImageDecoder.open(input.source, limits: input.limits, loader: input.loader) else {
                result.outcome = .still
                return result
            }
            result.decoder = decoder
            result.playDuration = input.playDuration
            var at = input.decoderAt
            var composited = 0
            /// The delays since the first frame of the play, while every frame of it was seen here.
            var playDelays: Double? = at == nil ? 0 : nil
            // Stand on the last frame held: from the start again when the decoder is elsewhere.
            if let after = input.after, at.map({ $0 != after }) ?? true {
                if at.map({ $0.index > after.index || $0.play != after.play }) ?? false || decoder.frameIndex != (at?.index ?? -1) {
                    try decoder.rewind()
                    at = nil
                    playDelays = 0
                }
                while (at?.index ?? -1) < after.index {
                    if composited >= framesPerJob {
                        result.decoderAt = at
                        return result
                    }
                    switch try decoder.advance(isCancelled: isCancelled) {
                    case .frame(let delay):
                        at = (after.play, decoder.frameIndex)
                        playDelays = playDelays.map { $0 + delay }
                        composited += 1
                    case .endOfSequence:
                        throw ImageError.decodeFailed(input.source.description, reason: "the animation has fewer frames than before")
                    case .cancelled:
                        return nil
                    }
                }
            } else if input.after == nil, at != nil || decoder.frameIndex != -1 {
                try decoder.rewind()
                at = nil
                playDelays = 0
            }
            var play = at?.play ?? 0
            var skipped = 0.0
            /// The frame passed over last, rendered after all if the animation ends on it.
            var passedOver: (index: Int, delay: Double, skippedBefore: Double)?
            while true {
                if isCancelled() { return nil }
                result.playCount = decoder.playCount
                switch try decoder.advance(isCancelled: isCancelled) {
                case .cancelled:
                    return nil
                case .endOfSequence:
                    let count = decoder.frameIndex + 1
                    result.frameCount = count
                    if let total = playDelays { result.playDuration = total }
                    let plays = decoder.playCount
                    guard count > 1, plays == 0 || play + 1 < plays else {
                        result.sequenceEnded = true
                        if let last = passedOver, let bitmap = try decoder.render(for: input.target, isCancelled: isCancelled) {
                            result.outcome = .frame(Frame(bitmap: bitmap, index: last.index, play: play, delay: last.delay,
                                                          skippedBefore: last.skippedBefore))
                            result.decoderAt = (play, last.index)
                        } else {
                            result.outcome = .ended
                            result.decoderAt = at
                        }
                        return result
                    }
                    try decoder.rewind()
                    play += 1
                    at = nil
                    playDelays = 0
                    // Far behind the clock: whole plays pass at once.
                    if let length = result.playDuration, length > 0, input.lateness - skipped > length {
                        var whole = ((input.lateness - skipped) / length).rounded(.down)
                        if plays != 0 { whole = min(whole, Double(plays - 1 - play)) }
                        if whole >= 1 {
                            play += Int(whole)
                            skipped += whole * length
                        }
                    }
                case .frame(let delay):
                    composited += 1
                    at = (play, decoder.frameIndex)
                    playDelays = playDelays.map { $0 + delay }
                    if input.after != nil, skipped + delay <= input.lateness, composited < framesPerJob {
                        passedOver = (decoder.frameIndex, delay, skipped)
                        skipped += delay
                        continue
                    }
                    guard let bitmap = try decoder.render(for: input.target, isCancelled: isCancelled) else { return nil }
                    result.outcome = .frame(Frame(bitmap: bitmap, index: decoder.frameIndex, play: play, delay: delay,
                                                  skippedBefore: skipped))
                    result.decoderAt = at
                    return result
                }
            }
        } catch let error as ImageError {
            result.decoder = nil
            result.outcome = .failed(error)
            return result
        } catch {
            result.decoder = nil
            result.outcome = .failed(.decodeFailed(input.source.description, reason: "\(error)"))
            return result
        }
    }

    /// A job's result, on the UI thread: kept if nothing made it stale, then the next job.
    @MainActor
    private func finish(_ result: JobResult, token: UInt64) {
        let (accepted, garbage, report, node) = state.withLock { state -> (Bool, AnimatedImageDecoder?, ImageError?, ImageNode?) in
            let node = state.node?.node as? ImageNode
            guard sentinel.value == token else { return (false, result.decoder, nil, node) }
            state.job = nil
            state.decoder = result.decoder.map(UncheckedSendable.init)
            state.decoderAt = result.decoderAt
            state.playCount = result.playCount
            if let count = result.frameCount { state.frameCount = count }
            if let length = result.playDuration { state.playDuration = length }
            var report: ImageError?
            switch result.outcome {
            case .frame(let frame):
                state.queue.append(frame)
                state.peakFramesHeld = max(state.peakFramesHeld, state.framesHeld)
                if state.phase == .opening { state.phase = .playing }
                state.sequenceEnded = result.sequenceEnded
            case .progress:
                break
            case .ended:
                state.sequenceEnded = true
                if state.phase == .opening { state.phase = .still }
            case .still:
                state.phase = .still
                state.stillSource = state.source
            case .failed(let error):
                // Nothing played yet: the still image stays. Otherwise the frames held still show.
                if state.shown == nil && state.queue.isEmpty { state.phase = .still }
                state.sequenceEnded = true
                state.endedInFailure = true
                report = error
            }
            return (true, nil, report, node)
        }
        withExtendedLifetime(garbage) {}
        guard accepted else { return }
        if let report, let node {
            node.reportOnce(.animationStopped, property: "animation \(report)",
                            "its animation stopped: \(report); the frame shown stays")
        }
        updateOnMain()
    }

    // MARK: Frames (main)

    /// Moves the animation to `time`: shows the frame due then and asks for the next ones.
    @MainActor
    private func advance(to time: Double) {
        // Off screen though visible (clipped by a scroll node or the window): held where it is, and no
        // wake-up asked for; the frames that scroll it back into view find it again here.
        if let node = state.withLock({ $0.node?.node as? ImageNode }) {
            let clipped = !Self.isOnScreen(node)
            let changed = state.withLock { state -> Bool in
                guard state.isClipped != clipped else { return false }
                state.isClipped = clipped
                if clipped, state.shown != nil, state.pausedAt == nil { state.pausedAt = time }
                return true
            }
            if clipped {
                if changed { state.withLock { $0.lastTime = time } }
                return
            }
        }
        let (show, garbage, node, source) = state.withLock { state -> (Bitmap?, [Frame], ImageNode?, ImageSource?) in
            state.lastTime = time
            guard state.runs else { return (nil, [], nil, nil) }
            if let paused = state.pausedAt {
                state.shownStart += time - paused
                state.pausedAt = nil
            }
            var show: Bitmap?
            var passed: [Frame] = []
            if state.shown == nil, !state.queue.isEmpty {
                state.shown = state.queue.removeFirst()
                state.shownStart = time
                show = state.shown?.bitmap
            }
            while let shown = state.shown, let next = state.queue.first {
                let due = state.shownStart + shown.delay + next.skippedBefore
                guard due <= time else { break }
                passed.append(shown)
                state.shown = state.queue.removeFirst()
                state.shownStart = due
                show = next.bitmap
            }
            if state.queue.isEmpty, state.sequenceEnded, state.job == nil, state.shown != nil, state.phase == .playing {
                state.phase = state.endedInFailure ? .failed : .finished
            }
            return (show, passed, state.node?.node as? ImageNode, state.source)
        }
        withExtendedLifetime(garbage) {}
        if let show, let node, let source {
            if !node.contentsAreAnimationFrames { node.contentsAreAnimationFrames = true }
            _ = node.showAnimationFrame(show, of: source)
        }
        let keepsGoing = state.withLock { ($0.phase == .opening || $0.phase == .playing) && $0.runs }
        if keepsGoing { scheduleIfNeeded() } else { leaveFrames() }
    }

    /// When the next frame is due, if it is decoded and the player runs: now, when a frame waits to be
    /// shown first or the clock of a resumed animation waits to start again.
    @MainActor
    private func nextDueTime(after time: Double) -> Double? {
        state.withLock { state in
            guard state.runs, !state.isClipped, state.phase == .playing || state.phase == .opening else { return nil }
            guard let shown = state.shown else { return state.queue.isEmpty ? nil : time }
            if state.pausedAt != nil { return time }
            guard let next = state.queue.first else { return nil }
            return max(time, state.shownStart + shown.delay + next.skippedBefore)
        }
    }
}

extension AnimatedImagePlayer {
    /// Whether any of `node` shows: its layer's window rectangle, cut by every ancestor that clips
    /// (a scroll node, a list) and by the root's, is not empty.
    @MainActor
    static func isOnScreen(_ node: Node) -> Bool {
        guard let layer = node.layerIfLoaded, layer.superlayer != nil else { return true }
        var visible = layer.frameInRoot
        var ancestor = layer.superlayer
        while let current = ancestor {
            if current.clipsToBounds || current.superlayer == nil {
                visible = visible.intersection(current.frameInRoot)
                if visible.isEmpty { return false }
            }
            ancestor = current.superlayer
        }
        return true
    }
}

extension AnimatedImagePlayer: FrameParticipant {
    func frameWillStartDisplays(at time: Double) { advance(to: time) }
    func frameWillComposite(_ record: inout FrameRecord) {}
    func nextFrameTime(after time: Double) -> Double? { nextDueTime(after: time) }
}
