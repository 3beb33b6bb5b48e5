import Tessera
import Foundation

/// What the gallery costs when nothing happens: each of the four screens is shown, settled, given the
/// pointer in the middle of the window, then left alone for `seconds` while the application's own
/// event loop runs. It reports the process's CPU time over that span (every thread's, the display
/// workers' and, in a window on Mesa, llvmpipe's) as a percentage of one core, the frames the loop ran
/// and the frames it presented. A last run does the same on the thread screen with the composer
/// focused, so its caret blinks: the one thing that changes there by itself.
/// - Thread: main
@MainActor
struct IdleBenchmark {
    /// One screen's span at rest.
    struct Measurement: Codable {
        var name: String
        var seconds: Double
        /// Process CPU time (user and system, all threads) over the span, in percent of one core.
        var cpuPercent: Double
        /// Frames the event loop ran after the screen had settled.
        var framesAfterSettle: Int
        /// Frames presented after the screen had settled.
        var presentsAfterSettle: Int
        /// Wakes from other threads (`UIWakeup`) during the span.
        var wakeups: Int
        /// Frames it took the screen to settle before the span.
        var settleFrames: Int
    }

    /// The JSON report (`--json`).
    struct Report: Codable {
        var benchmark = "idle"
        /// "renderer software, video driver dummy", or the window's renderer.
        var output: String
        var headless: Bool
        /// Milliseconds from the process's start to the first frame presented (the first screen's).
        var firstPresentMilliseconds: Double?
        var screens: [Measurement]
        /// The thread screen with its composer focused and the caret blinking (nil with `onlyScreen`).
        var caret: Measurement?
    }

    let assets: URL
    let seconds: Double
    var output = BenchmarkOutput()
    /// Set: only this screen is measured, in the process's one window, and there is no caret pass
    /// (`--idle-one-screen`). SDL 2.26's Wayland driver with libdecor (weston) crashes when a window
    /// opens after the process's last window closed, as the full run's window for each screen does.
    var onlyScreen: GalleryOptions.Screen?

    func run(progress: (String) -> Void) throws -> (table: String, report: Report) {
        var screens: [Measurement] = []
        var description = ""
        for screen in onlyScreen.map({ [$0] }) ?? GalleryOptions.Screen.allCases {
            let (measurement, output) = try measure(screen, caret: false)
            screens.append(measurement)
            description = output
            progress(line(measurement))
        }
        let caret = onlyScreen == nil ? try measure(.thread, caret: true).0 : nil
        if let caret { progress(line(caret)) }
        let report = Report(output: description, headless: output.headless,
                            firstPresentMilliseconds: GalleryApp.firstPresentMilliseconds, screens: screens, caret: caret)
        var lines = [String(format: "idle benchmark (%@): each screen at rest for %g s after settling, pointer inside the window",
                            description as NSString, seconds),
                     "  screen            CPU % of a core   frames   presents   wakeups   (settled in frames)"]
        lines += screens.map(line)
        if let caret { lines.append(line(caret)) }
        lines.append("  (CPU time is the whole process's: every thread, the display workers and the renderer's)")
        if let first = report.firstPresentMilliseconds {
            lines.append(String(format: "  first frame presented %.0f ms after the process started", first))
        }
        return (lines.joined(separator: "\n"), report)
    }

    private func line(_ m: Measurement) -> String {
        "  " + m.name.padded(to: 16) + String(format: "%15.2f %8d %10d %9d   (%d)", m.cpuPercent, m.framesAfterSettle,
                                       m.presentsAfterSettle, m.wakeups, m.settleFrames)
    }

    private func measure(_ screen: GalleryOptions.Screen, caret: Bool) throws -> (Measurement, String) {
        let options = output.galleryOptions(screen: screen)
        let app = try GalleryApp.make(options: options, assets: assets)
        let application = app.application
        defer {
            app.host.setRootController(nil)
            application.close()
        }
        var settleFrames = try application.settle(timeout: 30)
        if caret, let thread = app.tabs.controllers[GalleryOptions.Screen.allCases.firstIndex(of: .thread)!] as? ThreadController {
            app.host.focus(thread.composer)
        }
        // The pointer in the middle of the window, where a user's would rest: moved by the window
        // system in a window (its motion event arrives like any other), given as an event headless.
        let middle = Point(x: options.size.width / 2, y: options.size.height / 2)
        if application.isHeadless {
            application.frame(events: [.pointerMoved(middle)])
        } else {
            // The window system's motion event, waited for (at most 2 s; it may come through a
            // compositor thread), with whatever comes before it.
            application.warpPointer(to: middle)
            let deadline = MonotonicClock.nanoseconds() + 2_000_000_000
            var moved = false
            while !moved && MonotonicClock.nanoseconds() < deadline {
                let events = application.compositor.waitForEvents(timeout: 0.25)
                moved = events.contains { if case .pointerMoved = $0 { true } else { false } }
                application.frame(events: events)
            }
            // SDL reports a warp twice (its own motion at once, then the X server's): taken in until
            // a third of a second passes with no event.
            var quiet = false
            while !quiet && MonotonicClock.nanoseconds() < deadline + 2_000_000_000 {
                let events = application.compositor.waitForEvents(timeout: 0.35)
                quiet = events.isEmpty
                if !quiet { application.frame(events: events) }
            }
        }
        settleFrames += try application.settle(timeout: 30)

        let presents = application.compositor.presentCount
        let frames = application.frameCount
        let wakes = UIWakeup.shared.wakeCount
        let cpu = Self.processCPUSeconds()
        let start = MonotonicClock.nanoseconds()
        application.runEventLoop(forSeconds: seconds)
        let wall = Double(MonotonicClock.nanoseconds() &- start) / 1e9
        let measurement = Measurement(
            name: screen.rawValue + (caret ? " + caret" : ""), seconds: wall,
            cpuPercent: 100 * (Self.processCPUSeconds() - cpu) / max(wall, 1e-9),
            framesAfterSettle: application.frameCount - frames,
            presentsAfterSettle: application.compositor.presentCount - presents,
            wakeups: UIWakeup.shared.wakeCount - wakes, settleFrames: settleFrames)
        return (measurement, BenchmarkOutput.describe(application.renderer))
    }

    /// User and system CPU time of the whole process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
