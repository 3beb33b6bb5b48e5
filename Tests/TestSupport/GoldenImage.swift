public import Foundation
import XCTest
public import Compositor
public import TesseraTesting

/// Golden-image comparison for offscreen render tests.
///
/// Goldens live in `Tests/<TestTarget>/Goldens/NAME.png`. On a mismatch the actual image and a diff
/// image (differing pixels in red over a dimmed copy of the golden) are written to
/// `.test-output/goldens/` at the repository root. Set `TESSERA_RECORD_GOLDENS=1` to write the actual
/// images as the new goldens instead of comparing.
public enum GoldenImage {
    /// The repository's root folder.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Where failing renders and their diffs are written.
    public static let outputDirectory = repositoryRoot.appendingPathComponent(".test-output/goldens")
    static var isRecording: Bool { ProcessInfo.processInfo.environment["TESSERA_RECORD_GOLDENS"] == "1" }

    /// The goldens folder of a test target.
    public static func goldensDirectory(for target: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/\(target)/Goldens")
    }

    /// NodeRuntime's bundled faces in the sources (what its resource bundle is copied from).
    public static let bundledFontsFolder = repositoryRoot.appendingPathComponent("Sources/CTessera/Fonts").path

    /// A file under the repository's `Assets/` folder.
    public static func asset(_ relativePath: String) -> String {
        repositoryRoot.appendingPathComponent("Assets/\(relativePath)").path
    }

    /// Compares two images channel by channel; returns the difference and a diff picture
    /// (TesseraTesting's comparison, the one apps use).
    public static func compare(_ a: Bitmap, _ b: Bitmap, tolerance: Int) -> (ImageDifference, Bitmap?) {
        ImageComparison.compare(a, b, tolerance: tolerance)
    }

    /// Asserts that `actual` matches the golden `name` of test target `target` within `tolerance` per
    /// channel.
    public static func assertMatches(_ actual: Bitmap?, named name: String, in target: String, tolerance: Int = 3,
                                     file: StaticString = #filePath, line: UInt = #line) {
        guard let actual else { return XCTFail("no image rendered for \(name)", file: file, line: line) }
        let goldensDirectory = goldensDirectory(for: target)
        let goldenPath = goldensDirectory.appendingPathComponent("\(name).png").path
        if isRecording {
            try? FileManager.default.createDirectory(at: goldensDirectory, withIntermediateDirectories: true)
            do { try actual.writePNG(to: goldenPath) } catch {
                XCTFail("could not record \(goldenPath): \(error)", file: file, line: line)
            }
            return
        }
        try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let actualPath = outputDirectory.appendingPathComponent("\(name)-actual.png").path
        guard let golden = try? Bitmap(contentsOfFile: goldenPath) else {
            try? actual.writePNG(to: actualPath)
            return XCTFail("missing golden \(goldenPath); actual written to \(actualPath) " +
                           "(run with TESSERA_RECORD_GOLDENS=1 to record)", file: file, line: line)
        }
        let (difference, diff) = compare(actual, golden, tolerance: tolerance)
        if difference.differingPixels > 0 {
            try? actual.writePNG(to: actualPath)
            let diffPath = outputDirectory.appendingPathComponent("\(name)-diff.png").path
            try? diff?.writePNG(to: diffPath)
            XCTFail("\(name): \(difference.differingPixels) pixels differ (max channel delta " +
                    "\(difference.maximumChannelDelta), size \(actual.width)×\(actual.height) vs " +
                    "\(golden.width)×\(golden.height)); see \(actualPath) and \(diffPath)", file: file, line: line)
        }
    }
}
