import Compositor
import Foundation
import TestSupport
import XCTest

/// The gallery in a real window: under Xvfb (installed by `make test`) it opens an X11 window with the
/// OpenGL renderer, renders the chats screen, and its screenshot matches the headless one.
final class GalleryWindowTests: XCTestCase {
    private var galleryBinary: URL {
        // The test runner sits beside the products it was built with.
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("gallery")
    }

    private func which(_ tool: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // The tests run with SDL_VIDEODRIVER=dummy; the child gets only what is asked for here.
        var env = ProcessInfo.processInfo.environment
        env["SDL_VIDEODRIVER"] = nil
        env["DISPLAY"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    func testWindowUnderXvfbMatchesTheHeadlessRender() throws {
        guard let xvfb = which("Xvfb") else {
            throw XCTSkip("Xvfb is not installed (make test installs it)")
        }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: galleryBinary.path), "built gallery at \(galleryBinary.path)")
        let folder = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("xvfb")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let windowShot = folder.appendingPathComponent("chats-window.png").path
        let headlessShot = folder.appendingPathComponent("chats-headless.png").path
        let arguments = ["--screen", "chats", "--rows", "200", "--frames", "5",
                         "--assets", GoldenImage.repositoryRoot.appendingPathComponent("Assets").path]

        // A private X server on a display number nobody holds (no lock file, no socket).
        guard let number = (90..<190).first(where: {
            !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
                && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
        }) else { throw XCTSkip("no free X display number") }
        let display = ":\(number)"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        server.arguments = [display, "-screen", "0", "1280x1024x24", "-nolisten", "tcp"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        // Wait for the server's socket rather than for a fixed time.
        let socket = "/tmp/.X11-unix/X\(display.dropFirst())"
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 200 && server.isRunning {
            usleep(50_000)
            waited += 1
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "Xvfb did not start on \(display)")

        var windowEnvironment = ["DISPLAY": display]
        windowEnvironment["SDL_VIDEODRIVER"] = "x11"
        let (windowStatus, windowOutput) = try run(galleryBinary.path, arguments + ["--screenshot", windowShot],
                                                   environment: windowEnvironment)
        XCTAssertEqual(windowStatus, 0, windowOutput)
        XCTAssertTrue(windowOutput.contains("video driver x11") || windowOutput.contains("screenshot written"), windowOutput)
        XCTAssertFalse(windowOutput.contains("running headless"), "a display was found: " + windowOutput)

        let (headlessStatus, headlessOutput) = try run(galleryBinary.path, arguments + ["--headless", "--screenshot", headlessShot],
                                                       environment: [:])
        XCTAssertEqual(headlessStatus, 0, headlessOutput)

        let window = try Bitmap(contentsOfFile: windowShot)
        let headless = try Bitmap(contentsOfFile: headlessShot)
        // Not blank: a real screen has many colours.
        XCTAssertGreaterThan(Set(window.pixels.prefix(200_000)).count, 200, "the window's frame is not blank")
        let (difference, diff) = GoldenImage.compare(window, headless, tolerance: 24)
        if difference.differingPixels > 0, let diff {
            try? diff.writePNG(to: folder.appendingPathComponent("chats-diff.png").path)
        }
        // OpenGL and the software renderer filter and round slightly differently: allow a sliver.
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), 0.01,
                          "\(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))")
    }
}
