import Tessera
import Foundation

/// What a user sees while the app's code stalls: the chat list is flung again and again while the
/// UI thread is blocked for 100 ms (a busy loop, as slow app code would be) every 500 ms, once with
/// the compositor on a thread of its own and once with it on the UI thread. Every frame presented is
/// recorded with the list's offset as drawn. It reports the frames dropped while the list moved (a
/// gap between presents longer than a frame interval counts the frames it skipped), the largest step
/// of the offset measured in frames of the motion's speed just before it (1 is smooth; a frozen list
/// that catches up after a stall jumps by about six), and, with the compositor thread, how many
/// frame intervals a wheel turned during a stall took to reach the screen.
/// - Thread: main
@MainActor
struct StallBenchmark {
    /// One mode's figures.
    struct Mode: Codable {
        /// "compositor thread" or "UI thread".
        var name: String
        /// Frames presented while flinging.
        var frames: Int
        /// Frames presented while the UI thread was blocked.
        var framesDuringStalls: Int
        var stalls: Int
        /// Frames skipped while the list moved.
        var droppedFrames: Int
        /// The largest offset step, in frames of the motion's speed before it.
        var largestJumpFrames: Double
        /// Frame intervals from a wheel turn during a stall to the first frame showing it (the worst
        /// of `wheelTurns`); nil where the wheel waits for the UI thread.
        var wheelLatencyFrames: Double?
        var wheelTurns: Int
        /// A burst of wheel notches during a stall: frames presented after the last notch while the
        /// list glided on by itself, and how far the list jumped (points) when the UI thread came back
        /// (its offset against the screen's at its first frame). Nil where the wheel waits for the UI thread.
        var burstGlideFrames: Int?
        var burstJumpPoints: Double?
        /// A press on the flung list during a stall: how far the screen still moved after the press
        /// (points), and how far the list jumped when the UI thread came back.
        var pressDriftPoints: Double?
        var pressJumpPoints: Double?
        /// The UI thread's frames (`NodeHost.runFrame`, wall time), p50 and p99, in milliseconds.
        var uiFrameP50Milliseconds = 0.0
        var uiFrameP99Milliseconds = 0.0
        /// The frames presented: drawing and presenting them (on the compositor thread, or at the end
        /// of the UI thread's frame), p50 and p99, in milliseconds.
        var compositorFrameP50Milliseconds = 0.0
        var compositorFrameP99Milliseconds = 0.0
    }

    /// The JSON report (`--json`).
    struct Report: Codable {
        var benchmark = "stall"
        var output: String
        var headless: Bool
        var stallMilliseconds = 100.0
        var stallPeriodMilliseconds = 500.0
        var frameIntervalMilliseconds: Double
        /// The compositor thread's figures, which the promise is about.
        var droppedFrames: Int
        var largestJumpFrames: Double
        var wheelLatencyFrames: Double?
        var burstJumpPoints: Double?
        var pressDriftPoints: Double?
        var pressJumpPoints: Double?
        var compositorThread: Mode
        /// The same run with the compositor on the UI thread, for comparison.
        var uiThread: Mode
    }

    let assets: URL
    let seconds: Double
    var output = BenchmarkOutput()
    static let stall = 0.1
    static let period = 0.5
    static let flingSpeed = 2500.0

    func run(progress: (String) -> Void) throws -> (table: String, report: Report) {
        let (threaded, description, interval) = try measure(compositorThread: true)
        progress(line(threaded))
        let (baseline, _, _) = try measure(compositorThread: false)
        progress(line(baseline))
        let report = Report(output: description, headless: output.headless, frameIntervalMilliseconds: interval * 1000,
                            droppedFrames: threaded.droppedFrames, largestJumpFrames: threaded.largestJumpFrames,
                            wheelLatencyFrames: threaded.wheelLatencyFrames, burstJumpPoints: threaded.burstJumpPoints,
                            pressDriftPoints: threaded.pressDriftPoints, pressJumpPoints: threaded.pressJumpPoints,
                            compositorThread: threaded,
                            uiThread: baseline)
        var lines = [String(format: "stall benchmark (release build, %@): the chat list flung for %.0f s per mode, "
                            + "the UI thread blocked %.0f ms every %.0f ms", description as NSString, seconds,
                            Self.stall * 1000, Self.period * 1000),
                     "  mode                frames  during stalls  dropped  largest jump (frames)  wheel → screen (frames)"]
        lines.append(line(threaded))
        lines.append(line(baseline))
        if let glide = threaded.burstGlideFrames, let jump = threaded.burstJumpPoints,
           let drift = threaded.pressDriftPoints, let pressJump = threaded.pressJumpPoints {
            lines.append(String(format: "  during a stall, compositor thread: a burst of 4 notches glides on for %d frames and "
                                + "the list jumps %.2f pt when the UI thread is back; a press on the flung list leaves it "
                                + "moving %.2f pt, then it jumps %.2f pt", glide, jump, drift, pressJump))
        }
        return (lines.joined(separator: "\n"), report)
    }

    private func line(_ m: Mode) -> String {
        "  " + m.name.padded(to: 18) + String(format: "%8d %14d %8d %22.2f", m.frames, m.framesDuringStalls,
                                               m.droppedFrames, m.largestJumpFrames)
            + (m.wheelLatencyFrames.map { String(format: " %24.2f (%d turns)", $0, m.wheelTurns) } ?? String(repeating: " ", count: 24) + "—")
            + String(format: "\n  %@UI thread frame p50 %.2f p99 %.2f ms, frames drawn and presented p50 %.2f p99 %.2f ms",
                     String(repeating: " ", count: 18) as NSString, m.uiFrameP50Milliseconds, m.uiFrameP99Milliseconds,
                     m.compositorFrameP50Milliseconds, m.compositorFrameP99Milliseconds)
    }

    /// A frame presented: when, and the list's content y as drawn.
    struct Sample {
        var time: Double
        var y: Double
        var wheelMoved: Bool
        /// Drawing and presenting the frame, in milliseconds.
        var milliseconds = 0.0
    }

    private func measure(compositorThread: Bool) throws -> (Mode, String, Double) {
        var options = output.galleryOptions(screen: .chats)
        options.rows = 10_000
        options.compositorThread = compositorThread
        let app = try GalleryApp.make(options: options, assets: assets)
        let application = app.application
        defer {
            app.host.setRootController(nil)
            application.close()
        }
        let list = app.chats.list
        try application.settle(timeout: 30)
        let middle = Point(x: options.size.width / 2, y: options.size.height / 2)
        if let thread = application.compositorThread {
            thread.perform { _, backend in backend.window.pushPointerEvent(.pointerMoved(middle)) }
        } else {
            application.frame(events: [.pointerMoved(middle)])
        }
        try application.settle(timeout: 30)
        guard let content = list.layer.sublayers.first(where: { $0.name == "list-content" }) else {
            throw Application.Failure("the chat list has no content layer")
        }
        let serial = content.serial
        let clockOrigin = application.compositorThread?.timeOrigin
        let samples = Locked<[Sample]>([])
        let interval = 1 / (application.renderer.refreshRate ?? 60)

        if let thread = application.compositorThread {
            thread.setFrameObserver { frame in
                guard let layer = frame.snapshot?.layer(serial: serial) else { return }
                let y = layer.presentedFrame(at: frame.time).minY
                let milliseconds = frame.statistics.drawMilliseconds + frame.statistics.presentMilliseconds
                samples.withLock {
                    $0.append(Sample(time: frame.time, y: y, wheelMoved: frame.wheelOffsets[serial] != nil,
                                     milliseconds: milliseconds))
                }
            }
        } else {
            application.onFrame = { record in
                guard record.compositor.presented else { return }
                let now = Double(MonotonicClock.nanoseconds()) / 1e9
                let milliseconds = record.compositor.drawMilliseconds + record.compositor.presentMilliseconds
                samples.withLock {
                    $0.append(Sample(time: now, y: -list.contentOffset, wheelMoved: false, milliseconds: milliseconds))
                }
            }
        }
        func now() -> Double {
            if let clockOrigin { return Double(MonotonicClock.nanoseconds() &- clockOrigin) / 1e9 }
            return Double(MonotonicClock.nanoseconds()) / 1e9
        }

        // Fling, and block the UI thread for `stall` every `period`, from the app's own frames.
        var stalls: [ClosedRange<Double>] = []
        var flings: [Double] = [now()]
        var lastStall = now()
        var direction = 1.0
        list.fling(velocity: Self.flingSpeed)
        let previous = application.onFrame
        var uiFrames: [Double] = []
        application.onFrame = { record in
            previous?(record)
            uiFrames.append(record.wallMilliseconds)
            if now() - lastStall >= Self.period {
                let start = now()
                Self.busy(for: Self.stall)
                lastStall = now()
                stalls.append(start...lastStall)
            }
            if !list.isScrolling {
                direction = -direction
                flings.append(now())
                list.fling(velocity: direction * Self.flingSpeed)
            }
        }
        application.runEventLoop(forSeconds: seconds)
        application.onFrame = previous
        let flung = samples.withLock { $0 }

        // The wheel during a stall (a compositor thread only moves the list by itself).
        var latencies: [Double] = []
        if let thread = application.compositorThread {
            application.onFrame = nil
            list.setContentOffset(list.contentHeight / 2, animated: false)
            try application.settle(timeout: 30)
            for turn in 0..<5 {
                samples.withLock { $0.removeAll() }
                let turned = now()
                thread.perform { _, backend in backend.window.pushPointerEvent(.wheel(dx: 0, dy: turn % 2 == 0 ? -1 : 1)) }
                Self.busy(for: Self.stall)
                if let shown = samples.withLock({ $0.first(where: \.wheelMoved) }) {
                    latencies.append(max(0, shown.time - turned) / interval)
                }
                try application.settle(timeout: 30)
            }
        }

        // A burst of notches during a stall, then a press on a flung list during a stall (a compositor
        // thread drives both itself; the UI thread then takes them over where the screen shows them).
        var burst: (glide: Int, jump: Double)?
        var press: (drift: Double, jump: Double)?
        if let thread = application.compositorThread {
            list.setContentOffset(list.contentHeight / 3, animated: false)
            try application.settle(timeout: 30)
            samples.withLock { $0.removeAll() }
            var lastNotch = 0.0
            StallBenchmark.busyWhile(seconds: Self.stall * 4) { elapsed, notches in
                guard notches < 4, elapsed >= Double(notches) * 0.012 else { return false }
                lastNotch = now()
                thread.perform { _, backend in backend.window.pushPointerEvent(.wheel(dx: 0, dy: -1)) }
                return true
            }
            let during = samples.withLock { $0 }
            let glide = during.filter { $0.time > lastNotch + 0.03 && $0.wheelMoved }.count
            // The UI thread's first frame back: its offset against where the screen has the list then.
            application.frame()
            if let layer = thread.shownSnapshot?.layer(serial: serial) {
                burst = (glide, abs(-list.contentOffset - layer.presentedFrame(at: application.host.time).minY))
            }
            try application.settle(timeout: 30)

            list.fling(velocity: Self.flingSpeed)
            application.frame()
            let pressAt = Point(x: options.size.width / 2, y: options.size.height / 2)
            StallBenchmark.busy(for: 0.05)
            thread.perform { _, backend in backend.window.pushEvent(.input(.pointerDown(pressAt, button: 1, clicks: 1))) }
            StallBenchmark.busy(for: 0.03)
            let pressed = thread.shownSnapshot?.layer(serial: serial).map { $0.presentedFrame(at: now()).minY }
            StallBenchmark.busy(for: Self.stall)
            let later = thread.shownSnapshot?.layer(serial: serial).map { $0.presentedFrame(at: now()).minY }
            application.frame()
            let screen = thread.shownSnapshot?.layer(serial: serial).map { $0.presentedFrame(at: application.host.time).minY }
            thread.perform { _, backend in backend.window.pushEvent(.input(.pointerUp(pressAt, button: 1))) }
            application.frame()
            if let pressed, let later, let screen {
                press = (abs(later - pressed), abs(-list.contentOffset - screen))
            }
            try application.settle(timeout: 30)
        }

        var mode = Self.figures(flung, stalls: stalls, flings: flings, interval: interval)
        mode.burstGlideFrames = burst?.glide
        mode.burstJumpPoints = burst?.jump
        mode.pressDriftPoints = press?.drift
        mode.pressJumpPoints = press?.jump
        mode.name = compositorThread ? "compositor thread" : "UI thread"
        mode.wheelLatencyFrames = latencies.isEmpty ? nil : latencies.max()
        mode.wheelTurns = latencies.count
        let ui = Percentiles(uiFrames), drawn = Percentiles(flung.map(\.milliseconds))
        mode.uiFrameP50Milliseconds = ui.percentile(0.5)
        mode.uiFrameP99Milliseconds = ui.percentile(0.99)
        mode.compositorFrameP50Milliseconds = drawn.percentile(0.5)
        mode.compositorFrameP99Milliseconds = drawn.percentile(0.99)
        if compositorThread && latencies.count < 5 {
            // A turn that never showed during its stall counts as the whole stall.
            mode.wheelLatencyFrames = Self.stall / interval
        }
        return (mode, BenchmarkOutput.describe(application.renderer), interval)
    }

    /// Dropped frames and the largest jump, from the frames presented while flinging. A gap between
    /// presents drops the frames in which the offset would have moved a whole pixel (a compositor
    /// draws nothing for a change that shows nowhere). A step is measured against the speed of the last
    /// step between frames a frame apart before it (so a gap does not hide a jump), where that speed
    /// is at least two pixels a frame. The frames just after a new fling starts from rest are left
    /// out of both (the motion reaches the compositor with the UI thread's next commit).
    static func figures(_ samples: [Sample], stalls: [ClosedRange<Double>], flings: [Double], interval: Double) -> Mode {
        var dropped = 0
        var largest = 0.0
        var speed: Double?
        for i in 1..<max(1, samples.count) {
            let a = samples[i - 1], b = samples[i]
            let dt = b.time - a.time
            // A new fling from rest is the app's doing, not the compositor's: its first frames (the
            // UI thread's commit of the motion) count neither as drops nor as jumps.
            let restarted = flings.contains { $0 > (i >= 2 ? samples[i - 2].time : a.time) && $0 <= b.time }
            if restarted {
                speed = nil
                continue
            }
            // A frame is missing where the motion would have shown in it: a slow end of a fling that
            // moves less than a pixel a frame is drawn only when it reaches the next pixel.
            let intervals = Int(dt / interval + 0.5)
            let visibleSteps = Int(abs(b.y - a.y))
            if intervals > 1 && visibleSteps > 1 { dropped += min(intervals, visibleSteps) - 1 }
            // Against steps of at least two pixels a frame (below that, the pixel grid rounds steps).
            if let speed, speed * interval >= 2 {
                largest = max(largest, abs(b.y - a.y) / (speed * interval))
            }
            if dt > 0 && dt <= 1.5 * interval { speed = abs(b.y - a.y) / dt }
        }
        let during = samples.filter { sample in stalls.contains { $0.contains(sample.time) } }.count
        return Mode(name: "", frames: samples.count, framesDuringStalls: during, stalls: stalls.count,
                    droppedFrames: dropped, largestJumpFrames: largest, wheelLatencyFrames: nil, wheelTurns: 0)
    }

    /// Keeps the UI thread busy for `seconds`, as slow app code would, calling `step` with the time
    /// elapsed and the number of times it returned true so far.
    static func busyWhile(seconds: Double, step: (Double, Int) -> Bool) {
        let start = MonotonicClock.nanoseconds()
        let end = start + UInt64(seconds * 1e9)
        var count = 0
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < end else { break }
            if step(Double(now - start) / 1e9, count) { count += 1 }
        }
    }

    /// Keeps the UI thread busy for `seconds`, as slow app code would.
    static func busy(for seconds: Double) {
        let end = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        var spin = 0
        while MonotonicClock.nanoseconds() < end { spin &+= 1 }
        _ = spin
    }

}
