import Foundation
import LoopbackServer
import XCTest

/// TLS with a test authority made in this process, HTTP/2 by ALPN, through Debian's curl: a real
/// client's handshake, certificate check and HTTP/2 framing.
final class TLSTests: XCTestCase {
    private var servers: [LoopbackServer] = []
    private var files: [URL] = []

    override func tearDown() {
        for server in servers { server.stop() }
        for file in files { try? FileManager.default.removeItem(at: file) }
        servers = []
        files = []
        super.tearDown()
    }

    private func makeServer(identity: LoopbackServer.TLSIdentity, allowsHTTP2: Bool = true,
                            handler: @escaping LoopbackServer.Handler) throws -> LoopbackServer {
        var configuration = LoopbackServer.Configuration()
        configuration.tls = identity
        configuration.allowsHTTP2 = allowsHTTP2
        let server = try LoopbackServer(configuration: configuration, handler: handler)
        servers.append(server)
        return server
    }

    private func authorityFile(_ identity: LoopbackServer.TLSIdentity) throws -> String {
        let url = try writeAuthority(of: identity)
        files.append(url)
        return url.path
    }

    private static let describe: LoopbackServer.Handler = { request in
        .text("\(request.version) \(request.method) \(request.path) host=\(request.header("host") ?? "-") body=\(request.body.count)",
              status: 200)
    }

    func testTheTestIdentityIsACertificateAuthorityAndAServerItSigned() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting(hosts: ["127.0.0.1", "localhost"])
        XCTAssertTrue(identity.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        XCTAssertTrue(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertTrue(try XCTUnwrap(identity.authorityCertificatePEM).hasPrefix("-----BEGIN CERTIFICATE-----"))
        let other = try LoopbackServer.TLSIdentity.makeForTesting()
        XCTAssertNotEqual(identity.authorityCertificatePEM, other.authorityCertificatePEM, "a fresh authority each time")

        let server = try makeServer(identity: identity, allowsHTTP2: false, handler: Self.describe)
        XCTAssertEqual(server.baseURL.absoluteString, "https://127.0.0.1:\(server.port)/")
        let authority = try authorityFile(identity)
        // By IP (IP:127.0.0.1) and by name (DNS:localhost, resolved to 127.0.0.1).
        let byAddress = try Curl.run(["--cacert", authority, "https://127.0.0.1:\(server.port)/a?b=c"])
        XCTAssertEqual(byAddress.exitCode, 0, byAddress.errors)
        XCTAssertEqual(byAddress.output, "HTTP/1.1 GET /a?b=c host=127.0.0.1:\(server.port) body=0\n")
        let byName = try Curl.run(["--cacert", authority, "--resolve", "localhost:\(server.port):127.0.0.1",
                                   "https://localhost:\(server.port)/named"])
        XCTAssertEqual(byName.exitCode, 0, byName.errors)
        // The other identity's authority does not vouch for this server.
        let wrong = try Curl.run(["--cacert", try authorityFile(other), "https://127.0.0.1:\(server.port)/"])
        XCTAssertEqual(wrong.exitCode, 60, "curl: the peer's certificate cannot be authenticated; \(wrong.errors)")
    }

    func testAClientThatDoesNotTrustTheAuthorityFailsTheHandshake() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let server = try makeServer(identity: identity, handler: Self.describe)
        let untrusting = try Curl.run(["https://127.0.0.1:\(server.port)/"])
        XCTAssertEqual(untrusting.exitCode, 60, untrusting.errors)
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.tlsHandshakeFailures == 1 && $0.openConnections == 0 },
                      "\(server.statistics)")
        // A client speaking plain HTTP to the TLS port fails too, and the server goes on.
        let plain = try RawClient(port: server.port)
        plain.send("GET / HTTP/1.1\r\n\r\n")
        XCTAssertTrue(plain.waitForClose())
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.tlsHandshakeFailures == 2 })
        let trusting = try Curl.run(["--cacert", try authorityFile(identity), "https://127.0.0.1:\(server.port)/"])
        XCTAssertEqual(trusting.exitCode, 0, trusting.errors)
        XCTAssertEqual(server.statistics.totalRequests, 1)
    }

    func testHTTP2ServesSeveralStreamsOnOneConnection() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let large = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let server = try makeServer(identity: identity, handler: { request in
            switch request.path {
            case "/large": LoopbackServer.Response(status: 200, headers: [.init("Content-Type", "application/octet-stream")], body: large)
            case "/gzip": LoopbackServer.Response(body: Array(String(repeating: "h2 gzip ", count: 500).utf8)).gzipped()
            case "/missing": .text("no", status: 404)
            default: Self.describe(request)
            }
        })
        let authority = try authorityFile(identity)
        let base = "https://127.0.0.1:\(server.port)"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-h2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        files.append(folder)
        // Five requests in one curl: one connection, HTTP/2 for each.
        let result = try Curl.run(["--http2", "--cacert", authority, "--write-out", "%{http_version} %{response_code}\\n",
                                   "-o", folder.appendingPathComponent("1").path, "\(base)/one",
                                   "-o", folder.appendingPathComponent("2").path, "\(base)/large",
                                   "-o", folder.appendingPathComponent("3").path, "\(base)/missing",
                                   "-o", folder.appendingPathComponent("4").path, "--compressed", "\(base)/gzip",
                                   "--next", "--http2", "--cacert", authority, "--write-out", "%{http_version} %{response_code}\\n",
                                   "-o", folder.appendingPathComponent("5").path, "-d", "posted body", "\(base)/post"])
        XCTAssertEqual(result.exitCode, 0, result.errors)
        XCTAssertEqual(result.output, "2 200\n2 200\n2 404\n2 200\n2 200\n")
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("1"), encoding: .utf8),
                       "HTTP/2 GET /one host=127.0.0.1:\(server.port) body=0\n")
        XCTAssertTrue(Array(try Data(contentsOf: folder.appendingPathComponent("2"))) == large, "3 MB through flow control, intact")
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("4"), encoding: .utf8), String(repeating: "h2 gzip ", count: 500))
        XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("5"), encoding: .utf8),
                       "HTTP/2 POST /post host=127.0.0.1:\(server.port) body=11\n")
        let statistics = server.statistics
        XCTAssertEqual(statistics.requests("HTTP/2"), 5)
        XCTAssertEqual(statistics.requests("HTTP/1.1"), 0)
        XCTAssertEqual(statistics.connectionsAccepted, 1, "every stream on one connection")

        // A header list over the limit is answered 431 on its stream, on either protocol.
        let padding = "X-Padding: " + String(repeating: "p", count: 20_000)
        for version in ["--http2", "--http1.1"] {
            let oversized = try Curl.run([version, "--cacert", authority, "-H", padding, "-o", "/dev/null",
                                          "--write-out", "%{http_version} %{response_code}", "\(base)/one"])
            XCTAssertEqual(oversized.output, version == "--http2" ? "2 431" : "1.1 431", oversized.errors)
        }
        XCTAssertEqual(server.statistics.headsTooLarge, 2)
        // A body over the limit (1 MB) is answered 413 on its stream.
        let bigBody = folder.appendingPathComponent("body")
        try Data(count: 1_500_000).write(to: bigBody)
        let tooLong = try Curl.run(["--http2", "--cacert", authority, "--data-binary", "@" + bigBody.path, "-o", "/dev/null",
                                    "--write-out", "%{http_version} %{response_code}", "\(base)/post"])
        XCTAssertEqual(tooLong.output, "2 413", tooLong.errors)

        // A client that offers only HTTP/1.1 gets it, on the same server.
        let http1 = try Curl.run(["--http1.1", "--cacert", authority, "--write-out", " %{http_version}", "\(base)/one"])
        XCTAssertEqual(http1.output, "HTTP/1.1 GET /one host=127.0.0.1:\(server.port) body=0\n 1.1", http1.errors)
    }

    func testScriptsRunOverTLS() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let gate = LoopbackServer.Gate()
        let server = try makeServer(identity: identity, allowsHTTP2: false, handler: { _ in
            .script([.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello ".utf8)), .wait(gate),
                     .send(Array("world!".utf8)), .close])
        })
        gate.open()
        let result = try Curl.run(["--cacert", try authorityFile(identity), server.baseURL.absoluteString])
        XCTAssertEqual(result.exitCode, 0, result.errors)
        XCTAssertEqual(result.output, "hello world!")
        XCTAssertEqual(gate.arrivalCount, 1)
    }
}
