import Tessera
import Foundation

/// What a keystroke and an arrow key cost the UI thread in a long message: a text of
/// `messageLength` characters (2,000 by default) in an `EditableTextNode` (six visible lines,
/// scrolled to the caret) in a headless window, one key a frame with the caret in the middle of the
/// text. First `keystrokes` characters are typed, then the caret is moved by arrow keys (←, →, ↓,
/// ↑). The host measures the new layout off the UI thread and the text is drawn on a worker; the
/// numbers are the UI thread's: the event phase (the edit or the move itself), the key's whole frame,
/// the later frames that apply the measured layout and commit the drawn text until the caret has
/// moved, and the runtime's work plus texture uploads over all of those frames (what the key costs the
/// UI thread beyond compositing and presenting the window, which every frame does anyway).
/// - Thread: main
@MainActor
struct TypingBenchmark {
    nonisolated static let defaultMessageLength = 2_000

    let assets: URL
    let keystrokes: Int
    var messageLength = TypingBenchmark.defaultMessageLength
    var output = BenchmarkOutput()

    /// One key's cost on the UI thread, in milliseconds.
    struct Sample {
        var event = 0.0
        var frame = 0.0
        var followPerFrame = 0.0
        var followFrames = 0
        /// Runtime work (events, commits, layout applied, ranges, displays started) and texture
        /// uploads, summed over the key's frame and the frames until it shows.
        var work = 0.0
        var upload = 0.0
        /// The UI thread's CPU time over the same frames (compositing and present included), which
        /// leaves out the time another process held its core.
        var cpu = 0.0
        /// The work by phase, summed over the frames: events, commits, layout, ranges, display, upload.
        var phases = [Double](repeating: 0, count: 6)

        mutating func add(_ record: FrameRecord) {
            work += record.runtimeMilliseconds + record.compositor.uploadMilliseconds
            upload += record.compositor.uploadMilliseconds
            cpu += record.cpuMilliseconds
            let values = [record.eventsMilliseconds, record.commitsMilliseconds, record.layoutMilliseconds,
                          record.rangesMilliseconds, record.displayMilliseconds, record.compositor.uploadMilliseconds]
            for index in phases.indices { phases[index] += values[index] }
        }
    }

    func run() throws -> String {
        let harness = try BenchmarkHost(output: output, title: "typing", size: Size(width: 640, height: 480))
        defer { harness.tearDown() }
        let host = harness.host
        let data = try ChatData(assets: assets)
        // A long message made of the dataset's Latin messages, repeated as often as the length needs.
        let texts = data.chats.filter { $0.locale.hasPrefix("en") }.flatMap { $0.messages.map(\.text) }
        Contract.require(!texts.isEmpty, "the dataset has English messages")
        var message = ""
        var next = 0
        while message.count < messageLength {
            message += texts[next % texts.count] + " "
            next += 1
        }
        message = String(message.prefix(messageLength))
        let field = EditableTextNode(text: message, attributes: TextAttributes(font: .system(size: 15)))
        field.maximumVisibleLines = 6
        harness.show(BenchmarkRoot(field: field))
        func frame(_ events: [InputEvent] = []) -> FrameRecord { harness.frame(events: events) }
        func settle() { harness.settle(frames: 6) }
        settle()
        host.focus(field)
        let middle = messageLength / 2
        field.selectedRange = middle..<middle
        settle()

        // An idle frame: what any frame of this window costs (mostly presenting it).
        var idleMs: [Double] = []
        for _ in 0..<60 { idleMs.append(frame().totalMilliseconds) }

        /// Sends `events` in one frame, then runs frames until the caret has moved (or the key left the
        /// selection as it was: an arrow key at the end of the text) and every draw started has been
        /// committed.
        func measure(_ events: [InputEvent]) -> Sample {
            let caretBefore = field.caretFrame
            let selectionBefore = field.selectedRange
            let record = frame(events)
            var sample = Sample(event: record.eventsMilliseconds, frame: record.totalMilliseconds)
            sample.add(record)
            var follow = 0.0, count = 0
            while count < 30 {
                host.runtime.scheduler.waitUntilIdle()
                let next = frame()
                follow += next.totalMilliseconds
                sample.add(next)
                count += 1
                let shown = field.caretFrame != caretBefore || field.selectedRange == selectionBefore
                if shown && host.runtime.pendingDisplayCount == 0 { break }
            }
            sample.followPerFrame = follow / Double(count)
            sample.followFrames = count
            return sample
        }

        var typed: [Sample] = []
        let letters = Array("tessera ")
        for index in 0..<keystrokes {
            let character = String(letters[index % letters.count])
            typed.append(measure([.keyDown(.character(Character(character)), modifiers: []), .textInput(character)]))
        }
        Contract.require(field.text.count == messageLength + keystrokes, "every keystroke reached the text")

        var horizontal: [Sample] = [], vertical: [Sample] = []
        let caretBeforeArrows = field.selectedRange
        for key in Array(repeating: Key.left, count: 100) + Array(repeating: Key.right, count: 100) {
            horizontal.append(measure([.keyDown(key, modifiers: []), .keyUp(key, modifiers: [])]))
        }
        Contract.require(field.selectedRange == caretBeforeArrows, "100 ← and 100 → come back to where they started")
        for key in Array(repeating: Key.down, count: 30) + Array(repeating: Key.up, count: 30) {
            vertical.append(measure([.keyDown(key, modifiers: []), .keyUp(key, modifiers: [])]))
        }

        func p(_ values: [Double], _ q: Double) -> Double { values.percentile(q) }
        var lines = ["typing benchmark (release build, \(BenchmarkOutput.describe(harness.backend))): \(keystrokes) keystrokes "
                     + "into a \(messageLength)-character message, caret mid-text, then 200 ←/→ and 60 ↓/↑; "
                     + "UI thread only (ms)"]
        func report(_ title: String, _ samples: [Sample], event: String) {
            let work = samples.map(\.work), frames = samples.map(\.frame), events = samples.map(\.event)
            let follow = samples.map(\.followPerFrame), uploads = samples.map(\.upload)
            lines.append("  \(title)")
            lines.append(String(format: "    UI thread's work, all its frames: p50 %6.3f   p99 %6.3f   max %6.3f",
                                p(work, 0.5), p(work, 0.99), work.max() ?? 0))
            lines.append(String(format: "    %@ (event phase):%@p50 %6.3f   p99 %6.3f   max %6.3f", event,
                                String(repeating: " ", count: max(1, 20 - event.count)),
                                p(events, 0.5), p(events, 0.99), events.max() ?? 0))
            lines.append(String(format: "    its whole frame:                  p50 %6.3f   p99 %6.3f   max %6.3f",
                                p(frames, 0.5), p(frames, 0.99), frames.max() ?? 0))
            lines.append(String(format: "    each later frame until it shows:  p50 %6.3f   p99 %6.3f   (%.1f frames on average)",
                                p(follow, 0.5), p(follow, 0.99),
                                Double(samples.map(\.followFrames).reduce(0, +)) / Double(max(1, samples.count))))
            lines.append(String(format: "    of the work, texture uploads:     p50 %6.3f   p99 %6.3f", p(uploads, 0.5), p(uploads, 0.99)))
            let phaseNames = ["events", "commits", "layout", "ranges", "display", "upload"]
            lines.append("    p99 of the work by phase:         " + phaseNames.indices.map { index in
                String(format: "%@ %.3f", phaseNames[index], p(samples.map { $0.phases[index] }, 0.99))
            }.joined(separator: ", "))
            let cpu = samples.map(\.cpu)
            lines.append(String(format: "    UI thread CPU, all its frames:    p50 %6.3f   p99 %6.3f   (compositing and present included)",
                                p(cpu, 0.5), p(cpu, 0.99)))
        }
        report("per keystroke:", typed, event: "the edit")
        report("per arrow key ←/→:", horizontal, event: "the move")
        report("per arrow key ↓/↑:", vertical, event: "the move")
        lines.append(String(format: "  an idle frame of this window:        p50 %6.3f   p99 %6.3f   (compositing and present)",
                            p(idleMs, 0.5), p(idleMs, 0.99)))
        lines.append("  (work: events, commits, layouts applied, ranges, draws started and texture uploads, summed over")
        lines.append("   the key's frame and the frames until it shows; the text's layout and drawing ran on workers)")
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
