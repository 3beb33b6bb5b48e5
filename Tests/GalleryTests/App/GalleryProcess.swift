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

    /// How long a read waits for a line that does not come before it gives up: a failing check, not
    /// a test runner stuck until its watchdog (a slow run under a sanitizer still fits well inside).
    static let lineTimeout = 120.0
    /// How long `finish` waits for the child to end (a benchmark run whole under a sanitizer included).
    static let exitTimeout = 480.0

    /// Reads what the child writes next, waiting until `deadline` (monotonic seconds): false when
    /// the child closed its output or nothing came in time.
    private func readMore(until deadline: Double) -> Bool {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            output += String(decoding: buffer[0..<count], as: UTF8.self)
            return true
        }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Reads until the output holds `text` (true), or the child closes its output or `timeout`
    /// seconds pass (false).
    func read(until text: String, timeout: Double = GalleryProcess.lineTimeout) -> Bool {
        let deadline = Self.now() + timeout
        while !output.contains(text) {
            if !readMore(until: deadline) { return false }
        }
        return true
    }

    /// Reads until a line after `offset` (a count of characters of `output`) holds `text`; returns
    /// that line, or nil when the child closed its output or `timeout` seconds passed first.
    func readLine(containing text: String, after offset: Int, timeout: Double = GalleryProcess.lineTimeout) -> String? {
        let deadline = Self.now() + timeout
        while true {
            let tail = output.dropFirst(offset)
            if let line = tail.split(separator: "\n").first(where: { $0.contains(text) }),
               tail.contains(line + "\n") {
                return String(line)
            }
            if !readMore(until: deadline) { return nil }
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

    /// Reads the rest of the output and waits for the exit. A child that has not closed its output
    /// after `timeout` seconds is terminated (then killed), and its status says so.
    func finish(timeout: Double = GalleryProcess.exitTimeout) -> (status: Int32, output: String) {
        var deadline = Self.now() + timeout
        var ended = false
        while !ended {
            if readMore(until: deadline) { continue }
            if Self.now() < deadline || !process.isRunning { ended = true; continue }
            // Out of time: asked to end, then made to.
            output += "\n[the test ended the process after \(Int(timeout)) s]\n"
            if process.isRunning { process.terminate() }
            deadline = Self.now() + 10
            if !readMore(until: deadline), process.isRunning { kill(process.processIdentifier, SIGKILL) }
            while readMore(until: Self.now() + 10) {}
            ended = true
        }
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
