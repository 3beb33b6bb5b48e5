import Compositor
import Foundation
import LoopbackServer
import NodeRuntime
import Tessera
import TestSupport
import XCTest
@testable import gallery

/// `gallery --assets-url URL --trust-certificate FILE`: the avatars and older messages from an asset
/// server elsewhere, over HTTP or HTTPS.
final class AssetsURLTests: XCTestCase {
    func testTheOptionsAreCheckedBeforeTheAppStarts() throws {
        XCTAssertNoThrow(try Gallery.parse(["--assets-url", "https://127.0.0.1:8443/"]))
        XCTAssertNoThrow(try Gallery.parse(["--assets-url", "http://localhost:8080"]))
        for bad in ["ftp://127.0.0.1/", "https://", "not a url", "file:///etc/"] {
            XCTAssertThrowsError(try Gallery.parse(["--assets-url", bad]), bad)
        }
        XCTAssertThrowsError(try Gallery.parse(["--assets-url", "https://127.0.0.1/", "--serve-assets"]))
        XCTAssertThrowsError(try Gallery.parse(["--assets-url", "https://127.0.0.1/", "--bench", "fling"]))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("assets-url-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let notPEM = folder.appendingPathComponent("ca.txt")
        try Data("hello".utf8).write(to: notPEM)
        XCTAssertThrowsError(try Gallery.parse(["--trust-certificate", notPEM.path]))
        XCTAssertThrowsError(try Gallery.parse(["--trust-certificate", folder.appendingPathComponent("missing.pem").path]))
        XCTAssertThrowsError(try Gallery.parse(["--trust-certificate", folder.path]), "a folder is not a PEM file")
    }

    /// The chat list's avatars over HTTPS from an asset server elsewhere whose authority the gallery
    /// is told to trust; and nothing from a server it is not told to trust.
    @MainActor
    func testAvatarsLoadOverHTTPSFromAnotherServer() async throws {
        let assets = GoldenImage.repositoryRoot.appendingPathComponent("Assets")
        let identity = try LoopbackServer.TLSIdentity.makeForTesting()
        let server = try AssetServer(folder: assets, data: try ChatData(assets: assets), tls: identity)
        defer { server.stop() }
        XCTAssertEqual(server.baseURL.scheme, "https")

        func gallery(_ server: AssetServer, trusting: [String]) throws -> GalleryApp {
            var options = GalleryOptions()
            options.screen = .chats
            options.rows = 300
            options.headless = true
            options.size = Size(width: 640, height: 480)
            options.assetsURL = server.baseURL
            options.trustedCertificates = trusting
            let application = try Application(configuration: .init(title: "gallery-test", size: options.size, headless: true,
                                                                    backgroundColor: Color(rgb: 0x12161B)),
                                              rootController: nil)
            return try GalleryApp(options: options, data: try ChatData(assets: assets), application: application)
        }
        func avatars(_ app: GalleryApp) throws -> [ImageNode] {
            try XCTUnwrap(app.chats.list.visibleRows).compactMap { row in
                (app.chats.list.nodeForRow(row) as? ChatRowNode)?.avatar as? ImageNode
            }
        }

        let app = try gallery(server, trusting: [try XCTUnwrap(identity.authorityCertificatePEM)])
        try app.settle()
        let loaded = try avatars(app)
        XCTAssertGreaterThanOrEqual(loaded.count, 2, "photo avatars on screen")
        for avatar in loaded {
            XCTAssertEqual(avatar.loadState, .loaded, "\(String(describing: avatar.source))")
            guard case .url(let url) = avatar.source else { return XCTFail("an avatar by URL") }
            XCTAssertEqual(url.scheme, "https")
        }
        XCTAssertGreaterThanOrEqual(server.server.statistics.requests("HTTP/2"), loaded.count, "fetched over HTTP/2")
        let picture = try XCTUnwrap(OffscreenRender.capture(app.host))
        let output = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/gallery")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try picture.writePNG(to: output.appendingPathComponent("chats-https.png").path)
        let empty = DecodingAvatarNode.emptyColor
        let placeholder = 0xFF00_0000 | UInt32(empty.red) << 16 | UInt32(empty.green) << 8 | UInt32(empty.blue)
        for row in try XCTUnwrap(app.chats.list.visibleRows) {
            guard let node = app.chats.list.nodeForRow(row) as? ChatRowNode, node.avatar is ImageNode,
                  let rowFrame = node.layerIfLoaded?.frameInRoot else { continue }
            let x = rowFrame.minX + node.avatar.frame.midX, y = rowFrame.minY + node.avatar.frame.midY
            guard y < 480 - 48 else { continue }  // above the tab bar
            let centre = picture.pixel(x: Int(x), y: Int(y))
            XCTAssertNotEqual(centre, placeholder, "the photo is drawn, not the placeholder")
        }

        // Another server (other URLs, so no decoded avatar is already cached), its authority not given.
        let other = try AssetServer(folder: assets, data: try ChatData(assets: assets),
                                    tls: try LoopbackServer.TLSIdentity.makeForTesting())
        defer { other.stop() }
        let untrusting = try gallery(other, trusting: [])
        try? untrusting.settle()
        let refused = try avatars(untrusting)
        XCTAssertFalse(refused.isEmpty)
        for avatar in refused {
            guard case .failed(.network(_, .tlsFailed)) = avatar.loadState else {
                return XCTFail("an untrusted server's avatar fails with tlsFailed, not \(avatar.loadState)")
            }
        }
    }
}
