import Compositor
import Tessera
import Foundation
import NodeRuntime
import LoopbackServer
import TestSupport
import XCTest
@testable import gallery
#if canImport(Glibc)
import Glibc
#endif

/// `gallery --serve-assets`: the asset server answering files and pages of history over real
/// sockets, and the gallery loading its avatars and a thread's older messages from it.
@MainActor
final class AssetServerTests: XCTestCase {
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }
    private var output: URL { GoldenImage.repositoryRoot.appendingPathComponent(".test-output/asset-server") }
    /// A scratch folder: `served/` is what a server serves, `secret.txt` lies outside it.
    private var scratch: URL!
    private var servers: [AssetServer] = []
    private var apps: [GalleryApp] = []

    override func setUp() async throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gallery-assets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch.appendingPathComponent("served/photos"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        for server in servers { server.stop() }
        for app in apps {
            app.host.setRootController(nil)
            app.assetServer?.stop()
        }
        servers = []
        apps = []
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
        try? FileManager.default.removeItem(at: scratch)
    }

    // MARK: Helpers

    private func makeServer(folder: URL? = nil, clientTimeout: Double = 10) throws -> AssetServer {
        let server = try AssetServer(folder: folder ?? scratch.appendingPathComponent("served"),
                                     data: try ChatData(assets: assets), clientTimeout: clientTimeout)
        servers.append(server)
        return server
    }

    /// A gallery as `GalleryTests` makes one, with the asset server when `serveAssets`.
    private func makeApp(screen: GalleryOptions.Screen, serveAssets: Bool) throws -> GalleryApp {
        var options = GalleryOptions()
        options.screen = screen
        options.rows = 300
        options.headless = true
        options.size = Size(width: 640, height: 480)
        options.servesAssets = serveAssets
        let application = try Application(configuration: .init(title: "gallery-test", size: options.size, headless: true,
                                                                backgroundColor: Color(rgb: 0x12161B)),
                                          rootController: nil)
        let app = try GalleryApp(options: options, data: try ChatData(assets: assets), application: application)
        apps.append(app)
        return app
    }

    /// `count` bytes that repeat nowhere near a 64 KB read (a linear congruential sequence).
    private func noise(_ count: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    private func write(_ bytes: [UInt8], to relativePath: String) throws {
        try Data(bytes).write(to: scratch.appendingPathComponent(relativePath))
    }

    private struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    private struct SocketFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// A connected socket to 127.0.0.1:`port`.
    private func connectSocket(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketFailure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw SocketFailure(description: "connect: \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// Sends `request` byte for byte (no client in between to tidy the path) and reads one answer:
    /// its head, then as many bytes as its Content-Length says (to the close without one), for at
    /// most 10 s. On `connection` when given (left open for the next request), else on a connection
    /// of its own, closed after.
    private func exchange(_ request: String, port: Int, on connection: Int32? = nil) throws -> Answer {
        let descriptor = try connection ?? connectSocket(port: port)
        defer { if connection == nil { close(descriptor) } }
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw SocketFailure(description: "send: \(String(cString: strerror(errno)))")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date(timeIntervalSinceNow: 10)
        var expectedLength: Int?
        var headEnd: Range<Int>?
        while true {
            if headEnd == nil, let end = received.firstRange(of: [13, 10, 13, 10]) {
                headEnd = end
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
                if let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
                    expectedLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                }
            }
            if let headEnd, let expectedLength, received.count - headEnd.upperBound >= expectedLength { break }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw SocketFailure(description: "no end of the answer within 10 s") }
            _ = poll(&entry, 1, Int32(left * 1000) + 1)
            guard entry.revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        guard let end = headEnd ?? received.firstRange(of: [13, 10, 13, 10]) else {
            throw SocketFailure(description: "no head in \(received.count) bytes")
        }
        let lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? -1
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, headers: headers, body: Array(received[end.upperBound...]))
    }

    private func get(_ target: String, port: Int) throws -> Answer {
        try exchange("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
    }

    private func page(_ query: String, port: Int) throws -> AssetServer.MessagesPage {
        let answer = try get("/messages?\(query)", port: port)
        XCTAssertEqual(answer.status, 200, String(decoding: answer.body, as: UTF8.self))
        XCTAssertEqual(answer.headers["content-type"], "application/json")
        return try JSONDecoder().decode(AssetServer.MessagesPage.self, from: Data(answer.body))
    }

    /// Runs frames until `condition` holds, waiting for the UI thread's wake-ups between them; false
    /// after `timeout` seconds.
    private func runFrames(_ app: GalleryApp, timeout: Double = 30, until condition: () -> Bool) throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() {
            if Date() > deadline { return false }
            UIWakeup.shared.reset()
            try app.application.settle()
            if !condition() { _ = UIWakeup.shared.wait(timeout: 0.2) }
        }
        return true
    }

    // MARK: Files

    func testServesFilesByteForByte() async throws {
        let bytes = noise(300_000, seed: 7)
        try write(bytes, to: "served/photos/noise.bin")
        try write(Array("a name with a space\n".utf8), to: "served/photos/with space.txt")
        let server = try makeServer()

        let answer = try get("/photos/noise.bin", port: server.port)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.headers["content-length"], "300000")
        XCTAssertEqual(answer.headers["content-type"], "application/octet-stream")
        XCTAssertEqual(answer.body.count, bytes.count)
        XCTAssertTrue(answer.body == bytes, "the body is the file, byte for byte")

        // Through the gallery's own client, with the path percent-encoded as the app makes it.
        let served = ServedAssets(baseURL: server.baseURL)
        let spaced = served.url(forAsset: "photos/with space.txt")
        XCTAssertEqual(spaced.path, "/photos/with space.txt")
        XCTAssertTrue(spaced.absoluteString.hasSuffix("/photos/with%20space.txt"), spaced.absoluteString)
        XCTAssertEqual(try served.imageLoader.bytes(for: spaced), Array("a name with a space\n".utf8))

        // A photo of the real assets folder, as the avatars are fetched.
        let photos = try makeServer(folder: assets)
        let brick = try XCTUnwrap(try ServedAssets(baseURL: photos.baseURL).imageLoader
            .bytes(for: ServedAssets(baseURL: photos.baseURL).url(forAsset: "photos/brick.jpg")))
        XCTAssertEqual(brick, Array(try Data(contentsOf: assets.appendingPathComponent("photos/brick.jpg"))))
        XCTAssertEqual(photos.requests.last, AssetServer.Request(method: "GET", target: "/photos/brick.jpg", status: 200))
    }

    func testMissingFilesAre404AndEscapesFoldersAndPipesAreRefused() async throws {
        let secret = "the secret outside the served folder"
        try write(Array(secret.utf8), to: "secret.txt")
        try write(noise(1000, seed: 3), to: "served/photos/inside.bin")
        let fileManager = FileManager.default
        try fileManager.createSymbolicLink(atPath: scratch.appendingPathComponent("served/photos/out.txt").path,
                                           withDestinationPath: scratch.appendingPathComponent("secret.txt").path)
        try fileManager.createSymbolicLink(atPath: scratch.appendingPathComponent("served/outside").path,
                                           withDestinationPath: scratch.path)
        try fileManager.createSymbolicLink(atPath: scratch.appendingPathComponent("served/photos/alias.bin").path,
                                           withDestinationPath: "inside.bin")
        XCTAssertEqual(mkfifo(scratch.appendingPathComponent("served/pipe").path, 0o600), 0)
        let server = try makeServer()

        XCTAssertEqual(try get("/photos/missing.jpg", port: server.port).status, 404)
        XCTAssertEqual(try get("/nowhere/missing.jpg", port: server.port).status, 404)
        for escape in ["/../secret.txt", "/photos/../../secret.txt", "/%2e%2e/secret.txt", "/photos/%2E%2E/%2e%2e/secret.txt",
                       "/photos/..%2f..%2fsecret.txt", "/photos/out.txt", "/outside/secret.txt"] {
            let answer = try get(escape, port: server.port)
            XCTAssertEqual(answer.status, 403, escape)
            XCTAssertNil(String(decoding: answer.body, as: UTF8.self).range(of: secret), "\(escape) shows nothing of the file")
        }
        for notAFile in ["/", "/photos", "/photos/", "/pipe"] {
            XCTAssertEqual(try get(notAFile, port: server.port).status, 403, notAFile)
        }
        // A link that stays inside the folder is followed.
        let alias = try get("/photos/alias.bin", port: server.port)
        XCTAssertEqual(alias.status, 200)
        XCTAssertTrue(alias.body == noise(1000, seed: 3))

        let post = try exchange("POST /photos/inside.bin HTTP/1.1\r\nContent-Length: 0\r\n\r\n", port: server.port)
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.headers["allow"], "GET")
        XCTAssertEqual(try exchange("HELLO\r\n\r\n", port: server.port).status, 400)
        XCTAssertEqual(try exchange("GET http://elsewhere/x HTTP/1.1\r\n\r\n", port: server.port).status, 400)
        let longHead = "GET /photos/inside.bin HTTP/1.1\r\nX-Padding: " + String(repeating: "x", count: 20_000) + "\r\n\r\n"
        XCTAssertEqual(try exchange(longHead, port: server.port).status, 431)

        XCTAssertTrue(server.requests.contains(AssetServer.Request(method: "GET", target: "/%2e%2e/secret.txt", status: 403)))
        XCTAssertTrue(server.requests.contains(AssetServer.Request(method: "GET", target: "/pipe", status: 403)))
        XCTAssertEqual(try get("/photos/inside.bin", port: server.port).status, 200, "the server goes on serving")
    }

    func testAClientThatGoesAwayEndsOnlyItsOwnConnection() async throws {
        // Far more than the sockets' buffers hold, so the server is still sending when the client goes.
        let period = noise(1 << 20, seed: 11)
        var big: [UInt8] = []
        for _ in 0..<16 { big += period }
        try write(big, to: "served/big.bin")
        let server = try makeServer(clientTimeout: 1)

        // Reads the head of a 16 MB answer, then resets the connection.
        let reader = try connectSocket(port: server.port)
        let request = Array("GET /big.bin HTTP/1.1\r\n\r\n".utf8)
        XCTAssertEqual(request.withUnsafeBytes { send(reader, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, request.count)
        var entry = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&entry, 1, 10_000), 1, "the answer starts")
        var buffer = [UInt8](repeating: 0, count: 4096)
        XCTAssertGreaterThan(recv(reader, &buffer, buffer.count, 0), 0)
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(reader, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(reader)

        // Connects and sends nothing: dropped after the client time-out.
        let silent = try connectSocket(port: server.port)
        defer { close(silent) }
        XCTAssertTrue(server.waitUntilNoConnections(timeout: 15), "both connections ended; \(server.openConnections) open")
        var silentEntry = pollfd(fd: silent, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&silentEntry, 1, 5_000), 1)
        XCTAssertEqual(recv(silent, &buffer, buffer.count, 0), 0, "the silent client was closed without an answer")

        XCTAssertEqual(server.requests.first, AssetServer.Request(method: "GET", target: "/big.bin", status: 200))
        let again = try get("/big.bin", port: server.port)
        XCTAssertEqual(again.status, 200)
        XCTAssertTrue(again.body == big, "the next client gets the whole file")
    }

    /// Several requests share one connection; a reader that stops taking a large file is dropped at
    /// the end of its rate window, and the server goes on serving.
    func testRequestsShareAConnectionAndAReaderThatStopsIsDropped() async throws {
        let bytes = noise(200_000, seed: 5)
        try write(bytes, to: "served/photos/noise.bin")
        let period = noise(1 << 20, seed: 13)
        var big: [UInt8] = []
        for _ in 0..<16 { big += period }
        try write(big, to: "served/big.bin")
        let server = try makeServer(clientTimeout: 1)

        let connection = try connectSocket(port: server.port)
        defer { close(connection) }
        for _ in 0..<3 {
            let answer = try exchange("GET /photos/noise.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: server.port, on: connection)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.headers["connection"], "keep-alive")
            XCTAssertTrue(answer.body == bytes)
        }
        XCTAssertEqual(server.server.statistics.connectionsAccepted, 1, "three answers on one connection")
        XCTAssertEqual(server.server.statistics.requests("HTTP/1.1"), 3)

        // Asks for 16 MB with a small receive buffer and never reads.
        let stalled = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        defer { close(stalled) }
        var small: Int32 = 4096
        setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(stalled, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        let request = Array("GET /big.bin HTTP/1.1\r\n\r\n".utf8)
        XCTAssertEqual(request.withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, request.count)
        XCTAssertTrue(server.server.waitForStatistics(timeout: 15) { $0.shed(.slowReader) == 1 },
                      "the reader that stopped was dropped: \(server.server.statistics)")
        XCTAssertEqual(try get("/photos/noise.bin", port: server.port).status, 200, "the server goes on serving")
    }

    // MARK: Messages

    func testTheMessagesEndpointSlicesAChatsHistory() async throws {
        let data = try ChatData(assets: assets)
        let chat = try XCTUnwrap(data.chats.first { $0.messages.count >= 120 && $0.messages.contains { $0.replyTo != nil } })
        let messages = chat.messages
        let server = try makeServer(folder: assets)

        let middle = try page("chat=\(chat.id)&before=\(messages[100].id)&count=30", port: server.port)
        XCTAssertEqual(middle.chat, chat.id)
        XCTAssertEqual(middle.messages.map(\.id), messages[70..<100].map(\.id))
        XCTAssertEqual(middle.messages.map(\.text), messages[70..<100].map(\.text))
        XCTAssertEqual(middle.remaining, 70)

        let newest = try page("chat=\(chat.id)", port: server.port)
        XCTAssertEqual(newest.messages.map(\.id), messages.suffix(AssetServer.defaultPageSize).map(\.id))
        XCTAssertEqual(newest.remaining, messages.count - AssetServer.defaultPageSize)
        let first = try page("chat=\(chat.id)&before=\(messages[10].id)&count=30", port: server.port)
        XCTAssertEqual(first.messages.map(\.id), messages[0..<10].map(\.id))
        XCTAssertEqual(first.remaining, 0)
        let none = try page("chat=\(chat.id)&before=\(messages[0].id)&count=5", port: server.port)
        XCTAssertTrue(none.messages.isEmpty)
        XCTAssertEqual(none.remaining, 0)

        // Every reply can quote its message: the ones outside the page come with it.
        var quotedSomething = false
        for start in stride(from: 0, to: messages.count, by: 25) {
            let end = min(messages.count, start + 25)
            let before = end < messages.count ? "&before=\(messages[end].id)" : ""
            let slice = try page("chat=\(chat.id)\(before)&count=\(end - start)", port: server.port)
            XCTAssertEqual(slice.messages.map(\.id), messages[start..<end].map(\.id))
            let inPage = Set(slice.messages.map(\.id))
            let expected = Set(slice.messages.compactMap(\.replyTo).filter { !inPage.contains($0) })
            XCTAssertEqual(Set(slice.quoted.map(\.id)), expected)
            for quoted in slice.quoted {
                XCTAssertEqual(quoted.text, messages.first { $0.id == quoted.id }?.text)
            }
            quotedSomething = quotedSomething || !slice.quoted.isEmpty
        }
        XCTAssertTrue(quotedSomething, "the chat has replies to messages in other pages")

        for (query, status) in [("", 400), ("chat=abc", 400), ("chat=987654", 404),
                                ("chat=\(chat.id)&before=987654", 404), ("chat=\(chat.id)&before=x", 400),
                                ("chat=\(chat.id)&count=0", 400), ("chat=\(chat.id)&count=501", 400),
                                ("chat=\(chat.id)&count=many", 400)] {
            XCTAssertEqual(try get("/messages?\(query)", port: server.port).status, status, query)
        }
    }

    /// Pages from the server, put above a thread's first items one after another, make exactly the
    /// items the whole history makes: a day pill before the first message and wherever the day
    /// changes, and each reply with its quoted message.
    func testServedPagesRebuildAThreadsWholeHistory() async throws {
        let data = try ChatData(assets: assets)
        let server = try makeServer(folder: assets)
        let served = ServedAssets(baseURL: server.baseURL)
        var checked = 0
        for chat in data.chats.filter({ $0.messages.count > ThreadController.firstBatch }).prefix(6) {
            let thread = ThreadController(chat: chat, data: data)
            var items = thread.items
            var pages = 0
            while let before = ServedHistory.oldestMessageID(in: items), pages < 100 {
                let page = try served.olderMessages(chat: chat.id, before: before, count: ThreadController.olderBatch)
                items = ServedHistory.items(for: page, above: items.first, group: chat.group) + items
                pages += 1
                if page.remaining == 0 { break }
            }
            var expected: [String] = []
            var lastDay = ""
            for message in chat.messages {
                if Format.day(message.time) != lastDay {
                    lastDay = Format.day(message.time)
                    expected.append("day " + lastDay)
                }
                let quoted = message.replyTo.flatMap { id in chat.messages.first { $0.id == id } }
                expected.append("message \(message.id) quoting \(quoted.map { "\($0.id): \($0.text)" } ?? "nothing")")
            }
            let rebuilt = items.map { item -> String in
                switch item {
                case .day(let day): return "day " + day
                case let .message(message, replyTo, _):
                    return "message \(message.id) quoting \(replyTo.map { "\($0.id): \($0.text)" } ?? "nothing")"
                }
            }
            XCTAssertEqual(rebuilt, expected, "chat \(chat.id)")
            XCTAssertGreaterThan(pages, 1)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 2)
    }

    // MARK: The app

    func testTheFlagIsRefusedWhereThereIsNothingToServe() async throws {
        XCTAssertNoThrow(try Gallery.parse(["--serve-assets"]))
        XCTAssertThrowsError(try Gallery.parse(["--serve-assets", "--bench", "fling"]))
        XCTAssertThrowsError(try Gallery.parse(["--serve-assets", "--screen", "layers"]))
    }

    /// Avatars by URL: every chat row on screen shows its photo fetched from the server, with the
    /// pixels of the same photo read from its file.
    func testServedAvatarsShowTheSamePixelsAsTheFiles() async throws {
        struct Avatar {
            var row: Int
            var rect: Rect
        }
        func shot(serveAssets: Bool) throws -> (Bitmap, [Avatar], GalleryApp) {
            let app = try makeApp(screen: .chats, serveAssets: serveAssets)
            try app.settle()
            let list = app.chats.list
            var avatars: [Avatar] = []
            for row in try XCTUnwrap(list.visibleRows) {
                let node = try XCTUnwrap(list.nodeForRow(row) as? ChatRowNode)
                guard node.avatar is ImageNode, let rowFrame = node.layerIfLoaded?.frameInRoot else { continue }
                let rect = Rect(x: rowFrame.minX + node.avatar.frame.minX, y: rowFrame.minY + node.avatar.frame.minY,
                                width: node.avatar.frame.width, height: node.avatar.frame.height)
                guard rect.maxY <= 480 - 48 else { continue }  // above the tab bar
                avatars.append(Avatar(row: row, rect: rect))
            }
            let picture = try XCTUnwrap(OffscreenRender.capture(app.host))
            try picture.writePNG(to: output.appendingPathComponent(serveAssets ? "chats-served.png" : "chats-files.png").path)
            return (picture, avatars, app)
        }
        let empty = DecodingAvatarNode.emptyColor
        let placeholderRGB = UInt32(empty.red) << 16 | UInt32(empty.green) << 8 | UInt32(empty.blue)
        let (files, fileAvatars, _) = try shot(serveAssets: false)
        let (served, servedAvatars, app) = try shot(serveAssets: true)
        let server = try XCTUnwrap(app.assetServer)
        XCTAssertGreaterThanOrEqual(servedAvatars.count, 2, "photo avatars on screen")
        XCTAssertEqual(servedAvatars.map(\.row), fileAvatars.map(\.row))

        for avatar in servedAvatars {
            let node = try XCTUnwrap(app.chats.list.nodeForRow(avatar.row) as? ChatRowNode)
            let image = try XCTUnwrap(node.avatar as? ImageNode)
            let photo = try XCTUnwrap(app.data.chat(forRow: avatar.row).avatar)
            XCTAssertEqual(image.source, .url(server.baseURL.appendingPathComponent(photo)))
            XCTAssertEqual(image.loadState, .loaded)
            XCTAssertTrue(server.requests.contains(AssetServer.Request(method: "GET", target: "/" + photo, status: 200)), photo)

            // The avatar's square, pixel for pixel; and it is the photo, not the placeholder.
            var placeholder = 0, differing = 0
            let x0 = Int(avatar.rect.minX.rounded()), y0 = Int(avatar.rect.minY.rounded())
            for y in y0..<(y0 + Int(avatar.rect.height)) {
                for x in x0..<(x0 + Int(avatar.rect.width)) {
                    let pixel = served.pixel(x: x, y: y)
                    if pixel != files.pixel(x: x, y: y) { differing += 1 }
                    if pixel & 0xFFFFFF == placeholderRGB { placeholder += 1 }
                }
            }
            XCTAssertEqual(differing, 0, "row \(avatar.row): \(photo)")
            XCTAssertLessThan(placeholder, Int(avatar.rect.width * avatar.rect.height) / 4, "row \(avatar.row) shows its photo")
        }
        // The rest of the screen too: only where the avatars come from differs.
        XCTAssertEqual(served.pixels, files.pixels)
    }

    /// Scrolled to its top, the thread asks the server for the messages above and inserts them
    /// without moving what is on screen; scrolled to one of them, the screen is the one the thread
    /// shows with its history from memory.
    func testTheThreadLoadsOlderMessagesFromTheServer() async throws {
        /// Scrolls `thread` to its top, waits for the batch, then puts the row of message `id` at the
        /// top of the screen and captures it.
        func loadOlderAndShow(_ app: GalleryApp, _ thread: ThreadController, message id: () throws -> Int,
                              name: String) throws -> Bitmap {
            let rows = thread.list.numberOfRows
            thread.list.scroll(to: 0, at: .top, animated: false)
            XCTAssertTrue(try runFrames(app) { thread.list.numberOfRows > rows && !thread.list.isBatchFetching(at: .top) })
            try app.settle()
            let wanted = try id()
            let row = try XCTUnwrap(thread.items.firstIndex { item in
                if case .message(let message, _, _) = item { return message.id == wanted } else { return false }
            })
            // Its day pill too, when it starts a day.
            var top = row
            if row > 0, case .day = thread.items[row - 1] { top = row - 1 }
            thread.list.scroll(to: top, at: .top, animated: false)
            try app.settle()
            XCTAssertFalse(thread.list.isBatchFetching(at: .top))
            let picture = try XCTUnwrap(OffscreenRender.capture(app.host))
            try picture.writePNG(to: output.appendingPathComponent(name).path)
            return picture
        }

        let app = try makeApp(screen: .thread, serveAssets: true)
        try app.settle()
        let server = try XCTUnwrap(app.assetServer)
        let thread = try XCTUnwrap(app.tabs.selectedController as? ThreadController)
        let history = try XCTUnwrap(thread.servedHistory)
        let rows = thread.list.numberOfRows
        XCTAssertEqual(rows, ThreadController.firstBatch)
        let before = try XCTUnwrap(ServedHistory.oldestMessageID(in: thread.items))
        let index = try XCTUnwrap(thread.chat.messages.firstIndex { $0.id == before })
        try XCTSkipIf(index < 12, "the first thread is too short for a page of history")
        XCTAssertEqual(history.pagesRequested, 0)
        // A message of the page that a batch from memory brings too: one that starts a day, if any.
        let messages = thread.chat.messages
        let dayStart = (max(1, index - 25)..<(index - 5)).first { Format.day(messages[$0].time) != Format.day(messages[$0 - 1].time) }
        let shownID = messages[dayStart ?? index - 10].id

        let served = try loadOlderAndShow(app, thread, message: {
            let target = "/messages?chat=\(thread.chat.id)&before=\(before)&count=\(ThreadController.olderBatch)"
            XCTAssertTrue(server.requests.contains(AssetServer.Request(method: "GET", target: target, status: 200)),
                          "\(server.requests)")
            XCTAssertEqual(history.pagesRequested, 1)
            XCTAssertNil(history.failure)
            let loaded = thread.list.numberOfRows - rows
            let expectedIDs = thread.chat.messages[max(0, index - ThreadController.olderBatch)..<index].map(\.id)
            let loadedIDs = thread.items.prefix(loaded).compactMap { item -> Int? in
                if case .message(let message, _, _) = item { return message.id } else { return nil }
            }
            XCTAssertEqual(loadedIDs, expectedIDs, "the page's messages, in order, above the first rows")
            XCTAssertEqual(thread.list.numberOfRows, thread.items.count)
            XCTAssertGreaterThan(thread.list.contentOffset, 0, "the older rows are above the screen")
            let firstShown = try XCTUnwrap(thread.list.nodeForRow(loaded)?.layerIfLoaded?.frameInRoot)
            try app.settle()
            XCTAssertEqual(try XCTUnwrap(thread.list.nodeForRow(loaded)?.layerIfLoaded?.frameInRoot).minY,
                           firstShown.minY, accuracy: 0.01, "the row the user was at stays put")
            return shownID
        }, name: "thread-served.png")
        app.host.setRootController(nil)

        let local = try makeApp(screen: .thread, serveAssets: false)
        try local.settle()
        let localThread = try XCTUnwrap(local.tabs.selectedController as? ThreadController)
        XCTAssertNil(localThread.servedHistory)
        let fromMemory = try loadOlderAndShow(local, localThread, message: { shownID }, name: "thread-memory.png")
        XCTAssertEqual(served.pixels, fromMemory.pixels, "the same messages, pills and quotes as from memory")
        XCTAssertGreaterThan(Set(served.pixels).count, 50, "a screen of messages, not a blank")
    }

    /// With the server gone, the page fails: the fetch completes with no more history, the reason is
    /// kept, and the thread goes on as it was.
    func testAPageThatCannotBeHadEndsTheHistoryWithItsReason() async throws {
        let app = try makeApp(screen: .thread, serveAssets: true)
        try app.settle()
        let thread = try XCTUnwrap(app.tabs.selectedController as? ThreadController)
        let history = try XCTUnwrap(thread.servedHistory)
        let rows = thread.list.numberOfRows
        app.assetServer?.stop()

        thread.list.scroll(to: 0, at: .top, animated: false)
        XCTAssertTrue(try runFrames(app) { history.failure != nil && !thread.list.isBatchFetching(at: .top) })
        let failure = try XCTUnwrap(history.failure)
        XCTAssertTrue(failure.contains("/messages?chat=\(thread.chat.id)"), failure)
        XCTAssertTrue(failure.contains("cannot connect"), failure)
        XCTAssertEqual(thread.list.numberOfRows, rows)
        XCTAssertEqual(history.pagesRequested, 1)

        // The top is exhausted: scrolling there again asks for nothing more.
        thread.list.scroll(to: 5, at: .top, animated: false)
        try app.settle()
        thread.list.scroll(to: 0, at: .top, animated: false)
        try app.settle()
        XCTAssertEqual(history.pagesRequested, 1)
        XCTAssertEqual(thread.list.numberOfRows, rows)
    }
}
