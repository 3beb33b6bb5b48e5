import ArgumentParser
import Tessera

extension RenderDriver: ExpressibleByArgument {}

/// Where a benchmark draws: SDL's dummy video driver (headless) or a real window, through which of
/// SDL's renderers. `gallery --bench …` takes it from `--headless` (or no display) and `--renderer`.
/// - Thread: main
@MainActor
struct BenchmarkOutput {
    /// SDL's dummy video driver, with no window on any display (only the software renderer).
    var headless = true
    var renderDriver = RenderDriver.auto

    /// A window of `size` points through the renderer asked for, at `scale` pixels per point: 1 unless
    /// a benchmark measures drawing at a density (benchmarks compare pixels, not densities); fails
    /// when SDL cannot give that renderer here.
    func makeBackend(title: String, size: Size, scale: Double = 1) throws -> SDLRenderBackend {
        try SDLRenderBackend(.init(title: title, size: size, scale: scale, headless: headless, renderDriver: renderDriver))
    }

    /// The gallery's options for a benchmark that runs the app itself: `screen`, drawn where this
    /// output draws (headless or in a window, through its renderer).
    func galleryOptions(screen: GalleryOptions.Screen) -> GalleryOptions {
        var options = GalleryOptions()
        options.screen = screen
        options.headless = headless
        options.renderDriver = renderDriver
        return options
    }

    /// "renderer software, video driver dummy" (and the GL device, for OpenGL): the words every
    /// benchmark's report names its output with.
    static func describe(_ backend: SDLRenderBackend) -> String {
        "renderer \(backend.rendererName), video driver \(backend.window.videoDriverName)"
            + (backend.graphicsDeviceName.map { ", device \($0)" } ?? "")
    }

    /// The same words for an application's renderer, which may be on a compositor thread.
    static func describe(_ renderer: RendererDescription) -> String {
        "renderer \(renderer.rendererName), video driver \(renderer.videoDriverName)"
            + (renderer.graphicsDeviceName.map { ", device \($0)" } ?? "")
            + (renderer.compositorThread ? ", compositor thread" : "")
    }

    /// What the reports of the benchmarks that present nothing say instead.
    nonisolated static let noRenderer = "renderer none, video driver none (CPU only: nothing is presented)"
}

extension String {
    /// The string with spaces added on the right up to `width` characters, for the reports' columns
    /// (Foundation's `%-12@` does not pad on Linux).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
