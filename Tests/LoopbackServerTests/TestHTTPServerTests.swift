import Foundation
import LoopbackServer
import TestSupport
import XCTest

/// The tests' scripted server (`TestHTTPServer`, on LoopbackServer) over HTTPS: the same scripts,
/// gates and records as over plain HTTP.
final class TestHTTPServerTests: XCTestCase {
    func testScriptsAreServedOverHTTPS() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let server = try TestHTTPServer(safetyLimit: 10, tls: identity)
        defer { server.stop() }
        let authority = try writeAuthority(of: identity)
        defer { try? FileManager.default.removeItem(at: authority) }
        XCTAssertEqual(server.url("/a.png").absoluteString, "https://127.0.0.1:\(server.port)/a.png")

        let gate = TestHTTPServer.Gate()
        let body = Array("scripted over TLS".utf8)
        let response = TestHTTPServer.response(body: body, contentType: "text/plain")
        server.route("/gated", [.send(Array(response.prefix(30))), .wait(gate), .send(Array(response.dropFirst(30))), .close])
        server.route("/flaky", [.send(TestHTTPServer.response(status: 503, body: [], contentType: "text/plain")), .close],
                     [.send(response), .close])
        server.route("/stall", [.send(TestHTTPServer.head(headers: ["Content-Length: 1000"])), .stall])
        gate.open()
        let gated = try Curl.run(["--cacert", authority.path, server.url("/gated").absoluteString])
        XCTAssertEqual(gated.exitCode, 0, gated.errors)
        XCTAssertEqual(gated.output, "scripted over TLS")
        XCTAssertTrue(gate.waitUntilReached(timeout: 1))

        let flaky = try Curl.run(["--cacert", authority.path, "--write-out", "%{response_code} ", "-o", "/dev/null",
                                  server.url("/flaky").absoluteString, "-o", "/dev/null", server.url("/flaky").absoluteString])
        XCTAssertEqual(flaky.output, "503 200 ", flaky.errors)
        XCTAssertEqual(server.requestCount("/flaky"), 2)

        // curl gives up on the stalled body after a second and closes: the server sees it leave.
        let stalled = try Curl.run(["--cacert", authority.path, server.url("/stall").absoluteString], maximumTime: 1)
        XCTAssertEqual(stalled.exitCode, 28, "curl timed out: \(stalled.errors)")
        XCTAssertTrue(server.waitForClientClose("/stall", timeout: 10))
        XCTAssertEqual(server.receivedPaths, ["/gated", "/flaky", "/flaky", "/stall"])
        XCTAssertEqual(server.server.statistics.tlsHandshakeFailures, 0)
    }
}
