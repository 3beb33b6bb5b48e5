import Foundation
import Compositor
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
    /// socket) and stops the server after. Skips the test when Xvfb is not installed. `keepsState`
    /// keeps the server's root window properties (what `xrdb` loads) when its last client leaves
    /// (`-noreset`; an X server otherwise starts over then).
    public static func withDisplay(numbers: Range<Int>, screen: String = "1280x1024x24", keepsState: Bool = false,
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
        server.arguments = [display, "-screen", "0", screen, "-nolisten", "tcp"] + (keepsState ? ["-noreset"] : [])
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

extension Xvfb {
    /// What the X server shows on `display` now, read from outside the app with `xwd -root` (the
    /// screen's pixels as the window system has them): width, height and opaque ARGB pixels, row by
    /// row. Nil when `xwd` is missing or its output is not a 24/32-bit ZPixmap dump.
    public static func screenshot(display: String) -> (width: Int, height: Int, pixels: [UInt32])? {
        guard let xwd = which("xwd") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: xwd)
        process.arguments = ["-root", "-silent", "-display", display]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return parseXWD([UInt8](data))
    }

    /// Reads an XWD file (X Window Dump, version 7): a big-endian header of 25 fields (the colour
    /// masks are fields 14–16, after the visual class), the window's name, the colour map, then the
    /// pixels.
    public static func parseXWD(_ bytes: [UInt8]) -> (width: Int, height: Int, pixels: [UInt32])? {
        func field(_ index: Int) -> Int? {
            let offset = index * 4
            guard offset + 4 <= bytes.count else { return nil }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        guard let headerSize = field(0), field(1) == 7, field(2) == 2,  // ZPixmap
              let width = field(4), let height = field(5), let byteOrder = field(7),
              let bitsPerPixel = field(11), let bytesPerLine = field(12),
              let redMask = field(14), let greenMask = field(15), let blueMask = field(16),
              let colours = field(19), bitsPerPixel == 32 || bitsPerPixel == 24,
              width > 0, height > 0, width <= 16384, height <= 16384 else { return nil }
        let start = headerSize + colours * 12
        let bytesPer = bitsPerPixel / 8
        guard bytesPerLine >= width * bytesPer, start + bytesPerLine * height <= bytes.count else { return nil }
        func shift(_ mask: Int) -> Int { mask == 0 ? 0 : mask.trailingZeroBitCount }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            let row = start + y * bytesPerLine
            for x in 0..<width {
                let at = row + x * bytesPer
                var value = 0
                for b in 0..<bytesPer {
                    let byte = Int(bytes[at + b])
                    value |= byteOrder == 0 ? byte << (8 * b) : byte << (8 * (bytesPer - 1 - b))
                }
                let r = (value & redMask) >> shift(redMask), g = (value & greenMask) >> shift(greenMask)
                let bl = (value & blueMask) >> shift(blueMask)
                pixels[y * width + x] = 0xFF00_0000 | UInt32(r & 0xFF) << 16 | UInt32(g & 0xFF) << 8 | UInt32(bl & 0xFF)
            }
        }
        return (width, height, pixels)
    }
}

/// What the test process runs under.
public enum TestEnvironment {
    /// True under ThreadSanitizer (`make tsan` sets `TSAN_OPTIONS`): everything runs several times
    /// slower, so figures a test checks against real time (a screen at rest within a second) are
    /// measured but not held to; races are what such a run is for.
    public static var isThreadSanitized: Bool {
        ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil
    }

    /// True under ThreadSanitizer or AddressSanitizer (`make asan` sets `ASAN_OPTIONS`): a window test
    /// whose variants differ only in what the sanitizers do not look at may run one of them there.
    public static var isSanitized: Bool {
        isThreadSanitized || ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
    }
}

extension Xvfb {
    /// Writes a screen read with `screenshot(display:)` as a PNG (for a person to open when a window
    /// test fails).
    public static func writePNG(_ shot: (width: Int, height: Int, pixels: [UInt32]), to path: String) throws {
        try Bitmap(width: shot.width, height: shot.height, scale: 1, premultipliedARGB: shot.pixels).writePNG(to: path)
    }
}
