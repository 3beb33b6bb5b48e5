import Foundation
import LoopbackServer
import XCTest

/// `stop()` ends every connection at once, whatever it waits on; nothing is left open after it;
/// releasing the server stops it.
final class LifecycleTests: XCTestCase {
    func testStopEndsEveryConnectionAtOnce() throws {
        let gate = LoopbackServer.Gate()
        let clientLeft = LockedCounter()
        let big = [UInt8](repeating: 1, count: 16 << 20)
        var configuration = LoopbackServer.Configuration()
        configuration.rateWindow = 60
        configuration.idleTimeout = 60
        configuration.scriptWaitLimit = 60
        let server = try LoopbackServer(configuration: configuration) { request in
            switch request.path {
            case "/gate": .script([.send(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)), .wait(gate)], whenClientLeaves: { clientLeft.increment() })
            case "/stall": .script([.stall], whenClientLeaves: { clientLeft.increment() })
            case "/big": LoopbackServer.Response(body: big)
            default: .text("ok", status: 200)
            }
        }
        let idle = try RawClient(port: server.port)
        XCTAssertEqual(try idle.get("/").status, 200)
        let partial = try RawClient(port: server.port)
        partial.send("GET / HTTP/1.1\r\nHost: 127.")
        let waiting = try RawClient(port: server.port)
        waiting.send("GET /gate HTTP/1.1\r\n\r\n")
        let stalled = try RawClient(port: server.port)
        stalled.send("GET /stall HTTP/1.1\r\n\r\n")
        let notReading = try RawClient(port: server.port, receiveBuffer: 4096)
        notReading.send("GET /big HTTP/1.1\r\n\r\n")
        XCTAssertTrue(gate.waitUntilReached(timeout: 10))
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.openConnections == 5 && $0.totalRequests == 4 }, "\(server.statistics)")

        let started = Date()
        server.stop()
        let seconds = Date().timeIntervalSince(started)
        XCTAssertLessThan(seconds, 2, "every wait ended at once, not at its 60 s limit")
        for client in [idle, partial, waiting, stalled, notReading] {
            XCTAssertTrue(client.waitForClose(timeout: 5))
        }
        XCTAssertEqual(server.statistics.openConnections, 0)
        XCTAssertEqual(clientLeft.count, 0, "a stop is not a client leaving")
        XCTAssertThrowsError(try RawClient(port: server.port), "connecting is refused after the stop")
        server.stop()  // again: nothing
        print("stop: five connections ended in \(String(format: "%.3f", seconds)) s")
    }

    func testNoDescriptorIsLeftOpenAfterStop() throws {
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let authority = try writeAuthority(of: identity)
        defer { try? FileManager.default.removeItem(at: authority) }
        let gate = LoopbackServer.Gate()  // a pipe, the test's until the end
        _ = try Curl.run(["--version"])  // Foundation's process machinery, set up before counting
        let before = openDescriptors()

        var configuration = LoopbackServer.Configuration()
        configuration.tls = identity
        let server = try LoopbackServer(configuration: configuration) { request in
            request.path == "/gate" ? .script([.wait(gate)]) : .text("ok", status: 200)
        }
        let plain = try LoopbackServer { _ in .text("ok", status: 200) }
        let proxy = try LoopbackServer.proxy()
        for version in ["--http2", "--http1.1"] {
            let result = try Curl.run([version, "--cacert", authority.path, "--proxy", "http://127.0.0.1:\(proxy.port)",
                                       server.baseURL.absoluteString, server.baseURL.absoluteString])
            XCTAssertEqual(result.output, "ok\nok\n", result.errors)
        }
        let kept = try RawClient(port: plain.port)
        XCTAssertEqual(try kept.get("/").status, 200)
        let handshaking = try RawClient(port: server.port)
        handshaking.send("\u{16}\u{03}\u{01}")
        XCTAssertTrue(server.waitForStatistics(timeout: 10) { $0.connectionsAccepted >= 3 && $0.openConnections >= 1 })
        server.stop()
        plain.stop()
        proxy.stop()
        kept.close()
        handshaking.close()
        let after = openDescriptors()
        XCTAssertEqual(after, before, "every socket, pipe and TLS state of the servers is closed by stop()")
        withExtendedLifetime((server, plain, proxy, gate)) {}
    }

    func testReleasingTheServerStopsIt() throws {
        weak var released: LoopbackServer?
        var port = 0
        do {
            let server = try LoopbackServer { _ in .text("ok", status: 200) }
            port = server.port
            XCTAssertEqual(try get("/", port: port).status, 200)
            released = server
        }
        XCTAssertNil(released, "the server's threads do not keep it alive")
        XCTAssertThrowsError(try RawClient(port: port), "its socket is closed")
    }
}
