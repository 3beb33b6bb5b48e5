import Foundation
import TestSupport
import XCTest

/// `gallery --bench memory`: its JSON has the process's figures and each owner's bytes, headless and
/// in a window under Xvfb, where the software renderer maps no OpenGL library and the OpenGL one does;
/// a gallery that fetches nothing by URL maps no libcurl.
final class GalleryMemoryBenchmarkTests: XCTestCase {
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder }

    private struct Report: Decodable {
        var benchmark: String
        var screen: String
        var rssBytes: Int
        var anonymousBytes: Int
        var threads: Int
        var mapsOpenGL: Bool
        var mapsNetworkLibraries: Bool
        var owners: [String: Int]
    }

    private func measure(_ arguments: [String], environment: [String: String], name: String) throws -> Report {
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let json = outputFolder.appendingPathComponent("memory-\(name).json")
        let (status, output) = try GalleryProcess.run(galleryBinary.path, ["--bench", "memory", "--seconds", "1", "--json", json.path]
                                                      + arguments + GalleryProcess.assetsArguments, environment: environment)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("bitmaps on screen"), "the table names the owners: " + output)
        return try JSONDecoder().decode(Report.self, from: Data(contentsOf: json))
    }

    func testTheReportSplitsTheMemoryByOwnerHeadlessAndInAWindow() throws {
        let headless = try measure(["--headless"], environment: [:], name: "headless")
        XCTAssertEqual(headless.benchmark, "memory")
        XCTAssertEqual(headless.screen, "chats")
        XCTAssertGreaterThan(headless.rssBytes, headless.anonymousBytes)
        XCTAssertGreaterThan(headless.anonymousBytes, 0)
        for key in ["bitmapsOnScreen", "bitmapsDisplayRange", "decodedImages", "bitmapsRetained", "textures", "textLayouts",
                    "threadStacks", "chatDataset", "allocatorFree", "heapOther", "sharedFrames", "fontFiles", "libraries", "otherFiles"] {
            XCTAssertNotNil(headless.owners[key], "\(key) is reported")
        }
        XCTAssertGreaterThan(headless.owners["bitmapsOnScreen"] ?? 0, 1_000_000, "a screenful of rows is drawn")
        XCTAssertGreaterThan(headless.owners["chatDataset"] ?? 0, 100_000)
        XCTAssertGreaterThan(headless.owners["fontFiles"] ?? 0, 0, "the fonts are mapped files")
        XCTAssertFalse(headless.mapsOpenGL)
        XCTAssertFalse(headless.mapsNetworkLibraries, "nothing fetched by URL: libcurl and its libraries are not loaded")

        try Xvfb.withDisplay(numbers: 1200..<1300) { display in
            let environment = ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"]
            let software = try measure(["--renderer", "software"], environment: environment, name: "window-software")
            XCTAssertFalse(software.mapsOpenGL, "the software renderer in a window maps no OpenGL library")
            XCTAssertGreaterThan(software.owners["bitmapsOnScreen"] ?? 0, 1_000_000)
            // SDL's choice left to the environment, which names the software renderer: no OpenGL either.
            var chosenBySDL = environment
            chosenBySDL["SDL_RENDER_DRIVER"] = "software"
            let environmentSoftware = try measure([], environment: chosenBySDL, name: "window-sdl-render-driver")
            XCTAssertFalse(environmentSoftware.mapsOpenGL, "SDL_RENDER_DRIVER=software maps no OpenGL library")
            let opengl = try measure(["--renderer", "opengl"], environment: environment, name: "window-opengl")
            XCTAssertTrue(opengl.mapsOpenGL, "the OpenGL renderer maps Mesa's libraries, and the report says so")
        }
    }
}
