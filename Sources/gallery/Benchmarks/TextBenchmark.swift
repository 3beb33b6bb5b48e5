import Tessera
import Foundation

/// Text numbers: measuring and drawing a two-line chat preview (`ChatRowNode.previewText`: "Author:
/// message…", 14 pt, cut at the end of the second line) as a chat list row does, with the previews of
/// the chats in `Assets/data/chats.json` (read by `ChatData`) so that every run measures a different
/// text.
/// - Thread: main
@MainActor
struct TextBenchmark {
    let assets: URL
    let runs: Int

    /// The last message of each chat as a list row shows it.
    func loadPreviews() throws -> [AttributedText] {
        try ChatData(assets: assets).chats.compactMap { chat in
            chat.lastMessage == nil ? nil : ChatRowNode.previewText(for: chat)
        }
    }

    func run() throws -> String {
        let previews = try loadPreviews()
        guard !previews.isEmpty else { return "text benchmark: no chat in \(assets.path)/data/chats.json has a message" }
        // Its own registry (the bundled faces, found as the app's are), so no file read before counts;
        // prepared first, as an app's is while its window opens, which is timed.
        let fonts = FontRegistry()
        let prepared = DispatchSemaphore(value: 0)
        let preparing = MonotonicClock.nanoseconds()
        fonts.prepare { prepared.signal() }
        prepared.wait()
        let preparationMs = Double(MonotonicClock.nanoseconds() &- preparing) / 1_000_000
        let options = TextLayoutOptions(maximumNumberOfLines: 2, truncationMode: .end)
        let width = 280.0
        func microseconds(since start: UInt64) -> Double { Double(MonotonicClock.nanoseconds() &- start) / 1_000 }

        var lines = ["text benchmark (release build, one thread; median of \(runs) runs over \(previews.count) different previews, µs; "
                     + "\(BenchmarkOutput.noRenderer))",
                     "  two-line chat preview, 14 pt, \(Int(width)) pt wide:  layout   draw   layout+draw   cached layout"]
        for scale in [1.0, 2.0] {
            // Warm up: open this thread's faces at this size and fill their word-width caches once, as a
            // list that has shown a few rows would have.
            for text in previews.prefix(50) {
                _ = TextLayout.measure(text, width: width, options: options, scale: scale, fonts: fonts, cache: nil)
            }
            let cache = TextLayoutCache(capacity: 4 * previews.count)
            var layoutTimes: [Double] = [], drawTimes: [Double] = [], totalTimes: [Double] = [], cachedTimes: [Double] = []
            var lineCount = 0, truncated = 0
            for run in 0..<runs {
                let text = previews[run % previews.count]
                var start = MonotonicClock.nanoseconds()
                let layout = TextLayout.measure(text, width: width, options: options, scale: scale, fonts: fonts, cache: nil)
                let layoutTime = microseconds(since: start)
                start = MonotonicClock.nanoseconds()
                let parameters = TextNode.DrawParameters(text: text, options: options, layout: layout, revealedSpoilers: [],
                                                         fonts: fonts)
                let bitmap = TextNode.display(parameters, info: DrawInfo(bounds: Rect(x: 0, y: 0, width: width,
                                                                                      height: layout.size.height), scale: scale))
                let drawTime = microseconds(since: start)
                Contract.require(bitmap != nil, "the preview must draw")
                layoutTimes.append(layoutTime)
                drawTimes.append(drawTime)
                totalTimes.append(layoutTime + drawTime)
                lineCount += layout.lineCount
                if layout.isTruncated { truncated += 1 }
                // A second lookup of an already measured text is what a row redisplayed costs.
                _ = TextLayout.measure(text, width: width, options: options, scale: scale, fonts: fonts, cache: cache)
                start = MonotonicClock.nanoseconds()
                _ = TextLayout.measure(text, width: width, options: options, scale: scale, fonts: fonts, cache: cache)
                cachedTimes.append(microseconds(since: start))
            }
            lines.append(String(format: "  @%.0fx: %47.1f %6.1f %13.1f %15.1f", scale, layoutTimes.median(), drawTimes.median(),
                                totalTimes.median(), cachedTimes.median()))
            lines.append(String(format: "       (%.2f lines a preview on average, %d%% cut with \"…\")",
                                Double(lineCount) / Double(runs), 100 * truncated / runs))
        }
        // One line per script, and an emoji-heavy message: the same two-line preview, layout + draw at 1x.
        let samples: [(String, String)] = [
            ("Latin", "Meet me at the station at half past six, and bring the photos from last weekend please"),
            ("Cyrillic", "Встретимся на вокзале в половине седьмого, и захвати фотографии с прошлых выходных"),
            ("Hebrew", "נפגש בתחנה בשש וחצי, ותביא בבקשה את התמונות מסוף השבוע שעבר"),
            ("Arabic", "نلتقي في المحطة في السادسة والنصف، وأحضر الصور من نهاية الأسبوع الماضي من فضلك"),
            ("CJK", "我们六点半在车站见面，请带上上周末的照片。明日の午後に会いましょう"),
            ("Hindi", "हम साढ़े छह बजे स्टेशन पर मिलेंगे, और कृपया पिछले सप्ताहांत की तस्वीरें लेकर आना"),
            ("Thai", "เราจะพบกันที่สถานีตอนหกโมงครึ่ง และช่วยเอารูปจากสุดสัปดาห์ที่แล้วมาด้วยนะ"),
            ("emoji", "See you at 6:30 😀🎉 bring the photos 📸👍🏽 and snacks 🍕🍩🥤 ❤️🇫🇷 👩‍👩‍👧 1️⃣"),
        ]
        let body = TextAttributes(font: .system(size: 14), color: Color(rgb: 0x707A89))
        var latin = 0.0
        for (name, sample) in samples {
            let text = AttributedText(sample, attributes: body)
            var times: [Double] = []
            for _ in 0..<max(50, runs / 6) {
                let start = MonotonicClock.nanoseconds()
                let layout = TextLayout.measure(text, width: width, options: options, scale: 1, fonts: fonts, cache: nil)
                let parameters = TextNode.DrawParameters(text: text, options: options, layout: layout, revealedSpoilers: [], fonts: fonts)
                _ = TextNode.display(parameters, info: DrawInfo(bounds: Rect(x: 0, y: 0, width: width, height: layout.size.height), scale: 1))
                times.append(microseconds(since: start))
            }
            let time = times.median()
            if name == "Latin" { latin = time }
            lines.append("  " + name.padded(to: 9)
                         + String(format: " preview, layout + draw @1x: %7.1f µs (%.2f× Latin)", time, time / max(0.001, latin)))
        }
        // Bad input: a megabyte in one message. The layout stops at its line cap instead of measuring it all.
        let megabyte = AttributedText(String(repeating: "lorem ipsum dolor sit amet ", count: 1_048_576 / 27 + 1),
                                      attributes: TextAttributes(font: .system(size: 14)))
        var megabyteTimes: [Double] = []
        var megabyteLayout: TextLayout?
        for _ in 0..<5 {
            let start = MonotonicClock.nanoseconds()
            megabyteLayout = TextLayout.measure(megabyte, width: width, fonts: fonts, cache: nil)
            megabyteTimes.append(microseconds(since: start) / 1_000)
        }
        var limitedTimes: [Double] = []
        for _ in 0..<5 {
            let start = MonotonicClock.nanoseconds()
            _ = TextLayout.measure(megabyte, width: width, options: options, fonts: fonts, cache: nil)
            limitedTimes.append(microseconds(since: start) / 1_000)
        }
        lines.append(String(format: "  1 MB message: %.1f ms with no line limit (stops at %d lines), %.2f ms as a two-line preview",
                            megabyteTimes.median(), megabyteLayout?.lineCount ?? 0, limitedTimes.median()))
        lines.append(String(format: "  FontRegistry.prepare(), first in the process (fontconfig starts): %.1f ms on its thread",
                            preparationMs))
        return lines.joined(separator: "\n")
    }
}
