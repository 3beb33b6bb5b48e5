import Foundation
import Synchronization
import TestSupport
import Testing
@testable import Compositor

/// Layers belong to the UI thread (the main actor); a compositor and its backend belong to the thread
/// that made them (the UI thread, or a compositor thread of their own). The compiler refuses a layer
/// call from another isolation and a compositor or backend crossing threads (neither is `Sendable`);
/// code that forces one across anyway (here through `callIgnoringIsolation` and a box, as an
/// `@unchecked Sendable` wrapper or a C callback might) meets a precondition that names the operation
/// and the thread, in release builds too. Checked in a child process (an exit test), since the check
/// traps.
@Suite struct UIThreadTests {
    /// Smuggles a value past the compiler, as careless code might.
    final class Smuggled<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Runs `body` on a new thread, ignoring its main-actor isolation, and waits for it.
    static func offTheUIThread(_ body: @escaping @Sendable @MainActor () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            callIgnoringIsolation(body)  // traps inside
            done.signal()
        }
        done.wait()
    }

    @Test func layerMutationOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let layer = await MainActor.run { Layer() }
            Self.offTheUIThread { layer.frame = Rect(x: 0, y: 0, width: 1, height: 1) }
        }
        ContractTrap.expectMessage(result, "Layer.frame must run on the UI thread")
    }

    @Test func makingALayerOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Self.offTheUIThread { _ = Layer() }
        }
        ContractTrap.expectMessage(result, "Layer.init must run on the UI thread")
    }

    @Test func pollingEventsOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let compositor = await MainActor.run { Smuggled(Compositor(backend: RecordingRenderBackend(width: 10, height: 10))) }
            Self.offTheUIThread { _ = compositor.value.pollEvents() }
        }
        ContractTrap.expectMessage(result, "Compositor.pollEvents must run on the UI thread")
    }

    @Test func compositorOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let compositor = await MainActor.run { Smuggled(Compositor(backend: RecordingRenderBackend(width: 10, height: 10))) }
            Self.offTheUIThread { compositor.value.render(snapshot: nil) }
        }
        ContractTrap.expectMessage(result, "Compositor.render must run on the UI thread")
    }

    @Test func aBackendMadeOnACompositorThreadIsRefusedOnTheUIThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let made = DispatchSemaphore(value: 0)
            let box = Mutex<Smuggled<SDLRenderBackend>?>(nil)
            Thread.detachNewThread {
                let backend = try? SDLRenderBackend(.init(title: "own", size: Size(width: 8, height: 8), scale: 1, headless: true))
                box.withLock { $0 = backend.map { Smuggled($0) } }
                made.signal()
                Thread.sleep(forTimeInterval: 60)  // keeps its thread alive while the UI thread tries
            }
            made.wait()
            guard let backend = box.withLock({ $0 }) else { return }  // no SDL: exits 0, and the test fails
            await MainActor.run { _ = backend.value.window.clipboardText() }
        }
        ContractTrap.expectMessage(result, "SDLWindow.clipboardText must run on the compositor's thread")
    }

    /// A compositor whose frames go to a compositor thread draws nothing itself: asked to draw a
    /// snapshot on the UI thread, it says where its frames are drawn.
    @Test func drawingASnapshotOnTheUISideOfACompositorThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                guard let thread = try? CompositorThread(backend: .init(title: "threaded", size: Size(width: 8, height: 8),
                                                                        scale: 1, headless: true)) else { return }
                let compositor = Compositor(thread: thread)
                compositor.render(snapshot: nil)
            }
        }
        ContractTrap.expectMessage(result, "Compositor.render(snapshot:) draws: this compositor's frames are drawn on its compositor thread")
    }

    @Test func readingTheClipboardOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let backend = await MainActor.run {
                (try? SDLRenderBackend(.init(title: "clip", size: Size(width: 8, height: 8), scale: 1, headless: true))).map { Smuggled($0) }
            }
            guard let backend else { return }  // no SDL: exits 0, and the test fails
            Self.offTheUIThread { _ = backend.value.window.clipboardText() }
        }
        ContractTrap.expectMessage(result, "SDLWindow.clipboardText must run on the UI thread")
    }

    @Test func theMainActorPasses() async {
        await #expect(processExitsWith: .success) {
            await MainActor.run {
                let layer = Layer()
                layer.frame = Rect(x: 0, y: 0, width: 1, height: 1)
                let compositor = Compositor(backend: RecordingRenderBackend(width: 10, height: 10))
                compositor.render(layer)
            }
        }
    }
}
