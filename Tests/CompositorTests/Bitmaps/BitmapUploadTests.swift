import Foundation
import XCTest
@testable import Compositor

/// Preparing bitmaps for upload where they are made: the opacity answer, the alpha layouts, and the
/// software renderer's upload path, which must be a copy on the UI thread and still show the right
/// colours.
@MainActor
final class BitmapUploadTests: XCTestCase {
    /// The result of a worker's body; the semaphore that waits for it orders the accesses.
    private final class Result<T>: @unchecked Sendable { var value: T? }

    /// Runs `body` on a new thread (standing for a display worker) and waits for it.
    private func onWorker<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Result<T>()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.value = body()
            done.signal()
        }
        done.wait()
        return result.value!
    }

    /// A 40×30 picture: `color` everywhere, but for a clear 4×4 top-left corner when `clearCorner`.
    nonisolated private static func picture(_ color: Color, clearCorner: Bool) -> Bitmap {
        var context = try! BitmapContext(pixelWidth: 40, pixelHeight: 30)
        if clearCorner {
            context.fill(Rect(x: 4, y: 0, width: 36, height: 30), color: color)
            context.fill(Rect(x: 0, y: 4, width: 4, height: 26), color: color)
        } else {
            context.fill(context.bounds, color: color)
        }
        return context.makeBitmap()
    }

    func testTheTablesConvertExactlyAsTheFormulas() async {
        var premultiplied: [UInt32] = [], straight: [UInt32] = []
        for alpha in UInt32(0)...255 {
            for channel in UInt32(0)...255 {
                let p = (alpha << 24) | (channel << 16) | ((255 - channel) << 8) | (channel / 2)
                premultiplied.append(p)
                straight.append(p)
            }
        }
        let toStraight = PixelPass.converted(premultiplied, to: .straight)
        let toPremultiplied = PixelPass.converted(straight, to: .premultiplied)
        for index in premultiplied.indices {
            XCTAssertEqual(toStraight[index], unpremultiply(premultipliedARGB: premultiplied[index]))
            XCTAssertEqual(toPremultiplied[index], premultiply(straightARGB: straight[index]))
        }
        // Every valid premultiplied value (no channel above alpha) survives the round trip exactly.
        var valid: [UInt32] = []
        for alpha in UInt32(0)...255 {
            for channel in 0...alpha { valid.append((alpha << 24) | (channel << 16) | ((alpha - channel) << 8) | (channel / 3)) }
        }
        XCTAssertEqual(PixelPass.converted(PixelPass.converted(valid, to: .straight), to: .premultiplied), valid)
    }

    func testPreparingRecordsOpacityAndConvertsOnlyTranslucentPixels() async {
        let opaque = Self.picture(Color(rgb: 0x3366CC), clearCorner: false)
        let preparedOpaque = opaque.prepared(forUpload: .straight)
        XCTAssertEqual(preparedOpaque.identity, opaque.identity, "opaque pixels are the same in both layouts")
        XCTAssertTrue(preparedOpaque.isOpaque)
        XCTAssertEqual(preparedOpaque.alphaLayout, .premultiplied)

        let translucent = Self.picture(Color(rgb: 0x3366CC, alpha: 128), clearCorner: true)
        XCTAssertIdentical(translucent.prepared(forUpload: .premultiplied).storage, translucent.storage)
        let straight = translucent.prepared(forUpload: .straight)
        XCTAssertNotEqual(straight.identity, translucent.identity)
        XCTAssertEqual(straight.alphaLayout, .straight)
        XCTAssertFalse(straight.isOpaque)
        let middle = 20 * 40 + 20
        XCTAssertEqual(straight.storage.pixels[middle], unpremultiply(premultipliedARGB: translucent.pixels[middle]))
        XCTAssertEqual(translucent.pixels[middle], 0x801A_3366, "premultiplied: each channel times 128/255")
        XCTAssertEqual(straight.storage.pixels[middle], 0x8034_66CB, "straight: the colour itself (within rounding)")
        XCTAssertEqual(straight.pixels, translucent.pixels, "readers still see premultiplied values")
        XCTAssertEqual(straight.pixel(x: 20, y: 20), translucent.pixel(x: 20, y: 20))
        XCTAssertEqual(straight.pixel(x: 1, y: 1), 0)
        XCTAssertEqual(try! straight.withScale(2).alphaLayout, .straight)

        // Drawn into a context, a straight bitmap blends as its premultiplied twin does.
        var a = try! BitmapContext(pixelWidth: 40, pixelHeight: 30), b = a
        a.fill(a.bounds, color: .white)
        b.fill(b.bounds, color: .white)
        a.draw(translucent, in: a.bounds)
        b.draw(straight, in: b.bounds)
        XCTAssertEqual(a.makeBitmap().pixels, b.makeBitmap().pixels)
    }

    func testOpacityIsScannedOnceOnTheThreadThatAsksFirst() async {
        let opaque = Self.picture(Color(rgb: 0x102030), clearCorner: false)
        let translucent = Self.picture(Color(rgb: 0x102030), clearCorner: true)
        XCTAssertTrue(onWorker { opaque.isOpaque })
        XCTAssertFalse(onWorker { translucent.isOpaque })
        let before = PixelPass.uiThreadCount
        XCTAssertTrue(opaque.isOpaque)
        XCTAssertFalse(translucent.isOpaque)
        XCTAssertEqual(PixelPass.uiThreadCount, before, "the workers' answers are kept: no scan here")

        let fresh = Self.picture(Color(rgb: 0x102030), clearCorner: false)
        XCTAssertTrue(fresh.isOpaque)
        XCTAssertEqual(PixelPass.uiThreadCount, before + 1, "a bitmap nobody asked about is scanned here, once")
        XCTAssertTrue(fresh.isOpaque)
        XCTAssertEqual(PixelPass.uiThreadCount, before + 1)
        XCTAssertTrue(try Bitmap(width: 3, height: 3, filledWith: .white).isOpaque)
        XCTAssertEqual(PixelPass.uiThreadCount, before + 1, "one colour: known without a scan")
    }

    /// The software renderer blends straight alpha. Contents prepared on a worker upload as a copy (no
    /// pass over their pixels on the UI thread), and the screen shows the same colours as the same
    /// contents uploaded unprepared, which the UI thread must scan and convert.
    func testThePreparedUploadIsACopyAndShowsTheSameColours() async throws {
        let backend = try SDLRenderBackend(.init(title: "upload", size: Size(width: 120, height: 40), scale: 1, headless: true))
        XCTAssertEqual(backend.rendererName, "software")
        XCTAssertEqual(backend.uploadAlphaLayout, .straight)
        let compositor = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0x204060)))
        let colors = [Color(rgb: 0xE0483C), Color(rgb: 0xE0483C, alpha: 96), Color(rgb: 0x40C080, alpha: 200)]

        func scene(_ contents: [Bitmap]) -> Layer {
            let root = Layer(name: "root")
            root.frame = Rect(x: 0, y: 0, width: 120, height: 40)
            for (index, bitmap) in contents.enumerated() {
                let layer = Layer()
                layer.frame = Rect(x: Double(index) * 40, y: 5, width: 40, height: 30)
                layer.contents = bitmap
                root.addSublayer(layer)
            }
            return root
        }

        let prepared = onWorker { colors.map { Self.picture($0, clearCorner: true).prepared(forUpload: .straight) } }
        let passesBefore = PixelPass.uiThreadCount
        let shown = try XCTUnwrap(compositor.capture(scene(prepared)))
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)
        XCTAssertEqual(compositor.lastFrameStatistics.uploadPixelPasses, 0)
        XCTAssertEqual(PixelPass.uiThreadCount, passesBefore, "no pass over any pixel on the UI thread")

        let unprepared = colors.map { Self.picture($0, clearCorner: true) }
        let reference = try XCTUnwrap(compositor.capture(scene(unprepared)))
        XCTAssertEqual(compositor.lastFrameStatistics.uploads, 3)
        XCTAssertEqual(compositor.lastFrameStatistics.uploadPixelPasses, 6, "three scans and three conversions")

        // Colours: the clear corner shows the background; the contents blend over it as source-over
        // says, within SDL's blending arithmetic (it divides by 256, not 255).
        let background = Color(rgb: 0x204060)
        for (index, color) in colors.enumerated() {
            let corner = Color(premultipliedARGB: shown.pixel(x: index * 40 + 1, y: 6))
            XCTAssertEqual(corner, background, "the clear corner of contents \(index)")
            let middle = Color(premultipliedARGB: shown.pixel(x: index * 40 + 20, y: 20))
            let a = Double(color.alpha) / 255
            func blend(_ c: UInt8, _ d: UInt8) -> Double { Double(c) * a + Double(d) * (1 - a) }
            XCTAssertEqual(Double(middle.red), blend(color.red, background.red), accuracy: 3, "contents \(index)")
            XCTAssertEqual(Double(middle.green), blend(color.green, background.green), accuracy: 3, "contents \(index)")
            XCTAssertEqual(Double(middle.blue), blend(color.blue, background.blue), accuracy: 3, "contents \(index)")
        }
        XCTAssertEqual(shown.pixels, reference.pixels, "prepared and unprepared contents look the same")
    }

    func testARecordingBackendUploadsInItsLayout() async {
        let backend = RecordingRenderBackend(width: 100, height: 100)
        backend.uploadAlphaLayout = .straight
        let compositor = Compositor(backend: backend)
        let root = Layer(name: "root")
        root.frame = Rect(x: 0, y: 0, width: 100, height: 100)
        let opaque = Layer(), translucent = Layer()
        opaque.frame = Rect(x: 0, y: 0, width: 40, height: 30)
        translucent.frame = Rect(x: 50, y: 0, width: 40, height: 30)
        opaque.contents = onWorker { Self.picture(.white, clearCorner: false).prepared(forUpload: .straight) }
        translucent.contents = onWorker { Self.picture(.white, clearCorner: true).prepared(forUpload: .straight) }
        root.addSublayer(opaque)
        root.addSublayer(translucent)
        let statistics = compositor.render(root)
        XCTAssertEqual(statistics.uploads, 2)
        XCTAssertEqual(statistics.uploadPixelPasses, 0)
        XCTAssertEqual(backend.opaqueTextures.count, 1)
    }
}
