import Compositor
import Foundation
import NodeRuntime

/// Image decoding numbers: each photo decoded and shrunk to 52×52 and to 300×300, and what the decoded
/// image cache saves on a chat list whose avatars repeat.
/// - Thread: main
struct ImageBenchmark {
    let assets: URL
    let repetitions: Int

    func run() throws -> String {
        let photos = try FileManager.default.contentsOfDirectory(atPath: assets.appendingPathComponent("photos").path)
            .filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()
        var lines = ["image benchmark (release build; median of \(repetitions) runs, milliseconds)",
                     "  photo                      size   decode   →52×52  →300×300"]
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        for name in photos {
            let source = ImageSource.file(assets.appendingPathComponent("photos/\(name)").path)
            var decodeMs: [Double] = [], smallMs: [Double] = [], largeMs: [Double] = []
            var size = (0, 0)
            for _ in 0..<repetitions {
                var start = MonotonicClock.nanoseconds()
                guard let bitmap = try ImageDecoder.decode(source) else { continue }
                decodeMs.append(MonotonicClock.milliseconds(since: start))
                size = (bitmap.width, bitmap.height)
                start = MonotonicClock.nanoseconds()
                _ = try ImageDecoder.prepareForDisplay(bitmap, crop: nil, mode: .aspectFill, target: (52, 52), scale: 1)
                smallMs.append(MonotonicClock.milliseconds(since: start))
                start = MonotonicClock.nanoseconds()
                _ = try ImageDecoder.prepareForDisplay(bitmap, crop: nil, mode: .aspectFill, target: (300, 300), scale: 1)
                largeMs.append(MonotonicClock.milliseconds(since: start))
            }
            lines.append(String(format: "  %-22@ %4d×%-4d %7.2f %8.2f %9.2f", name as NSString, size.0, size.1,
                                median(decodeMs), median(smallMs), median(largeMs)))
        }

        // A list of 600 rows whose avatars cycle through the photos, as chats from the same people
        // would: decode-and-shrink every row, with and without the cache.
        let rows = 600
        let sources = photos.map { ImageSource.file(assets.appendingPathComponent("photos/\($0)").path) }
        func loadRows(cache: ImageCache?) throws -> Double {
            let start = MonotonicClock.nanoseconds()
            for row in 0..<rows {
                let source = sources[row % sources.count]
                let key = ImageCache.Key(source: source.cacheKey, crop: nil, contentMode: .aspectFill, pixelWidth: 52, pixelHeight: 52)
                if let cache, cache.bitmap(for: key) != nil { continue }
                guard let bitmap = try ImageDecoder.decode(source) else { continue }
                let small = try ImageDecoder.prepareForDisplay(bitmap, crop: nil, mode: .aspectFill, target: (52, 52), scale: 1)
                cache?.store(small, for: key)
            }
            return MonotonicClock.milliseconds(since: start)
        }
        let uncached = try loadRows(cache: nil)
        let cache = ImageCache(budgetBytes: 8 << 20)
        let cached = try loadRows(cache: cache)
        lines.append(String(format: "  %d rows, avatars repeating every %d rows: %.0f ms without the cache, %.0f ms with it (%d hits, %d misses, %.0f× faster)",
                            rows, sources.count, uncached, cached, cache.hits, cache.misses, uncached / max(0.001, cached)))
        return lines.joined(separator: "\n")
    }
}
