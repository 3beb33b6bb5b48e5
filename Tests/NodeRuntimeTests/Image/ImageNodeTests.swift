import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Image decoding, its bad inputs, the decoded-image cache and the image node's states.
@MainActor
final class ImageNodeTests: XCTestCase {
    private var time = 0.0
    private let photos = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos")

    private func photo(_ name: String) -> String { photos.appendingPathComponent(name).path }
    private func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo(name)))) }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    // MARK: Headers and bad input

    func testHeadersGiveFormatAndSizeWithoutDecoding() async throws {
        XCTAssertEqual(try ImageDecoder.header(of: try bytes("retina.jpg"), source: "retina"),
                       .init(format: .jpeg, width: 1411, height: 1411))
        XCTAssertEqual(try ImageDecoder.header(of: try bytes("horse.png"), source: "horse"),
                       .init(format: .png, width: 400, height: 328))
        XCTAssertEqual(try ImageDecoder.header(of: try bytes("coffee.jpg"), source: "coffee"),
                       .init(format: .jpeg, width: 600, height: 400))
    }

    func testEveryBadInputEndsInAnErrorWithAReason() async throws {
        let png = try bytes("horse.png"), jpeg = try bytes("coffee.jpg")
        var random = SystemRandomNumberGenerator()
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
        // A PNG header claiming 100,000 × 100,000 pixels, followed by nothing.
        var bomb = Array(png.prefix(16))
        bomb += [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0]
        let cases: [(ImageSource, (ImageError) -> Bool)] = [
            (.file("/nonexistent/photo.png"), { if case .missingFile = $0 { return true } else { return false } }),
            (.data([], name: "zero"), { $0 == .empty("zero (0 bytes)") }),
            (.data(Array(png.prefix(20)), name: "short-png"), { if case .truncated = $0 { return true } else { return false } }),
            (.data(Array(png.prefix(png.count / 3)), name: "cut-png"), { if case .truncated = $0 { return true } else { return false } }),
            (.data(Array(jpeg.prefix(40)), name: "cut-jpeg"), { if case .truncated = $0 { return true } else { return false } }),
            (.data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1], name: "cut-gif"), { if case .truncated = $0 { return true } else { return false } }),
            (.data(noise, name: "noise"), { if case .unsupportedFormat = $0 { return true } else { return false } }),
            (.data(bomb, name: "bomb"), { $0 == .tooLarge("bomb (29 bytes)", width: 100_000, height: 100_000) }),
        ]
        for (source, matches) in cases {
            XCTAssertThrowsError(try ImageDecoder.decode(source), "\(source)") { error in
                guard let imageError = error as? ImageError else { return XCTFail("\(source): \(error)") }
                XCTAssertTrue(matches(imageError), "\(source): \(imageError)")
                XCTAssertFalse(imageError.description.isEmpty)
            }
        }
    }

    func testFormatComesFromTheBytesNotTheName() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/images")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let misnamed = folder.appendingPathComponent("actually-a-png.jpg")
        try Data(try bytes("horse.png")).write(to: misnamed)
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.file(misnamed.path)))
        XCTAssertEqual(bitmap.width, 400)
    }

    func testLimitsAreConfigurable() async throws {
        XCTAssertThrowsError(try ImageDecoder.decode(.file(photo("retina.jpg")), limits: .init(maximumSide: 1000)))
        XCTAssertNotNil(try ImageDecoder.decode(.file(photo("retina.jpg")), limits: .init(maximumSide: 2000)))
    }

    func testPhotosShrinkAtDecodeToTheSizeTheyAreShownAt() async throws {
        let retina = try XCTUnwrap(try ImageDecoder.decode(.file(photo("retina.jpg"))))
        let small = try ImageDecoder.prepareForDisplay(retina, crop: nil, mode: .aspectFill, target: (52, 52), scale: 1)
        XCTAssertEqual([small.width, small.height], [52, 52])
        let coffee = try XCTUnwrap(try ImageDecoder.decode(.file(photo("coffee.jpg"))))  // 600 × 400
        let filled = try ImageDecoder.prepareForDisplay(coffee, crop: nil, mode: .aspectFill, target: (52, 52), scale: 1)
        XCTAssertEqual([filled.width, filled.height], [78, 52], "covers the target, keeps the aspect")
        let fitted = try ImageDecoder.prepareForDisplay(coffee, crop: nil, mode: .aspectFit, target: (52, 52), scale: 1)
        XCTAssertEqual([fitted.width, fitted.height], [52, 35])
        let cropped = try ImageDecoder.prepareForDisplay(coffee, crop: Rect(x: 100, y: 0, width: 400, height: 400),
                                                         mode: .aspectFill, target: (100, 100), scale: 2)
        XCTAssertEqual([cropped.width, cropped.height], [100, 100])
        XCTAssertEqual(cropped.pointSize, Size(width: 50, height: 50))
        let natural = try ImageDecoder.prepareForDisplay(coffee, crop: nil, mode: .center, target: (52, 52), scale: 1)
        XCTAssertEqual(natural.identity, coffee.identity, "nothing to do: the same pixels")
    }

    // MARK: The node

    private func imageNode(_ source: ImageSource?, size: Size = Size(width: 52, height: 52)) -> ImageNode {
        let node = ImageNode()
        node.frame = Rect(origin: .zero, size: size)
        node.source = source
        return node
    }

    func testDecodesOnPreloadAndDrawsInDisplay() async {
        let (host, _) = makeHost()
        let cache = ImageCache(budgetBytes: 1 << 20)
        let node = imageNode(.file(photo("retina.jpg")))
        node.imageCache = cache
        let root = Node()
        root.addSubnode(node)
        XCTAssertEqual(node.loadState, .empty)
        host.setRootNode(root)
        XCTAssertEqual(node.loadState, .loading)
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual(node.image?.width, 52, "a 1411-pixel photo shown at 52 points keeps 52 pixels")
        XCTAssertEqual(node.layer.contents?.width, 52)
        XCTAssertEqual(cache.misses, 1)
    }

    func testFailedLoadDrawsThePlaceholderAndKeepsTheReason() async {
        let (host, _) = makeHost()
        let node = imageNode(.file("/nonexistent/avatar.png"))
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .failed(.missingFile("/nonexistent/avatar.png")))
        XCTAssertEqual(centreColor(node.layer).map { $0 != .clear }, true, "the error placeholder is drawn")
        // Not silently: the reason is reported once, where a developer looks.
        let reports = node.diagnostics.filter { $0.kind == .imageLoadFailed }
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("/nonexistent/avatar.png: no such file") == true, "\(reports)")
    }

    func testLeavingPreloadCancelsTheDecode() async {
        let (host, _) = makeHost()
        let scheduler = Runtime.shared.scheduler
        let gates = occupyAllWorkers()
        let cache = ImageCache(budgetBytes: 1 << 20)
        let node = imageNode(.file(photo("rocket.jpg")))
        node.imageCache = cache
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        XCTAssertTrue(node.isDecoding)
        let before = scheduler.statistics.cancelledBeforeStart
        node.setInterfaceState([.measureLayout])
        gates.forEach { $0.open() }
        scheduler.waitUntilIdle()
        settle(host, time: &time)
        XCTAssertFalse(node.isDecoding)
        XCTAssertEqual(node.loadState, .empty)
        XCTAssertGreaterThanOrEqual(scheduler.statistics.cancelledBeforeStart - before, 1)
        XCTAssertEqual(cache.count, 0, "the cancelled decode left nothing behind")
    }

    func testRepeatedSourcesHitTheCache() async {
        let (host, _) = makeHost()
        let cache = ImageCache(budgetBytes: 4 << 20)
        let root = Node()
        let first = imageNode(.file(photo("chelsea.jpg")))
        first.imageCache = cache
        root.addSubnode(first)
        host.setRootNode(root)
        settle(host, time: &time)
        let second = imageNode(.file(photo("chelsea.jpg")))
        second.imageCache = cache
        root.addSubnode(second)
        settle(host, time: &time)
        XCTAssertEqual(cache.misses, 1)
        XCTAssertEqual(cache.hits, 1)
        XCTAssertEqual(first.image?.identity, second.image?.identity, "one decoded bitmap, shared")
    }

    func testUnchangedDisplayArgumentsDoNotDrawAgain() async {
        let (host, _) = makeHost()
        let node = imageNode(.file(photo("clock.jpg")))
        node.emptyColor = Color(rgb: 0xCCCCCC)
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        let started = Runtime.shared.counters.snapshot.displaysStarted
        node.emptyColor = Color(rgb: 0xCCCCCC)
        node.contentMode = .aspectFill
        node.imageCornerRadii = .zero
        node.source = .file(photo("clock.jpg"))
        settle(host, time: &time)
        XCTAssertEqual(Runtime.shared.counters.snapshot.displaysStarted, started, "nothing changed, nothing drawn")
        node.imageCornerRadii = CornerRadii(8)
        settle(host, time: &time)
        XCTAssertEqual(Runtime.shared.counters.snapshot.displaysStarted, started + 1)
    }

    /// Setting the content mode or crop a node already has keeps the loaded image: no re-decode, no
    /// flash of the empty colour.
    func testSettingTheSameContentModeOrCropKeepsTheImage() async {
        let (host, _) = makeHost()
        let node = imageNode(.file(photo("coffee.jpg")))
        node.imageCache = ImageCache(budgetBytes: 0)  // every decode is a real one
        node.cropRect = Rect(x: 10, y: 10, width: 200, height: 200)
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        let image = node.image
        XCTAssertEqual(node.loadState, .loaded)
        node.contentMode = node.contentMode
        node.cropRect = Rect(x: 10, y: 10, width: 200, height: 200)
        XCTAssertEqual(node.loadState, .loaded, "not sent back to empty")
        XCTAssertEqual(node.image?.identity, image?.identity, "the same decoded image")
        node.contentMode = .aspectFit
        XCTAssertEqual(node.loadState, .loading, "a new mode decodes again")
        settle(host, time: &time)
    }

    /// Byte sources are equal when their bytes are, whatever their names, and hash alike; a byte
    /// changed anywhere makes another source. Comparing does not touch the bytes (see `ContentDigest`).
    func testByteSourcesCompareTheirBytes() async throws {
        let bytes = try self.bytes("coffee.jpg")
        XCTAssertEqual(ImageSource.data(bytes, name: "a"), ImageSource.data(bytes, name: "b"))
        XCTAssertEqual(ImageSource.data(bytes, name: "a").hashValue, ImageSource.data(bytes, name: "b").hashValue)
        var other = bytes
        other[other.count / 2] ^= 0xFF
        XCTAssertNotEqual(ImageSource.data(bytes, name: "a"), ImageSource.data(other, name: "a"))
        XCTAssertNotEqual(ImageSource.data(bytes, name: "a"), ImageSource.data(Array(bytes.dropLast()), name: "a"))
        XCTAssertNotEqual(ImageSource.file("/a.png"), ImageSource.data(bytes, name: "/a.png"))
    }

    func testNewContentsCrossFadeFromTheOld() async throws {
        let (host, _) = makeHost()
        let node = imageNode(.file(photo("brick.jpg")))
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        node.source = .file(photo("grass.jpg"))
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .loaded)
        // Frames of 1/60 s have passed since the new contents landed; the old ones are still fading.
        let fading = node.layer.sublayers.first { $0.name == "contents-fade" }
        XCTAssertNotNil(fading?.contents)
        time += 0.3
        host.runFrame(time: time, events: [])
        XCTAssertFalse(node.layer.sublayers.contains { $0.name == "contents-fade" })
    }

    // MARK: Decoding at the frame's size

    /// A node outside a list enters preload before layout gives it a size: it waits for the frame and
    /// decodes once, at that size (never at full size).
    func testDecodeWaitsForTheFrameAndUsesItsSize() async {
        let (host, _) = makeHost()
        let cache = ImageCache(budgetBytes: 4 << 20)
        let node = imageNode(.file(photo("retina.jpg")), size: .zero)
        node.imageCache = cache
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .empty, "no size yet: nothing decoded")
        XCTAssertEqual(cache.misses + cache.hits, 0)
        node.frame = Rect(x: 0, y: 0, width: 80, height: 80)
        XCTAssertEqual(node.loadState, .loading)
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual([node.image?.width, node.image?.height], [80, 80])
        XCTAssertEqual(cache.misses, 1)
    }

    /// Growing past the decoded size decodes again (the old image stays until the new one lands);
    /// shrinking keeps the larger image.
    func testGrowingDecodesAgainAndShrinkingDoesNot() async {
        let (host, _) = makeHost()
        let cache = ImageCache(budgetBytes: 4 << 20)
        let node = imageNode(.file(photo("retina.jpg")), size: Size(width: 40, height: 40))
        node.imageCache = cache
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(node.image?.width, 40)
        let small = node.image?.identity
        node.frame = Rect(x: 0, y: 0, width: 120, height: 120)
        XCTAssertEqual(node.loadState, .loading)
        XCTAssertEqual(node.image?.identity, small, "the smaller image shows while the larger one decodes")
        settle(host, time: &time)
        XCTAssertEqual(node.image?.width, 120)
        XCTAssertEqual(node.layer.contents?.width, 120)
        let large = node.image?.identity
        node.frame = Rect(x: 0, y: 0, width: 60, height: 60)
        settle(host, time: &time)
        XCTAssertEqual(node.image?.identity, large, "a smaller frame reuses the larger image")
        XCTAssertEqual(cache.misses, 2)
    }

    /// Leaving preload lets the decoded image go; coming back finds it in the cache.
    func testLeavingPreloadReleasesTheImage() async {
        let (host, _) = makeHost()
        let cache = ImageCache(budgetBytes: 4 << 20)
        let node = imageNode(.file(photo("chelsea.jpg")))
        node.imageCache = cache
        let root = Node()
        root.addSubnode(node)
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .loaded)
        node.setInterfaceState([.measureLayout])
        XCTAssertNil(node.image)
        XCTAssertEqual(node.loadState, .empty)
        node.setInterfaceState([.measureLayout, .preload])
        settle(host, time: &time)
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual([cache.misses, cache.hits], [1, 1])
    }

    /// The cache tells apart byte sources whose bytes differ anywhere, and finds an entry again from
    /// the same bytes in another array under another name.
    func testCacheKeysFollowTheBytes() async throws {
        let cache = ImageCache(budgetBytes: 1 << 20)
        let a = try bytes("coffee.jpg")
        var b = a
        b[b.count / 2] ^= 0xFF
        let bitmap = try Bitmap(width: 1, height: 1, filledWith: .white)
        func key(_ source: ImageSource) -> ImageCache.Key {
            ImageCache.Key(source: source, crop: nil, contentMode: .aspectFill, pixelWidth: 1, pixelHeight: 1)
        }
        cache.store(bitmap, for: key(.data(a, name: "x")))
        XCTAssertNil(cache.bitmap(for: key(.data(b, name: "x"))))
        XCTAssertNotNil(cache.bitmap(for: key(.data(Array(a), name: "y"))))
    }
}
