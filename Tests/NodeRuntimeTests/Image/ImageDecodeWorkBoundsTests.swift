import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime
internal import CWebP
#if canImport(Glibc)
import Glibc
#endif

/// Decoding work follows the pixels an image declares, not what else its file holds: reading stops
/// once the shown rows are complete, metadata is skipped without being read, and counts of blocks
/// and scans are capped before the work they would cost. Every file is made here, the same each run,
/// written to disk and decoded through `ImageDecoder.decode(_:for:)`; what a decode reads is the
/// kernel's count of bytes the process read (`rchar` in /proc/self/io), compared with the same image
/// without the hostile part.
@MainActor
final class ImageDecodeWorkBoundsTests: XCTestCase {
    private let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/image-decode-bounds")
    private let target = ImageDecoder.Target(width: 40, height: 40, mode: .aspectFit)
    /// How far past the clean file's reads a hostile one may go: a few small reads for headers.
    private let slack = 64 << 10

    override func setUpWithError() throws {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Measuring

    /// Bytes this process has read from files and pipes so far (the kernel's `rchar`).
    private func processBytesRead() throws -> Int {
        let descriptor = open("/proc/self/io", O_RDONLY)
        guard descriptor >= 0 else { throw XCTSkip("/proc/self/io is not readable here") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rchar:") }),
              let value = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) else {
            throw XCTSkip("/proc/self/io has no rchar line")
        }
        return value
    }

    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw XCTSkip("could not write \(path)")
        }
        return path
    }

    /// Decodes the file at `path` and returns the outcome with the bytes read while decoding.
    private func decodeCountingReads(_ path: String, limits: ImageDecoder.Limits = .init())
        throws -> (result: Result<Bitmap, ImageError>, bytesRead: Int) {
        let before = try processBytesRead()
        let result: Result<Bitmap, ImageError>
        do {
            guard let bitmap = try ImageDecoder.decode(.file(path), for: target, limits: limits) else {
                throw ImageError.decodeFailed(path, reason: "cancelled")
            }
            result = .success(bitmap)
        } catch let error as ImageError {
            result = .failure(error)
        }
        return (result, try processBytesRead() - before)
    }

    /// Decodes `clean` and `hostile` from files; both must show the same picture, and the hostile
    /// file may read at most `allowance` bytes more than the clean one.
    private func assertReadsLittleMore(clean: [UInt8], hostile: [UInt8], name: String, allowance: Int? = nil,
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        let cleanPath = try write(clean, "clean-" + name), hostilePath = try write(hostile, name)
        let (cleanResult, cleanRead) = try decodeCountingReads(cleanPath)
        let (hostileResult, hostileRead) = try decodeCountingReads(hostilePath)
        let expected = try cleanResult.get()
        let shown = try hostileResult.get()
        XCTAssertEqual([shown.width, shown.height], [expected.width, expected.height], name, file: file, line: line)
        XCTAssertEqual(shown.pixels, expected.pixels, "\(name): the same picture", file: file, line: line)
        let bound = cleanRead + (allowance ?? slack)
        XCTAssertLessThanOrEqual(hostileRead, bound,
                                 "\(name): \(hostile.count) bytes on disk, \(hostileRead) read (the clean file: \(cleanRead))",
                                 file: file, line: line)
    }

    /// Asserts a refusal (`decodeFailed` whose reason mentions `words`) that read at most `bound` bytes.
    private func assertRefused(_ bytes: [UInt8], _ name: String, mentioning words: String, readingAtMost bound: Int,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let (result, bytesRead) = try decodeCountingReads(try write(bytes, name))
        switch result {
        case .success(let bitmap):
            XCTFail("\(name) decoded to \(bitmap.width)×\(bitmap.height)", file: file, line: line)
        case .failure(.decodeFailed(_, let reason)):
            XCTAssertTrue(reason.contains(words), "\(name): \(reason)", file: file, line: line)
        case .failure(let error):
            XCTFail("\(name): \(error)", file: file, line: line)
        }
        XCTAssertLessThanOrEqual(bytesRead, bound, "\(name): \(bytes.count) bytes, \(bytesRead) read", file: file, line: line)
    }

    /// Fifty megabytes that are no image (a repeating run, so it is quick to make).
    private var garbage: [UInt8] { [UInt8](repeating: 0xA7, count: 50 << 20) }

    /// `pattern` `times` times over, copied in doubling runs (quick even in a debug build).
    private func repeated(_ pattern: [UInt8], times: Int) -> [UInt8] {
        let total = pattern.count * times
        guard total > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let base = buffer.baseAddress!
            pattern.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress!, count: pattern.count) }
            var filled = pattern.count
            while filled < total {
                let run = min(filled, total - filled)
                (base + filled).initialize(from: base, count: run)
                filled += run
            }
            initialized = total
        }
    }

    // MARK: PNG

    private func png() -> [UInt8] {
        TestImageFiles.png(width: 64, height: 48, colourType: 2, bitDepth: 8) { x, y in [x * 4, y * 5, (x ^ y) & 0xFF] }
    }

    /// The offset of the first chunk of `type` in `png`.
    private func chunkOffset(_ png: [UInt8], _ type: String) -> Int {
        var i = 8
        while i + 8 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            if png[(i + 4)..<(i + 8)].elementsEqual(type.utf8) { return i }
            i += 12 + length
        }
        fatalError("no \(type) chunk")
    }

    /// A chunk whose CRC is not computed (zeros): libpng discards an ancillary chunk with a wrong
    /// CRC, and a decoder that skips the chunk never reads it. Fast to make at any size.
    private func fillerChunk(_ type: String, count: Int) -> [UInt8] {
        TestImageFiles.be32(count) + Array(type.utf8) + [UInt8](repeating: 0x41, count: count) + [0, 0, 0, 0]
    }

    func testAPNGFollowedByFiftyMegabytesReadsOnlyItsImage() async throws {
        let clean = png()
        try assertReadsLittleMore(clean: clean, hostile: clean + garbage, name: "trailing.png")
    }

    /// A million ancillary chunks between the image data and the end chunk: never walked.
    func testAPNGWithAMillionChunksAfterItsImageDataReadsOnlyItsImage() async throws {
        let clean = png()
        let chunks = repeated(TestImageFiles.chunk("prVt", []), times: 1_000_000)
        let end = chunkOffset(clean, "IEND")
        try assertReadsLittleMore(clean: clean, hostile: Array(clean[..<end]) + chunks + Array(clean[end...]),
                                  name: "chunks-after-data.png")
    }

    /// Text and private chunks of tens of megabytes before the image data, and compressed text that
    /// inflates to 4 MB each: skipped without being read or inflated.
    func testAncillaryChunksBeforeTheImageDataAreSkippedUnread() async throws {
        let clean = png()
        var metadata = [UInt8]()
        for _ in 0..<3 { metadata += fillerChunk("prVt", count: 10 << 20) }
        metadata += fillerChunk("tEXt", count: 5 << 20)
        metadata += fillerChunk("iCCP", count: 5 << 20)
        let bomb = TestImageFiles.chunk("zTXt", Array("Comment".utf8) + [0, 0] + zlibZeros(count: 4 << 20))
        metadata += repeated(bomb, times: 100)
        let data = chunkOffset(clean, "IDAT")
        // Each skipped chunk may cost a small read for the header behind it.
        try assertReadsLittleMore(clean: clean, hostile: Array(clean[..<data]) + metadata + Array(clean[data...]),
                                  name: "metadata-before-data.png", allowance: slack + 105 * 4096)
    }

    func testThousandsOfChunksBeforeTheImageDataAreRefusedBeforeDecoding() async throws {
        let clean = png()
        let text = TestImageFiles.chunk("tEXt", Array("Comment".utf8) + [0] + Array("hello".utf8))
        let chunks = repeated(text, times: 2_000)
        let data = chunkOffset(clean, "IDAT")
        let hostile = Array(clean[..<data]) + chunks + Array(clean[data...])
        try assertRefused(hostile, "many-chunks.png", mentioning: "metadata", readingAtMost: 1_000 * text.count + slack)
    }

    /// A zlib stream that inflates to `count` zero bytes (a literal, then 258-byte matches, fixed
    /// Huffman codes): about 26 KB for 4 MB.
    private func zlibZeros(count: Int) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var accumulator = 0, bits = 0
        func put(_ value: Int, _ length: Int) {  // least significant bit first
            accumulator |= value << bits
            bits += length
            while bits >= 8 { out.append(UInt8(accumulator & 0xFF)); accumulator >>= 8; bits -= 8 }
        }
        func code(_ value: Int, _ length: Int) {  // Huffman codes go most significant bit first
            var reversed = 0
            for i in 0..<length where value & (1 << i) != 0 { reversed |= 1 << (length - 1 - i) }
            put(reversed, length)
        }
        put(1, 1); put(1, 2)          // the final block, fixed codes
        code(0x30, 8)                 // literal 0
        let matches = (count - 1) / 258
        for _ in 0..<matches { code(0xC5, 8); code(0, 5) }  // length 258, distance 1
        for _ in 0..<((count - 1) % 258) { code(0x30, 8) }
        code(0, 7)                    // end of block
        if bits > 0 { out.append(UInt8(accumulator & 0xFF)) }
        return out + TestImageFiles.be32((count % 65_521) << 16 | 1)
    }

    // MARK: JPEG

    private func photo(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/\(name)")))
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/\(name)")))
    }

    /// A marker segment of `marker` with `count` payload bytes.
    private func segment(_ marker: UInt8, count: Int) -> [UInt8] {
        [0xFF, marker, UInt8((count + 2) >> 8), UInt8((count + 2) & 0xFF)] + [UInt8](repeating: 0x20, count: count)
    }

    func testAJPEGFollowedByFiftyMegabytesReadsOnlyItsImage() async throws {
        let clean = try photo("coffee.jpg")
        try assertReadsLittleMore(clean: clean, hostile: clean + garbage, name: "trailing.jpg")
    }

    /// 480 application and comment segments of 64 KB (31 MB) behind an EXIF block that turns the
    /// picture, among them a second EXIF block that would turn it another way: the first is applied,
    /// the rest are skipped unread.
    func testApplicationSegmentsAreSkippedUnreadAndOnlyTheFirstEXIFBlockIsRead() async throws {
        let turned = TestImageFiles.jpeg(try photo("coffee.jpg"), withOrientation: 6)
        let exifEnd = 4 + (Int(turned[4]) << 8 | Int(turned[5]))
        let decoy = Array(TestImageFiles.jpeg(try photo("coffee.jpg"), withOrientation: 3)[2..<exifEnd])
        var segments = decoy
        for i in 0..<480 { segments += segment([0xE1, 0xE2, 0xED, 0xFE][i % 4], count: 65_533) }
        let hostile = Array(turned[..<exifEnd]) + segments + Array(turned[exifEnd...])
        try assertReadsLittleMore(clean: turned, hostile: hostile, name: "segments.jpg", allowance: slack + 481 * 4096)
        let shown = try XCTUnwrap(try ImageDecoder.decode(.file(folder.appendingPathComponent("segments.jpg").path), for: target))
        XCTAssertGreaterThan(shown.height, shown.width, "the first EXIF block's quarter turn")
    }

    func testThousandsOfCommentSegmentsAreRefusedBeforeDecoding() async throws {
        let clean = try photo("coffee.jpg")
        let comments = repeated(segment(0xFE, count: 10), times: 2_000)
        try assertRefused(Array(clean[..<2]) + comments + Array(clean[2...]), "comments.jpg", mentioning: "metadata",
                          readingAtMost: 1_000 * 14 + slack)
    }

    /// A progressive file whose last scan repeats 10,000 times: refused at the 401st scan, having
    /// read no further than that.
    func testTheScanCountIsCappedBeforeTheScansAreRead() async throws {
        let clean = try fixture("quadrants-progressive.jpg")
        var scans: [Range<Int>] = []
        var i = 2
        while i + 4 <= clean.count {
            guard clean[i] == 0xFF else { i += 1; continue }
            let marker = clean[i + 1]
            if marker == 0xD9 { break }
            let length = Int(clean[i + 2]) << 8 | Int(clean[i + 3])
            guard marker == 0xDA else { i += 2 + length; continue }
            var end = i + 2 + length
            while end + 1 < clean.count, !(clean[end] == 0xFF && clean[end + 1] != 0 && !(0xD0...0xD7).contains(clean[end + 1])) {
                end += 1
            }
            scans.append(i..<end)
            i = end
        }
        let last = try XCTUnwrap(scans.last)
        let repeated = Array(clean[last])
        let hostile = Array(clean[..<last.lowerBound]) + self.repeated(repeated, times: 10_000) + [0xFF, 0xD9]
        let scan402End = last.lowerBound + (402 - (scans.count - 1)) * repeated.count
        try assertRefused(hostile, "scans.jpg", mentioning: "400 scans", readingAtMost: scan402End + slack)
    }

    // MARK: GIF

    /// The blocks of `gif` up to its first frame's end: header and screen, extensions, the frame.
    private func gifParts(_ gif: [UInt8]) -> (head: [UInt8], frame: [UInt8]) {
        var i = 13
        if gif[10] & 0x80 != 0 { i += 3 << (Int(gif[10] & 0x07) + 1) }
        let head = Array(gif[..<i])
        let frameStart = i
        func skipSubBlocks() { while gif[i] != 0 { i += 1 + Int(gif[i]) }; i += 1 }
        while gif[i] != 0x2C { i += 2; skipSubBlocks() }
        let packed = gif[i + 9]
        i += 10
        if packed & 0x80 != 0 { i += 3 << (Int(packed & 0x07) + 1) }
        i += 1
        skipSubBlocks()
        return (head, Array(gif[frameStart..<i]))
    }

    func testAGIFFollowedByFiftyMegabytesReadsOnlyItsFirstFrame() async throws {
        let clean = try fixture("quadrants.gif")
        try assertReadsLittleMore(clean: clean, hostile: clean + garbage, name: "trailing.gif")
    }

    /// Twenty thousand frames after the first: only the first is shown, so only it is read.
    func testAGIFWithManyFramesReadsOnlyTheFirst() async throws {
        let clean = try fixture("quadrants.gif")
        let (head, frame) = gifParts(clean)
        let hostile = head + repeated(frame, times: 20_001) + [0x3B]
        try assertReadsLittleMore(clean: clean, hostile: hostile, name: "frames.gif")
    }

    func testThousandsOfGIFExtensionsBeforeTheFrameAreRefused() async throws {
        let clean = try fixture("quadrants.gif")
        let (head, frame) = gifParts(clean)
        let comment: [UInt8] = [0x21, 0xFE, 5] + Array("hello".utf8) + [0]
        let hostile = head + repeated(comment, times: 2_000) + frame + [0x3B]
        try assertRefused(hostile, "comments.gif", mentioning: "metadata", readingAtMost: 1_000 * comment.count + slack)
    }

    // MARK: WebP and BMP

    private func riffChunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let count = payload.count
        let size = [0, 8, 16, 24].map { UInt8((count >> $0) & 0xFF) }
        return Array(type.utf8) + size + payload + (count % 2 == 1 ? [0] : [])
    }

    /// A lossy 64×48 WebP in the extended container with a 6 MB colour profile before the image,
    /// 20 MB of EXIF and 10 MB of XMP after it, and 8 MB of bytes past the container's end: only
    /// the header and the image are read.
    func testWebPMetadataIsNotRead() async throws {
        let width = 64, height = 48
        let rgba = (0..<(width * height)).flatMap { i -> [UInt8] in [UInt8(i % width * 4), UInt8(i / width * 5), 90, 255] }
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.withUnsafeBufferPointer {
            WebPEncodeRGBA($0.baseAddress, Int32(width), Int32(height), Int32(width * 4), 90, &output)
        }
        guard size > 0, let output else { throw XCTSkip("libwebp could not encode") }
        let simple = Array(UnsafeBufferPointer(start: output, count: size))
        WebPFree(output)
        let imageChunk = Array(simple[12...])
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF)] }
        let header = riffChunk("VP8X", [0x20 | 0x08 | 0x04, 0, 0, 0] + le24(width - 1) + le24(height - 1))
        let body = Array("WEBP".utf8) + header + riffChunk("ICCP", [UInt8](repeating: 1, count: 6 << 20)) + imageChunk
            + riffChunk("EXIF", [UInt8](repeating: 2, count: 20 << 20)) + riffChunk("XMP ", [UInt8](repeating: 3, count: 10 << 20))
        let riff = Array("RIFF".utf8) + [0, 8, 16, 24].map { UInt8((body.count >> $0) & 0xFF) } + body
        try assertReadsLittleMore(clean: simple, hostile: riff + [UInt8](repeating: 4, count: 8 << 20), name: "metadata.webp")
    }

    func testABMPFollowedByFiftyMegabytesReadsOnlyItsRows() async throws {
        let width = 64, height = 48
        let stride = width * 3
        let pixels = (0..<(stride * height)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        var clean = Array("BM".utf8) + le32(54 + pixels.count) + le32(0) + le32(54)
        clean += le32(40) + le32(width) + le32(height) + le16(1) + le16(24) + le32(0) + le32(pixels.count)
        clean += le32(2835) + le32(2835) + le32(0) + le32(0) + pixels
        try assertReadsLittleMore(clean: clean, hostile: clean + garbage, name: "trailing.bmp")
    }
}
