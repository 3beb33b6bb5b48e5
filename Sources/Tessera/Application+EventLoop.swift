import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime

// The event loop: frames for every window that needs one, one wait for all of them when none does.

extension Application {
    /// The longest the loop waits for events before it gives the main actor's queue a turn: work
    /// sent to `@MainActor` from another thread (`Task { @MainActor in … }`) reaches the main
    /// dispatch queue, which does not wake the event wait.
    public static let mainActorTurnInterval = 0.25

    /// The event loop: a frame for every window that has something to do (`NodeHost.needsFrame`:
    /// input, results from the workers, animation, scrolling, changed layers), paced by the display's
    /// refresh while something moves (`NodeHost.movesByItself`) and run at once otherwise (input at
    /// rest, a draw's result: no wait for the next refresh tick); with nothing to do in any window,
    /// one wait for all of them in the platform's event queue until input, a wake from another thread
    /// (`UIWakeup`), a window's focused node's next timer (a caret's blink) or
    /// `mainActorTurnInterval`. Each window's events go to its own host. An app at rest runs no
    /// frames, draws nothing and presents nothing. Ends when the last window closes (unless
    /// `quitsWhenLastWindowCloses` is off), `quit()` is called, `configuration.frames` have run (or
    /// that many frame intervals have passed) or `seconds` (if given) have passed.
    public func runEventLoop(forSeconds seconds: Double? = nil) {
        let start = clock.now
        lastLoopFrame = start
        var end = seconds.map { start + max(0, $0) }
        if let limit = configuration.frames {
            let framesEnd = start + Double(limit) * clock.frameInterval
            end = min(end ?? framesEnd, framesEnd)
        }
        let wakeup = UIWakeup.shared
        while !isQuitting {
            if let limit = configuration.frames, frameCount >= limit { break }
            if let end, clock.now >= end { break }
            // Reset before looking for work: a wake from here on ends the wait below.
            wakeup.reset()
            Self.runMainActorJobs()
            let open = windows
            guard let first = open.first else {
                // No window (and the app stays): only the main actor's jobs and `quit()` remain.
                var timeout = Self.mainActorTurnInterval
                if let end { timeout = min(timeout, max(0, end - clock.now)) }
                _ = wakeup.wait(timeout: timeout)
                continue
            }
            var events: [[InputEvent]]
            // A window's last frame saw work under way off this thread (a draw running, a layout
            // measured) that may end without a result to commit: one quiet frame once it is done lets
            // its host see itself settled (`settle`, a "ready" report), instead of waiting for input.
            var quietFrameDue = [Bool](repeating: false, count: open.count)
            if open.contains(where: { $0.host.needsFrame }) {
                events = open.map { $0.compositor.pollEvents() }
            } else {
                let now = clock.now
                var timeout = Self.mainActorTurnInterval
                for window in open {
                    if let timer = window.host.nextTimerTime(after: window.host.time) {
                        timeout = min(timeout, max(0, timer - loopTime(window)))
                    }
                    if window.workWasPending { timeout = min(timeout, clock.frameInterval) }
                }
                if let end { timeout = min(timeout, max(0, end - now)) }
                if timeout > 0 { trimAllocatorIfDue(at: now) }
                // Events one window read for another wait for it: no sleep before they are taken.
                if open.contains(where: { $0.compositor.window?.hasPendingEvents == true }) { timeout = 0 }
                // One wait for every window: the platform's queue (or the compositor thread's wake) is one.
                events = [first.compositor.waitForEvents(timeout: timeout)] + open.dropFirst().map { $0.compositor.pollEvents() }
                clock.restart()
                for (index, window) in open.enumerated() {
                    quietFrameDue[index] = window.workWasPending && window.host.pendingWork.excludingNetwork.isEmpty
                }
                // Woken with nothing to do (the main actor's turn, a timer not yet due): look again.
                let anything = events.contains { !$0.isEmpty } || quietFrameDue.contains(true)
                    || open.contains { $0.host.needsFrame || timerIsDue($0) }
                if !anything { continue }
            }
            for (index, window) in open.enumerated() where window.isOpen {
                let due = !events[index].isEmpty || quietFrameDue[index] || window.host.needsFrame || timerIsDue(window)
                guard due else { continue }
                frame(window, events: events[index], at: loopTime(window))
                if isQuitting { break }
            }
            lastLoopFrame = clock.now
            let busy = windows.filter { $0.host.needsFrame }
            if !busy.isEmpty && !isQuitting {
                if busy.contains(where: { $0.host.movesByItself }) {
                    clock.waitForNextFrame()
                } else {
                    // Only work off this thread is awaited (a draw, a measured layout, typed text being
                    // drawn): its result wakes this thread, and the frame that shows it runs then, not
                    // at the next refresh tick. Something moving keeps the display's pace above.
                    _ = wakeup.wait(timeout: clock.secondsUntilNextFrame)
                    clock.restart()
                }
            }
        }
    }

    /// Come to rest after frames: the C allocator's free pages go back to the system (`AllocatorTrim`,
    /// on a utility queue), at most once per `AllocatorTrim.interval`. At rest with no frame since the
    /// last trim, nothing is asked.
    private func trimAllocatorIfDue(at now: Double) {
        guard frameCount != framesAtLastTrim else { return }
        if let last = lastAllocatorTrim, now - last < AllocatorTrim.interval { return }
        framesAtLastTrim = frameCount
        lastAllocatorTrim = now
        AllocatorTrim.start()
    }

    /// True when `window`'s focused node's timer (a caret's blink) is due at the loop's time.
    private func timerIsDue(_ window: Window) -> Bool {
        guard let timer = window.host.nextTimerTime(after: window.host.time) else { return false }
        return loopTime(window) >= timer
    }

    /// The event loop's time for a frame of `window` run now: the clock's with a window. Headless,
    /// the window's host's own time line (which tests step by hand) moved on by the wall time since
    /// the loop's last frame, at least one frame interval, so timers fall due while the loop waits as
    /// they do in a window.
    private func loopTime(_ window: Window) -> Double {
        // A compositor thread draws animations on the clock's time line, headless too.
        guard isHeadless && !drawsOnCompositorThread else { return clock.now }
        let elapsed = lastLoopFrame.map { clock.now - $0 } ?? 0
        return window.host.time + max(clock.frameInterval, elapsed)
    }
}
