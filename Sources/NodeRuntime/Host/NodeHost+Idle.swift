import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension NodeHost {
    /// True when a frame run now has something to do: work posted for the UI thread, finished draws to
    /// commit, draws to start, a layout to measure, an animation or a list moving, a button held, or
    /// layers changed since the last frame drawn; and once after a frame that did work (commits, draws
    /// started, main-queue items), as `settle` looks for a quiet frame after one that did something, so
    /// an app at rest is also settled (`isSettled`); an overlay's surface with input waiting or layers
    /// to draw. False when nothing would happen: an app waits for events (`Compositor.waitForEvents`)
    /// instead of running empty frames, and whatever gives it work from another thread (a surface's
    /// input too) wakes it (`UIWakeup`). Draws and decodes running on workers do not count: their
    /// results wake the app when they finish. - Thread: main
    public var needsFrame: Bool {
        if runtime.mainQueue.count > 0 || runtime.pendingCommitCount > 0 || runtime.pendingDisplayCount > 0 { return true }
        if runtime.animator.count > 0 || isTouchDown { return true }
        if runtime.accessibilityChangeCount != lastFrame.accessibilityChangeCount { return true }
        if lastFrame.displaysStarted > 0 || lastFrame.commitsApplied > 0 || lastFrame.mainQueueItems > 0 { return true }
        if frameParticipants.contains(where: { !$0.isSettled }) { return true }
        if let rootNode, !isLayoutInFlight, !rootNode.hasCachedLayout(for: .exactly(rootNode.frame.size)) { return true }
        if overlaysNeedLayout || menuBarNeedsLayout || overlaySurfacesNeedFrame { return true }
        return compositor.needsRender(rootLayer)
    }

    /// True while something moves by itself, frame after frame (an animation, a list or scroll node
    /// scrolling or placing rows, a touch held): frames keep the display's pace. Otherwise a frame
    /// that is needed waits only for work done off this thread (a draw, a measured layout), and the
    /// frame that applies it runs as soon as it arrives. - Thread: main
    public var movesByItself: Bool {
        runtime.animator.count > 0 || isTouchDown || frameParticipants.contains { !$0.isSettled }
    }

    /// When a frame is next due by itself, after `time`, with nothing else happening: the focused
    /// node's next change (a caret's blink) or a frame participant's (an animated image's next frame),
    /// whichever comes first. Nil: only events and wakes need a frame. - Thread: main
    public func nextTimerTime(after time: Double) -> Double? {
        var next = focusedNode?.nextFocusFrameTime(after: time)
        for participant in frameParticipants {
            guard let due = participant.nextFrameTime(after: time) else { continue }
            next = min(next ?? due, due)
        }
        return next
    }
}
