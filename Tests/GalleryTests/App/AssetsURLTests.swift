import Foundation
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
}
