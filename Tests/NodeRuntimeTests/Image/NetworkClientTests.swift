internal import CAllocationCount
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The network under the image loader, tried as a hostile server would: redirects, interim heads,
/// trailers and chunk extensions that never end, compressed bombs, a host that never answers beside
/// one that does, a queue of hundreds of URLs, a host whose first address is dead, and an app's own
/// fetcher. Every case ends in its own error within its limit, with memory bounded by the body limit.
final class NetworkClientTests: XCTestCase {
    nonisolated(unsafe) private var server: TestHTTPServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try TestHTTPServer()
    }

    override func tearDownWithError() throws {
        server.stop()
        try super.tearDownWithError()
    }

    private func makeLoader(_ change: (inout NetworkImageLoader.Configuration) -> Void = { _ in }) -> NetworkImageLoader {
        var configuration = NetworkImageLoader.Configuration()
        configuration.diskCacheDirectory = nil
        configuration.connectTimeout = 5
        configuration.idleTimeout = 30
        configuration.totalTimeout = 60
        configuration.retry.maximumAttempts = 1
        change(&configuration)
        return NetworkImageLoader(configuration: configuration)
    }

    private static func fetchResult(_ loader: NetworkImageLoader, _ url: URL) -> Result<[UInt8], NetworkImageError> {
        do {
            guard let bytes = try loader.bytes(for: url) else { return .failure(.connectionFailed(reason: "cancelled")) }
            return .success(bytes)
        } catch {
            return .failure(error)
        }
    }

    private func png() -> [UInt8] {
        TestImageFiles.png(width: 16, height: 16, colourType: 2, bitDepth: 8) { x, y in [x * 16, y * 16, 99] }
    }

    /// `bytes` compressed by gzip.
    private func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n", "-9"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(bytes))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](compressed)
    }

    /// Runs `work` while sampling the bytes the C allocator holds in use; returns the highest rise
    /// seen over the level before.
    private func peakAllocationRise(during work: @escaping @Sendable () -> Void) -> Int {
        let baseline = tessera_allocated_bytes()
        let done = Locked(false)
        let thread = Thread {
            work()
            done.withLock { $0 = true }
        }
        thread.start()
        var peak = baseline
        while !done.withLock({ $0 }) {
            peak = max(peak, tessera_allocated_bytes())
            usleep(1000)
        }
        return Int(max(0, peak - baseline))
    }

    // MARK: Redirects and coding

    func testARedirectChainIsFollowedAndALoopStopsAtTheLimit() throws {
        let png = png()
        server.route("/first.png", [.send(TestHTTPServer.response(status: 302, body: [], headers: ["Location: /second.png"])), .close])
        server.route("/second.png", [.send(TestHTTPServer.response(status: 301, body: [], headers: ["Location: \(server.url("/image.png").absoluteString)"])), .close])
        server.route("/image.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        server.route("/loop.png", [.send(TestHTTPServer.response(status: 307, body: [], headers: ["Location: /loop.png"])), .close])
        server.route("/elsewhere.png", [.send(TestHTTPServer.response(status: 302, body: [], headers: ["Location: file:///etc/passwd"])), .close])
        let loader = makeLoader { $0.maximumRedirects = 3 }
        XCTAssertEqual(try Self.fetchResult(loader, server.url("/first.png")).get(), png)
        XCTAssertEqual(server.receivedPaths, ["/first.png", "/second.png", "/image.png"])
        XCTAssertEqual(Self.fetchResult(loader, server.url("/loop.png")), .failure(.tooManyRedirects(limit: 3)))
        XCTAssertEqual(server.requestCount("/loop.png"), 4, "the first request and three redirects")
        guard case .failure(.unsupportedURL) = Self.fetchResult(loader, server.url("/elsewhere.png")) else {
            return XCTFail("a redirect to file:// is refused")
        }
    }

    func testCompressedBodiesAreDecodedAndABombStopsAtTheLimit() throws {
        let png = png()
        let compressed = try gzip(png)
        server.route("/packed.png", [.send(TestHTTPServer.response(body: compressed, contentType: "image/png",
                                                                     headers: ["Content-Encoding: gzip"])), .close])
        let bomb = try gzip([UInt8](repeating: 0, count: 64 << 20))
        XCTAssertLessThan(bomb.count, 1 << 20, "64 MB of zeros compress to little")
        server.route("/bomb.png", [.send(TestHTTPServer.response(body: bomb, contentType: "image/png",
                                                                   headers: ["Content-Encoding: gzip"])), .close])
        let loader = makeLoader { $0.maximumBodyBytes = 1 << 20 }
        XCTAssertEqual(try Self.fetchResult(loader, server.url("/packed.png")).get(), png)
        let result = Locked<Result<[UInt8], NetworkImageError>?>(nil)
        let url = server.url("/bomb.png")
        let rise = peakAllocationRise {
            let outcome = Self.fetchResult(loader, url)
            result.withLock { $0 = outcome }
        }
        XCTAssertEqual(result.withLock { $0 }, .failure(.tooLarge(limit: 1 << 20)))
        XCTAssertLessThan(rise, 8 << 20, "memory stays near the 1 MB body limit")
    }

    // MARK: What never ends

    func testEndlessInterimHeadsStopAtTheHeaderLimit() {
        let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        server.route("/continue.jpg", [.send(interim), .endless(interim)])
        let loader = makeLoader()
        XCTAssertEqual(Self.fetchResult(loader, server.url("/continue.jpg")),
                       .failure(.malformedResponse(reason: "status lines and headers longer than 65536 bytes")))
        XCTAssertTrue(server.waitForClientClose("/continue.jpg"), "the connection is closed")
    }

    func testEndlessTrailersStopAtTheHeaderLimit() {
        let head = TestHTTPServer.head(headers: ["Transfer-Encoding: chunked", "Trailer: X-Pad"])
        server.route("/trailers.jpg", [.send(head + Array("5\r\nhello\r\n0\r\n".utf8)),
                                       .endless(Array(("X-Pad: " + String(repeating: "a", count: 1000) + "\r\n").utf8))])
        let loader = makeLoader()
        XCTAssertEqual(Self.fetchResult(loader, server.url("/trailers.jpg")),
                       .failure(.malformedResponse(reason: "status lines and headers longer than 65536 bytes")))
        XCTAssertTrue(server.waitForClientClose("/trailers.jpg"))
    }

    /// One-byte chunks each behind 4 KB of chunk extension: the client skips the extensions without
    /// keeping them, so memory stays at the body limit however long the stream runs.
    func testChunkExtensionsKeepMemoryBounded() {
        let head = TestHTTPServer.head(headers: ["Transfer-Encoding: chunked"])
        let chunk = Array(("1;pad=" + String(repeating: "x", count: 4096) + "\r\nA\r\n").utf8)
        server.route("/extensions.jpg", [.send(head), .endless(chunk)])
        let loader = makeLoader { $0.maximumBodyBytes = 16 << 10 }
        let result = Locked<Result<[UInt8], NetworkImageError>?>(nil)
        let url = server.url("/extensions.jpg")
        let rise = peakAllocationRise {
            let outcome = Self.fetchResult(loader, url)
            result.withLock { $0 = outcome }
        }
        XCTAssertEqual(result.withLock { $0 }, .failure(.tooLarge(limit: 16 << 10)), "64 MB of extensions read through")
        XCTAssertLessThan(rise, 4 << 20)
        XCTAssertTrue(server.waitForClientClose("/extensions.jpg"))
    }

    // MARK: Fairness and descriptors

    /// Six URLs on a host that never answers hold only that host's share: an image from another host
    /// is fetched while they wait.
    func testAHostThatNeverAnswersDoesNotStarveAnother() throws {
        let other = try TestHTTPServer()
        defer { other.stop() }
        let png = png()
        other.route("/alive.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        for index in 0..<6 { server.route("/dead-\(index).jpg", [.stall]) }
        let loader = makeLoader { configuration in
            configuration.maximumConcurrentFetches = 6
            configuration.maximumFetchesPerHost = 4
        }
        let consumers = (0..<6).map { _ in RecordingConsumer() }
        let requests = (0..<6).map { loader.fetch(server.url("/dead-\($0).jpg"), consumer: consumers[$0]) }
        XCTAssertTrue((0..<4).allSatisfy { server.waitForRequests("/dead-\($0).jpg") }, "four of the dead host's fetches run")
        XCTAssertEqual(try Self.fetchResult(loader, other.url("/alive.png")).get(), png, "the other host is not kept waiting")
        XCTAssertEqual(server.receivedPaths.count, 4, "the dead host never gets more than its share")
        for request in requests { request.cancel() }
        XCTAssertTrue(consumers.allSatisfy { $0.events.isEmpty }, "cancelled fetches report nothing")
    }

    /// Five hundred URLs waiting their turn open no descriptor; the ones running hold one each.
    func testWaitingFetchesHoldNoDescriptors() {
        for index in 0..<4 { server.route("/held-\(index).jpg", [.stall]) }
        let loader = makeLoader { configuration in
            configuration.maximumConcurrentFetches = 4
            configuration.maximumFetchesPerHost = 4
        }
        var requests = (0..<4).map { loader.fetch(server.url("/held-\($0).jpg"), consumer: RecordingConsumer()) }
        XCTAssertTrue((0..<4).allSatisfy { server.waitForRequests("/held-\($0).jpg") })
        let before = openDescriptors()
        requests += (0..<500).map { loader.fetch(server.url("/queued-\($0).jpg"), consumer: RecordingConsumer()) }
        let after = openDescriptors()
        // The process's count moves a little on its own (the test server's sockets, the workers of
        // tests before this one closing theirs): one descriptor per queued fetch would be 500 more.
        XCTAssertLessThanOrEqual(after, before + 8, "queued fetches hold no descriptor (\(before) before, \(after) after)")
        XCTAssertEqual(server.receivedPaths.count, 4)
        for request in requests { request.cancel() }
    }

    private func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// A host whose first address swallows connections: the fetch gives that address part of the
    /// connect time and goes on to the next.
    func testEveryAddressOfAHostIsTried() throws {
        let dead: SilentListener
        do {
            dead = try SilentListener(host: "127.0.0.2", port: server.port)
        } catch {
            throw XCTSkip("127.0.0.2:\(server.port) cannot be bound here")
        }
        defer { dead.close() }
        let png = png()
        server.route("/two.png", [.send(TestHTTPServer.response(body: png, contentType: "image/png")), .close])
        let port = server.port
        let loader = makeLoader { configuration in
            configuration.connectTimeout = 2
            configuration.resolve = ["images.test:\(port):127.0.0.2,127.0.0.1"]
        }
        let url = URL(string: "http://images.test:\(server.port)/two.png")!
        XCTAssertEqual(try Self.fetchResult(loader, url).get(), png)
    }

    // MARK: An app's own fetcher

    func testAnAppsOwnFetcherServesImagesAndTheBodyLimitHolds() throws {
        let png = png()
        let fetcher = ScriptedFetcher(bodies: ["app://photos/one.png": png])
        let loader = makeLoader { configuration in
            configuration.fetcher = fetcher
            configuration.headers = ["Authorization": "Bearer 123"]
            configuration.maximumBodyBytes = 4096
        }
        XCTAssertEqual(try Self.fetchResult(loader, URL(string: "app://photos/one.png")!).get(), png)
        XCTAssertEqual(fetcher.requests.first?.headers["Authorization"], "Bearer 123")
        XCTAssertEqual(fetcher.requests.first?.maximumBodyBytes, 4096)
        XCTAssertEqual(Self.fetchResult(loader, URL(string: "app://photos/endless.png")!), .failure(.tooLarge(limit: 4096)))
        XCTAssertTrue(fetcher.cancelledEndless, "a fetcher passing more than the limit is cancelled")
        XCTAssertEqual(Self.fetchResult(loader, URL(string: "app://photos/missing.png")!), .failure(.httpStatus(404)))
    }
}

/// Records what a fetch tells it.
final class RecordingConsumer: NetworkImageConsumer, @unchecked Sendable {
    private let recorded = Locked<[String]>([])
    var events: [String] { recorded.withLock { $0 } }
    func fetchDidReceive(_ body: [UInt8]) { recorded.withLock { $0.append("receive \(body.count)") } }
    func fetchDidRestart() { recorded.withLock { $0.append("restart") } }
    func fetchDidFinish(_ body: [UInt8], origin: NetworkImageOrigin) { recorded.withLock { $0.append("finish \(body.count)") } }
    func fetchDidFail(_ error: NetworkImageError) { recorded.withLock { $0.append("fail \(error)") } }
}

/// An app's fetcher: serves bodies from memory in three pieces each on a thread of its own, 404 for
/// others, and "…/endless.png" without end until cancelled.
final class ScriptedFetcher: ImageFetcher, @unchecked Sendable {
    private let bodies: [String: [UInt8]]
    private let state = Locked<(requests: [ImageFetchRequest], cancelledEndless: Bool)>(([], false))

    init(bodies: [String: [UInt8]]) { self.bodies = bodies }

    var requests: [ImageFetchRequest] { state.withLock { $0.requests } }
    var cancelledEndless: Bool { state.withLock { $0.cancelledEndless } }

    private final class Task: ImageFetchTask, @unchecked Sendable {
        let cancelled = Locked(false)
        let onCancel: @Sendable () -> Void
        init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
        func cancel() {
            cancelled.withLock { $0 = true }
            onCancel()
        }
    }

    func startFetch(_ request: ImageFetchRequest, delegate: any ImageFetchDelegate) -> any ImageFetchTask {
        state.withLock { $0.requests.append(request) }
        let key = request.url.absoluteString
        let endless = key.hasSuffix("/endless.png")
        let task = Task { [state] in if endless { state.withLock { $0.cancelledEndless = true } } }
        let body = bodies[key]
        let thread = Thread {
            if endless {
                let piece = [UInt8](repeating: 7, count: 1000)
                for _ in 0..<10_000 where !task.cancelled.withLock({ $0 }) {
                    piece.withUnsafeBytes { delegate.didReceive($0) }
                }
                return
            }
            guard let body else { return delegate.didFail(.httpStatus(404)) }
            let third = max(1, body.count / 3)
            for start in stride(from: 0, to: body.count, by: third) {
                body[start..<min(body.count, start + third)].withUnsafeBytes { delegate.didReceive($0) }
            }
            delegate.didFinish()
        }
        thread.start()
        return task
    }
}
