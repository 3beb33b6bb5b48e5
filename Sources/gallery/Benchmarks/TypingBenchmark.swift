import Tessera
import Foundation

/// What a keystroke costs the UI thread in a long message: a 2,000-character text in an
/// `EditableTextNode` (six visible lines, scrolled to the caret) in a headless window, one character
/// typed per frame at the caret in the middle of the text. The host measures the new layout off the
/// UI thread and the text is drawn on a worker; the numbers are the UI thread's: the event phase (the
/// edit itself), the whole keystroke frame, and the later frames that apply the measured layout and
/// commit the drawn text until the caret has moved.
/// - Thread: main
@MainActor
struct TypingBenchmark {
    let assets: URL
    let keystrokes: Int
    var output = BenchmarkOutput()

    func run() throws -> String {
        let harness = try BenchmarkHost(output: output, title: "typing", size: Size(width: 640, height: 480))
        defer { harness.tearDown() }
        let host = harness.host
        let data = try ChatData(assets: assets)
        // A long message made of the dataset's Latin messages.
        var message = ""
        for chat in data.chats where chat.locale.hasPrefix("en") {
            for text in chat.messages.map(\.text) where message.count < 2_000 { message += text + " " }
        }
        message = String(message.prefix(2_000))
        let field = EditableTextNode(text: message, attributes: TextAttributes(font: .system(size: 15)))
        field.maximumVisibleLines = 6
        harness.show(BenchmarkRoot(field: field))
        func frame(_ events: [InputEvent] = []) -> FrameRecord { harness.frame(events: events) }
        func settle() { harness.settle(frames: 6) }
        settle()
        host.focus(field)
        field.selectedRange = 1_000..<1_000
        settle()

        // An idle frame: what any frame of this window costs (mostly presenting it).
        var idleMs: [Double] = []
        for _ in 0..<60 { idleMs.append(frame().totalMilliseconds) }
        var eventMs: [Double] = [], frameMs: [Double] = [], followMs: [Double] = [], followFrames: [Int] = []
        var runtimeMs: [Double] = [], uploadMs: [Double] = []
        let letters = Array("tessera ")
        for index in 0..<keystrokes {
            let character = String(letters[index % letters.count])
            let caretBefore = field.caretFrame
            let record = frame([.keyDown(.character(Character(character)), modifiers: []), .textInput(character)])
            eventMs.append(record.eventsMilliseconds)
            frameMs.append(record.totalMilliseconds)
            // The frames after it, until the new layout is applied and the caret has moved.
            var follow = 0.0, count = 0
            var runtimeWork = record.runtimeMilliseconds
            var upload = record.compositor.uploadMilliseconds
            while count < 30 {
                host.runtime.scheduler.waitUntilIdle()
                let next = frame()
                follow += next.totalMilliseconds
                runtimeWork += next.runtimeMilliseconds
                upload += next.compositor.uploadMilliseconds
                count += 1
                if field.caretFrame != caretBefore && host.runtime.pendingDisplayCount == 0 { break }
            }
            followMs.append(follow / Double(count))
            followFrames.append(count)
            runtimeMs.append(runtimeWork)
            uploadMs.append(upload)
        }
        Contract.require(field.text.count == 2_000 + keystrokes, "every keystroke reached the text")
        func p(_ values: [Double], _ q: Double) -> Double { values.percentile(q) }
        var lines = ["typing benchmark (release build, \(BenchmarkOutput.describe(harness.backend))): \(keystrokes) keystrokes "
                     + "into a 2,000-character message, caret mid-text, UI thread only (ms)"]
        lines.append(String(format: "  the edit (event phase):          p50 %6.3f   p99 %6.3f   max %6.3f",
                            p(eventMs, 0.5), p(eventMs, 0.99), eventMs.max() ?? 0))
        lines.append(String(format: "  the keystroke's whole frame:     p50 %6.3f   p99 %6.3f   max %6.3f",
                            p(frameMs, 0.5), p(frameMs, 0.99), frameMs.max() ?? 0))
        lines.append(String(format: "  each later frame until it shows: p50 %6.3f   p99 %6.3f   (%.1f frames on average)",
                            p(followMs, 0.5), p(followMs, 0.99),
                            Double(followFrames.reduce(0, +)) / Double(max(1, followFrames.count))))
        lines.append(String(format: "  an idle frame of this window:    p50 %6.3f   p99 %6.3f   (compositing and present)",
                            p(idleMs, 0.5), p(idleMs, 0.99)))
        lines.append(String(format: "  per keystroke, all frames: runtime work p50 %6.3f  p99 %6.3f;  texture upload p50 %6.3f  p99 %6.3f",
                            p(runtimeMs, 0.5), p(runtimeMs, 0.99), p(uploadMs, 0.5), p(uploadMs, 0.99)))
        lines.append("  (runtime work: events, commits, layout applied, ranges and displays started; the text's layout and")
        lines.append("   drawing ran on workers)")
        return lines.joined(separator: "\n")
    }

    /// Puts the field at the top of the window, 600 points wide.
    final class BenchmarkRoot: Node, @unchecked Sendable {
        let field: EditableTextNode
        init(field: EditableTextNode) {
            self.field = field
            super.init()
            backgroundColor = .white
            addSubnode(field)
        }
        override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
            VStack { field.flexShrink(0) }.inset(EdgeInsets(top: 20, left: 20, bottom: 20, right: 20))
        }
    }
}
