import Dispatch
import XCTest
@testable import Compositor

/// The event wait and its wake-up: a thread resets its wake-up, looks for work, polls its input and
/// then waits. A wake that came after the reset must end the wait even when the poll drained the
/// event it pushed onto SDL's queue (X11 and Wayland wait in that queue; the dummy driver is made to
/// wait there too, so a headless test sees what a window sees).
@MainActor
final class SDLEventWaitTests: XCTestCase {
    private func seconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    func testAWakeWhosePushedEventAPollDrainedStillEndsTheWait() async throws {
        let wake = UIWakeup()
        var configuration = SDLRenderBackend.Configuration(title: "wait", size: Size(width: 32, height: 32), headless: true)
        configuration.eventWake = wake
        let backend = try SDLRenderBackend(configuration)
        backend.window.waitsInSDLQueue = true
        _ = backend.window.pollEvents()  // the window's own events

        wake.reset()
        // Work is handed over (a commit) and the wake pushes its event...
        wake.wake()
        // ...which the thread's look for input drains before it decides to wait.
        _ = backend.window.pollEvents()
        XCTAssertTrue(wake.isWoken)
        // The wait must not sleep through it: a lost wake-up would block for the whole 20 s.
        let waited = seconds { _ = backend.window.waitForEvents(timeout: 20) }
        XCTAssertLessThan(waited, 10, "the wait ended at once for the wake that came before it")

        // After a reset with nothing handed over, the wait does wait (here for its short time-out),
        // and a wake from another thread during it ends it.
        wake.reset()
        XCTAssertFalse(wake.isWoken)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { wake.wake() }
        let woken = seconds { _ = backend.window.waitForEvents(timeout: 20) }
        XCTAssertLessThan(woken, 10, "a wake during the wait ends it")
        XCTAssertTrue(wake.isWoken)
    }
}
