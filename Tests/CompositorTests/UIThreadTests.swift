import Foundation
import TestSupport
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
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()  // this thread owns the UI
            let layer = Smuggled(Layer())
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                layer.value.frame = Rect(x: 0, y: 0, width: 1, height: 1)  // traps here
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "Layer.frame must run on the UI thread")
    }

    @Test func makingALayerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = Layer()  // traps here
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "Layer.init must run on the UI thread")
    }

    @Test func pollingEventsOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let compositor = Smuggled(Compositor(backend: RecordingRenderBackend(width: 10, height: 10)))
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = compositor.value.pollEvents()  // traps here
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "Compositor.pollEvents must run on the UI thread")
    }

    @Test func compositorOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let backend = RecordingRenderBackend(width: 10, height: 10)
            let compositor = Smuggled(Compositor(backend: backend))  // claims this thread
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                compositor.value.render(nil)  // traps here
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "Compositor.render must run on the UI thread")
    }

    @Test func openingAnSDLWindowOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? SDLRenderBackend(.init(title: "off", size: Size(width: 8, height: 8), scale: 1, headless: true))
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "SDLRenderBackend.init must run on the UI thread")
    }

    @Test func readingTheClipboardOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            UIThread.claim()
            guard let backend = try? SDLRenderBackend(.init(title: "clip", size: Size(width: 8, height: 8), scale: 1,
                                                             headless: true)) else { return }  // no SDL: exits 0, fails
            let smuggled = Smuggled(backend)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = smuggled.value.clipboardText()  // traps here
                done.signal()
            }
            done.wait()
        }
        ContractTrap.expectMessage(result, "SDLRenderBackend.clipboardText must run on the UI thread")
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
