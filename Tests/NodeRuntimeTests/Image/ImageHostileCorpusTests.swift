import Compositor
import Foundation
import TesseraRandom
import TestSupport
import XCTest
@testable import NodeRuntime

/// A hostile corpus made here, run through the public entry point `ImageDecoder.decode(_:for:)`:
/// every format cut short at many offsets, headers that lie in each direction, zero and huge sizes,
/// huge chunk lengths, random bytes behind valid signatures, and the fuzzer's regression inputs.
/// Each must end in a bitmap no larger than the limits allow or an `ImageError`, within the
/// working-memory budget.
@MainActor
final class ImageHostileCorpusTests: XCTestCase {
    private let target = ImageDecoder.Target(width: 64, height: 64, mode: .aspectFill)
    private let limits = ImageDecoder.Limits(maximumPixelCount: 16_000_000, workingMemoryBytes: 16 << 20)

    private func photo(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/\(name)")))
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/\(name)")))
    }

    /// Decodes `bytes`; fails the test unless the outcome is a sane bitmap or an `ImageError`.
    @discardableResult
    private func assertDefined(_ bytes: [UInt8], _ name: String, file: StaticString = #filePath, line: UInt = #line) -> Bitmap? {
        do {
            guard let bitmap = try ImageDecoder.decode(.data(bytes, name: name), for: target, limits: limits) else {
                XCTFail("\(name): nil without cancellation", file: file, line: line)
                return nil
            }
            XCTAssertTrue(bitmap.width >= 1 && bitmap.height >= 1 && bitmap.width * bitmap.height <= limits.maximumPixelCount,
                          "\(name): \(bitmap.width)×\(bitmap.height)", file: file, line: line)
            return bitmap
        } catch let error as ImageError {
            XCTAssertFalse(error.description.isEmpty, file: file, line: line)
            return nil
        } catch {
            XCTFail("\(name): \(error) is not an ImageError", file: file, line: line)
            return nil
        }
    }

    private func samples() throws -> [(String, [UInt8])] {
        [("coffee.jpg", try photo("coffee.jpg")), ("horse.png", try photo("horse.png")),
         ("progressive.jpg", try fixture("quadrants-progressive.jpg")), ("cmyk.jpg", try fixture("quadrants-cmyk.jpg")),
         ("animated.webp", try fixture("quadrants-animated.webp")),
         ("interlaced.png", TestImageFiles.png(width: 40, height: 30, colourType: 6, bitDepth: 16, interlaced: true) { x, y in
             [x * 1600, y * 2000, 30_000, 65_535 - x * 100] }),
         ("palette.png", TestImageFiles.png(width: 33, height: 7, colourType: 3, bitDepth: 2, palette: [0, 0, 0, 255, 0, 0, 0, 255, 0, 9, 9, 9],
                                            transparency: [0, 255]) { x, y in [(x + y) % 4] })]
    }

    /// Every prefix (every offset for the first 300 bytes, then a spread to the end).
    func testEveryFormatCutShortAnywhere() async throws {
        for (name, bytes) in try samples() {
            let offsets = Array(0..<min(bytes.count, 300)) + Array(stride(from: 300, to: bytes.count, by: max(1, bytes.count / 97)))
            for offset in offsets { assertDefined(Array(bytes.prefix(offset)), "\(name)@\(offset)") }
        }
        XCTAssertLessThanOrEqual(ImageDecoder.decodeMemoryUsage.inUse, 0, "every reservation was given back")
    }

    /// Random bytes after each format's signature, and single-byte corruptions across each file,
    /// from fixed seeds so a failure replays.
    func testRandomBytesBehindValidSignaturesAndCorruptedFiles() async throws {
        var random = SeededRandom(seed: 0x1A6E_5EED)
        let signatures: [[UInt8]] = [[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], [0xFF, 0xD8, 0xFF, 0xE0],
                                     Array("GIF89a".utf8), Array("BM".utf8), Array("RIFF".utf8) + [0, 1, 0, 0] + Array("WEBPVP8 ".utf8)]
        for signature in signatures {
            for trial in 0..<40 {
                let noise = (0..<(16 + Int(random.next() % 600))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                assertDefined(signature + noise, "signature \(signature.prefix(4)) #\(trial)")
            }
        }
        for (name, bytes) in try samples() {
            for trial in 0..<60 {
                var corrupted = bytes
                for _ in 0...(random.next() % 4) {
                    corrupted[Int(random.next() % UInt64(corrupted.count))] = UInt8(truncatingIfNeeded: random.next())
                }
                assertDefined(corrupted, "\(name) corrupted #\(trial)")
            }
        }
    }

    /// Headers that claim more than the file holds, less, nothing, or absurd amounts.
    func testLyingHeaders() async throws {
        let png = try photo("horse.png"), jpeg = try photo("coffee.jpg")
        func be32(_ v: Int) -> [UInt8] { TestImageFiles.be32(v) }
        func pngClaiming(_ w: Int, _ h: Int) -> [UInt8] {
            var bytes = png
            bytes.replaceSubrange(16..<24, with: be32(w) + be32(h))
            // Keep the IHDR checksum right, so only the size lies.
            bytes.replaceSubrange(29..<33, with: be32(Int(TestImageFiles.crc32(Array(bytes[12..<29])))))
            return bytes
        }
        XCTAssertNotNil(assertDefined(pngClaiming(40, 30), "png claims smaller"), "a smaller claim still decodes what it says")
        assertDefined(pngClaiming(4000, 4000), "png claims larger")
        assertDefined(pngClaiming(0, 30), "png claims zero wide")
        assertDefined(pngClaiming(30, 0), "png claims zero tall")
        assertDefined(pngClaiming(0x7FFF_FFFF, 1), "png claims 2³¹−1 wide")
        // The JPEG frame header's height and width, at the SOF0 marker.
        let sof = (0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) }!
        for (w, h) in [(8, 8), (65_535, 65_535), (0, 400), (600, 0), (4000, 4000)] {
            var bytes = jpeg
            bytes.replaceSubrange((sof + 5)..<(sof + 9), with: [UInt8(h >> 8), UInt8(h & 0xFF), UInt8(w >> 8), UInt8(w & 0xFF)])
            assertDefined(bytes, "jpeg claims \(w)×\(h)")
        }
        // A PNG chunk whose length is huge, or larger than what follows.
        for length in [0x7FFF_FFFF, 0xFFFF_FFFF, png.count] {
            var bytes = png
            bytes.replaceSubrange(33..<37, with: be32(length))
            assertDefined(bytes, "png chunk of \(length) bytes")
        }
    }

    /// Inputs the fuzzer found (see `make fuzz`); each once crashed or hung a decoder.
    func testFuzzRegressionInputs() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/FuzzRegressions")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertFalse(names.isEmpty)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
            assertDefined(bytes, name)
            for side in [1, 7, 300] {
                _ = try? ImageDecoder.decode(.data(bytes, name: name), for: .init(width: side, height: side, mode: .center), limits: limits)
            }
        }
    }
}
