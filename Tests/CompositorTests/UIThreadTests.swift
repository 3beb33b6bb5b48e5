import Foundation
import Testing
@testable import Compositor

/// Layers belong to the UI thread. The compiler already refuses to send a `Layer` (not `Sendable`) to
/// another thread; code that forces one across anyway meets a precondition, in release builds too.
/// Checked in a child process (an exit test), since the check traps.
@Suite struct UIThreadTests {
    /// Smuggles a non-Sendable value past the compiler, as careless code might.
    final class Smuggled<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    @Test func layerMutationOffTheUIThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            UIThread.claim()  // this thread owns the UI
            let layer = Smuggled(Layer())
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                layer.value.frame = Rect(x: 0, y: 0, width: 1, height: 1)  // traps here
                done.signal()
            }
            done.wait()
        }
    }

    @Test func compositorOffTheUIThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            let backend = RecordingRenderBackend(width: 10, height: 10)
            let compositor = Smuggled(Compositor(backend: backend))  // claims this thread
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                compositor.value.render(nil)  // traps here
                done.signal()
            }
            done.wait()
        }
    }

    @Test func theClaimingThreadPasses() async {
        await #expect(processExitsWith: .success) {
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                UIThread.claim()
                let layer = Layer()
                layer.frame = Rect(x: 0, y: 0, width: 1, height: 1)
                let compositor = Compositor(backend: RecordingRenderBackend(width: 10, height: 10))
                compositor.render(layer)
                done.signal()
            }
            done.wait()
        }
    }
}
