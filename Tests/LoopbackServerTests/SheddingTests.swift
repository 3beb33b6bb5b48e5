import Foundation
import LoopbackServer
import XCTest

/// Slow clients shed by the minimum transfer rate, idle connections closed, the oldest idle one
/// closed to make room, and 503 only when every slot is busy. Windows are short (a second) so the
/// tests take seconds; every wait is on a condition with a bound.
final class SheddingTests: XCTestCase {
    private var servers: [LoopbackServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        super.tearDown()
    }

    private func makeServer(_ change: (inout LoopbackServer.Configuration) -> Void = { _ in },
                            handler: @escaping LoopbackServer.Handler) throws -> LoopbackServer {
        var configuration = LoopbackServer.Configuration()
        configuration.maximumConnections = 32
        configuration.minimumBytesPerSecond = 1024
        configuration.rateWindow = 1
        configuration.idleTimeout = 2
        change(&configuration)
        let server = try LoopbackServer(configuration: configuration, handler: handler)
        servers.append(server)
        return server
    }

    /// A well-behaved client asking until it gets 200: after a 503 (or a dropped connection) it waits
    /// for the server to shed someone for `reason` before it asks again. The seconds it took, or nil
    /// after `timeout`.
    private func goodClientGets200(_ server: LoopbackServer, reason: LoopbackServer.ShedReason, timeout: Double) -> Double? {
        let started = Date()
        while Date().timeIntervalSince(started) < timeout {
            if let answer = try? get("/good", port: server.port, timeout: 5), answer.status == 200 {
                return Date().timeIntervalSince(started)
            }
            let shed = server.statistics.shed(reason)
            _ = server.waitForStatistics(timeout: 2) { $0.shed(reason) > shed }
        }
        return nil
    }

    func testFortySlowlorisClientsCannotHoldEverySlot() throws {
        let server = try makeServer(handler: { _ in .text("good", status: 200) })
        let attackers = SlowlorisClients(port: server.port, count: 40, interval: 0.1)
        attackers.start()
        defer { attackers.stop() }
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.openConnections == 32 && $0.refusedBusy >= 8 },
                      "the attackers hold every slot: \(server.statistics)")
        let seconds = goodClientGets200(server, reason: .slowRequest, timeout: 15)
        let statistics = server.statistics
        XCTAssertNotNil(seconds, "a good client got 200 while 40 slowloris clients kept coming: \(statistics)")
        XCTAssertLessThan(seconds ?? 99, 10)
        XCTAssertGreaterThanOrEqual(statistics.shed(.slowRequest), 1)
        XCTAssertTrue(server.waitForStatistics(timeout: 15) { $0.shed(.slowRequest) >= 40 }, "every attacker dropped at least once")
        XCTAssertEqual(server.statistics.requests("HTTP/1.1"), 1, "no slowloris head ever completed")
        print("slowloris: a good client got 200 after \(String(format: "%.2f", seconds ?? -1)) s; "
              + "\(statistics.shed(.slowRequest)) shed, \(statistics.refusedBusy) refused busy, \(attackers.reconnectionCount) reconnections")
    }

    func testThirtyTwoSlowReadersCannotHoldEverySlot() throws {
        let big = [UInt8](repeating: 0x42, count: 16 << 20)
        let server = try makeServer(handler: { request in
            request.path == "/big" ? LoopbackServer.Response(body: big) : .text("good", status: 200)
        })
        // Each asks for 16 MB with a 4 KB receive buffer and never reads.
        var readers: [RawClient] = []
        for _ in 0..<32 {
            let reader = try RawClient(port: server.port, receiveBuffer: 4096)
            reader.send("GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            readers.append(reader)
        }
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.openConnections == 32 && $0.requests("HTTP/1.1") == 32 },
                      "the readers hold every slot: \(server.statistics)")
        let seconds = goodClientGets200(server, reason: .slowReader, timeout: 15)
        let statistics = server.statistics
        XCTAssertNotNil(seconds, "a good client got 200 while 32 readers stalled: \(statistics)")
        XCTAssertLessThan(seconds ?? 99, 10)
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.shed(.slowReader) == 32 }, "\(server.statistics)")
        print("slow readers: a good client got 200 after \(String(format: "%.2f", seconds ?? -1)) s; "
              + "\(server.statistics.shed(.slowReader)) shed, \(statistics.refusedBusy) refused busy")
        for reader in readers { reader.close() }
    }

    func testATLSClientThatNeverFinishesItsHandshakeIsShed() throws {
        let server = try makeServer({ $0.tls = try? LoopbackServer.TLSIdentity.makeForTesting() },
                                    handler: { _ in .text("good", status: 200) })
        let silent = try RawClient(port: server.port)
        XCTAssertTrue(silent.waitForClose(timeout: 10))
        XCTAssertEqual(server.statistics.shed(.slowRequest), 1)
    }

    func testIdleKeepAliveConnectionsAreClosed() throws {
        let server = try makeServer({ $0.idleTimeout = 0.3 }, handler: { _ in .text("good", status: 200) })
        let client = try RawClient(port: server.port)
        XCTAssertEqual(try client.get("/").status, 200)
        XCTAssertTrue(client.waitForClose(timeout: 10), "closed once idle")
        XCTAssertEqual(server.statistics.shed(.idle), 1)
        XCTAssertEqual(server.statistics.shed(.slowRequest), 0, "idle is not slow")
    }

    func testTheOldestIdleConnectionMakesRoomBeforeAnyoneGets503() throws {
        let gate = LoopbackServer.Gate()
        let server = try makeServer({ configuration in
            configuration.maximumConnections = 3
            configuration.idleTimeout = 60
        }, handler: { request in
            request.path == "/hold" ? .script([.wait(gate), .send(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)), .close])
                                    : .text("good", status: 200)
        })
        let oldest = try RawClient(port: server.port)
        XCTAssertEqual(try oldest.get("/").status, 200)
        let newer = try RawClient(port: server.port)
        XCTAssertEqual(try newer.get("/").status, 200)
        let busy = try RawClient(port: server.port)
        busy.send("GET /hold HTTP/1.1\r\n\r\n")
        XCTAssertTrue(gate.waitUntilReached(timeout: 10))

        XCTAssertEqual(try get("/", port: server.port).status, 200, "served by closing an idle connection")
        XCTAssertTrue(oldest.waitForClose(), "the oldest idle connection was the one closed")
        XCTAssertEqual(try newer.get("/").status, 200, "the newer idle one is still open")
        XCTAssertEqual(server.statistics.shed(.makingRoom), 1)

        XCTAssertEqual(server.statistics.refusedBusy, 0, "no one was refused")
        gate.open()
        XCTAssertEqual(try busy.readAnswer(bodyless: true).status, 204)
    }

    func testEverySlotBusyIsAnswered503() throws {
        let gate = LoopbackServer.Gate()
        let server = try makeServer({ $0.maximumConnections = 1 }, handler: { _ in
            .script([.wait(gate), .send(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)), .close])
        })
        let holder = try RawClient(port: server.port)
        holder.send("GET / HTTP/1.1\r\n\r\n")
        XCTAssertTrue(gate.waitUntilReached(timeout: 10))
        let refused = try get("/", port: server.port)
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.headers["retry-after"], "1")
        XCTAssertEqual(server.statistics.refusedBusy, 1)
        gate.open()
        XCTAssertEqual(try holder.readAnswer(bodyless: true).status, 204)
    }
}

/// Over TLS, on HTTP/1.1 and HTTP/2 alike, curl reading at a few hundred bytes a second
/// (`--limit-rate`) is shed as a slow reader while it still runs.
final class TLSSheddingTests: XCTestCase {
    func testSlowReadersAreShedOnBothProtocols() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let authority = try writeAuthority(of: identity)
        defer { try? FileManager.default.removeItem(at: authority) }
        var configuration = LoopbackServer.Configuration()
        configuration.tls = identity
        configuration.rateWindow = 1
        let big = [UInt8](repeating: 7, count: 32 << 20)
        let server = try LoopbackServer(configuration: configuration) { _ in LoopbackServer.Response(body: big) }
        defer { server.stop() }
        for (index, version) in ["--http1.1", "--http2"].enumerated() {
            let started = Date()
            let curl = try Curl.start([version, "--limit-rate", "500", "--cacert", authority.path, "-o", "/dev/null",
                                       server.baseURL.absoluteString])
            defer {
                curl.terminate()
                curl.waitUntilExit()
            }
            XCTAssertTrue(server.waitForStatistics(timeout: 15) { $0.shed(.slowReader) == index + 1 }, "\(version): \(server.statistics)")
            XCTAssertTrue(curl.isRunning, "\(version): shed while the client still ran")
            print("\(version) slow reader shed after \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
        }
        XCTAssertEqual(server.statistics.requests("HTTP/1.1"), 1)
        XCTAssertEqual(server.statistics.requests("HTTP/2"), 1)
    }
}
