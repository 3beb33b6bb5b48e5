import Foundation
import LoopbackServer
import TestSupport
import XCTest
@testable import NodeRuntime

/// Images over HTTPS and HTTP/2 from a real TLS server on 127.0.0.1 with a certificate made for the
/// test, connections kept and reused, a proxy on loopback (set, and from the environment), and the
/// request headers an app adds.
final class NetworkTLSTests: XCTestCase {
    private func makeLoader(trusting identity: LoopbackServer.TLSIdentity?,
                            _ change: (inout NetworkImageLoader.Configuration) -> Void = { _ in }) -> NetworkImageLoader {
        var configuration = NetworkImageLoader.Configuration()
        configuration.diskCacheDirectory = nil
        configuration.connectTimeout = 5
        configuration.idleTimeout = 30
        configuration.totalTimeout = 60
        configuration.retry.maximumAttempts = 1
        configuration.proxy = ""
        if let authority = identity?.authorityCertificatePEM { configuration.additionalTrustedCertificates = [authority] }
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

    private func png(_ shade: Int) -> [UInt8] {
        TestImageFiles.png(width: 8, height: 8, colourType: 2, bitDepth: 8) { x, y in [shade, x * 30, y * 30] }
    }

    /// Serves `/image-N.png` (N: 0…255) and records each request's headers.
    private final class Images: @unchecked Sendable {
        let requests = Locked<[LoopbackServer.Request]>([])
        let bodies: [String: [UInt8]]
        init(bodies: [String: [UInt8]]) { self.bodies = bodies }

        func answer(_ request: LoopbackServer.Request) -> LoopbackServer.Response {
            requests.withLock { $0.append(request) }
            guard let body = bodies[String(request.pathWithoutQuery)] else { return .text("no", status: 404) }
            return LoopbackServer.Response(status: 200, headers: [.init("Content-Type", "image/png")], body: body)
        }
    }

    private func serve(tls: LoopbackServer.TLSIdentity?, count: Int = 8) throws -> (LoopbackServer, Images) {
        let images = Images(bodies: Dictionary(uniqueKeysWithValues: (0..<count).map { ("/image-\($0).png", png($0 * 20)) }))
        var configuration = LoopbackServer.Configuration()
        configuration.tls = tls
        let server = try LoopbackServer(configuration: configuration) { images.answer($0) }
        return (server, images)
    }

    func testImagesOverHTTPSWithTheAuthorityTrustedAndRefusedWithout() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let (server, images) = try serve(tls: identity)
        defer { server.stop() }
        let url = server.baseURL.appendingPathComponent("image-1.png")
        XCTAssertEqual(url.scheme, "https")
        XCTAssertEqual(try Self.fetchResult(makeLoader(trusting: identity), url).get(), images.bodies["/image-1.png"])
        guard case .failure(.tlsFailed(let reason)) = Self.fetchResult(makeLoader(trusting: nil), url) else {
            return XCTFail("a server whose authority is not trusted is refused")
        }
        XCTAssertTrue(reason.lowercased().contains("certificate"), reason)
        let other = try LoopbackServer.TLSIdentity.makeForTesting()
        guard case .failure(.tlsFailed) = Self.fetchResult(makeLoader(trusting: other), url) else {
            return XCTFail("another authority's trust does not cover this server")
        }
    }

    /// Eight fetches at once over HTTPS share one HTTP/2 connection.
    func testHTTP2IsUsedWhereOfferedAndFetchesShareOneConnection() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let (server, images) = try serve(tls: identity)
        defer { server.stop() }
        let loader = makeLoader(trusting: identity)
        let results = Locked<[Int: [UInt8]]>([:])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let bytes = try? Self.fetchResult(loader, server.baseURL.appendingPathComponent("image-\(index).png")).get()
            results.withLock { $0[index] = bytes }
        }
        for index in 0..<8 { XCTAssertEqual(results.withLock { $0[index] }, images.bodies["/image-\(index).png"], "image \(index)") }
        XCTAssertEqual(server.statistics.requests("HTTP/2"), 8)
        XCTAssertEqual(server.statistics.connectionsAccepted, 1, "one connection, eight streams")
        XCTAssertTrue(images.requests.withLock { $0 }.allSatisfy { $0.version == "HTTP/2" })
    }

    /// Over plain HTTP/1.1, one fetch after another reuses the connection the first one opened.
    func testHTTP1ConnectionsAreKeptAndReused() throws {
        let (server, images) = try serve(tls: nil)
        defer { server.stop() }
        let loader = makeLoader(trusting: nil)
        for index in 0..<5 {
            XCTAssertEqual(try Self.fetchResult(loader, server.baseURL.appendingPathComponent("image-\(index).png")).get(),
                           images.bodies["/image-\(index).png"])
        }
        XCTAssertEqual(server.statistics.requests("HTTP/1.1"), 5)
        XCTAssertEqual(server.statistics.connectionsAccepted, 1)
    }

    func testTheAppsHeadersAndUserAgentAreSent() throws {
        let (server, images) = try serve(tls: nil)
        defer { server.stop() }
        let loader = makeLoader(trusting: nil) { configuration in
            configuration.headers = ["Authorization": "Bearer abc", "X-Bad": "a\r\nInjected: 1"]
            configuration.userAgent = "Photos/2.0"
        }
        _ = try Self.fetchResult(loader, server.baseURL.appendingPathComponent("image-0.png")).get()
        let request = try XCTUnwrap(images.requests.withLock { $0.first })
        XCTAssertEqual(request.header("Authorization"), "Bearer abc")
        XCTAssertEqual(request.header("User-Agent"), "Photos/2.0")
        XCTAssertNil(request.header("Injected"), "a header value with a line break is not sent")
        XCTAssertNil(request.header("X-Bad"))
        XCTAssertNotNil(request.header("Accept-Encoding"), "the client says which codings it decodes")
    }

    /// A proxy on loopback carries plain requests (absolute form) and HTTPS (a CONNECT tunnel), set
    /// in the configuration or read from the environment.
    func testAProxyCarriesHTTPAndHTTPS() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let (secure, images) = try serve(tls: identity)
        defer { secure.stop() }
        let (plain, _) = try serve(tls: nil)
        defer { plain.stop() }
        let proxy = try LoopbackServer.proxy()
        defer { proxy.stop() }
        let proxyURL = "http://127.0.0.1:\(proxy.port)"
        let loader = makeLoader(trusting: identity) { $0.proxy = proxyURL }
        let secureURL = secure.baseURL.appendingPathComponent("image-2.png")
        let plainURL = plain.baseURL.appendingPathComponent("image-3.png")
        XCTAssertEqual(try Self.fetchResult(loader, secureURL).get(), images.bodies["/image-2.png"])
        XCTAssertEqual(try Self.fetchResult(loader, plainURL).get(), images.bodies["/image-3.png"])
        let targets = proxy.proxiedTargets
        XCTAssertTrue(targets.contains { $0.contains("127.0.0.1:\(secure.port)") }, "\(targets)")
        XCTAssertTrue(targets.contains { $0.contains("127.0.0.1:\(plain.port)") }, "\(targets)")

        // From the environment: a loader with no proxy of its own reads https_proxy.
        setenv("https_proxy", proxyURL, 1)
        defer { unsetenv("https_proxy") }
        let fromEnvironment = makeLoader(trusting: identity) { $0.proxy = nil }
        let before = proxy.proxiedTargets.count
        XCTAssertEqual(try Self.fetchResult(fromEnvironment, secure.baseURL.appendingPathComponent("image-4.png")).get(),
                       images.bodies["/image-4.png"])
        XCTAssertEqual(proxy.proxiedTargets.count, before + 1, "the fetch went through the proxy")
    }

    /// The hostile answers over HTTPS: each ends in its own error, as over plain HTTP.
    func testHostileAnswersOverHTTPSGiveTheirOwnErrors() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let server = try TestHTTPServer(tls: identity)
        defer { server.stop() }
        let body = [UInt8](repeating: 0x55, count: 1000)
        let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        server.route("/truncated.jpg", [.send(TestHTTPServer.response(body: Array(body.prefix(400)), contentLength: 1000)), .close])
        server.route("/endless.jpg", [.send(TestHTTPServer.head()), .endless([UInt8](repeating: 0xAB, count: 16 << 10))])
        server.route("/continue.jpg", [.send(interim), .endless(interim)])
        server.route("/missing.jpg", [.send(TestHTTPServer.response(status: 404, body: Array("no".utf8))), .close])
        server.route("/silent.jpg", [.send(TestHTTPServer.head(headers: ["Content-Length: 1000"])), .stall])
        let loader = makeLoader(trusting: identity) { configuration in
            configuration.maximumBodyBytes = 256 << 10
            configuration.idleTimeout = 0.5
        }
        let expected: [(String, NetworkImageError)] = [
            ("/truncated.jpg", .truncatedBody(received: 400, expected: 1000)),
            ("/endless.jpg", .tooLarge(limit: 256 << 10)),
            ("/continue.jpg", .malformedResponse(reason: "status lines and headers longer than 65536 bytes")),
            ("/missing.jpg", .httpStatus(404)),
            ("/silent.jpg", .timedOut(.idle, seconds: 0.5)),
        ]
        for (path, error) in expected {
            XCTAssertEqual(Self.fetchResult(loader, server.url(path)), .failure(error), path)
        }
        XCTAssertTrue(server.waitForClientClose("/endless.jpg"), "reading stopped at the limit and the connection closed")
    }
}
