import Foundation
import XCTest

/// A private X server for the tests that drive a real window: Xvfb on a display number nobody holds.
public enum Xvfb {
    /// The path of `tool` on `PATH`, or nil.
    public static func which(_ tool: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs `body` with a fresh Xvfb on the first free display number in `numbers` (no lock file, no
    /// socket) and stops the server after. Skips the test when Xvfb is not installed.
    public static func withDisplay(numbers: Range<Int>, screen: String = "1280x1024x24",
                                   _ body: (_ display: String) throws -> Void) throws {
        guard let xvfb = which("Xvfb") else {
            throw XCTSkip("Xvfb is not installed (make test installs it)")
        }
        guard let number = numbers.first(where: {
            !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
                && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
        }) else { throw XCTSkip("no free X display number") }
        let display = ":\(number)"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        server.arguments = [display, "-screen", "0", screen, "-nolisten", "tcp"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        // Wait for the server's socket rather than for a fixed time.
        let socket = "/tmp/.X11-unix/X\(number)"
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 200 && server.isRunning {
            usleep(50_000)
            waited += 1
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "Xvfb did not start on \(display)")
        try body(display)
    }
}
