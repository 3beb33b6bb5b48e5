import XCTest
@testable import Compositor
import TestSupport

/// Offscreen render tests: scenes drawn by the SDL backend under the dummy video driver (the software
/// renderer), read back and compared with the PNGs in `Goldens/`.
@MainActor
final class CompositorGoldenTests: XCTestCase {
    static let background = Color(rgb: 0x1E2630)

    private func makeCompositor(width: Double = 320, height: Double = 240, scale: Double = 1,
                                configuration: Compositor.Configuration = .init(clearColor: background))
        throws -> Compositor {
        let backend = try SDLRenderBackend(.init(title: "test", size: Size(width: width, height: height),
                                                 scale: scale, headless: true))
        XCTAssertEqual(backend.rendererName, "software")
        return Compositor(backend: backend, scale: scale, configuration: configuration)
    }

    private func root(width: Double = 320, height: Double = 240) -> Layer {
        let root = Layer(name: "root")
        root.frame = Rect(x: 0, y: 0, width: width, height: height)
        return root
    }

    private func add(_ parent: Layer, _ frame: Rect, contents: Bitmap? = nil, background: Color? = nil,
                     configure: (Layer) -> Void = { _ in }) -> Layer {
        let layer = Layer()
        layer.frame = frame
        layer.contents = contents
        layer.backgroundColor = background
        configure(layer)
        parent.addSublayer(layer)
        return layer
    }

    // MARK: Scenes

    func testPlainLayers() async throws {
        let compositor = try makeCompositor()
        let scene = root()
        _ = add(scene, Rect(x: 20, y: 20, width: 80, height: 60), background: Color(rgb: 0xE0483C))
        _ = add(scene, Rect(x: 120, y: 20, width: 160, height: 100), contents: TestContent.gradient(width: 160, height: 100))
        _ = add(scene, Rect(x: 60, y: 50, width: 100, height: 50), background: Color(rgb: 0x3C8CE0, alpha: 160))
        _ = add(scene, Rect(x: 20, y: 140, width: 120, height: 80),
                contents: TestContent.photo("coffee.jpg", size: Size(width: 120, height: 80)))
        // Contents drawn stretched to a frame of another size.
        _ = add(scene, Rect(x: 160, y: 140, width: 140, height: 80), contents: TestContent.gradient(width: 35, height: 20))
        GoldenImage.assertMatches(compositor.capture(scene), named: "plain-layers", in: "CompositorTests")
    }

    func testOpacity() async throws {
        let compositor = try makeCompositor()
        let scene = root()
        _ = add(scene, Rect(x: 0, y: 0, width: 320, height: 240), contents: checkerboard(width: 320, height: 240))
        for (i, opacity) in [0.25, 0.5, 0.75, 1.0].enumerated() {
            _ = add(scene, Rect(x: 10 + Double(i) * 77, y: 20, width: 68, height: 90),
                    contents: TestContent.gradient(width: 68, height: 90)) { $0.opacity = opacity }
        }
        // Opacity multiplies down the tree: 0.5 × 0.5 on the child.
        let parent = add(scene, Rect(x: 20, y: 130, width: 280, height: 90), background: Color(rgb: 0x2FB870)) {
            $0.opacity = 0.5
        }
        _ = add(parent, Rect(x: 150, y: 15, width: 110, height: 60), background: Color(rgb: 0xF0F0F0)) { $0.opacity = 0.5 }
        _ = add(parent, Rect(x: 20, y: 15, width: 110, height: 60), background: Color(rgb: 0xF0F0F0))
        GoldenImage.assertMatches(compositor.capture(scene), named: "opacity", in: "CompositorTests")
    }

    func testNestingAndClipping() async throws {
        let compositor = try makeCompositor()
        let scene = root()
        for (column, clips) in [true, false].enumerated() {
            let x = 20 + Double(column) * 160
            let parent = add(scene, Rect(x: x, y: 30, width: 120, height: 100), background: Color(rgb: 0x44546A)) {
                $0.clipsToBounds = clips
            }
            let child = add(parent, Rect(x: 60, y: 50, width: 90, height: 80),
                            contents: TestContent.gradient(width: 90, height: 80)) { $0.clipsToBounds = clips }
            _ = add(child, Rect(x: -30, y: 40, width: 60, height: 60), background: Color(rgb: 0xF0C040, alpha: 220))
        }
        // Clip inside a clip inside a clip, offset from each other.
        let a = add(scene, Rect(x: 30, y: 170, width: 260, height: 50), background: Color(rgb: 0x603050)) { $0.clipsToBounds = true }
        let b = add(a, Rect(x: 40, y: -20, width: 120, height: 60), background: Color(rgb: 0x8050A0)) { $0.clipsToBounds = true }
        _ = add(b, Rect(x: -20, y: 10, width: 200, height: 25), contents: TestContent.gradient(width: 200, height: 25))
        GoldenImage.assertMatches(compositor.capture(scene), named: "nesting-clipping", in: "CompositorTests")
    }

    func testCornerModesAtEachRadius() async throws {
        for scale in [1.0, 2.0] {
            for mode in CornerRoundingMode.allCases {
                let compositor = try makeCompositor(scale: scale)
                GoldenImage.assertMatches(compositor.capture(cornerScene(mode: mode, scale: scale)),
                                          named: "corners-\(mode)@\(Int(scale))x", in: "CompositorTests")
            }
        }
    }

    func testPerCornerMasks() async throws {
        for mode in CornerRoundingMode.allCases {
            let compositor = try makeCompositor()
            let scene = root()
            let masks: [CornerMask] = [[.topLeft], [.topRight, .bottomLeft], [.topLeft, .topRight], [.topRight, .bottomLeft, .bottomRight]]
            for (i, mask) in masks.enumerated() {
                let frame = Rect(x: 15 + Double(i % 2) * 155, y: 15 + Double(i / 2) * 115, width: 135, height: 95)
                let radii = CornerRadii(28, corners: mask)
                let contents = mode == .precomposited
                    ? TestContent.photo("chelsea.jpg", size: frame.size, radii: radii)
                    : TestContent.photo("chelsea.jpg", size: frame.size)
                _ = add(scene, frame, contents: contents) {
                    $0.cornerRadius = 28
                    $0.maskedCorners = mask
                    $0.cornerRoundingMode = mode
                    $0.cornerClipColor = CompositorGoldenTests.background
                }
            }
            GoldenImage.assertMatches(compositor.capture(scene), named: "corner-masks-\(mode)", in: "CompositorTests")
        }
    }

    /// Top row: photo contents; bottom row: a background colour only. Radii 0, 8, 24 and half the short side.
    private func cornerScene(mode: CornerRoundingMode, scale: Double) -> Layer {
        let scene = root()
        let size = Size(width: 70, height: 96)
        for (i, radius) in [0.0, 8.0, 24.0, size.width / 2].enumerated() {
            let x = 8 + Double(i) * 78
            let contents = mode == .precomposited
                ? TestContent.photo("astronaut.png", size: size, scale: scale, radii: CornerRadii(radius))
                : TestContent.photo("astronaut.png", size: size, scale: scale)
            for (row, hasContents) in [true, false].enumerated() {
                _ = add(scene, Rect(origin: Point(x: x, y: 16 + Double(row) * 112), size: size),
                        contents: hasContents ? contents : nil,
                        background: hasContents ? nil : Color(rgb: 0xE8A23A)) {
                    $0.cornerRadius = radius
                    $0.cornerRoundingMode = mode
                    $0.cornerClipColor = CompositorGoldenTests.background
                }
            }
        }
        return scene
    }

    private func checkerboard(width: Int, height: Int) -> Bitmap {
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width { pixels[y * width + x] = ((x / 16 + y / 16) % 2 == 0) ? 0xFF40_4040 : 0xFFC0_C0C0 }
        }
        return try! Bitmap(width: width, height: height, premultipliedARGB: pixels)
    }

    // MARK: Pixels survive eviction, resets and tiling

    private func mixedScene() -> Layer {
        let scene = root()
        _ = add(scene, Rect(x: 10, y: 10, width: 150, height: 100), contents: TestContent.gradient(width: 150, height: 100))
        _ = add(scene, Rect(x: 170, y: 10, width: 140, height: 100), contents: TestContent.photo("rocket.jpg", size: Size(width: 140, height: 100))) {
            $0.cornerRadius = 16
            $0.cornerRoundingMode = .clipping
            $0.cornerClipColor = CompositorGoldenTests.background
        }
        _ = add(scene, Rect(x: 10, y: 120, width: 300, height: 110), contents: TestContent.gradient(width: 300, height: 110)) {
            $0.cornerRadius = 30
            $0.cornerRoundingMode = .compositorClip
        }
        return scene
    }

    func testEvictionAndResetReuploadWithIdenticalPixels() async throws {
        // A budget below one frame's needs: everything not drawn in a frame is evicted at its end.
        let compositor = try makeCompositor(configuration: .init(textureBudgetBytes: 1, clearColor: Self.background))
        let scene = mixedScene()
        let first = try XCTUnwrap(compositor.capture(scene))
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)

        // Hide everything for a frame: the budget evicts all of it.
        scene.sublayers.forEach { $0.isHidden = true }
        XCTAssertEqual(compositor.render(scene).evictions, 3)
        XCTAssertEqual(compositor.liveTextureBytes - 4 * 16 * 16 * 4, 0, "only corner pieces remain")
        scene.sublayers.forEach { $0.isHidden = false }
        let afterEviction = try XCTUnwrap(compositor.capture(scene))
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)
        XCTAssertEqual(GoldenImage.compare(afterEviction, first, tolerance: 0).0.differingPixels, 0)

        // A device reset arrives through SDL's event queue.
        let backend = try XCTUnwrap(compositor.backend as? SDLRenderBackend)
        backend.window.pushEvent(.renderDeviceReset)
        _ = compositor.pollEvents()
        let afterReset = try XCTUnwrap(compositor.capture(scene))
        XCTAssertEqual(compositor.lastFrameStatistics.rendererResets, 1)
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)
        XCTAssertEqual(GoldenImage.compare(afterReset, first, tolerance: 0).0.differingPixels, 0)

        backend.window.pushEvent(.renderTargetsReset)
        _ = compositor.pollEvents()
        let afterTargetsReset = try XCTUnwrap(compositor.capture(scene))
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)
        XCTAssertEqual(GoldenImage.compare(afterTargetsReset, first, tolerance: 0).0.differingPixels, 0)
    }

    func testTiledContentsMatchUntiled() async throws {
        let scene = mixedScene()
        let untiled = try XCTUnwrap(try makeCompositor().capture(scene))
        let tiledCompositor = try makeCompositor(configuration: .init(maximumTextureSide: 64, clearColor: Self.background))
        let tiled = try XCTUnwrap(tiledCompositor.capture(scene))
        XCTAssertGreaterThan(tiledCompositor.lastFrameStatistics.uploads, 3)
        let (difference, diff) = GoldenImage.compare(tiled, untiled, tolerance: 2)
        if difference.differingPixels > 0 {
            try? FileManager.default.createDirectory(at: GoldenImage.outputDirectory, withIntermediateDirectories: true)
            try? tiled.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("tiled-actual.png").path)
            try? diff?.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("tiled-diff.png").path)
        }
        XCTAssertEqual(difference.differingPixels, 0, "max delta \(difference.maximumChannelDelta)")
    }

    func testUnchangedSceneUploadsNothingOverAHundredFrames() async throws {
        let compositor = try makeCompositor()
        let scene = mixedScene()
        var bytes = 0
        for _ in 0..<100 { bytes += compositor.render(scene).uploadBytes }
        XCTAssertEqual(bytes, (150 * 100 + 140 * 100 + 300 * 110) * 4)
        XCTAssertEqual(compositor.lastFrameStatistics.uploadBytes, 0)
    }
}
