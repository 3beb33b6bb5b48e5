import Compositor
import Foundation
import Glibc
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// A message's photo that comes by URL (the gallery serving its assets) shows a progress indicator
/// over its placeholder until it has come: on screen while the server has not answered, gone once
/// the photo is shown (or could not be had), said on standard output either way.
@MainActor
final class ServedPhotoTests: XCTestCase {
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(Palette.theme)
    }

    override func tearDown() async throws {
        Runtime.shared.setTheme(.standard)
    }

    /// A TCP port that takes connections and never answers (its backlog holds them), and its socket.
    private func silentPort() throws -> (port: Int, socket: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        XCTAssertTrue(bound)
        return (Int(UInt16(bigEndian: address.sin_port)), fd)
    }

    private func message(photo url: URL) -> MessageNode {
        let message = ChatData.Message(id: 1, out: false, author: "Ana", text: "", time: "2026-11-14T04:35", photo: "photos/brick.jpg",
                                       replyTo: nil)
        return MessageNode(message, replyTo: nil, group: false, photoPath: assets.appendingPathComponent("photos/brick.jpg").path,
                           served: (url, NetworkImageLoader(configuration: .init())))
    }

    func testAPhotoByURLShowsAProgressIndicatorUntilItComes() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 400, height: 260))
        defer { host.setRootNode(nil) }
        let (port, fd) = try silentPort()
        defer { close(fd) }
        let node = message(photo: URL(string: "http://127.0.0.1:\(port)/photos/brick.jpg")!)
        host.measuresLayoutInBackground = false
        host.setRootNode(node)
        // The frames the layout, the bubble's draw and the bar take; the photo does not come (the
        // server never answers).
        for frame in 1...10 {
            host.runFrame(time: Double(frame) / 60, events: [])
            Runtime.shared.scheduler.waitUntilIdle()
        }
        let progress = try XCTUnwrap(node.photoProgress)
        XCTAssertFalse(progress.isHidden, "shown while the photo has not come")
        XCTAssertEqual(node.photo?.loadState, .loading)
        let frame = try XCTUnwrap(progress.layerIfLoaded?.frameInRoot)
        XCTAssertEqual(frame.width, 120, accuracy: 0.5)
        let shot = try XCTUnwrap(OffscreenRender.capture(host))
        try? shot.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("served-photo-loading.png").path)
        // Its track and its moving block: the accent colour somewhere on the bar's line.
        let accent = try XCTUnwrap(ThemeColors.standardLight[.accent])
        let y = Int(frame.midY)
        let onBar = (Int(frame.minX)..<Int(frame.maxX)).filter { Color(premultipliedARGB: shot.pixel(x: $0, y: y)) == accent }
        XCTAssertGreaterThan(onBar.count, 10, "the indicator's block is drawn over the placeholder")
    }

    func testTheIndicatorGoesWhenThePhotoHasCome() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 400, height: 260))
        defer { host.setRootNode(nil) }
        let server = try AssetServer(folder: assets, data: try ChatData(assets: assets))
        defer { server.stop() }
        let node = message(photo: server.baseURL.appendingPathComponent("photos/brick.jpg"))
        host.measuresLayoutInBackground = false
        host.setRootNode(node)
        try host.settle()
        XCTAssertEqual(node.photo?.loadState, .loaded)
        XCTAssertEqual(node.photoProgress?.isHidden, true, "gone once the photo is shown")
        XCTAssertFalse(node.photoProgress?.isAnimating ?? true, "and no longer moving (no frames at rest)")
        XCTAssertFalse(host.needsFrame)
        let shot = try XCTUnwrap(OffscreenRender.capture(host))
        try? shot.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("served-photo-loaded.png").path)
    }
}
