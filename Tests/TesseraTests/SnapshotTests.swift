import Foundation
import Tessera
import TesseraTesting
import XCTest

/// A pill with a dot, drawn on a worker like any app's node.
private final class PillNode: Node, NodeDrawing, @unchecked Sendable {
    func drawParameters() -> Color { Color(rgb: 0x2E7D32) }
    static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        context.fillRoundedRect(bounds, radii: CornerRadii(bounds.height / 2), color: color)
        let dot = Rect(x: bounds.height * 0.25, y: bounds.height * 0.25, width: bounds.height / 2, height: bounds.height / 2)
        context.fillRoundedRect(dot, radii: CornerRadii(dot.height / 2), color: .white)
    }
}

/// TesseraTesting, the snapshot product apps test their nodes with: a node rendered offscreen and
/// compared with the reference beside the test file; a missing reference recorded once; a
/// difference reported with the actual and diff pictures written.
@MainActor
final class SnapshotTests: XCTestCase {
    nonisolated(unsafe) private var folder: URL!

    override func setUpWithError() throws {
        let made = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-snapshots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        folder = made
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private func solid(_ color: Color, width: Int = 8, height: Int = 6) throws -> Bitmap {
        let pixel = color.premultipliedARGB
        return try Bitmap(width: width, height: height, premultipliedARGB: Array(repeating: pixel, count: width * height))
    }

    /// The committed reference (`__Snapshots__/SnapshotTests/testAPillMatchesItsReference.png`).
    func testAPillMatchesItsReference() async throws {
        let pill = PillNode()
        try assertSnapshot(of: pill, size: Size(width: 64, height: 24), background: Color(rgb: 0xF0F0F0))
    }

    func testTheRenderIsTheNodesPixels() async throws {
        let image = try Snapshot.render(PillNode(), size: Size(width: 64, height: 24), background: Color(rgb: 0xF0F0F0))
        XCTAssertEqual(image.width, 64)
        XCTAssertEqual(Color(premultipliedARGB: image.pixel(x: 40, y: 12)), Color(rgb: 0x2E7D32), "the pill's body")
        XCTAssertEqual(Color(premultipliedARGB: image.pixel(x: 12, y: 12)), .white, "the dot")
        XCTAssertEqual(Color(premultipliedARGB: image.pixel(x: 0, y: 0)), Color(rgb: 0xF0F0F0), "outside the rounded corner")
    }

    func testAMissingReferenceIsRecordedAndFailsOnce() async throws {
        let path = folder.appendingPathComponent("Feed/testCell.png").path
        let image = try solid(Color(rgb: 0x112233))
        let first = Snapshot.compare(image, referencePath: path, tolerance: 0, record: false)
        XCTAssertTrue(first.recorded)
        XCTAssertNotNil(first.failure)
        XCTAssertTrue(first.failure?.contains("recorded") == true, first.failure ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        let second = Snapshot.compare(image, referencePath: path, tolerance: 0, record: false)
        XCTAssertNil(second.failure)
        XCTAssertFalse(second.recorded)
    }

    func testADifferenceFailsAndWritesTheActualAndDiffPictures() async throws {
        let path = folder.appendingPathComponent("Feed/testCell.png").path
        _ = Snapshot.compare(try solid(Color(rgb: 0x112233)), referencePath: path, tolerance: 0, record: true)
        var pixels = try solid(Color(rgb: 0x112233)).pixels
        pixels[3 * 8 + 5] = Color(rgb: 0xFFFFFF).premultipliedARGB
        let changed = try Bitmap(width: 8, height: 6, premultipliedARGB: pixels)
        setenv("TESSERA_SNAPSHOT_ARTIFACTS", folder.appendingPathComponent("artifacts").path, 1)
        defer { unsetenv("TESSERA_SNAPSHOT_ARTIFACTS") }
        let outcome = Snapshot.compare(changed, referencePath: path, tolerance: 3, record: false)
        let failure = try XCTUnwrap(outcome.failure)
        XCTAssertTrue(failure.contains("1 pixels differ"), failure)
        let diffPath = folder.appendingPathComponent("artifacts/Feed/testCell.diff.png").path
        let actualPath = folder.appendingPathComponent("artifacts/Feed/testCell.actual.png").path
        XCTAssertTrue(failure.contains(diffPath), failure)
        let diff = try Bitmap(contentsOfFile: diffPath)
        XCTAssertEqual(Color(premultipliedARGB: diff.pixel(x: 5, y: 3)), Color(rgb: 0xFF0000), "the differing pixel is red")
        XCTAssertNotEqual(Color(premultipliedARGB: diff.pixel(x: 0, y: 0)), Color(rgb: 0xFF0000))
        XCTAssertEqual(try Bitmap(contentsOfFile: actualPath).pixels, changed.pixels)
        // Within the tolerance, the same change passes.
        XCTAssertNil(Snapshot.compare(changed, referencePath: path, tolerance: 255, record: false).failure)
    }

    func testPicturesOfDifferentSizesDiffer() async throws {
        let path = folder.appendingPathComponent("sizes.png").path
        _ = Snapshot.compare(try solid(.white), referencePath: path, tolerance: 0, record: true)
        let outcome = Snapshot.compare(try solid(.white, width: 9), referencePath: path, tolerance: 255, record: false)
        XCTAssertTrue(outcome.failure?.contains("the sizes differ") == true, outcome.failure ?? "")
    }

    func testReferencesLiveBesideTheTestFile() async {
        let path = Snapshot.referencePath(file: "/app/Tests/FeedTests/CellTests.swift", testName: "testCell()", name: "dark")
        XCTAssertEqual(path, "/app/Tests/FeedTests/__Snapshots__/CellTests/testCell-dark.png")
    }
}
