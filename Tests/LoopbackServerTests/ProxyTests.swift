import Foundation
import LoopbackServer
import XCTest

/// The forward proxy: absolute-form requests forwarded, CONNECT tunnels (carrying TLS and HTTP/2
/// to an origin), targets off this machine refused, and every target recorded.
final class ProxyTests: XCTestCase {
    private var servers: [LoopbackServer] = []
    private var files: [URL] = []

    override func tearDown() {
        for server in servers { server.stop() }
        for file in files { try? FileManager.default.removeItem(at: file) }
        servers = []
        files = []
        super.tearDown()
    }

    private static let describe: LoopbackServer.Handler = { request in
        .text("\(request.version) \(request.method) \(request.path) host=\(request.header("host") ?? "-")", status: 200)
    }

    func testAbsoluteFormRequestsAreForwardedAndCONNECTTunnels() throws {
        let origin = try LoopbackServer(handler: Self.describe)
        let proxy = try LoopbackServer.proxy()
        servers += [origin, proxy]
        let proxyURL = "http://127.0.0.1:\(proxy.port)"

        let forwarded = try Curl.run(["--proxy", proxyURL, "http://127.0.0.1:\(origin.port)/a?x=1"])
        XCTAssertEqual(forwarded.exitCode, 0, forwarded.errors)
        XCTAssertEqual(forwarded.output, "HTTP/1.1 GET /a?x=1 host=127.0.0.1:\(origin.port)\n")

        let tunnelled = try Curl.run(["--proxy", proxyURL, "--proxytunnel", "http://127.0.0.1:\(origin.port)/through"])
        XCTAssertEqual(tunnelled.exitCode, 0, tunnelled.errors)
        XCTAssertEqual(tunnelled.output, "HTTP/1.1 GET /through host=127.0.0.1:\(origin.port)\n")

        XCTAssertEqual(proxy.proxiedTargets, ["127.0.0.1:\(origin.port)", "127.0.0.1:\(origin.port)"])
        XCTAssertEqual(origin.statistics.requests("HTTP/1.1"), 2)
    }

    func testATunnelCarriesTLSAndHTTP2ToTheOrigin() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        var configuration = LoopbackServer.Configuration()
        configuration.tls = identity
        let origin = try LoopbackServer(configuration: configuration, handler: Self.describe)
        let proxy = try LoopbackServer.proxy()
        servers += [origin, proxy]
        let authority = try writeAuthority(of: identity)
        files.append(authority)
        let result = try Curl.run(["--proxy", "http://127.0.0.1:\(proxy.port)", "--http2", "--cacert", authority.path,
                                   "https://127.0.0.1:\(origin.port)/secure"])
        XCTAssertEqual(result.exitCode, 0, result.errors)
        XCTAssertEqual(result.output, "HTTP/2 GET /secure host=127.0.0.1:\(origin.port)\n")
        XCTAssertEqual(proxy.proxiedTargets, ["127.0.0.1:\(origin.port)"])
        XCTAssertTrue(proxy.waitForStatistics(timeout: 10) { $0.openConnections == 0 }, "the tunnel ends with its client")
    }

    func testTargetsOffThisMachineAndOriginFormRequestsAreRefused() throws {
        let proxy = try LoopbackServer.proxy()
        servers.append(proxy)
        let outside = try RawClient(port: proxy.port)
        outside.send("GET http://example.com/page HTTP/1.1\r\nHost: example.com\r\n\r\n")
        XCTAssertEqual(try outside.readAnswer().status, 403)
        let connect = try RawClient(port: proxy.port)
        connect.send("CONNECT 10.1.2.3:443 HTTP/1.1\r\nHost: 10.1.2.3:443\r\n\r\n")
        XCTAssertEqual(try connect.readAnswer().status, 403)
        let originForm = try RawClient(port: proxy.port)
        originForm.send("GET /just-a-path HTTP/1.1\r\n\r\n")
        XCTAssertEqual(try originForm.readAnswer().status, 400)
        // Nothing listens on a port just closed: 502.
        let closedPort = try LoopbackServer(handler: Self.describe)
        let port = closedPort.port
        closedPort.stop()
        let unreachable = try RawClient(port: proxy.port)
        unreachable.send("CONNECT 127.0.0.1:\(port) HTTP/1.1\r\n\r\n")
        XCTAssertEqual(try unreachable.readAnswer().status, 502)
        XCTAssertEqual(proxy.proxiedTargets, ["example.com:80", "10.1.2.3:443", "127.0.0.1:\(port)"])
    }
}
