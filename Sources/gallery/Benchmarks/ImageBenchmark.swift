import Tessera
import Foundation

/// Image decoding at the size shown against the whole image decoded (by the same decoders, at natural
/// size) and shrunk afterwards, for each gallery photo
/// and for a 24-megapixel JPEG and a 36-megapixel PNG made here: time and the peak resident memory a
/// decode adds, at 52, 104 and 600 px. Then hostile files: what each costs before it is shown or refused.
/// - Thread: main (decodes run on this thread, one at a time, so the memory figures are one decode's)
@MainActor
struct ImageBenchmark {
    let assets: URL
    let repetitions: Int

    /// Peak resident memory added while `body` runs, in bytes: freed heap is returned first, the
    /// kernel's high-water mark is reset, and the mark is read after.
    private func measure<R>(_ body: () throws -> R) rethrows -> (R, milliseconds: Double, bytes: Int) {
        _ = returnFreedHeap(0)
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = Self.status("VmRSS")
        let start = MonotonicClock.nanoseconds()
        let result = try body()
        let elapsed = MonotonicClock.milliseconds(since: start)
        return (result, elapsed, max(0, Self.status("VmHWM") - before))
    }

    /// A figure from /proc/self/status, in bytes.
    private static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
        }
        return 0
    }


    /// Makes (once, in the temporary folder) a photo-like picture of `width` × `height`: smooth
    /// gradients with fine noise, so it compresses like a photo rather than like a flat colour.
    private func generated(_ name: String, width: Int, height: Int, write: (Bitmap, String) throws -> Void) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-\(name)").path
        if FileManager.default.fileExists(atPath: path) { return path }
        var pixels = [UInt32](repeating: 0, count: width * height)
        var seed: UInt32 = 0x9E37_79B9
        for y in 0..<height {
            for x in 0..<width {
                seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
                let noise = Int(seed & 15)
                let r = (x * 255 / width + noise) & 255, g = (y * 255 / height + noise) & 255, b = ((x + y) / 40 * 37) & 255
                pixels[y * width + x] = 0xFF00_0000 | UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
            }
        }
        try write(try Bitmap(width: width, height: height, premultipliedARGB: pixels), path)
        return path
    }

    /// Limits for the whole-image decode the at-size one is compared with.
    private let wholeLimits = ImageDecoder.Limits(workingMemoryBytes: 1 << 30)

    func run() throws -> String {
        var files = try AssetLocator.photoNames(in: assets).map { ($0, assets.appendingPathComponent("photos/\($0)").path) }
        files.append(("generated 24 MP .jpg", try generated("24mp.jpg", width: 6000, height: 4000) { try $0.writeJPEG(to: $1, quality: 88) }))
        files.append(("generated 36 MP .png", try generated("36mp.png", width: 6000, height: 6000) { try $0.writePNG(to: $1) }))

        var lines = ["image benchmark (release; median of \(repetitions) runs; MB = peak resident memory the decode adds; "
                     + "\(BenchmarkOutput.noRenderer))",
                     "  file                    stored      shown     at size: ms     MB  |  whole + shrink: ms     MB  | faster  |  SDL_image + shrink: ms     MB  | faster"]
        for (name, path) in files {
            let source = ImageSource.file(path)
            let stored = try ImageDecoder.header(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), source: name)
            for side in [52, 104, 600] {
                let target = ImageDecoder.Target(width: side, height: side, mode: .aspectFill)
                var atSize: [Double] = [], whole: [Double] = [], sdl: [Double] = []
                var atSizeBytes = 0, wholeBytes = 0, sdlBytes = 0
                var shown = (0, 0)
                let runs = stored.width * stored.height > 20_000_000 ? max(1, repetitions / 3) : repetitions
                for _ in 0..<runs {
                    let a = try measure { try ImageDecoder.decode(source, for: target) }
                    atSize.append(a.milliseconds)
                    atSizeBytes = max(atSizeBytes, a.bytes)
                    shown = (a.0?.width ?? 0, a.0?.height ?? 0)
                    let b = try measure { () -> Bitmap? in
                        // The whole image needs more than the default working-memory budget for the large files.
                        guard let full = try ImageDecoder.decode(source, limits: wholeLimits) else { return nil }
                        return try ImageDecoder.prepareForDisplay(full, crop: nil, mode: .aspectFill, target: (side, side), scale: 1)
                    }
                    whole.append(b.milliseconds)
                    wholeBytes = max(wholeBytes, b.bytes)
                    // The path before decoding at size: SDL_image's whole decode, then the shrink.
                    let c = try measure { () -> Bitmap? in
                        let full = try Bitmap(contentsOfFile: path)
                        return try ImageDecoder.prepareForDisplay(full, crop: nil, mode: .aspectFill, target: (side, side), scale: 1)
                    }
                    sdl.append(c.milliseconds)
                    sdlBytes = max(sdlBytes, c.bytes)
                }
                lines.append("  " + name.padded(to: 22) + String(format: " %5d×%-5d %4d×%-4d %8.2f %7.1f  | %16.2f %7.1f  | %5.1f×  | %20.2f %7.1f  | %5.1f×",
                                    stored.width, stored.height, shown.0, shown.1,
                                    atSize.median(), Double(atSizeBytes) / 1e6, whole.median(), Double(wholeBytes) / 1e6,
                                    whole.median() / max(0.001, atSize.median()),
                                    sdl.median(), Double(sdlBytes) / 1e6, sdl.median() / max(0.001, atSize.median())))
            }
        }

        lines.append("")
        lines.append("  hostile file, shown at 104×104 px                 outcome                                      ms      MB")
        for (name, bytes) in try hostileFiles() {
            let target = ImageDecoder.Target(width: 104, height: 104, mode: .aspectFill)
            let run = measure { () -> String in
                do {
                    guard let bitmap = try ImageDecoder.decode(.data(bytes, name: "file"), for: target) else { return "cancelled" }
                    return "shown at \(bitmap.width)×\(bitmap.height)"
                } catch let error as ImageError {
                    return "refused: " + error.description.replacingOccurrences(of: "file (\(bytes.count) bytes): ", with: "")
                } catch {
                    return "error: \(error)"
                }
            }
            let outcome = run.0.count > 44 ? String(run.0.prefix(43)) + "…" : run.0
            lines.append("  " + name.padded(to: 50) + " " + outcome.padded(to: 45)
                         + String(format: " %6.2f %7.1f", run.milliseconds, Double(run.bytes) / 1e6))
        }
        return lines.joined(separator: "\n")
    }

    /// Files that lie about their size, made here.
    private func hostileFiles() throws -> [(String, [UInt8])] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xFF) } }
        // A 1×1 GIF whose frame descriptor claims 30000×30000.
        var gif: [UInt8] = Array("GIF89a".utf8) + le16(10) + le16(10) + [0x80, 0, 0, 0, 0, 0, 255, 255, 255]
        gif += [0x2C] + le16(0) + le16(0) + le16(30_000) + le16(30_000) + [0, 2, 2, 0x44, 0x01, 0, 0x3B]
        // A BMP header claiming 6000×6000 in 154 bytes.
        var bmp: [UInt8] = Array("BM".utf8) + [154, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0]
        bmp += [0x70, 0x17, 0, 0, 0x70, 0x17, 0, 0, 1, 0, 24, 0] + Array(repeating: 0, count: 24)
        bmp += Array(repeating: 0x7F, count: 154 - bmp.count)
        // A real PNG's header rewritten to claim 4000×4000.
        var lying = [UInt8](try Data(contentsOf: assets.appendingPathComponent("photos/horse.png")))
        lying.replaceSubrange(16..<24, with: be32(4000) + be32(4000))
        // Large, well-formed PNGs that compress to little: 16000×2400 and 6000×6000.
        let wide = try generatedFlat("16000x2400.png", width: 16_000, height: 2_400)
        let square = try generatedFlat("6000x6000.png", width: 6_000, height: 6_000)
        return [("GIF, 29 bytes, frame claims 30000×30000", gif),
                ("BMP, 154 bytes, claims 6000×6000", bmp),
                ("PNG, real file, header rewritten to 4000×4000", Array(lying.prefix(109))),
                ("PNG, \(wide.count / 1000) KB, 16000×2400", wide),
                ("PNG, \(square.count / 1000) KB, 6000×6000", square)]
    }

    private func generatedFlat(_ name: String, width: Int, height: Int) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-\(name)").path
        if !FileManager.default.fileExists(atPath: path) {
            let pixels = (0..<(width * height)).map { i -> UInt32 in 0xFF00_0000 | UInt32((i % width) / 64 & 255) << 8 }
            try Bitmap(width: width, height: height, premultipliedARGB: pixels).writePNG(to: path)
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// glibc's `malloc_trim`, which hands freed heap back to the kernel (not exported by the Glibc module).
@_silgen_name("malloc_trim")
private func returnFreedHeap(_ pad: Int) -> Int32
