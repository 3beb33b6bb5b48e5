import Compositor
internal import CLCMS
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime
#if canImport(Glibc)
import Glibc
#endif

/// An attacker's inputs, each made here, each of which once cost far more than what it declares or
/// shows: colour profiles whose tables LittleCMS would allocate whole, animated GIF frames placed
/// outside their canvas, APNG files flooded with data chunks, disk-cache entries swapped for a named
/// pipe or a huge sparse file, and JPEGs of hundreds of tiny scans. Each ends in pixels or an
/// `ImageError`, its cost measured by a work or memory counter (not by a clock); and a valid minimal
/// lossless WebP, once refused, decodes.
@MainActor
final class ImageHostileInputsTests: XCTestCase {
    nonisolated(unsafe) private var folder: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: folder)
        super.tearDown()
    }

    private func bytesRead() throws -> Int {
        guard let count = ProcessCounters.bytesRead() else { throw XCTSkip("/proc/self/io has no rchar line") }
        return count
    }

    // MARK: Colour profiles

    private func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    private func be32(_ v: Int) -> [UInt8] { TestImageFiles.be32(v) }

    /// An ICC profile of `version` (0x0210_0000 is 2.1, 0x0430_0000 is 4.3) describing `space` (RGB
    /// by default) for a monitor against Lab, holding `tags` (signature, data) and, last, bytes no tag
    /// points at that make the profile's digest unique to this run (so no conversion cached by an
    /// earlier test stands in for it).
    private func iccProfile(version: Int, space: String = "RGB ", tags: [(String, [UInt8])]) -> [UInt8] {
        var data: [UInt8] = []
        var table = be32(tags.count)
        let dataStart = 128 + 4 + 12 * tags.count
        for (signature, bytes) in tags {
            table += Array(signature.utf8) + be32(dataStart + data.count) + be32(bytes.count)
            data += bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
        }
        data += Array(UUID().uuidString.utf8)
        var header = [UInt8](repeating: 0, count: 128)
        let size = 128 + table.count + data.count
        header.replaceSubrange(0..<4, with: be32(size))
        header.replaceSubrange(8..<12, with: be32(version))
        header.replaceSubrange(12..<24, with: Array("mntr\(space)Lab ".utf8))
        header.replaceSubrange(36..<40, with: Array("acsp".utf8))
        header.replaceSubrange(68..<80, with: be32(0xF6D6) + be32(0x1_0000) + be32(0xD32D))  // D50
        return header + table + data
    }

    /// `jpeg` with `profile` in APP2 segments of at most 65,000 bytes of it each.
    private func jpeg(_ jpeg: [UInt8], profile: [UInt8]) -> [UInt8] {
        let parts = stride(from: 0, to: profile.count, by: 65_000).map { Array(profile[$0..<min(profile.count, $0 + 65_000)]) }
        var segments: [UInt8] = []
        for (index, part) in parts.enumerated() {
            let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(parts.count)] + part
            segments += [0xFF, 0xE2] + be16(payload.count + 2) + payload
        }
        return Array(jpeg[..<2]) + segments + Array(jpeg[2...])
    }

    private func smallJPEG() -> [UInt8] {
        TestJPEG.encode(width: 16, height: 16, quality: 90, progressive: false) { x, y in (UInt8(x * 16), UInt8(y * 16), 90) }
    }

    /// Decodes `bytes` at natural size with its notes, and the most memory the process held above
    /// what it held before, from the kernel's peak resident set (reset first).
    private func decodeMeasuringMemory(_ bytes: [UInt8], _ name: String) throws -> (bitmap: Bitmap, notes: DecodeNotes, peakAbove: Int) {
        guard ProcessCounters.resetPeakResident(), let before = ProcessCounters.residentBytes() else {
            throw XCTSkip("the kernel's peak resident set cannot be reset here")
        }
        let source = ImageSource.data(bytes, name: name)
        let notes = DecodeNotes(source: source.description)
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(source, for: .init(width: 16, height: 16, mode: .aspectFit),
                                                           limits: .init(), notes: notes, isCancelled: { false }))
        let peak = try XCTUnwrap(ProcessCounters.peakResidentBytes())
        return (bitmap, notes, peak - before)
    }

    /// A `lut16` tag declaring 3 inputs, 15 outputs and 255 grid points (a 497 MB table) in 64 bytes.
    private var hugeLut16: [UInt8] {
        let identity = [0x1_0000, 0, 0, 0, 0x1_0000, 0, 0, 0, 0x1_0000].flatMap(be32)
        return Array("mft2".utf8) + [0, 0, 0, 0, 3, 15, 255, 0] + identity + be16(2) + be16(2)
            + [UInt8](repeating: 0x80, count: 3 * 2 * 2)  // the input tables: 3 channels of 2 entries
    }

    /// A `lutAtoB` tag of 3 inputs and 3 outputs whose colour lookup table declares 255 grid points
    /// a side at 16 bits (a 99 MB table) in 52 bytes.
    private var hugeLutAtoB: [UInt8] {
        Array("mAB ".utf8) + [0, 0, 0, 0, 3, 3, 0, 0] + be32(0) + be32(0) + be32(0) + be32(32) + be32(0)
            + [255, 255, 255] + [UInt8](repeating: 0, count: 13) + [2, 0, 0, 0]
    }

    /// A multi-process-element tag of one float colour lookup table declaring 255 grid points a side
    /// (a 199 MB table) in 52 bytes: not one of the tables checked against their tags, so it is the
    /// allocator of the conversion's LittleCMS context that refuses it.
    private var hugeFloatTable: [UInt8] {
        Array("mpet".utf8) + [0, 0, 0, 0] + be16(3) + be16(3) + be32(1) + be32(24) + be32(28)
            + Array("clut".utf8) + [0, 0, 0, 0] + be16(3) + be16(3) + [255, 255, 255] + [UInt8](repeating: 0, count: 13)
    }

    /// Profiles whose tables LittleCMS would allocate and zero before reading them (485 MB, 97 MB and
    /// 190 MB), in a JPEG of under 2 KB: each is not used, the picture shown as stored (sRGB) and said
    /// in the decode's notes, and the decode holds no more than 64 MB above what it held before.
    func testProfilesDeclaringHugeTablesFallBackToSRGBWithinBoundedMemory() async throws {
        let plain = smallJPEG()
        let stored = try decodeMeasuringMemory(plain, "plain.jpg").bitmap
        let profiles: [(String, [UInt8])] = [
            ("lut16", iccProfile(version: 0x0210_0000, tags: [("A2B0", hugeLut16)])),
            ("lutAtoB", iccProfile(version: 0x0430_0000, tags: [("A2B0", hugeLutAtoB)])),
            ("float table", iccProfile(version: 0x0430_0000, tags: [("D2B0", hugeFloatTable)])),
        ]
        for (what, profile) in profiles {
            let file = jpeg(plain, profile: profile)
            XCTAssertLessThan(file.count, 2_000, what)
            let (bitmap, notes, peakAbove) = try decodeMeasuringMemory(file, "\(what).jpg")
            XCTAssertLessThan(peakAbove, 64 << 20, "\(what): \(peakAbove / 1_000_000) MB above what the process held")
            XCTAssertEqual(bitmap.pixels, stored.pixels, "\(what): shown as stored")
            XCTAssertEqual(notes.colourShown, "as stored (sRGB)", what)
            XCTAssertTrue(notes.colourFallbacks.contains { $0.contains("its ICC profile is not used") }, "\(what): \(notes.colourFallbacks)")
        }
        // The tables checked against their tags are refused before LittleCMS reads them, saying so.
        XCTAssertTrue(ICCProfileTables.refusal(profiles[0].1)?.contains("declares tables of 497") == true,
                      String(describing: ICCProfileTables.refusal(profiles[0].1)))
        XCTAssertNotNil(ICCProfileTables.refusal(profiles[1].1))
        XCTAssertNil(ICCProfileTables.refusal(profiles[2].1))
        guard case .failure(let refusal) = ColourConversion.make(.profile(ICCProfile(profiles[2].1)), layout: .bitmap,
                                                                 memoryLimit: 4 << 20) else { return XCTFail("made") }
        XCTAssertTrue(refusal.reason.contains("LittleCMS would need more than"), refusal.reason)
    }

    /// A CMYK profile of lookup tables as a press profile has them (`lut16`, 17 grid points on four
    /// inputs, 500 KB) holds what it declares and converts within its memory limit.
    func testACMYKTableProfileStillConverts() async throws {
        let profile = try XCTUnwrap(cmsCreateProfilePlaceholder(nil))
        defer { cmsCloseProfile(profile) }
        cmsSetProfileVersion(profile, 2.1)
        cmsSetDeviceClass(profile, cmsSigOutputClass)
        cmsSetColorSpace(profile, cmsSigCmykData)
        cmsSetPCS(profile, cmsSigLabData)
        let pipeline = try XCTUnwrap(cmsPipelineAlloc(nil, 4, 3))
        defer { cmsPipelineFree(pipeline) }
        let table = try XCTUnwrap(cmsStageAllocCLut16bit(nil, 17, 4, 3, nil))
        let sampler: cmsSAMPLER16 = { input, output, _ in
            guard let input, let output else { return 0 }
            // Lab from ink: lighter with less ink, each ink pulling a and b its way.
            let (c, m, y, k) = (Double(input[0]), Double(input[1]), Double(input[2]), Double(input[3]))
            let light = max(0, 65535 - (c + m + y) / 4 - k * 0.9)
            output[0] = UInt16(min(65535, light))
            output[1] = UInt16(min(65535, max(0, 32768 + (m - c) / 4)))
            output[2] = UInt16(min(65535, max(0, 32768 + (y - c) / 4)))
            return 1
        }
        XCTAssertNotEqual(cmsStageSampleCLut16bit(table, sampler, nil, 0), 0)
        XCTAssertNotEqual(cmsPipelineInsertStage(pipeline, cmsAT_BEGIN, table), 0)
        XCTAssertNotEqual(cmsWriteTag(profile, cmsSigAToB0Tag, UnsafeRawPointer(pipeline)), 0)
        var white = cmsD50_XYZ().pointee
        XCTAssertNotEqual(cmsWriteTag(profile, cmsSigMediaWhitePointTag, &white), 0)
        let size = tessera_colour_profile_bytes(profile, nil, 0)
        var bytes = [UInt8](repeating: 0, count: size)
        XCTAssertEqual(tessera_colour_profile_bytes(profile, &bytes, size), size)
        XCTAssertGreaterThan(bytes.count, 17 * 17 * 17 * 17 * 3 * 2)
        XCTAssertNil(ICCProfileTables.refusal(bytes))
        let cmyk = [UInt8](try Data(contentsOf: GoldenImage.repositoryRoot.appendingPathComponent("Tests/NodeRuntimeTests/ImageFixtures/quadrants-cmyk.jpg")))
        let (_, notes, peakAbove) = try decodeMeasuringMemory(jpeg(cmyk, profile: bytes), "press-cmyk.jpg")
        XCTAssertEqual(notes.colourShown, "converted to sRGB from its ICC profile", "\(notes.colourFallbacks)")
        XCTAssertLessThan(peakAbove, 64 << 20)
    }

    // MARK: WebP

    /// A lossless (VP8L) WebP of 7×5 pixels in 28 bytes, as small as the public test suites' one-colour
    /// files: each of its five prefix codes holds one symbol of one bit (green 1, red 0, blue 1, alpha
    /// 0, distance 0), so its pixels take no bits at all, and its header says it uses no alpha.
    /// `dwebp` decodes it to 7×5 pixels of (0, 1, 1) with alpha 0; shown without alpha, it is opaque.
    private let minimalLosslessWebP: [UInt8] = [
        0x52, 0x49, 0x46, 0x46, 0x14, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50,  // RIFF, 20, WEBP
        0x56, 0x50, 0x38, 0x4C, 0x08, 0x00, 0x00, 0x00,  // VP8L, 8 bytes
        0x2F, 0x06, 0x00, 0x01, 0x00, 0xC8, 0xC8, 0x08,  // signature, 7×5, no alpha, version 0; the codes
    ]

    func testAMinimalLosslessWebPDecodes() async throws {
        XCTAssertEqual(minimalLosslessWebP.count, 28)
        let header = try ImageDecoder.header(of: minimalLosslessWebP, source: "one-colour.webp")
        XCTAssertEqual([header.width, header.height], [7, 5])
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.data(minimalLosslessWebP, name: "one-colour.webp")))
        XCTAssertEqual([bitmap.width, bitmap.height], [7, 5])
        for y in 0..<5 {
            for x in 0..<7 {
                XCTAssertEqual(bitmap.pixel(x: x, y: y), 0xFF00_0101, "(\(x), \(y)): opaque (0, 1, 1)")
            }
        }
        // At a target smaller than the image, through the same reader.
        let small = try XCTUnwrap(try ImageDecoder.decode(.data(minimalLosslessWebP, name: "one-colour.webp"),
                                                          for: .init(width: 3, height: 3, mode: .aspectFit)))
        XCTAssertEqual(small.pixel(x: 0, y: 0), 0xFF00_0101)
    }

    // MARK: The disk cache

    private let cachedURL = URL(string: "http://example.test/cached.png")!

    /// A cache in `folder` holding `body` for `cachedURL`, and the path of its file.
    private func cacheHolding(_ body: [UInt8], maximumBodyBytes: Int = 32 << 20) throws -> (ImageDiskCache, String) {
        let cache = try ImageDiskCache(directory: folder.path, budgetBytes: 1 << 30, maximumBodyBytes: maximumBodyBytes)
        XCTAssertTrue(cache.store(body, for: cachedURL))
        return (cache, folder.path + "/" + ImageDiskCache.entryName(for: cachedURL.absoluteString))
    }

    /// An entry another process replaced by a named pipe is a miss at once, and removed: the open
    /// never waits for a writer. (Read on another thread so that, were it to wait, the test fails
    /// after 20 s instead of hanging, and then lets it go by opening the pipe for writing.)
    func testADiskCacheEntryReplacedByANamedPipeIsAMissAndIsRemoved() async throws {
        let (cache, path) = try cacheHolding([UInt8](repeating: 9, count: 500))
        XCTAssertEqual(unlink(path), 0)
        XCTAssertEqual(mkfifo(path, 0o644), 0, String(cString: strerror(errno)))
        let done = DispatchSemaphore(value: 0)
        let result = Locked<[UInt8]??>(nil)
        let url = cachedURL
        Thread.detachNewThread {
            let bytes = cache.bytes(for: url)
            result.withLock { $0 = .some(bytes) }
            done.signal()
        }
        if done.wait(timeout: .now() + 20) == .timedOut {
            XCTFail("reading the entry waited for a writer on the named pipe")
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
        }
        XCTAssertEqual(result.withLock { $0 }, .some(nil), "a miss")
        var info = stat()
        XCTAssertNotEqual(lstat(path, &info), 0, "the pipe is removed")
        XCTAssertEqual(cache.count, 0)
        XCTAssertEqual(cache.statistics.corruptFilesRemoved, 1)
    }

    /// An entry replaced by a 512 MB sparse file is a miss, removed, having read none of it: its size
    /// is not the one indexed.
    func testADiskCacheEntryReplacedByAHugeSparseFileIsNotRead() async throws {
        let (cache, path) = try cacheHolding([UInt8](repeating: 9, count: 500))
        XCTAssertEqual(truncate(path, 512 << 20), 0, String(cString: strerror(errno)))
        let before = try bytesRead()
        XCTAssertNil(cache.bytes(for: cachedURL))
        let read = try bytesRead() - before
        XCTAssertLessThan(read, 64 << 10, "\(read) bytes read")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the file is removed")
        XCTAssertEqual(cache.statistics.corruptFilesRemoved, 1)
    }

    /// A file found when the cache opens, whose header agrees with its size but claims a body over the
    /// maximum (64 MB, sparse): refused from its header, unread, and removed.
    func testADiskCacheFileClaimingABodyOverTheMaximumIsNotRead() async throws {
        let key = cachedURL.absoluteString
        let body = 64 << 20
        var header = ImageDiskCache.encodeEntry(key: key, body: [])
        for i in 0..<8 { header[16 + i] = UInt8(truncatingIfNeeded: UInt64(body) >> (8 * UInt64(i))) }
        let path = folder.path + "/" + ImageDiskCache.entryName(for: key)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(header)))
        XCTAssertEqual(truncate(path, off_t(header.count + body)), 0)
        let cache = try ImageDiskCache(directory: folder.path, budgetBytes: 1 << 30, maximumBodyBytes: 8 << 20)
        XCTAssertEqual(cache.count, 1, "indexed by its size")
        let before = try bytesRead()
        XCTAssertNil(cache.bytes(for: cachedURL))
        let read = try bytesRead() - before
        XCTAssertLessThan(read, 64 << 10, "\(read) bytes read")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the file is removed")
        XCTAssertEqual(cache.statistics.corruptFilesRemoved, 1)
        // A body over the maximum is not stored either; one within it is, and reads back.
        XCTAssertFalse(cache.store([UInt8](repeating: 1, count: (8 << 20) + 1), for: cachedURL))
        XCTAssertTrue(cache.store([1, 2, 3], for: cachedURL))
        XCTAssertEqual(cache.bytes(for: cachedURL), [1, 2, 3])
    }

    // MARK: JPEG scans

    /// A progressive 1024×1024 JPEG of one grey whose last scan (a few bytes: an end-of-band run over
    /// every block) repeats until the file holds `scans` scans.
    private func jpegOfTinyScans(_ scans: Int) -> [UInt8] {
        let clean = TestJPEG.encode(width: 1024, height: 1024, quality: 80, progressive: true) { _, _ in (128, 128, 128) }
        let offsets = TestJPEG.scanOffsets(clean)
        let end = clean.count - 2  // the end-of-image marker
        let last = Array(clean[offsets.last!..<end])
        var file = Array(clean[..<end])
        for _ in offsets.count..<scans { file += last }
        return file + [0xFF, 0xD9]
    }

    /// 600 tiny progressive scans are refused before libjpeg decodes any of them: the scans are
    /// counted in the bytes first (libjpeg would decode 400, each a pass over every block, before its
    /// own limit stopped it).
    func testAJPEGOfSixHundredTinyScansIsRefusedBeforeItsScansAreDecoded() async throws {
        let file = jpegOfTinyScans(600)
        XCTAssertEqual(TestJPEG.scanOffsets(file).count, 600)
        XCTAssertLessThan(file.count, 64 << 10, "tiny scans")
        let before = DecodeWork.now.jpegScans
        XCTAssertThrowsError(try ImageDecoder.decode(.data(file, name: "scans.jpg"), for: .init(width: 64, height: 64, mode: .aspectFit))) {
            guard case ImageError.decodeFailed(_, let reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("more than 400 scans"), reason)
        }
        XCTAssertEqual(DecodeWork.now.jpegScans - before, 0, "scans libjpeg began")

        // Arriving over the network at once, the passes shown while it loads stop as quickly (libjpeg's
        // buffered-image mode, which reads scans as they come, has no limit of its own).
        let beforeStream = DecodeWork.now.jpegScans
        do {  // the decoder counts its scans when it goes, at the end of this block
            let streamed = try XCTUnwrap(ProgressiveJPEGDecoder(name: "scans.jpg", target: .init(width: 64, height: 64, mode: .aspectFit),
                                                                limits: .init()))
            XCTAssertNil(streamed.update(file, isCancelled: { false }))
            XCTAssertTrue(streamed.isFinished)
        }
        XCTAssertLessThanOrEqual(DecodeWork.now.jpegScans - beforeStream, 1, "at most the first scan's header")

        // 400 scans are within the limit and decode.
        let allowed = jpegOfTinyScans(400)
        XCTAssertNotNil(try ImageDecoder.decode(.data(allowed, name: "400-scans.jpg"), for: .init(width: 64, height: 64, mode: .aspectFit)))
    }

    // MARK: Animated GIF frames outside the canvas

    private let red = Color(rgb: 0xFF0000), green = Color(rgb: 0x00FF00), blue = Color(rgb: 0x0000FF)

    private func openAnimation(_ bytes: [UInt8], _ name: String) throws -> AnimatedImageDecoder {
        try XCTUnwrap(try AnimatedImageDecoder.open(.data(bytes, name: name)), "\(name) opens as an animation")
    }

    /// The next frame's delay and the canvas at its own size.
    private func nextFrame(_ decoder: AnimatedImageDecoder, file: StaticString = #filePath, line: UInt = #line) throws -> (delay: Double, pixels: [[Color]]) {
        let step = try decoder.advance()
        guard case .frame(let delay) = step else {
            XCTFail("expected a frame, got \(step)", file: file, line: line)
            return (0, [])
        }
        let target = ImageDecoder.Target(width: decoder.canvasWidth, height: decoder.canvasHeight, mode: .scaleToFill)
        let bitmap = try XCTUnwrap(try decoder.render(for: target), file: file, line: line)
        return (delay, (0..<bitmap.height).map { y in (0..<bitmap.width).map { x in Color(premultipliedARGB: bitmap.pixel(x: x, y: y)) } })
    }

    /// A 16×16 animation whose first frame is red, followed by four 3000×3000 frames placed wholly
    /// outside its canvas (right of it, below it, and far off): each keeps its delay and changes
    /// nothing, and none is decompressed (9 megapixels each, 36 in all, before).
    func testGIFFramesWhollyOutsideTheCanvasAreNotDecoded() async throws {
        let outside: [(Int, Int)] = [(16, 0), (0, 16), (16, 16), (40_000, 40_000)]
        let gif = AnimatedTestImages.gif(width: 16, height: 16, palette: [red, green, blue], loopCount: 0, frames:
            [.filled(0, width: 16, height: 16, delay: 5)]
            + outside.map { .filled(1, left: $0.0, top: $0.1, width: 3000, height: 3000, delay: 7, disposal: 2) })
        let decoder = try openAnimation(gif, "outside.gif")
        XCTAssertEqual([decoder.canvasWidth, decoder.canvasHeight], [16, 16])
        let before = DecodeWork.now.gifFramePixels
        let allRed = [[Color]](repeating: [Color](repeating: red, count: 16), count: 16)
        for play in 0..<2 {
            let first = try nextFrame(decoder)
            XCTAssertEqual(first.delay, 0.05, accuracy: 1e-9)
            XCTAssertEqual(first.pixels, allRed)
            for (index, _) in outside.enumerated() {
                let frame = try nextFrame(decoder)
                XCTAssertEqual(frame.delay, 0.07, accuracy: 1e-9, "play \(play), frame \(index + 1) keeps its delay")
                XCTAssertEqual(frame.pixels, allRed, "play \(play), frame \(index + 1) changes nothing")
            }
            XCTAssertEqual(try decoder.advance(), .endOfSequence)
            try decoder.rewind()
        }
        XCTAssertEqual(DecodeWork.now.gifFramePixels - before, 2 * 16 * 16, "only the first frame's pixels, twice")
    }

    /// A 2000×2000 frame of which an 8×8 corner lies on the 16×16 canvas: the corner is drawn, and
    /// only the frame's rows down to the canvas's last are decompressed.
    func testAGIFFrameMostlyOutsideTheCanvasDecodesOnlyTheRowsOnIt() async throws {
        let gif = AnimatedTestImages.gif(width: 16, height: 16, palette: [red, green, blue], loopCount: 0, frames: [
            .filled(0, width: 16, height: 16, delay: 5),
            .filled(1, left: 8, top: 8, width: 2000, height: 2000, delay: 7),
            .filled(2, left: 0, top: 0, width: 4, height: 4, delay: 9),
        ])
        let decoder = try openAnimation(gif, "corner.gif")
        let before = DecodeWork.now.gifFramePixels
        _ = try nextFrame(decoder)
        let corner = try nextFrame(decoder).pixels
        for y in 0..<16 {
            for x in 0..<16 {
                XCTAssertEqual(corner[y][x], x >= 8 && y >= 8 ? green : red, "(\(x), \(y))")
            }
        }
        let last = try nextFrame(decoder)
        XCTAssertEqual(last.delay, 0.09, accuracy: 1e-9, "the frame after it is read from the right place")
        XCTAssertEqual(last.pixels[0][0], blue)
        XCTAssertEqual(last.pixels[15][15], green)
        XCTAssertEqual(DecodeWork.now.gifFramePixels - before, 16 * 16 + 8 * 2000 + 4 * 4)
    }

    /// A frame on the canvas whose rows are far wider than it (a 4×600 canvas, a 5000×600 frame: 3
    /// megapixels to decompress for 2,400 shown) is refused from its descriptor, before it is
    /// decompressed: the work a frame may cost is bounded by the canvas.
    func testAGIFFrameCostingFarMoreThanItsCanvasIsRefused() async throws {
        let gif = AnimatedTestImages.gif(width: 4, height: 600, palette: [red, green, blue], loopCount: 0, frames: [
            .filled(0, width: 4, height: 600, delay: 5),
            .filled(1, left: 0, top: 0, width: 5000, height: 600, delay: 7),
        ])
        let decoder = try openAnimation(gif, "wide.gif")
        let before = DecodeWork.now.gifFramePixels
        _ = try nextFrame(decoder)
        XCTAssertThrowsError(try decoder.advance()) {
            guard case ImageError.overLimit(_, let reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("5000×600"), reason)
        }
        XCTAssertEqual(DecodeWork.now.gifFramePixels - before, 4 * 600)
    }

    // MARK: APNG chunk floods

    /// The chunks of a PNG after its signature, whole (length, type, data, CRC), with their types.
    private func pngChunks(_ png: [UInt8]) -> [(type: String, bytes: [UInt8])] {
        var chunks: [(String, [UInt8])] = []
        var i = 8
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            chunks.append((String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self), Array(png[i..<(i + 12 + length)])))
            i += 12 + length
        }
        return chunks
    }

    /// A 16×16 APNG of three frames (red, green, blue; each in two `fdAT` chunks, the first the
    /// default image), with `insert(n)` put before the `n`th `fcTL` after the first (1 or 2) or, for 3,
    /// after the last frame's data.
    private func apng(hiddenDefaultImage: Bool = false, inserting insert: (Int) -> [UInt8]) -> [UInt8] {
        let frames = [red, green, blue].map { AnimatedTestImages.APNGFrame.filled($0, width: 16, height: 16, delayMilliseconds: 100) }
        let clean = AnimatedTestImages.apng(width: 16, height: 16, plays: 0, frames: frames, firstFrameIsDefaultImage: !hiddenDefaultImage)
        var file = Array(clean[..<8])
        var controls = 0
        for chunk in pngChunks(clean) {
            if chunk.type == "fcTL" {
                if controls > 0 { file += insert(controls) }
                controls += 1
            }
            if chunk.type == "IEND" { file += insert(3) }
            file += chunk.bytes
        }
        return file
    }

    /// An `fdAT` chunk carrying no image data: its sequence number only.
    private let emptyFrameData = TestImageFiles.chunk("fdAT", TestImageFiles.be32(9_999))

    /// Plays `decoder` through once, returning each frame's colour (the canvas's top-left pixel) and
    /// the chunks walked.
    private func play(_ decoder: AnimatedImageDecoder) throws -> (colours: [Color], chunks: Int) {
        let before = DecodeWork.now.apngChunks
        var colours: [Color] = []
        while case .frame = try decoder.advance() {
            let target = ImageDecoder.Target(width: 16, height: 16, mode: .scaleToFill)
            let bitmap = try XCTUnwrap(try decoder.render(for: target))
            colours.append(Color(premultipliedARGB: bitmap.pixel(x: 0, y: 0)))
        }
        try decoder.rewind()
        return (colours, DecodeWork.now.apngChunks - before)
    }

    /// 900 text chunks before the second frame, and a text chunk and 900 empty data chunks between the
    /// second frame's data and the third frame (within `maximumMetadataBlocks`, so the file plays): walked at the
    /// first play, which indexes the frames; every later play walks only the frames' own chunks.
    func testAnAPNGsChunksAreWalkedOnceAndItsFramesIndexed() async throws {
        let text = TestImageFiles.chunk("tEXt", Array("Comment\u{0}x".utf8))
        let file = apng { n in
            switch n {
            case 1: return [UInt8]((0..<900).map { _ in text }.joined())
            case 2: return text + [UInt8]((0..<900).map { _ in self.emptyFrameData }.joined())
            default: return []
            }
        }
        let decoder = try openAnimation(file, "indexed.png")
        let first = try play(decoder)
        XCTAssertEqual(first.colours, [red, green, blue])
        XCTAssertGreaterThan(first.chunks, 1_800, "the first play walks every chunk")
        for round in 0..<3 {
            let again = try play(decoder)
            XCTAssertEqual(again.colours, [red, green, blue], "play \(round + 2)")
            // Each frame: its fcTL, its data chunks and the one after them that ends its data.
            XCTAssertLessThanOrEqual(again.chunks, 3 * 5, "play \(round + 2) walks only the frames' chunks")
        }
    }

    /// 100,000 empty data chunks (1.6 MB) between two frames, inside a frame's data, or as a hidden
    /// default image's data: refused at the first play, having walked no more than the metadata
    /// limit (between frames they carry no frame's data, so they count as metadata blocks) or a
    /// frame's data-chunk cap; before, each play walked them all. After the last frame they are
    /// never walked.
    func testAnAPNGFloodedWithEmptyDataChunksIsRefused() async throws {
        let text = TestImageFiles.chunk("tEXt", [0x41, 0])
        let flood = [UInt8]((0..<100_000).map { _ in emptyFrameData }.joined())
        let idatFlood = [UInt8]((0..<100_000).map { _ in TestImageFiles.chunk("IDAT", []) }.joined())
        let cases: [(String, [UInt8], refusal: String?)] = [
            ("between frames", apng { $0 == 2 ? text + flood : [] }, "metadata"),
            ("in a frame's data", apng { _ in [] }.inserting(flood, afterDataChunk: 1), "data chunks"),
            ("as a hidden default image", apng(hiddenDefaultImage: true) { _ in [] }.insertingBeforeFirstIDAT(idatFlood), "data chunks"),
            ("after the last frame", apng { $0 == 3 ? text + flood : [] }, nil),
        ]
        for (what, file, refusal) in cases {
            let decoder = try openAnimation(file, what)
            let before = DecodeWork.now.apngChunks
            var failure: ImageError?
            do {
                for _ in 0..<3 { while case .frame = try decoder.advance() {}; try decoder.rewind() }
            } catch let error as ImageError {
                failure = error
            }
            let walked = DecodeWork.now.apngChunks - before
            XCTAssertLessThan(walked, 1_200, "\(what): \(walked) chunks walked")
            guard let refusal else {
                XCTAssertNil(failure, what)
                continue
            }
            guard case .decodeFailed(_, let reason)? = failure else {
                XCTFail("\(what): \(String(describing: failure))")
                continue
            }
            XCTAssertTrue(reason.contains(refusal), "\(what): \(reason)")
        }
    }
}

private extension Array where Element == UInt8 {
    /// This PNG with `chunks` put right after its `index`th (0-based) `fdAT` chunk, where they
    /// continue that frame's data.
    func inserting(_ chunks: [UInt8], afterDataChunk index: Int) -> [UInt8] {
        var offset = 8, seen = 0
        while offset + 12 <= count {
            let length = Int(self[offset]) << 24 | Int(self[offset + 1]) << 16 | Int(self[offset + 2]) << 8 | Int(self[offset + 3])
            let end = offset + 12 + length
            if self[(offset + 4)..<(offset + 8)].elementsEqual("fdAT".utf8) {
                if seen == index { return Array(self[..<end]) + chunks + Array(self[end...]) }
                seen += 1
            }
            offset = end
        }
        return self
    }

    /// This PNG with `chunks` put before its first `IDAT` chunk.
    func insertingBeforeFirstIDAT(_ chunks: [UInt8]) -> [UInt8] {
        var offset = 8
        while offset + 12 <= count {
            let length = Int(self[offset]) << 24 | Int(self[offset + 1]) << 16 | Int(self[offset + 2]) << 8 | Int(self[offset + 3])
            if self[(offset + 4)..<(offset + 8)].elementsEqual("IDAT".utf8) { return Array(self[..<offset]) + chunks + Array(self[offset...]) }
            offset += 12 + length
        }
        return self
    }
}
