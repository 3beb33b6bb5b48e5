import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Waits between retries without waiting: records each delay asked for.
final class RecordingRetryClock: NetworkRetryClock, @unchecked Sendable {
    private let delays = Locked<[Double]>([])
    var recorded: [Double] { delays.withLock { $0 } }
    func sleep(seconds: Double, cancellation: FetchCancellation) -> Bool {
        delays.withLock { $0.append(seconds) }
        return !cancellation.isCancelled
    }
}

/// Image nodes showing `.url` sources served by a `TestHTTPServer` on 127.0.0.1: pixels once loaded,
/// a progressive JPEG's coarse pass before the whole image, the connection closed when the node
/// leaves the preload range, retries with back-off, every hostile answer's own error, and the disk
/// cache with the server gone.
@MainActor
final class NetworkImageTests: XCTestCase {
    private var time = 0.0
    nonisolated(unsafe) private var server: TestHTTPServer!
    nonisolated(unsafe) private var folder: URL!
    nonisolated private var output: URL { GoldenImage.repositoryRoot.appendingPathComponent(".test-output/network-images") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestHTTPServer()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-network-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        server.stop()
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    // MARK: Helpers

    /// A loader of its own: no disk cache unless given one, retries waited by `clock`.
    private func makeLoader(disk: String? = nil, attempts: Int = 1, clock: RecordingRetryClock = RecordingRetryClock(),
                            change: (inout NetworkImageLoader.Configuration) -> Void = { _ in }) -> NetworkImageLoader {
        var configuration = NetworkImageLoader.Configuration()
        configuration.diskCacheDirectory = disk
        configuration.connectTimeout = 5
        configuration.idleTimeout = 30
        configuration.totalTimeout = 60
        configuration.retry.maximumAttempts = attempts
        configuration.retry.clock = clock
        configuration.retry.random = { 0.5 }
        change(&configuration)
        return NetworkImageLoader(configuration: configuration)
    }

    private func imageNode(_ url: URL, loader: NetworkImageLoader, size: Double = 64) -> ImageNode {
        let node = ImageNode()
        node.frame = Rect(x: 0, y: 0, width: size, height: size)
        node.emptyColor = Color(rgb: 0x808080)
        node.imageCache = ImageCache(budgetBytes: 8 << 20)
        node.networkLoader = loader
        node.source = .url(url)
        return node
    }

    private func show(_ nodes: [Node]) -> NodeHost {
        let (host, _) = makeHost()
        let root = Node()
        for node in nodes { root.addSubnode(node) }
        host.setRootNode(root)
        return host
    }

    /// Runs frames until `condition` holds, waiting for the UI thread's wake-ups in between (work
    /// posted to it by the fetches and workers); false after `timeout` seconds.
    @discardableResult
    private func runFrames(_ host: NodeHost, timeout: Double = 30, until condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            UIWakeup.shared.reset()
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            host.runtime.scheduler.waitUntilIdle()
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            if condition() { return true }
            if Date() > deadline { return false }
            _ = UIWakeup.shared.wait(timeout: 0.1)
        }
    }

    /// Frames past the contents' cross-fade, so the layer shows only its newest contents.
    private func finishFades(_ host: NodeHost) {
        time += 0.5
        host.runFrame(time: time, events: [])
    }

    private func isSettled(_ node: ImageNode) -> Bool {
        switch node.loadState {
        case .loaded, .failed: return node.showsCurrentContents
        case .empty, .loading: return false
        }
    }

    /// 64 × 64 pixels in four quadrants: red, green, blue, white.
    private func quadrantsPNG() -> [UInt8] {
        TestImageFiles.png(width: 64, height: 64, colourType: 2, bitDepth: 8) { x, y in
            switch (x < 32, y < 32) {
            case (true, true): return [255, 0, 0]
            case (false, true): return [0, 255, 0]
            case (true, false): return [0, 0, 255]
            case (false, false): return [255, 255, 255]
            }
        }
    }

    /// A 256 × 256 picture with detail finer than a JPEG block: a colour gradient with a dark disc,
    /// under fine diagonal stripes.
    private func detailedJPEG(progressive: Bool) -> [UInt8] {
        TestJPEG.encode(width: 256, height: 256, quality: 92, progressive: progressive) { x, y in
            let dx = x - 150, dy = y - 110
            let inDisc = dx * dx + dy * dy < 60 * 60
            var (r, g, b) = inDisc ? (40, 30, 60) : (x, y, 255 - x)
            let stripe = ((x + y) / 3) % 2 == 0 ? 45 : -45
            r += stripe; g += stripe; b += stripe
            func clamp(_ v: Int) -> UInt8 { UInt8(min(255, max(0, v))) }
            return (clamp(r), clamp(g), clamp(b))
        }
    }

    /// The mean difference per channel between two bitmaps of one size (255: wholly different).
    private func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        XCTAssertEqual([a.width, a.height], [b.width, b.height])
        let pa = a.pixels, pb = b.pixels
        var total = 0
        for (p, q) in zip(pa, pb) {
            for shift in stride(from: 0, to: 32, by: 8) {
                total += abs(Int((p >> UInt32(shift)) & 0xFF) - Int((q >> UInt32(shift)) & 0xFF))
            }
        }
        return Double(total) / Double(max(1, pa.count * 4))
    }

    private func write(_ bitmap: Bitmap?, _ name: String) {
        try? bitmap?.writePNG(to: output.appendingPathComponent(name + ".png").path)
    }

    private static let placeholderGrey: UInt32 = 0xFFE4_E7EC

    // MARK: Loading

    func testImageByURLShowsItsPixels() async throws {
        let png = quadrantsPNG()
        server.route("/quadrants.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let loader = makeLoader()
        let node = imageNode(server.url("/quadrants.png"), loader: loader, size: 32)
        let host = show([node])
        XCTAssertTrue(runFrames(host) { isSettled(node) }, "\(node.loadState)")
        finishFades(host)
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertNil(node.loadError)
        let contents = try XCTUnwrap(node.layer.contents)
        write(contents, "quadrants-by-url")
        XCTAssertEqual([contents.width, contents.height], [32, 32], "decoded at the size shown")
        XCTAssertEqual(contents.pixel(x: 8, y: 8), 0xFFFF_0000)
        XCTAssertEqual(contents.pixel(x: 24, y: 8), 0xFF00_FF00)
        XCTAssertEqual(contents.pixel(x: 8, y: 24), 0xFF00_00FF)
        XCTAssertEqual(contents.pixel(x: 24, y: 24), 0xFFFF_FFFF)
        let expected = try XCTUnwrap(ImageDecoder.decode(.data(png, name: "quadrants"),
                                                         for: .init(width: 32, height: 32, mode: .aspectFill)))
        XCTAssertEqual(node.image?.pixels, expected.pixels, "the same pixels as the bytes decoded directly")
        XCTAssertEqual(server.requestCount("/quadrants.png"), 1)
        XCTAssertEqual(loader.statistics.networkAttempts, 1)
        XCTAssertEqual(loader.memoryCachedBytes(for: server.url("/quadrants.png")), png, "the encoded bytes are kept in memory")
    }

    /// `settle` waits for images by URL: a server that answers only after settling has run several
    /// frames (nothing else pending) still gets its picture on screen before `settle` returns.
    func testSettleWaitsForAnImageByURL() async throws {
        let png = quadrantsPNG()
        let gate = TestHTTPServer.Gate()
        server.route("/late.png", [.wait(gate), .send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let node = imageNode(server.url("/late.png"), loader: makeLoader(), size: 32)
        let host = show([node])
        var frames = 0
        try host.settle(timeout: 30) {
            frames += 1
            // The answer comes once the frames alone would have settled.
            if frames == 6 { gate.open() }
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
        }
        XCTAssertGreaterThan(frames, 6)
        XCTAssertEqual(node.loadState, .loaded, "settled with the picture")
        XCTAssertFalse(node.isLoadingOverNetwork)
        XCTAssertEqual(node.layer.contents?.pixel(x: 8, y: 8), 0xFFFF_0000)
    }

    /// A server that never answers: `settle` gives up, naming the image it was waiting for.
    func testSettleTimeoutNamesTheImagesStillLoading() async throws {
        server.route("/never.png", [.stall])
        let node = imageNode(server.url("/never.png"), loader: makeLoader(), size: 32)
        let host = show([node])
        XCTAssertThrowsError(try host.settle(timeout: 0.5)) { error in
            let timeout = error as? SettleTimeout
            XCTAssertEqual(timeout?.pending.imagesLoading, 1)
            XCTAssertTrue("\(error)".contains("/never.png"), "\(error)")
        }
        node.source = nil
        XCTAssertEqual(host.pendingWork.imagesLoading, 0, "a fetch let go is no longer waited for")
    }

    /// A progressive JPEG held after its first scans draws a coarse picture that is neither blank nor
    /// the final one; the rest of the bytes bring the final picture, equal to a direct decode.
    func testProgressiveJPEGDrawsACoarsePassBeforeTheWholeImage() async throws {
        let jpeg = detailedJPEG(progressive: true)
        let scans = TestJPEG.scanOffsets(jpeg)
        XCTAssertGreaterThanOrEqual(scans.count, 6, "libjpeg's progressive script has many scans")
        let cut = scans[2]  // two whole scans: the DC scan and the first AC scan
        let start = TestHTTPServer.Gate(), gate = TestHTTPServer.Gate()
        let response = TestHTTPServer.response(body: jpeg)
        let headLength = response.count - jpeg.count
        server.route("/photo.jpg", [.wait(start), .send(Array(response[..<(headLength + cut)])), .wait(gate),
                                    .send(Array(response[(headLength + cut)...])), .close])
        let loader = makeLoader()
        let node = imageNode(server.url("/photo.jpg"), loader: loader, size: 128)
        let host = show([node])
        XCTAssertTrue(runFrames(host) { node.layer.contents != nil && node.showsCurrentContents },
                      "the empty colour is drawn first")
        finishFades(host)
        let blank = try XCTUnwrap(node.layer.contents)
        XCTAssertEqual(Set(blank.pixels), [0xFF80_8080], "nothing but the empty colour yet")
        start.open()
        XCTAssertTrue(gate.waitUntilReached(), "the server paused after the first scans")
        XCTAssertTrue(runFrames(host) {
            node.isShowingPartialImage && node.layer.contents?.identity != blank.identity && node.showsCurrentContents
        }, "a pass is drawn while the rest of the bytes wait")
        finishFades(host)
        let partial = try XCTUnwrap(node.layer.contents)
        XCTAssertEqual(node.loadState, .loading)
        gate.open()
        XCTAssertTrue(runFrames(host) { isSettled(node) }, "\(node.loadState)")
        finishFades(host)
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertFalse(node.isShowingPartialImage)
        let final = try XCTUnwrap(node.layer.contents)
        write(blank, "progressive-0-blank")
        write(partial, "progressive-1-partial")
        write(final, "progressive-2-final")
        XCTAssertGreaterThan(meanDifference(partial, blank), 20, "the pass shows the picture, not the empty colour")
        XCTAssertGreaterThan(meanDifference(partial, final), 3, "the pass is coarser than the final picture")
        XCTAssertLessThan(meanDifference(partial, final), meanDifference(blank, final) / 2,
                          "the pass is already the picture, coarse")
        let expected = try XCTUnwrap(ImageDecoder.decode(.data(jpeg, name: "photo"),
                                                         for: .init(width: 128, height: 128, mode: .aspectFill)))
        XCTAssertEqual(node.image?.pixels, expected.pixels, "the final picture is the whole file's decode")
        XCTAssertEqual(final.pixels, expected.pixels, "and it is what is drawn")
        XCTAssertEqual(server.requestCount("/photo.jpg"), 1)
    }

    /// A baseline JPEG shows nothing until it is whole.
    func testBaselineJPEGShowsOnlyWhenWhole() async throws {
        let jpeg = detailedJPEG(progressive: false)
        let gate = TestHTTPServer.Gate()
        let response = TestHTTPServer.response(body: jpeg)
        let split = response.count - jpeg.count / 3
        server.route("/baseline.jpg", [.send(Array(response[..<split])), .wait(gate), .send(Array(response[split...])), .close])
        let loader = makeLoader()
        let node = imageNode(server.url("/baseline.jpg"), loader: loader)
        let host = show([node])
        XCTAssertTrue(gate.waitUntilReached())
        // Counted after the node's fetch has been handed the bytes: a pass made of them would be
        // posted to the UI thread by then.
        let sent = split - (response.count - jpeg.count)
        XCTAssertTrue(runFrames(host) { loader.statistics.bytesReceived == sent && node.showsCurrentContents })
        finishFades(host)
        XCTAssertNil(node.image, "two thirds of a baseline JPEG show nothing")
        XCTAssertFalse(node.isShowingPartialImage)
        XCTAssertEqual(node.layer.contents?.pixel(x: 32, y: 32), 0xFF80_8080, "the empty colour")
        gate.open()
        XCTAssertTrue(runFrames(host) { isSettled(node) })
        XCTAssertEqual(node.loadState, .loaded)
    }

    /// `ImageDecoder` decodes a `.url` source too, waiting for `NetworkImageLoader.shared` on the
    /// calling thread; a failed fetch throws `ImageError.network`.
    func testDecoderFetchesURLSources() async throws {
        let png = quadrantsPNG()
        server.route("/decode.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let shared = NetworkImageLoader.shared
        let saved = shared.configuration
        shared.configuration.diskCacheDirectory = folder.path
        defer { shared.configuration = saved }
        let url = server.url("/decode.png"), missing = server.url("/missing.png")
        let (bitmap, size, failure) = onBackgroundThread { () -> (Bitmap?, [Int], ImageError?) in
            let bitmap = try? ImageDecoder.decode(.url(url), for: .init(width: 16, height: 16, mode: .aspectFill))
            let size = (try? ImageDecoder.naturalPixelSize(of: .url(url))).map { [$0.width, $0.height] } ?? []
            do {
                _ = try ImageDecoder.decode(.url(missing))
                return (bitmap, size, nil)
            } catch {
                return (bitmap, size, error as? ImageError)
            }
        }
        XCTAssertEqual(bitmap?.pixel(x: 4, y: 4), 0xFFFF_0000)
        XCTAssertEqual(bitmap?.pixel(x: 12, y: 12), 0xFFFF_FFFF)
        XCTAssertEqual(size, [64, 64])
        XCTAssertEqual(failure, .network(missing.absoluteString, .httpStatus(404)))
        XCTAssertEqual(server.requestCount("/decode.png"), 1, "the second read came from the loader's memory")
    }

    // MARK: Cancellation

    /// Leaving the preload range closes the connection (the server sees its client go); coming back
    /// fetches again.
    func testLeavingThePreloadRangeClosesTheConnectionAndComingBackFetchesAgain() async throws {
        let png = quadrantsPNG()
        let response = TestHTTPServer.response(body: png, contentType: "image/png")
        let gate = TestHTTPServer.Gate()
        server.route("/slow.png", [.send(Array(response.prefix(response.count / 2))), .wait(gate)],
                     [.send(response), .close])
        let loader = makeLoader()
        let node = imageNode(server.url("/slow.png"), loader: loader, size: 32)
        let host = show([node])
        XCTAssertTrue(gate.waitUntilReached(), "half the body sent, the rest held back")
        XCTAssertTrue(node.isFetching)
        node.setInterfaceState([.measureLayout])
        XCTAssertFalse(node.isFetching)
        XCTAssertEqual(node.loadState, .empty)
        XCTAssertTrue(server.waitForClientClose("/slow.png"), "the client closed the connection")
        XCTAssertEqual(loader.statistics.cancellations, 1)
        node.setInterfaceState([.measureLayout, .preload, .display, .visible])
        XCTAssertTrue(runFrames(host) { isSettled(node) }, "\(node.loadState)")
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual(server.requestCount("/slow.png"), 2, "fetched again on coming back")
        XCTAssertEqual(node.layer.contents?.pixel(x: 24, y: 24), 0xFFFF_FFFF)
    }

    /// A node let go while its image is on its way stops the fetch, though it never left the range
    /// (a node whose interface state was set by hand, outside any host).
    func testReleasingTheNodeClosesTheConnection() async throws {
        let gate = TestHTTPServer.Gate()
        server.route("/gone.jpg", [.send(TestHTTPServer.head(headers: ["Content-Length: 5000"])), .wait(gate)])
        let loader = makeLoader()
        weak var released: ImageNode?
        do {
            let node = imageNode(server.url("/gone.jpg"), loader: loader)
            node.setInterfaceState([.measureLayout, .preload])
            XCTAssertTrue(gate.waitUntilReached())
            XCTAssertTrue(node.isFetching)
            released = node
        }
        XCTAssertNil(released, "nothing else holds the node")
        XCTAssertTrue(server.waitForClientClose("/gone.jpg"), "the client closed the connection")
        XCTAssertEqual(loader.statistics.cancellations, 1)
    }

    /// Two nodes showing one URL at once share one request; the fetch goes on while one of them still
    /// wants it.
    func testNodesShowingOneURLShareTheFetch() async throws {
        let png = quadrantsPNG()
        let response = TestHTTPServer.response(body: png, contentType: "image/png")
        let gate = TestHTTPServer.Gate()
        server.route("/shared.png", [.send(Array(response.prefix(20))), .wait(gate), .send(Array(response.dropFirst(20))), .close])
        let loader = makeLoader()
        let first = imageNode(server.url("/shared.png"), loader: loader, size: 32)
        let second = imageNode(server.url("/shared.png"), loader: loader, size: 32)
        let third = imageNode(server.url("/shared.png"), loader: loader, size: 32)
        let host = show([first, second, third])
        XCTAssertTrue(gate.waitUntilReached())
        third.setInterfaceState([.measureLayout])  // one leaves: the others still want the bytes
        gate.open()
        XCTAssertTrue(runFrames(host) { isSettled(first) && isSettled(second) })
        XCTAssertEqual([first.loadState, second.loadState], [.loaded, .loaded])
        XCTAssertEqual(server.requestCount("/shared.png"), 1)
        XCTAssertEqual(server.clientCloseCount("/shared.png"), 0)
        XCTAssertEqual(loader.statistics.sharedFetches, 2)
    }

    // MARK: Retries

    func testTransientFailuresAreRetriedWithBackOff() async throws {
        let png = quadrantsPNG()
        let unavailable = TestHTTPServer.response(status: 503, body: Array("busy".utf8), contentType: "text/plain")
        server.route("/flaky.png", [.send(unavailable), .close], [.send(unavailable), .close],
                     [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let clock = RecordingRetryClock()
        let random = Locked([0.25, 0.75])
        let loader = makeLoader(attempts: 4, clock: clock) { configuration in
            configuration.retry.initialDelay = 0.5
            configuration.retry.multiplier = 2
            configuration.retry.jitter = 0.5
            configuration.retry.random = { random.withLock { $0.isEmpty ? 0 : $0.removeFirst() } }
        }
        let node = imageNode(server.url("/flaky.png"), loader: loader, size: 32)
        let host = show([node])
        XCTAssertTrue(runFrames(host) { isSettled(node) }, "\(node.loadState)")
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual(server.requestCount("/flaky.png"), 3)
        XCTAssertEqual(loader.statistics.retries, 2)
        // 0.5 × (1 − 0.5 × 0.25), then 1.0 × (1 − 0.5 × 0.75): exponential, with jitter off the top.
        XCTAssertEqual(clock.recorded, [0.4375, 0.625])
        XCTAssertEqual(node.layer.contents?.pixel(x: 8, y: 8), 0xFFFF_0000)
    }

    func testRetryDelaysGrowExponentiallyUpToTheirCap() {
        var policy = NetworkImageLoader.RetryPolicy()
        policy.initialDelay = 0.5
        policy.multiplier = 2
        policy.maximumDelay = 3
        policy.jitter = 0.5
        XCTAssertEqual((1...5).map { policy.delay(beforeRetry: $0, random: 0) }, [0.5, 1, 2, 3, 3])
        XCTAssertEqual((1...3).map { policy.delay(beforeRetry: $0, random: 1) }, [0.25, 0.5, 1])
        policy.jitter = 0
        XCTAssertEqual(policy.delay(beforeRetry: 2, random: 0.9), 1)
    }

    // MARK: Hostile answers

    /// Each bad answer ends in its own error on the node, which draws its error placeholder; none
    /// hangs (the idle and connect limits are short here) and 4xx is never retried.
    func testEveryHostileAnswerGivesItsOwnError() async throws {
        let body = Array(repeating: UInt8(0x55), count: 1000)
        server.route("/missing.jpg", [.send(TestHTTPServer.response(status: 404, body: Array("no".utf8))), .close])
        server.route("/broken.jpg", [.send(TestHTTPServer.response(status: 500, body: Array("oops".utf8))), .close])
        server.route("/silent.jpg", [.send(TestHTTPServer.head(headers: ["Content-Length: 1000"])), .stall])
        server.route("/truncated.jpg", [.send(TestHTTPServer.response(body: Array(body.prefix(400)), contentLength: 1000)), .close])
        server.route("/reset.jpg", [.send(TestHTTPServer.response(body: Array(body.prefix(400)), contentLength: 1000)), .reset])
        server.route("/lying.jpg", [.send(TestHTTPServer.response(body: body, contentLength: 100)), .close])
        server.route("/endless.jpg", [.send(TestHTTPServer.head()), .endless(Array(repeating: 0xAB, count: 16 << 10))])
        server.route("/announced.jpg", [.send(TestHTTPServer.head(headers: ["Content-Length: 900000000"])), .stall])
        server.route("/noise.jpg", [.send(TestHTTPServer.response(body: body)), .close])
        server.route("/chunks.jpg", [.send(TestHTTPServer.head(headers: ["Transfer-Encoding: chunked"]) + Array("10\r\n0123456789abcdef\r\n".utf8)), .close])
        server.route("/garbage.jpg", [.send(Array("SPDY/9 what\r\n\r\n".utf8)), .close])
        let slowListener = try SilentListener()
        let clock = RecordingRetryClock()
        let loader = makeLoader(attempts: 2, clock: clock) { configuration in
            configuration.maximumBodyBytes = 256 << 10
            configuration.maximumConcurrentFetches = 16
            configuration.maximumFetchesPerHost = 16
        }
        // The time-out cases have a loader of their own, so a busy machine cannot time out the others.
        let impatient = makeLoader(attempts: 2, clock: clock) { configuration in
            configuration.idleTimeout = 0.3
            configuration.connectTimeout = 0.3
        }
        let host = "http://127.0.0.1:\(server.port)"
        let cases: [(String, NetworkImageError?, ImageError?, requests: Int)] = [
            ("/missing.jpg", .httpStatus(404), nil, 1),
            ("/broken.jpg", .httpStatus(500), nil, 2),
            ("/silent.jpg", .timedOut(.idle, seconds: 0.3), nil, 2),
            ("/truncated.jpg", .truncatedBody(received: 400, expected: 1000), nil, 2),
            ("/reset.jpg", .connectionReset(received: 400), nil, 2),
            // A body longer than its Content-Length: the declared 100 bytes are taken (and are no image).
            ("/lying.jpg", nil, .unsupportedFormat(host + "/lying.jpg"), 1),
            ("/endless.jpg", .tooLarge(limit: 256 << 10), nil, 1),
            ("/announced.jpg", .tooLarge(limit: 256 << 10), nil, 1),
            ("/noise.jpg", nil, .unsupportedFormat(host + "/noise.jpg"), 1),
            ("/chunks.jpg", .truncatedBody(received: 16, expected: nil), nil, 2),
            ("/garbage.jpg", .malformedResponse(reason: "not an HTTP response"), nil, 1),
        ]
        var nodes: [(URL, ImageNode, ImageError)] = cases.map { path, network, decode, _ in
            let url = URL(string: host + path)!
            let timesOut = if case .timedOut = network { true } else { false }
            return (url, imageNode(url, loader: timesOut ? impatient : loader),
                    network.map { .network(url.absoluteString, $0) } ?? decode!)
        }
        let refusedURL = URL(string: "http://127.0.0.1:\(try closedPort())/refused.jpg")!
        let unreachableURL = URL(string: "http://127.0.0.1:\(slowListener.port)/slow.jpg")!
        let ftpURL = URL(string: "ftp://127.0.0.1:\(server.port)/file.jpg")!
        let extra: [(URL, ImageError)] = [
            (refusedURL, .network(refusedURL.absoluteString, .connectionFailed(reason: "Connection refused"))),
            (unreachableURL, .network(unreachableURL.absoluteString, .timedOut(.connect, seconds: 0.3))),
            (ftpURL, .network(ftpURL.absoluteString, .unsupportedURL(ftpURL.absoluteString,
                                                                     reason: "the ftp:// scheme; Tessera fetches http:// and https://"))),
        ]
        nodes += extra.map { url, error in (url, imageNode(url, loader: url == unreachableURL ? impatient : loader), error) }
        let started = Date()
        let shown = show(nodes.map(\.1))
        XCTAssertTrue(runFrames(shown) { nodes.allSatisfy { isSettled($0.1) } },
                      "\(nodes.filter { !isSettled($0.1) }.map { "\($0.0): \($0.1.loadState)" })")
        finishFades(shown)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "no case waits for long")
        for (url, node, expected) in nodes {
            XCTAssertEqual(node.loadError, expected, url.absoluteString)
            XCTAssertEqual(node.layer.contents?.pixel(x: 2, y: 2), Self.placeholderGrey, "\(url): the error placeholder is drawn")
            let reports = node.diagnostics.filter { $0.kind == .imageLoadFailed }
            XCTAssertEqual(reports.count, 1, url.absoluteString)
            XCTAssertTrue(reports.first?.message.contains(expected.description) == true, "\(reports)")
        }
        for (path, _, _, requests) in cases {
            XCTAssertEqual(server.requestCount(path), requests, "\(path): retried only when transient")
        }
        XCTAssertTrue(server.waitForClientClose("/endless.jpg"), "reading stopped at the limit and the connection closed")
        write(nodes.first?.1.layer.contents, "error-placeholder")
        slowListener.close()
    }

    /// A port nothing listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        return port
    }

    // MARK: Caches

    /// An image fetched once shows again from the disk cache with the server gone, in a new loader
    /// (a new process, as far as memory goes).
    func testDiskCacheShowsTheImageWithTheServerGone() async throws {
        let png = quadrantsPNG()
        server.route("/kept.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let url = server.url("/kept.png")
        let first = makeLoader(disk: folder.path)
        let node = imageNode(url, loader: first, size: 32)
        let host = show([node])
        XCTAssertTrue(runFrames(host) { isSettled(node) })
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertEqual(first.diskCache?.count, 1)
        server.stop()

        let second = makeLoader(disk: folder.path)
        let again = imageNode(url, loader: second, size: 32)
        let host2 = show([again])
        XCTAssertTrue(runFrames(host2) { isSettled(again) }, "\(again.loadState)")
        finishFades(host2)
        XCTAssertEqual(again.loadState, .loaded)
        XCTAssertEqual(second.statistics.diskHits, 1)
        XCTAssertEqual(second.statistics.networkAttempts, 0)
        XCTAssertEqual(again.layer.contents?.pixel(x: 24, y: 8), 0xFF00_FF00)
        XCTAssertEqual(again.image?.pixels, node.image?.pixels)
        _ = host
    }

    /// The disk cache keeps within its budget, least recently used out first; a hit counts as a use;
    /// the order survives reopening; leftover temporary files go.
    func testDiskCacheBudgetEvictsTheLeastRecentlyUsed() throws {
        let a = URL(string: "http://example.test/a")!, b = URL(string: "http://example.test/b")!
        let c = URL(string: "http://example.test/c")!
        let body = [UInt8](repeating: 7, count: 1000)
        let entry = ImageDiskCache.encodeEntry(key: a.absoluteString, body: body).count
        let cache = try ImageDiskCache(directory: folder.path, budgetBytes: entry * 2 + entry / 2)
        XCTAssertTrue(cache.store(body, for: a))
        XCTAssertTrue(cache.store(body + [1], for: b))
        XCTAssertEqual(cache.bytes(for: a), body, "a is now the most recently used")
        XCTAssertTrue(cache.store(body + [2], for: c))
        XCTAssertNil(cache.bytes(for: b), "b, the least recently used, was evicted")
        XCTAssertEqual(cache.bytes(for: a), body)
        XCTAssertEqual(cache.bytes(for: c), body + [2])
        XCTAssertLessThanOrEqual(cache.byteCount, cache.budgetBytes)
        XCTAssertEqual(cache.statistics.evictions, 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertEqual(files.count, 2, "\(files): one file per entry, nothing left half-written")
        XCTAssertEqual(cache.bytes(for: a), body)  // a used last: c is now the oldest

        // A process stopped mid-write leaves a temporary file; opening the directory removes it.
        XCTAssertTrue(FileManager.default.createFile(atPath: folder.path + "/" + ImageDiskCache.temporaryPrefix + "x",
                                                     contents: Data([1, 2])))
        let reopened = try ImageDiskCache(directory: folder.path, budgetBytes: entry * 2 + entry / 2)
        XCTAssertEqual(reopened.count, 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).count, 2)
        XCTAssertTrue(reopened.store(body + [3], for: b))
        XCTAssertNil(reopened.bytes(for: c), "the order of use came back from the files: c was the oldest")
        XCTAssertEqual(reopened.bytes(for: a), body)
        reopened.budgetBytes = entry
        XCTAssertEqual(reopened.count, 1, "a lower budget evicts at once")
    }

    /// A cache file that does not check out is a miss and is removed.
    func testCorruptDiskCacheFilesAreMissesAndRemoved() throws {
        let url = URL(string: "http://example.test/photo.jpg")!
        let body = [UInt8](0..<200)
        let cache = try ImageDiskCache(directory: folder.path, budgetBytes: 1 << 20)
        let path = folder.path + "/" + ImageDiskCache.entryName(for: url.absoluteString)
        let damages: [(String, ([UInt8]) -> [UInt8])] = [
            ("a flipped body byte", { var file = $0; file[file.count - 10] ^= 0x01; return file }),
            ("cut short", { Array($0.dropLast(50)) }),
            ("bytes appended", { $0 + [0, 0, 0] }),
            ("another format", { _ in Array("GIF89a not a cache file at all, long enough to pass the header".utf8) }),
            ("empty", { _ in [] }),
        ]
        for (index, (what, damage)) in damages.enumerated() {
            XCTAssertTrue(cache.store(body, for: url))
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            try Data(damage(file)).write(to: URL(fileURLWithPath: path))
            XCTAssertNil(cache.bytes(for: url), what)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(what): the file is removed")
            XCTAssertEqual(cache.statistics.corruptFilesRemoved, index + 1, what)
            XCTAssertEqual(cache.count, 0, what)
        }
        XCTAssertTrue(cache.store(body, for: url))
        XCTAssertEqual(cache.bytes(for: url), body, "a good file still reads back")
    }

    /// A directory that cannot be used is refused with a reason, and a loader configured with it
    /// fetches without a disk cache.
    func testAnUnusableDiskDirectoryIsReportedAndTheLoaderGoesOn() async throws {
        let file = folder.path + "-file"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data([1])))
        defer { try? FileManager.default.removeItem(atPath: file) }
        XCTAssertThrowsError(try ImageDiskCache(directory: file, budgetBytes: 1000)) { error in
            guard case ImageDiskCache.OpenError.unusableDirectory(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, file)
        }
        server.route("/plain.png", [.send(TestHTTPServer.response(body: quadrantsPNG(), contentType: "image/png")), .close])
        let loader = makeLoader(disk: file)
        let node = imageNode(server.url("/plain.png"), loader: loader, size: 32)
        let host = show([node])
        XCTAssertTrue(runFrames(host) { isSettled(node) })
        XCTAssertEqual(node.loadState, .loaded)
        XCTAssertNil(loader.diskCache)
    }

    // MARK: Natural size

    /// A node whose layout gives it no size learns the image's size from the first bytes fetched.
    func testNaturalSizeComesFromTheFetchedHeader() async throws {
        server.route("/natural.png", [.send(TestHTTPServer.response(body: quadrantsPNG(), contentType: "image/png")), .close])
        let loader = makeLoader()
        let node = ImageNode()
        node.networkLoader = loader
        node.source = .url(server.url("/natural.png"))
        XCTAssertEqual(node.calculateSizeThatFits(Size(width: 500, height: 500)), .zero, "unknown until fetched")
        let (host, _) = makeHost()
        XCTAssertTrue(runFrames(host) {
            ImageHeaderCache.shared.cachedSize(of: .url(server.url("/natural.png"))) != nil
        })
        XCTAssertEqual(node.calculateSizeThatFits(Size(width: 500, height: 500)), Size(width: 64, height: 64))
        XCTAssertEqual(server.requestCount("/natural.png"), 1)
    }
}

/// A listening socket that never accepts, its one-place queue filled by a connection of its own:
/// the next connection's handshake gets no answer, so a connect to it waits (for the connect
/// time-out).
final class SilentListener {
    private var listener: Int32 = -1
    private var filler: Int32 = -1
    let port: Int

    /// A listener on `host`:`port` (0: one the system picks) whose one-connection backlog is full.
    init(host: String = "127.0.0.1", port: Int = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(listener)
            throw NSError(domain: "SilentListener", code: Int(errno))
        }
        guard listen(listener, 0) == 0 else { throw NSError(domain: "SilentListener", code: Int(errno)) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        self.listener = listener
        self.filler = filler
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        if filler >= 0 { Glibc.close(filler); filler = -1 }
        if listener >= 0 { Glibc.close(listener); listener = -1 }
    }

    deinit { close() }
}
