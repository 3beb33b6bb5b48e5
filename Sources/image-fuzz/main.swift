// image-fuzz: a seeded mutation fuzzer for Tessera's image decoding. It mutates seed files (the
// gallery photos, the test fixtures (progressive and CMYK JPEG, WebP, GIF, animated GIF, APNG and
// WebP), small files of every format made here, hostile variants of those (metadata, counts and
// trailing bytes that would cost more than their pixels; extra frames), and the regression inputs kept
// in Tests/NodeRuntimeTests/FuzzRegressions) and feeds each result to `ImageDecoder.header`,
// `ImageDecoder.decode(_:for:limits:)` at a random target and, when it opens as an animation, to
// `AnimatedImageDecoder`, playing up to 16 steps (frames, ends of the sequence and rewinds), each
// frame rendered at the target. Every outcome must be a bitmap or an `ImageError`. A crash or trap writes the input to the findings folder before the process dies; a
// decode that runs past the hang limit is written there too. Runs replay from their seed.
//
//   image-fuzz [--seconds N] [--seed S] [--findings DIR] [--replay FILE]
import Compositor
import Foundation
import NodeRuntime
import Synchronization
import TesseraRandom

struct Options {
    var seconds = 60.0
    var seed: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)
    var findings = ".build/fuzz-findings"
    var replay: String?
    var repository = FileManager.default.currentDirectoryPath

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { fatalError("image-fuzz: \(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--seconds": seconds = Double(value()) ?? seconds
            case "--seed": seed = UInt64(value()) ?? seed
            case "--findings": findings = value()
            case "--replay": replay = value()
            case "--repository": repository = value()
            default: fatalError("image-fuzz: unknown argument \(arguments[i])")
            }
            i += 1
        }
    }
}

extension SeededRandom {
    /// A value in `0..<n` (0 when `n` is at most 1), by plain modulo: how a run's seed has always mapped
    /// to its mutations, so a recorded seed replays the same inputs.
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
}

// MARK: Crash capture: the input being decoded lives in a fixed buffer a signal handler can write.

nonisolated(unsafe) var currentInput = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
nonisolated(unsafe) var currentInputCount = 0
nonisolated(unsafe) var crashFile: Int32 = -1
nonisolated(unsafe) var crashTargetFile: Int32 = -1
nonisolated(unsafe) var currentTargetSeed: UInt64 = 0
let iterationsDone = Atomic<Int>(0)
let decodeStartedAt = Atomic<UInt64>(0)

func setCurrentInput(_ bytes: [UInt8]) {
    currentInput.deallocate()
    currentInput = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bytes.count))
    bytes.withUnsafeBufferPointer { currentInput.update(from: $0.baseAddress!, count: bytes.count) }
    currentInputCount = bytes.count
}

func installCrashHandlers(findings: String) {
    let path = findings + "/crash-input"
    crashFile = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    crashTargetFile = open(findings + "/crash-target", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] {
        Glibc.signal(signal) { number in
            if crashFile >= 0 { _ = write(crashFile, currentInput, currentInputCount) }
            if crashTargetFile >= 0 { _ = withUnsafeBytes(of: currentTargetSeed) { write(crashTargetFile, $0.baseAddress, 8) } }
            let message = "image-fuzz: signal \(number); the input is in crash-input (replay: --replay crash-input)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            _exit(3)
        }
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

// MARK: Seeds

func seedInputs(repository: String) -> [[UInt8]] {
    var seeds: [[UInt8]] = []
    let folders = ["Assets/photos", "Tests/NodeRuntimeTests/ImageFixtures", "Tests/NodeRuntimeTests/FuzzRegressions"]
    for folder in folders {
        let url = URL(fileURLWithPath: repository).appendingPathComponent(folder)
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() {
            if let data = try? Data(contentsOf: url.appendingPathComponent(name)), data.count < 2_000_000 {
                seeds.append([UInt8](data))
            }
        }
    }
    // Small files of each format, made by the encoders Tessera links.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-fuzz-seeds-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let pixels = (0..<(24 * 16)).map { i -> UInt32 in
        let x = UInt32(i % 24), y = UInt32(i / 24)
        return (y < 8 ? 0xFF00_0000 : 0x8000_0000) | (x * 10) << 16 | (y * 15) << 8 | 0x40
    }
    if let bitmap = try? Bitmap(width: 24, height: 16, premultipliedARGB: pixels) {
        for (name, write) in [("s.png", { try bitmap.writePNG(to: $0) }), ("s.jpg", { try bitmap.writeJPEG(to: $0, quality: 70) })]
            as [(String, (String) throws -> Void)] {
            let path = directory.appendingPathComponent(name).path
            if (try? write(path)) != nil, let data = FileManager.default.contents(atPath: path) { seeds.append([UInt8](data)) }
        }
    }
    // A 2×2 GIF and a 2×2 BMP.
    seeds.append([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 2, 0, 2, 0, 0x80, 0, 0, 255, 0, 0, 0, 0, 255,
                  0x2C, 0, 0, 0, 0, 2, 0, 2, 0, 0, 2, 3, 0x84, 0x1D, 0x05, 0, 0x3B])
    var bmp: [UInt8] = Array("BM".utf8) + [70, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 24, 0]
    bmp += Array(repeating: 0, count: 24) + [255, 0, 0, 0, 255, 0, 0, 0, 0, 0, 255, 0, 255, 255, 255, 0]
    seeds.append(bmp)
    return seeds + hostileSeeds(seeds)
}

// MARK: Hostile seeds: files whose metadata, counts or trailing bytes would cost more than their pixels

func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xFF) } }
func le32(_ v: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8((v >> $0) & 0xFF) } }

func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }
    return ~crc
}

func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    be32(data.count) + Array(type.utf8) + data + be32(Int(crc32(Array(type.utf8) + data)))
}

/// Where the first chunk of `type` starts in a PNG, if it has one.
func pngChunkOffset(_ png: [UInt8], _ type: String) -> Int? {
    var i = 8
    while i + 8 <= png.count {
        if png[(i + 4)..<(i + 8)].elementsEqual(type.utf8) { return i }
        i += 12 + (Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3]))
    }
    return nil
}

/// Variants of the small seeds with text, private and compressed-text chunks around a PNG's image
/// data, application and comment segments (and a second EXIF block) in a JPEG, more scans than the
/// cap in a progressive JPEG, extensions and extra frames in a GIF, a colour profile, EXIF and XMP in
/// a WebP, and bytes after the end of each.
func hostileSeeds(_ seeds: [[UInt8]]) -> [[UInt8]] {
    var made: [[UInt8]] = []
    let trailing = [UInt8](repeating: 0xA7, count: 4096)
    for seed in seeds where seed.count < 200_000 {
        if seed.starts(with: [0x89, 0x50, 0x4E, 0x47]), let data = pngChunkOffset(seed, "IDAT"),
           let end = pngChunkOffset(seed, "IEND") {
            var before: [UInt8] = []
            for i in 0..<20 { before += pngChunk(i % 2 == 0 ? "tEXt" : "prVt", Array("Comment\u{0}seed \(i)".utf8)) }
            before += pngChunk("zTXt", Array("Comment".utf8) + [0, 0, 0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01])
            let after = (0..<20).flatMap { _ in pngChunk("prVt", []) }
            made.append(Array(seed[..<data]) + before + Array(seed[data..<end]) + after + Array(seed[end...]) + trailing)
        }
        if seed.starts(with: [0xFF, 0xD8]) {
            let exif: [UInt8] = Array("Exif".utf8) + [0, 0] + Array("MM".utf8) + [0, 42] + be32(8)
                + [0, 1, 0x01, 0x12, 0, 3] + be32(1) + [0, 6, 0, 0] + be32(0)
            let app1 = [0xFF, 0xE1] + [UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 0xFF)] + exif
            var segments = app1 + app1
            for i in 0..<30 { segments += [0xFF, [0xFE, 0xE2, 0xED][i % 3], 0, 7] + Array("seed!".utf8) }
            made.append(Array(seed[..<2]) + segments + Array(seed[2...]) + trailing)
            // The last scan of a progressive file, repeated past the 400-scan cap.
            if let sos = (0..<(seed.count - 1)).last(where: { seed[$0] == 0xFF && seed[$0 + 1] == 0xDA }),
               let eoi = (sos..<(seed.count - 1)).last(where: { seed[$0] == 0xFF && seed[$0 + 1] == 0xD9 }),
               (0..<(seed.count - 1)).contains(where: { seed[$0] == 0xFF && seed[$0 + 1] == 0xC2 }) {
                let scan = Array(seed[sos..<eoi])
                made.append(Array(seed[..<eoi]) + Array((0..<420).map { _ in scan }.joined()) + [0xFF, 0xD9])
            }
        }
        if seed.starts(with: Array("GIF8".utf8)), seed.count > 13 {
            var head = 13
            if seed[10] & 0x80 != 0 { head += 3 << (Int(seed[10] & 0x07) + 1) }
            guard head < seed.count, seed.last == 0x3B else { continue }
            var extensions: [UInt8] = []
            for i in 0..<20 { extensions += [0x21, 0xFE, 6] + Array("seed\(i % 10) ".utf8) + [0] }
            extensions += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
            let body = Array(seed[head..<(seed.count - 1)])
            made.append(Array(seed[..<head]) + extensions + body + body + body + [0x3B] + trailing)
        }
        if seed.count > 30, seed.starts(with: Array("RIFF".utf8)), seed[12..<16].elementsEqual("VP8X".utf8) {
            func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
                Array(type.utf8) + le32(payload.count) + payload + (payload.count % 2 == 1 ? [0] : [])
            }
            var header = Array(seed[12..<30])
            header[8] |= 0x20 | 0x08 | 0x04
            let body = Array("WEBP".utf8) + header + chunk("ICCP", [UInt8](repeating: 7, count: 3000))
                + Array(seed[30...]) + chunk("EXIF", [UInt8](repeating: 8, count: 5000)) + chunk("XMP ", Array("<x/>".utf8))
            made.append(Array("RIFF".utf8) + le32(body.count) + body + trailing)
        }
    }
    return made
}

// MARK: Mutation

func mutate(_ input: [UInt8], _ g: inout SeededRandom, seeds: [[UInt8]]) -> [UInt8] {
    var bytes = input
    let interesting: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x40]
    for _ in 0...g.below(6) {
        guard !bytes.isEmpty else { bytes = [UInt8(g.below(256))]; continue }
        // Headers hold the lies that matter: aim half the mutations at the first 64 bytes.
        let at = g.below(2) == 0 ? g.below(min(64, bytes.count)) : g.below(bytes.count)
        switch g.below(9) {
        case 0: bytes[at] ^= UInt8(1 << g.below(8))
        case 1: bytes[at] = interesting[g.below(interesting.count)]
        case 2: bytes[at] = UInt8(g.below(256))
        case 3:  // a 16- or 32-bit field set to an extreme
            let values: [[UInt8]] = [[0xFF, 0xFF], [0, 0], [0x7F, 0xFF, 0xFF, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0], [0x75, 0x30]]
            let value = values[g.below(values.count)]
            for (k, b) in value.enumerated() where at + k < bytes.count { bytes[at + k] = b }
        case 4: bytes.removeSubrange(at..<min(bytes.count, at + 1 + g.below(64)))
        case 5: bytes.insert(contentsOf: (0..<(1 + g.below(32))).map { _ in UInt8(g.below(256)) }, at: at)
        case 6: bytes = Array(bytes.prefix(at + 1))  // truncate
        case 7:  // copy a run from elsewhere in the file
            let from = g.below(bytes.count), length = min(1 + g.below(32), bytes.count - from, bytes.count - at)
            if length > 0 { bytes.replaceSubrange(at..<(at + length), with: bytes[from..<(from + length)]) }
        default:  // splice in part of another seed
            let other = seeds[g.below(seeds.count)]
            let from = g.below(other.count)
            bytes.replaceSubrange(at..<bytes.count, with: other[from..<min(other.count, from + 1 + g.below(4096))])
        }
    }
    return bytes
}

// MARK: Run

/// Writes a line at once (stdout is block-buffered into a file, and a crash would lose it).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let options = Options(CommandLine.arguments)
try? FileManager.default.createDirectory(atPath: options.findings, withIntermediateDirectories: true)
installCrashHandlers(findings: options.findings)
let hangLimit: UInt64 = 10_000_000_000
let limits = ImageDecoder.Limits(maximumPixelCount: 16_000_000, workingMemoryBytes: 32 << 20)

func exercise(_ bytes: [UInt8], targetSeed: UInt64) -> String {
    setCurrentInput(bytes)
    currentTargetSeed = targetSeed
    decodeStartedAt.store(now(), ordering: .relaxed)
    defer { decodeStartedAt.store(0, ordering: .relaxed) }
    _ = try? ImageDecoder.header(of: bytes, source: "fuzz")
    let modes = ContentMode.allCases
    let target = ImageDecoder.Target(width: 1 + Int(targetSeed % 300), height: 1 + Int((targetSeed >> 16) % 300),
                                     mode: modes[Int((targetSeed >> 32) % UInt64(modes.count))],
                                     crop: targetSeed >> 40 & 3 == 0 ? Rect(x: 3, y: 2, width: 40, height: 30) : nil)
    func check(_ bitmap: Bitmap) {
        // Never over the limits; never larger than the target on both sides, except at natural size.
        Contract.require(bitmap.width >= 1 && bitmap.height >= 1 && bitmap.width <= limits.maximumSide
                         && bitmap.height <= limits.maximumSide && bitmap.width * bitmap.height <= limits.maximumPixelCount
                         && (target.mode == .center || bitmap.width <= target.width || bitmap.height <= target.height),
                         "a decoded bitmap of \(bitmap.width)×\(bitmap.height) for a \(target.width)×\(target.height) target")
    }
    var outcome: String
    do {
        guard let bitmap = try ImageDecoder.decode(.data(bytes, name: "fuzz"), for: target, limits: limits) else { return "cancelled" }
        check(bitmap)
        outcome = "decoded"
    } catch is ImageError {
        outcome = "refused"
    } catch {
        Contract.violated("an error that is not an ImageError: \(error)")
    }
    // The same bytes played as an animation, when they open as one.
    do {
        guard let animation = try AnimatedImageDecoder.open(.data(bytes, name: "fuzz"), limits: limits) else { return outcome }
        outcome += ", animated"
        var rewinds = 0
        for _ in 0..<16 {
            switch try animation.advance() {
            case .frame(let delay):
                Contract.require(delay.isFinite && delay > 0.0105, "a frame delay of \(delay) s")
                guard let frame = try animation.render(for: target) else { return outcome + " (cancelled)" }
                check(frame)
            case .endOfSequence:
                guard rewinds < 2 else { return outcome }
                rewinds += 1
                try animation.rewind()
            case .cancelled:
                Contract.violated("an animation step cancelled without a cancellation")
            }
        }
        return outcome
    } catch is ImageError {
        return outcome + " (animation refused)"
    } catch {
        Contract.violated("an animation error that is not an ImageError: \(error)")
    }
}

if let replay = options.replay {
    let bytes = [UInt8](FileManager.default.contents(atPath: replay) ?? Data())
    // The target of the crashing decode, when it was saved beside the input.
    var targets: [UInt64] = [0, 0x1234_5678_9ABC, 0xFFFF_FFFF_FFFF]
    if let saved = FileManager.default.contents(atPath: URL(fileURLWithPath: replay).deletingLastPathComponent()
                                                    .appendingPathComponent("crash-target").path), saved.count == 8 {
        targets.insert(saved.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }, at: 0)
    }
    for targetSeed in targets {
        say("image-fuzz: \(replay) → \(exercise(bytes, targetSeed: targetSeed))")
    }
    exit(0)
}

// A watchdog: a decode that outlives the hang limit is written out and the run fails.
Thread.detachNewThread {
    while true {
        Thread.sleep(forTimeInterval: 0.5)
        let started = decodeStartedAt.load(ordering: .relaxed)
        if started != 0 && now() - started > hangLimit {
            let path = options.findings + "/hang-input"
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes: currentInput, count: currentInputCount))
            say("image-fuzz: a decode ran over \(hangLimit / 1_000_000_000) s; the input is in \(path)")
            exit(4)
        }
    }
}

let seeds = seedInputs(repository: options.repository)
var generator = SeededRandom(seed: options.seed)
say("image-fuzz: seed \(options.seed), \(seeds.count) seed inputs, \(Int(options.seconds)) s")
let deadline = now() + UInt64(options.seconds * 1e9)
var outcomes: [String: Int] = [:]
var slowest: (UInt64, Int) = (0, 0)
while now() < deadline {
    let input = mutate(seeds[generator.below(seeds.count)], &generator, seeds: seeds)
    let started = now()
    outcomes[exercise(input, targetSeed: generator.next()), default: 0] += 1
    let elapsed = now() - started
    if elapsed > slowest.0 { slowest = (elapsed, input.count) }
    iterationsDone.add(1, ordering: .relaxed)
}
let total = iterationsDone.load(ordering: .relaxed)
say("image-fuzz: \(total) inputs in \(Int(options.seconds)) s: " +
      outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") +
      String(format: "; slowest %.1f ms (%d bytes); no crash, no hang", Double(slowest.0) / 1e6, slowest.1))
try? FileManager.default.removeItem(atPath: options.findings + "/crash-input")
try? FileManager.default.removeItem(atPath: options.findings + "/crash-target")
