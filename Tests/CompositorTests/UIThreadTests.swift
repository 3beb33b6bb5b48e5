import Foundation
import TestSupport
import Testing
@testable import Compositor

/// Layers, the compositor and the backends belong to the UI thread (the main actor). The compiler
/// refuses a call from another isolation; code that forces one across anyway (here through
/// `callIgnoringIsolation`, as an `@unchecked Sendable` box or a C callback might) meets a
/// precondition that names the operation, in release builds too. Checked in a child process (an exit
/// test), since the check traps.
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
            let compositor = await MainActor.run { Compositor(backend: RecordingRenderBackend(width: 10, height: 10)) }
            Self.offTheUIThread { _ = compositor.pollEvents() }
        }
        ContractTrap.expectMessage(result, "Compositor.pollEvents must run on the UI thread")
    }

    @Test func compositorOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let compositor = await MainActor.run { Compositor(backend: RecordingRenderBackend(width: 10, height: 10)) }
            Self.offTheUIThread { compositor.render(nil) }
        }
        ContractTrap.expectMessage(result, "Compositor.render must run on the UI thread")
    }

    @Test func openingAnSDLWindowOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Self.offTheUIThread {
                _ = try? SDLRenderBackend(.init(title: "off", size: Size(width: 8, height: 8), scale: 1, headless: true))
            }
        }
        ContractTrap.expectMessage(result, "SDLRenderBackend.init must run on the UI thread")
    }

    @Test func readingTheClipboardOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let backend = await MainActor.run {
                try? SDLRenderBackend(.init(title: "clip", size: Size(width: 8, height: 8), scale: 1, headless: true))
            }
            guard let backend else { return }  // no SDL: exits 0, and the test fails
            Self.offTheUIThread { _ = backend.clipboardText() }
        }
        ContractTrap.expectMessage(result, "SDLRenderBackend.clipboardText must run on the UI thread")
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
