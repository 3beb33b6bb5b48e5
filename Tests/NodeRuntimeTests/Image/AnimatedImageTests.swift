import Compositor
import Foundation
import TestSupport
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Animated GIF, APNG and WebP: the decoder's canvas after each frame (disposal, blending,
/// transparency, delays, loop counts, hostile files), and the image node playing them on a virtual
/// frame clock: the frame due at each time on screen, loops, the memory held, pausing outside the
/// visible state and an idle host.
@MainActor
final class AnimatedImageTests: XCTestCase {
    private let red = Color(rgb: 0xFF0000), green = Color(rgb: 0x00FF00), blue = Color(rgb: 0x0000FF)
    private let white = Color(rgb: 0xFFFFFF), black = Color(rgb: 0x000000)
    private lazy var palette = [red, green, blue, white, black]

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    // MARK: Helpers

    /// The colours of a bitmap, row by row.
    private func colours(_ bitmap: Bitmap) -> [[Color]] {
        (0..<bitmap.height).map { y in (0..<bitmap.width).map { x in Color(premultipliedARGB: bitmap.pixel(x: x, y: y)) } }
    }

    /// Decodes the next frame and renders the whole canvas at its own size.
    private func nextFrame(_ decoder: AnimatedImageDecoder, file: StaticString = #filePath, line: UInt = #line) throws -> (delay: Double, pixels: [[Color]]) {
        let step = try decoder.advance()
        guard case .frame(let delay) = step else {
            XCTFail("expected a frame, got \(step)", file: file, line: line)
            return (0, [])
        }
        let target = ImageDecoder.Target(width: decoder.canvasWidth, height: decoder.canvasHeight, mode: .scaleToFill)
        let bitmap = try XCTUnwrap(try decoder.render(for: target), file: file, line: line)
        return (delay, colours(bitmap))
    }

    /// A 4×4 picture from rows of one-letter names: r g b w (opaque), . (transparent).
    private func picture(_ rows: [String]) -> [[Color]] {
        rows.map { row in
            row.map { ["r": red, "g": green, "b": blue, "w": white, ".": Color.clear][$0]! }
        }
    }

    /// Where each frame's image descriptor starts in a GIF the tests made (each follows a
    /// graphic-control extension: 21 F9 04, four bytes, 00).
    private func frameOffsets(_ gif: [UInt8]) -> [Int] {
        (0..<(gif.count - 8)).filter { gif[$0] == 0x21 && gif[$0 + 1] == 0xF9 && gif[$0 + 2] == 4 && gif[$0 + 7] == 0 && gif[$0 + 8] == 0x2C }
            .map { $0 + 8 }
    }

    private func open(_ bytes: [UInt8], name: String, limits: ImageDecoder.Limits = ImageDecoder.Limits()) throws -> AnimatedImageDecoder {
        try XCTUnwrap(try AnimatedImageDecoder.open(.data(bytes, name: name), limits: limits), "\(name) opens as an animation")
    }

    // MARK: GIF on the decoder

    /// The four disposal methods, transparency and delays, frame by frame.
    private func disposalGIF(loopCount: Int? = 2) -> [UInt8] {
        var corner = [UInt8](repeating: 2, count: 4)
        corner[0] = 4  // transparent in the frame: the pixel under it stays
        return AnimatedTestImages.gif(width: 4, height: 4, palette: palette, loopCount: loopCount, frames: [
            .filled(0, width: 4, height: 4, delay: 10, disposal: 1),
            .filled(1, left: 0, top: 0, width: 2, height: 2, delay: 20, disposal: 2),
            AnimatedTestImages.GIFFrame(left: 2, top: 2, width: 2, height: 2, indices: corner, delay: 0, disposal: 3, transparentIndex: 4),
            .filled(3, left: 3, top: 0, width: 1, height: 1, delay: 1, disposal: 1),
        ])
    }

    func testGIFFramesFollowDisposalTransparencyAndDelays() async throws {
        let decoder = try open(disposalGIF(), name: "disposal.gif")
        XCTAssertEqual([decoder.canvasWidth, decoder.canvasHeight], [4, 4])
        var frame = try nextFrame(decoder)
        XCTAssertEqual(frame.delay, 0.1, accuracy: 1e-9)
        XCTAssertEqual(frame.pixels, picture(["rrrr", "rrrr", "rrrr", "rrrr"]))
        frame = try nextFrame(decoder)
        XCTAssertEqual(frame.delay, 0.2, accuracy: 1e-9)
        XCTAssertEqual(frame.pixels, picture(["ggrr", "ggrr", "rrrr", "rrrr"]))
        // Disposal 2 cleared the green corner; the blue frame's transparent pixel left red under it.
        frame = try nextFrame(decoder)
        XCTAssertEqual(frame.delay, 0.1, accuracy: 1e-9, "a delay of 0 shows for 100 ms")
        XCTAssertEqual(frame.pixels, picture(["..rr", "..rr", "rrrb", "rrbb"]))
        // Disposal 3 put back what the blue frame covered.
        frame = try nextFrame(decoder)
        XCTAssertEqual(frame.delay, 0.1, accuracy: 1e-9, "a delay of 10 ms shows for 100 ms")
        XCTAssertEqual(frame.pixels, picture(["..rw", "..rr", "rrrr", "rrrr"]))
        XCTAssertEqual(try decoder.advance(), .endOfSequence)
        XCTAssertEqual(decoder.playCount, 3, "a NETSCAPE2.0 loop count of 2 plays the sequence 3 times")
        // After the end the canvas still shows the last frame; rewound, the first comes again.
        let last = try XCTUnwrap(try decoder.render(for: .init(width: 4, height: 4, mode: .scaleToFill)))
        XCTAssertEqual(colours(last), picture(["..rw", "..rr", "rrrr", "rrrr"]))
        try decoder.rewind()
        XCTAssertEqual(try nextFrame(decoder).pixels, picture(["rrrr", "rrrr", "rrrr", "rrrr"]))
    }

    func testGIFLoopCountsAndDelaysFollowTheBrowsers() async throws {
        func frames(_ delays: [Int]) -> [AnimatedTestImages.GIFFrame] {
            delays.enumerated().map { .filled(UInt8($0.offset % 3), width: 2, height: 2, delay: $0.element) }
        }
        let timed = try open(AnimatedTestImages.gif(width: 2, height: 2, palette: palette, loopCount: nil,
                                                     frames: frames([0, 1, 2, 5, 150])), name: "delays.gif")
        var delays: [Double] = []
        while case .frame(let delay) = try timed.advance() { delays.append(delay) }
        XCTAssertEqual(delays, [0.1, 0.1, 0.02, 0.05, 1.5])
        XCTAssertEqual(timed.playCount, 1, "no NETSCAPE2.0 extension: one play")
        for (count, plays) in [(0, 0), (1, 2), (65535, 65536)] {
            let decoder = try open(AnimatedTestImages.gif(width: 2, height: 2, palette: palette, loopCount: count,
                                                          frames: frames([10, 10])), name: "loop\(count).gif")
            _ = try decoder.advance()
            XCTAssertEqual(decoder.playCount, plays, "loop count \(count)")
        }
        // One frame is a still image.
        XCTAssertNil(try AnimatedImageDecoder.open(.data(AnimatedTestImages.gif(width: 2, height: 2, palette: palette,
                                                                                loopCount: 0, frames: frames([10])), name: "one.gif")))
    }

    func testAnInterlacedGIFFrameAndAFrameReachingOutsideTheCanvas() async throws {
        let rows = (0..<8).flatMap { y in [UInt8](repeating: UInt8(y % 3), count: 8) }
        let bytes = AnimatedTestImages.gif(width: 8, height: 8, palette: palette, loopCount: 0, frames: [
            .filled(3, width: 8, height: 8, delay: 10),
            AnimatedTestImages.GIFFrame(width: 8, height: 8, indices: rows, delay: 10, interlaced: true),
            // Reaches 4 pixels past the right and bottom edges: clipped, as browsers clip it.
            .filled(2, left: 6, top: 6, width: 6, height: 6, delay: 10),
        ])
        let decoder = try open(bytes, name: "interlaced.gif")
        _ = try nextFrame(decoder)
        let interlaced = try nextFrame(decoder).pixels
        XCTAssertEqual(interlaced.map { $0[0] }, [red, green, blue, red, green, blue, red, green], "each row where it belongs")
        let clipped = try nextFrame(decoder).pixels
        XCTAssertEqual(clipped[7][7], blue)
        XCTAssertEqual(clipped[6][6], blue)
        XCTAssertEqual(clipped[6][5], red, "left of the clipped frame: the interlaced frame's row 6")
        XCTAssertEqual(clipped[4][7], green, "above it: the interlaced frame's row 4")
        XCTAssertEqual(try decoder.advance(), .endOfSequence)
    }

    // MARK: APNG on the decoder

    func testAPNGFramesFollowBlendAndDisposeOperations() async throws {
        let translucentBlue = Color(red: 0, green: 0, blue: 255, alpha: 128)
        let frames: [AnimatedTestImages.APNGFrame] = [
            .filled(red, width: 4, height: 4, delayMilliseconds: 100),
            // Drawn over the red, then put back (dispose 2).
            .filled(translucentBlue, x: 1, y: 1, width: 2, height: 2, delayMilliseconds: 50, dispose: 2, blend: 1),
            // Replaces its corner, then is cleared (dispose 1).
            .filled(green, width: 2, height: 2, delayMilliseconds: 0, dispose: 1, blend: 0),
            // Transparent pixels with blend 0 clear what they cover.
            .filled(.clear, x: 2, y: 0, width: 2, height: 2, delayMilliseconds: 30, dispose: 0, blend: 0),
        ]
        for defaultImage in [true, false] {
            let bytes = AnimatedTestImages.apng(width: 4, height: 4, plays: 3, frames: frames, firstFrameIsDefaultImage: defaultImage)
            let decoder = try open(bytes, name: "blend-\(defaultImage).png")
            XCTAssertEqual(decoder.playCount, 3)
            var frame = try nextFrame(decoder)
            XCTAssertEqual(frame.delay, 0.1, accuracy: 1e-9)
            XCTAssertEqual(frame.pixels, picture(["rrrr", "rrrr", "rrrr", "rrrr"]), "the first frame, never the hidden default image")
            frame = try nextFrame(decoder)
            XCTAssertEqual(frame.delay, 0.05, accuracy: 1e-9)
            // 128/255 of blue over red: premultiplied 0 + 255·127/255 red, 128 blue, opaque.
            let mixed = frame.pixels[1][1]
            XCTAssertEqual(mixed.alpha, 255)
            XCTAssertEqual(Int(mixed.red), 127, accuracy: 1)
            XCTAssertEqual(Int(mixed.blue), 128, accuracy: 1)
            XCTAssertEqual(mixed.green, 0)
            XCTAssertEqual(frame.pixels[1][2], mixed)
            XCTAssertEqual(frame.pixels[0][0], red)
            frame = try nextFrame(decoder)
            XCTAssertEqual(frame.delay, 0.1, accuracy: 1e-9, "a delay of 0 shows for 100 ms")
            XCTAssertEqual(frame.pixels, picture(["ggrr", "ggrr", "rrrr", "rrrr"]), "the blend put back, the green corner drawn")
            frame = try nextFrame(decoder)
            XCTAssertEqual(frame.delay, 0.03, accuracy: 1e-9)
            XCTAssertEqual(frame.pixels, picture(["....", "....", "rrrr", "rrrr"]))
            XCTAssertEqual(try decoder.advance(), .endOfSequence)
        }
    }

    func testAPNGFrameCountsThatLieAndFramesOutsideTheCanvas() async throws {
        let frames: [AnimatedTestImages.APNGFrame] = [
            .filled(red, width: 4, height: 4, delayMilliseconds: 100),
            .filled(green, width: 4, height: 4, delayMilliseconds: 100),
            .filled(blue, width: 4, height: 4, delayMilliseconds: 100),
        ]
        func count(_ bytes: [UInt8]) throws -> Int {
            let decoder = try open(bytes, name: "count.png")
            var frames = 0
            while case .frame = try decoder.advance() { frames += 1 }
            return frames
        }
        XCTAssertEqual(try count(AnimatedTestImages.apng(width: 4, height: 4, plays: 0, frames: frames, declaredFrames: 1_000_000)), 3,
                       "fewer frames than claimed: the frames there are")
        XCTAssertEqual(try count(AnimatedTestImages.apng(width: 4, height: 4, plays: 0, frames: frames, declaredFrames: 2)), 2,
                       "more frames than claimed: the claimed count")
        var outside = frames
        outside[1] = .filled(green, x: 3, y: 3, width: 2, height: 2, delayMilliseconds: 100)
        let decoder = try open(AnimatedTestImages.apng(width: 4, height: 4, plays: 0, frames: outside), name: "outside.png")
        _ = try nextFrame(decoder)
        XCTAssertThrowsError(try decoder.advance()) { error in
            XCTAssertTrue("\(error)".contains("outside its 4×4 canvas"), "\(error)")
        }
        XCTAssertThrowsError(try decoder.advance(), "a spent decoder keeps its error")
        // A data chunk whose CRC does not match.
        var corrupt = AnimatedTestImages.apng(width: 4, height: 4, plays: 0, frames: frames)
        let fdAT = try XCTUnwrap((0..<(corrupt.count - 4)).first { corrupt[$0..<($0 + 4)].elementsEqual("fdAT".utf8) })
        corrupt[fdAT + 10] ^= 0x55
        let damaged = try open(corrupt, name: "crc.png")
        _ = try nextFrame(damaged)
        XCTAssertThrowsError(try damaged.advance())
        // acTL claiming one frame: a still image.
        XCTAssertNil(try AnimatedImageDecoder.open(.data(AnimatedTestImages.apng(width: 4, height: 4, plays: 0, frames: frames,
                                                                                  declaredFrames: 1), name: "one.png")))
        // A plain PNG is no animation.
        let still = TestImageFiles.png(width: 2, height: 2, colourType: 6, bitDepth: 8) { _, _ in [255, 0, 0, 255] }
        XCTAssertNil(try AnimatedImageDecoder.open(.data(still, name: "still.png")))
    }

    // MARK: WebP on the decoder

    func testAnimatedWebPFramesDelaysAndLoopCount() async throws {
        let bytes = AnimatedTestImages.webp(width: 4, height: 4, loopCount: 3, frames: [
            (AnimatedTestImages.rgba(red, width: 4, height: 4), 100),
            (AnimatedTestImages.rgba(green, width: 4, height: 4), 200),
            (AnimatedTestImages.rgba(blue, width: 4, height: 4), 5),
        ])
        let decoder = try open(bytes, name: "frames.webp")
        XCTAssertEqual(decoder.format, .webp)
        XCTAssertEqual(decoder.playCount, 3)
        for (colour, delay) in [(red, 0.1), (green, 0.2), (blue, 0.1)] {
            let frame = try nextFrame(decoder)
            XCTAssertEqual(frame.delay, delay, accuracy: 1e-9)
            XCTAssertEqual(Set(frame.pixels.joined()), [colour])
        }
        XCTAssertEqual(try decoder.advance(), .endOfSequence)
        try decoder.rewind()
        XCTAssertEqual(Set(try nextFrame(decoder).pixels.joined()), [red])
        // Cut short: refused with a reason, never a crash.
        for cut in [bytes.count / 2, bytes.count - 3] {
            XCTAssertThrowsError(try AnimatedImageDecoder.open(.data(Array(bytes.prefix(cut)), name: "cut.webp"))) { error in
                XCTAssertTrue(error is ImageError, "\(error)")
            }
        }
        // The fixture's animated WebP plays too.
        let fixture = GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/quadrants-animated.webp")
        let fromFile = try XCTUnwrap(try AnimatedImageDecoder.open(.file(fixture.path)))
        XCTAssertEqual(try fromFile.advance().isFrame, true)
    }

    // MARK: Hostile files on the decoder

    func testHostileAnimationsEndInErrorsOrDocumentedFallbacks() async throws {
        let gif = disposalGIF(loopCount: 0)
        // Bytes that end between two frames (no trailer): the sequence ends there.
        let withoutTrailer = try open(Array(gif.dropLast()), name: "no-trailer.gif")
        var frames = 0
        while case .frame = try withoutTrailer.advance() { frames += 1 }
        XCTAssertEqual(frames, 4)
        // Bytes that end inside a frame: the frames before it, then a clear error.
        let frameStarts = frameOffsets(gif)
        XCTAssertEqual(frameStarts.count, 4)
        let cut = try open(Array(gif.prefix(frameStarts[2] + 14)), name: "cut.gif")
        XCTAssertEqual(try cut.advance().isFrame, true)
        XCTAssertEqual(try cut.advance().isFrame, true)
        XCTAssertThrowsError(try cut.advance()) { error in
            XCTAssertEqual(error as? ImageError, .truncated("cut.gif (\(frameStarts[2] + 14) bytes)"))
        }
        // A frame larger than the limits allow, on a small canvas: refused from its descriptor.
        var huge = gif
        let descriptor = frameStarts[1]
        huge[descriptor + 5] = 0xFF; huge[descriptor + 6] = 0xFF; huge[descriptor + 7] = 0xFF; huge[descriptor + 8] = 0xFF
        let hostile = try open(huge, name: "huge-frame.gif")
        XCTAssertEqual(try hostile.advance().isFrame, true)
        XCTAssertThrowsError(try hostile.advance()) { error in
            XCTAssertEqual(error as? ImageError, .tooLarge("huge-frame.gif (\(huge.count) bytes)", width: 65535, height: 65535))
        }
        // A canvas whose compositing would hold more than the working-memory limit.
        let wide = AnimatedTestImages.gif(width: 4000, height: 4000, palette: palette, loopCount: 0, frames: [
            .filled(0, width: 1, height: 1, delay: 10), .filled(1, width: 1, height: 1, delay: 10),
        ])
        XCTAssertThrowsError(try AnimatedImageDecoder.open(.data(wide, name: "wide.gif"))) { error in
            guard case .overLimit = error as? ImageError else { return XCTFail("\(error)") }
        }
        // Extensions between two later frames past the metadata limit.
        var chatty = Array(gif.prefix(frameStarts[2]))
        for _ in 0..<20 { chatty += [0x21, 0xFE, 3] + Array("abc".utf8) + [0] }
        chatty += gif[frameStarts[2]...]
        let talkative = try open(chatty, name: "chatty.gif", limits: ImageDecoder.Limits(maximumMetadataBlocks: 10))
        XCTAssertEqual(try talkative.advance().isFrame, true)
        XCTAssertEqual(try talkative.advance().isFrame, true)
        XCTAssertThrowsError(try talkative.advance()) { error in
            XCTAssertTrue("\(error)".contains("more than 10 metadata blocks"), "\(error)")
        }
        // An LZW code size no GIF may have, in a later frame (no local colour table: it follows the
        // nine bytes of the descriptor).
        var badCode = gif
        XCTAssertEqual(badCode[frameStarts[1] + 10], 3, "five colours: a 3-bit code size")
        badCode[frameStarts[1] + 10] = 12
        let coded = try open(badCode, name: "code-size.gif")
        XCTAssertEqual(try coded.advance().isFrame, true)
        XCTAssertThrowsError(try coded.advance()) { error in
            XCTAssertTrue("\(error)".contains("LZW code size of 12"), "\(error)")
        }
    }

    // MARK: The committed fixtures, a contact sheet, and hostile variants

    private func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/\(name)")))
    }

    private static let fixtureNames = ["animated-disposal.gif", "animated-blend.png", "animated-hidden-default.png",
                                       "animated-frames.webp", "quadrants-animated.webp"]

    /// Every frame of the animated fixtures (which the fuzzer also mutates), side by side at 3× in
    /// `.test-output/animated/fixture-frames.png`, each checked at a pixel.
    func testTheAnimatedFixturesPlayFrameByFrame() async throws {
        let magenta = Color(rgb: 0xFF00FF)
        var rows: [[Bitmap]] = []
        for name in Self.fixtureNames {
            let decoder = try open(try fixture(name), name: name)
            var frames: [Bitmap] = []
            while case .frame = try decoder.advance() {
                let target = ImageDecoder.Target(width: decoder.canvasWidth * 3, height: decoder.canvasHeight * 3, mode: .scaleToFill)
                // Never larger than the canvas: a 16×16 animation renders at 16×16.
                frames.append(try XCTUnwrap(try decoder.render(for: target)))
            }
            XCTAssertGreaterThanOrEqual(frames.count, 2, name)
            XCTAssertEqual(frames.first?.width, decoder.canvasWidth, name)
            rows.append(frames)
        }
        // The GIF: red; the green corner; cleared corner and a blue ring at the bottom right; the
        // stripes of the interlaced frame; a white frame clipped to the canvas.
        let gif = rows[0].map(colours)
        XCTAssertEqual(gif.count, 5)
        XCTAssertEqual(gif[0][8][8], Color(rgb: 0xE53935))
        XCTAssertEqual(gif[1][2][2], Color(rgb: 0x43A047))
        XCTAssertEqual(gif[2][2][2], .clear)
        XCTAssertEqual(gif[2][12][12], Color(rgb: 0x1E88E5))
        XCTAssertEqual(gif[2][8][8], Color(rgb: 0xE53935), "the ring's transparent corner leaves red")
        XCTAssertEqual(gif[3][4].first, Color(rgb: 0x43A047), "stripe row 4")
        XCTAssertEqual(gif[4][15][15], .white)
        // The APNGs: the hidden default image (magenta) is never a frame.
        for row in [rows[1], rows[2]] {
            XCTAssertEqual(row.count, 4)
            XCTAssertFalse(row.map(colours).joined().joined().contains(magenta))
            XCTAssertEqual(colours(row[3])[0][12], .clear)
            XCTAssertEqual(colours(row[3])[12][12], Color(rgb: 0xE53935))
        }
        // The WebP's second frame is half transparent.
        XCTAssertEqual(colours(rows[3][1])[0][0].alpha, 0)
        XCTAssertEqual(colours(rows[3][1])[15][0], Color(rgb: 0x1E88E5))

        // The sheet: one row an animation, every frame scaled 3× on grey.
        let cell = 16 * 3 + 4
        var sheet = try BitmapContext(pixelWidth: cell * 5, pixelHeight: cell * rows.count)
        sheet.fill(sheet.bounds, color: Color(rgb: 0x808080))
        for (y, frames) in rows.enumerated() {
            for (x, frame) in frames.enumerated() {
                let side = Double(16 * 3)
                sheet.draw(frame, in: Rect(x: Double(x * cell + 2), y: Double(y * cell + 2), width: side, height: side))
            }
        }
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/animated")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try sheet.makeBitmap().writePNG(to: folder.appendingPathComponent("fixture-frames.png").path)
    }

    /// Plays `bytes` as far as it goes (at most `steps` steps, rewinding at the end), rendering every
    /// frame: an ImageError or frames, never anything else.
    private func assertDefinedPlay(_ bytes: [UInt8], _ name: String, steps: Int = 12, file: StaticString = #filePath, line: UInt = #line) {
        let limits = ImageDecoder.Limits(maximumPixelCount: 4_000_000, workingMemoryBytes: 16 << 20)
        do {
            guard let decoder = try AnimatedImageDecoder.open(.data(bytes, name: name), limits: limits) else { return }
            var rewinds = 0
            for _ in 0..<steps {
                switch try decoder.advance() {
                case .frame(let delay):
                    XCTAssertTrue(delay > 0.0105 && delay.isFinite, "\(name): a delay of \(delay)", file: file, line: line)
                    let bitmap = try decoder.render(for: .init(width: 7, height: 5, mode: .aspectFill))
                    XCTAssertNotNil(bitmap, file: file, line: line)
                case .endOfSequence:
                    guard rewinds < 2 else { return }
                    rewinds += 1
                    try decoder.rewind()
                case .cancelled:
                    XCTFail("\(name): cancelled without a cancellation", file: file, line: line)
                }
            }
        } catch let error as ImageError {
            XCTAssertFalse(error.description.isEmpty, file: file, line: line)
        } catch {
            XCTFail("\(name): \(error) is not an ImageError", file: file, line: line)
        }
    }

    func testEveryAnimationCutShortOrCorruptedEndsDefined() async throws {
        var random = SeededRandom(seed: 0xA11_4A7E)
        for name in Self.fixtureNames {
            let bytes = try fixture(name)
            for cut in 0..<bytes.count { assertDefinedPlay(Array(bytes.prefix(cut)), "\(name) cut at \(cut)") }
            for round in 0..<300 {
                var damaged = bytes
                for _ in 0...(Int(random.next() % 4)) {
                    let at = Int(random.next() % UInt64(damaged.count))
                    damaged[at] = [0, 0xFF, 0x7F, UInt8(truncatingIfNeeded: random.next())][Int(random.next() % 4)]
                }
                assertDefinedPlay(damaged, "\(name) damaged \(round)")
            }
        }
    }

    /// The fuzzer's regression inputs through the animation decoder too.
    func testFuzzRegressionInputsPlayDefined() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/FuzzRegressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertFalse(names.isEmpty)
        for name in names {
            assertDefinedPlay([UInt8](try Data(contentsOf: folder.appendingPathComponent(name))), name, steps: 40)
        }
    }

    // MARK: The node on a virtual clock

    /// A host showing `node` (at the origin, `size` points) over the software renderer.
    private func show(_ node: ImageNode, size: Size, window: Size = Size(width: 40, height: 40)) throws -> NodeHost {
        let host = try PixelOracle.makeHost(size: window, clearColor: black)
        node.frame = Rect(origin: .zero, size: size)
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        return host
    }

    /// Runs frames at `time`, waiting for the workers between them, until what is due at `time` is on
    /// screen (decoded, drawn and committed).
    private func frames(_ host: NodeHost, at time: Double) {
        for _ in 0..<4 {
            host.runFrame(time: time, events: [])
            Runtime.shared.scheduler.waitUntilIdle()
        }
        host.runFrame(time: time, events: [])
    }

    /// Runs frames at `time` until the animation's first frame shows; that time is its start.
    private func start(_ host: NodeHost, _ node: ImageNode, at time: Double, file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<20 where node.animationStatus == nil {
            frames(host, at: time)
        }
        XCTAssertNotNil(node.animationStatus, "the animation started", file: file, line: line)
        frames(host, at: time)
    }

    private func colour(_ host: NodeHost, x: Int = 4, y: Int = 4) throws -> Color {
        Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: x, y: y))
    }

    private func isTakingPartInFrames(_ node: ImageNode, _ host: NodeHost) -> Bool {
        host.frameParticipants.contains { $0 === node.animationPlayer }
    }

    private func threeColourGIF(loopCount: Int?, size: Int = 8) -> [UInt8] {
        AnimatedTestImages.gif(width: size, height: size, palette: palette, loopCount: loopCount, frames: [
            .filled(0, width: size, height: size, delay: 10),
            .filled(1, width: size, height: size, delay: 20),
            .filled(2, width: size, height: size, delay: 0),
        ])
    }

    func testTheNodeShowsTheFrameDueAtEachTimeAndLoopsAsTheFileSays() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(threeColourGIF(loopCount: 1), name: "three.gif")
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        let t0 = 10.0
        start(host, node, at: t0)
        XCTAssertTrue(node.isAnimating)
        XCTAssertTrue(isTakingPartInFrames(node, host))
        XCTAssertEqual(try colour(host), red)
        XCTAssertEqual(host.nextTimerTime(after: t0) ?? -1, t0 + 0.1, accuracy: 1e-9, "the next frame wakes the host")
        // Red 100 ms, green 200 ms, blue 100 ms (its delay of 0), then the second play.
        // Times a microsecond past a due time: the sums of delays differ from the clock's by rounding.
        let expected: [(Double, Color, Int, Int)] = [
            (0.099, red, 0, 0), (0.100001, green, 1, 0), (0.299, green, 1, 0), (0.300001, blue, 2, 0),
            (0.400001, red, 0, 1), (0.500001, green, 1, 1), (0.700001, blue, 2, 1), (0.8, blue, 2, 1), (5, blue, 2, 1),
        ]
        for (offset, colour, index, plays) in expected {
            frames(host, at: t0 + offset)
            XCTAssertEqual(try self.colour(host), colour, "at +\(offset) s")
            XCTAssertEqual(node.animationStatus?.frameIndex, index, "at +\(offset) s")
            XCTAssertEqual(node.animationStatus?.completedPlays, plays, "at +\(offset) s")
        }
        // Loop count 1: two plays, ending on the last frame; then nothing runs.
        XCTAssertEqual(node.animationStatus?.isFinished, true)
        XCTAssertEqual(node.animationStatus?.playCount, 2)
        XCTAssertEqual(node.animationStatus?.frameCount, 3)
        XCTAssertFalse(node.isAnimating)
        XCTAssertFalse(isTakingPartInFrames(node, host))
        XCTAssertNil(host.nextTimerTime(after: t0 + 5))
        XCTAssertFalse(host.needsFrame, "a finished animation leaves the host idle: \(host.pendingWork)")
    }

    func testAnAnimationClippedOutOfAScrollNodeHoldsUntilItScrollsIntoView() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(threeColourGIF(loopCount: 0), name: "forever.gif")
        node.preferredSize = Size(width: 8, height: 8)
        // A column 60 points tall in a 20-point scroll node: the animation sits at y 40, below the fold.
        let spacer = Node()
        spacer.preferredSize = Size(width: 8, height: 40)
        let filler = Node()
        filler.preferredSize = Size(width: 8, height: 12)
        let column = StackedNode([spacer, node, filler])
        let scroll = ScrollNode(content: column)
        let host = try PixelOracle.makeHost(size: Size(width: 8, height: 20), clearColor: black)
        host.setRootNode(scroll)
        defer { host.setRootNode(nil) }
        let t0 = 10.0
        for offset in [0.0, 0.2, 0.4, 5] { frames(host, at: t0 + offset) }
        XCTAssertTrue(node.interfaceState.contains(.visible), "a scroll node's content is all visible")
        XCTAssertFalse(AnimatedImagePlayer.isOnScreen(node))
        XCTAssertNil(host.nextTimerTime(after: t0 + 5), "clipped away, it asks for no frame")
        XCTAssertFalse(host.needsFrame, "and the host is idle: \(host.pendingWork)")
        XCTAssertNil(node.animationStatus, "its clock has not started")
        // Scrolled into view: it starts, and asks for its next frame.
        scroll.setContentOffset(Point(x: 0, y: 40), animated: false)
        start(host, node, at: t0 + 6)
        XCTAssertTrue(AnimatedImagePlayer.isOnScreen(node))
        XCTAssertEqual(node.animationStatus?.frameIndex, 0)
        XCTAssertEqual(try colour(host, x: 4, y: 4), red)
        XCTAssertNotNil(host.nextTimerTime(after: t0 + 6), "on screen, it asks for its next frame")
        frames(host, at: t0 + 6.15)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1)
        XCTAssertEqual(try colour(host, x: 4, y: 4), green)
        // Scrolled away again mid-frame: it holds; back, it goes on with the rest of the frame's time.
        scroll.setContentOffset(Point(x: 0, y: 0), animated: false)
        frames(host, at: t0 + 6.2)
        XCTAssertNil(host.nextTimerTime(after: t0 + 6.2))
        frames(host, at: t0 + 20)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1, "held while clipped")
        scroll.setContentOffset(Point(x: 0, y: 40), animated: false)
        frames(host, at: t0 + 21)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1, "back on screen with the rest of green's time")
        frames(host, at: t0 + 21.2)
        XCTAssertEqual(node.animationStatus?.frameIndex, 2)
    }

    func testAClockThatJumpsShowsTheFrameDueThen() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(threeColourGIF(loopCount: 0), name: "forever.gif")
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        let t0 = 3.0
        start(host, node, at: t0)
        // Half a play ahead, then 25 plays and a bit (one play is 0.4 s): red, green, blue, red…
        frames(host, at: t0 + 0.45)
        XCTAssertEqual(try colour(host), red)
        XCTAssertEqual(node.animationStatus?.completedPlays, 1)
        frames(host, at: t0 + 10.15)
        XCTAssertEqual(try colour(host), green)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1)
        XCTAssertEqual(node.animationStatus?.completedPlays, 25)
        frames(host, at: t0 + 1000.35)
        XCTAssertEqual(try colour(host), blue)
        XCTAssertEqual(node.animationStatus?.completedPlays, 2500)
        XCTAssertEqual(node.animationStatus?.playCount, 0, "for ever")
    }

    func testALongAnimationHoldsAFewFramesNotAllOfThem() async throws {
        // 200 frames of 40×40 pixels (6,400 bytes each at display size), each its own colour.
        let colours = (0..<200).map { (i: Int) -> Color in
            Color(red: UInt8(i), green: UInt8(255 - i), blue: UInt8((i * 7) % 256))
        }
        let frames = (0..<200).map { AnimatedTestImages.GIFFrame.filled(UInt8($0), width: 40, height: 40, delay: 10) }
        let bytes = AnimatedTestImages.gif(width: 40, height: 40, palette: colours, loopCount: 0, frames: frames)
        let frameBytes = 40 * 40 * 4
        let baseline = Bitmap.liveByteCount
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(bytes, name: "long.gif")
        let host = try show(node, size: Size(width: 40, height: 40))
        defer { host.setRootNode(nil) }
        let t0 = 1.0
        start(host, node, at: t0)
        var most = 0
        for step in 0..<230 {
            self.frames(host, at: t0 + Double(step) * 0.1 + 0.0001)
            XCTAssertEqual(try colour(host, x: 20, y: 20), colours[step % 200], "frame \(step % 200) at step \(step)")
            let held = node.animationFramesHeld
            XCTAssertLessThanOrEqual(held.now, 1 + AnimatedImagePlayer.framesAhead)
            most = max(most, Bitmap.liveByteCount - baseline)
        }
        XCTAssertEqual(node.animationStatus?.completedPlays, 1, "it went round")
        XCTAssertLessThanOrEqual(node.animationFramesHeld.peak, 1 + AnimatedImagePlayer.framesAhead,
                                 "the frame shown and those decoded ahead, never more")
        // Bitmaps alive because of the node, at the most: a few frames' worth (the frame shown and
        // those ahead, the still image in its cache, the node's drawn contents and the draw in flight),
        // never the 1.28 MB of all 200.
        XCTAssertLessThanOrEqual(most, 8 * frameBytes, "\(most) bytes of bitmaps more than before the node")
    }

    func testAnAnimationOutOfTheVisibleRangeStopsAndResumesWhereItWas() async throws {
        let host = try PixelOracle.makeHost(size: Size(width: 40, height: 40), clearColor: black)
        defer { host.setRootNode(nil) }
        let bytes = AnimatedTestImages.gif(width: 40, height: 20, palette: palette, loopCount: 0, frames: [
            .filled(0, width: 40, height: 20, delay: 10), .filled(1, width: 40, height: 20, delay: 10),
            .filled(2, width: 40, height: 20, delay: 10),
        ])
        let source = TestListSource(count: 60, height: 20)
        source.makeNode = { identity, height in
            guard identity == 0 else { return TestRowNode(identity: identity, height: height) }
            let image = ImageNode()
            image.preferredSize = Size(width: 40, height: 20)
            image.source = .data(bytes, name: "row.gif")
            return image
        }
        let list = ListNode()
        list.dataSource = source
        host.setRootNode(list)
        var time = 2.0
        for _ in 0..<10 { frames(host, at: time) }
        let node = try XCTUnwrap(list.nodeForRow(0) as? ImageNode)
        start(host, node, at: time)
        let t0 = time
        frames(host, at: t0 + 0.100001)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1)
        XCTAssertEqual(try colour(host, x: 20, y: 10), green)
        XCTAssertTrue(node.isAnimating)

        // Scrolled just out of view: still in the display range, no longer visible.
        list.setContentOffset(30, animated: false)
        time = t0 + 0.15
        frames(host, at: time)
        XCTAssertFalse(node.interfaceState.contains(.visible))
        XCTAssertTrue(node.interfaceState.contains(.display))
        XCTAssertFalse(node.isAnimating)
        XCTAssertFalse(isTakingPartInFrames(node, host), "it left the host's frames")
        let decodes = Runtime.shared.scheduler.statistics.byKind[.decode]?.scheduled ?? 0
        for step in 1...20 {
            time = t0 + 0.15 + Double(step) * 0.1
            frames(host, at: time)
        }
        XCTAssertEqual(Runtime.shared.scheduler.statistics.byKind[.decode]?.scheduled ?? 0, decodes, "nothing decoded out of view")
        XCTAssertEqual(node.animationStatus?.frameIndex, 1, "the frame it showed stays")
        XCTAssertNil(host.nextTimerTime(after: time), "no animation asks for a frame")
        XCTAssertFalse(host.needsFrame, "the host is idle: \(host.pendingWork)")
        XCTAssertLessThanOrEqual(node.animationFramesHeld.now, 1 + AnimatedImagePlayer.framesAhead)

        // Back in view: it goes on from green, which had 50 ms left.
        list.setContentOffset(0, animated: false)
        let back = time + 0.1
        frames(host, at: back)
        XCTAssertTrue(node.isAnimating)
        XCTAssertEqual(node.animationStatus?.frameIndex, 1)
        XCTAssertEqual(try colour(host, x: 20, y: 10), green)
        frames(host, at: back + 0.049)
        XCTAssertEqual(try colour(host, x: 20, y: 10), green)
        frames(host, at: back + 0.050001)
        XCTAssertEqual(try colour(host, x: 20, y: 10), blue)

        // Scrolled far away: out of the preload range, everything goes.
        list.setContentOffset(800, animated: false)
        for step in 1...6 { frames(host, at: back + 0.05 + Double(step) * 0.02) }
        XCTAssertFalse(node.interfaceState.contains(.preload))
        XCTAssertEqual(node.animationFramesHeld.now, 0)
        XCTAssertFalse(isTakingPartInFrames(node, host))
    }

    func testPausingHoldsTheFrameAndAsksForNothing() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(threeColourGIF(loopCount: 0), name: "pause.gif")
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        let t0 = 5.0
        start(host, node, at: t0)
        frames(host, at: t0 + 0.05)
        node.isAnimationPaused = true
        frames(host, at: t0 + 0.06)
        XCTAssertFalse(node.isAnimating)
        XCTAssertFalse(isTakingPartInFrames(node, host))
        XCTAssertNil(host.nextTimerTime(after: t0 + 0.06))
        frames(host, at: t0 + 3)
        XCTAssertEqual(try colour(host), red, "held on red")
        XCTAssertFalse(host.needsFrame, "\(host.pendingWork)")
        // Resumed at +3 s: red had 50 ms left of its 100.
        node.isAnimationPaused = false
        frames(host, at: t0 + 3)
        XCTAssertTrue(node.isAnimating)
        XCTAssertEqual(host.nextTimerTime(after: t0 + 3) ?? -1, t0 + 3.05, accuracy: 1e-9)
        frames(host, at: t0 + 3.049)
        XCTAssertEqual(try colour(host), red)
        frames(host, at: t0 + 3.050001)
        XCTAssertEqual(try colour(host), green)
    }

    func testWithAnimationsOffTheFirstFrameShowsAndNothingMoreIsDecoded() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.animatesImages = false
        node.source = .data(threeColourGIF(loopCount: 0), name: "off.gif")
        let decodes = Runtime.shared.scheduler.statistics.byKind[.decode]?.scheduled ?? 0
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        for step in 0..<10 { frames(host, at: 1 + Double(step) * 0.1) }
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual(try colour(host), red)
        XCTAssertNil(node.animationStatus)
        XCTAssertFalse(node.isAnimating)
        XCTAssertEqual(node.animationFramesHeld.now, 0)
        XCTAssertEqual((Runtime.shared.scheduler.statistics.byKind[.decode]?.scheduled ?? 0) - decodes, 1, "the still image only")
        // Turned on, it plays.
        node.animatesImages = true
        start(host, node, at: 3)
        frames(host, at: 3.100001)
        XCTAssertEqual(try colour(host), green)
        // The default for nodes made from now on.
        ImageNode.animatesImagesByDefault = false
        defer { ImageNode.animatesImagesByDefault = true }
        XCTAssertFalse(ImageNode().animatesImages)
        XCTAssertTrue(node.animatesImages, "a node keeps its own setting")
    }

    func testAPNGAndWebPPlayInTheNode() async throws {
        let apng = AnimatedTestImages.apng(width: 8, height: 8, plays: 0, frames: [
            .filled(red, width: 8, height: 8, delayMilliseconds: 70),
            .filled(green, width: 8, height: 8, delayMilliseconds: 70),
        ])
        let webp = AnimatedTestImages.webp(width: 8, height: 8, loopCount: 0, frames: [
            (AnimatedTestImages.rgba(blue, width: 8, height: 8), 70),
            (AnimatedTestImages.rgba(white, width: 8, height: 8), 70),
        ])
        for (bytes, first, second, name) in [(apng, red, green, "a.png"), (webp, blue, white, "a.webp")] {
            let node = ImageNode()
            node.imageCache = ImageCache(budgetBytes: 1 << 20)
            node.source = .data(bytes, name: name)
            let host = try show(node, size: Size(width: 8, height: 8))
            start(host, node, at: 1)
            XCTAssertEqual(try colour(host), first, name)
            frames(host, at: 1.069)
            XCTAssertEqual(try colour(host), first, name)
            frames(host, at: 1.070001)
            XCTAssertEqual(try colour(host), second, name)
            frames(host, at: 1.140001)
            XCTAssertEqual(try colour(host), first, "\(name) loops")
            host.setRootNode(nil)
        }
    }

    func testSettleFindsTheScreenQuietBetweenFramesOfAnAnimation() async throws {
        func gif(delay: Int) -> [UInt8] {
            AnimatedTestImages.gif(width: 8, height: 8, palette: palette, loopCount: 0,
                                   frames: (0..<3).map { .filled(UInt8($0), width: 8, height: 8, delay: delay) })
        }
        // Frames of 100 ms: two quiet frames (1/60 s apart) between two frames of the animation.
        let node = ImageNode()
        node.source = .data(gif(delay: 10), name: "settles.gif")
        let host = try show(node, size: Size(width: 8, height: 8))
        for _ in 0..<3 { try host.settle(timeout: 5) }
        XCTAssertTrue(node.isAnimating)
        XCTAssertTrue(host.isSettled)
        host.setRootNode(nil)
        // Frames of 20 ms never leave two quiet frames in a row: settling runs out of time, saying why;
        // nodes made with animations off hold still.
        let busy = ImageNode()
        busy.source = .data(gif(delay: 2), name: "busy.gif")
        let busyHost = try show(busy, size: Size(width: 8, height: 8))
        XCTAssertThrowsError(try { for _ in 0..<3 { try busyHost.settle(timeout: 0.5) } }()) { error in
            XCTAssertTrue(error is SettleTimeout, "\(error)")
        }
        busyHost.setRootNode(nil)
        ImageNode.animatesImagesByDefault = false
        defer { ImageNode.animatesImagesByDefault = true }
        let still = ImageNode()
        still.source = .data(gif(delay: 2), name: "still.gif")
        let stillHost = try show(still, size: Size(width: 8, height: 8))
        defer { stillHost.setRootNode(nil) }
        try stillHost.settle(timeout: 5)
        XCTAssertEqual(try colour(stillHost), red)
    }

    func testABrokenFrameStopsTheAnimationOnTheFrameShown() async throws {
        let gif = threeColourGIF(loopCount: 0)
        let frameStarts = frameOffsets(gif)
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        node.source = .data(Array(gif.prefix(frameStarts[2] + 12)), name: "broken.gif")
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        start(host, node, at: 1)
        frames(host, at: 1.100001)
        XCTAssertEqual(try colour(host), green)
        frames(host, at: 1.3)
        frames(host, at: 1.5)
        XCTAssertEqual(try colour(host), green, "the last good frame stays")
        XCTAssertFalse(node.isAnimating)
        XCTAssertFalse(isTakingPartInFrames(node, host))
        let reports = node.diagnostics.filter { $0.kind == .animationStopped }
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("cut short") == true, "\(reports)")
    }

    func testAStillImageIsNeverPlayed() async throws {
        let node = ImageNode()
        node.imageCache = ImageCache(budgetBytes: 1 << 20)
        let png = TestImageFiles.png(width: 8, height: 8, colourType: 6, bitDepth: 8) { _, _ in [0, 0, 255, 255] }
        node.source = .data(png, name: "still.png")
        let host = try show(node, size: Size(width: 8, height: 8))
        defer { host.setRootNode(nil) }
        for step in 0..<6 { frames(host, at: 1 + Double(step) * 0.1) }
        XCTAssertEqual(try colour(host), blue)
        XCTAssertNil(node.animationStatus)
        XCTAssertFalse(node.isAnimating)
        XCTAssertFalse(isTakingPartInFrames(node, host))
        XCTAssertFalse(host.needsFrame)
    }
}

private extension AnimatedImageDecoder.Step {
    var isFrame: Bool { if case .frame = self { return true } else { return false } }
}

/// Subnodes stacked top to bottom at their preferred sizes.
private final class StackedNode: Node, @unchecked Sendable {
    let items: [Node]
    init(_ items: [Node]) {
        self.items = items
        super.init()
        items.forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { items }
    }
}
