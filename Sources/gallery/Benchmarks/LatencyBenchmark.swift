import Tessera
import Foundation
import TesseraRandom

/// What a user feels of input at rest: the app is at rest, waiting in its event loop, and an input
/// event is put on SDL's queue (as the window system puts it) at a random phase of the display's
/// refresh; the time from the event to the end of presenting the first frame that shows it is
/// recorded. Two kinds, one at a time, each after the screen has been still for a while: a wheel
/// notch over the chat list (down and up in turn, from the middle of the list; the compositor thread
/// moves the list itself) and a character typed into the focused message composer of the thread
/// screen (the UI thread edits the field, a worker draws its line, the compositor thread presents
/// it). The composer is emptied every eight characters, off the clock.
///
/// The frame "that shows it" is the first presented frame whose snapshot differs where the input
/// lands: the list's content moved, or the field's layers hold other contents. It runs with the
/// compositor on its own thread (the window's arrangement), in a window or headless.
/// - Thread: main
@MainActor
struct LatencyBenchmark {
    /// One kind of input's figures, in milliseconds.
    struct Kind: Codable {
        var count: Int
        var p50Ms: Double
        var p99Ms: Double
        var maxMs: Double
        /// Inputs that took more than two 60 Hz frames (33 ms).
        var over33Ms: Int
        /// Inputs whose frame never came (within 2 s).
        var missed: Int
    }

    /// The JSON report (`--json`).
    struct Report: Codable {
        var benchmark = "latency"
        var output: String
        var headless: Bool
        var seed: UInt64
        var wheel: Kind
        var typing: Kind
        /// Typing with the field's lines drawn on a display worker instead of the UI thread.
        var typingLinesOnWorker: Kind
        /// Waits at rest on the compositor thread that ran out their time with a commit pending.
        var lateWakeups: Int
    }

    let assets: URL
    /// Inputs of each kind.
    let inputs: Int
    var seed: UInt64 = UInt64(MonotonicClock.nanoseconds())
    var output = BenchmarkOutput()

    /// What the compositor thread watches for: the frame that shows the input pending.
    private struct Pending: Sendable {
        enum Target: Sendable {
            case moved(layer: Int, from: Double)
            case changed(layer: Int, from: [Int: UInt64])
        }
        var target: Target
        /// When the event went on SDL's queue, in `MonotonicClock` nanoseconds (0: not yet).
        var pushed: UInt64 = 0
    }

    /// State shared with the compositor thread's frame observer and the driving thread.
    private final class Watch: Sendable {
        let pending = Locked<Pending?>(nil)
        let latest = Locked<LayerSnapshot?>(nil)
        let presents = Locked(0)
        let shown = DispatchSemaphore(value: 0)
        let results = Locked<[Double]>([])
        /// Drawing and presenting the frames that showed an input, in milliseconds.
        let frameCosts = Locked<[(draw: Double, present: Double)]>([])
    }

    func run(progress: (String) -> Void) throws -> (table: String, report: Report) {
        var options = output.galleryOptions(screen: .chats)
        options.compositorThread = true
        let app = try GalleryApp.make(options: options, assets: assets)
        let application = app.application
        defer {
            app.host.setRootController(nil)
            application.close()
        }
        guard let compositor = application.compositorThread else { throw Application.Failure("no compositor thread") }
        try application.settle(timeout: 30)
        let list = app.chats.list
        guard let thread = app.tabs.controllers.compactMap({ $0 as? ThreadController }).first,
              let threadIndex = app.tabs.controllers.firstIndex(where: { $0 === thread }) else {
            throw Application.Failure("the gallery has no thread screen")
        }
        let field = thread.composer
        list.setContentOffset(list.contentHeight / 2, animated: false)
        guard let content = list.layer.sublayers.first(where: { $0.name == "list-content" }) else {
            throw Application.Failure("the chat list has no content layer")
        }
        let contentSerial = content.serial
        let middle = Point(x: list.layer.frameInRoot.midX, y: list.layer.frameInRoot.midY)
        application.warpPointer(to: middle)
        compositor.perform { _, backend in backend.window.pushPointerEvent(.pointerMoved(middle)) }
        try application.settle(timeout: 30)
        let tabs = app.tabs
        let host = app.host

        let watch = Watch()
        watch.latest.withLock { $0 = compositor.shownSnapshot }
        compositor.setFrameObserver { frame in
            watch.latest.withLock { $0 = frame.snapshot }
            watch.presents.withLock { $0 += 1 }
            guard let pending = watch.pending.withLock({ $0 }), pending.pushed != 0, let snapshot = frame.snapshot else { return }
            let shows: Bool
            switch pending.target {
            case let .moved(layer, from):
                shows = snapshot.layer(serial: layer).map { $0.presentedFrame(at: frame.time).minY != from } ?? false
            case let .changed(layer, from):
                shows = snapshot.layer(serial: layer).map { Self.fingerprint($0) != from } ?? false
            }
            guard shows else { return }
            let done = MonotonicClock.nanoseconds()
            watch.pending.withLock { $0 = nil }
            watch.results.withLock { $0.append(Double(done &- pending.pushed) / 1e6) }
            watch.frameCosts.withLock { $0.append((frame.statistics.drawMilliseconds, frame.statistics.presentMilliseconds)) }
            watch.shown.signal()
        }

        var generator = SeededRandom(seed: seed)
        let interval = 1 / (application.renderer.refreshRate ?? 60)
        let count = inputs
        let seed = self.seed
        /// Runs `work` on the UI thread, in the event loop's next turn, and waits for it.
        let onUIThread: @Sendable (@escaping @MainActor () -> Void) -> Void = { work in
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.main.async { MainActor.assumeIsolated { work() }; done.signal() }
            UIWakeup.shared.wake()
            done.wait()
        }
        let fieldSerial = Locked(0)
        // The inputs come from a thread of their own while this one runs the app's event loop, as a
        // window system's would.
        let phases = (0..<(3 * count)).map { _ in Double.random(in: 0..<interval, using: &generator) }
        let wheelResults = Locked<[Double]>([])
        let typingResults = Locked<[Double]>([])
        let workerTypingResults = Locked<[Double]>([])
        let missed = Locked((wheel: 0, typing: 0, workerTyping: 0))
        let driver = Thread {
            func waitForQuiet() {
                // Still for 80 ms: nothing presented meanwhile.
                var last = watch.presents.withLock { $0 }
                var still = 0
                while still < 16 {
                    usleep(5_000)
                    let now = watch.presents.withLock { $0 }
                    if now == last { still += 1 } else { still = 0; last = now }
                }
            }
            func measure(_ target: Pending.Target, phase: Double, into results: Locked<[Double]>,
                         push: @escaping @Sendable (SDLRenderBackend) -> Void) -> Bool {
                usleep(UInt32(phase * 1e6))
                watch.results.withLock { $0.removeAll() }
                watch.pending.withLock { $0 = Pending(target: target) }
                compositor.perform { _, backend in
                    watch.pending.withLock { $0?.pushed = MonotonicClock.nanoseconds() }
                    push(backend)
                }
                guard watch.shown.wait(timeout: .now() + 2) == .success else {
                    watch.pending.withLock { $0 = nil }
                    return false
                }
                let measured = watch.results.withLock { $0 }
                results.withLock { $0.append(contentsOf: measured) }
                return true
            }
            /// The layer as the screen shows it at rest; the screen may not show it yet (a screen
            /// switched a moment ago, drawn after a quiet spell on a slow machine): waited for up to
            /// 2 s and for the screen to be still again, then nil (the input is counted as missed,
            /// not left out).
            func shownLayer(serial: Int) -> LayerSnapshot? {
                let deadline = MonotonicClock.nanoseconds() + 2_000_000_000
                var waited = false
                while true {
                    if let layer = watch.latest.withLock({ $0?.layer(serial: serial) }) {
                        guard waited else { return layer }
                        waitForQuiet()
                        return watch.latest.withLock { $0?.layer(serial: serial) }
                    }
                    if MonotonicClock.nanoseconds() > deadline { return nil }
                    waited = true
                    usleep(5_000)
                }
            }
            for index in 0..<count {
                waitForQuiet()
                guard let y = shownLayer(serial: contentSerial)?.frame.minY else {
                    missed.withLock { $0.wheel += 1 }
                    continue
                }
                let dy: Double = index % 2 == 0 ? -1 : 1
                if !measure(.moved(layer: contentSerial, from: y), phase: phases[index], into: wheelResults,
                            push: { $0.window.pushPointerEvent(.wheel(dx: 0, dy: dy)) }) {
                    missed.withLock { $0.wheel += 1 }
                }
            }
            // The thread screen, its composer focused.
            onUIThread {
                tabs.select(threadIndex)
                host.focus(field)
                fieldSerial.withLock { $0 = field.layer.serial }
            }
            let fieldSerial = fieldSerial.withLock { $0 }
            // The field's lines drawn on the UI thread (its default), then on a display worker.
            for (series, onUIThreadDrawing) in [(0, true), (1, false)] {
                onUIThread { field.text = ""; field.drawsLinesOnUIThread = onUIThreadDrawing }
                for index in 0..<count {
                    if index % 8 == 0 && index > 0 { onUIThread { field.text = "" } }
                    waitForQuiet()
                    guard let layer = shownLayer(serial: fieldSerial) else {
                        missed.withLock { if series == 0 { $0.typing += 1 } else { $0.workerTyping += 1 } }
                        continue
                    }
                    let letter = String(UnicodeScalar(UInt8(97 + index % 26)))
                    if !measure(.changed(layer: fieldSerial, from: Self.fingerprint(layer)),
                                phase: phases[(1 + series) * count + index],
                                into: series == 0 ? typingResults : workerTypingResults,
                                push: { $0.window.pushTextEvent(.textInput(letter)) }) {
                        missed.withLock { if series == 0 { $0.typing += 1 } else { $0.workerTyping += 1 } }
                    }
                }
            }
            onUIThread { field.drawsLinesOnUIThread = true }
            DispatchQueue.main.async { MainActor.assumeIsolated { application.quit() } }
            UIWakeup.shared.wake()
        }
        driver.name = "gallery.latency-inputs"
        progress(String(format: "latency: %d wheel notches then twice %d characters, seed 0x%llX", count, count, seed))
        driver.start()
        application.runEventLoop(forSeconds: Double(count) * 3 * 3 + 30)
        compositor.setFrameObserver(nil)

        func kind(_ values: [Double], missed: Int) -> Kind {
            let percentiles = Percentiles(values)
            return Kind(count: values.count, p50Ms: percentiles.percentile(0.5), p99Ms: percentiles.percentile(0.99),
                        maxMs: values.max() ?? 0, over33Ms: values.filter { $0 > 33 }.count, missed: missed)
        }
        let misses = missed.withLock { $0 }
        let wheel = kind(wheelResults.withLock { $0 }, missed: misses.wheel)
        let typing = kind(typingResults.withLock { $0 }, missed: misses.typing)
        let workerTyping = kind(workerTypingResults.withLock { $0 }, missed: misses.workerTyping)
        let description = BenchmarkOutput.describe(application.renderer)
        let report = Report(output: description, headless: output.headless, seed: seed, wheel: wheel, typing: typing,
                            typingLinesOnWorker: workerTyping,
                            lateWakeups: compositor.lateWakeups)
        var lines = [String(format: "latency benchmark (%@): input at rest to the end of the present that shows it, "
                            + "seed 0x%llX", description as NSString, seed),
                     "  input                       count    p50 ms    p99 ms    max ms  over 33 ms  missed"]
        for (name, figures) in [("wheel", wheel), ("typing", typing), ("typing, lines on a worker", workerTyping)] {
            lines.append("  " + name.padded(to: 26) + String(format: "%6d %9.2f %9.2f %9.2f %11d %7d", figures.count,
                                                             figures.p50Ms, figures.p99Ms, figures.maxMs,
                                                             figures.over33Ms, figures.missed))
        }
        let frameCosts = watch.frameCosts.withLock { $0 }
        let costs = Percentiles(frameCosts.map { $0.draw + $0.present })
        let draws = Percentiles(frameCosts.map(\.draw)), presents = Percentiles(frameCosts.map(\.present))
        lines.append(String(format: "  the frames that showed them: drawn and presented in p50 %.2f ms, p99 %.2f ms "
                            + "(drawing p50 %.2f ms, presenting p50 %.2f ms)",
                            costs.percentile(0.5), costs.percentile(0.99), draws.percentile(0.5), presents.percentile(0.5)))
        lines.append("  late wake-ups on the compositor thread: \(compositor.lateWakeups)")
        return (lines.joined(separator: "\n"), report)
    }

    /// What a layer subtree holds: each layer's contents identity, by serial.
    nonisolated static func fingerprint(_ layer: LayerSnapshot) -> [Int: UInt64] {
        var result: [Int: UInt64] = [:]
        func visit(_ layer: LayerSnapshot) {
            result[layer.id] = layer.contents.map { $0.identity.rawValue } ?? 0
            layer.sublayers.forEach(visit)
        }
        visit(layer)
        return result
    }
}
