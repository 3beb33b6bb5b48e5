import Foundation
import LoopbackServer
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 over plain TCP, from raw sockets: keep-alive, the request parser's bounds and refusals,
/// gzip bodies, a client resetting mid-response, and scripts.
final class HTTP1Tests: XCTestCase {
    private var servers: [LoopbackServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        super.tearDown()
    }

    private func makeServer(_ change: (inout LoopbackServer.Configuration) -> Void = { _ in },
                            handler: @escaping LoopbackServer.Handler) throws -> LoopbackServer {
        var configuration = LoopbackServer.Configuration()
        change(&configuration)
        let server = try LoopbackServer(configuration: configuration, handler: handler)
        servers.append(server)
        return server
    }

    /// Echoes what it was asked: method, path, version, and the body's length.
    private static let echo: LoopbackServer.Handler = { request in
        .text("\(request.method) \(request.path) \(request.version) \(request.body.count) \(request.header("x-tag") ?? "-")", status: 200)
    }

    func testKeepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try makeServer(handler: Self.echo)
        XCTAssertEqual(server.baseURL.absoluteString, "http://127.0.0.1:\(server.port)/")
        let client = try RawClient(port: server.port)
        for index in 0..<5 {
            let answer = try client.get("/page/\(index)?q=\(index)", headers: "X-Tag: t\(index)\r\n")
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.headers["connection"], "keep-alive")
            XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), "GET /page/\(index)?q=\(index) HTTP/1.1 0 t\(index)\n")
        }
        // Two requests in one write (pipelined), one with a body: answered in order.
        client.send("POST /upload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /after HTTP/1.1\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(String(decoding: try client.readAnswer().body, as: UTF8.self), "POST /upload HTTP/1.1 5 -\n")
        let last = try client.readAnswer()
        XCTAssertEqual(String(decoding: last.body, as: UTF8.self), "GET /after HTTP/1.1 0 -\n")
        XCTAssertEqual(last.headers["connection"], "close")
        XCTAssertTrue(client.waitForClose(), "Connection: close ends the connection")
        XCTAssertTrue(server.waitForStatistics(timeout: 5) { $0.openConnections == 0 })
        let statistics = server.statistics
        XCTAssertEqual(statistics.connectionsAccepted, 1)
        XCTAssertEqual(statistics.requests("HTTP/1.1"), 7)

        // HTTP/1.0 closes unless asked to keep alive; HEAD has the length and no body.
        let old = try RawClient(port: server.port)
        old.send("GET /old HTTP/1.0\r\n\r\n")
        XCTAssertEqual(try old.readAnswer().headers["connection"], "close")
        XCTAssertTrue(old.waitForClose())
        let head = try RawClient(port: server.port)
        head.send("HEAD /h HTTP/1.1\r\n\r\n")
        let headAnswer = try head.readAnswer(bodyless: true)
        XCTAssertEqual(headAnswer.headers["content-length"], "21")
        XCTAssertEqual(try head.get("/next").status, 200, "no body bytes were sent after the HEAD's head")
    }

    func testAnOversizedHeadIsAnswered431AndClosed() throws {
        let server = try makeServer({ $0.maximumHeadBytes = 16 << 10 }, handler: Self.echo)
        let client = try RawClient(port: server.port)
        // More than the limit without a blank line; the rest keeps coming while the server answers.
        client.send("GET / HTTP/1.1\r\nX-Padding: " + String(repeating: "x", count: 40_000))
        let answer = try client.readAnswer()
        XCTAssertEqual(answer.status, 431)
        XCTAssertTrue(client.waitForClose())
        // Just under the limit is served.
        let fits = try RawClient(port: server.port)
        XCTAssertEqual(try fits.get("/", headers: "X-Padding: " + String(repeating: "y", count: 16_000) + "\r\n").status, 200)
        XCTAssertEqual(server.statistics.headsTooLarge, 1)
        XCTAssertEqual(server.statistics.requests("HTTP/1.1"), 1, "the oversized head never reached the handler")
    }

    func testMalformedRequestsAreRefusedWithTheirStatus() throws {
        let server = try makeServer({ $0.maximumBodyBytes = 1000 }, handler: Self.echo)
        let cases: [(String, Int)] = [
            ("HELLO\r\n\r\n", 400),
            ("GET / HTTP/2.0\r\n\r\n", 505),
            ("GET / SPDY/3\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n Folded: line\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
        ]
        for (request, status) in cases {
            let client = try RawClient(port: server.port)
            client.send(request)
            XCTAssertEqual(try client.readAnswer().status, status, request)
            XCTAssertTrue(client.waitForClose(), "closed after \(request)")
        }
        XCTAssertEqual(server.statistics.totalRequests, 0)
    }

    func testGzipBodies() throws {
        let text = Array(String(repeating: "Tessera serves gzip. ", count: 2000).utf8)
        let server = try makeServer(handler: { _ in
            LoopbackServer.Response(status: 200, headers: [.init("Content-Type", "text/plain")], body: text).gzipped()
        })
        let answer = try get("/", port: server.port)
        XCTAssertEqual(answer.headers["content-encoding"], "gzip")
        XCTAssertLessThan(answer.body.count, text.count / 10)
        XCTAssertEqual(Gzip.decompress(answer.body), text)
        XCTAssertNil(Gzip.decompress(Array(answer.body.prefix(answer.body.count / 2))), "a cut stream is not a body")
        // Through curl, which decodes it.
        let curl = try Curl.run(["--compressed", server.baseURL.absoluteString])
        XCTAssertEqual(curl.exitCode, 0, curl.errors)
        XCTAssertEqual(curl.output, String(decoding: text, as: UTF8.self))
    }

    func testAClientThatResetsMidResponseEndsOnlyItsConnection() throws {
        let big = [UInt8](repeating: 0x5A, count: 32 << 20)
        let server = try makeServer(handler: { request in
            request.path == "/big" ? LoopbackServer.Response(body: big) : .text("small", status: 200)
        })
        let reader = try RawClient(port: server.port, receiveBuffer: 8192)
        reader.send("GET /big HTTP/1.1\r\n\r\n")
        var entry = pollfd(fd: reader.descriptor, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&entry, 1, 10_000), 1, "the answer starts")
        reader.reset()
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.clientsGoneMidResponse == 1 && $0.openConnections == 0 },
                      "\(server.statistics)")
        XCTAssertEqual(try get("/small", port: server.port).status, 200, "the server goes on serving")
    }

    func testScriptsSendBytesPauseAtGatesAndSeeClientsLeave() throws {
        let gate = LoopbackServer.Gate()
        let left = LockedCounter()
        let server = try makeServer(handler: { request in
            switch request.path {
            case "/scripted":
                return .script([.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234".utf8)), .wait(gate),
                                .send(Array("56789".utf8)), .close])
            default:
                return .script([.send(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)), .stall], whenClientLeaves: { left.increment() })
            }
        })
        let client = try RawClient(port: server.port)
        client.send("GET /scripted HTTP/1.1\r\n\r\n")
        XCTAssertTrue(gate.waitUntilReached(timeout: 10))
        gate.open()
        let answer = try client.readAnswer()
        XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), "0123456789")
        XCTAssertTrue(client.waitForClose(), "the script closes")

        let stalled = try RawClient(port: server.port)
        stalled.send("GET /stall HTTP/1.1\r\n\r\n")
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.requests("HTTP/1.1") == 2 })
        stalled.close()
        XCTAssertTrue(left.wait(for: 1, timeout: 10), "the stall saw its client leave")
    }
}

/// A count other threads add to, with a bounded wait for it.
final class LockedCounter: @unchecked Sendable {
    private let condition = NSCondition()
    private var value = 0  // guarded by condition

    func increment() {
        condition.lock()
        value += 1
        condition.broadcast()
        condition.unlock()
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    func wait(for target: Int, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while value < target { if !condition.wait(until: deadline) { return value >= target } }
        return true
    }
}
