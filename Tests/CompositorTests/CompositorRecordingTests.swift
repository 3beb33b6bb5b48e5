import XCTest
@testable import Compositor

/// The compositor's walk, uploads and texture lifetimes, checked against the recording backend.
@MainActor
final class CompositorRecordingTests: XCTestCase {
    private func makeCompositor(width: Int = 200, height: Int = 100, maxTexture: Int = Int.max,
                                budget: Int = 256 << 20) -> (Compositor, RecordingRenderBackend) {
        let backend = RecordingRenderBackend(width: width, height: height, maximumTextureSize: maxTexture)
        let compositor = Compositor(backend: backend, configuration: .init(textureBudgetBytes: budget))
        return (compositor, backend)
    }

    private func layer(_ name: String, _ frame: Rect, contents: Bitmap? = nil, background: Color? = nil) -> Layer {
        let layer = Layer(name: name)
        layer.frame = frame
        layer.contents = contents
        layer.backgroundColor = background
        return layer
    }

    func testDrawsInTreeOrderWithZPositionAndOffsets() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let a = layer("a", Rect(x: 10, y: 10, width: 20, height: 20), contents: TestContent.solid(.white))
        let b = layer("b", Rect(x: 5, y: 5, width: 30, height: 30), contents: TestContent.solid(.black))
        let child = layer("child", Rect(x: 1, y: 2, width: 4, height: 4), contents: TestContent.solid(.white))
        root.addSublayer(a)
        root.addSublayer(b)
        a.addSublayer(child)
        a.zPosition = 1  // a (and its child) now draw after b
        compositor.render(root)
        let destinations = backend.textureDraws.map(\.destination)
        XCTAssertEqual(destinations, [
            Rect(x: 5, y: 5, width: 30, height: 30),
            Rect(x: 10, y: 10, width: 20, height: 20),
            Rect(x: 11, y: 12, width: 4, height: 4),
        ])
    }

    func testEachContentsUploadsOnceOverAHundredFrames() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        var bitmaps: [Bitmap] = []
        for i in 0..<10 {
            let bitmap = TestContent.solid(Color(red: UInt8(i * 20), green: 0, blue: 0))
            bitmaps.append(bitmap)
            root.addSublayer(layer("l\(i)", Rect(x: Double(i * 15), y: 0, width: 10, height: 10), contents: bitmap))
        }
        var uploadBytes = 0
        for _ in 0..<100 { uploadBytes += compositor.render(root).uploadBytes }
        XCTAssertEqual(backend.textureUploads, 10)
        XCTAssertEqual(uploadBytes, 10 * 8 * 8 * 4)
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 0)
        XCTAssertEqual(compositor.lastFrameStatistics.uploadBytes, 0, "an unchanged scene uploads nothing")
        XCTAssertEqual(compositor.lastFrameStatistics.liveTextureBytes, 10 * 8 * 8 * 4)

        // Changing one layer's contents uploads that one only.
        backend.reset()
        let replaced = root.sublayers[3]
        replaced.contents = TestContent.solid(.white)
        let stats = compositor.render(root)
        XCTAssertEqual(stats.uploads, 1)
        guard case let .makeTexture(_, _, _, identity) = backend.calls.first(where: {
            if case .makeTexture = $0 { return true } else { return false }
        }) else { return XCTFail("no upload recorded") }
        XCTAssertEqual(identity, replaced.contents?.identity)
        // The old bitmap is still held by `bitmaps`, so its texture may stay until evicted; once the last
        // copy goes, the texture is destroyed on the next frame.
        bitmaps.removeAll()
        let afterRelease = compositor.render(root)
        XCTAssertEqual(afterRelease.texturesReleased, 1)
        XCTAssertEqual(afterRelease.liveTextures, 10)
    }

    func testSharedBitmapUploadsOnce() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let shared = TestContent.solid(.white)
        for i in 0..<5 { root.addSublayer(layer("l\(i)", Rect(x: Double(i * 10), y: 0, width: 8, height: 8), contents: shared)) }
        compositor.render(root)
        XCTAssertEqual(backend.textureUploads, 1)
        XCTAssertEqual(backend.textureDraws.count, 5)
    }

    func testBudgetEvictsLeastRecentlyDrawnAndReuploadsWhenDrawnAgain() async {
        // Each bitmap is 8×8×4 = 256 bytes; the budget holds two.
        let (compositor, backend) = makeCompositor(budget: 512)
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let layers = (0..<3).map { i in
            layer("l\(i)", Rect(x: Double(i * 10), y: 0, width: 8, height: 8),
                  contents: TestContent.solid(Color(red: UInt8(i * 50), green: 9, blue: 9)))
        }
        root.addSublayer(layers[0])
        compositor.render(root)            // frame 1: l0
        layers[0].isHidden = true
        root.addSublayer(layers[1])
        compositor.render(root)            // frame 2: l1
        root.addSublayer(layers[2])
        let stats = compositor.render(root) // frame 3: l1, l2 → over budget, l0 is the oldest
        XCTAssertEqual(stats.evictions, 1)
        XCTAssertFalse(compositor.isResident(layers[0].contents!))
        XCTAssertTrue(compositor.isResident(layers[1].contents!))
        XCTAssertLessThanOrEqual(compositor.liveTextureBytes, 512)

        backend.reset()
        layers[0].isHidden = false
        let again = compositor.render(root)
        XCTAssertEqual(again.uploads, 1, "the evicted bitmap is uploaded again from the layer's contents")
        XCTAssertEqual(backend.textureDraws.count, 3)
    }

    func testFrameDrawingMoreThanTheBudgetKeepsEverythingItShows() async {
        let (compositor, backend) = makeCompositor(budget: 100)
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        for i in 0..<4 { root.addSublayer(layer("l\(i)", Rect(x: Double(i * 10), y: 0, width: 8, height: 8),
                                                contents: TestContent.solid(Color(red: UInt8(i), green: 0, blue: 0)))) }
        let stats = compositor.render(root)
        XCTAssertEqual(stats.evictions, 0)
        XCTAssertEqual(backend.textureDraws.count, 4)
    }

    func testRendererResetDropsTexturesAndReuploadsLazily() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let clipped = layer("rounded", Rect(x: 0, y: 0, width: 40, height: 40), contents: TestContent.solid(.white))
        clipped.cornerRadius = 8
        clipped.cornerRoundingMode = .clipping
        clipped.cornerClipColor = .black
        root.addSublayer(clipped)
        root.addSublayer(layer("plain", Rect(x: 50, y: 0, width: 10, height: 10), contents: TestContent.solid(.black)))
        compositor.render(root)
        XCTAssertEqual(backend.liveTextures.count, 2 + 4)  // two contents, four corner pieces

        for event in [BackendEvent.renderTargetsReset, .renderDeviceReset] {
            backend.queuedEvents = [event, .input(.quit)]
            let input = compositor.pollEvents()
            XCTAssertEqual(input, [.quit], "resets are handled, not passed on")
            XCTAssertTrue(backend.liveTextures.isEmpty)
            let stats = compositor.render(root)
            XCTAssertEqual(stats.rendererResets, 1)
            XCTAssertEqual(stats.uploads, 2)
            XCTAssertEqual(backend.liveTextures.count, 6)
        }
    }

    func testContentsOverTheTextureLimitAreTiled() async {
        let (compositor, backend) = makeCompositor(width: 400, height: 400, maxTexture: 64)
        let root = layer("root", Rect(x: 0, y: 0, width: 400, height: 400))
        root.addSublayer(layer("big", Rect(x: 0, y: 0, width: 150, height: 100), contents: TestContent.gradient(width: 150, height: 100)))
        let stats = compositor.render(root)
        // 150 = 64 + 64 + 22, 100 = 64 + 36 → 3 × 2 tiles.
        XCTAssertEqual(stats.uploads, 6)
        XCTAssertEqual(stats.uploadBytes, 150 * 100 * 4)
        let destinations = Set(backend.textureDraws.map(\.destination))
        XCTAssertEqual(destinations, [
            Rect(x: 0, y: 0, width: 64, height: 64), Rect(x: 64, y: 0, width: 64, height: 64),
            Rect(x: 128, y: 0, width: 22, height: 64), Rect(x: 0, y: 64, width: 64, height: 36),
            Rect(x: 64, y: 64, width: 64, height: 36), Rect(x: 128, y: 64, width: 22, height: 36),
        ])
    }

    func testHiddenAndTransparentSubtreesAreSkippedAndOpacityMultiplies() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let parent = layer("parent", Rect(x: 0, y: 0, width: 50, height: 50), contents: TestContent.solid(.white))
        parent.opacity = 0.5
        let child = layer("child", Rect(x: 0, y: 0, width: 10, height: 10), contents: TestContent.solid(.white))
        child.opacity = 0.5
        parent.addSublayer(child)
        let hidden = layer("hidden", Rect(x: 60, y: 0, width: 10, height: 10), contents: TestContent.solid(.black))
        hidden.isHidden = true
        hidden.addSublayer(layer("under-hidden", Rect(x: 0, y: 0, width: 5, height: 5), contents: TestContent.solid(.black)))
        let clear = layer("clear", Rect(x: 80, y: 0, width: 10, height: 10), contents: TestContent.solid(.black))
        clear.opacity = .nan
        root.addSublayer(parent)
        root.addSublayer(hidden)
        root.addSublayer(clear)
        compositor.render(root)
        let opacities = backend.calls.compactMap { call -> Double? in
            if case let .drawTexture(_, _, _, opacity) = call { return opacity } else { return nil }
        }
        XCTAssertEqual(opacities, [0.5, 0.25])
        XCTAssertEqual(backend.textureUploads, 2, "hidden and NaN-opacity layers upload nothing")
    }

    /// A bind is counted when a draw call takes another texture than the previous draw call; a fill in
    /// between leaves no texture bound, and every frame starts with none.
    func testTextureBindsCountChangesOfTextureBetweenDrawCalls() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let shared = TestContent.solid(.white)
        // Translucent, so d's background still shows under it and is filled.
        let other = TestContent.solid(Color(red: 0, green: 0, blue: 0, alpha: 128))
        root.addSublayer(layer("a", Rect(x: 0, y: 0, width: 10, height: 10), contents: shared))
        root.addSublayer(layer("b", Rect(x: 20, y: 0, width: 10, height: 10), contents: shared))   // same texture
        root.addSublayer(layer("c", Rect(x: 40, y: 0, width: 10, height: 10), contents: other))    // bind
        root.addSublayer(layer("d", Rect(x: 60, y: 0, width: 10, height: 10), contents: other,
                               background: Color(rgb: 0x336699)))                                 // fill, bind again
        root.addSublayer(layer("e", Rect(x: 80, y: 0, width: 10, height: 10), contents: other))    // same texture
        for frame in 1...2 {
            backend.reset()
            let stats = compositor.render(root)
            XCTAssertEqual(backend.textureUploads, frame == 1 ? 2 : 0, "two bitmaps, two textures, made once")
            XCTAssertEqual(backend.textureDraws.count, 5, "frame \(frame)")
            XCTAssertEqual(stats.drawCalls, 6, "five copies and one fill, frame \(frame)")
            XCTAssertEqual(stats.textureBinds, 3, "a, c, and d's contents after its fill; frame \(frame) starts unbound")
        }
    }

    /// A background under opaque contents that fill the layer is not filled: nothing of it would
    /// show. Translucent contents, a rounded layer or a translucent layer keep the fill.
    func testOpaqueContentsHideTheirBackgroundWithoutAFill() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let opaque = TestContent.solid(.white)
        XCTAssertTrue(opaque.isOpaque)
        let translucent = TestContent.solid(Color(red: 0, green: 0, blue: 0, alpha: 128))
        root.addSublayer(layer("covered", Rect(x: 0, y: 0, width: 10, height: 10), contents: opaque, background: .black))
        root.addSublayer(layer("shows", Rect(x: 20, y: 0, width: 10, height: 10), contents: translucent, background: .black))
        let faded = layer("faded", Rect(x: 40, y: 0, width: 10, height: 10), contents: opaque, background: .black)
        faded.opacity = 0.5
        root.addSublayer(faded)
        let stats = compositor.render(root)
        let fills = backend.calls.filter { if case .fill = $0 { return true } else { return false } }.count
        XCTAssertEqual(fills, 2, "the translucent contents' and the faded layer's backgrounds; not the covered one")
        XCTAssertEqual(stats.drawCalls, 5)
    }

    func testClipsToBoundsSetsTheIntersectedClipAndCullsOutside() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let outer = layer("outer", Rect(x: 10, y: 10, width: 100, height: 50), background: .white)
        outer.clipsToBounds = true
        let inner = layer("inner", Rect(x: 50, y: 20, width: 100, height: 100), background: .black)
        inner.clipsToBounds = true
        let deep = layer("deep", Rect(x: 10, y: 10, width: 10, height: 10), background: .white)
        let outside = layer("outside", Rect(x: 200, y: 0, width: 10, height: 10), background: .white)
        inner.addSublayer(deep)
        outer.addSublayer(inner)
        outer.addSublayer(outside)
        root.addSublayer(outer)
        let stats = compositor.render(root)
        let clips: [PixelRect?] = backend.calls.compactMap { call -> PixelRect?? in
            if case let .setClip(rect) = call { return .some(rect) } else { return .none }
        }
        XCTAssertEqual(clips, [
            PixelRect(x: 0, y: 0, width: 200, height: 100),   // outer, drawn in the output's clip
            PixelRect(x: 10, y: 10, width: 100, height: 50),  // inner, clipped by outer
            PixelRect(x: 60, y: 30, width: 50, height: 30),   // deep, clipped by outer ∩ inner
            nil,
        ])
        XCTAssertEqual(stats.layersCulled, 1, "the sublayer outside its clipping parent is not drawn")
        XCTAssertEqual(stats.layersDrawn, 3)
    }

    func testBadGeometryHasDefinedResults() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let bad: [Rect] = [
            Rect(x: .nan, y: 0, width: 10, height: 10),          // NaN origin → x = 0, drawn
            Rect(x: 0, y: 0, width: .nan, height: 10),           // NaN side → 0, not drawn
            Rect(x: 0, y: 0, width: -10, height: 10),            // negative side → 0, not drawn
            Rect(x: .infinity, y: 0, width: 10, height: 10),     // infinite origin → 0, drawn
            Rect(x: 0, y: 0, width: .infinity, height: 1e300),   // infinite side → 0, not drawn
            Rect(x: -5, y: 0, width: 1e301, height: 10),         // absurd side → clamped, drawn
        ]
        for (i, frame) in bad.enumerated() {
            let l = layer("bad\(i)", frame, contents: TestContent.solid(.white))
            l.cornerRadius = .nan
            root.addSublayer(l)
        }
        let negative = layer("negative-parent", Rect(x: 20, y: 20, width: -5, height: -5))
        negative.addSublayer(layer("child-of-negative", Rect(x: 1, y: 1, width: 4, height: 4), contents: TestContent.solid(.white)))
        root.addSublayer(negative)
        compositor.render(root)
        let destinations = backend.textureDraws.map(\.destination)
        XCTAssertEqual(destinations, [
            Rect(x: 0, y: 0, width: 10, height: 10),
            Rect(x: 0, y: 0, width: 10, height: 10),
            Rect(x: -5, y: 0, width: Rect.drawableLimit, height: 10),
            Rect(x: 21, y: 21, width: 4, height: 4),
        ])
        for destination in destinations { XCTAssertTrue(destination.isFinite) }
    }

    func testRadiusLargerThanHalfASideIsClamped() async {
        let l = Layer()
        l.frame = Rect(x: 0, y: 0, width: 40, height: 20)
        l.cornerRadius = 100
        XCTAssertEqual(l.effectiveCornerRadii, CornerRadii(10))
        l.maskedCorners = [.topLeft, .bottomRight]
        l.cornerRadius = 30
        // The top side holds only one radius, so 30 fits 40 but the left side (20) limits it to 20.
        XCTAssertEqual(l.effectiveCornerRadii, CornerRadii(topLeft: 20, topRight: 0, bottomLeft: 0, bottomRight: 20))
    }

    func testEmptyBitmapsDrawAndUploadNothing() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        root.addSublayer(layer("empty", Rect(x: 0, y: 0, width: 10, height: 10), contents: .empty()))
        let stats = compositor.render(root)
        XCTAssertEqual(stats.uploads, 0)
        XCTAssertTrue(backend.textureDraws.isEmpty)
    }

    func testRefusedTextureDrawsNothingAndRetries() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        root.addSublayer(layer("l", Rect(x: 0, y: 0, width: 10, height: 10), contents: TestContent.solid(.white)))
        backend.refusesTextures = true
        XCTAssertEqual(compositor.render(root).uploads, 0)
        backend.refusesTextures = false
        XCTAssertEqual(compositor.render(root).uploads, 1)
    }

    func testLayerAddedToTwoParentsMovesAndCyclesAreRefused() async {
        let first = Layer(name: "first"), second = Layer(name: "second"), child = Layer(name: "child")
        XCTAssertTrue(first.addSublayer(child))
        XCTAssertTrue(second.addSublayer(child))
        XCTAssertTrue(first.sublayers.isEmpty)
        XCTAssertTrue(second.sublayers.first === child)
        XCTAssertTrue(child.superlayer === second)

        let grandchild = Layer(name: "grandchild")
        child.addSublayer(grandchild)
        XCTAssertFalse(grandchild.addSublayer(second), "an ancestor cannot become a descendant")
        XCTAssertFalse(child.addSublayer(child), "a layer cannot contain itself")
        XCTAssertTrue(second.superlayer == nil && grandchild.sublayers.isEmpty)
    }

    func testCompositorClipDrawsGeometryAndClippingDrawsCornerPieces() async {
        let (compositor, backend) = makeCompositor()
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let geometry = layer("geometry", Rect(x: 0, y: 0, width: 40, height: 40), contents: TestContent.solid(.white), background: .black)
        geometry.cornerRadius = 8
        geometry.cornerRoundingMode = .compositorClip
        let pieces = layer("pieces", Rect(x: 50, y: 0, width: 40, height: 40), contents: TestContent.solid(.white))
        pieces.cornerRadius = 8
        pieces.maskedCorners = [.topLeft, .bottomRight]
        pieces.cornerRoundingMode = .clipping
        pieces.cornerClipColor = .black
        let fallback = layer("fallback", Rect(x: 100, y: 0, width: 40, height: 40), contents: TestContent.solid(.white))
        fallback.cornerRadius = 8
        fallback.cornerRoundingMode = .clipping  // no clip colour: falls back to compositorClip
        root.addSublayer(geometry)
        root.addSublayer(pieces)
        root.addSublayer(fallback)
        let stats = compositor.render(root)
        let geometryCalls = backend.calls.filter { if case .drawGeometry = $0 { return true } else { return false } }
        XCTAssertEqual(geometryCalls.count, 3, "background and contents of `geometry`, contents of `fallback`")
        XCTAssertEqual(stats.cornerPieceDraws, 2, "only the masked corners get pieces")
        // Pieces are drawn after the layer's own contents, at its corners.
        let draws = backend.textureDraws.map(\.destination)
        XCTAssertEqual(draws, [
            Rect(x: 50, y: 0, width: 40, height: 40),
            Rect(x: 50, y: 0, width: 8, height: 8),
            Rect(x: 82, y: 32, width: 8, height: 8),
        ])
        // Pieces are cached per (radius, colour, corner): a second frame makes no texture.
        backend.reset()
        compositor.render(root)
        XCTAssertEqual(backend.textureUploads, 0)
    }

    func testScaleMapsPointsToPixels() async {
        let backend = RecordingRenderBackend(width: 400, height: 200)
        let compositor = Compositor(backend: backend, scale: 2)
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        root.addSublayer(layer("l", Rect(x: 10, y: 5, width: 20, height: 10), contents: TestContent.solid(.white, width: 40, height: 20, scale: 2)))
        compositor.render(root)
        XCTAssertEqual(backend.textureDraws.map(\.destination), [Rect(x: 20, y: 10, width: 40, height: 20)])
        XCTAssertEqual(compositor.viewportSize, Size(width: 200, height: 100))
    }

    /// Corner pieces are kept within their byte budget: pieces of radii no longer drawn go, the ones
    /// the frame draws stay, whatever the budget.
    func testCornerPieceCacheStaysWithinItsBudget() async {
        let backend = RecordingRenderBackend(width: 200, height: 100, maximumTextureSize: .max)
        let compositor = Compositor(backend: backend, configuration: .init(cornerPieceBudgetBytes: 4 * 20 * 20 * 4))
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let rounded = layer("rounded", Rect(x: 0, y: 0, width: 60, height: 60), contents: TestContent.solid(.white))
        rounded.cornerRoundingMode = .clipping
        rounded.cornerClipColor = .black
        root.addSublayer(rounded)
        for radius in 1...20 {
            rounded.cornerRadius = Double(radius)
            _ = compositor.render(root)
            XCTAssertLessThanOrEqual(compositor.cornerPieceCacheBytes, max(4 * 20 * 20 * 4, 4 * radius * radius * 4),
                                     "radius \(radius)")
            XCTAssertEqual(compositor.lastFrameStatistics.cornerPieceDraws, 4)
        }
        // Four pieces of radius 20 fill the budget alone; everything older went.
        XCTAssertEqual(compositor.cornerPieceCacheBytes, 4 * 20 * 20 * 4)
        XCTAssertEqual(backend.liveTextures.count, 4 + 1, "four pieces and the contents")
        // A tiny budget still keeps the pieces the frame draws.
        compositor.configuration.cornerPieceBudgetBytes = 0
        _ = compositor.render(root)
        XCTAssertEqual(compositor.lastFrameStatistics.cornerPieceDraws, 4)
        XCTAssertEqual(compositor.cornerPieceCacheBytes, 4 * 20 * 20 * 4)
    }

    /// Corner pieces go least recently drawn first: a radius drawn again outlives one drawn since.
    func testCornerPiecesGoLeastRecentlyDrawnFirst() async {
        func bytes(_ radii: Int...) -> Int { radii.reduce(0) { $0 + 4 * $1 * $1 * 4 } }
        let backend = RecordingRenderBackend(width: 200, height: 100, maximumTextureSize: .max)
        let compositor = Compositor(backend: backend, configuration: .init(cornerPieceBudgetBytes: bytes(5, 7)))
        let root = layer("root", Rect(x: 0, y: 0, width: 200, height: 100))
        let rounded = layer("rounded", Rect(x: 0, y: 0, width: 60, height: 60), contents: TestContent.solid(.white))
        rounded.cornerRoundingMode = .clipping
        rounded.cornerClipColor = .black
        root.addSublayer(rounded)
        for radius in [5, 6, 5] {
            rounded.cornerRadius = Double(radius)
            XCTAssertEqual(compositor.render(root).evictions, 0)
        }
        XCTAssertEqual(compositor.cornerPieceCacheBytes, bytes(5, 6))
        rounded.cornerRadius = 7
        XCTAssertEqual(compositor.render(root).evictions, 4, "radius 6's four pieces, the least recently drawn")
        XCTAssertEqual(compositor.cornerPieceCacheBytes, bytes(5, 7))
        backend.reset()
        rounded.cornerRadius = 5
        compositor.render(root)
        XCTAssertFalse(backend.calls.contains { if case .makeTexture = $0 { return true } else { return false } },
                       "radius 5 was kept")
    }
}
