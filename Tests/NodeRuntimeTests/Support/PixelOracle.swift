import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// The pixel oracle of the display pipeline's promise: the screen a host shows once everything has
/// settled must equal a synchronous render of the same node state, made from scratch (fresh nodes,
/// every draw on the UI thread as it enters display, the layout measured in the frame, the way
/// `--sync` runs). A difference means some change never reached the screen.
@MainActor
enum PixelOracle {
    /// A host over SDL's software renderer (so its screen can be read back), settled by frames.
    static func makeHost(size: Size, scale: Double = 1, clearColor: Color = Color(rgb: 0x202020)) throws -> NodeHost {
        try OffscreenRender.makeHost(size: size, scale: scale, configuration: .init(clearColor: clearColor)).0
    }

    /// Renders `root`, a tree that has never been shown, synchronously on a fresh host. `settled` runs
    /// once the tree has settled, before the capture (to put parts of it in the states the screen
    /// compared with has them in).
    static func synchronousRender(_ root: Node, size: Size, scale: Double = 1,
                                  clearColor: Color = Color(rgb: 0x202020),
                                  settled: (Node) -> Void = { _ in }) throws -> Bitmap {
        let wasForced = Runtime.shared.forcesSynchronousDisplay
        Runtime.shared.forcesSynchronousDisplay = true
        defer { Runtime.shared.forcesSynchronousDisplay = wasForced }
        let host = try makeHost(size: size, scale: scale, clearColor: clearColor)
        host.measuresLayoutInBackground = false
        host.setRootNode(root)
        try host.settle()
        settled(root)
        try host.settle()
        let image = try XCTUnwrap(OffscreenRender.capture(host))
        host.setRootNode(nil)
        return image
    }

    /// Writes a differing pair and its difference to `.test-output/oracle/NAME-*.png`.
    static func write(_ shown: Bitmap, _ expected: Bitmap, _ name: String) {
        let (_, diff) = GoldenImage.compare(shown, expected, tolerance: 2)
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/oracle")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? shown.writePNG(to: folder.appendingPathComponent("\(name)-shown.png").path)
        try? expected.writePNG(to: folder.appendingPathComponent("\(name)-expected.png").path)
        try? diff?.writePNG(to: folder.appendingPathComponent("\(name)-diff.png").path)
    }

    /// Fails unless `shown` and `expected` match within `tolerance` per channel; writes both and their
    /// difference to `.test-output/oracle/` when they do not.
    static func assertSame(_ shown: Bitmap, _ expected: Bitmap, tolerance: Int = 2, _ name: String,
                           file: StaticString = #filePath, line: UInt = #line) {
        let (difference, diff) = GoldenImage.compare(shown, expected, tolerance: tolerance)
        guard difference.differingPixels > 0 else { return }
        _ = diff
        write(shown, expected, name)
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/oracle")
        XCTFail("\(name): the settled screen differs from a synchronous render of the same state: \(difference); "
                + "see \(folder.path)/\(name)-*.png", file: file, line: line)
    }
}
