import Foundation
import Glibc
import TestSupport

/// A child process (the gallery binary, xdotool, xwininfo) whose standard output and error are read
/// as they come, for tests that drive the gallery from outside.
final class GalleryProcess {
    /// The gallery binary: the test runner sits beside the products it was built with.
    static var galleryBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("gallery")
    }
    /// The gallery's arguments for the repository's assets.
    static let assetsArguments = ["--assets", GoldenImage.repositoryRoot.appendingPathComponent("Assets").path]
    /// Where window tests write their screenshots.
    static var outputFolder: URL { GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("xvfb") }

    let process = Process()
    private let pipe = Pipe()
    /// The child's standard input.
    private let input = Pipe()
    private(set) var output = ""

    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // The tests run with SDL_VIDEODRIVER=dummy; the child gets only what is asked for here.
        var env = ProcessInfo.processInfo.environment
        env["SDL_VIDEODRIVER"] = nil
        env["DISPLAY"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = input
        try process.run()
    }

    /// Writes `line` and a line end to the child's standard input.
    func writeLine(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Reads until the output holds `text` (true) or the child closes its output (false).
    func read(until text: String) -> Bool {
        while !output.contains(text) {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { return false }
            output += String(decoding: data, as: UTF8.self)
        }
        return true
    }

    /// Reads until a line after `offset` (a count of characters of `output`) holds `text`; returns
    /// that line, or nil when the child closed its output first.
    func readLine(containing text: String, after offset: Int) -> String? {
        while true {
            let tail = output.dropFirst(offset)
            if let line = tail.split(separator: "\n").first(where: { $0.contains(text) }),
               tail.contains(line + "\n") {
                return String(line)
            }
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            output += String(decoding: data, as: UTF8.self)
        }
    }

    /// Reads what the child has written so far without waiting for more; returns the output.
    func drainAvailable() -> String {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            output += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return output
    }

    /// Reads the rest of the output and waits for the exit.
    func finish() -> (status: Int32, output: String) {
        output += String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

extension GalleryProcess {
    /// Runs `executable` with `arguments` to its end: its status and what it wrote.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        try GalleryProcess(executable, arguments, environment: environment).finish()
    }

    /// Starts the gallery in a window on X display `display` with `arguments` (the repository's assets
    /// added; `environment` over SDL's X11 driver), waits until it says its screen is ready, and finds
    /// its window with xdotool. The caller ends the process (`terminate()` in a `defer`).
    /// - Throws: when the gallery does not start or its window is not found in 20 s.
    static func startInWindow(display: String, arguments: [String], environment extra: [String: String] = [:],
                              xdotool: String) throws -> (gallery: GalleryProcess, window: String) {
        let environment = ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"].merging(extra) { $1 }
        let gallery = try GalleryProcess(galleryBinary.path, arguments + assetsArguments, environment: environment)
        guard gallery.read(until: "screen ready") else {
            gallery.process.terminate()
            throw GalleryWindowError(what: "the gallery did not start: \(gallery.output)")
        }
        let (_, found) = try run("/usr/bin/timeout", ["20", xdotool, "search", "--sync", "--onlyvisible", "--name",
                                                      "^Tessera gallery$"], environment: ["DISPLAY": display])
        guard let window = found.split(separator: "\n").first.map(String.init) else {
            gallery.process.terminate()
            throw GalleryWindowError(what: "the gallery's window was not found")
        }
        return (gallery, window)
    }
}

/// Why a gallery in a window could not be had.
struct GalleryWindowError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}
