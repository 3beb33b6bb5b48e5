import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest

/// The gallery binary run from somewhere else than the checkout, as a person does with a program they
/// built: from a folder with no `Assets` in it, copied away from its resource bundle, with its fonts
/// folder pointed at nothing, and with no font on the system at all. Each time the chats screen's
/// screenshot must show text (or, with no font anywhere, boxes where the text goes), never a blank.
@MainActor
final class GalleryElsewhereTests: XCTestCase {
    nonisolated(unsafe) private var workFolder: URL!

    /// The gallery built beside the test runner.
    nonisolated private var builtGallery: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("gallery")
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        workFolder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-elsewhere-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: builtGallery.path), "built gallery at \(builtGallery.path)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workFolder)
        try super.tearDownWithError()
    }

    /// Runs `executable` headless for five frames in `workFolder` (which has no `Assets`) and returns
    /// its exit status, its output and the screenshot.
    private func runGallery(_ executable: URL, environment: [String: String] = [:]) throws -> (status: Int32, output: String, shot: Bitmap?) {
        XCTAssertFalse(FileManager.default.fileExists(atPath: workFolder.appendingPathComponent("Assets").path))
        let shot = workFolder.appendingPathComponent("shot.png")
        try? FileManager.default.removeItem(at: shot)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--headless", "--frames", "5", "--screenshot", shot.path]
        process.currentDirectoryURL = workFolder
        var env = ProcessInfo.processInfo.environment
        env["TESSERA_FONTS"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // A gallery that does not finish is ended, and the test fails with what it printed.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, output, try? Bitmap(contentsOfFile: shot.path))
    }

    /// The gallery alone in a folder of its own, without the resource bundle SwiftPM put beside it.
    private func copiedGallery() throws -> URL {
        let folder = workFolder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("gallery")
        try FileManager.default.copyItem(at: builtGallery, to: copy)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("Tessera_CTessera.resources").path))
        return copy
    }

    /// Asserts that the chats screen shows text: dark ink where the chat titles and previews are
    /// (right of the avatars, left of the times and badges) and where the tab bar's titles are. A
    /// screen whose text vanished has none in either (white and the bar's pale grey).
    private func assertShowsText(_ shot: Bitmap?, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let shot else { return XCTFail("\(what): no screenshot", file: file, line: line) }
        XCTAssertEqual(shot.width, 960, file: file, line: line)
        let rows = InkPixels.count(in: shot, rect: Rect(x: 76, y: 56, width: 524, height: 604))
        let tabTitles = InkPixels.count(in: shot, rect: Rect(x: 0, y: 680, width: 960, height: 32))
        XCTAssertGreaterThan(rows, 3_000, "\(what): chat titles and previews", file: file, line: line)
        XCTAssertGreaterThan(tabTitles, 150, "\(what): tab bar titles", file: file, line: line)
    }

    func testTheBuiltGalleryRunFromAFolderWithoutAssetsShowsText() async throws {
        let (status, output, shot) = try runGallery(builtGallery)
        XCTAssertEqual(status, 0, output)
        XCTAssertFalse(output.contains("tessera.fonts"), "the bundled faces are found beside the binary: \(output)")
        assertShowsText(shot, "built gallery")
    }

    func testACopiedGalleryWithoutItsBundleStillShowsText() async throws {
        // No `Tessera_CTessera.resources` beside it: the lookup must not trap (as `Bundle.module`
        // would) and finds the faces the bundle is built from.
        let (status, output, shot) = try runGallery(try copiedGallery())
        XCTAssertEqual(status, 0, output)
        XCTAssertFalse(output.contains("Fatal error"), output)
        assertShowsText(shot, "copied gallery")
    }

    func testWithItsFontsFolderEmptyTheGalleryUsesTheSystemsFontsAndSaysWhich() async throws {
        let empty = workFolder.appendingPathComponent("no-fonts")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let (status, output, shot) = try runGallery(try copiedGallery(), environment: ["TESSERA_FONTS": empty.path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("font file \(empty.path)/DejaVuSans.ttf does not exist; using the system's fonts"), output)
        XCTAssertTrue(output.contains("DejaVu Sans regular text uses /"), "the file chosen is named: \(output)")
        XCTAssertTrue(output.contains("DejaVu Sans bold text uses /"), "the bold file chosen is named: \(output)")
        XCTAssertEqual(output.components(separatedBy: "DejaVu Sans regular text uses").count, 2, "said once: \(output)")
        assertShowsText(shot, "system fonts")
    }

    func testWithNoFontAnywhereItIsOneErrorAndBoxesNotABlank() async throws {
        let empty = workFolder.appendingPathComponent("no-fonts")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        // A fontconfig configuration that knows no font folder: fontconfig finds nothing.
        let configuration = workFolder.appendingPathComponent("fonts.conf")
        try Data("""
            <?xml version="1.0"?>
            <!DOCTYPE fontconfig SYSTEM "fonts.dtd">
            <fontconfig><cachedir>\(workFolder.appendingPathComponent("fontconfig-cache").path)</cachedir></fontconfig>
            """.utf8).write(to: configuration)
        let (status, output, shot) = try runGallery(try copiedGallery(), environment: [
            "TESSERA_FONTS": empty.path, "FONTCONFIG_FILE": configuration.path,
        ])
        XCTAssertEqual(status, 0, output)
        let errors = output.components(separatedBy: "\n").filter { $0.contains("no font can be opened") }
        XCTAssertEqual(errors.count, 1, "said once: \(output)")
        XCTAssertTrue(errors.first?.contains("\(empty.path)/DejaVuSans.ttf") == true, "names the file tried: \(output)")
        XCTAssertTrue(errors.first?.contains("fontconfig has no font for DejaVu Sans or sans-serif") == true, output)
        assertShowsText(shot, "no font: boxes")
    }
}
