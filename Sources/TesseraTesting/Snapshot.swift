public import Compositor
public import Foundation
public import NodeRuntime
import Tessera
import Testing
import XCTest

/// Offscreen render-and-compare for an app's own nodes and screens, for XCTest and Swift Testing.
///
/// ```swift
/// @MainActor final class BadgeTests: XCTestCase {
///     func testBadge() async throws {
///         try assertSnapshot(of: BadgeNode(count: 12), size: Size(width: 40, height: 24))
///     }
/// }
/// ```
///
/// The node is shown alone in a headless `Application` (SDL's software renderer on the dummy video
/// driver, so the pixels are the same on every machine), settled (measured, decoded, drawn,
/// committed), read back, and compared with the reference image stored beside the test file:
/// `__Snapshots__/<TestFile>/<test name>[-<name>].png`. A missing reference is recorded and the test
/// fails once, saying so; `TESSERA_RECORD_SNAPSHOTS=1` (or `record: true`) records every reference
/// again. On a mismatch the actual picture and a diff picture are written to a folder named in the
/// failure (`TESSERA_SNAPSHOT_ARTIFACTS`, else the temporary directory).
/// - Thread: main
@MainActor
public enum Snapshot {
    /// Renders `node` alone, filling a window of `size` points at `scale` pixels a point, over
    /// `background`, once everything in it has settled.
    /// - Throws: `Application.Failure` when SDL cannot start, `SettleTimeout` when the node never
    ///   settles (an endless animation) within `timeout` seconds.
    public static func render(_ node: Node, size: Size, scale: Double = 1, background: Color = .white,
                              timeout: Double = 10) throws -> Bitmap {
        var configuration = Application.Configuration.headless(size: size, scale: scale)
        configuration.backgroundColor = background
        let app = try Application(configuration: configuration, rootNode: node)
        defer { app.host.setRootNode(nil) }
        try app.settle(timeout: timeout)
        return try app.capture()
    }

    /// What a comparison found; `failure` is nil when the picture matched (or was recorded).
    public struct Outcome: Sendable {
        /// The reference file.
        public let referencePath: String
        /// Why the snapshot failed, with the paths of the pictures written; nil when it passed.
        public let failure: String?
        /// True when the reference was (re)written by this run.
        public let recorded: Bool
    }

    /// Compares `actual` with the reference at `referencePath` (see `Snapshot`), recording it when it
    /// is missing or `record` is true.
    public static func compare(_ actual: Bitmap, referencePath: String, tolerance: Int, record: Bool) -> Outcome {
        let fileManager = FileManager.default
        let reference = URL(fileURLWithPath: referencePath)
        let recordAll = record || ProcessInfo.processInfo.environment["TESSERA_RECORD_SNAPSHOTS"] == "1"
        let exists = fileManager.fileExists(atPath: referencePath)
        if recordAll || !exists {
            do {
                try fileManager.createDirectory(at: reference.deletingLastPathComponent(), withIntermediateDirectories: true)
                try actual.writePNG(to: referencePath)
            } catch {
                return Outcome(referencePath: referencePath, failure: "could not record \(referencePath): \(error)", recorded: false)
            }
            return Outcome(referencePath: referencePath,
                           failure: recordAll ? nil : "no reference image: recorded \(referencePath); run the test again",
                           recorded: true)
        }
        let expected: Bitmap
        do { expected = try Bitmap(contentsOfFile: referencePath) } catch {
            return Outcome(referencePath: referencePath, failure: "cannot read the reference \(referencePath): \(error)",
                           recorded: false)
        }
        let (difference, diff) = ImageComparison.compare(actual, expected, tolerance: tolerance)
        guard difference.differingPixels > 0 else { return Outcome(referencePath: referencePath, failure: nil, recorded: false) }
        let artifacts = artifactsDirectory.appendingPathComponent(reference.deletingLastPathComponent().lastPathComponent)
        let name = reference.deletingPathExtension().lastPathComponent
        let actualPath = artifacts.appendingPathComponent("\(name).actual.png").path
        let diffPath = artifacts.appendingPathComponent("\(name).diff.png").path
        try? fileManager.createDirectory(at: artifacts, withIntermediateDirectories: true)
        try? actual.writePNG(to: actualPath)
        if let diff { try? diff.writePNG(to: diffPath) }
        let sizes = "\(actual.width)×\(actual.height) rendered, \(expected.width)×\(expected.height) expected"
        return Outcome(referencePath: referencePath,
                       failure: "\(name): \(difference) over a tolerance of \(tolerance) (\(sizes)); "
                           + "see \(actualPath)" + (diff == nil ? "" : " and \(diffPath)"),
                       recorded: false)
    }

    /// Where failing pictures go: `TESSERA_SNAPSHOT_ARTIFACTS`, else `tessera-snapshots` in the
    /// temporary directory.
    public static var artifactsDirectory: URL {
        if let folder = ProcessInfo.processInfo.environment["TESSERA_SNAPSHOT_ARTIFACTS"], !folder.isEmpty {
            return URL(fileURLWithPath: folder)
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("tessera-snapshots")
    }

    /// The reference file for a test: `__Snapshots__/<file name>/<test>[-<name>].png` beside `file`.
    public static func referencePath(file: StaticString, testName: String, name: String?) -> String {
        let source = URL(fileURLWithPath: "\(file)")
        let test = testName.replacingOccurrences(of: "()", with: "")
            .map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        let base = String(test) + (name.map { "-\($0)" } ?? "")
        return source.deletingLastPathComponent()
            .appendingPathComponent("__Snapshots__")
            .appendingPathComponent(source.deletingPathExtension().lastPathComponent)
            .appendingPathComponent(base + ".png").path
    }

    /// Reports `message` as a failure of the running test, under Swift Testing or XCTest.
    static func fail(_ message: String, file: StaticString, line: UInt) {
        if Test.current != nil {
            Issue.record(Comment(rawValue: message),
                         sourceLocation: SourceLocation(fileID: "\(file)", filePath: "\(file)", line: Int(line), column: 1))
        } else {
            XCTFail(message, file: file, line: line)
        }
    }
}

/// Renders `node` offscreen (see `Snapshot.render`) and compares it with its reference image
/// (see `Snapshot`), failing the running test on a difference over `tolerance` in any channel.
/// - Parameters:
///   - name: distinguishes several snapshots in one test.
///   - tolerance: the largest channel difference (0–255) that still counts as equal; the default
///     forgives rounding.
///   - record: write the reference instead of comparing.
/// - Thread: main
@MainActor
public func assertSnapshot(of node: Node, size: Size, scale: Double = 1, background: Color = .white,
                           named name: String? = nil, tolerance: Int = 3, record: Bool = false,
                           file: StaticString = #filePath, testName: String = #function, line: UInt = #line) throws {
    let image = try Snapshot.render(node, size: size, scale: scale, background: background)
    assertSnapshot(of: image, named: name, tolerance: tolerance, record: record, file: file, testName: testName, line: line)
}

/// Compares a picture (an `Application`'s `capture()`, say) with its reference image (see `Snapshot`).
/// - Thread: main
@MainActor
public func assertSnapshot(of image: Bitmap, named name: String? = nil, tolerance: Int = 3, record: Bool = false,
                           file: StaticString = #filePath, testName: String = #function, line: UInt = #line) {
    let path = Snapshot.referencePath(file: file, testName: testName, name: name)
    let outcome = Snapshot.compare(image, referencePath: path, tolerance: tolerance, record: record)
    if let failure = outcome.failure { Snapshot.fail(failure, file: file, line: line) }
}
